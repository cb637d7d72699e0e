/**
 * /v1/query under bad input: malformed bodies, wrong argument types, unknown operations and tables,
 * huge bodies (4xx, never 500), racing track_table calls, and `bulk` atomicity. At the end the
 * exported metadata holds exactly the changes that succeeded.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postQuery, query, startTestServer, type HttpResult, type TestServer } from '../helpers/server.js';

let server: TestServer;
/** tables tracked by the requests that succeeded, in this file's order */
const tracked = new Set<string>();

before(async () => {
  server = await startTestServer();
});

after(async () => {
  await server?.close();
});

const exportMetadata = () => query(server.url, { type: 'export_metadata', args: {} });
const runSql = (sql: string) => query(server.url, { type: 'run_sql', args: { sql } });
const count = async (table: string): Promise<number> => Number((await runSql(`select count(*) from ${table}`)).result[1][0]);

function assertError(r: HttpResult, status: number, code: string, what: string): void {
  assert.equal(r.status, status, `${what}: status (body ${r.text.slice(0, 300)})`);
  assert.equal(typeof r.body, 'object', `${what}: JSON error body, got ${r.text.slice(0, 200)}`);
  assert.equal(r.body.code, code, `${what}: code (body ${r.text.slice(0, 300)})`);
  assert.equal(typeof r.body.error, 'string', `${what}: error message`);
  assert.equal(typeof r.body.path, 'string', `${what}: path`);
}

