/**
 * Remote schemas against real GraphQL servers (graphql-js over HTTP on 127.0.0.1, ephemeral ports):
 * adding (introspection, conflicts, bad URLs), queries mixing database and remote root fields (one
 * request per remote per GraphQL request), variables, fragments, aliases, enums, interfaces, unions,
 * input objects, custom scalars, mutations, header forwarding, timeouts, remote errors, and a remote
 * that goes down and comes back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildSchema } from 'graphql';
import WebSocket from 'ws';
import { postGraphql, postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';
import { helloSchema, messagesSchema, userSchema } from '../fixtures/remote/schemas.js';
import { startGraphQLServer, type GraphQLTestServer } from '../fixtures/remote/server.js';

let svc: TestServer;
let users: GraphQLTestServer;
let msgs: GraphQLTestServer;
let hello: GraphQLTestServer;

const addRemote = (name: string, url: string, extra: Record<string, unknown> = {}) =>
  postQuery(svc.url, { type: 'add_remote_schema', args: { name, definition: { url, forward_client_headers: false, ...extra } } });
const gql = async (q: string, variables?: Record<string, unknown>, headers: Record<string, string> = {}) =>
  (await postGraphql(svc.url, { query: q, variables }, headers)).body;

before(async () => {
  svc = await startTestServer();
  users = await startGraphQLServer({ '/graphql': { schema: userSchema() } });
  msgs = await startGraphQLServer({ '/': { schema: messagesSchema('MsgUser') } });
  hello = await startGraphQLServer({ '/graphql': { schema: helloSchema(3000) }, '/html': { html: '<html><body>not graphql</body></html>' } });
  await query(svc.url, {
    type: 'bulk',
    args: [
      { type: 'run_sql', args: { sql: "create table article (id serial primary key, title text); insert into article (title) values ('a'), ('b');" } },
      { type: 'track_table', args: { schema: 'public', name: 'article' } },
    ],
  });
  for (const r of [await addRemote('users', `${users.url}/graphql`), await addRemote('messages', msgs.url)]) assert.equal(r.status, 200, r.text);
});

after(async () => {
  await svc?.close();
  await Promise.all([users?.close(), msgs?.close(), hello?.close()]);
});

describe('queries', () => {
  test('database and remote root fields in one request: results in field order, one request per remote', async () => {
    users.reset();
    msgs.reset();
    const r = await gql('{ u: user(id: 2) { id username } article(order_by: {id: asc}) { title } hello other: user(id: 1) { username } }');
    assert.deepEqual(r, { data: { u: { id: 2, username: 'john' }, article: [{ title: 'a' }, { title: 'b' }], hello: 'world', other: { username: 'jane' } } });
    assert.deepEqual(Object.keys(r.data), ['u', 'article', 'hello', 'other']);
    assert.equal(users.count(), 1, 'both user fields in one request');
    assert.equal(msgs.count(), 1);
  });

  test('variables and fragments are resolved: the remote gets a document with the used variables and no fragment spreads', async () => {
    users.reset();
    const r = await gql('query Q($id: Int!, $unused: String) { user(id: $id) { ...U } } fragment U on User { id ... on User { username } }', {
      id: 1,
      unused: 'x',
    });
    assert.deepEqual(r, { data: { user: { id: 1, username: 'jane' } } });
    const sent = users.requests[0]!.body;
    assert.deepEqual(sent.variables, { id: 1 });
    assert.match(sent.query!, /\$id: Int!/);
    assert.doesNotMatch(sent.query!, /\$unused|fragment|\.\.\.U/);
  });

  test('enums, custom scalars, input objects, interfaces and unions pass through', async () => {
    const r = await gql(`{
      messagesByTone(tone: SAD) { id tone meta }
      messages(where: {id: {gt: 1}}, includes: {name: ["alice"]}) { id name }
      communications(id: 1) { id ... on Message { name } }
      search(id: 2) { __typename ... on Message { msg } ... on MsgUser { user_id } }
    }`);
    assert.deepEqual(r, {
      data: {
        messagesByTone: [{ id: 2, tone: 'SAD', meta: { n: 2, tags: ['x'] } }],
        messages: [{ id: 3, name: 'alice' }],
        communications: [{ id: 1, name: 'alice' }],
        search: [
          { __typename: 'Message', msg: 'You lose!' },
          { __typename: 'MsgUser', user_id: 2 },
        ],
      },
    });
    const byVar = await gql('query ($t: Tone!) { messagesByTone(tone: $t) { id } }', { t: 'HAPPY' });
    assert.deepEqual(byVar, { data: { messagesByTone: [{ id: 1 }, { id: 3 }] } });
  });

  test('introspection shows the remote fields and types', async () => {
    const r = await gql('{ __type(name: "Message") { name fields { name } } __schema { queryType { fields { name } } } }');
    assert.deepEqual(r.data.__type.fields.map((f: { name: string }) => f.name).sort(), ['errorMsg', 'id', 'meta', 'msg', 'name', 'tone']);
    const roots = r.data.__schema.queryType.fields.map((f: { name: string }) => f.name);
    for (const n of ['article', 'user', 'messages', 'hello']) assert.ok(roots.includes(n), n);
  });

  test('remote mutations; database and remote mutations in one operation', async () => {
    const r = await gql('mutation { createUser(id: 7, username: "x") { ok user { id username } } insert_article(objects: [{title: "c"}]) { affected_rows } }');
    assert.deepEqual(r, { data: { createUser: { ok: true, user: { id: 7, username: 'x' } }, insert_article: { affected_rows: 1 } } });
    await query(svc.url, { type: 'run_sql', args: { sql: "delete from article where title = 'c'" } });
  });

  test('remote errors come back with their path; data of the other fields stays', async () => {
    const r = await gql('{ message(id: 1) { id errorMsg } article(limit: 1, order_by: {id: asc}) { title } }');
    assert.deepEqual(r.data, { message: { id: 1, errorMsg: null }, article: [{ title: 'a' }] });
    assert.equal(r.errors.length, 1);
    assert.equal(r.errors[0].message, 'intentional-error');
    assert.deepEqual(r.errors[0].path, ['message', 'errorMsg']);
  });

  test('over websockets (graphql-ws): remote queries and mutations; remote subscriptions refused', async () => {
    const ws = new WebSocket(`${svc.url.replace('http', 'ws')}/v1/graphql`, 'graphql-ws');
    const messages: any[] = [];
    const waiters: Array<() => void> = [];
    ws.on('message', (d) => {
      messages.push(JSON.parse(String(d)));
      for (const w of waiters.splice(0)) w();
    });
    const next = async (type: string, id: string) => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const m = messages.find((x) => x.id === id && x.type === type);
        if (m) return m;
        if (Date.now() > deadline) throw new Error(`no ${type} for ${id}: ${JSON.stringify(messages)}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 200);
        });
      }
    };
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    try {
      ws.send(JSON.stringify({ type: 'connection_init', payload: { headers: {} } }));
      ws.send(JSON.stringify({ id: 'q', type: 'start', payload: { query: '{ user(id: 2) { username } article(limit: 1, order_by: {id: asc}) { title } }' } }));
      assert.deepEqual((await next('data', 'q')).payload, { data: { user: { username: 'john' }, article: [{ title: 'a' }] } });
      ws.send(JSON.stringify({ id: 'm', type: 'start', payload: { query: 'mutation { createUser(id: 42, username: "foobar") { user { id username } } }' } }));
      assert.deepEqual((await next('data', 'm')).payload, { data: { createUser: { user: { id: 42, username: 'foobar' } } } });
      ws.send(JSON.stringify({ id: 's', type: 'start', payload: { query: 'subscription { hello }' } }));
      const err = await next('error', 's');
      assert.equal(err.payload.errors?.[0]?.message ?? err.payload.error, 'subscription to remote server is not supported');
    } finally {
      ws.close();
    }
  });

  test('subscriptions to remote fields are not supported', async () => {
    const r = await gql('subscription { hello }');
    assert.deepEqual(r, { errors: [{ extensions: { path: '$', code: 'not-supported' }, message: 'subscription to remote server is not supported' }] });
  });
});

describe('headers and timeouts', () => {
  test('session variables as X-Svc-* headers, configured headers, client headers only when configured', async () => {
    const echo = await startGraphQLServer({ '/a': { schema: helloSchema() }, '/b': { schema: helloSchema() } });
    try {
      process.env.SVC_TEST_REMOTE_TOKEN = 'from-env';
      const fwd = await postQuery(svc.url, {
        type: 'bulk',
        args: [
          { type: 'run_sql', args: { sql: 'create table hdr (id int primary key)' } },
          { type: 'track_table', args: { schema: 'public', name: 'hdr' } },
          { type: 'create_select_permission', args: { table: 'hdr', role: 'user', permission: { columns: ['id'], filter: {} } } },
        ],
      });
      assert.equal(fwd.status, 200, fwd.text);
      // two remotes with the same root fields cannot both be added: one at a time
      let r = await addRemote('echo', `${echo.url}/a`, {
        forward_client_headers: true,
        headers: [
          { name: 'X-Conf', value: 'conf' },
          { name: 'X-Env', value_from_env: 'SVC_TEST_REMOTE_TOKEN' },
          { name: 'Authorization', value: 'Bearer conf' },
        ],
      });
      // the hello schema's root fields clash with the messages remote's `hello` (upstream v1.3: `unexpected`)
      assert.equal(r.status, 400);
      assert.equal(r.body.code, 'unexpected');
      assert.match(r.body.error, /top-level nodes: \[ hello \]/);
      await query(svc.url, { type: 'remove_remote_schema', args: { name: 'messages' } });
      r = await addRemote('echo', `${echo.url}/a`, {
        forward_client_headers: true,
        headers: [
          { name: 'X-Conf', value: 'conf' },
          { name: 'X-Env', value_from_env: 'SVC_TEST_REMOTE_TOKEN' },
          { name: 'Authorization', value: 'Bearer conf' },
        ],
      });
      assert.equal(r.status, 200, r.text);
      echo.reset();
      const body = await gql('{ hello hdr { id } }', undefined, {
        'X-Svc-Role': 'user',
        'X-Svc-User-Id': '42',
        Cookie: 'c=1',
        Authorization: 'Bearer client',
        'X-Custom': 'yes',
      });
      assert.deepEqual(body, { data: { hello: 'Hello World', hdr: [] } });
      const h = echo.requests[0]!.headers;
      assert.equal(h['x-svc-role'], 'user');
      assert.equal(h['x-svc-user-id'], '42');
      assert.equal(h['x-conf'], 'conf');
      assert.equal(h['x-env'], 'from-env');
      assert.equal(h.authorization, 'Bearer conf', 'configured headers win over client headers');
      assert.equal(h.cookie, 'c=1');
      assert.equal(h['x-custom'], 'yes');
      assert.equal(h.host, new URL(echo.url).host, 'Host is never forwarded');
      // not forwarding: only the session variables and configured headers
      await query(svc.url, { type: 'remove_remote_schema', args: { name: 'echo' } });
      assert.equal((await addRemote('echo', `${echo.url}/b`)).status, 200);
      echo.reset();
      await gql('{ hello }', undefined, { 'X-Svc-Role': 'user', 'X-Svc-User-Id': '42', Cookie: 'c=1' });
      const h2 = echo.requests[0]!.headers;
      assert.equal(h2.cookie, undefined);
      assert.equal(h2['x-svc-user-id'], '42');
    } finally {
      await query(svc.url, { type: 'remove_remote_schema', args: { name: 'echo' } }).catch(() => undefined);
      await query(svc.url, { type: 'run_sql', args: { sql: 'drop table if exists hdr cascade', cascade: true } }).catch(() => undefined);
      assert.equal((await addRemote('messages', msgs.url)).status, 200);
      await echo.close();
    }
  });

  test('timeout_seconds bounds a remote call: ResponseTimeout', async () => {
    await query(svc.url, { type: 'remove_remote_schema', args: { name: 'messages' } });
    try {
      assert.equal((await addRemote('slow', `${hello.url}/graphql`, { timeout_seconds: 1 })).status, 200);
      const t0 = Date.now();
      const r = await gql('{ delayedHello(arg: "me") }');
      assert.deepEqual(r, { errors: [{ message: 'ResponseTimeout', extensions: { path: '$', code: 'unexpected' } }] });
      assert.ok(Date.now() - t0 < 2900, 'answered before the remote did');
    } finally {
      await query(svc.url, { type: 'remove_remote_schema', args: { name: 'slow' } });
      assert.equal((await addRemote('messages', msgs.url)).status, 200);
    }
  });
});

describe('bad input and lifecycle', () => {
  const remotes = async () => (await query(svc.url, { type: 'export_metadata', args: {} })).remote_schemas?.map((r: { name: string }) => r.name) ?? [];

  test('unreachable URL, HTML instead of GraphQL, clashing types: 400, nothing stored', async () => {
    const before = await remotes();
    const closed = await startGraphQLServer({});
    const deadUrl = `${closed.url}/graphql`;
    await closed.close();
    let r = await addRemote('dead', deadUrl);
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'remote-schema-error');
    assert.match(r.body.error, /HTTP exception occurred while sending the request to/);
    r = await addRemote('html', `${hello.url}/html`);
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'remote-schema-error');
    // the same user schema again: identical types merge, the root fields clash
    r = await addRemote('users2', `${users.url}/graphql`);
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'unexpected');
    assert.match(r.body.error, /top-level nodes: \[ user, allUsers, createUser \]/);
    // another type of the same name
    const other = await startGraphQLServer({
      '/graphql': { schema: buildSchema('type User { id: String } type Query { otherUser: User }') },
      '/t': { schema: buildSchema('type Query { article: String }') },
    });
    try {
      r = await addRemote('users3', `${other.url}/graphql`);
      assert.equal(r.status, 400);
      assert.equal(r.body.code, 'unexpected');
      assert.match(r.body.error, /types: \[ User \] have mismatch/);
      // a root field of the database schema (upstream v1.3: constraint-violation)
      r = await addRemote('t', `${other.url}/t`);
      assert.equal(r.status, 400);
      assert.equal(r.body.code, 'constraint-violation');
      assert.match(r.body.error, /top-level nodes: \[ article \]/);
    } finally {
      await other.close();
    }
    r = await addRemote('users', `${users.url}/graphql`);
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'already-exists');
    r = await postQuery(svc.url, { type: 'add_remote_schema', args: { name: 'env', definition: { url_from_env: 'SVC_TEST_NO_SUCH_VAR' } } });
    assert.equal(r.status, 400);
    r = await postQuery(svc.url, { type: 'remove_remote_schema', args: { name: 'nope' } });
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'not-exists');
    assert.deepEqual(await remotes(), before);
  });

  test('a table whose root fields clash with a remote cannot be tracked', async () => {
    const r = await postQuery(svc.url, {
      type: 'bulk',
      args: [
        { type: 'run_sql', args: { sql: 'create table "user" (id int primary key)' } },
        { type: 'track_table', args: { schema: 'public', name: 'user' } },
      ],
    });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.code, 'remote-schema-conflicts');
    assert.equal(r.body.error, 'node user already exists in current graphql schema');
    assert.deepEqual(await gql('{ user(id: 1) { username } }'), { data: { user: { username: 'jane' } } });
  });

  test('a remote that goes down becomes inconsistent, the rest keeps serving; reload brings it back', async () => {
    const flaky = await startGraphQLServer({ '/graphql': { schema: userSchema() } });
    await query(svc.url, { type: 'remove_remote_schema', args: { name: 'users' } });
    try {
      assert.equal((await addRemote('flaky', `${flaky.url}/graphql`)).status, 200);
      assert.deepEqual(await gql('{ user(id: 1) { id } }'), { data: { user: { id: 1 } } });
      await flaky.stop();
      // an instance starting while the remote is down: the remote is inconsistent there, the rest serves
      // (the introspection store is the engine's own: the new one has not fetched the remote)
      const second = await startTestServer({ databaseUrl: svc.databaseUrl });
      try {
        const inc2 = await query(second.url, { type: 'get_inconsistent_metadata', args: {} });
        assert.deepEqual(
          inc2.inconsistent_objects.map((o: { type: string; definition: { name: string } }) => [o.type, o.definition.name]),
          [['remote_schema', 'flaky']],
        );
        assert.deepEqual((await postGraphql(second.url, { query: '{ article(limit: 1, order_by: {id: asc}) { title } hello }' })).body, {
          data: { article: [{ title: 'a' }], hello: 'world' },
        });
      } finally {
        await second.close();
      }
      // the remote call fails: an error, not a crash
      const down = await gql('{ user(id: 1) { id } }');
      assert.equal(down.errors[0].extensions.code, 'unexpected');
      assert.equal((await postQuery(svc.url, { type: 'reload_metadata', args: { reload_remote_schemas: true } })).status, 200);
      const inc = await query(svc.url, { type: 'get_inconsistent_metadata', args: {} });
      assert.equal(inc.is_consistent, false);
      assert.equal(inc.inconsistent_objects[0].type, 'remote_schema');
      assert.equal(inc.inconsistent_objects[0].definition.name, 'flaky');
      // database fields and the other remote keep serving; the remote's fields are gone
      assert.deepEqual((await gql('{ article(limit: 1, order_by: {id: asc}) { title } hello }')).data, { article: [{ title: 'a' }], hello: 'world' });
      assert.match((await gql('{ user(id: 1) { id } }')).errors[0].message, /not found in type: 'query_root'/);
      // reload_remote_schema while still down: 400
      assert.equal((await postQuery(svc.url, { type: 'reload_remote_schema', args: { name: 'flaky' } })).status, 400);
      await flaky.start();
      assert.equal((await postQuery(svc.url, { type: 'reload_remote_schema', args: { name: 'flaky' } })).status, 200);
      assert.equal((await query(svc.url, { type: 'get_inconsistent_metadata', args: {} })).is_consistent, true);
      assert.deepEqual(await gql('{ user(id: 2) { username } }'), { data: { user: { username: 'john' } } });
    } finally {
      await query(svc.url, { type: 'remove_remote_schema', args: { name: 'flaky' } }).catch(() => undefined);
      assert.equal((await addRemote('users', `${users.url}/graphql`)).status, 200);
      await flaky.close();
    }
  });

  test('export_metadata / replace_metadata keep remote schemas (and start-up re-introspects)', async () => {
    const md = await query(svc.url, { type: 'export_metadata', args: {} });
    assert.deepEqual(md.remote_schemas.map((r: { name: string }) => r.name).sort(), ['messages', 'users']);
    assert.deepEqual(await query(svc.url, { type: 'replace_metadata', args: md }), { message: 'success' });
    assert.deepEqual(await gql('{ user(id: 2) { username } hello }'), { data: { user: { username: 'john' }, hello: 'world' } });
  });
});
