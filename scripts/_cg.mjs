// instructions per request of a Svc build under callgrind (a_pk on svc_bench_obs): scratch
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, mkdtempSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
const [dist, mode, nStr] = process.argv.slice(2);
const N = Number(nStr ?? 2000);
const port = 30000 + Math.floor(Math.random() * 10000);
const sinkPort = port + 1;
const sink = spawn(process.execPath, ['/tmp/mb/sink.cjs', String(sinkPort)], { stdio: 'ignore' });
const dir = mkdtempSync(join(os.tmpdir(), 'cg-'));
const extra = mode === 'off' ? [] : ['--otlp-endpoint', `http://127.0.0.1:${sinkPort}`, ...(mode === 'on-nocomment' ? ['--tracing-sql-comment', 'false'] : [])];
const child = spawn('valgrind', ['--tool=callgrind', `--callgrind-out-file=${dir}/cg.%p`, process.execPath, join(dist, 'main.js'), 'serve', '--workers', '1', '--database-url', 'postgres://postgres@127.0.0.1:5432/svc_bench_obs', '--server-port', String(port), '--server-host', '127.0.0.1', '--connections', '4', '--enabled-log-types', 'startup', ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
let err = '';
child.stderr.on('data', (d) => (err += d));
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
const post = (path, body, headers = {}) => new Promise((res, rej) => {
  const q = http.request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'content-type': 'application/json', ...headers } }, (r) => { let b = ''; r.on('data', (d) => (b += d)); r.on('end', () => res([r.statusCode, b])); });
  q.on('error', rej); q.end(body);
});
for (let i = 0; ; i++) {
  try { const [s] = await new Promise((res, rej) => http.get({ host: '127.0.0.1', port, path: '/healthz' }, (r) => { r.resume(); res([r.statusCode]); }).on('error', rej)); if (s === 200) break; } catch {}
  if (i > 600) throw new Error('no start ' + err);
  await new Promise((r) => setTimeout(r, 500));
}
await post('/v1/query', JSON.stringify({ type: 'track_table', args: { table: 'articles' } }));
const body = JSON.stringify({ query: 'query a_pk($id: Int!) { articles_by_pk(id: $id) { id title body rating published created_at author_id } }', variables: { id: 4242 }, operationName: 'a_pk' });
const run = async (n) => { await Promise.all(Array.from({ length: 4 }, async () => { for (let i = 0; i < n / 4; i++) { const [s] = await post('/v1/graphql', body); if (s !== 200) throw new Error(String(s)); } })); };
await run(Number(process.env.WARM ?? 1000));
execFileSync('callgrind_control', ['-z', String(child.pid)], { stdio: 'ignore' });
await run(N);
const dumping = new Promise((r) => { const c = spawn('callgrind_control', ['-d', String(child.pid)], { stdio: 'ignore' }); c.on('exit', r); });
const poke = setInterval(() => post('/v1/graphql', '{"query":"{__typename}"}').catch(() => {}), 200);
await dumping;
clearInterval(poke);
child.kill('SIGKILL'); sink.kill();
// the dump after -z: the file with the highest part number
const files = readdirSync(dir).filter((f) => /\.\d+$/.test(f) && f.includes('.'));
let best = 0;
for (const f of readdirSync(dir)) {
  const t = readFileSync(join(dir, f), 'utf8');
  const m = /^summary:\s+(\d+)/m.exec(t) || /^totals:\s+(\d+)/m.exec(t);
  if (m && /part:\s*[1-9]/.test(t)) best = Number(m[1]);
}
console.log(`${mode} ${dist}: ${Math.round(best / N)} instructions/request (${N} requests)`);
