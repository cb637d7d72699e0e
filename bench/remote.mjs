#!/usr/bin/env node
// Remote relationship benchmark (issue 17): a query of 100 rows, each with a remote relationship
// field, through Svc vs a hand-written baseline doing the same work the practical minimum way: one
// SQL statement (json_agg of the 100 rows) + one HTTP request to the remote with one alias per
// distinct join value, merged in Node. Both talk to the same remote GraphQL server (graphql-js,
// separate process) and the same database. Alternating wrk runs on loopback; results to
// bench/REMOTE.md.   node bench/remote.mjs [--duration 8] [--rounds 2] [--connections 16]
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { adminSql, freePort, waitHttp } from './lib.mjs';
import pg from 'pg';

const HERE = new URL('.', import.meta.url).pathname.replace(/\/$/, '');
const ROOT = join(HERE, '..');
const { values: o } = parseArgs({
  options: {
    duration: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '16' },
    out: { type: 'string', default: join(HERE, 'REMOTE.md') },
  },
});
const BASE = process.env.SVC_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const DB = `svc_bench_remote_${process.pid}`;
const dbUrl = (() => {
  const u = new URL(BASE);
  u.pathname = `/${DB}`;
  return u.toString();
})();
const log = (m) => process.stdout.write(`[remote-bench] ${m}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const QUERY = '{ items(order_by: {id: asc}, limit: 100) { id message { id msg } } }';

const children = [];
function start(args, env = {}) {
  const c = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(c);
  return c;
}

function wrk(url, seconds, dir, name) {
  const script = join(dir, `${name}.lua`);
  writeFileSync(
    script,
    `wrk.method = "POST"
wrk.body = ${JSON.stringify(JSON.stringify({ query: QUERY }))}
wrk.headers["content-type"] = "application/json"
function done(summary, latency, requests)
  io.write(string.format('WRK {"requests":%.0f,"duration_us":%.0f,"errors":%.0f,"p99_us":%.0f}\\n', summary.requests, summary.duration, summary.errors.status + summary.errors.connect + summary.errors.timeout, latency:percentile(99)))
end
`,
  );
  const r = spawnSync('wrk', ['-t2', `-c${o.connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', script, url], { encoding: 'utf8' });
  const m = /^WRK (\{.*\})$/m.exec(r.stdout);
  if (!m) throw new Error(`wrk: ${r.stdout}${r.stderr}`);
  const x = JSON.parse(m[1]);
  return { rps: x.requests / (x.duration_us / 1e6), p99: x.p99_us / 1000, errors: x.errors };
}

async function main() {
  const dir = mkdtempSync(join(os.tmpdir(), 'svc-remote-bench-'));
  log('build');
  if (spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'inherit' }).status !== 0) throw new Error('build failed');
  await adminSql(BASE, `drop database if exists "${DB}" with (force)`);
  await adminSql(BASE, `create database "${DB}"`);
  try {
    const c = new pg.Client({ connectionString: dbUrl });
    await c.connect();
    await c.query('create table items (id int primary key, msg_id int not null); insert into items select g, 1 + g % 50 from generate_series(1, 10000) g; analyze items;');
    await c.end();
    const [rp, sp, bp] = [await freePort(), await freePort(), await freePort()];
    start([join(HERE, 'remote-server.mjs'), String(rp)]);
    const remoteUrl = `http://127.0.0.1:${rp}/graphql`;
    await waitHttp(remoteUrl);
    start([join(ROOT, 'dist', 'main.js'), 'serve', '--server-port', String(sp), '--server-host', '127.0.0.1'], {
      SVC_GRAPHQL_DATABASE_URL: dbUrl,
      SVC_GRAPHQL_PG_CONNECTIONS: '16',
      SVC_GRAPHQL_ENABLED_LOG_TYPES: 'startup',
      SVC_GRAPHQL_LOG_LEVEL: 'warn',
    });
    const svc = `http://127.0.0.1:${sp}`;
    await waitHttp(`${svc}/healthz`);
    const meta = await fetch(`${svc}/v1/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        type: 'bulk',
        args: [
          { type: 'track_table', args: { schema: 'public', name: 'items' } },
          { type: 'add_remote_schema', args: { name: 'msgs', definition: { url: remoteUrl } } },
          { type: 'create_remote_relationship', args: { name: 'message', table: 'items', svc_fields: ['msg_id'], remote_schema: 'msgs', remote_field: { message: { arguments: { id: '$msg_id' } } } } },
        ],
      }),
    });
    if (meta.status !== 200) throw new Error(`metadata: ${await meta.text()}`);
    // the baseline in its own process (wrk runs synchronously here)
    start([join(HERE, 'remote-baseline.mjs'), String(bp), remoteUrl, dbUrl]);
    await waitHttp(`http://127.0.0.1:${bp}/`);
    const targets = { svc: `${svc}/v1/graphql`, raw: `http://127.0.0.1:${bp}/` };
    // same answer from both
    const answers = await Promise.all(Object.values(targets).map(async (u) => (await fetch(u, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: QUERY }) })).json()));
    if (JSON.stringify(answers[0]) !== JSON.stringify(answers[1])) throw new Error(`answers differ:\n${JSON.stringify(answers[0]).slice(0, 300)}\n${JSON.stringify(answers[1]).slice(0, 300)}`);
    const results = { svc: [], raw: [] };
    for (let round = 0; round < Number(o.rounds); round++) {
      for (const [name, url] of Object.entries(targets)) {
        wrk(url, Number(o.warmup), dir, `${name}-warm`);
        const r = wrk(url, Number(o.duration), dir, name);
        log(`round ${round + 1} ${name}: ${r.rps.toFixed(0)} req/s, p99 ${r.p99.toFixed(1)} ms, errors ${r.errors}`);
        results[name].push(r);
      }
    }
    const avg = (xs, k) => xs.reduce((a, x) => a + x[k], 0) / xs.length;
    const s = { rps: avg(results.svc, 'rps'), p99: avg(results.svc, 'p99') };
    const b = { rps: avg(results.raw, 'rps'), p99: avg(results.raw, 'p99') };
    const line = `| 100 rows × remote relationship | ${s.rps.toFixed(0)} | ${b.rps.toFixed(0)} | ${(s.rps / b.rps).toFixed(2)}× | ${s.p99.toFixed(1)} | ${b.p99.toFixed(1)} |`;
    log(line);
    if (o.out !== '-') {
      writeFileSync(
        o.out,
        `# Remote relationship benchmark\n\n\`node bench/remote.mjs\` (${new Date().toISOString().slice(0, 10)}): ${os.cpus().length} cores shared by wrk (2 threads, ${o.connections} connections), both servers, the remote (graphql-js, own process) and PostgreSQL; ${o.rounds} alternating rounds of ${o.duration} s per target, averaged. Query: \`${QUERY}\` (50 distinct join values among the 100 rows). Baseline: one hand-written SQL statement + one remote request with one alias per distinct value, merged in Node (pg + node:http, keep-alive) — the practical limit.\n\n| scenario | Svc req/s | baseline req/s | Svc/baseline | Svc p99 ms | baseline p99 ms |\n| --- | ---: | ---: | ---: | ---: | ---: |\n${line}\n`,
      );
    }
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await sleep(500);
    await adminSql(BASE, `drop database if exists "${DB}" with (force)`).catch(() => undefined);
  }
}

main().catch((e) => {
  for (const c of children) c.kill('SIGKILL');
  process.stderr.write(`remote-bench: ${e.stack ?? e}\n`);
  process.exit(1);
});
