#!/usr/bin/env node
// What PostgreSQL spends on Svc's statement for each read scenario against the raw baseline's
// hand-written one (issue 32: "make the SQL of permission-filtered and aggregate reads as cheap as
// hand-written SQL"), without the servers in the way: both statements run as named prepared
// statements over one connection, --executions at a time pipelined, rounds alternating, and the
// backend's own CPU time (/proc/<pid>/stat; PostgreSQL on this machine) is divided by the
// executions. Also prints each statement's EXPLAIN (ANALYZE, BUFFERS) summary line.
//
//   node bench/sqlcost.mjs [--scenarios a_pk,b_list,c_nested,d_count,e_perm,f_large]
//                          [--executions 20000] [--rounds 3] [--database-url URL]
//
// Svc's statement and its parameters are the ones Svc generates (its query-log of one request per
// scenario, with the scenario's headers: the role's permission filter and session variables are
// in it), from a production build (dist/main.js, npm run build first). Needs the bench database
// (bench/load.sh svc_bench). Not part of `npm test`.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, loadBenchMetadata, median, waitHttp } from './lib.mjs';
import { SCENARIO_IDS, byId, loadQueries } from './scenarios.mjs';

const HERE = new URL('.', import.meta.url).pathname.replace(/\/$/, '');
const ROOT = join(HERE, '..');
const pg = createRequire(join(HERE, 'package.json'))('pg');
const { values: o } = parseArgs({
  options: {
    scenarios: { type: 'string', default: 'a_pk,b_list,c_nested,d_count,e_perm,f_large' },
    executions: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/svc_bench' },
  },
});
const usage = (msg) => {
  process.stderr.write(`sqlcost: ${msg}\n`);
  process.exit(2);
};
const ids = o.scenarios.split(',').map((x) => x.trim()).filter(Boolean);
for (const id of ids) if (!byId[id] || byId[id].mutation) usage(`unknown read scenario ${id}; known: ${SCENARIO_IDS.filter((x) => !byId[x].mutation).join(', ')}`);
const N = Number(o.executions);
const ROUNDS = Number(o.rounds);
if (!(N >= 1) || !(ROUNDS >= 1)) usage('--executions and --rounds must be numbers ≥ 1');
const log = (m) => process.stdout.write(`[sqlcost] ${m}\n`);

// 1. Svc's statements: one request per scenario to a Svc that logs its generated SQL
const dir = mkdtempSync(join(os.tmpdir(), 'svc-sqlcost-'));
const logFile = join(dir, 'svc.log');
const port = await freePort();
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_GRAPHQL_')));
const fd = openSync(logFile, 'w');
const svc = spawn(
  process.execPath,
  [join(ROOT, 'dist', 'main.js'), 'serve', '--workers', '1', '--database-url', o['database-url'], '--server-port', String(port), '--server-host', '127.0.0.1', '--enabled-log-types', 'startup,query-log'],
  { cwd: ROOT, env, stdio: ['ignore', fd, fd] },
);
closeSync(fd);
process.on('exit', () => {
  if (svc.exitCode === null) svc.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});
const base = `http://127.0.0.1:${port}`;
await waitHttp(`${base}/healthz`, svc);
await loadBenchMetadata(base);
for (const id of ids) {
  const s = byId[id];
  const r = await fetch(`${base}/v1/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...s.headers },
    body: JSON.stringify({ query: loadQueries(s).hasura, variables: s.variables, operationName: s.id }),
  });
  const text = await r.text();
  if (!text.startsWith('{"data"')) usage(`${id}: Svc answered ${text.slice(0, 200)}`);
}
/** the query-log lines are written in chunks: wait until every scenario's is there */
const generated = new Map();
for (let i = 0; i < 100 && generated.size < ids.length; i++) {
  await new Promise((r) => setTimeout(r, 100));
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes('"type":"query-log"')) continue;
    const d = JSON.parse(line).detail;
    const id = d.query?.operationName;
    const fields = Object.values(d.generated_sql ?? {});
    if (ids.includes(id) && fields.length === 1) generated.set(id, fields[0]);
  }
}
svc.kill('SIGTERM');
for (const id of ids) if (!generated.has(id)) usage(`${id}: no query-log line with one statement`);

// 2. both statements, pipelined on one connection, rounds alternating
const c = new pg.Client({ connectionString: o['database-url'] });
await c.connect();
const backend = (await c.query('select pg_backend_pid() as pid')).rows[0].pid;
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
const cpuMs = () => {
  const f = readFileSync(`/proc/${backend}/stat`, 'utf8');
  const p = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return ((Number(p[11]) + Number(p[12])) * 1000) / CLK_TCK;
};
/** µs of backend CPU and of wall-clock time per execution, N executions pipelined */
async function run(name, text, values) {
  const c0 = cpuMs();
  const t0 = performance.now();
  const all = [];
  for (let i = 0; i < N; i++) all.push(c.query({ name, text, values }));
  await Promise.all(all);
  return { cpu: ((cpuMs() - c0) * 1000) / N, wall: ((performance.now() - t0) * 1000) / N };
}
const summary = async (text, values) => {
  const r = await c.query({ text: `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, values });
  const p = r.rows[0]['QUERY PLAN'][0];
  return `planning ${p['Planning Time'].toFixed(3)} ms, execution ${p['Execution Time'].toFixed(3)} ms, shared hit ${p.Plan['Shared Hit Blocks']} read ${p.Plan['Shared Read Blocks']}`;
};
const rows = [];
for (const id of ids) {
  const s = byId[id];
  const g = generated.get(id);
  const raw = { text: loadQueries(s).sql, values: s.params(s.pgVariables ?? s.variables, s.headers ?? {}) };
  const svcStmt = { text: g.query, values: g.prepared_arguments ?? [] };
  // warm both (prepare, caches, the plan choice after five executions)
  for (let i = 0; i < 10; i++) {
    await c.query({ name: `svc_${id}`, ...svcStmt });
    await c.query({ name: `raw_${id}`, ...raw });
  }
  const got = { svc: [], raw: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const who of r % 2 ? ['raw', 'svc'] : ['svc', 'raw']) {
      const st = who === 'svc' ? svcStmt : raw;
      got[who].push(await run(`${who}_${id}`, st.text, st.values));
    }
  }
  const sv = median(got.svc.map((x) => x.cpu));
  const rw = median(got.raw.map((x) => x.cpu));
  rows.push([id, sv, rw]);
  log(`${id.padEnd(9)} Svc ${sv.toFixed(1)} µs  raw ${rw.toFixed(1)} µs of backend CPU per execution  (Svc / raw ${(sv / rw).toFixed(2)}; rounds: Svc ${got.svc.map((x) => x.cpu.toFixed(1)).join(', ')}; raw ${got.raw.map((x) => x.cpu.toFixed(1)).join(', ')})`);
  log(`          Svc: ${await summary(svcStmt.text, svcStmt.values)}`);
  log(`          raw: ${await summary(raw.text, raw.values)}`);
}
await c.end();
process.stdout.write(
  `\n| scenario | Svc µs | raw µs | Svc / raw |\n|---|---:|---:|---:|\n${rows.map(([id, a, b]) => `| ${id} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${(a / b).toFixed(2)} |`).join('\n')}\n` +
    `\nbackend CPU per execution (median of ${ROUNDS} rounds of ${N} pipelined executions over one connection; /proc ticks of ${1000 / CLK_TCK} ms)\n`,
);
