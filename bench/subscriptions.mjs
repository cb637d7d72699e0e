#!/usr/bin/env node
// Live-query benchmark (issue 18): N subscribers (default 10,000; different variables and
// session variables, one query shape, a non-admin role) on one Svc process, 100 per websocket;
// a writer updates W random rows per second. Measured over the window: statements per second
// sent to PostgreSQL (Svc's svc_db_statements_total), PostgreSQL CPU (utime+stime from /proc of
// the backends connected to the bench database), Svc RSS (/proc/<pid>/status, max), and p50/p99
// latency from the committed UPDATE to the pushed update at the client.
// Runs the multiplexed design (this tree) and, for comparison, the per-subscriber design of an
// older revision (`--compare-rev`, default 94ae759, the last commit before multiplexing, unpacked
// with `git archive` into a temporary directory). `npm run bench:subscriptions [-- --subscribers
// 10000 --window 20]`; results appended to bench/SUBSCRIPTIONS.md ('--out -' for nowhere).
// Not part of `npm test`.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { adminSql, freePort, procTicks } from './lib.mjs';
import { createRequire } from 'node:module';

const HERE = new URL('.', import.meta.url).pathname.replace(/\/$/, '');
const ROOT = join(HERE, '..');
const require = createRequire(join(ROOT, 'package.json'));
const pg = require('pg');
const WebSocket = require('ws');

