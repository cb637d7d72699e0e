/**
 * Asynchronous actions against a real handler on 127.0.0.1 (issue 16): the mutation answers the
 * action id at once; the delivery worker calls the handler; `<action>(id)` answers the output
 * (with its relationships) by query and by subscription, to the same session only; a failing
 * handler lands in `errors`; two `svc` processes on one database never call the handler twice for
 * one action id.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import WebSocket from 'ws';
import { createTestDatabase, sql, type TestDatabase } from '../helpers/db.js';
import { cleanEnv, startSvcProcess, type SvcProcess } from '../helpers/process.js';
import { postGraphql, query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';
import { Receiver, type Received, type Reply } from '../helpers/receiver.js';

let s: TestServer;
let rx: Receiver;

const admin = { 'x-svc-role': 'admin' };
const user = (id: string) => ({ 'x-svc-role': 'user', 'x-svc-user-id': id });
const gql = (q: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = admin) =>
  postGraphql(s.url, { query: q, variables }, headers);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function handler(r: Received): Reply {
  if (r.path === '/fail') return { status: 400, body: '{"message": "cannot make it", "code": "invalid"}' };
  if (r.path === '/bad') return { status: 200, body: '{"wrong": 1}' };
  return { status: 200, body: JSON.stringify({ id: r.body.input.n }), delayMs: 200 };
}

/** the setup of both test groups (one engine, or two processes on one database) */
function setup(handlerUrl: string) {
  return {
    type: 'bulk',
    args: [
      {
        type: 'run_sql',
        args: {
          sql: "create table person (id serial primary key, name text not null, owner_id int not null); insert into person (name, owner_id) values ('ann', 1), ('bob', 2);",
        },
      },
      { type: 'track_table', args: { table: 'person' } },
      {
        type: 'create_select_permission',
        args: { table: 'person', role: 'user', permission: { columns: ['id', 'name'], filter: { owner_id: { _eq: 'X-Svc-User-Id' } } } },
      },
      {
        type: 'set_custom_types',
        args: {
          objects: [
            {
              name: 'Made',
              fields: [{ name: 'id', type: 'Int!' }],
              relationships: [{ name: 'person', type: 'object', remote_table: 'person', field_mapping: { id: 'id' } }],
            },
          ],
        },
      },
      {
        type: 'create_action',
        args: {
          name: 'make',
          definition: { kind: 'asynchronous', arguments: [{ name: 'n', type: 'Int!' }], output_type: 'Made', handler: `${handlerUrl}/make` },
        },
      },
      {
        type: 'create_action',
        args: {
          name: 'make_fail',
          definition: { kind: 'asynchronous', arguments: [{ name: 'n', type: 'Int' }], output_type: 'Made', handler: `${handlerUrl}/fail` },
        },
      },
      { type: 'create_action', args: { name: 'make_bad', definition: { kind: 'asynchronous', output_type: 'Made', handler: `${handlerUrl}/bad` } } },
      { type: 'create_action_permission', args: { action: 'make', role: 'user' } },
      { type: 'create_action_permission', args: { action: 'make_fail', role: 'user' } },
    ],
  };
}

before(async () => {
  rx = await new Receiver().start();
  s = await startTestServer({ eventsFetchInterval: 100 });
  await query(s.url, setup(rx.url), admin);
});

after(async () => {
  await s?.close();
  await rx?.close();
});

beforeEach(() => {
  rx.reset(handler);
});

const STATUS_QUERY = 'query ($id: uuid!) { make(id: $id) { __typename id created_at output { __typename id person { name } } errors } }';

async function create(headers: Record<string, string>, n: number, field = 'make'): Promise<string> {
  const r = await gql(`mutation { ${field}(n: ${n}) }`, {}, headers);
  const id = r.body.data?.[field];
  assert.match(id, UUID, JSON.stringify(r.body));
  return id;
}

