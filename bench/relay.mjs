#!/usr/bin/env node
// Relay paging benchmark (issue 19): `<table>_connection(first: 20, after: $cursor)` on /v1beta1/relay
// against the same page by `where: {id: {_gt: $k}}, order_by: {id: asc}, limit: 20` on /v1/graphql,
// on a table of --rows rows (default 1,000,000), pages starting at random rows deep in the table
// (and, to show that cursors do not scan from the start, near its start). wrk, interleaved rounds.
//
//   node bench/relay.mjs [--rows 1000000] [--duration 5] [--rounds 3] [--connections 16]
//
// Uses its own database (svc_relay_bench, dropped at the end); results go to the console.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { adminSql, freePort, procTicks } from './lib.mjs';

const ROOT = new URL('..', import.meta.url).pathname;
const { values: o } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    base: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
  },
});
const ROWS = Number(o.rows);
const DB = 'svc_relay_bench';
const log = (m) => process.stdout.write(`[relay-bench] ${m}\n`);

/** CPU seconds (user + system) used so far by processes `pids` (gone ones count 0) */
const cpuSeconds = (pids) => pids.reduce((t, pid) => t + procTicks(pid), 0) / 100;

function wrk(url, lua, seconds, connections) {
  return new Promise((res, rej) => {
    const p = spawn('wrk', ['-t2', `-c${connections}`, `-d${seconds}s`, '-s', lua, url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (c) => (out += c));
    p.on('close', () => {
      const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
      const bad = /BAD (\d+)/.exec(out);
      if (!rps) return rej(new Error(out));
      res({ rps: Number(rps[1]), bad: bad ? Number(bad[1]) : 0 });
    });
  });
}

/** a wrk script posting one of `bodies` (chosen at random per request); counts answers with errors */
function luaScript(dir, name, bodies) {
  const file = join(dir, `${name}.lua`);
  const list = bodies.map((b) => `[==[${b}]==]`).join(',\n');
  writeFileSync(
    file,
    `wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-Svc-Role"] = "admin"
local bodies = {${list}}
local bad = 0
request = function() return wrk.format(nil, nil, nil, bodies[math.random(#bodies)]) end
response = function(status, headers, body)
  if status ~= 200 or string.find(body, '"errors"', 1, true) then bad = bad + 1 end
end
done = function() io.write("BAD " .. bad .. "\\n") end
`,
  );
  return file;
}

async function main() {
  const base = new URL(o.base);
  const dbUrl = new URL(o.base);
  dbUrl.pathname = `/${DB}`;
  await adminSql(base, `drop database if exists ${DB} with (force)`);
  await adminSql(base, `create database ${DB}`);
  let server;
  try {
    const t0 = Date.now();
    await adminSql(dbUrl, `create table page_item (id int primary key, name text not null, score int not null);
      insert into page_item select g, 'item ' || g, (g::bigint * 7919 % 1000)::int from generate_series(1, ${ROWS}) g;`, { own: true });
    await adminSql(dbUrl, 'vacuum analyze page_item', { own: true });
    log(`loaded ${ROWS} rows in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const port = await freePort();
    // the production build (dist/main.js, `npm run build`), as bench/run.mjs runs it: the tsx
    // loader answers ~40 % fewer requests per second
    server = spawn(process.execPath, ['dist/main.js', 'serve', '--workers', '1', '--database-url', dbUrl.toString(), '--server-port', String(port), '--server-host', '127.0.0.1'], {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: 'production', SVC_GRAPHQL_ENABLED_LOG_TYPES: 'startup', SVC_GRAPHQL_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${url}/healthz`)).ok) break;
      } catch {
        /* starting */
      }
      if (i > 120) throw new Error('svc did not start');
      await new Promise((r) => setTimeout(r, 500));
    }
    const track = await fetch(`${url}/v1/query`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-role': 'admin' }, body: JSON.stringify({ type: 'track_table', args: { name: 'page_item' } }) });
    if (!track.ok) throw new Error(await track.text());

    const cursor = (k) => Buffer.from(`{"id" : ${k}}`).toString('base64');
    const deep = Array.from({ length: 500 }, () => Math.floor(ROWS / 2 + Math.random() * (ROWS / 2 - 100)));
    const shallow = Array.from({ length: 500 }, () => 1 + Math.floor(Math.random() * 1000));
    const relayQ = 'query($c: String) { page_item_connection(first: 20, after: $c) { pageInfo { endCursor hasNextPage } edges { cursor node { id name score } } } }';
    const relayLean = 'query($c: String) { page_item_connection(first: 20, after: $c) { edges { node { name score } } } }';
    const gqlQ = 'query($k: Int) { page_item(where: {id: {_gt: $k}}, order_by: {id: asc}, limit: 20) { id name score } }';
    const body = (query, variables) => JSON.stringify({ query, variables });
    // answers are checked once: the same 20 rows on both endpoints
    const k = deep[0];
    const relayText = await (await fetch(`${url}/v1beta1/relay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(relayQ, { c: cursor(k) }) })).text();
    const r = JSON.parse(relayText);
    const g = await (await fetch(`${url}/v1/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(gqlQ, { k }) })).json();
    const names = (xs) => xs.map((x) => x.name).join();
    if (names(r.data.page_item_connection.edges.map((e) => e.node)) !== names(g.data.page_item)) throw new Error('relay and graphql pages differ');

    // the same page on /v1/graphql with a response as large as the full Relay form's (its cursors
    // and ids are bytes the plain page does not carry): `name` repeated under aliases
    const relayBytes = Buffer.byteLength(relayText);
    let wideQ = gqlQ;
    for (let n = 1; n < 40; n++) {
      const q = gqlQ.replace('{ id name score }', `{ id name score ${Array.from({ length: n }, (_, i) => `n${i}: name`).join(' ')} }`);
      const size = Buffer.byteLength(await (await fetch(`${url}/v1/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(q, { k }) })).text());
      wideQ = q;
      if (size >= relayBytes) {
        log(`relay full form: ${relayBytes} bytes; /v1/graphql with ${n} aliases: ${size} bytes`);
        break;
      }
    }

    const dir = mkdtempSync(join(os.tmpdir(), 'relay-bench-'));
    const targets = [
      { name: 'relay deep (cursor, pageInfo, id)', path: '/v1beta1/relay', lua: luaScript(dir, 'relay', deep.map((x) => body(relayQ, { c: cursor(x) }))) },
      { name: 'relay deep (node columns only)', path: '/v1beta1/relay', lua: luaScript(dir, 'lean', deep.map((x) => body(relayLean, { c: cursor(x) }))) },
      { name: 'graphql deep (where id > k, limit)', path: '/v1/graphql', lua: luaScript(dir, 'graphql', deep.map((x) => body(gqlQ, { k: x }))) },
      { name: 'relay near the start', path: '/v1beta1/relay', lua: luaScript(dir, 'shallow', shallow.map((x) => body(relayQ, { c: cursor(x) }))) },
      { name: 'graphql deep, as many bytes as relay', path: '/v1/graphql', lua: luaScript(dir, 'wide', deep.map((x) => body(wideQ, { k: x }))) },
    ];
    const results = new Map(targets.map((t) => [t.name, { rps: [], cpu: [], svc: [], pg: [] }]));
    for (const t of targets) await wrk(`${url}${t.path}`, t.lua, 1, Number(o.connections)); // warm-up
    const backends = async () => (await adminSql(dbUrl, `select pid from pg_stat_activity where datname = '${DB}' and pid <> pg_backend_pid()`, { own: true })).rows.map((r) => r.pid);
    for (let round = 0; round < Number(o.rounds); round++) {
      const order = round % 2 ? [...targets].reverse() : targets;
      for (const t of order) {
        const pgPids = await backends();
        const svcBefore = cpuSeconds([server.pid]);
        const pgBefore = cpuSeconds(pgPids);
        const x = await wrk(`${url}${t.path}`, t.lua, Number(o.duration), Number(o.connections));
        const svcCpu = cpuSeconds([server.pid]) - svcBefore;
        const pgCpu = cpuSeconds(pgPids) - pgBefore;
        if (x.bad) throw new Error(`${t.name}: ${x.bad} bad answers`);
        const per = (s) => (s / (x.rps * Number(o.duration))) * 1e6;
        const r = results.get(t.name);
        r.rps.push(x.rps);
        r.cpu.push(per(svcCpu + pgCpu));
        r.svc.push(per(svcCpu));
        r.pg.push(per(pgCpu));
        log(`round ${round + 1} ${t.name}: ${x.rps.toFixed(0)} req/s, ${per(svcCpu + pgCpu).toFixed(0)} µs CPU/request (svc ${per(svcCpu).toFixed(0)} + PostgreSQL ${per(pgCpu).toFixed(0)})`);
      }
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const ref = results.get(targets[2].name);
    const gq = median(ref.rps);
    const gc = median(ref.cpu);
    log(`medians over ${o.rounds} rounds of ${o.duration} s, ${o.connections} connections, ${ROWS} rows (load average ${os.loadavg()[0].toFixed(1)}):`);
    log(`  ${'target'.padEnd(38)} ${'req/s'.padStart(7)} ${'vs graphql'.padStart(10)} ${'µs CPU/req'.padStart(11)} ${'svc'.padStart(5)} ${'PG'.padStart(5)} ${'CPU-bound req/s vs graphql'.padStart(27)}`);
    for (const t of targets) {
      const r = results.get(t.name);
      const m = median(r.rps);
      const c = median(r.cpu);
      log(`  ${t.name.padEnd(38)} ${m.toFixed(0).padStart(7)} ${`${(m / gq).toFixed(2)}x`.padStart(10)} ${c.toFixed(0).padStart(11)} ${median(r.svc).toFixed(0).padStart(5)} ${median(r.pg).toFixed(0).padStart(5)} ${`${(gc / c).toFixed(2)}x`.padStart(27)}`);
    }
  } finally {
    if (server) {
      const gone = new Promise((r) => server.once('close', r));
      server.kill('SIGTERM');
      await gone;
    }
    await adminSql(base, `drop database if exists ${DB} with (force)`).catch(() => {});
  }
}

main().catch((e) => {
  process.stderr.write(`${e.stack ?? e}\n`);
  process.exit(1);
});
