#!/usr/bin/env node
// Scaling benchmark (issue 33): Svc's throughput with --workers 1 vs --workers 2, and reads with one
// streaming replica vs none, on the bench dataset (svc_bench, bench/load.sh). Not part of `npm test`.
//
//   node --import tsx bench/scaling.mjs [--scenarios a_pk,b_list] [--duration 10] [--warmup 2]
//                                        [--connections 32] [--pool 16] [--configs w1,w2,r0,r1]
//                                        [--out docs/scaling.md.results]
//
// Configurations (each a fresh `svc serve` child on a free port, then wrk on the same machine):
//   w1  --workers 1                 w2  --workers 2            (--connections = --pool in total)
//   r0  --workers 1, no replica     r1  --workers 1 --read-replica-urls <a pg_basebackup replica>
// The replica is a second PostgreSQL 15 cluster on a free port made by test/helpers/replica.ts
// (needs `host replication all 127.0.0.1/32 trust` in pg_hba.conf; .ci/run adds it) and removed at
// the end. a_pk is the scenario where Svc's CPU dominates (a one-row lookup: PostgreSQL's work is
// small next to HTTP, parsing the request and the plan-cache lookup).
//
// Caveat printed with the results: PostgreSQL, its replica, wrk and every Svc worker share the same
// cores; on 2 cores, two workers compete with PostgreSQL and wrk for them, and a replica on the same
// machine adds no CPU — it only shows that routing works and what it costs.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { adminSql, freePort, waitHttp } from './lib.mjs';
import { SCENARIOS } from './scenarios.mjs';

const HERE = new URL('.', import.meta.url).pathname.replace(/\/$/, '');
const ROOT = join(HERE, '..');
const { values: opt } = parseArgs({
  options: {
    scenarios: { type: 'string', default: 'a_pk,b_list' },
    configs: { type: 'string', default: 'w1,w2,r0,r1' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    pool: { type: 'string', default: '16' },
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/svc_bench' },
    out: { type: 'string', default: join(HERE, 'SCALING.md') },
  },
});
const DB_URL = opt['database-url'];
const LOG_DIR = mkdtempSync(join(os.tmpdir(), 'svc-scaling-'));
const log = (m) => process.stdout.write(`[scaling] ${m}\n`);
const children = new Set();
let replica;

async function cleanup() {
  for (const c of children) c.kill('SIGTERM');
  if (replica) await replica.destroy().catch(() => undefined);
}
process.on('SIGINT', () => void cleanup().then(() => process.exit(130)));

// ------------------------------------------------------------------ dataset
async function ensureDataset() {
  const name = new URL(DB_URL).pathname.slice(1);
  const r = await adminSql(DB_URL, `select 1 from pg_database where datname = '${name.replace(/'/g, "''")}'`);
  if (r.rowCount === 0) {
    log(`loading the dataset into ${name} (bench/load.sh)...`);
    const s = spawnSync('bash', [join(HERE, 'load.sh'), name], { stdio: 'inherit' });
    if (s.status !== 0) throw new Error('bench/load.sh failed');
  }
}

// ------------------------------------------------------------------ svc
async function startSvc(args) {
  const port = await freePort();
  const out = join(LOG_DIR, `svc-${port}.log`);
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/main.ts'), 'serve', '--database-url', DB_URL, '--server-port', String(port), '--server-host', '127.0.0.1', '--connections', opt.pool, '--enabled-log-types', 'startup', ...args], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.stdout.on('data', (d) => appendFileSync(out, d));
  child.stderr.on('data', (d) => appendFileSync(out, d));
  const base = `http://127.0.0.1:${port}`;
  await waitHttp(`${base}/healthz`, child);
  const metadata = JSON.parse(readFileSync(join(HERE, 'svc-metadata.json'), 'utf8'));
  const r = await fetch(`${base}/v1/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'replace_metadata', args: metadata }) });
  if (r.status !== 200) throw new Error(`replace_metadata: ${r.status} ${await r.text()}`);
  // every worker has rebuilt its schema (metadata sync) before load: wait for the version everywhere
  await new Promise((res) => setTimeout(res, 1500));
  return {
    base,
    stop: () =>
      new Promise((res) => {
        child.once('exit', () => res());
        child.kill('SIGTERM');
        children.delete(child);
      }),
  };
}

// ------------------------------------------------------------------ wrk
const luaString = (text) => {
  let eq = '';
  while (text.includes(`]${eq}]`)) eq += '=';
  return `[${eq}[${text}]${eq}]`;
};

function runWrk(base, scenario, seconds) {
  const body = JSON.stringify({ query: readFileSync(join(HERE, 'queries', `${scenario.id}.hasura.graphql`), 'utf8'), variables: scenario.variables });
  const headers = { 'content-type': 'application/json', ...scenario.headers };
  const script = join(LOG_DIR, `${scenario.id}.lua`);
  writeFileSync(
    script,
    `wrk.method = "POST"
wrk.body = ${luaString(body)}
${Object.entries(headers).map(([k, v]) => `wrk.headers[ ${luaString(k)} ] = ${luaString(String(v))}`).join('\n')}
function done(summary, latency, requests)
  io.write(string.format('WRK {"requests":%.0f,"duration_us":%.0f,"errors":%.0f,"p50_us":%.0f,"p99_us":%.0f}\\n',
    summary.requests, summary.duration, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`,
  );
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', ['-t2', `-c${opt.connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', script, `${base}/v1/graphql`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => {
      const m = /^WRK (\{.*\})$/m.exec(out);
      if (code !== 0 || !m) reject(new Error(`wrk exited ${code}: ${out.slice(-300)}`));
      else resolve(JSON.parse(m[1]));
    });
  });
}

