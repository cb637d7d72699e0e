/**
 * run_sql's SQL runs in the request's transaction (all or nothing with bulk's other ops and the
 * metadata). A statement that would end it (COMMIT, ROLLBACK, END, ABORT, PREPARE TRANSACTION,
 * … AND CHAIN) is refused before anything runs: before, `create table x(); commit` answered 400
 * (the savepoint's RELEASE failed) while the table stayed, read_only and bulk's atomicity were
 * bypassed and the schema cache was left stale. A BEGIN … COMMIT around the whole SQL is the
 * request's own transaction and is accepted. The statement split (src/sql/statements.ts) is
 * checked on its own first.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { withoutTransactionControl } from '../../src/metadata/ops/sql.js';
import { sqlStatements } from '../../src/sql/statements.js';
import { postGraphql, postQuery, startServerWithTables, type TestServer } from '../helpers/server.js';

const words = (sql: string) => sqlStatements(sql).map((s) => s.words.join(' '));

describe('sqlStatements: statements as PostgreSQL splits them', () => {
  test('semicolons inside strings, identifiers, dollar quotes and comments do not split', () => {
    assert.deepEqual(words(`select 'a;b'; select "x;y" from t; select $$c;d$$; select $f$ e; $$ $f$`), ['select', 'select', 'select', 'select']);
    assert.deepEqual(words(`select 1 -- ; commit\n; /* ; commit /* nested ; */ ; */ commit`), ['select', 'commit']);
    assert.deepEqual(words(`select E'it\\'s;'; rollback`), ['select e', 'rollback']); // E: a word to the split, the string's prefix to PostgreSQL
    assert.deepEqual(words(`select 'it''s;'; end`), ['select', 'end']);
    // $1 is a parameter, a$b an identifier: neither opens a dollar quote
    assert.deepEqual(words(`prepare p as select $1; select a$b from t; commit`), ['prepare p as', 'select a$b from', 'commit']);
  });

  test("a SQL-standard function body's semicolons do not split (BEGIN ATOMIC … END, with CASE … END inside)", () => {
    const sql = `create or replace function f(x int) returns int language sql begin atomic select case when x > 0 then 1 else 2 end; select 3; end; commit`;
    const st = sqlStatements(sql);
    assert.deepEqual(
      st.map((s) => s.words[0]),
      ['create', 'commit'],
    );
    assert.equal(sql.slice(st[0]!.start, st[0]!.end).endsWith('select 3; end'), true);
  });

  test('offsets are those of the text; empty statements are left out', () => {
    const sql = '  ;; select 1 ;\n  -- c\n  select 2';
    const st = sqlStatements(sql);
    assert.deepEqual(
      st.map((s) => sql.slice(s.start, s.end)),
      ['select 1 ', 'select 2'],
    );
  });
});

describe('withoutTransactionControl', () => {
  const refused = (sql: string) =>
    assert.throws(
      () => withoutTransactionControl(sql, '$.args'),
      (e: { code?: string }) => e.code === 'not-supported',
      sql,
    );
  test('statements that end the transaction are refused', () => {
    for (const sql of [
      'create table a(); commit',
      'commit; create table a()',
      'rollback; drop table a',
      'insert into a values (1); END',
      'abort',
      'begin; create table a(); commit and chain',
      'begin; create table a(); rollback',
      "prepare transaction 'x'",
      "commit prepared 'x'",
      'begin; commit; begin; commit',
      'select 1; Commit Work; select 2',
    ])
      refused(sql);
  });

  test('savepoints, BEGIN alone and a BEGIN … COMMIT around everything are accepted', () => {
    for (const sql of [
      'savepoint s; insert into a values (1); rollback to savepoint s; release savepoint s',
      'rollback transaction to s',
      'begin; create table a()',
      "select 'commit'; select $$rollback$$",
      'do $$ begin commit; end $$',
    ])
      assert.deepEqual(withoutTransactionControl(sql, '$.args'), { sql, wrapped: false }, sql);
    const sql = 'BEGIN;\ncreate table a(id int);\ninsert into a values (1);\nCOMMIT;';
    const r = withoutTransactionControl(sql, '$.args');
    assert.equal(r.wrapped, true);
    assert.equal(r.sql.length, sql.length, 'blanked, not cut: error positions stay');
    assert.equal(r.sql.indexOf('insert'), sql.indexOf('insert'));
    assert.doesNotMatch(r.sql, /begin|commit/i);
  });
});

