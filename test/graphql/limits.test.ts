/**
 * Document limits (issue 11.7): a fragment bomb (each fragment spreads the previous one twice, 40
 * levels: 2^40 fields expanded) is rejected in well under 50 ms without expanding it, and the server
 * keeps answering; depth, field count, aliases, tokens and size are bounded by flags; a fragment
 * cycle is still rejected (by field collection, with upstream's message).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { checkDocumentLimits, parseWithinLimits, DEFAULT_DOCUMENT_LIMITS } from '../../src/execute/limits.js';
import { postGraphql, query, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;

before(async () => {
  s = await startTestServer({ maxQueryDepth: 20, maxQueryAliases: 50 });
  await query(s.url, {
    type: 'run_sql',
    args: { sql: 'create table docs (id int primary key, title text, parent_id int references docs(id)); insert into docs values (1, $$a$$, null)' },
  });
  await query(s.url, { type: 'track_table', args: { table: 'docs' } });
  await query(s.url, { type: 'create_object_relationship', args: { table: 'docs', name: 'parent', using: { foreign_key_constraint_on: 'parent_id' } } });
});

after(async () => {
  await s?.close();
});

function fragmentBomb(levels: number): string {
  const parts = ['fragment F0 on docs { id title }'];
  for (let i = 1; i <= levels; i++) parts.push(`fragment F${i} on docs { ...F${i - 1} ...F${i - 1} }`);
  return `query { docs { ...F${levels} } }\n${parts.join('\n')}`;
}

test('a 40-level fragment bomb is rejected at once; /healthz answers meanwhile', async () => {
  const q = fragmentBomb(40);
  const t0 = process.hrtime.bigint();
  const [r, h] = await Promise.all([postGraphql(s.url, { query: q }), fetch(`${s.url}/healthz`)]);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  assert.equal(h.status, 200);
  assert.equal(r.status, 200);
  assert.equal(r.body.errors[0].extensions.code, 'validation-failed');
  assert.match(r.body.errors[0].message, /more than 10000 fields/);
  // the check alone, in process
  const c0 = process.hrtime.bigint();
  assert.throws(() => parseWithinLimits(q));
  const checkMs = Number(process.hrtime.bigint() - c0) / 1e6;
  assert.ok(checkMs < 50, `check took ${checkMs} ms`);
  process.stdout.write(`# fragment bomb (40 levels, ${q.length} bytes) rejected: check ${checkMs.toFixed(2)} ms, request ${ms.toFixed(1)} ms\n`);
});

test('a fragment bomb within the limit still works', async () => {
  const r = await postGraphql(s.url, { query: fragmentBomb(5) });
  assert.deepEqual(r.body, { data: { docs: [{ id: 1, title: 'a' }] } });
});

test('depth, aliases, tokens, size and cycles', async () => {
  let deep = 'id';
  for (let i = 0; i < 25; i++) deep = `parent { ${deep} }`;
  const r1 = await postGraphql(s.url, { query: `{ docs { ${deep} } }` });
  assert.match(r1.body.errors[0].message, /nested deeper than 20 levels/);
  const aliases = Array.from({ length: 60 }, (_, i) => `a${i}: docs { id }`).join(' ');
  const r2 = await postGraphql(s.url, { query: `{ ${aliases} }` });
  assert.match(r2.body.errors[0].message, /more than 50 aliases/);
  const cyc = await postGraphql(s.url, { query: 'query { docs { ...A } } fragment A on docs { ...B } fragment B on docs { ...A }' });
  assert.equal(cyc.body.errors[0].extensions.code, 'validation-failed');
  assert.throws(() => parseWithinLimits(`{ ${'a '.repeat(30_000)} }`), /more than 20000 tokens/);
  assert.throws(() => parseWithinLimits(`{ a } #${'x'.repeat(2 * 1024 * 1024)}`), /larger than 1048576 bytes/);
  // a deeply nested list literal is bounded by the token limit, and selection nesting by depth
  assert.throws(() => checkDocumentLimits(parseWithinLimits(`{ ${'a { '.repeat(150)}b${' }'.repeat(150)} }`, { ...DEFAULT_DOCUMENT_LIMITS })), /nested deeper/);
});
