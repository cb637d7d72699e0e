#!/usr/bin/env node
// Instructions per request of each server's main thread, counted by valgrind (callgrind): a
// figure that does not move with the machine's load. wrk's requests per second on a shared 2-core
// VM moved ±20-30 % from minute to minute (bench/RESULTS.md, README "Performance"), more than the
// differences that issues 32 and 35 are about; an instruction count repeats within ~1-2 %.
//
//   node bench/instructions.mjs [--scenario a_pk] [--targets svc,raw,svc-traced] [--rounds 3]
//                               [--requests 1000] [--warmup 6000] [--base-dist DIR] [--sync-compile]
//                               [--perf-map] [--concurrency 1]
//
// Targets (each under `valgrind --tool=callgrind --separate-threads=yes`, about 50× slower):
//   svc         dist/main.js serve (npm run build first), tracing off
//   svc-traced  the same with OTLP export to a local receiver (100 % sampling, the defaults)
//   raw         bench/raw-server.mjs (node:http + pg, the hand-written statement)
//   base        --base-dist: dist/main.js of another build (e.g. a git worktree), tracing off
//   base-traced the same build with tracing on, as svc-traced
// Each target is warmed with --warmup requests, then every round zeroes the counters, sends
// --requests requests (one at a time, as the warm-up: no batching of reads that would depend on
// timing) and dumps the counters. Printed: instructions per request of the main thread (thread 1:
// JavaScript, the event loop, the kernel interface; the kernel itself is not counted) and of the
// other threads (V8's compiler and GC helpers, libuv's pool), per round, with the median and the
// lowest. A round whose other threads are busy (V8 still compiling or deoptimising) counts more on
// the main thread too: the lowest round is the settled state. Two processes of the same build can
// also settle differently (which code V8 optimised and how: seen ±10 % on a_pk): compare several.
// valgrind runs one thread at a time and starves V8's concurrent compiler: a hot function can run
// in baseline code, or in code optimised from early feedback, long after a native run would have
// settled (seen: the OTLP encoder's anyValue calling the generic LoadIC ~100 times a request;
// node's process.nextTick defining its tick object through the runtime, 21 times and ~27k
// instructions a request, in some processes and not others). --sync-compile
// (--no-concurrent-recompilation) compiles on the main thread when a function turns hot, as
// promptly as a native run and the same in every process, but the compiler's work is then
// counted on the main thread: with it, rounds need ~15,000+ requests of warm-up and more rounds
// before they settle (after connection churn V8 deoptimises the socket and stream code and
// compiles it again). --perf-map: node writes /tmp/perf-<pid>.map (--perf-basic-prof) and the
// last round's dumps are named at the end, for bench/cgprofile.mjs (self costs by function, the
// JIT code named by JavaScript function; callers; two dumps compared).
// --concurrency N: N requests in flight at a time (warm-up and rounds), as under wrk: what a server
// does per request when requests overlap (batched reads and writes, queues) rather than one by one.
// Needs valgrind (Debian package) and the bench database (bench/load.sh svc_bench).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, loadBenchMetadata } from './lib.mjs';
import { byId, HERE, loadQueries } from './scenarios.mjs';

const ROOT = join(HERE, '..');
const { values: o } = parseArgs({
  options: {
    scenario: { type: 'string', default: 'a_pk' },
    targets: { type: 'string', default: 'svc,raw' },
    rounds: { type: 'string', default: '5' },
    requests: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '6000' },
    concurrency: { type: 'string', default: '1' },
    'base-dist': { type: 'string' },
    'sync-compile': { type: 'boolean', default: false },
    'perf-map': { type: 'boolean', default: false },
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/svc_bench' },
  },
});
const s = byId[o.scenario];
if (!s) throw new Error(`unknown scenario ${o.scenario}`);
if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('valgrind is not installed (apt-get install valgrind)');
const dir = mkdtempSync(join(os.tmpdir(), 'svc-instructions-'));
const log = (m) => process.stderr.write(`[instructions] ${m}\n`);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** one request, answered 200 with a body: resolves; anything else rejects */
function post(agent, port, path, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        if (res.statusCode !== 200 || !text.startsWith('{"data"')) reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`));
        else resolve();
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}
async function load(t, n, concurrency) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      await post(agent, t.port, t.path, t.headers, t.body);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  agent.destroy();
}

const sinkPort = await freePort();
const sink = http
  .createServer((q, r) => {
    q.resume();
    q.on('end', () => r.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  })
  .listen(sinkPort, '127.0.0.1');

const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_GRAPHQL_') && !k.startsWith('OTEL_')));
env.NODE_ENV = 'production';
const gql = { path: '/v1/graphql', headers: { 'content-type': 'application/json', ...s.headers }, body: JSON.stringify({ query: loadQueries(s).hasura, variables: s.variables, operationName: s.id }) };
const svcArgs = (main, port) => [main, 'serve', '--workers', '1', '--database-url', o['database-url'], '--server-port', String(port), '--server-host', '127.0.0.1', '--connections', '4'];
const defs = {
  svc: (port) => ({ args: svcArgs(join(ROOT, 'dist', 'main.js'), port), ...gql, metadata: true }),
  'svc-traced': (port) => ({ args: [...svcArgs(join(ROOT, 'dist', 'main.js'), port), '--otlp-endpoint', `http://127.0.0.1:${sinkPort}`], ...gql, metadata: true }),
  base: (port) => {
    if (!o['base-dist']) throw new Error('--base-dist DIR is needed for the base target');
    return { args: svcArgs(join(o['base-dist'], 'main.js'), port), ...gql, metadata: true };
  },
  'base-traced': (port) => {
    if (!o['base-dist']) throw new Error('--base-dist DIR is needed for the base-traced target');
    return { args: [...svcArgs(join(o['base-dist'], 'main.js'), port), '--otlp-endpoint', `http://127.0.0.1:${sinkPort}`], ...gql, metadata: true };
  },
  raw: (port) => ({
    args: [join(HERE, 'raw-server.mjs'), '--database-url', o['database-url'], '--port', String(port), '--pool', '4'],
    path: `/q/${s.id}`,
    headers: { 'content-type': 'application/json', ...s.headers },
    body: JSON.stringify({ variables: s.variables }),
  }),
};

