#!/usr/bin/env node
// Event-trigger delivery benchmark (issue 14): events per second from the COMMIT of N single-row
// inserts to the 2xx at a local receiver, and p50/p99 latency from each commit to its delivery,
// with 1 and with 2 Svc processes (`node dist/main.js serve`) on one PostgreSQL database.
// `npm run bench:events [-- --events 10000 --fetch-interval 1000 --writers 8]`; results appended
// to bench/EVENTS.md ('--out -' for nowhere). Not part of `npm test`.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { adminSql, procTicks } from './lib.mjs';
import { createRequire } from 'node:module';

const HERE = new URL('.', import.meta.url).pathname.replace(/\/$/, '');
const ROOT = join(HERE, '..');
const require = createRequire(join(ROOT, 'package.json'));
const pg = require('pg');

const { values: o } = parseArgs({
  options: {
    events: { type: 'string', default: '10000' },
    'fetch-interval': { type: 'string', default: '1000' },
    writers: { type: 'string', default: '8' },
    processes: { type: 'string', default: '1,2' },
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/svc_bench_events' },
    out: { type: 'string', default: join(HERE, 'EVENTS.md') },
  },
});
const N = Number(o.events);
const FETCH = Number(o['fetch-interval']);
const WRITERS = Number(o.writers);
const log = (m) => process.stdout.write(`[events] ${m}\n`);

if (!existsSync(join(ROOT, 'dist', 'main.js'))) spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });

const dbUrl = new URL(o['database-url']);
const dbName = dbUrl.pathname.slice(1);

/** receiver: arrival time per row id */
const arrivals = new Map();
let requests = 0;
let onArrival = () => {};
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    requests++;
    try {
      const b = JSON.parse(Buffer.concat(chunks).toString());
      const id = b.event.data.new.id;
      if (!arrivals.has(id)) arrivals.set(id, performance.timeOrigin + performance.now());
    } catch {
      /* not an event */
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
    onArrival();
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const receiverUrl = `http://127.0.0.1:${server.address().port}`;

async function startSvc(port) {
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'main.js'), 'serve', '--workers', '1', '--database-url', dbUrl.toString(), '--server-port', String(port), '--connections', '10'], {
    env: { ...process.env, SVC_GRAPHQL_EVENTS_FETCH_INTERVAL: String(FETCH), SVC_GRAPHQL_ENABLED_LOG_TYPES: 'startup', SVC_GRAPHQL_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { child, url };
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('svc did not start');
}

const pct = (a, p) => a[Math.min(a.length - 1, Math.floor((p / 100) * a.length))];

async function runOnce(processes) {
  await adminSql(dbUrl, `drop database if exists "${dbName}"`);
  await adminSql(dbUrl, `create database "${dbName}"`);
  const procs = [];
  for (let i = 0; i < processes; i++) procs.push(await startSvc(18_600 + i));
  const q = (body) => fetch(`${procs[0].url}/v1/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json());
  await q({
    type: 'bulk',
    args: [
      { type: 'run_sql', args: { sql: 'create table bench_event (id int primary key, note text)' } },
      { type: 'track_table', args: { table: 'bench_event' } },
      { type: 'create_event_trigger', args: { name: 'bench_insert', table: 'bench_event', webhook: receiverUrl, insert: { columns: '*' } } },
    ],
  });
  // let every process see the trigger
  await new Promise((r) => setTimeout(r, 1500));
  arrivals.clear();
  requests = 0;
  const commits = new Map();
  const cpu0 = await pgCpuTicks();
  const svcTicks0 = procs.map((p) => procTicks(p.child.pid)).reduce((a, b) => a + b, 0);
  const t0 = performance.timeOrigin + performance.now();
  let next = 1;
  const writers = Array.from({ length: WRITERS }, async () => {
    const c = new pg.Client({ connectionString: dbUrl.toString() });
    await c.connect();
    for (;;) {
      const id = next++;
      if (id > N) break;
      await c.query('insert into bench_event values ($1, $2)', [id, 'x']);
      commits.set(id, performance.timeOrigin + performance.now());
    }
    await c.end();
  });
  await Promise.all(writers);
  const tCommitted = performance.timeOrigin + performance.now();
  await new Promise((res, rej) => {
    const check = () => {
      if (arrivals.size >= N) res();
    };
    onArrival = check;
    check();
    setTimeout(() => rej(new Error(`only ${arrivals.size} of ${N} events in 300 s`)), 300_000).unref();
  });
  const tDone = performance.timeOrigin + performance.now();
  const cpu1 = await pgCpuTicks();
  const svcTicks = procs.map((p) => procTicks(p.child.pid)).reduce((a, b) => a + b, 0) - svcTicks0;
  const lat = [...arrivals.entries()].map(([id, at]) => at - commits.get(id)).filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  for (const p of procs) p.child.kill('SIGTERM');
  await Promise.all(procs.map((p) => new Promise((r) => p.child.once('exit', r))));
  return {
    processes,
    events: N,
    duplicates: requests - arrivals.size,
    insertSeconds: (tCommitted - t0) / 1000,
    totalSeconds: (tDone - t0) / 1000,
    eventsPerSecond: N / ((tDone - t0) / 1000),
    p50: pct(lat, 50),
    p99: pct(lat, 99),
    svcCpuMsPerEvent: (svcTicks * 10) / N,
    pgCpuMsPerEvent: cpu0 !== null && cpu1 !== null ? ((cpu1 - cpu0) * 10) / N : null,
  };
}

/** CPU ticks (1/100 s) of every postgres process on this machine, or null when /proc is unreadable */
async function pgCpuTicks() {
  const r = spawnSync('sh', ['-c', "for p in $(pgrep -x postgres); do cat /proc/$p/stat 2>/dev/null; done"], { encoding: 'utf8' });
  if (r.status !== 0) return null;
  let t = 0;
  for (const line of r.stdout.split('\n')) {
    const f = line.slice(line.lastIndexOf(')') + 2).split(' ');
    if (f.length > 13) t += Number(f[11]) + Number(f[12]);
  }
  return t;
}

const results = [];
for (const n of o.processes.split(',').map(Number)) {
  log(`${n} process(es), ${N} single-row inserts from ${WRITERS} writers, fetch interval ${FETCH} ms`);
  const r = await runOnce(n);
  log(JSON.stringify(r));
  results.push(r);
}
server.close();
await adminSql(dbUrl, `drop database if exists "${dbName}"`);

const lines = [
  `\n## ${new Date().toISOString()} — ${N} events, ${WRITERS} writers, --events-fetch-interval ${FETCH}`,
  '',
  '| processes | events/s (first commit → last 2xx) | inserts took | p50 commit→2xx | p99 commit→2xx | duplicates | Svc CPU per event | PostgreSQL CPU per event |',
  '|---|---|---|---|---|---|---|---|',
  ...results.map((r) => `| ${r.processes} | ${r.eventsPerSecond.toFixed(0)} | ${r.insertSeconds.toFixed(2)} s | ${r.p50.toFixed(0)} ms | ${r.p99.toFixed(0)} ms | ${r.duplicates} | ${r.svcCpuMsPerEvent.toFixed(3)} ms | ${r.pgCpuMsPerEvent === null ? 'n/a' : `${r.pgCpuMsPerEvent.toFixed(3)} ms`} |`),
  '',
];
process.stdout.write(lines.join('\n') + '\n');
if (o.out !== '-') appendFileSync(o.out, lines.join('\n'));
