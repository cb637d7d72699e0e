#!/usr/bin/env node
// Synchronous action benchmark (issue 16): requests per second and p99 latency of a query action
// whose handler answers at once, through Svc (`node dist/main.js serve`), against calling the same
// handler directly with the body Svc would send. wrk (2 threads) on loopback; the handler is its
// own Node process. `npm run bench:actions [-- --duration 10 --connections 32]`; results appended
// to bench/ACTIONS.md ('--out -' for nowhere). Not part of `npm test`. With BENCH_PERF_MAP=1 Svc and
// the bare proxy run with --perf-basic-prof, so `perf record -g -p <pid>` during their rounds names
// the JavaScript (how the sync action's profile against the proxy's was taken, README "Performance").
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { adminSql, cpuNs, freePort, waitHttp } from './lib.mjs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const HERE = new URL('.', import.meta.url).pathname.replace(/\/$/, '');
const ROOT = join(HERE, '..');

const { values: o } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/svc_bench_actions' },
    out: { type: 'string', default: join(HERE, 'ACTIONS.md') },
  },
});
const log = (m) => process.stdout.write(`[actions] ${m}\n`);
if (!existsSync(join(ROOT, 'dist', 'main.js'))) spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });

const dbUrl = new URL(o['database-url']);
const dbName = dbUrl.pathname.slice(1);

// the handler: answers every POST at once with the output object
const HANDLER = `
const http = require('node:http');
const s = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"id":1,"name":"one"}'); });
});
s.keepAliveTimeout = 60000;
s.listen(Number(process.argv[1]), '127.0.0.1');`;

// the ceiling of any Node.js engine on this machine: a proxy that does only the two HTTP exchanges
// (read the client's request, POST the handler's body with a keep-alive node:http agent, answer
// with the handler's output) and nothing else: no GraphQL, no session, no checks
const PROXY = `
const http = require('node:http');
const [port, target, body] = [Number(process.argv[1]), process.argv[2], process.argv[3]];
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const u = new URL(target);
http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const out = http.request({ hostname: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (r) => {
      const chunks = [];
      r.on('data', (c) => chunks.push(c));
      r.on('end', () => {
        const text = '{"data":{"item":' + Buffer.concat(chunks).toString() + '}}';
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      });
    });
    out.end(body);
  });
}).listen(port, '127.0.0.1');`;

const luaString = (text) => `[==[${text}]==]`;
const tmp = mkdtempSync(join(os.tmpdir(), 'svc-bench-actions-'));

