#!/usr/bin/env node
// Where each server's CPU goes per request, on the CPU (not wall-clock): `perf record -e cpu-clock
// -g` on the server's process while wrk loads one scenario, with node started with
// --perf-basic-prof so that V8's compiled code is named. The targets run one after the other,
// round by round; every figure is µs of CPU per request (samples × sample period / requests).
//
//   node bench/oncpu.mjs [--scenario a_pk] [--targets svc,raw] [--rounds 2] [--seconds 8]
//                        [--connections 32] [--stacks httpLog.js,logStream.js] [--top 25]
//                        [--base-dist DIR] [--leaves httpLog.js] [--callers LoadIC] [--main-thread]
//
// Targets: svc (dist/main.js, npm run build first), svc-nolog (the same without the http-log
// line), svc-traced (OTLP to a local receiver that drops the payloads, 100 % sampled), raw
// (bench/raw-server.mjs), base (--base-dist: dist/ of another build), base-traced (that build traced
// as svc-traced is).
// Printed per target and round: CPU per request in all and by where the code lives (JIT: code V8
// compiled from JavaScript; node: node's binary, V8's runtime and builtins; kernel; libc), the
// symbols with the most CPU of their own, and, per --stacks pattern, the CPU of the samples whose
// stack has a frame matching it (inclusive: "what the log writer and everything it calls cost").
// --leaves P: per target, the symbols with the most CPU of their own among the samples whose stack
// has a frame matching P (what a function's inclusive time is made of: its callees and builtins).
// --main-thread: count only the samples of the process's main thread (JavaScript's), not of its
// other threads (V8's compiler and GC helpers, libuv's pool, a worker such as the OTLP exporter's).
// --callers S: per target, for the samples whose own symbol matches S (a builtin, say), the nearest
// JavaScript function on their stack (who pays for an inline-cache miss or a string flattening).
// Then the first two targets side by side, symbol by symbol (the largest differences first).
//
// Why: `--cpu-prof` samples wall-clock time: on a loaded 2-core VM it put half of every request
// in `writev`, the time the process waits after waking its peer; callgrind (bench/instructions.mjs)
// counts instructions, not the cache misses that make code cost 4-5× more inside a request than
// in a loop. The software clock needs no hardware counters (this VM has none).
// Caveats: JIT code that V8 moved or collected can leave stale names in /tmp/perf-<pid>.map (a
// startup function named where request code now lives): read single JIT names with care; the
// kernel's time with interrupts off is charged to where they are turned back on
// (`_raw_spin_unlock_irqrestore`: in a loopback send, waking the peer).
// Needs perf (Debian: linux-perf) with kernel.perf_event_paranoid ≤ 1 (or root), wrk, and the bench
// database (bench/load.sh svc_bench).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, loadBenchMetadata, waitHttp, wrkPostScript } from './lib.mjs';
import { byId, HERE, loadQueries } from './scenarios.mjs';