describe('malformed requests', () => {
  test('malformed JSON → 400 invalid-json', async () => {
    for (const [body, error] of [
      ['', 'Error in $: not enough input'],
      ['{bad', "Error in $: Failed reading: Expected property name or '}' in JSON at position 1"],
      ['{"type": "run_sql", "args": {"sql": "select 1"}', 'Error in $: not enough input'],
      ['{"type":"run_sql"} trailing', 'Error in $: Failed reading: Unexpected non-whitespace character after JSON at position 19'],
      ["{'type':'x'}", "Error in $: Failed reading: Expected property name or '}' in JSON at position 1"],
    ]) {
      const r = await postQuery(server.url, body);
      assert.deepEqual({ status: r.status, body: r.body }, { status: 400, body: { path: '$', error, code: 'invalid-json' } }, body);
    }
  });

  test('a body that is JSON but not a query object → 400 parse-failed', async () => {
    for (const body of ['null', '[]', '42', '"run_sql"', '{}', '{"type":"track_table"}', '{"args":{}}']) {
      assertError(await postQuery(server.url, body), 400, 'parse-failed', body);
    }
  });

  test('an empty body → 4xx', async () => {
    const r = await postQuery(server.url, '');
    assert.ok(r.status >= 400 && r.status < 500, `status ${r.status}: ${r.text}`);
  });

  test('unknown operation → 400 parse-failed naming it', async () => {
    const r = await postQuery(server.url, { type: 'drop_everything', args: {} });
    assertError(r, 400, 'parse-failed', 'unknown type');
    assert.match(r.body.error, /drop_everything/);
  });

  test('wrong types in args fields → 400 parse-failed', async () => {
    await runSql('create table typed (id int primary key, author_id int)');
    const cases: Array<[string, unknown]> = [
      ['table as a number', { type: 'track_table', args: { table: 123 } }],
      ['table as a list', { type: 'track_table', args: { table: ['typed'] } }],
      ['table.schema as a boolean', { type: 'track_table', args: { table: { schema: true, name: 'typed' } } }],
      ['run_sql sql as a number', { type: 'run_sql', args: { sql: 5 } }],
      ['run_sql cascade as a string', { type: 'run_sql', args: { sql: 'select 1', cascade: 'yes' } }],
      ['args as a number', { type: 'track_table', args: 42 }],
      ['run_sql args as null', { type: 'run_sql', args: null }],
      [
        'relationship name as an object',
        { type: 'create_object_relationship', args: { table: 'typed', name: { x: 1 }, using: { foreign_key_constraint_on: 'author_id' } } },
      ],
      ['permission role as a number', { type: 'create_select_permission', args: { table: 'typed', role: 7, permission: { columns: '*', filter: {} } } }],
      ['bulk args as an object', { type: 'bulk', args: { type: 'run_sql' } }],
    ];
    for (const [what, body] of cases) {
      const r = await postQuery(server.url, body);
      assertError(r, 400, 'parse-failed', what);
    }
    const r = await postQuery(server.url, { type: 'track_table', args: { table: 123 } });
    assert.deepEqual(r.body.path, '$.table');
  });

  test('unknown table → 400 not-exists', async () => {
    const r = await postQuery(server.url, { type: 'track_table', args: { table: 'no_such_table' } });
    assert.deepEqual(r.body, { path: '$.args', error: 'no such table/view exists in postgres : "no_such_table"', code: 'not-exists' });
    assert.equal(r.status, 400);
    for (const body of [
      { type: 'untrack_table', args: { table: 'no_such_table' } },
      { type: 'create_select_permission', args: { table: 'no_such_table', role: 'user', permission: { columns: '*', filter: {} } } },
      { type: 'create_object_relationship', args: { table: 'no_such_table', name: 'r', using: { foreign_key_constraint_on: 'x' } } },
    ]) {
      const e = await postQuery(server.url, body);
      assert.equal(e.status, 400, `${body.type}: ${e.text}`);
      assert.ok(['not-exists', 'already-untracked'].includes(e.body.code), `${body.type}: ${e.text}`);
    }
  });

  test('10 MB bodies → 4xx, never 500, and the server keeps working', async () => {
    const big = 'x'.repeat(10 * 1024 * 1024);
    const bodies: Array<[string, string]> = [
      ['10 MB of non-JSON', big],
      ['10 MB JSON with an unknown type', JSON.stringify({ type: big, args: {} })],
      ['10 MB table name', JSON.stringify({ type: 'track_table', args: { table: big } })],
      ['10 MB of nested arrays', '['.repeat(5 * 1024 * 1024) + ']'.repeat(5 * 1024 * 1024)],
    ];
    for (const [what, body] of bodies) {
      const r = await postQuery(server.url, body);
      assert.ok(r.status >= 400 && r.status < 500, `${what}: status ${r.status}: ${r.text.slice(0, 200)}`);
      assert.equal(typeof r.body?.code, 'string', `${what}: a JSON error body`);
    }
    assert.deepEqual(await runSql('select 1 as one'), { result_type: 'TuplesOk', result: [['one'], ['1']] });
  });

  test('a body above --body-limit → 413', async () => {
    const small = await startTestServer({ bodyLimit: 1024 * 1024 });
    try {
      const r = await postQuery(small.url, JSON.stringify({ type: 'run_sql', args: { sql: `select '${'x'.repeat(10 * 1024 * 1024)}'` } }));
      assert.equal(r.status, 413, r.text.slice(0, 200));
      assert.equal(typeof r.body?.code, 'string');
      const ok = await postQuery(small.url, { type: 'run_sql', args: { sql: 'select 1' } });
      assert.equal(ok.status, 200);
    } finally {
      await small.close();
    }
  });
});

describe('concurrency', () => {
  test('concurrent track_table of the same table: one succeeds, the other gets already-tracked', async () => {
    for (let i = 0; i < 5; i++) {
      const table = `race_${i}`;
      await runSql(`create table ${table} (id int primary key)`);
      const rs = await Promise.all([0, 1].map(() => postQuery(server.url, { type: 'track_table', args: { table } })));
      const ok = rs.filter((r) => r.status === 200);
      const refused = rs.filter((r) => r.status !== 200);
      assert.equal(ok.length, 1, `exactly one success: ${rs.map((r) => `${r.status} ${r.text}`).join(' | ')}`);
      assert.deepEqual(ok[0]!.body, { message: 'success' });
      assert.equal(refused.length, 1);
      assert.deepEqual(refused[0]!.body, { path: '$.args', error: `view/table already tracked : "${table}"`, code: 'already-tracked' });
      assert.equal(refused[0]!.status, 400);
      tracked.add(table);
    }
  });

  test('concurrent track_table of different tables: no change is lost', async () => {
    const tables = ['par_a', 'par_b', 'par_c', 'par_d'];
    await runSql(tables.map((t) => `create table ${t} (id int primary key);`).join('\n'));
    const rs = await Promise.all(tables.map((table) => postQuery(server.url, { type: 'track_table', args: { table } })));
    for (const r of rs) assert.equal(r.status, 200, r.text);
    for (const t of tables) tracked.add(t);
    const names = (await exportMetadata()).tables.map((t: { table: { name: string } }) => t.table.name);
    for (const t of tables) assert.ok(names.includes(t), `${t} is in the exported metadata`);
  });
});

