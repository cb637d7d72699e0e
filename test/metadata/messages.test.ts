/**
 * Metadata errors with upstream v1.3's messages (src/document/messages.ts):
 * RQL/DDL/Permission/Internal.hs `askPermInfo` (drop_*_permission) and
 * `assertPermDefined` (set_permission_comment), both `permission-denied`;
 * `PermType`'s parser for set_permission_comment's `type`.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;

before(async () => {
  s = await startTestServer();
  await query(s.url, { type: 'run_sql', args: { sql: 'create table author (id int primary key)' } });
  await query(s.url, { type: 'track_table', args: { table: 'author' } });
});

after(async () => {
  await s?.close();
});

test('dropping a permission that is not there', async () => {
  const r = await postQuery(s.url, { type: 'drop_select_permission', args: { table: 'author', role: 'user' } });
  assert.deepEqual(
    { status: r.status, body: r.body },
    {
      status: 400,
      body: { path: '$.args', error: 'select permission on "author" for role "user" does not exist', code: 'permission-denied' },
    },
  );
});

test('commenting a permission that is not there, or of no known type', async () => {
  const r = await postQuery(s.url, { type: 'set_permission_comment', args: { table: 'author', role: 'user', type: 'insert', comment: 'x' } });
  assert.deepEqual(r.body, { path: '$.args', error: '\'insert\' permission on "author" for role "user" does not exist', code: 'permission-denied' });
  const t = await postQuery(s.url, { type: 'set_permission_comment', args: { table: 'author', role: 'user', type: 'upsert', comment: 'x' } });
  assert.equal(t.body.code, 'parse-failed');
  assert.equal(t.body.error, "perm_type should be one of 'insert', 'select', 'update', 'delete'");
});