describe('one engine', () => {
  test('the mutation answers the id at once; the query answers the output with its relationships, to the same user only', async () => {
    const id = await create(user('1'), 1);
    // answered before the handler did (it takes 200 ms)
    const early = await gql(STATUS_QUERY, { id }, user('1'));
    assert.equal(early.body.data.make.id, id);
    const done = await waitFor(
      'the output',
      async () => {
        const r = await gql(STATUS_QUERY, { id }, user('1'));
        return r.body.data?.make?.output ? r.body : undefined;
      },
      15_000,
    );
    assert.equal(done.data.make.__typename, 'make');
    assert.equal(typeof done.data.make.created_at, 'string');
    assert.deepEqual(done.data.make.output, { __typename: 'Made', id: 1, person: { name: 'ann' } });
    assert.equal(done.data.make.errors, null);
    // the handler got the call once, with the caller's session
    assert.equal(rx.requests.length, 1);
    assert.deepEqual(rx.requests[0]!.body, { action: { name: 'make' }, input: { n: 1 }, session_variables: { 'x-svc-role': 'user', 'x-svc-user-id': '1' } });
    // another user: nothing
    assert.deepEqual((await gql(STATUS_QUERY, { id }, user('2'))).body, { data: { make: null } });
    // admin reads every call
    assert.equal((await gql(STATUS_QUERY, { id })).body.data.make.output.id, 1);
    const [row] = await sql(
      s.databaseUrl,
      'select status, action_name, input_payload, session_variables, errors from svc_catalog.hdb_action_log where id = $1',
      [id],
    );
    assert.deepEqual(row, {
      status: 'completed',
      action_name: 'make',
      input_payload: { n: 1 },
      session_variables: { 'x-svc-role': 'user', 'x-svc-user-id': '1' },
      errors: null,
    });
  });

  test('a failing handler lands in errors', async () => {
    const id = await create(user('1'), 5, 'make_fail');
    const r = await waitFor(
      'the errors',
      async () => {
        const x = await gql('query ($id: uuid!) { make_fail(id: $id) { output { id } errors } }', { id }, user('1'));
        return x.body.data?.make_fail?.errors ? x.body : undefined;
      },
      15_000,
    );
    assert.deepEqual(r.data.make_fail, { output: null, errors: { path: '$', error: 'cannot make it', code: 'invalid' } });
    const [row] = await sql(s.databaseUrl, 'select status from svc_catalog.hdb_action_log where id = $1', [id]);
    assert.equal(row!.status, 'error');
  });

  test('a response that does not fit the output type lands in errors', async () => {
    const r = await gql('mutation { make_bad }');
    const id = r.body.data.make_bad;
    const done = await waitFor(
      'the errors',
      async () => (await gql('query ($id: uuid!) { make_bad(id: $id) { output { id } errors } }', { id })).body.data?.make_bad?.errors,
      15_000,
    );
    assert.deepEqual(done, { path: '$', error: 'unexpected fields in webhook response: wrong', code: 'unexpected' });
  });

  test('the subscription sends the output when it arrives', async () => {
    const id = await create(user('1'), 2);
    const ws = new WebSocket(s.url.replace('http', 'ws') + '/v1/graphql', 'graphql-ws');
    const messages: any[] = [];
    ws.on('message', (d) => messages.push(JSON.parse(d.toString())));
    try {
      await new Promise<void>((res, rej) => {
        ws.once('open', () => res());
        ws.once('error', rej);
      });
      ws.send(JSON.stringify({ type: 'connection_init', payload: { headers: user('1') } }));
      ws.send(
        JSON.stringify({
          type: 'start',
          id: '1',
          payload: { query: 'subscription ($id: uuid!) { make(id: $id) { output { id person { name } } errors } }', variables: { id } },
        }),
      );
      const data = await waitFor(
        'a data message with the output',
        async () => messages.find((m) => m.type === 'data' && m.payload?.data?.make?.output),
        15_000,
      );
      assert.deepEqual(data.payload, { data: { make: { output: { id: 2, person: null }, errors: null } } });
      assert.ok(!messages.some((m) => m.type === 'error' || m.payload?.errors), JSON.stringify(messages));
    } finally {
      ws.close();
    }
  });

  test('drop_action with clear_data false keeps the calls; by default they go', async () => {
    await query(
      s.url,
      { type: 'create_action', args: { name: 'kept', definition: { kind: 'asynchronous', output_type: 'Made', handler: `${rx.url}/make` } } },
      admin,
    );
    await query(
      s.url,
      { type: 'create_action', args: { name: 'cleared', definition: { kind: 'asynchronous', output_type: 'Made', handler: `${rx.url}/make` } } },
      admin,
    );
    for (const f of ['kept', 'cleared']) assert.match((await gql(`mutation { ${f} }`)).body.data[f], UUID);
    await query(s.url, { type: 'drop_action', args: { name: 'kept', clear_data: false } }, admin);
    await query(s.url, { type: 'drop_action', args: { name: 'cleared' } }, admin);
    const rows = await sql(s.databaseUrl, "select action_name from svc_catalog.hdb_action_log where action_name in ('kept', 'cleared')");
    assert.deepEqual(rows, [{ action_name: 'kept' }]);
  });
});

describe('two processes', () => {
  let db: TestDatabase;
  const procs: SvcProcess[] = [];

  before(async () => {
    db = await createTestDatabase();
  });

  after(async () => {
    for (const p of procs) await p.stop(5_000).catch(() => undefined);
    await db?.drop();
  });

  test('never call the handler twice for one action id', { timeout: 180_000 }, async (t) => {
    const env = cleanEnv({
      SVC_GRAPHQL_DATABASE_URL: db.url,
      SVC_GRAPHQL_ENABLED_LOG_TYPES: 'startup',
      SVC_GRAPHQL_EVENTS_FETCH_INTERVAL: '50',
      SVC_GRAPHQL_PG_CONNECTIONS: '5',
      SVC_GRAPHQL_GRACEFUL_SHUTDOWN_TIMEOUT: '1',
    });
    const a = await startSvcProcess([], env);
    procs.push(a.proc);
    await query(a.url, setup(rx.url), admin);
    const b = await startSvcProcess([], env);
    procs.push(b.proc);
    rx.respond = (r) => ({ status: 200, body: JSON.stringify({ id: r.body.input.n }), delayMs: 20 });
    const N = 60;
    // calls queued through both processes (each pokes its own worker; the other polls)
    const ids = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const r = await postGraphql(i % 2 ? a.url : b.url, { query: `mutation { make(n: ${i + 1}) }` }, admin);
        return r.body.data.make as string;
      }),
    );
    assert.equal(new Set(ids).size, N);
    await waitFor(
      'every call completed',
      async () => Number((await sql(db.url, "select count(*)::int as n from svc_catalog.hdb_action_log where status = 'completed'"))[0]!.n) === N,
      60_000,
      100,
    );
    const seen = new Map<number, number>();
    for (const r of rx.requests) seen.set(r.body.input.n, (seen.get(r.body.input.n) ?? 0) + 1);
    t.diagnostic(`${rx.requests.length} handler calls for ${N} action ids`);
    assert.equal(seen.size, N);
    assert.deepEqual(
      [...seen.values()].filter((n) => n > 1),
      [],
    );
    const leased = await sql(db.url, 'select count(*)::int as n from svc_catalog.hdb_action_log where locked_by is not null');
    assert.deepEqual(leased, [{ n: 0 }]);
  });
});
