/**
 * A failing run_sql answers 400 postgres-error with PostgreSQL's own error in `internal` for admin:
 * message, SQLSTATE, detail, hint, and where in the statement the error is (`position`, 1-based,
 * counted in the whole text sent, which the console uses to point at it). Without internal errors
 * for admin the body is the bare `{path, error, code}`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postQuery, startTestServer, type TestServer } from '../helpers/server.js';

describe('run_sql errors', () => {
  let server: TestServer;
  let bare: TestServer;
  before(async () => {
    server = await startTestServer();
    bare = await startTestServer({ adminInternalErrors: false });
  });
  after(async () => {
    await server?.close();
    await bare?.close();
  });

  test('an unknown table in the second statement: message, code and position', async () => {
    const sql = 'select 1;\nselect * from no_such_table';
    const r = await postQuery(server.url, { type: 'run_sql', args: { sql } });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.code, 'postgres-error');
    assert.equal(r.body.error, 'query execution failed');
    const e = r.body.internal.error;
    assert.equal(e.message, 'relation "no_such_table" does not exist');
    assert.equal(e.status_code, '42P01');
    assert.equal(e.position, sql.indexOf('no_such_table') + 1);
    assert.equal(r.body.internal.statement, sql);
  });

  test('a hint and a detail are passed on', async () => {
    const r = await postQuery(server.url, { type: 'run_sql', args: { sql: "select lenght('x')" } });
    assert.equal(r.status, 400, r.text);
    const e = r.body.internal.error;
    assert.match(e.message, /function lenght\(unknown\) does not exist/);
    assert.match(e.hint, /No function matches the given name and argument types/);
    assert.equal(e.position, 8);
    const dup = await postQuery(server.url, {
      type: 'run_sql',
      args: { sql: 'create table dup_key (id int primary key); insert into dup_key values (1), (1)' },
    });
    assert.equal(dup.status, 400, dup.text);
    assert.equal(dup.body.internal.error.description, 'Key (id)=(1) already exists.');
    assert.equal('position' in dup.body.internal.error, false, 'no position when PostgreSQL gives none');
  });

  test('without internal errors for admin: only path, error and code', async () => {
    const r = await postQuery(bare.url, { type: 'run_sql', args: { sql: 'select * from no_such_table' } });
    assert.deepEqual(r.body, { path: '$.args', error: 'query execution failed', code: 'postgres-error' });
  });
});
