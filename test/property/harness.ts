/**
 * The property test's server: a fresh database `svc_prop_<random>` holding
 * the model's schema, an in-process Svc on an ephemeral port with a silent
 * logger, and a tiny /v1/query and /v1/graphql client.
 */
import { Writable } from 'node:stream';
import pg from 'pg';
import { defaultConfig, type Config } from '../../src/config/config.js';
import { createLogger, startSvc, type RunningSvc } from '../../src/server/start.js';

const ADMIN_URL = process.env.SVC_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

async function adminQuery(sql: string, url = ADMIN_URL): Promise<void> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end().catch(() => undefined);
  }
}

export interface PropServer {
  svc: RunningSvc;
  database: string;
  close(): Promise<void>;
}

export async function startPropServer(schemaSql: string): Promise<PropServer> {
  const database = `svc_prop_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  await adminQuery(`create database "${database}"`);
  const u = new URL(ADMIN_URL);
  u.pathname = `/${database}`;
  const databaseUrl = u.toString();
  const drop = () => adminQuery(`drop database if exists "${database}" with (force)`);
  try {
    await adminQuery(schemaSql, databaseUrl);
    const config: Config = {
      ...defaultConfig(),
      port: 0,
      host: '127.0.0.1',
      databaseUrl,
      pgConnections: 5,
      logLevel: 'error',
      enabledLogTypes: [],
    };
    const devnull = new Writable({ write: (_c, _e, cb) => cb() });
    const svc = await startSvc(config, createLogger(config, devnull));
    let closing: Promise<void> | undefined;
    return {
      svc,
      database,
      close: () =>
        (closing ??= (async () => {
          try {
            await svc.close();
          } finally {
            await drop();
          }
        })()),
    };
  } catch (e) {
    await drop().catch(() => undefined);
    throw e;
  }
}

export interface Reply {
  status: number;
  body: any;
}

export async function post(url: string, body: unknown): Promise<Reply> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-role': 'admin' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* keep the text */
  }
  return { status: res.status, body: parsed };
}
