/**
 * Synchronous actions against a real handler on 127.0.0.1 (issue 16): the request body and
 * headers the handler gets (scalar, enum, nested input object and list arguments, literals and
 * variables; configured, environment and forwarded client headers), output projection and
 * validation, relationships from the output to a table under the role's row filter, handler
 * errors (4xx with code, 5xx, timeout, refused connection, non-JSON body) with debugging info only
 * for admin, per-role visibility, and `{{ENV}}` handler templates.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { postGraphql, postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';
import { Receiver, type Received, type Reply } from '../helpers/receiver.js';
import { actionsRemoteJoinSchema } from '../fixtures/remote/schemas.js';
import { startGraphQLServer } from '../fixtures/remote/server.js';

let s: TestServer;
let rx: Receiver;
let closedPort: number;

const admin = { 'x-svc-role': 'admin' };
const user1 = { 'x-svc-role': 'user', 'x-svc-user-id': '1' };
const run = (body: unknown) => query(s.url, body, admin);
const gql = (q: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = admin) =>
  postGraphql(s.url, { query: q, variables }, headers);

/** the person ids' owners, as the handler of `people` answers them */
const OWNER: Record<number, number> = { 1: 1, 2: 2, 3: 1 };

function handler(r: Received): Reply {
  const input = r.body?.input ?? {};
  switch (r.path) {
    case '/echo':
      return { status: 200, body: JSON.stringify({ id: input.id, note: input.note ?? null, color: input.color ?? null, owner: null }) };
    case '/people':
      return { status: 200, body: JSON.stringify(input.ids.map((id: number) => ({ id, owner: OWNER[id] ?? null }))) };
    default:
      return { status: 200, body: JSON.stringify({ id: 1 }) };
  }
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const action = (name: string, definition: Record<string, unknown>) => ({ type: 'create_action', args: { name, definition } });

before(async () => {
  rx = await new Receiver().start();
  closedPort = await freePort();
  process.env.SVC_TEST_ACTION_HEADER = 'from-env';
  process.env.SVC_TEST_ACTION_BASE = rx.url;
  s = await startTestServer();
  await run({
    type: 'bulk',
    args: [
      {
        type: 'run_sql',
        args: {
          sql: "create table person (id serial primary key, name text not null, owner_id int not null); insert into person (name, owner_id) values ('ann', 1), ('bob', 2), ('cid', 1);",
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
          scalars: [{ name: 'Payload' }],
          enums: [{ name: 'Color', values: [{ value: 'RED' }, { value: 'GREEN' }] }],
          input_objects: [
            {
              name: 'PersonInput',
              fields: [
                { name: 'name', type: 'String!' },
                { name: 'tags', type: '[String!]' },
              ],
            },
            {
              name: 'Wrapper',
              fields: [
                { name: 'person', type: 'PersonInput!' },
                { name: 'color', type: 'Color' },
              ],
            },
          ],
          objects: [
            {
              name: 'PersonRef',
              fields: [
                { name: 'id', type: 'Int!' },
                { name: 'note', type: 'String' },
                { name: 'color', type: 'Color' },
                { name: 'owner', type: 'Int' },
              ],
              relationships: [
                { name: 'person', type: 'object', remote_table: 'person', field_mapping: { id: 'id' } },
                { name: 'same_owner', type: 'array', remote_table: 'person', field_mapping: { owner: 'owner_id' } },
              ],
            },
          ],
        },
      },
      action('echo_person', {
        arguments: [
          { name: 'id', type: 'Int!' },
          { name: 'note', type: 'String' },
          { name: 'color', type: 'Color' },
          { name: 'wrapper', type: 'Wrapper' },
          { name: 'ids', type: '[Int!]' },
        ],
        output_type: 'PersonRef',
        handler: '{{SVC_TEST_ACTION_BASE}}/echo',
      }),
      action('people', { type: 'query', arguments: [{ name: 'ids', type: '[Int!]!' }], output_type: '[PersonRef]', handler: `${rx.url}/people` }),
      action('probe', {
        arguments: [
          { name: 'n', type: 'Int' },
          { name: 'extra', type: 'Payload' },
        ],
        output_type: 'PersonRef',
        handler: `${rx.url}/probe`,
      }),
      action('slow', { output_type: 'PersonRef', handler: `${rx.url}/slow`, timeout: 1 }),
      action('unreachable', { output_type: 'PersonRef', handler: `http://127.0.0.1:${closedPort}/x` }),
      action('with_headers', {
        output_type: 'PersonRef',
        handler: `${rx.url}/headers`,
        headers: [
          { name: 'x-static', value: 'v' },
          { name: 'x-env', value_from_env: 'SVC_TEST_ACTION_HEADER' },
        ],
        forward_client_headers: true,
      }),
      { type: 'create_action_permission', args: { action: 'people', role: 'user' } },
      { type: 'create_action_permission', args: { action: 'probe', role: 'user' } },
    ],
  });
});

after(async () => {
  await s?.close();
  await rx?.close();
  delete process.env.SVC_TEST_ACTION_HEADER;
  delete process.env.SVC_TEST_ACTION_BASE;
});

beforeEach(() => {
  rx.reset(handler);
});

describe('the handler call', () => {
  test('scalar, enum, nested input object and list arguments, from literals and variables', async () => {
    const r = await gql(
      `mutation ($note: String, $w: Wrapper) {
        echo_person(id: 7, note: $note, color: GREEN, wrapper: $w, ids: [1, 2]) { __typename id note color }
      }`,
      { note: 'hi', w: { person: { name: 'ann', tags: ['a', 'b'] }, color: 'RED' } },
    );
    assert.deepEqual(r.body, { data: { echo_person: { __typename: 'PersonRef', id: 7, note: 'hi', color: 'GREEN' } } });
    assert.equal(rx.requests.length, 1);
    assert.equal(rx.requests[0]!.path, '/echo');
    assert.deepEqual(rx.requests[0]!.body, {
      action: { name: 'echo_person' },
      input: { id: 7, note: 'hi', color: 'GREEN', wrapper: { person: { name: 'ann', tags: ['a', 'b'] }, color: 'RED' }, ids: [1, 2] },
      session_variables: { 'x-svc-role': 'admin' },
    });
    // the same query with other values (the plan is cached; the values are not)
    const again = await gql('mutation ($note: String, $w: Wrapper) { echo_person(id: 8, note: $note, color: GREEN, wrapper: $w, ids: [1, 2]) { id note } }', {
      note: null,
      w: null,
    });
    assert.deepEqual(again.body, { data: { echo_person: { id: 8, note: null } } });
    assert.deepEqual(rx.requests[1]!.body.input, { id: 8, note: null, color: 'GREEN', wrapper: null, ids: [1, 2] });
  });

  test('session variables (lower-cased) are sent; an argument not given is left out', async () => {
    const r = await gql('mutation { probe { id } }', {}, { 'X-Svc-Role': 'user', 'X-Svc-User-Id': '1', 'X-Svc-Org': 'o' });
    assert.deepEqual(r.body, { data: { probe: { id: 1 } } });
    assert.deepEqual(rx.requests[0]!.body, {
      action: { name: 'probe' },
      input: {},
      session_variables: { 'x-svc-role': 'user', 'x-svc-user-id': '1', 'x-svc-org': 'o' },
    });
  });

  test('a custom scalar takes any JSON value, literal or variable', async () => {
    const r = await gql('mutation ($p: Payload) { a: probe(extra: {x: [1, "y"], z: null}) { id } b: probe(extra: $p) { id } }', { p: [{ deep: true }] });
    assert.deepEqual(r.body, { data: { a: { id: 1 }, b: { id: 1 } } });
    assert.deepEqual(
      rx.requests.map((x) => x.body.input),
      [{ extra: { x: [1, 'y'], z: null } }, { extra: [{ deep: true }] }],
    );
  });

  test('configured headers (value and value_from_env) and forwarded client headers, minus hop-by-hop ones and the admin secret', async () => {
    const r = await gql(
      'mutation { with_headers { id } }',
      {},
      { ...admin, 'x-custom': 'c', 'proxy-authorization': 'p', 'x-static': 'from-client', 'x-svc-admin-secret': 'nope' },
    );
    assert.deepEqual(r.body, { data: { with_headers: { id: 1 } } });
    const h = rx.requests[0]!.headers;
    assert.equal(h['x-static'], 'v');
    assert.equal(h['x-env'], 'from-env');
    assert.equal(h['x-custom'], 'c');
    assert.equal(h['x-svc-role'], 'admin');
    assert.equal(h['proxy-authorization'], undefined);
    assert.equal(h['x-svc-admin-secret'], undefined);
    assert.equal(h['content-type'], 'application/json');
    assert.equal(h['content-length'], String(Buffer.byteLength(rx.requests[0]!.raw)));
  });

  test('a handler URL template ({{ENV}}) is resolved; an unset variable makes create_action fail, nothing stored', async () => {
    const bad = await postQuery(s.url, action('templated', { output_type: 'PersonRef', handler: '{{SVC_TEST_UNSET_ACTION_BASE}}/x' }), admin);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'constraint-violation');
    assert.match(bad.body.error, /environment variable "SVC_TEST_UNSET_ACTION_BASE" not set/);
    const md = await run({ type: 'export_metadata', args: {} });
    assert.ok(!md.actions.some((a: { name: string }) => a.name === 'templated'));
  });
});