const targets = [];
try {
  for (const name of o.targets.split(',')) {
    if (!defs[name]) throw new Error(`unknown target ${name}`);
    const port = await freePort();
    const t = { name, port, ...defs[name](port), rounds: [] };
    t.out = join(dir, `${name}.cg`);
    const v8 = [...(o['sync-compile'] ? ['--no-concurrent-recompilation'] : []), ...(o['perf-map'] ? ['--perf-basic-prof'] : [])];
    t.child = spawn('valgrind', ['--tool=callgrind', '--separate-threads=yes', '--dump-instr=no', `--callgrind-out-file=${t.out}.%p`, process.execPath, ...v8, ...t.args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    t.child.stderr.resume();
    targets.push(t);
  }
  for (const t of targets) {
    for (let i = 0; ; i++) {
      if (t.child.exitCode !== null) throw new Error(`${t.name} exited`);
      const up = await fetch(`http://127.0.0.1:${t.port}${t.metadata ? '/healthz' : `/q/${s.id}`}`, { method: t.metadata ? 'GET' : 'POST', body: t.metadata ? undefined : t.body, signal: AbortSignal.timeout(5000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (up) break;
      if (i > 300) throw new Error(`${t.name} did not start`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    if (t.metadata) await loadBenchMetadata(`http://127.0.0.1:${t.port}`, t.name);
    log(`${t.name} up; warming with ${o.warmup} requests`);
  }
  await Promise.all(targets.map((t) => load(t, Number(o.warmup), Number(o.concurrency))));
  const n = Number(o.requests);
  for (let round = 1; round <= Number(o.rounds); round++) {
    for (const t of targets) {
      const pid = t.child.pid;
      spawnSync('callgrind_control', ['-z', String(pid)]);
      await load(t, n, Number(o.concurrency));
      const before = new Set(readdirSync(dir));
      spawnSync('callgrind_control', ['-d', String(pid)]);
      // the dump's files: <out>.<pid>.<dump>-<thread>
      let files = [];
      for (let i = 0; i < 100 && !files.length; i++) {
        files = readdirSync(dir).filter((f) => f.startsWith(`${t.name}.cg.`) && /-\d+$/.test(f) && !before.has(f));
        if (!files.length) await new Promise((r) => setTimeout(r, 100));
      }
      await new Promise((r) => setTimeout(r, 500)); // every thread's file written
      files = readdirSync(dir).filter((f) => f.startsWith(`${t.name}.cg.`) && /-\d+$/.test(f) && !before.has(f));
      let main = 0;
      let others = 0;
      for (const f of files) {
        const m = /^summary:\s+(\d+)/m.exec(readFileSync(join(dir, f), 'utf8'));
        const ir = m ? Number(m[1]) : 0;
        if (f.endsWith('-01')) main += ir;
        else others += ir;
      }
      t.rounds.push({ main: main / n, others: others / n });
      t.lastDump = files.find((f) => f.endsWith('-01'));
      log(`round ${round} ${t.name.padEnd(11)} main thread ${Math.round(main / n).toLocaleString('en')} instructions/request, other threads ${Math.round(others / n).toLocaleString('en')}`);
    }
  }
  const ref = targets[0];
  const refMain = median(ref.rounds.map((r) => r.main));
  const low = (t) => Math.min(...t.rounds.map((r) => r.main));
  const refLow = low(ref);
  process.stdout.write(`\n${s.id}: main-thread instructions per request (${o.rounds} rounds of ${n} requests, ${Number(o.concurrency) > 1 ? `${o.concurrency} at a time` : "one at a time"}, after ${o.warmup})\n`);
  for (const t of targets) {
    const m = median(t.rounds.map((r) => r.main));
    const x = median(t.rounds.map((r) => r.others));
    process.stdout.write(
      `  ${t.name.padEnd(11)} median ${Math.round(m).toLocaleString('en').padStart(9)} (${(m / refMain).toFixed(3)}× ${ref.name})  lowest ${Math.round(low(t)).toLocaleString('en').padStart(9)} (${(low(t) / refLow).toFixed(3)}×)  other threads ${Math.round(x).toLocaleString('en').padStart(9)}  rounds: ${t.rounds.map((r) => Math.round(r.main / 1000) + 'k').join(' ')}\n`,
    );
  }
  if (o['perf-map'])
    for (const t of targets)
      process.stdout.write(`  ${t.name}: node bench/cgprofile.mjs self ${join(dir, t.lastDump ?? '?')} --map /tmp/perf-${t.child.pid}.map --per ${n}\n`);
} finally {
  for (const t of targets) t.child?.kill('SIGKILL');
  spawnSync('pkill', ['-KILL', '-f', dir]);
  if (!o['perf-map']) rmSync(dir, { recursive: true, force: true });
  sink.close();
}
