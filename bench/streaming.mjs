#!/usr/bin/env node
// Streaming-subscription benchmark (issue 39 item 2): N subscribers (default 1,000) of
// `events_stream` with the non-admin role `user` (permission filter owner = X-Svc-User-Id), 50 per
// websocket (legacy graphql-ws protocol), on one Svc process and the local PostgreSQL.
//  1. catch-up: a backlog of B rows (default 2,000); subscriber i starts at cursor i mod 1,000 (so
//     the subscribers are at different cursors: different batch rows of one statement); measured:
//     rows delivered per second until every subscriber has every row, statements sent;
//  2. live: every subscriber caught up, a writer inserts W rows a second (in 10 inserts a second)
//     for the window; measured: rows delivered per second, commit → client latency p50/p99.
// Every delivery is checked: each subscriber gets each row once, in order.
// `node bench/streaming.mjs [--subscribers 1000 --backlog 2000 --writes 100 --window 15]`; results
// appended to bench/SUBSCRIPTIONS.md ('--out -' for nowhere). Not part of `npm test`.
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createRequire } from 'node:module';
import { adminSql, freePort, procTicks } from './lib.mjs';

const HERE = new URL('.', import.meta.url).pathname.replace(/\/$/, '');
const ROOT = join(HERE, '..');
const require = createRequire(join(ROOT, 'package.json'));
const pg = require('pg');
const WebSocket = require('ws');