describe('the output', () => {
  test("a query action with a list output: relationships to a table, in one statement, under the role's row filter", async () => {
    const q = 'query { people(ids: [1, 2, 3]) { id person { name } same_owner(order_by: {id: asc}) { id name } } }';
    const r = await gql(q, {}, user1);
    assert.deepEqual(r.body, {
      data: {
        people: [
          {
            id: 1,
            person: { name: 'ann' },
            same_owner: [
              { id: 1, name: 'ann' },
              { id: 3, name: 'cid' },
            ],
          },
          // person 2 belongs to user 2: not visible to user 1
          { id: 2, person: null, same_owner: [] },
          {
            id: 3,
            person: { name: 'cid' },
            same_owner: [
              { id: 1, name: 'ann' },
              { id: 3, name: 'cid' },
            ],
          },
        ],
      },
    });
    const asAdmin = await gql('query { people(ids: [2]) { id person { name } } }');
    assert.deepEqual(asAdmin.body, { data: { people: [{ id: 2, person: { name: 'bob' } }] } });
  });

  test('with database fields in the same query, every field answered in order', async () => {
    const r = await gql('query { a: person(where: {id: {_eq: 1}}) { name } people(ids: [3]) { id } __typename b: person_by_pk(id: 2) { name } }');
    assert.deepEqual(r.body, { data: { a: [{ name: 'ann' }], people: [{ id: 3 }], __typename: 'query_root', b: { name: 'bob' } } });
  });

  test('a query whose one action sits beside __typename only: every field in order, one handler call', async () => {
    const r = await gql('query { __typename people(ids: [3, 2]) { id __typename } t: __typename }');
    assert.deepEqual(r.body, {
      data: {
        __typename: 'query_root',
        people: [
          { id: 3, __typename: 'PersonRef' },
          { id: 2, __typename: 'PersonRef' },
        ],
        t: 'query_root',
      },
    });
    assert.equal(rx.requests.length, 1);
    // two actions in one query: both called, answered in order
    const two = await gql('query { a: people(ids: [1]) { id } b: people(ids: [2]) { id } }');
    assert.deepEqual(two.body, { data: { a: [{ id: 1 }], b: [{ id: 2 }] } });
    assert.equal(rx.requests.length, 3);
    // a handler's error is the whole response (the other fields are not answered)
    rx.respond = () => ({ status: 422, body: '{"message": "no such people", "code": "bad-people"}' });
    const failed = await gql('query { __typename people(ids: [1]) { id } }');
    assert.deepEqual(failed.body, { errors: [{ extensions: { path: '$', code: 'bad-people' }, message: 'no such people' }] });
  });

  test('a mutation with an action and a database mutation runs both in order', async () => {
    const r = await gql('mutation { probe { id } insert_person_one(object: {name: "dan", owner_id: 3}) { name } }');
    assert.deepEqual(r.body, { data: { probe: { id: 1 }, insert_person_one: { name: 'dan' } } });
    await run({ type: 'run_sql', args: { sql: "delete from person where name = 'dan'" } });
  });

  const failing = async (reply: Reply, expected: { message: string | RegExp; code: string }) => {
    rx.respond = () => reply;
    const r = await gql('mutation { probe { id } }');
    assert.equal(r.status, 200);
    assert.equal(r.body.data, undefined);
    const e = r.body.errors[0];
    if (typeof expected.message === 'string') assert.equal(e.message, expected.message);
    else assert.match(e.message, expected.message);
    assert.equal(e.extensions.code, expected.code);
    assert.equal(e.extensions.path, '$');
    return e;
  };

  test('a missing non-null field, a null one, an unexpected field: errors naming the field', async () => {
    const e = await failing({ status: 200, body: '{"note": "x"}' }, { message: 'field "id" expected in webhook response, but not found', code: 'unexpected' });
    // debugging info (admin): the request and the response
    assert.equal(e.extensions.internal.error, 'unexpected response');
    assert.equal(e.extensions.internal.response.status, 200);
    assert.deepEqual(e.extensions.internal.response.body, { note: 'x' });
    assert.deepEqual(e.extensions.internal.request.body, { action: { name: 'probe' }, input: {}, session_variables: { 'x-svc-role': 'admin' } });
    assert.equal(e.extensions.internal.request.url, `${rx.url}/probe`);
    await failing({ status: 200, body: '{"id": null}' }, { message: 'expecting not null value for field "id"', code: 'unexpected' });
    await failing(
      { status: 200, body: '{"id": 1, "extra": 2, "more": 3}' },
      { message: 'unexpected fields in webhook response: extra, more', code: 'unexpected' },
    );
    await failing({ status: 200, body: '[{"id": 1}]' }, { message: 'expecting object for action webhook response but got array', code: 'unexpected' });
    await failing({ status: 200, body: '"text"' }, { message: 'expecting object or array of objects for action webhook response', code: 'parse-failed' });
    await failing({ status: 200, body: 'not json' }, { message: /^not a valid json response from webhook/, code: 'unexpected' });
  });

  test('a list output type wants an array', async () => {
    rx.respond = () => ({ status: 200, body: '{"id": 1}' });
    const r = await gql('query { people(ids: [1]) { id } }');
    assert.equal(r.body.errors[0].message, 'expecting array for action webhook response but got object');
  });
});

