/**
 * Issue 30 item 1: everything read from a remote is bounded. Real remotes on 127.0.0.1 answer
 * hostile introspections (10,000 nested LIST wrappers, too many types, a reference to a type they do
 * not define, an invalid name, a union without members) and hostile responses (JSON nested 100,000
 * deep): `add_remote_schema` refuses each with a clear error, a remote that turns hostile after it
 * was added is refused at reload and is an inconsistent object after a restart (a second Svc
 * process), and the rest of the API (database fields, other remotes) keeps answering throughout.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildSchema, introspectionFromSchema } from 'graphql';
import { postGraphql, postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';
import { cleanEnv, startSvcProcess } from '../helpers/process.js';
import { helloSchema } from '../fixtures/remote/schemas.js';
import { startGraphQLServer, type GraphQLTestServer, type Route } from '../fixtures/remote/server.js';

let svc: TestServer;
let good: GraphQLTestServer;
let bad: GraphQLTestServer;
const routes: Record<string, Route> = {};

/** An introspection answer of `sdl` with the type of Query.deep replaced by `typeJson` (text). */
function introspectionWith(sdl: string, patch: (schema: any) => void = () => undefined, typeJson?: string): string {
  const intro = introspectionFromSchema(buildSchema(sdl)) as any;
  patch(intro.__schema);
  if (typeJson !== undefined) {
    const q = intro.__schema.types.find((t: any) => t.name === 'Query');
    q.fields.find((f: any) => f.name === 'deep').type = '@@TYPE@@';
  }
  const text = JSON.stringify({ data: intro });
  return typeJson === undefined ? text : text.replace('"@@TYPE@@"', typeJson);
}

const nestedList = (n: number) => `${'{"kind":"LIST","name":null,"ofType":'.repeat(n)}{"kind":"SCALAR","name":"Int","ofType":null}${'}'.repeat(n)}`;

const addRemote = (name: string, url: string) =>
  postQuery(svc.url, { type: 'add_remote_schema', args: { name, definition: { url, forward_client_headers: false } } });

/** The rest of the API still answers: a database field and the healthy remote's field in one request. */
async function apiWorks(url = svc.url): Promise<void> {
  const r = await postGraphql(url, { query: '{ item { id } hello }' });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { data: { item: [{ id: 1 }], hello: 'Hello World' } }, r.text);
}

before(async () => {
  svc = await startTestServer();
  good = await startGraphQLServer({ '/graphql': { schema: helloSchema() } });
  bad = await startGraphQLServer(routes);
  await query(svc.url, {
    type: 'bulk',
    args: [
      { type: 'run_sql', args: { sql: 'create table item (id int primary key); insert into item values (1);' } },
      { type: 'track_table', args: { schema: 'public', name: 'item' } },
    ],
  });
  const r = await addRemote('good', `${good.url}/graphql`);
  assert.equal(r.status, 200, r.text);
});

after(async () => {
  await svc?.close();
  await Promise.all([good?.close(), bad?.close()]);
});