function wrk(url, body, headers, seconds) {
  const script = join(tmp, `s${Date.now()}.lua`);
  writeFileSync(
    script,
    `wrk.method = "POST"
wrk.body = ${luaString(body)}
${Object.entries(headers).map(([k, v]) => `wrk.headers[ ${luaString(k)} ] = ${luaString(v)}`).join('\n')}
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK {"requests":%.0f,"duration_us":%.0f,"errors":%.0f,"non2xx":%.0f,"p50_us":%.0f,"p99_us":%.0f}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status, latency:percentile(50), latency:percentile(99)))
end
`,
  );
  const r = spawnSync('wrk', ['-t2', `-c${o.connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', script, url], { encoding: 'utf8' });
  const m = /^WRK (\{.*\})$/m.exec(r.stdout);
  if (!m) throw new Error(`wrk: ${r.stdout}${r.stderr}`);
  const w = JSON.parse(m[1]);
  return { rps: w.requests / (w.duration_us / 1e6), p50: w.p50_us / 1000, p99: w.p99_us / 1000, errors: w.errors, non2xx: w.non2xx };
}

const children = [];
const stopAll = () => children.forEach((c) => c.exitCode === null && c.kill('SIGTERM'));
process.on('exit', stopAll);

try {
  if (spawnSync('wrk', ['--version']).error) throw new Error('wrk is not installed (Debian: apt-get install wrk)');
  await adminSql(dbUrl, `drop database if exists "${dbName}"`);
  await adminSql(dbUrl, `create database "${dbName}"`);
  const hport = await freePort();
  const handler = spawn(process.execPath, ['-e', HANDLER, String(hport)], { stdio: 'inherit' });
  children.push(handler);
  const handlerUrl = `http://127.0.0.1:${hport}/`;
  const sport = await freePort();
  // BENCH_PERF_MAP=1: V8's code named for perf (Svc and the bare proxy)
  const perfMap = process.env.BENCH_PERF_MAP ? ['--perf-basic-prof'] : [];
  const svc = spawn(process.execPath, [...perfMap, join(ROOT, 'dist', 'main.js'), 'serve', '--workers', '1', '--database-url', dbUrl.toString(), '--server-port', String(sport), '--server-host', '127.0.0.1'], {
    env: { ...process.env, SVC_GRAPHQL_ENABLED_LOG_TYPES: 'startup', SVC_GRAPHQL_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(svc);
  const svcUrl = `http://127.0.0.1:${sport}`;
  await waitHttp(`${svcUrl}/healthz`, svc);
  await waitHttp(handlerUrl, handler);
  const setup = await fetch(`${svcUrl}/v1/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      type: 'bulk',
      args: [
        { type: 'set_custom_types', args: { objects: [{ name: 'Item', fields: [{ name: 'id', type: 'Int!' }, { name: 'name', type: 'String' }] }] } },
        { type: 'create_action', args: { name: 'item', definition: { type: 'query', arguments: [{ name: 'id', type: 'Int!' }], output_type: 'Item', handler: handlerUrl } } },
        { type: 'create_action_permission', args: { action: 'item', role: 'user' } },
      ],
    }),
  });
  if (!setup.ok) throw new Error(`setup: ${await setup.text()}`);
  const headers = { 'content-type': 'application/json', 'x-svc-role': 'user', 'x-svc-user-id': '1' };
  const viaSvc = { url: `${svcUrl}/v1/graphql`, body: JSON.stringify({ query: 'query ($id: Int!) { item(id: $id) { id name } }', variables: { id: 1 } }), headers };
  const direct = {
    url: handlerUrl,
    body: JSON.stringify({ action: { name: 'item' }, input: { id: 1 }, session_variables: { 'x-svc-role': 'user', 'x-svc-user-id': '1' } }),
    headers: { 'content-type': 'application/json' },
  };
  const pport = await freePort();
  const proxy = spawn(process.execPath, [...perfMap, '-e', PROXY, String(pport), handlerUrl, direct.body], { stdio: 'inherit' });
  children.push(proxy);
  const viaProxy = { url: `http://127.0.0.1:${pport}/`, body: viaSvc.body, headers };
  await waitHttp(viaProxy.url, proxy);
  const check = await (await fetch(viaSvc.url, { method: 'POST', headers, body: viaSvc.body })).text();
  if (check !== '{"data":{"item":{"id":1,"name":"one"}}}') throw new Error(`unexpected answer: ${check}`);
  const res = {};
  const rounds = [['direct', direct], ['svc', viaSvc], ['proxy', viaProxy]];
  for (const [name, t] of [...rounds, ...[...rounds].reverse()]) {
    wrk(t.url, t.body, t.headers, Number(o.warmup));
    const front = name === 'svc' ? svc.pid : name === 'proxy' ? proxy.pid : undefined;
    const [f0, h0] = [front ? cpuNs(front) : 0, cpuNs(handler.pid)];
    const r = wrk(t.url, t.body, t.headers, Number(o.duration));
    const n = r.rps * Number(o.duration);
    r.frontUs = front ? (cpuNs(front) - f0) / n / 1000 : 0;
    r.handlerUs = (cpuNs(handler.pid) - h0) / n / 1000;
    log(`${name}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, errors ${r.errors}, non-2xx ${r.non2xx}; CPU per request: ${front ? `${name} ${r.frontUs.toFixed(0)} µs, ` : ''}handler ${r.handlerUs.toFixed(0)} µs`);
    // two alternating rounds: keep each target's better one (the machine is shared)
    if (!res[name] || r.rps > res[name].rps) res[name] = r;
  }
  const ratio = res.svc.rps / res.direct.rps;
  const line = `sync action through Svc: ${res.svc.rps.toFixed(0)} req/s, p99 ${res.svc.p99.toFixed(2)} ms; handler called directly: ${res.direct.rps.toFixed(0)} req/s, p99 ${res.direct.p99.toFixed(2)} ms; ratio ${ratio.toFixed(2)}×`;
  const bound = `a bare Node.js proxy (the two HTTP exchanges only): ${res.proxy.rps.toFixed(0)} req/s, p99 ${res.proxy.p99.toFixed(2)} ms, ${(res.proxy.rps / res.direct.rps).toFixed(2)}× the direct call; Svc ${(res.svc.rps / res.proxy.rps).toFixed(2)}× the bare proxy`;
  const cpu = `CPU per request (schedstat, in those runs): handler ${res.direct.handlerUs.toFixed(0)} µs; bare proxy ${res.proxy.frontUs.toFixed(0)} µs; Svc ${res.svc.frontUs.toFixed(0)} µs`;
  log(cpu);
  log(line);
  log(bound);
  if (o.out !== '-') {
    appendFileSync(
      o.out,
      `\n## ${new Date().toISOString()}\n\n- ${line}\n- ${bound}\n- ${cpu}\n- wrk 2 threads, ${o.connections} connections, ${o.warmup} s warm-up + ${o.duration} s per run, best of 2 runs, targets alternated; ${os.cpus().length} CPUs shared by wrk, Svc (or the proxy), the handler and PostgreSQL; Node ${process.version}\n`,
    );
  }
} finally {
  stopAll();
  await new Promise((r) => setTimeout(r, 500));
  await adminSql(dbUrl, `drop database if exists "${dbName}" with (force)`).catch(() => undefined);
}
