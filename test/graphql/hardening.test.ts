/**
 * Issue 3's end-to-end guarantees over HTTP and websocket: one SQL statement
 * per root field (3 levels, permissions on every level), plan-cache hits on
 * repeats, and hostile input that must give clear errors, never a 500, with
 * the server still serving afterwards.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import WebSocket from 'ws';
import { postGraphql, query, startTestServer, withWorkersStopped, type TestServer } from '../helpers/server.js';

let s: TestServer;
const user = { 'X-Svc-Role': 'user', 'X-Svc-User-Id': '1' };

before(async () => {
  s = await startTestServer();
  await query(s.url, {
    type: 'bulk',
    args: [
      {
        type: 'run_sql',
        args: {
          sql: `create table author (id serial primary key, name text);
                create table article (id serial primary key, title text, author_id int references author(id), published bool);
                create table comment (id serial primary key, body text, article_id int references article(id), author_id int references author(id));
                insert into author (name) values ('a1'), ('a2');
                insert into article (title, author_id, published) values ('t1', 1, true), ('t2', 1, false), ('t3', 2, true);
                insert into comment (body, article_id, author_id) values ('c1', 1, 2), ('c2', 1, 1), ('c3', 3, 1);`,
        },
      },
      { type: 'track_table', args: { name: 'author' } },
      { type: 'track_table', args: { name: 'article' } },
      { type: 'track_table', args: { name: 'comment' } },
      {
        type: 'create_array_relationship',
        args: { table: 'author', name: 'articles', using: { foreign_key_constraint_on: { table: 'article', column: 'author_id' } } },
      },
      { type: 'create_object_relationship', args: { table: 'article', name: 'author', using: { foreign_key_constraint_on: 'author_id' } } },
      {
        type: 'create_array_relationship',
        args: { table: 'article', name: 'comments', using: { foreign_key_constraint_on: { table: 'comment', column: 'article_id' } } },
      },
      { type: 'create_select_permission', args: { table: 'author', role: 'user', permission: { columns: ['id', 'name'], filter: { id: 'X-Svc-User-Id' } } } },
      {
        type: 'create_select_permission',
        args: { table: 'article', role: 'user', permission: { columns: '*', filter: { published: { _eq: true } }, limit: 10 } },
      },
      {
        type: 'create_select_permission',
        args: { table: 'comment', role: 'user', permission: { columns: ['id', 'body'], filter: { author_id: { _eq: 'X-Svc-User-Id' } } } },
      },
    ],
  });
});

after(async () => {
  await s?.close();
});

const NESTED = '{ author { name articles { title comments { body } } } }';

describe('one statement per root field, plan cache', () => {
  test('a 3-level nested query with permissions on every level is one SQL statement', async () => {
    // the background pollers share the Db: stopped while this request's statements are counted
    const { r, statements } = await withWorkersStopped(s.engine, async () => {
      const before = s.engine.db.statementCount;
      const r = await postGraphql(s.url, { query: NESTED }, user);
      return { r, statements: s.engine.db.statementCount - before };
    });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { data: { author: [{ name: 'a1', articles: [{ title: 't1', comments: [{ body: 'c2' }] }] }] } });
    assert.equal(statements, 1);
  });

  test('the second identical request is a plan-cache hit (no parse, validate, compile)', async () => {
    const q = '{ article(order_by: {id: asc}) { id author { name } } }';
    await postGraphql(s.url, { query: q }, user);
    const { hits, misses } = s.engine.planCache.stats;
    const r = await postGraphql(s.url, { query: q }, user);
    assert.equal(r.status, 200);
    assert.equal(s.engine.planCache.stats.misses, misses, 'no new compilation');
    assert.equal(s.engine.planCache.stats.hits, hits + 1);
  });
});

describe('hostile input', () => {
  const stillServing = async () => {
    const r = await postGraphql(s.url, { query: '{ author(order_by: {id: asc}) { id } }' });
    assert.deepEqual(r.body, { data: { author: [{ id: 1 }, { id: 2 }] } });
  };

  test('SQL-looking strings in values are data, not SQL', async () => {
    const evil = "'; drop table author; --";
    for (const body of [
      { query: `{ author(where: {name: {_eq: ${JSON.stringify(evil)}}}) { id } }` },
      { query: 'query ($n: String) { author(where: {name: {_like: $n}}) { id } }', variables: { n: evil } },
      { query: `{ author(where: {name: {_in: [${JSON.stringify(evil)}, "a\\"); select 1; --"]}}) { id } }` },
    ]) {
      const r = await postGraphql(s.url, body);
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { data: { author: [] } });
    }
    await stillServing();
  });

  test('SQL-looking session variables are parameters: a clear data error', async () => {
    const r = await postGraphql(s.url, { query: '{ author { id } }' }, { 'X-Svc-Role': 'user', 'X-Svc-User-Id': '1); drop table author; --' });
    assert.equal(r.status, 200);
    assert.equal(r.body.errors?.length, 1);
    assert.equal(r.body.errors[0].extensions.code, 'data-exception');
    await stillServing();
  });

  test('a missing session variable is named', async () => {
    const r = await postGraphql(s.url, { query: '{ author { id } }' }, { 'X-Svc-Role': 'user' });
    assert.equal(r.status, 200);
    assert.match(r.body.errors[0].message, /x-svc-user-id/);
  });

  test('a query nested 50 levels deep answers without a server error', async () => {
    let sel = '{ id }';
    for (let i = 0; i < 25; i++) sel = `{ id articles(limit: 1) { id author ${sel} } }`;
    const r = await postGraphql(s.url, { query: `{ author(limit: 1) ${sel} }` });
    assert.equal(r.status, 200);
    assert.ok(r.body.data || r.body.errors, 'a GraphQL response');
    assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
    await stillServing();
  });

  test('1,000 aliases of a root field', async () => {
    const fields = Array.from({ length: 1000 }, (_, i) => `a${i}: author(where: {id: {_eq: 1}}) { id }`).join('\n');
    const r = await postGraphql(s.url, { query: `{ ${fields} }` });
    assert.equal(r.status, 200);
    assert.equal(Object.keys(r.body.data).length, 1000);
    assert.deepEqual(r.body.data.a999, [{ id: 1 }]);
  });

  test('unknown and mistyped variables are validation errors', async () => {
    const undeclared = await postGraphql(s.url, { query: '{ author(where: {id: {_eq: $x}}) { id } }', variables: { x: 1 } });
    assert.equal(undeclared.body.errors[0].extensions.code, 'validation-failed');
    const wrongType = await postGraphql(s.url, { query: 'query ($x: Int) { author(where: {id: {_eq: $x}}) { id } }', variables: { x: { a: 1 } } });
    assert.equal(wrongType.body.errors[0].extensions.code, 'validation-failed');
    // a string that is no integer is refused before any SQL (issue 28: variables coerced against their type)
    const badString = await postGraphql(s.url, { query: 'query ($x: Int) { author(where: {id: {_eq: $x}}) { id } }', variables: { x: 'one' } });
    assert.deepEqual(badString.body.errors[0], {
      extensions: { path: '$.variableValues.x', code: 'validation-failed' },
      message: 'expected Int32, encountered String "one"',
    });
    const missing = await postGraphql(s.url, { query: 'query ($x: Int!) { author(where: {id: {_eq: $x}}) { id } }', variables: {} });
    assert.equal(missing.body.errors[0].extensions.code, 'validation-failed');
    const notObject = await postGraphql(s.url, { query: '{ author { id } }', variables: 'nope' });
    assert.ok(notObject.status < 500);
    await stillServing();
  });

  test('malformed requests are 4xx or GraphQL errors, never 500', async () => {
    for (const body of ['{not json', '[]', '{"query": 42}', '{}', '{"query": "{ author { id "}', '{"query": "{ nope }"}']) {
      const r = await postGraphql(s.url, body);
      assert.ok(r.status < 500, `${body} → ${r.status}`);
    }
  });

  test('a table dropped behind the engine: clear error, then inconsistent after reload', async () => {
    const c = new pg.Client({ connectionString: s.databaseUrl });
    await c.connect();
    try {
      await c.query('drop table comment');
    } finally {
      await c.end();
    }
    const r = await postGraphql(s.url, { query: '{ comment { id } }' });
    assert.equal(r.status, 200);
    // Hasura's mapping of an undefined table at execution time
    assert.deepEqual(
      r.body.errors.map((e: { message: string; extensions: { code: string } }) => [e.extensions.code, e.message]),
      [['unexpected', 'database query error']],
    );
    await stillServing();
    await query(s.url, { type: 'reload_metadata', args: {} });
    const inc = await query(s.url, { type: 'get_inconsistent_metadata', args: {} });
    assert.equal(inc.is_consistent, false);
    assert.ok(inc.inconsistent_objects.some((o: { type: string }) => o.type === 'table'));
    const gone = await postGraphql(s.url, { query: '{ comment { id } }' });
    assert.equal(gone.body.errors[0].extensions.code, 'validation-failed');
    await stillServing();
  });
});

describe('websocket transport (graphql-ws)', () => {
  test('connection_init → ack, start → data → complete, headers from the init payload', async () => {
    const ws = new WebSocket(s.url.replace('http', 'ws') + '/v1/graphql', 'graphql-ws');
    const messages: any[] = [];
    const waiters: Array<() => void> = [];
    ws.on('message', (d) => {
      messages.push(JSON.parse(d.toString()));
      waiters.splice(0).forEach((w) => w());
    });
    const next = async (type: string) => {
      const deadline = Date.now() + 5000;
      for (;;) {
        const i = messages.findIndex((m) => m.type === type);
        if (i >= 0) return messages.splice(i, 1)[0];
        if (Date.now() > deadline) throw new Error(`no ${type} message`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 100);
        });
      }
    };
    await new Promise((r, j) => {
      ws.once('open', r);
      ws.once('error', j);
    });
    try {
      ws.send(JSON.stringify({ type: 'connection_init', payload: { headers: user } }));
      await next('connection_ack');
      ws.send(JSON.stringify({ id: '1', type: 'start', payload: { query: '{ author { name articles { title } } }' } }));
      const data = await next('data');
      assert.equal(data.id, '1');
      assert.deepEqual(data.payload, { data: { author: [{ name: 'a1', articles: [{ title: 't1' }] }] } });
      assert.equal((await next('complete')).id, '1');
    } finally {
      ws.close();
    }
  });
});
