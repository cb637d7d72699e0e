#!/usr/bin/env node
// `npm run conformance:public [-- <run.mjs options>]`
//
// Starts Svc (`node --import tsx src/main.ts serve`) on a fresh PostgreSQL database, with the
// environment the upstream CI used, and runs the public conformance suite's reference runner
//   node ../shared/conformance/run.mjs --url http://127.0.0.1:<port> [options]
// against it (e.g. `-- --area metadata,query_dml_v1 --verbose`, `-- --filter TestTrackTables`).
// Prints the runner's output (per class, per-area totals, "N passed, M failed"), then stops the
// server and drops the database. Exit code: the runner's (0 = the run completed).
//
// Environment: SVC_TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) for the
// server to create the database on; SVC_CONFORMANCE_RUNNER to use another run.mjs.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const RUNNER_PATH = resolve(process.env.SVC_CONFORMANCE_RUNNER || resolve(ROOT, '../shared/conformance/run.mjs'));
// the runner only runs when started by its real path (it compares argv[1] with import.meta.url)
const RUNNER = existsSync(RUNNER_PATH) ? realpathSync(RUNNER_PATH) : RUNNER_PATH;
const BASE_URL = process.env.SVC_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const UPSTREAM_CI_ENV = {
  SVC_GRAPHQL_STRINGIFY_NUMERIC_TYPES: 'true',
  EVENT_WEBHOOK_HEADER: 'MyEnvValue',
  WEBHOOK_FROM_ENV: 'http://127.0.0.1:5592',
  SCHEDULED_TRIGGERS_WEBHOOK_DOMAIN: 'http://127.0.0.1:5594',
};

async function admin(sql) {
  const c = new pg.Client({ connectionString: BASE_URL, connectionTimeoutMillis: 10_000 });
  await c.connect();
  try { await c.query(sql); } finally { await c.end().catch(() => {}); }
}

async function freePort() {
  const s = createServer();
  await new Promise((res, rej) => { s.once('error', rej); s.listen(0, '127.0.0.1', res); });
  const { port } = s.address();
  await new Promise((res) => s.close(res));
  return port;
}

async function main() {
  if (!existsSync(RUNNER)) {
    process.stderr.write(`reference runner not found: ${RUNNER}\n`);
    process.exit(2);
  }
  const db = `svc_conformance_${process.pid}_${Date.now().toString(36)}`;
  await admin(`create database "${db}"`);
  const u = new URL(BASE_URL);
  u.pathname = `/${db}`;
  let server;
  const stop = async () => {
    if (server && server.exitCode === null && server.signalCode === null) {
      const gone = new Promise((res) => server.once('close', res));
      server.kill('SIGTERM');
      const t = setTimeout(() => server.kill('SIGKILL'), 15_000);
      await gone;
      clearTimeout(t);
    }
    await admin(`drop database if exists "${db}" with (force)`).catch((e) => process.stderr.write(`warning: drop ${db}: ${e.message}\n`));
  };
  try {
    const port = await freePort();
    const env = { ...process.env, ...UPSTREAM_CI_ENV, SVC_GRAPHQL_DATABASE_URL: u.toString(), SVC_GRAPHQL_ENABLED_LOG_TYPES: 'startup', SVC_GRAPHQL_LOG_LEVEL: 'warn' };
    server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--server-port', String(port), '--server-host', '127.0.0.1'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let serverErr = '';
    server.stderr.setEncoding('utf8').on('data', (c) => { serverErr += c; });
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (server.exitCode !== null) throw new Error(`svc exited with ${server.exitCode}:\n${serverErr}`);
      try {
        const r = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) });
        if (r.status === 200) break;
      } catch { /* not up yet */ }
      if (Date.now() > deadline) throw new Error(`svc did not become healthy within 60 s:\n${serverErr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    process.stdout.write(`# svc on ${url} (database ${db}); running ${RUNNER}\n`);
    const runner = spawn(process.execPath, [RUNNER, '--url', url, ...process.argv.slice(2)], { stdio: 'inherit' });
    const onSig = () => runner.kill('SIGTERM');
    process.once('SIGINT', onSig);
    process.once('SIGTERM', onSig);
    const code = await new Promise((res) => runner.on('close', (c) => res(c ?? 2)));
    await stop();
    process.exit(code);
  } catch (e) {
    process.stderr.write(`conformance: ${e?.message ?? e}\n`);
    await stop();
    process.exit(2);
  }
}

main();