// ------------------------------------------------------------------ main
const CONFIGS = {
  w1: { label: '--workers 1', args: () => ['--workers', '1'] },
  w2: { label: '--workers 2', args: () => ['--workers', '2'] },
  r0: { label: '--workers 1, no replica', args: () => ['--workers', '1'] },
  r1: { label: '--workers 1, 1 replica', args: () => ['--workers', '1', '--read-replica-urls', replica.url(new URL(DB_URL).pathname.slice(1))], replica: true },
};

async function main() {
  await ensureDataset();
  const scenarios = opt.scenarios.split(',').map((id) => SCENARIOS.find((s) => s.id === id) ?? (() => { throw new Error(`unknown scenario ${id}`); })());
  const configs = opt.configs.split(',').map((c) => [c, CONFIGS[c] ?? (() => { throw new Error(`unknown config ${c}`); })()]);
  if (configs.some(([, c]) => c.replica)) {
    log('creating a streaming replica (pg_basebackup -R)...');
    const { createReplica } = await import('../test/helpers/replica.ts');
    replica = await createReplica();
  }
  const rows = [];
  for (const [id, c] of configs) {
    if (c.replica) await replica.caughtUp(60_000);
    const svc = await startSvc(c.args());
    try {
      for (const s of scenarios) {
        await runWrk(svc.base, s, Number(opt.warmup));
        const r = await runWrk(svc.base, s, Number(opt.duration));
        const rps = r.requests / (r.duration_us / 1e6);
        rows.push({ config: id, label: c.label, scenario: s.id, rps, p50: r.p50_us / 1000, p99: r.p99_us / 1000, errors: r.errors });
        log(`${c.label.padEnd(26)} ${s.id.padEnd(8)} ${rps.toFixed(0).padStart(7)} req/s  p50 ${(r.p50_us / 1000).toFixed(2)} ms  p99 ${(r.p99_us / 1000).toFixed(2)} ms  errors ${r.errors}`);
      }
    } finally {
      await svc.stop();
    }
  }
  const md = [
    `## Scaling run ${new Date().toISOString()}`,
    '',
    `- machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB; PostgreSQL, the replica, wrk and Svc share these cores`,
    `- wrk: 2 threads, ${opt.connections} connections, ${opt.warmup} s warm-up + ${opt.duration} s measured; --connections ${opt.pool} in total`,
    '',
    '| configuration | scenario | req/s | p50 ms | p99 ms | errors |',
    '| --- | --- | ---: | ---: | ---: | ---: |',
    ...rows.map((r) => `| ${r.label} | ${r.scenario} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.errors} |`),
    '',
  ].join('\n');
  if (opt.out !== '-') appendFileSync(opt.out, `${md}\n`);
  process.stdout.write(`\n${md}\n`);
}

main()
  .catch((e) => {
    process.stderr.write(`scaling: ${e.stack ?? e}\n`);
    process.exitCode = 1;
  })
  .finally(() => cleanup());