describe('remote relationships under the output', () => {
  test('a list output → table relationship → remote relationship: one remote request for all rows', async () => {
    const remote = await startGraphQLServer({ '/graphql': { schema: actionsRemoteJoinSchema() } });
    try {
      await run({ type: 'add_remote_schema', args: { name: 'messages', definition: { url: `${remote.url}/graphql` } } });
      await run({
        type: 'create_remote_relationship',
        args: { name: 'welcome', table: 'person', svc_fields: ['id'], remote_schema: 'messages', remote_field: { message: { arguments: { id: '$id' } } } },
      });
      remote.reset();
      const r = await gql('query { people(ids: [1, 2, 3]) { id person { name welcome { name msg } } } }');
      assert.deepEqual(r.body, {
        data: {
          people: [
            { id: 1, person: { name: 'ann', welcome: { name: 'Clarke', msg: 'Welcome to the team, Clarke' } } },
            { id: 2, person: { name: 'bob', welcome: { name: 'Alice', msg: 'Welcome to the team, Alice' } } },
            { id: 3, person: { name: 'cid', welcome: null } },
          ],
        },
      });
      assert.equal(remote.count('/graphql'), 1, 'one remote request for every row of the output');
      // a remote root field beside an action is refused, not half-answered
      const mixed = await gql('query { people(ids: [1]) { id } hello }');
      assert.equal(mixed.body.errors[0].extensions.code, 'not-supported');
    } finally {
      await run({ type: 'delete_remote_relationship', args: { name: 'welcome', table: 'person' } });
      await run({ type: 'remove_remote_schema', args: { name: 'messages' } });
      await remote.close();
    }
  });
});

