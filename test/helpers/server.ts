/**
 * Real Svc servers for tests: `startSvc` in this process on 127.0.0.1, an ephemeral port and a fresh
 * database (dropped again by `close()`), with a silent logger; plus small HTTP helpers.
 */
import { Writable } from 'node:stream';
import { defaultConfig, type Config } from '../../src/config/config.js';
import type { Engine } from '../../src/engine.js';
import { createLogger, startSvc } from '../../src/server/start.js';
import { createTestDatabase, type TestDatabase } from './db.js';

export interface TestServer {
  url: string;
  port: number;
  engine: Engine;
  /** the database the server runs on (undefined when the caller passed its own databaseUrl) */
  database?: TestDatabase;
  databaseUrl: string;
  close(): Promise<void>;
}

/** The environment the upstream (python) CI started the engine with; see test/conformance/NOTICE.md. */
export const UPSTREAM_CI_ENV: Readonly<Record<string, string>> = {
  SVC_GRAPHQL_STRINGIFY_NUMERIC_TYPES: 'true',
  EVENT_WEBHOOK_HEADER: 'MyEnvValue',
  WEBHOOK_FROM_ENV: 'http://127.0.0.1:5592',
  SCHEDULED_TRIGGERS_WEBHOOK_DOMAIN: 'http://127.0.0.1:5594',
};

/** A writable that discards everything (a silent pino destination). */
export function devnull(): Writable {
  return new Writable({ write: (_chunk, _enc, cb) => cb() });
}

/** `logTo`: where the server's log lines go (default: discarded). */
export async function startTestServer(overrides: Partial<Config> = {}, logTo: Writable = devnull()): Promise<TestServer> {
  const database = overrides.databaseUrl ? undefined : await createTestDatabase();
  const config: Config = {
    ...defaultConfig(),
    port: 0,
    host: '127.0.0.1',
    pgConnections: 10,
    logLevel: 'error',
    enabledLogTypes: [],
    ...overrides,
    databaseUrl: overrides.databaseUrl ?? database!.url,
  };
  let svc;
  try {
    svc = await startSvc(config, createLogger(config, logTo));
  } catch (e) {
    await database?.drop();
    throw e;
  }
  let closing: Promise<void> | undefined;
  return {
    url: svc.url,
    port: svc.port,
    engine: svc.engine,
    database,
    databaseUrl: config.databaseUrl!,
    close: () =>
      (closing ??= (async () => {
        try {
          await svc.close();
        } finally {
          await database?.drop();
        }
      })()),
  };
}

/** A test server whose database has run `sql` (run_sql) and tracks `tables`, in one bulk. */
export async function startServerWithTables(sql: string, tables: string[], overrides: Partial<Config> = {}): Promise<TestServer> {
  const s = await startTestServer(overrides);
  const r = await postQuery(s.url, {
    type: 'bulk',
    args: [{ type: 'run_sql', args: { sql } }, ...tables.map((table) => ({ type: 'track_table', args: { table } }))],
  });
  if (r.status !== 200) {
    await s.close();
    throw new Error(`setting up ${tables.join(', ')}: ${r.status} ${r.text}`);
  }
  return s;
}

/**
 * Runs `fn` with the engine's background workers stopped (delivery pollers, cron generator,
 * metadata-sync poll): a test that counts the statements of one request counts only that
 * request's. The workers are started again afterwards.
 */
export async function withWorkersStopped<T>(engine: TestServer['engine'], fn: () => Promise<T>): Promise<T> {
  await engine.workers.stop(1_000);
  try {
    return await fn();
  } finally {
    await engine.workers.start();
  }
}

export interface HttpResult {
  status: number;
  /** parsed JSON body, or the raw text when it is not JSON */
  body: any;
  text: string;
  headers: Headers;
}

const TIMEOUT_MS = 30_000;

export async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  const res = await fetch(url.replace(/\/+$/, '') + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON: keep the text */
  }
  return { status: res.status, body: parsed, text, headers: res.headers };
}

/** POST /v1/query. A string body is sent as is (for malformed JSON tests). */
export function postQuery(url: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  return post(url, '/v1/query', body, headers);
}

/** POST /v1/graphql. */
export function postGraphql(url: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  return post(url, '/v1/graphql', body, headers);
}

/** POST /v1/query and require 200; returns the JSON body. */
export async function query(url: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const r = await postQuery(url, body, headers);
  if (r.status !== 200) throw new Error(`/v1/query ${JSON.stringify(body).slice(0, 200)} → ${r.status}: ${r.text.slice(0, 500)}`);
  return r.body;
}

/** Polls `fn` until it returns a truthy value or `timeoutMs` passes (then throws with the last value/error). */
export async function waitFor<T>(what: string, fn: () => Promise<T>, timeoutMs = 5_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() >= deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * A server configured like the upstream CI for the conformance cases: UPSTREAM_CI_ENV in
 * process.env (webhook URLs/headers taken from the environment are read at run time) and
 * stringified numeric types.
 */
export async function startConformanceServer(overrides: Partial<Config> = {}): Promise<TestServer> {
  for (const [k, v] of Object.entries(UPSTREAM_CI_ENV)) process.env[k] ??= v;
  return startTestServer({ stringifyNumericTypes: true, ...overrides });
}