const { values: o } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '1000' },
    'per-socket': { type: 'string', default: '50' },
    backlog: { type: 'string', default: '2000' },
    'stream-batch': { type: 'string', default: '100' },
    writes: { type: 'string', default: '100' },
    window: { type: 'string', default: '15' },
    interval: { type: 'string', default: '1000' },
    'batch-size': { type: 'string', default: '100' },
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/svc_bench_stream' },
    out: { type: 'string', default: join(HERE, 'SUBSCRIPTIONS.md') },
  },
});
const N = Number(o.subscribers);
const PER_SOCKET = Number(o['per-socket']);
const BACKLOG = Number(o.backlog);
const WRITES = Number(o.writes);
const WINDOW_S = Number(o.window);
const log = (m) => process.stdout.write(`[stream] ${m}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const dbUrl = new URL(o['database-url']);
const dbName = dbUrl.pathname.slice(1);
const CLK = 100;
const pct = (a, p) => {
  if (!a.length) return NaN;
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function statements(url) {
  const t = await (await fetch(`${url}/v1/metrics`, { headers: { 'x-svc-role': 'admin' } })).text();
  const m = /^svc_db_statements_total (\d+)/m.exec(t);
  return m ? Number(m[1]) : NaN;
}

await adminSql(dbUrl, `drop database if exists "${dbName}" with (force)`);
await adminSql(dbUrl, `create database "${dbName}"`);
const port = await freePort();
const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'main.ts'), 'serve', '--workers', '1', '--database-url', dbUrl.toString(), '--server-port', String(port), '--server-host', '127.0.0.1'], {
  cwd: ROOT,
  env: {
    ...process.env,
    SVC_GRAPHQL_ENABLED_LOG_TYPES: 'startup',
    SVC_GRAPHQL_LOG_LEVEL: 'warn',
    SVC_GRAPHQL_STREAMING_QUERIES_MULTIPLEXED_REFETCH_INTERVAL: o.interval,
    SVC_GRAPHQL_STREAMING_QUERIES_MULTIPLEXED_BATCH_SIZE: o['batch-size'],
    SVC_GRAPHQL_MAX_WEBSOCKET_CONNECTIONS: String(Math.ceil(N / PER_SOCKET) + 10),
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const url = `http://127.0.0.1:${port}`;
const sockets = [];
try {
  for (const deadline = Date.now() + 90_000; ; await sleep(200)) {
    if (child.exitCode !== null) throw new Error(`svc exited ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error('svc did not start');
    if (await fetch(`${url}/healthz`).then((r) => r.status === 200, () => false)) break;
  }
  const q = async (body) => {
    const r = await fetch(`${url}/v1/query`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-role': 'admin' }, body: JSON.stringify(body) });
    if (r.status !== 200) throw new Error(`${r.status} ${await r.text()}`);
    return r.json();
  };
  await q({
    type: 'bulk',
    args: [
      { type: 'run_sql', args: { sql: `create table events (id bigserial primary key, owner int not null, body text not null); insert into events (owner, body) select 1, 'event ' || g from generate_series(1, ${BACKLOG}) g;` } },
      { type: 'track_table', args: { table: 'events' } },
      { type: 'create_select_permission', args: { table: 'events', role: 'user', permission: { columns: ['id', 'body'], filter: { owner: 'X-Svc-User-Id' } } } },
    ],
  });
  const query = `subscription ($from: bigint!) { events_stream(batch_size: ${o['stream-batch']}, cursor: {initial_value: {id: $from}}) { id body } }`;
  const last = new Int32Array(N); // the last id each subscriber got
  const starts = new Int32Array(N);
  let rows = 0;
  let violations = 0;
  const committedAt = new Map(); // id -> commit time
  const latencies = [];
  let measuring = false;
  for (let k = 0; k < Math.ceil(N / PER_SOCKET); k++) {
    const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/graphql`, 'graphql-ws');
    sockets.push(ws);
    await new Promise((res, rej) => {
      ws.once('open', res);
      ws.once('error', rej);
    });
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString());
      if (m.type === 'error' || m.payload?.errors) throw new Error(JSON.stringify(m));
      if (m.type !== 'data') return;
      const i = Number(m.id);
      const now = performance.now();
      for (const r of m.payload.data.events_stream) {
        const id = Number(r.id);
        if (id !== last[i] + 1) violations++;
        last[i] = id;
        rows++;
        if (measuring) {
          const t = committedAt.get(id);
          if (t !== undefined) latencies.push(now - t);
        }
      }
    });
    ws.send(JSON.stringify({ type: 'connection_init', payload: { headers: { 'X-Svc-Role': 'user', 'X-Svc-User-Id': '1' } } }));
  }
  // 1. catch-up
  const st0 = await statements(url);
  const svc0 = procTicks(child.pid);
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    starts[i] = last[i] = i % 1000;
    sockets[Math.floor(i / PER_SOCKET)].send(JSON.stringify({ id: String(i), type: 'start', payload: { query, variables: { from: starts[i] } } }));
  }
  const expected = Array.from(starts).reduce((a, s) => a + (BACKLOG - s), 0);
  for (const deadline = Date.now() + 600_000; rows < expected; await sleep(50)) if (Date.now() > deadline) throw new Error(`catch-up: ${rows}/${expected} rows`);
  const catchS = (performance.now() - t0) / 1000;
  const catchStatements = (await statements(url)) - st0;
  const catchCpu = ((procTicks(child.pid) - svc0) / CLK / catchS) * 100;
  log(`catch-up: ${rows} rows to ${N} subscribers in ${catchS.toFixed(1)} s, ${catchStatements} statements, violations ${violations}`);

  // 2. live writes
  await sleep(2 * Number(o.interval));
  const writer = new pg.Client({ connectionString: dbUrl.toString() });
  await writer.connect();
  const liveRows0 = rows;
  const st1 = await statements(url);
  const svc1 = procTicks(child.pid);
  measuring = true;
  const t1 = performance.now();
  let written = 0;
  const per = Math.max(1, Math.round(WRITES / 10));
  while (performance.now() - t1 < WINDOW_S * 1000) {
    const r = await writer.query(`insert into events (owner, body) select 1, 'live ' || g from generate_series(1, ${per}) g returning id`);
    const now = performance.now();
    for (const x of r.rows) committedAt.set(Number(x.id), now);
    written += r.rows.length;
    await sleep(100);
  }
  const expectedLive = written * N;
  for (const deadline = Date.now() + 60_000; rows - liveRows0 < expectedLive; await sleep(50)) if (Date.now() > deadline) break;
  const liveS = (performance.now() - t1) / 1000;
  const liveStatements = (await statements(url)) - st1;
  const liveCpu = ((procTicks(child.pid) - svc1) / CLK / liveS) * 100;
  await writer.end();
  const delivered = rows - liveRows0;
  log(`live: ${written} rows written, ${delivered}/${expectedLive} deliveries in ${liveS.toFixed(1)} s, violations ${violations}`);

  const f = (x, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : '–');
  const table = [
    `\n## ${new Date().toISOString()}: streaming, ${N} subscribers, ${PER_SOCKET} per socket, batch_size ${o['stream-batch']}, interval ${o.interval} ms, cohort batch ${o['batch-size']}`,
    '',
    '| phase | rows delivered | time (s) | rows/s delivered | statements | Svc CPU (% of a core) | out of order / duplicate | p50 commit → client (ms) | p99 (ms) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    `| catch-up (backlog ${BACKLOG}, cursors 0–999) | ${rows - delivered} | ${f(catchS, 1)} | ${f((rows - delivered) / catchS)} | ${catchStatements} | ${f(catchCpu)} | ${violations} | – | – |`,
    `| live (${WRITES} inserts/s, ${WINDOW_S} s) | ${delivered}/${expectedLive} | ${f(liveS, 1)} | ${f(delivered / liveS)} | ${liveStatements} | ${f(liveCpu)} | ${violations} | ${f(pct(latencies, 50))} | ${f(pct(latencies, 99))} |`,
    '',
  ].join('\n');
  process.stdout.write(`${table}\n`);
  if (o.out !== '-') appendFileSync(o.out, table);
} finally {
  for (const ws of sockets) ws.terminate();
  child.kill('SIGTERM');
  await new Promise((res) => (child.exitCode !== null ? res() : child.once('exit', res)));
  await adminSql(dbUrl, `drop database if exists "${dbName}" with (force)`).catch(() => {});
}
