// Profiles Svc's cached-plan path under load: starts `node --cpu-prof dist/main.js serve` on the bench
// database, loads one scenario with wrk (2 threads), stops the server and prints where its CPU went:
// the top functions by self time and the totals per source folder (src/server, src/execute, …,
// node:internals, fastify, pg, …). Not part of `npm test`; run `npm run build` first.
//
// usage: node bench/profile.mjs [--scenario a_pk] [--seconds 10] [--connections 32] [--top 40] [--otlp]
// --otlp: tracing on at 100 % sampling, exporting to a local sink that accepts and drops the payloads
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, loadBenchMetadata, waitHttp, wrkPostScript } from './lib.mjs';
import { byId, HERE, loadQueries } from './scenarios.mjs';

const { values } = parseArgs({
  options: {
    scenario: { type: 'string', default: 'a_pk' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    top: { type: 'string', default: '40' },
    otlp: { type: 'boolean', default: false },
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/svc_bench' },
  },
});
const ROOT = join(HERE, '..');
const s = byId[values.scenario];
if (!s) throw new Error(`unknown scenario ${values.scenario}`);
const dir = mkdtempSync(join(os.tmpdir(), 'svc-profile-'));
const port = await freePort();
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_GRAPHQL_') || k === 'SVC_GRAPHQL_TRACING_SQL_COMMENT'));
env.NODE_ENV = 'production';
const sinkPort = values.otlp ? await freePort() : 0;
const sink = values.otlp
  ? spawn(process.execPath, ['-e', `require('node:http').createServer((q, s) => { q.resume(); q.on('end', () => { s.writeHead(200, {'content-type': 'application/json'}); s.end('{}'); }); }).listen(${sinkPort}, '127.0.0.1')`], { stdio: 'ignore' })
  : undefined;
const child = spawn(
  process.execPath,
  ['--cpu-prof', '--cpu-prof-dir', dir, join(ROOT, 'dist', 'main.js'), 'serve', '--workers', '1', '--database-url', values['database-url'],
    '--server-port', String(port), '--server-host', '127.0.0.1', '--connections', '16', ...(values.otlp ? ['--otlp-endpoint', `http://127.0.0.1:${sinkPort}`] : [])],
  { env, stdio: ['ignore', 'ignore', 'inherit'] },
);
const base = `http://127.0.0.1:${port}`;
try {
  await waitHttp(`${base}/healthz`, child);
  await loadBenchMetadata(base);
  const body = JSON.stringify({ query: loadQueries(s).hasura, variables: s.variables, operationName: s.id });
  const headers = { 'content-type': 'application/json', ...s.headers };
  writeFileSync(join(dir, 'load.lua'), wrkPostScript(body, headers));
  const out = await new Promise((resolve, reject) => {
    const w = spawn('wrk', ['-t2', `-c${values.connections}`, `-d${values.seconds}s`, '-s', join(dir, 'load.lua'), `${base}/v1/graphql`]);
    let o = '';
    w.stdout.on('data', (d) => (o += d));
    w.on('error', reject);
    w.on('close', () => resolve(o));
  });
  process.stdout.write(out.split('\n').filter((l) => /Requests\/sec|Latency/.test(l)).join('\n') + '\n');
} finally {
  child.kill('SIGINT');
  await new Promise((r) => child.once('exit', r));
  sink?.kill('SIGTERM');
}
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error('no profile written');
const prof = JSON.parse(readFileSync(join(dir, file), 'utf8'));
const self = new Map();
const dt = prof.timeDeltas;
const byId2 = new Map(prof.nodes.map((n) => [n.id, n]));
const ticks = new Map();
for (let i = 0; i < prof.samples.length; i++) ticks.set(prof.samples[i], (ticks.get(prof.samples[i]) ?? 0) + (dt[i] ?? 0));
let total = 0;
const groups = new Map();
const group = (url) => {
  if (!url) return '(native/vm)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const d = /\/(?:src|dist)\/([^/]+)\//.exec(url);
  if (d) return `src/${d[1]}`;
  return url.replace(/^.*\//, '');
};
for (const [id, us] of ticks) {
  const n = byId2.get(id);
  const cf = n.callFrame;
  if (cf.functionName === '(idle)' || cf.functionName === '(program)' && false) continue;
  total += us;
  const key = `${cf.functionName || '(anonymous)'} ${cf.url ? cf.url.replace(/^.*\/(node_modules|src|dist)\//, '$1/') : ''}:${cf.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + us);
  const g = group(cf.url);
  groups.set(g, (groups.get(g) ?? 0) + us);
}
const pct = (us) => `${((100 * us) / total).toFixed(1).padStart(5)} %`;
process.stdout.write(`\nprofile ${join(dir, file)}: ${(total / 1e6).toFixed(2)} s of samples (idle left out)\n\nby group:\n`);
for (const [g, us] of [...groups].sort((a, b) => b[1] - a[1]).slice(0, 25)) process.stdout.write(`${pct(us)}  ${g}\n`);
process.stdout.write('\ntop functions by self time:\n');
for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) process.stdout.write(`${pct(us)}  ${k}\n`);