const { values: o } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '10000' },
    'per-socket': { type: 'string', default: '100' },
    window: { type: 'string', default: '20' },
    writes: { type: 'string', default: '20' },
    interval: { type: 'string', default: '1000' },
    'batch-size': { type: 'string', default: '100' },
    designs: { type: 'string', default: 'change-driven' },
    'sparse-writes': { type: 'string', default: '20' },
    'compare-rev': { type: 'string', default: '94ae759' },
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/svc_bench_subs' },
    out: { type: 'string', default: join(HERE, 'SUBSCRIPTIONS.md') },
  },
});
const N = Number(o.subscribers);
const PER_SOCKET = Number(o['per-socket']);
const WINDOW_S = Number(o.window);
const WRITES = Number(o.writes);
const log = (m) => process.stdout.write(`[subs] ${m}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const dbUrl = new URL(o['database-url']);
const dbName = dbUrl.pathname.slice(1);

const CLK = 100; // USER_HZ
function rssMb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}
const pct = (a, p) => {
  if (!a.length) return NaN;
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function startSvc(root, port) {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'main.ts'), 'serve', '--workers', '1', '--database-url', dbUrl.toString(), '--server-port', String(port), '--server-host', '127.0.0.1'], {
    cwd: root,
    env: {
      ...process.env,
      SVC_GRAPHQL_ENABLED_LOG_TYPES: 'startup',
      SVC_GRAPHQL_LOG_LEVEL: 'warn',
      SVC_GRAPHQL_LIVE_QUERIES_MULTIPLEXED_REFETCH_INTERVAL: o.interval,
      SVC_GRAPHQL_LIVE_QUERIES_MULTIPLEXED_BATCH_SIZE: o['batch-size'],
      SVC_GRAPHQL_MAX_WEBSOCKET_CONNECTIONS: String(Math.ceil(N / PER_SOCKET) + 10),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`svc exited ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/healthz`)).status === 200) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error('svc did not start');
    await sleep(200);
  }
  return { child, url };
}

async function statements(url, name = 'svc_db_statements_total') {
  const t = await (await fetch(`${url}/v1/metrics`, { headers: { 'x-svc-role': 'admin' } })).text();
  const m = new RegExp(`^${name} (\\d+)`, 'm').exec(t);
  return m ? Number(m[1]) : NaN;
}
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/**
 * Change-driven refetch (issue 39): an idle window (no writes: live-query statements/s), then
 * sparse writes (one every interval + 300 ms: commit → client latency when the ceiling does not
 * hold a change back), then dense writes (`--writes` per second for the window: the interval is
 * the ceiling). Statements per write: the live-query batch statements over the phase / writes.
 */
async function changeDriven(url, writer, writtenAt, latencies, early) {
  const interval = Number(o.interval);
  const lq = () => statements(url, 'svc_live_query_batches_total');
  const out = { load: [loadavg()] };
  // idle
  let b0 = await lq();
  let s0 = await statements(url);
  let t0 = performance.now();
  await sleep(WINDOW_S * 1000);
  let secs = (performance.now() - t0) / 1000;
  out.idleLq = ((await lq()) - b0) / secs;
  out.idleAll = ((await statements(url)) - s0) / secs; // everything: delivery workers' polls, the metrics scrapes' queue-depth reads
  // sparse writes
  let w = 0;
  const write = async () => {
    const id = 1 + Math.floor(Math.random() * N);
    const status = `s${w++}`;
    await writer.query('update orders set status = $1 where id = $2', [status, id]);
    const now = performance.now();
    writtenAt.set(status, now);
    if (early.has(status)) latencies.push(Math.max(0, early.get(status) - now));
  };
  latencies.length = 0;
  b0 = await lq();
  const sparse = Number(o['sparse-writes']);
  for (let i = 0; i < sparse; i++) {
    await write();
    await sleep(interval + 300);
  }
  for (const until = Date.now() + 5_000; latencies.length < sparse && Date.now() < until; ) await sleep(20); // the last write's update
  out.sparse = { writes: sparse, seen: latencies.length, p50: pct(latencies, 50), p99: pct(latencies, 99), perWrite: ((await lq()) - b0) / sparse };
  out.load.push(loadavg());
  // dense writes
  latencies.length = 0;
  b0 = await lq();
  s0 = w;
  t0 = performance.now();
  while (performance.now() - t0 < WINDOW_S * 1000) {
    await write();
    await sleep(1000 / WRITES);
  }
  await sleep(2 * interval + 500);
  secs = (performance.now() - t0) / 1000;
  const dw = w - s0;
  const db = (await lq()) - b0;
  out.dense = { writes: dw, seen: latencies.length, p50: pct(latencies, 50), p99: pct(latencies, 99), perWrite: db / dw, lqPerS: db / secs };
  out.load.push(loadavg());
  return out;
}

async function runDesign(design, root) {
  await adminSql(dbUrl, `drop database if exists "${dbName}" with (force)`);
  await adminSql(dbUrl, `create database "${dbName}"`);
  const port = await freePort();
  const { child, url } = await startSvc(root, port);
  const q = async (body) => {
    const r = await fetch(`${url}/v1/query`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-role': 'admin' }, body: JSON.stringify(body) });
    if (r.status !== 200) throw new Error(`${r.status} ${await r.text()}`);
    return r.json();
  };
  const sockets = [];
  try {
    await q({
      type: 'bulk',
      args: [
        { type: 'run_sql', args: { sql: `create table orders (id int primary key, owner int not null, status text not null); insert into orders select g, (g - 1) / ${PER_SOCKET}, 'new' from generate_series(1, ${N}) g;` } },
        { type: 'track_table', args: { table: 'orders' } },
        { type: 'create_select_permission', args: { table: 'orders', role: 'user', permission: { columns: ['id', 'status'], filter: { owner: 'X-Svc-User-Id' } } } },
      ],
    });
    // subscribers: user i watches order i (its own), variables and session differ per subscriber
    const pushedAt = new Map(); // id -> [status, time]
    const latencies = [];
    const writtenAt = new Map(); // status text -> commit time
    const early = new Map(); // status text -> arrival, for pushes processed before the commit's answer
    let firsts = 0;
    let messages = 0;
    const query = 'subscription ($id: Int!) { orders_by_pk(id: $id) { id status } }';
    for (let k = 0; k < Math.ceil(N / PER_SOCKET); k++) {
      // the session is per connection: socket k is user k, whose orders (owner k) its subscriptions
      // watch, one id each (the permission filter owner = X-Svc-User-Id applies)
      const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/graphql`, 'graphql-ws');
      sockets.push(ws);
      await new Promise((res, rej) => {
        ws.once('open', res);
        ws.once('error', rej);
      });
      ws.on('message', (d) => {
        const m = JSON.parse(d.toString());
        if (m.type !== 'data') return;
        messages++;
        const row = m.payload?.data?.orders_by_pk;
        if (!row) return;
        if (row.status === 'new') {
          firsts++;
          return;
        }
        const t = writtenAt.get(row.status);
        if (t !== undefined) latencies.push(performance.now() - t);
        else early.set(row.status, performance.now()); // pushed before the writer's client saw its commit
        pushedAt.set(row.id, row.status);
      });
      ws.send(JSON.stringify({ type: 'connection_init', payload: { headers: { 'X-Svc-Role': 'user', 'X-Svc-User-Id': String(k) } } }));
      for (let i = 0; i < PER_SOCKET && k * PER_SOCKET + i < N; i++) {
        const id = k * PER_SOCKET + i + 1;
        ws.send(JSON.stringify({ id: String(id), type: 'start', payload: { query, variables: { id } } }));
      }
    }
    const deadline = Date.now() + 120_000;
    while (firsts < N && Date.now() < deadline) await sleep(100);
    log(`${design}: ${firsts}/${N} subscribers have their first result`);
    await sleep(3 * Number(o.interval));

    const writer = new pg.Client({ connectionString: dbUrl.toString() });
    await writer.connect();
    if (design === 'change-driven') {
      const rss0 = rssMb(child.pid);
      const cd = await changeDriven(url, writer, writtenAt, latencies, early);
      await writer.end();
      const r = { design, subscribers: firsts, rss: Math.max(rss0, rssMb(child.pid)), ...cd };
      log(JSON.stringify(r));
      return r;
    }
    const pgPids = (await writer.query('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [dbName])).rows.map((r) => r.pid);
    const st0 = await statements(url);
    const pg0 = pgPids.reduce((a, p) => a + procTicks(p), 0);
    const svc0 = procTicks(child.pid);
    let rss = rssMb(child.pid);
    latencies.length = 0;
    const t0 = performance.now();
    let w = 0;
    while (performance.now() - t0 < WINDOW_S * 1000) {
      const id = 1 + Math.floor(Math.random() * N);
      const status = `s${w++}`;
      await writer.query('update orders set status = $1 where id = $2', [status, id]);
      writtenAt.set(status, performance.now());
      rss = Math.max(rss, rssMb(child.pid));
      await sleep(1000 / WRITES);
    }
    await sleep(2 * Number(o.interval) + 500); // the last writes' updates
    const secs = (performance.now() - t0) / 1000;
    const st1 = await statements(url);
    const pgCpu = (pgPids.reduce((a, p) => a + procTicks(p), 0) - pg0) / CLK / secs;
    const svcCpu = (procTicks(child.pid) - svc0) / CLK / secs;
    await writer.end();
    const r = {
      design,
      subscribers: firsts,
      stmtPerS: (st1 - st0) / secs,
      pgCpu: pgCpu * 100,
      svcCpu: svcCpu * 100,
      rss,
      writes: w,
      updates: latencies.length,
      p50: pct(latencies, 50),
      p99: pct(latencies, 99),
    };
    log(JSON.stringify(r));
    return r;
  } finally {
    for (const ws of sockets) ws.terminate();
    child.kill('SIGTERM');
    await new Promise((res) => (child.exitCode !== null ? res() : child.once('exit', res)));
    await adminSql(dbUrl, `drop database if exists "${dbName}" with (force)`).catch(() => {});
  }
}

