/**
 * track_function v2 with a json session argument tracks (why a function cannot be tracked is an
 * inconsistency of the function: test/metadata/inconsistency_report.test.ts). And `count`'s
 * `distinct` checks columns as upstream's checkSelOnCol (permission-denied, admin included).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;

before(async () => {
  server = await startTestServer();
  await query(server.url, {
    type: 'run_sql',
    args: {
      sql: `create table text_result (result text);
        create function get_session_var_value(svc_session json, session_var text) returns setof text_result as $$
          select q.* from (values (svc_session ->> session_var)) q $$ language sql stable;
        create function volatile_fn() returns setof text_result as $$ select * from text_result $$ language sql volatile;
        create table article (id int primary key, title text);`,
    },
  });
  await query(server.url, { type: 'track_table', args: { table: 'text_result' } });
  await query(server.url, { type: 'track_table', args: { table: 'article' } });
});

after(async () => {
  await server?.close();
});

const functions = async () => (await query(server.url, { type: 'export_metadata', args: {} })).functions ?? [];

test('track_function v2 with a json session argument works', async () => {
  const r = await postQuery(server.url, {
    type: 'track_function',
    version: 2,
    args: { function: 'get_session_var_value', configuration: { session_argument: 'svc_session' } },
  });
  assert.equal(r.status, 200, r.text);
  assert.equal((await functions()).length, 1);
});

test('count distinct on a missing column: permission-denied, as upstream (admin too)', async () => {
  const r = await postQuery(server.url, { type: 'count', args: { table: 'article', distinct: ['author_name'] } });
  assert.deepEqual(
    { status: r.status, body: r.body },
    { status: 400, body: { path: '$.args.distinct[0]', error: 'no such column exists : "author_name"', code: 'permission-denied' } },
  );
  const s = await postQuery(server.url, { type: 'select', args: { table: 'article', columns: ['nope'] } });
  assert.deepEqual({ status: s.status, code: s.body.code, path: s.body.path }, { status: 400, code: 'permission-denied', path: '$.args.columns[0]' });
});