const ROOT = join(HERE, '..');
const { values: o } = parseArgs({
  options: {
    scenario: { type: 'string', default: 'a_pk' },
    targets: { type: 'string', default: 'svc,raw' },
    rounds: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '8' },
    connections: { type: 'string', default: '32' },
    stacks: { type: 'string', default: '' },
    leaves: { type: 'string' },
    callers: { type: 'string' },
    'main-thread': { type: 'boolean', default: false },
    top: { type: 'string', default: '25' },
    'base-dist': { type: 'string' },
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/svc_bench' },
  },
});
/** a usage error: one line, exit 2 */
const usage = (msg) => {
  process.stderr.write(`oncpu: ${msg}\n`);
  process.exit(2);
};
const s = byId[o.scenario];
if (!s) usage(`unknown scenario ${o.scenario}; known: ${Object.keys(byId).join(', ')}`);
for (const [cmd, args] of [['perf', ['--version']], ['wrk', ['--version']]]) {
  if (spawnSync(cmd, args).error) usage(`${cmd} is not installed (Debian: ${cmd === 'perf' ? 'linux-perf' : 'wrk'})`);
}
const paranoid = Number(readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8'));
if (paranoid > 1 && process.getuid?.() !== 0) usage(`kernel.perf_event_paranoid is ${paranoid}: needs ≤ 1 (echo 1 > /proc/sys/kernel/perf_event_paranoid) or root`);
const names = o.targets.split(',').map((t) => t.trim()).filter(Boolean);
const known = ['svc', 'svc-nolog', 'svc-traced', 'raw', 'base', 'base-traced'];
if (!names.length) usage('--targets is empty');
for (const n of names) if (!known.includes(n)) usage(`unknown target ${n}; known: ${known.join(', ')}`);
if ((names.includes('base') || names.includes('base-traced')) && !o['base-dist']) usage('targets base and base-traced need --base-dist DIR (the dist/ of another build)');
for (const k of ['rounds', 'seconds', 'connections', 'top']) if (!(Number(o[k]) >= 1)) usage(`--${k} must be a number ≥ 1`);
if (o.leaves && o.callers) usage('--leaves and --callers are one or the other');
const stackPatterns = o.stacks.split(',').map((x) => x.trim()).filter(Boolean);
const HZ = 4000;
const US_PER_SAMPLE = 1e6 / HZ;
const dir = mkdtempSync(join(os.tmpdir(), 'svc-oncpu-'));
const log = (m) => process.stdout.write(`[oncpu] ${m}\n`);

const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_GRAPHQL_')));
env.NODE_ENV = 'production';
const children = [];
process.on('exit', () => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL')));

// the OTLP receiver of svc-traced: accepts and drops the payloads
let sinkPort;
if (names.includes('svc-traced') || names.includes('base-traced')) {
  sinkPort = await freePort();
  children.push(
    spawn(process.execPath, ['-e', `require('node:http').createServer((q, s) => { q.resume(); q.on('end', () => { s.writeHead(200, {'content-type': 'application/json'}); s.end('{}'); }); }).listen(${sinkPort}, '127.0.0.1')`], {
      stdio: 'ignore',
    }),
  );
}

async function startTarget(name) {
  const port = await freePort();
  const svcLike = name !== 'raw';
  const dist = name === 'base' || name === 'base-traced' ? o['base-dist'] : join(ROOT, 'dist');
  const args = svcLike
    ? ['--perf-basic-prof', join(dist, 'main.js'), 'serve', '--workers', '1', '--database-url', o['database-url'], '--server-port', String(port), '--server-host', '127.0.0.1', '--connections', '16']
    : ['--perf-basic-prof', join(HERE, 'raw-server.mjs'), '--database-url', o['database-url'], '--port', String(port), '--pool', '16'];
  if (name === 'svc-nolog') args.push('--enabled-log-types', 'startup,webhook-log,websocket-log');
  if (name === 'svc-traced' || name === 'base-traced') args.push('--otlp-endpoint', `http://127.0.0.1:${sinkPort}`);
  const child = spawn(process.execPath, args, { cwd: svcLike ? ROOT : HERE, env, stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(child);
  const base = `http://127.0.0.1:${port}`;
  await waitHttp(`${base}/healthz`, child);
  let path;
  let body;
  if (svcLike) {
    await loadBenchMetadata(base, name);
    path = '/v1/graphql';
    body = JSON.stringify({ query: loadQueries(s).hasura, variables: s.variables, operationName: s.id });
  } else {
    path = `/q/${s.id}`;
    body = JSON.stringify({ variables: s.variables });
  }
  const headers = { 'content-type': 'application/json', ...s.headers };
  const script = join(dir, `${name}.lua`);
  writeFileSync(script, wrkPostScript(body, headers));
  const check = await fetch(`${base}${path}`, { method: 'POST', headers, body });
  const text = await check.text();
  if (check.status !== 200 || !text.startsWith('{"data"')) throw new Error(`${name}: ${check.status} ${text.slice(0, 200)}`);
  return { name, pid: child.pid, url: `${base}${path}`, script };
}

/** wrk for `seconds`: the requests completed */
function load(t, seconds) {
  const out = execFileSync('wrk', ['-t2', `-c${o.connections}`, `-d${seconds}s`, '-s', t.script, t.url], { encoding: 'utf8' });
  return Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
}

/** one round of a target: perf on its process while wrk runs */
async function measure(t, round) {
  const file = join(dir, `${t.name}.${round}.data`);
  const secs = Number(o.seconds);
  const perf = spawn('perf', ['record', '-e', 'cpu-clock', '-F', String(HZ), '-g', '-p', String(t.pid), '-o', file, '--', 'sleep', String(secs + 1)], { stdio: 'ignore' });
  const exited = new Promise((r) => perf.once('exit', r));
  await new Promise((r) => setTimeout(r, 300)); // perf attached
  const requests = load(t, secs);
  await exited;
  return { file, requests };
}

/** the samples of a perf file: each a list of frames (leaf first) as { sym, dso } */
function samples(file, pid) {
  const out = execFileSync('perf', ['script', '-i', file, '-F', 'tid,ip,sym,dso'], { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] });
  const list = [];
  for (const block of out.split('\n\n')) {
    const frames = [];
    const lines = block.split('\n');
    // --main-thread: only the samples of the thread whose id is the process's (JavaScript's)
    if (o['main-thread'] && Number(/^\s*(\d+)/.exec(lines.find((l) => l.trim() !== '') ?? '')?.[1]) !== pid) continue;
    for (const line of lines) {
      const m = /^\s*[0-9a-f]+ (.*?)(?:\+0x[0-9a-f]+)? \((.*)\)\s*$/.exec(line);
      if (m) frames.push({ sym: m[1], dso: m[2] });
    }
    if (frames.length) list.push(frames);
  }
  return list;
}

const where = (dso) =>
  /\/tmp\/perf-\d+\.map$/.test(dso) || dso.startsWith('[JIT]') ? 'JIT' : dso.includes('kernel') ? 'kernel' : /\/node$/.test(dso) ? 'node' : /libc\.so/.test(dso) ? 'libc' : 'other';

function summarise(file, requests, pid) {
  const per = (count) => (count * US_PER_SAMPLE) / requests;
  const bySym = new Map();
  const byWhere = new Map();
  const stacks = new Map(stackPatterns.map((p) => [p, 0]));
  const leaves = new Map();
  const list = samples(file, pid);
  for (const frames of list) {
    if (o.leaves && frames.some((f) => f.sym.includes(o.leaves))) leaves.set(frames[0].sym, (leaves.get(frames[0].sym) ?? 0) + 1);
    if (o.callers && frames[0].sym.includes(o.callers)) {
      const js = frames.find((f) => f.sym.startsWith('JS:'))?.sym ?? '(no JavaScript frame)';
      leaves.set(js, (leaves.get(js) ?? 0) + 1);
    }
    const leaf = frames[0];
    const key = `${where(leaf.dso) === 'kernel' ? '[k] ' : ''}${leaf.sym}`;
    bySym.set(key, (bySym.get(key) ?? 0) + 1);
    const w = where(leaf.dso);
    byWhere.set(w, (byWhere.get(w) ?? 0) + 1);
    for (const p of stackPatterns) if (frames.some((f) => f.sym.includes(p))) stacks.set(p, stacks.get(p) + 1);
  }
  return {
    total: per(list.length),
    byWhere: Object.fromEntries([...byWhere].map(([k, v]) => [k, per(v)])),
    bySym: new Map([...bySym].map(([k, v]) => [k, per(v)])),
    stacks: Object.fromEntries([...stacks].map(([k, v]) => [k, per(v)])),
    leaves: new Map([...leaves].map(([k, v]) => [k, per(v)])),
  };
}

const f2 = (v) => v.toFixed(2).padStart(7);
try {
  const targets = [];
  for (const n of names) targets.push(await startTarget(n));
  for (const t of targets) {
    log(`${t.name} up (pid ${t.pid}); warming for 4 s`);
    load(t, 4);
  }
  const results = new Map(names.map((n) => [n, []]));
  for (let r = 1; r <= Number(o.rounds); r++) {
    for (const t of targets) {
      const { file, requests } = await measure(t, r);
      if (!requests) throw new Error(`${t.name}: no requests completed`);
      const sum = summarise(file, requests, t.pid);
      results.get(t.name).push(sum);
      rmSync(file, { force: true });
      log(
        `round ${r} ${t.name.padEnd(10)} ${requests} requests  ${sum.total.toFixed(1)} µs/req on-CPU  (${Object.entries(sum.byWhere)
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => `${k} ${v.toFixed(1)}`)
          .join(', ')})${stackPatterns.length ? `  stacks: ${Object.entries(sum.stacks).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}` : ''}`,
      );
    }
  }
  // per target, the symbols averaged over the rounds
  const avg = new Map();
  for (const [n, rs] of results) {
    const m = new Map();
    for (const r of rs) for (const [k, v] of r.bySym) m.set(k, (m.get(k) ?? 0) + v / rs.length);
    avg.set(n, m);
    process.stdout.write(`\n${n}: the ${o.top} symbols with the most CPU of their own (µs/request, mean of ${rs.length} rounds)\n`);
    for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, Number(o.top))) process.stdout.write(`${f2(v)}  ${k.slice(0, 130)}\n`);
  }
  if (o.leaves || o.callers) {
    for (const [n, rs] of results) {
      const m = new Map();
      for (const r of rs) for (const [k, v] of r.leaves) m.set(k, (m.get(k) ?? 0) + v / rs.length);
      process.stdout.write(
        o.leaves
          ? `\n${n}: under ${o.leaves}, the ${o.top} symbols with the most CPU of their own (µs/request, mean of ${rs.length} rounds)\n`
          : `\n${n}: the samples in ${o.callers}, by their nearest JavaScript function (µs/request, mean of ${rs.length} rounds)\n`,
      );
      for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, Number(o.top))) process.stdout.write(`${f2(v)}  ${k.slice(0, 130)}\n`);
    }
  }
  if (names.length >= 2) {
    const [a, b] = names;
    const A = avg.get(a);
    const B = avg.get(b);
    const keys = new Set([...A.keys(), ...B.keys()]);
    const rows = [...keys].map((k) => [k, A.get(k) ?? 0, B.get(k) ?? 0]).sort((x, y) => Math.abs(y[1] - y[2]) - Math.abs(x[1] - x[2]));
    process.stdout.write(`\n${a} against ${b}: µs/request (${a}, ${b}, difference), the largest differences first\n`);
    for (const [k, x, y] of rows.slice(0, Number(o.top))) process.stdout.write(`${f2(x)} ${f2(y)} ${f2(x - y)}  ${k.slice(0, 120)}\n`);
  }
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGINT');
  rmSync(dir, { recursive: true, force: true });
}
