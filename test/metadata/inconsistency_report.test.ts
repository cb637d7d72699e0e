/**
 * How metadata inconsistencies are reported, as upstream v1.3 reports them:
 *
 * - a metadata operation that makes the object it defines inconsistent answers 400
 *   `constraint-violation`, the reasons as the error and the objects in `internal` (upstream's
 *   buildSchemaCacheFor; src/metadata/run.ts → newInconsistencyAfterChange). track_function goes
 *   through it like every other op: its reasons carry the context "in function "f": ";
 * - run_sql overloading a tracked function: the names without quotes (src/metadata/diff.ts);
 * - a tracked table dropped behind the server's back: get_inconsistent_metadata, and the error of
 *   replace_metadata with that metadata, list the table and every object that stood on it — its own
 *   relationships, permissions and event triggers, and the relationships and permissions of other
 *   tables — each with its definition as stored, in upstream's order (src/schema/build.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;

before(async () => {
  s = await startTestServer();
});

after(async () => {
  await s?.close();
});

async function sqlDirect(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: s.databaseUrl });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

const exported = async () => query(s.url, { type: 'export_metadata', args: {} });

describe('track_function: what the function cannot be is an inconsistency of the function', () => {
  before(async () => {
    await query(s.url, {
      type: 'run_sql',
      args: {
        sql: `create table text_result (result text);
          create function get_session_var_value(svc_session json, session_var text) returns setof text_result as $$
            select q.* from (values (svc_session ->> session_var)) q $$ language sql stable;
          create function volatile_fn() returns setof text_result as $$ select * from text_result $$ language sql volatile;
          create function overloaded_fn(a int) returns setof text_result as $$ select * from text_result $$ language sql stable;
          create function overloaded_fn(a text) returns setof text_result as $$ select * from text_result $$ language sql stable;`,
      },
    });
    await query(s.url, { type: 'track_table', args: { table: 'text_result' } });
  });

  const fn = (name: string) => ({ schema: 'public', name });
  const inconsistency = (name: string, reason: string) => {
    const error = `in function ${JSON.stringify(name)}: ${reason}`;
    return { path: '$.args', error, code: 'constraint-violation', internal: [{ definition: fn(name), reason: error, type: 'function' }] };
  };

  for (const [what, request, body] of [
    [
      'a session argument that is not an input argument (v2)',
      { type: 'track_function', version: 2, args: { function: 'get_session_var_value', configuration: { session_argument: 'random' } } },
      inconsistency(
        'get_session_var_value',
        'the function "get_session_var_value" cannot be tracked because given session argument "random" not the input argument of the function',
      ),
    ],
    [
      'a session argument that is not json (v2)',
      { type: 'track_function', version: 2, args: { function: 'get_session_var_value', configuration: { session_argument: 'session_var' } } },
      inconsistency(
        'get_session_var_value',
        'the function "get_session_var_value" cannot be tracked because given session argument "session_var" is not of type json',
      ),
    ],
    [
      'a VOLATILE function (v1)',
      { type: 'track_function', args: { schema: 'public', name: 'volatile_fn' } },
      inconsistency('volatile_fn', 'the function "volatile_fn" cannot be tracked because function of type "VOLATILE" is not supported now'),
    ],
    [
      'an overloaded function (v1)',
      { type: 'track_function', args: { schema: 'public', name: 'overloaded_fn' } },
      inconsistency('overloaded_fn', 'function "overloaded_fn" is overloaded. Overloaded functions are not supported'),
    ],
    [
      'a function that is not there (v1)',
      { type: 'track_function', args: { schema: 'public', name: 'no_such_fn' } },
      inconsistency('no_such_fn', 'no such function exists in postgres : "no_such_fn"'),
    ],
  ] as const) {
    test(`${what}: 400 constraint-violation with the function in internal, nothing tracked`, async () => {
      const before = await exported();
      const r = await postQuery(s.url, request);
      assert.deepEqual({ status: r.status, body: r.body }, { status: 400, body });
      assert.deepEqual(await exported(), before);
    });
  }

  test('in a bulk, the error names the op and nothing of the bulk stays', async () => {
    const r = await postQuery(s.url, {
      type: 'bulk',
      args: [
        { type: 'create_select_permission', args: { table: 'text_result', role: 'user', permission: { columns: '*', filter: {} } } },
        { type: 'track_function', version: 2, args: { function: 'get_session_var_value', configuration: { session_argument: 'random' } } },
      ],
    });
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'constraint-violation');
    assert.equal(r.body.path, '$.args[1].args');
    assert.deepEqual(
      r.body.internal.map((o: { type: string }) => o.type),
      ['function'],
    );
    assert.deepEqual((await exported()).tables.find((t: { table: { name: string } }) => t.table.name === 'text_result').select_permissions, undefined);
  });

  test('create_event_trigger with a variable that is not set: the trigger is inconsistent, the same shape', async () => {
    const before = await exported();
    for (const [args, where] of [
      [{ webhook_from_env: 'SVC_TEST_METAMSG_UNSET' }, 'SVC_TEST_METAMSG_UNSET'],
      [{ webhook: 'http://127.0.0.1:9/x', headers: [{ name: 'X', value_from_env: 'SVC_TEST_METAMSG_UNSET_H' }] }, 'SVC_TEST_METAMSG_UNSET_H'],
    ] as const) {
      const r = await postQuery(s.url, { type: 'create_event_trigger', args: { name: 'unset_env', table: 'text_result', insert: { columns: '*' }, ...args } });
      const error = `in table "text_result": in event trigger "unset_env": environment variable "${where}" not set`;
      assert.deepEqual(
        { status: r.status, path: r.body.path, error: r.body.error, code: r.body.code },
        { status: 400, path: '$.args', error, code: 'constraint-violation' },
      );
      assert.deepEqual(
        r.body.internal.map((o: any) => [o.type, o.definition.table, o.definition.configuration.name, o.reason]),
        [['event_trigger', { schema: 'public', name: 'text_result' }, 'unset_env', error]],
      );
    }
    assert.deepEqual(await exported(), before);
  });

  test('a trackable function still tracks (v2, json session argument)', async () => {
    await query(s.url, { type: 'track_function', version: 2, args: { function: 'get_session_var_value', configuration: { session_argument: 'svc_session' } } });
    assert.deepEqual((await exported()).functions, [{ function: fn('get_session_var_value'), configuration: { session_argument: 'svc_session' } }]);
  });

  test('run_sql overloading a tracked function: the names without quotes, nothing created', async () => {
    const r = await postQuery(s.url, {
      type: 'run_sql',
      args: { sql: 'create function get_session_var_value(svc_session json) returns setof text_result as $$ select * from text_result $$ language sql stable' },
    });
    assert.deepEqual(
      { status: r.status, body: r.body },
      {
        status: 400,
        body: { path: '$.args', error: 'the following tracked function(s) cannot be overloaded: get_session_var_value', code: 'not-supported' },
      },
    );
    const n = await query(s.url, { type: 'run_sql', args: { sql: `select count(*) from pg_proc where proname = 'get_session_var_value'` } });
    assert.deepEqual(n.result, [['count'], ['1']]);
  });
});

describe("a tracked table dropped behind the server's back", () => {
  const author = { schema: 'public', name: 'author' };
  const article = { schema: 'public', name: 'article' };
  const trigger = {
    name: 'article_changes',
    definition: { insert: { columns: '*' } },
    retry_conf: { num_retries: 0, interval_sec: 10, timeout_sec: 60 },
    webhook: 'http://127.0.0.1:9/hook',
  };

  before(async () => {
    await query(s.url, {
      type: 'bulk',
      args: [
        {
          type: 'run_sql',
          args: {
            sql: `create table author (id serial primary key, name text unique);
              create table article (id serial primary key, title text not null, content text, author_id integer not null references author (id));`,
          },
        },
        { type: 'track_table', args: { schema: 'public', name: 'author' } },
        { type: 'track_table', args: { schema: 'public', name: 'article' } },
        { type: 'create_object_relationship', args: { table: 'article', name: 'author', using: { foreign_key_constraint_on: 'author_id' } } },
        // the referencing table given by its name only: stored (and reported) as {schema, name}
        {
          type: 'create_array_relationship',
          args: {
            table: 'author',
            name: 'articles',
            comment: 'by this author',
            using: { foreign_key_constraint_on: { table: 'article', column: 'author_id' } },
          },
        },
        { type: 'create_select_permission', args: { table: 'article', role: 'user', permission: { columns: '*', filter: {} } } },
        {
          type: 'create_select_permission',
          args: { table: 'author', role: 'user', permission: { columns: ['id', 'name'], filter: { articles: { id: { _gt: 0 } } } } },
        },
        {
          type: 'create_event_trigger',
          args: { table: 'article', name: trigger.name, insert: trigger.definition.insert, retry_conf: trigger.retry_conf, webhook: trigger.webhook },
        },
      ],
    });
    await sqlDirect('drop table article');
    await query(s.url, { type: 'reload_metadata', args: {} });
  });

  const expected = [
    { definition: article, reason: 'no such table/view exists in postgres: "article"', type: 'table' },
    {
      definition: { using: { foreign_key_constraint_on: 'author_id' }, name: 'author', comment: null, table: article },
      reason: 'table "article" does not exist',
      type: 'object_relation',
    },
    {
      definition: { using: { foreign_key_constraint_on: { table: article, column: 'author_id' } }, name: 'articles', comment: 'by this author', table: author },
      reason: 'in table "author": in relationship "articles": table "article" does not exist',
      type: 'array_relation',
    },
    {
      definition: { role: 'user', comment: null, permission: { allow_aggregations: false, computed_fields: [], columns: '*', filter: {} }, table: article },
      reason: 'table "article" does not exist',
      type: 'select_permission',
    },
    {
      definition: { table: article, configuration: { ...trigger, definition: { enable_manual: false, insert: { columns: '*' } } } },
      reason: 'table "article" does not exist',
      type: 'event_trigger',
    },
    {
      definition: {
        role: 'user',
        comment: null,
        permission: { allow_aggregations: false, computed_fields: [], columns: ['id', 'name'], filter: { articles: { id: { _gt: 0 } } } },
        table: author,
      },
      reason: 'in table "author": in permission for role "user": "articles" does not exist',
      type: 'select_permission',
    },
  ];

  test('get_inconsistent_metadata: the table, then its own objects, then the objects of other tables on it', async () => {
    const r = await query(s.url, { type: 'get_inconsistent_metadata', args: {} });
    assert.deepEqual(r, { is_consistent: false, inconsistent_objects: expected });
  });

  test('replace_metadata with that metadata: unexpected, the same objects in the same order', async () => {
    const md = await exported();
    const r = await postQuery(s.url, { type: 'replace_metadata', args: md });
    assert.deepEqual(
      { status: r.status, body: r.body },
      {
        status: 400,
        body: { path: '$.args', error: 'cannot continue due to inconsistent metadata', code: 'unexpected', internal: expected },
      },
    );
    assert.deepEqual(await exported(), md);
  });

  test('drop_inconsistent_metadata drops them all: consistent again', async () => {
    await query(s.url, { type: 'drop_inconsistent_metadata', args: {} });
    await query(s.url, { type: 'reload_metadata', args: {} });
    assert.deepEqual(await query(s.url, { type: 'get_inconsistent_metadata', args: {} }), { is_consistent: true, inconsistent_objects: [] });
    const t = (await exported()).tables.find((x: { table: { name: string } }) => x.table.name === 'author');
    assert.deepEqual({ rels: t.array_relationships, perms: t.select_permissions }, { rels: undefined, perms: undefined });
  });
});

describe('the console drops the objects of a dropped table one by one (Metadata page)', () => {
  before(async () => {
    await query(s.url, {
      type: 'bulk',
      args: [
        {
          type: 'run_sql',
          args: {
            sql: `create table writer (id serial primary key, name text);
              create table post (id serial primary key, writer_id integer not null references writer (id));`,
          },
        },
        { type: 'track_table', args: { table: 'writer' } },
        { type: 'track_table', args: { table: 'post' } },
        { type: 'create_object_relationship', args: { table: 'post', name: 'writer', using: { foreign_key_constraint_on: 'writer_id' } } },
        {
          type: 'create_array_relationship',
          args: { table: 'writer', name: 'posts', using: { foreign_key_constraint_on: { table: 'post', column: 'writer_id' } } },
        },
        { type: 'create_select_permission', args: { table: 'writer', role: 'user', permission: { columns: ['id'], filter: { posts: { id: { _gt: 0 } } } } } },
        { type: 'create_event_trigger', args: { table: 'post', name: 'post_changes', insert: { columns: '*' }, webhook: 'http://127.0.0.1:9/hook' } },
      ],
    });
    await sqlDirect('drop table post');
    await query(s.url, { type: 'reload_metadata', args: {} });
  });

  test("each row's Drop (console/src/metadata/inconsistency.ts) works until the metadata is consistent", async () => {
    const { describeObject, dropOperation } = await import('../../console/src/metadata/inconsistency.ts');
    const dropped: string[] = [];
    for (let i = 0; i < 10; i++) {
      const report = await query(s.url, { type: 'get_inconsistent_metadata', args: {} });
      if (report.is_consistent) break;
      const o = report.inconsistent_objects[0];
      const op = dropOperation(o);
      assert.ok(op, `no drop operation for ${JSON.stringify(o)}`);
      dropped.push(`${o.type} ${describeObject(o)}`);
      await query(s.url, op);
    }
    // the table goes with its own objects; the objects of other tables that stood on it are dropped next
    assert.deepEqual(dropped, ['table public.post', 'array_relation public.writer · posts', 'select_permission public.writer · user']);
    assert.deepEqual(await query(s.url, { type: 'get_inconsistent_metadata', args: {} }), { is_consistent: true, inconsistent_objects: [] });
  });
});
