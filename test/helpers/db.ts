/**
 * Throw-away PostgreSQL databases for tests.
 *
 * `scripts/test.mjs` creates one database per run and exports it as
 * SVC_TEST_DATABASE_URL_FRESH, plus SVC_TEST_DB_PREFIX (its name): databases made here are named
 * `<prefix>_<n>` so that the script can drop leftovers of a crashed test at the end. Run on their
 * own (`node --import tsx --test test/x.test.ts`), tests fall back to SVC_TEST_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/postgres) and a prefix of their own.
 */
import pg from 'pg';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** The server-level URL used to issue CREATE/DROP DATABASE. */
export function adminDatabaseUrl(): string {
  return process.env.SVC_TEST_DATABASE_URL_FRESH || process.env.SVC_TEST_DATABASE_URL || DEFAULT_DATABASE_URL;
}

/** `url` with its database name replaced. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

const prefix = (process.env.SVC_TEST_DB_PREFIX || `svc_test_${process.pid}_${Date.now().toString(36)}`).toLowerCase().replace(/[^a-z0-9_]/g, '_');
let counter = 0;

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

async function withAdmin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: adminDatabaseUrl(), connectionTimeoutMillis: 10_000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** Creates an empty database; `drop()` removes it (terminating leftover connections). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `${prefix}_${++counter}_${Math.random().toString(36).slice(2, 6)}`;
  await withAdmin((c) => c.query(`create database "${name}"`));
  let dropped: Promise<void> | undefined;
  return {
    name,
    url: withDatabase(adminDatabaseUrl(), name),
    drop: () => (dropped ??= dropDatabase(name)),
  };
}

export async function dropDatabase(name: string): Promise<void> {
  await withAdmin((c) => c.query(`drop database if exists "${name.replace(/"/g, '""')}" with (force)`));
}

/** One query on a database URL with a short-lived client (text results as node-postgres parses them). */
export async function sql<T extends Record<string, unknown> = Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await c.connect();
  try {
    return (await c.query(text, values)).rows as T[];
  } finally {
    await c.end().catch(() => undefined);
  }
}