const results = [];
for (const design of o.designs.split(',')) {
  if (design === 'multiplexed' || design === 'change-driven') results.push(await runDesign(design, ROOT));
  else if (design === 'per-subscriber') {
    const dir = mkdtempSync(join(tmpdir(), 'svc-bench-rev-'));
    try {
      const a = spawnSync('sh', ['-c', `git -C "${ROOT}" archive ${o['compare-rev']} | tar -x -C "${dir}"`], { stdio: 'inherit' });
      if (a.status !== 0) throw new Error(`git archive ${o['compare-rev']} failed`);
      symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
      results.push(await runDesign(`per-subscriber (${o['compare-rev']})`, dir));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

const f = (x, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : '–');
const cd = results.filter((r) => r.design === 'change-driven');
const polled = results.filter((r) => r.design !== 'change-driven');
const cdTable = [
  `\n## ${new Date().toISOString()}: change-driven, ${N} subscribers, ${PER_SOCKET} per socket, interval ${o.interval} ms, batch ${o['batch-size']}, idle window ${WINDOW_S} s, ${o['sparse-writes']} sparse writes (one per interval + 300 ms), ${WRITES} writes/s dense for ${WINDOW_S} s`,
  '',
  '| subscribers | idle live-query statements/s | idle statements/s (all) | sparse: updates seen | sparse p50 (ms) | sparse p99 (ms) | sparse statements/write | dense: updates seen | dense p50 (ms) | dense p99 (ms) | dense live-query statements/s | dense statements/write | Svc RSS (MB) | load avg (start, after sparse, end) |',
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  ...cd.map((r) => `| ${r.subscribers} | ${f(r.idleLq, 2)} | ${f(r.idleAll, 2)} | ${r.sparse.seen}/${r.sparse.writes} | ${f(r.sparse.p50)} | ${f(r.sparse.p99)} | ${f(r.sparse.perWrite, 1)} | ${r.dense.seen}/${r.dense.writes} | ${f(r.dense.p50)} | ${f(r.dense.p99)} | ${f(r.dense.lqPerS, 1)} | ${f(r.dense.perWrite, 1)} | ${f(r.rss)} | ${r.load.join(' / ')} |`),
  '',
].join('\n');
if (cd.length) {
  process.stdout.write(`${cdTable}\n`);
  if (o.out !== '-') appendFileSync(o.out, cdTable);
}
if (!polled.length) process.exit(0);
const table = [
  `\n## ${new Date().toISOString()}: ${N} subscribers, ${PER_SOCKET} per socket, ${WRITES} writes/s, interval ${o.interval} ms, batch ${o['batch-size']}, window ${WINDOW_S} s`,
  '',
  '| design | subscribers | statements/s | PostgreSQL CPU (% of a core) | Svc CPU (% of a core) | Svc RSS max (MB) | updates seen | update p50 (ms) | update p99 (ms) |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...polled.map((r) => `| ${r.design} | ${r.subscribers} | ${f(r.stmtPerS, 1)} | ${f(r.pgCpu)} | ${f(r.svcCpu)} | ${f(r.rss)} | ${r.updates}/${r.writes} | ${f(r.p50)} | ${f(r.p99)} |`),
  '',
].join('\n');
process.stdout.write(`${table}\n`);
if (o.out !== '-') appendFileSync(o.out, table);
