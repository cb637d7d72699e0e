#!/usr/bin/env node
// `npm test` [-- test/some.test.ts ...]
//
// 1. checks that PostgreSQL answers at SVC_TEST_DATABASE_URL (default
//    postgres://postgres@127.0.0.1:5432/postgres);
// 2. creates a fresh database for this run (svc_test_<pid>_<time>) and exports it to the tests as
//    SVC_TEST_DATABASE_URL_FRESH, with SVC_TEST_DB_PREFIX = its name (test/helpers/db.ts names the
//    databases it creates `<prefix>_<n>`);
// 3. runs `node --import tsx --test --test-concurrency=1 --test-reporter=tap <files>` on every
//    test/**/*.test.ts (found by walking the directory; no shell glob) or on the files given as
//    arguments, under a global timeout (SVC_TEST_TIMEOUT_MS, default 30 min); a full run (no file
//    arguments) first runs the static checks: `tsc --noEmit` (server and console), eslint and
//    `madge --circular src` (`npm run check`; SVC_TEST_SKIP_CHECK=1 skips them);
// 4. drops the run database and every database with its prefix (also after failures, timeouts and
//    Ctrl-C). The exit code is the test runner's (1 on timeout, 2 when PostgreSQL is unavailable).
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const BASE_URL = process.env.SVC_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const TIMEOUT_MS = Number(process.env.SVC_TEST_TIMEOUT_MS || 30 * 60_000);
const PER_TEST_TIMEOUT_MS = Number(process.env.SVC_TEST_PER_TEST_TIMEOUT_MS || 20 * 60_000);
const SKIP_DIRS = new Set(['node_modules', 'cases', 'fixtures']);

function findTests(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) {
      if (!SKIP_DIRS.has(name) && !name.startsWith('.')) out.push(...findTests(p));
    } else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

function withDatabase(url, name) {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin(fn) {
  const c = new pg.Client({ connectionString: BASE_URL, connectionTimeoutMillis: 10_000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => {});
  }
}

const quote = (name) => `"${name.replace(/"/g, '""')}"`;

async function dropRunDatabases(runDb) {
  await admin(async (c) => {
    const { rows } = await c.query(
      `select datname from pg_database where datname = $1 or starts_with(datname, $1 || '_') order by datname desc`,
      [runDb],
    );
    for (const { datname } of rows) await c.query(`drop database if exists ${quote(datname)} with (force)`);
  });
}

async function main() {
  const args = process.argv.slice(2);
  const files = args.length ? args.map((f) => resolve(f)) : findTests(join(ROOT, 'test'));
  if (!files.length) {
    process.stderr.write('no test files found\n');
    process.exit(1);
  }

  if (!args.length && process.env.SVC_TEST_SKIP_CHECK !== '1') {
    const code = await new Promise((res) => {
      const c = spawn('npm', ['run', '--silent', 'check'], { cwd: ROOT, stdio: 'inherit' });
      c.on('exit', (x) => res(x ?? 1));
    });
    if (code !== 0) {
      process.stderr.write('static checks failed (npm run check): fix them before the tests run\n');
      process.exit(1);
    }
    process.stdout.write('# static checks passed (tsc, eslint, madge --circular)\n');
  }

  try {
    await admin((c) => c.query('select 1'));
  } catch (e) {
    process.stderr.write(`PostgreSQL is not reachable at ${BASE_URL}: ${e.message}\n(set SVC_TEST_DATABASE_URL, or start it: .ci/run does)\n`);
    process.exit(2);
  }
  const runDb = `svc_test_${process.pid}_${Date.now().toString(36)}`;
  await admin((c) => c.query(`create database ${quote(runDb)}`));
  process.stdout.write(`# test database ${runDb}; ${files.length} test files\n`);

  let cleaned = null;
  const cleanup = () => (cleaned ??= dropRunDatabases(runDb).catch((e) => {
    process.stderr.write(`warning: could not drop test databases ${runDb}*: ${e.message}\n`);
  }));

  const env = {
    ...process.env,
    SVC_TEST_DATABASE_URL: BASE_URL,
    SVC_TEST_DATABASE_URL_FRESH: withDatabase(BASE_URL, runDb),
    SVC_TEST_DB_PREFIX: runDb,
  };
  const nodeArgs = ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-reporter=tap',
    `--test-timeout=${PER_TEST_TIMEOUT_MS}`, ...files.map((f) => relative(ROOT, f))];
  // own process group, so that a timeout also ends grandchildren (servers started by tests)
  const child = spawn(process.execPath, nodeArgs, { cwd: ROOT, env, stdio: 'inherit', detached: true });
  const killGroup = (sig) => {
    try { process.kill(-child.pid, sig); } catch { /* already gone */ }
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    process.stderr.write(`\nerror: tests did not finish within ${TIMEOUT_MS / 1000} s; stopping them\n`);
    killGroup('SIGTERM');
    setTimeout(() => killGroup('SIGKILL'), 10_000).unref();
  }, TIMEOUT_MS);
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => {
      killGroup(sig);
      setTimeout(() => killGroup('SIGKILL'), 5_000).unref();
    });
  }
  const code = await new Promise((res) => child.on('exit', (c, s) => res(c ?? (s ? 1 : 1))));
  clearTimeout(timer);
  // leftover servers of killed tests (same process group) must not keep connections open
  killGroup('SIGKILL');
  await cleanup();
  process.exit(timedOut ? 1 : code);
}

main().catch((e) => {
  process.stderr.write(`scripts/test.mjs: ${e?.stack ?? e}\n`);
  process.exit(2);
});
