/**
 * A NUL byte in any value never reaches the PostgreSQL protocol (issue 11.12): /v1/query `where`
 * inline values, inserts and run_sql, GraphQL inline literals and variables all answer a 400
 * `data-exception` (GraphQL: an error with that code), and the pool keeps working.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postGraphql, postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const NUL = 'a\u0000b';

before(async () => {
  // one connection: a broken one would break the next request
  s = await startTestServer({ pgConnections: 1 });
  await query(s.url, { type: 'run_sql', args: { sql: 'create table note (id serial primary key, title text)' } });
  await query(s.url, { type: 'track_table', args: { table: 'note' } });
});

after(async () => {
  await s?.close();
});

async function stillWorks(): Promise<void> {
  const r = await postGraphql(s.url, { query: '{ note_aggregate { aggregate { count } } }' });
  assert.equal(r.status, 200);
  assert.equal(typeof r.body.data.note_aggregate.aggregate.count, 'number');
}

for (const [name, body] of [
  ['v1 select where $eq inline', { type: 'select', args: { table: 'note', columns: ['id'], where: { title: { $eq: NUL } } } }],
  ['v1 count where shorthand', { type: 'count', args: { table: 'note', where: { title: NUL } } }],
  ['v1 insert', { type: 'insert', args: { table: 'note', objects: [{ title: NUL }] } }],
  ['v1 update $set', { type: 'update', args: { table: 'note', where: {}, $set: { title: NUL } } }],
  ['run_sql', { type: 'run_sql', args: { sql: `select '${NUL}'` } }],
] as const) {
  test(`/v1/query ${name}: 400 data-exception, the connection survives`, async () => {
    const r = await postQuery(s.url, body);
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.code, name === 'run_sql' ? 'postgres-error' : 'data-exception', r.text);
    await stillWorks();
  });
}

for (const [name, body] of [
  ['an inline string literal', { query: `{ note(where: {title: {_eq: ${JSON.stringify(NUL)}}}) { id } }` }],
  ['a variable', { query: 'query($t: String) { note(where: {title: {_eq: $t}}) { id } }', variables: { t: NUL } }],
  ['a mutation', { query: 'mutation($t: String) { insert_note(objects: [{title: $t}]) { affected_rows } }', variables: { t: NUL } }],
] as const) {
  test(`/v1/graphql ${name}: an error, the connection survives`, async () => {
    const r = await postGraphql(s.url, body);
    assert.equal(r.status, 200);
    assert.equal(r.body.errors?.[0]?.extensions?.code, 'data-exception', r.text);
    await stillWorks();
  });
}