describe('bulk', () => {
  test('a bulk whose 3rd operation fails changes neither metadata nor data', async () => {
    await runSql("create table bulk_data (id int primary key, v text); insert into bulk_data values (1, 'one');");
    await runSql('create table bulk_extra (id int primary key)');
    const metadataBefore = await exportMetadata();
    const r = await postQuery(server.url, {
      type: 'bulk',
      args: [
        { type: 'run_sql', args: { sql: "insert into bulk_data values (2, 'two'); create table bulk_created (id int);" } },
        { type: 'track_table', args: { table: 'bulk_extra' } },
        { type: 'track_table', args: { table: 'no_such_table' } },
        { type: 'track_table', args: { table: 'bulk_data' } },
      ],
    });
    assert.equal(r.status, 400, r.text);
    assert.deepEqual(r.body, { path: '$.args[2].args', error: 'no such table/view exists in postgres : "no_such_table"', code: 'not-exists' });
    assert.deepEqual(await exportMetadata(), metadataBefore, 'metadata unchanged');
    assert.equal(await count('bulk_data'), 1, 'the insert of the 1st operation was rolled back');
    const created = await runSql("select to_regclass('public.bulk_created') is null as gone");
    assert.deepEqual(created.result, [['gone'], ['t']], 'the table created by the 1st operation was rolled back');
    // and the schema cache did not keep the 2nd operation either
    const again = await postQuery(server.url, { type: 'track_table', args: { table: 'bulk_extra' } });
    assert.equal(again.status, 200, again.text);
    tracked.add('bulk_extra');
  });

  test('a bulk that fails in its 3rd operation on an already-tracked table changes nothing either', async () => {
    const metadataBefore = await exportMetadata();
    const r = await postQuery(server.url, {
      type: 'bulk',
      args: [
        { type: 'track_table', args: { table: 'bulk_data' } },
        { type: 'run_sql', args: { sql: "update bulk_data set v = 'changed'" } },
        { type: 'track_table', args: { table: 'race_0' } },
      ],
    });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.code, 'already-tracked');
    assert.equal(r.body.path, '$.args[2].args');
    assert.deepEqual(await exportMetadata(), metadataBefore);
    assert.deepEqual((await runSql('select v from bulk_data')).result, [['v'], ['one']]);
  });

  test('a bulk that succeeds applies every operation and answers with a list', async () => {
    const r = await postQuery(server.url, {
      type: 'bulk',
      args: [
        { type: 'run_sql', args: { sql: "insert into bulk_data values (3, 'three')" } },
        { type: 'track_table', args: { table: 'bulk_data' } },
      ],
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, [{ result_type: 'CommandOk', result: null }, { message: 'success' }]);
    tracked.add('bulk_data');
    assert.equal(await count('bulk_data'), 2);
  });
});

describe('afterwards', () => {
  test('export_metadata shows exactly the successful changes', async () => {
    const md = await exportMetadata();
    const expected = [...tracked].sort().map((name) => ({ table: { schema: 'public', name } }));
    const got = [...md.tables].sort((x: { table: { name: string } }, y: { table: { name: string } }) => x.table.name.localeCompare(y.table.name));
    assert.deepEqual({ ...md, tables: got }, { version: 2, tables: expected });
  });
});