describe('hostile introspections are refused at add time, the API keeps working', () => {
  const cases: Array<[string, () => string, RegExp]> = [
    [
      '10,000 nested LIST wrappers',
      () => introspectionWith('type Query { deep: Int }', undefined, nestedList(10_000)),
      /nested deeper than|list\/non-null wrappers/,
    ],
    ['40 nested LIST wrappers', () => introspectionWith('type Query { deep: Int }', undefined, nestedList(40)), /more than 32 list\/non-null wrappers/],
    [
      '10,001 types',
      () =>
        introspectionWith('type Query { deep: Int }', (s) => {
          for (let i = 0; i < 10_001; i++)
            s.types.push({
              kind: 'SCALAR',
              name: `S${i}`,
              description: null,
              specifiedByURL: null,
              fields: null,
              inputFields: null,
              interfaces: null,
              enumValues: null,
              possibleTypes: null,
            });
        }),
      /types; at most 10000 are accepted/,
    ],
    [
      'a reference to a type it does not define',
      () => introspectionWith('type Query { deep: Int }', undefined, '{"kind":"OBJECT","name":"Nowhere","ofType":null}'),
      /refers to "Nowhere", which the remote schema does not define/,
    ],
    [
      'a LIST without ofType',
      () => introspectionWith('type Query { deep: Int }', undefined, '{"kind":"LIST","name":null,"ofType":null}'),
      /is not a type reference/,
    ],
    [
      'a field name that is not a GraphQL name',
      () =>
        introspectionWith('type Query { deep: Int }', (s) => {
          s.types.find((t: any) => t.name === 'Query').fields[0].name = 'not a name';
        }),
      /"not a name" is not a valid GraphQL name/,
    ],
    [
      'a union without member types',
      () =>
        introspectionWith('type Query { deep: Int u: U } type A { a: Int } union U = A', (s) => {
          s.types.find((t: any) => t.name === 'U').possibleTypes = [];
        }),
      /List of member types cannot be empty for union type 'U'/,
    ],
  ];
  for (const [what, body, message] of cases) {
    test(what, async () => {
      routes['/graphql'] = { raw: body() };
      const r = await addRemote('hostile', `${bad.url}/graphql`);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.code, 'remote-schema-error', r.text);
      assert.match(r.body.error, message);
      await apiWorks();
      const md = await query(svc.url, { type: 'export_metadata', args: {} });
      assert.deepEqual(
        md.remote_schemas.map((x: { name: string }) => x.name),
        ['good'],
        'nothing stored',
      );
    });
  }

  test('an introspection larger than the byte bound', async () => {
    routes['/graphql'] = { raw: `{"data":{"__schema":{"pad":"${'x'.repeat(17 * 1024 * 1024)}"}}}` };
    const r = await addRemote('hostile', `${bad.url}/graphql`);
    assert.equal(r.status, 400, r.text);
    assert.match(r.body.error, /larger than 16777216 bytes/);
    await apiWorks();
  });
});

describe('a remote that turns hostile after it was added', () => {
  test('reload refuses it; a restarted instance marks it inconsistent and serves the rest', async () => {
    routes['/flip'] = { raw: introspectionWith('type Query { deep: Int flipped: String }') };
    const added = await addRemote('flip', `${bad.url}/flip`);
    assert.equal(added.status, 200, added.text);
    routes['/flip'] = { raw: introspectionWith('type Query { deep: Int flipped: String }', undefined, nestedList(10_000)) };

    const reload = await postQuery(svc.url, { type: 'reload_remote_schema', args: { name: 'flip' } });
    assert.equal(reload.status, 400, reload.text);
    assert.match(reload.body.error, /nested deeper than/);
    await apiWorks();

    // another process on the same database (a restart): the remote is fetched anew and refused
    const other = await startSvcProcess([], cleanEnv({ SVC_GRAPHQL_DATABASE_URL: svc.databaseUrl, SVC_GRAPHQL_ENABLED_LOG_TYPES: 'startup' }));
    try {
      await apiWorks(other.url);
      const inc = await query(other.url, { type: 'get_inconsistent_metadata', args: {} });
      assert.equal(inc.is_consistent, false);
      assert.deepEqual(
        inc.inconsistent_objects.map((o: { type: string; definition: { name: string } }) => [o.type, o.definition.name]),
        [['remote_schema', 'flip']],
      );
      assert.match(inc.inconsistent_objects[0].reason, /nested deeper than/);
    } finally {
      await other.proc.stop();
    }
    // this instance, on its next rebuild, too
    await query(svc.url, { type: 'reload_metadata', args: {} });
    const inc = await query(svc.url, { type: 'get_inconsistent_metadata', args: {} });
    assert.deepEqual(
      inc.inconsistent_objects.map((o: { definition: { name: string } }) => o.definition.name),
      ['flip'],
    );
    await apiWorks();
    await query(svc.url, { type: 'remove_remote_schema', args: { name: 'flip' } });
  });
});

describe('hostile responses fail their own request only', () => {
  test('a response nested 100,000 deep', async () => {
    routes['/resp'] = { raw: introspectionWith('type Query { deepval: String }') };
    const added = await addRemote('resp', `${bad.url}/resp`);
    assert.equal(added.status, 200, added.text);
    routes['/resp'] = { raw: `{"data":{"deepval":${'['.repeat(100_000)}${']'.repeat(100_000)}}}` };
    const r = await postGraphql(svc.url, { query: '{ deepval }' });
    assert.equal(r.status, 200, r.text);
    assert.match(r.body.errors[0].message, /nested deeper than 256 levels/);
    await apiWorks();
    await query(svc.url, { type: 'remove_remote_schema', args: { name: 'resp' } });
  });
});