describe('run_sql and transaction control, through /v1/query', () => {
  let s: TestServer;
  before(async () => {
    s = await startServerWithTables('create table txc_item (id serial primary key, name text)', ['txc_item']);
  });
  after(async () => {
    await s?.close();
  });

  const exists = async (name: string): Promise<boolean> => {
    const r = await postQuery(s.url, { type: 'run_sql', args: { sql: `select to_regclass('${name}') is not null` } });
    assert.equal(r.status, 200, r.text);
    return r.body.result[1][0] === 't';
  };

  test('COMMIT inside the SQL: refused, and nothing it would have done is kept', async () => {
    const r = await postQuery(s.url, { type: 'run_sql', args: { sql: 'create table txc_kept (id int); commit' } });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.code, 'not-supported');
    assert.equal(r.body.path, '$.args');
    assert.match(r.body.error, /COMMIT is not supported/);
    assert.equal(await exists('txc_kept'), false);
    const rb = await postQuery(s.url, { type: 'run_sql', args: { sql: 'rollback; drop table txc_item' } });
    assert.equal(rb.status, 400, rb.text);
    assert.equal(await exists('txc_item'), true);
  });

  test('read_only and bulk stay whole', async () => {
    const ro = await postQuery(s.url, { type: 'run_sql', args: { sql: "insert into txc_item (name) values ('ro'); commit", read_only: true } });
    assert.equal(ro.status, 400, ro.text);
    const bulk = await postQuery(s.url, {
      type: 'bulk',
      args: [
        { type: 'run_sql', args: { sql: 'alter table txc_item drop column name; commit' } },
        { type: 'untrack_table', args: { table: 'txc_item' } },
      ],
    });
    assert.equal(bulk.status, 400, bulk.text);
    const g = await postGraphql(s.url, { query: '{ txc_item { id name } }' });
    assert.equal(g.status, 200, g.text);
    assert.deepEqual(g.body, { data: { txc_item: [] } }, 'the column, the table and its metadata are as they were');
  });

  test('a BEGIN … COMMIT around the whole SQL runs in the request (and rolls back with its bulk)', async () => {
    const ok = await postQuery(s.url, { type: 'run_sql', args: { sql: "BEGIN;\ninsert into txc_item (name) values ('wrapped');\nCOMMIT;" } });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body, { result_type: 'CommandOk', result: null });
    const g = await postGraphql(s.url, { query: '{ txc_item { name } }' });
    assert.deepEqual(g.body, { data: { txc_item: [{ name: 'wrapped' }] } });
    // the block is part of the bulk: a later failing op takes it back
    const bulk = await postQuery(s.url, {
      type: 'bulk',
      args: [
        { type: 'run_sql', args: { sql: "begin; insert into txc_item (name) values ('gone'); commit;" } },
        { type: 'track_table', args: { table: 'no_such_table' } },
      ],
    });
    assert.equal(bulk.status, 400, bulk.text);
    const after = await postGraphql(s.url, { query: '{ txc_item { name } }' });
    assert.deepEqual(after.body, { data: { txc_item: [{ name: 'wrapped' }] } });
    // an error inside the block points where it is in the text sent
    const sql = 'begin;\nselect * from no_such_relation;\ncommit;';
    const bad = await postQuery(s.url, { type: 'run_sql', args: { sql } });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.code, 'postgres-error');
    assert.equal(bad.body.internal.error.position, sql.indexOf('no_such_relation') + 1);
    assert.equal(bad.body.internal.statement, sql);
  });
});