describe('handler errors', () => {
  test('4xx with {message, code}: that message and code, nothing internal', async () => {
    rx.respond = () => ({ status: 422, body: '{"message": "no such thing", "code": "bad-thing"}' });
    const r = await gql('mutation { probe { id } }');
    assert.deepEqual(r.body, { errors: [{ extensions: { path: '$', code: 'bad-thing' }, message: 'no such thing' }] });
    rx.respond = () => ({ status: 400, body: '{"message": "plain"}' });
    const plain = await gql('mutation { probe { id } }', {}, user1);
    assert.deepEqual(plain.body, { errors: [{ extensions: { path: '$', code: 'unexpected' }, message: 'plain' }] });
  });

  test('5xx: an internal error; the response is shown to admin only', async () => {
    rx.respond = () => ({ status: 503, body: '{"secret": "stack trace"}' });
    const asUser = await gql('mutation { probe { id } }', {}, user1);
    assert.deepEqual(asUser.body, { errors: [{ extensions: { path: '$', code: 'unexpected' }, message: 'internal error' }] });
    const asAdmin = await gql('mutation { probe { id } }');
    assert.equal(asAdmin.body.errors[0].message, 'internal error');
    assert.equal(asAdmin.body.errors[0].extensions.internal.response.status, 503);
    assert.deepEqual(asAdmin.body.errors[0].extensions.internal.response.body, { secret: 'stack trace' });
  });

  test('a timeout and a refused connection: errors that do not leak internals to other roles', async () => {
    rx.respond = () => ({ status: 200, body: '{"id": 1}', delayMs: 3_000 });
    const t0 = Date.now();
    const slow = await gql('mutation { slow { id } }');
    assert.ok(Date.now() - t0 < 2_900, 'the 1 s timeout applies');
    assert.equal(slow.body.errors[0].message, 'http exception when calling webhook');
    assert.equal(slow.body.errors[0].extensions.internal.error, 'timed out');
    const refused = await gql('mutation { unreachable { id } }');
    assert.equal(refused.body.errors[0].message, 'http exception when calling webhook');
    assert.match(refused.body.errors[0].extensions.internal.error, /ECONNREFUSED/);
    await run({ type: 'create_action_permission', args: { action: 'unreachable', role: 'user' } });
    const asUser = await gql('mutation { unreachable { id } }', {}, user1);
    assert.deepEqual(asUser.body, { errors: [{ extensions: { path: '$', code: 'unexpected' }, message: 'http exception when calling webhook' }] });
    await run({ type: 'drop_action_permission', args: { action: 'unreachable', role: 'user' } });
  });
});

