/**
 * /v1/query select: `limit`/`offset` of the wrong JSON type fail as upstream's aeson parse of the
 * args does (message and a path relative to the args); a negative one is `not-supported` at the
 * request path.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;

before(async () => {
  s = await startTestServer();
  await query(s.url, { type: 'run_sql', args: { sql: 'create table a (id int primary key)' } });
  await query(s.url, { type: 'track_table', args: { table: 'a' } });
});

after(async () => {
  await s?.close();
});

test('limit "3": parsing Int failed at $.limit', async () => {
  const r = await postQuery(s.url, { type: 'select', args: { table: 'a', columns: ['id'], limit: '3' } });
  assert.deepEqual(
    { status: r.status, body: r.body },
    { status: 400, body: { path: '$.limit', error: 'parsing Int failed, expected Number, but encountered String', code: 'parse-failed' } },
  );
  const o = await postQuery(s.url, { type: 'select', args: { table: 'a', columns: ['id'], offset: 1.5 } });
  assert.deepEqual(o.body, { path: '$.offset', error: 'parsing Int failed, expected Number, but encountered Number', code: 'parse-failed' });
});

test('a negative limit: not-supported at $.args.limit', async () => {
  const r = await postQuery(s.url, { type: 'select', args: { table: 'a', columns: ['id'], limit: -1 } });
  assert.deepEqual(r.body, { path: '$.args.limit', error: 'unexpected negative value', code: 'not-supported' });
});
