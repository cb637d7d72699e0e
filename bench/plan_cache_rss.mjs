#!/usr/bin/env node
// RSS of a `svc serve` process after 150 distinct ~42 KB queries (issue 11.8): the plan cache is
// bounded by --plan-cache-max-bytes. Usage: node bench/plan_cache_rss.mjs [maxBytes]
// Needs PostgreSQL at SVC_TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import pg from 'pg';

const BASE = process.env.SVC_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const db = `svc_bench_rss_${process.pid}`;
const admin = async (sql) => { const c = new pg.Client(BASE); await c.connect(); try { await c.query(sql); } finally { await c.end(); } };
await admin(`create database ${db}`);
const url = new URL(BASE); url.pathname = `/${db}`;
const args = ['--import', 'tsx', 'src/main.ts', 'serve', '--server-port', '0', '--server-host', '127.0.0.1', '--enabled-log-types', 'startup'];
if (process.argv[2]) args.push('--plan-cache-max-bytes', process.argv[2]);
const child = spawn(process.execPath, args, { env: { ...process.env, SVC_GRAPHQL_DATABASE_URL: url.toString() }, stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise((res) => { let buf = ''; child.stdout.on('data', (d) => { buf += d; const m = buf.match(/"port":(\d+)/); if (m) res(Number(m[1])); }); });
const base = `http://127.0.0.1:${port}`;
const post = (path, body) => fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json());
await post('/v1/query', { type: 'run_sql', args: { sql: 'create table docs (id int primary key, title text)' } });
await post('/v1/query', { type: 'track_table', args: { table: 'docs' } });
const rss = () => Number(readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]) / 1024;
const before = rss();
for (let i = 0; i < 150; i++) {
  // ~42 KB: many aliased root fields, distinct per i
  const fields = Array.from({ length: 700 }, (_, j) => `a${i}_${j}: docs(where: {id: {_eq: ${j}}}) { id title }`).join(' ');
  await post('/v1/graphql', { query: `{ ${fields} }` });
}
global.gc?.();
const after = rss();
console.log(`plan cache budget ${process.argv[2] ?? 'default (64 MiB)'}: RSS ${before.toFixed(0)} MB → ${after.toFixed(0)} MB after 150 distinct ~42 KB queries`);
child.kill('SIGTERM');
await new Promise((r) => child.on('close', r));
await admin(`drop database ${db}`);