describe('visibility per role', () => {
  test('a role sees the actions it has a permission for; admin sees all', async () => {
    const denied = await gql('mutation { echo_person(id: 1) { id } }', {}, user1);
    assert.equal(denied.body.errors[0].extensions.code, 'validation-failed');
    assert.equal(rx.requests.length, 0);
    const types = await gql('{ __schema { mutationType { fields { name } } queryType { fields { name } } } }', {}, user1);
    assert.deepEqual(
      types.body.data.__schema.mutationType.fields.map((f: { name: string }) => f.name),
      ['probe'],
    );
    assert.ok(types.body.data.__schema.queryType.fields.some((f: { name: string }) => f.name === 'people'));
    const sub = await gql('{ __schema { subscriptionType { fields { name } } } }', {}, user1);
    assert.ok(!sub.body.data.__schema.subscriptionType.fields.some((f: { name: string }) => f.name === 'people'), 'query actions are not subscriptions');
    const other = await gql('query { people(ids: [1]) { id } }', {}, { 'x-svc-role': 'other' });
    assert.equal(other.body.errors[0].extensions.code, 'validation-failed');
  });
});

describe('--dev-mode', () => {
  test('every role sees the debugging info', async () => {
    const dev = await startTestServer({ devMode: true });
    try {
      await query(
        dev.url,
        {
          type: 'bulk',
          args: [
            { type: 'set_custom_types', args: { objects: [{ name: 'Out', fields: [{ name: 'id', type: 'Int!' }] }] } },
            action('probe', { output_type: 'Out', handler: `${rx.url}/probe` }),
            { type: 'create_action_permission', args: { action: 'probe', role: 'user' } },
          ],
        },
        admin,
      );
      rx.respond = () => ({ status: 500, body: '{"trace": "x"}' });
      const r = await postGraphql(dev.url, { query: 'mutation { probe { id } }' }, user1);
      assert.equal(r.body.errors[0].message, 'internal error');
      assert.deepEqual(r.body.errors[0].extensions.internal.response.body, { trace: 'x' });
      assert.deepEqual(r.body.errors[0].extensions.internal.request.body.session_variables, { 'x-svc-role': 'user', 'x-svc-user-id': '1' });
    } finally {
      await dev.close();
    }
  });
});
