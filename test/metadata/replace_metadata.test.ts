/**
 * replace_metadata parses the whole document before replacing anything (issue 11.9): `{}`, a
 * misspelt `tables` key or a list of the wrong type is a 400 `parse-failed` at the key's path with
 * aeson's wording, and the metadata is exactly as before.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let before_: unknown;

before(async () => {
  s = await startTestServer();
  await query(s.url, { type: 'run_sql', args: { sql: 'create table keep_me (id int primary key)' } });
  await query(s.url, { type: 'track_table', args: { table: 'keep_me' } });
  before_ = await query(s.url, { type: 'export_metadata', args: {} });
});

after(async () => {
  await s?.close();
});

for (const [name, args, path, error] of [
  ['an empty object', {}, '$', 'key "tables" not found'],
  ['a misspelt key', { tabels: [] }, '$', 'key "tables" not found'],
  ['tables not a list', { tables: {} }, '$.tables', 'parsing [] failed, expected Array, but encountered Object'],
  ['a table without `table`', { tables: [{ is_enum: false }] }, '$.tables[0]', 'key "table" not found'],
  ['a table name of the wrong type', { tables: [{ table: 3 }] }, '$.tables[0].table', 'parsing QualifiedTable failed, expected Object, but encountered Number'],
  [
    'relationships not a list',
    { tables: [{ table: 'keep_me', object_relationships: 'x' }] },
    '$.tables[0].object_relationships',
    'parsing [] failed, expected Array, but encountered String',
  ],
  [
    'a permission that is not an object',
    { tables: [{ table: 'keep_me', select_permissions: [1] }] },
    '$.tables[0].select_permissions[0]',
    'parsing Object failed, expected Object, but encountered Number',
  ],
  ['functions not a list', { tables: [], functions: 'f' }, '$.functions', 'parsing [] failed, expected Array, but encountered String'],
  ['a bad version', { version: 3, tables: [] }, '$.version', 'expected 1 or 2, encountered 3'],
  ['not an object', [], '$', 'parsing Metadata failed, expected Object, but encountered Array'],
] as const) {
  test(`${name}: 400 parse-failed, nothing changed`, async () => {
    const r = await postQuery(s.url, { type: 'replace_metadata', args });
    assert.deepEqual({ status: r.status, body: r.body }, { status: 400, body: { path, error, code: 'parse-failed' } });
    assert.deepEqual(await query(s.url, { type: 'export_metadata', args: {} }), before_);
  });
}

test('a valid document still replaces the metadata', async () => {
  const r = await postQuery(s.url, { type: 'replace_metadata', args: { tables: [] } });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual((await query(s.url, { type: 'export_metadata', args: {} })).tables, []);
});
