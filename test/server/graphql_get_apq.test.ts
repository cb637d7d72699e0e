/**
 * Issue 37, items 1 and 2: GraphQL over HTTP GET (urql's default client, the media types of the
 * draft, 405 for a mutation) and Apollo's automatic persisted queries over POST and GET (the
 * requests Apollo's persisted-query link sends), on a real server and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, fetchExchange, gql } from '@urql/core';
import { PersistedQueryStore } from '../../src/server/persistedQueries.js';
import { sha256Hex } from '../../src/core/hash.js';
import { sql } from '../helpers/db.js';
import { query, startTestServer, type TestServer } from '../helpers/server.js';

const SETUP = {
  type: 'bulk',
  args: [
    { type: 'run_sql', args: { sql: "create table item (id int primary key, name text); insert into item values (1, 'a'), (2, 'b');" } },
    { type: 'track_table', args: { name: 'item' } },
    { type: 'create_select_permission', args: { table: 'item', role: 'user', permission: { columns: ['id', 'name'], filter: {} } } },
  ],
};

async function get(url: string, path: string, params: Record<string, string>, headers: Record<string, string> = {}) {
  const qs = new URLSearchParams(params).toString();
  const r = await fetch(`${url}${path}${qs ? `?${qs}` : ''}`, { headers, signal: AbortSignal.timeout(10_000) });
  const text = await r.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: r.status, headers: r.headers, text, body };
}

async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await r.text();
  return { status: r.status, headers: r.headers, text, body: JSON.parse(text) };
}

const ITEMS = '{ item(order_by: {id: asc}) { id name } }';
const ITEMS_DATA = {
  data: {
    item: [
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
    ],
  },
};

describe('GET /v1/graphql (GraphQL over HTTP)', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    await query(s.url, SETUP);
  });
  after(() => s?.close());

  test("urql's default client queries with GET", async () => {
    const methods: string[] = [];
    const client = new Client({
      url: `${s.url}/v1/graphql`,
      exchanges: [fetchExchange],
      preferGetMethod: 'within-url-limit',
      fetch: (input, init) => {
        methods.push(init?.method ?? 'GET');
        return fetch(input, init);
      },
    });
    const r = await client
      .query(
        gql`
          query Item($id: Int!) {
            item_by_pk(id: $id) {
              id
              name
            }
          }
        `,
        { id: 2 },
      )
      .toPromise();
    assert.equal(r.error, undefined, String(r.error));
    assert.deepEqual(r.data, { item_by_pk: { id: 2, name: 'b' } });
    assert.deepEqual(methods, ['GET']);
  });

  test('query, variables and operationName in the query string; /v1beta1/relay too', async () => {
    const r = await get(s.url, '/v1/graphql', {
      query: 'query A { a: item_by_pk(id: 1) { name } } query B($id: Int!) { item_by_pk(id: $id) { name } }',
      variables: '{"id":2}',
      operationName: 'B',
    });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { data: { item_by_pk: { name: 'b' } } });
    assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
    const relay = await get(s.url, '/v1beta1/relay', { query: '{ item_connection(order_by: {id: asc}) { edges { node { name } } } }' });
    assert.equal(relay.status, 200);
    assert.deepEqual(relay.body, { data: { item_connection: { edges: [{ node: { name: 'a' } }, { node: { name: 'b' } }] } } });
  });

  test('same auth as POST: the role header applies, permissions apply', async () => {
    const r = await get(s.url, '/v1/graphql', { query: ITEMS }, { 'x-svc-role': 'user' });
    assert.deepEqual(r.body, ITEMS_DATA);
    const denied = await get(s.url, '/v1/graphql', { query: ITEMS }, { 'x-svc-role': 'nobody' });
    assert.equal(denied.status, 200);
    assert.equal(denied.body.errors[0].extensions.code, 'validation-failed');
  });

  test('a mutation (or subscription) over GET is 405 with Allow: POST and writes nothing', async () => {
    const m = await get(s.url, '/v1/graphql', { query: 'mutation { insert_item(objects: [{id: 3, name: "c"}]) { affected_rows } }' });
    assert.equal(m.status, 405);
    assert.equal(m.headers.get('allow'), 'POST');
    assert.equal(m.body.errors[0].extensions.code, 'method-not-allowed');
    assert.deepEqual(await sql(s.databaseUrl, 'select count(*)::int as n from item'), [{ n: 2 }]);
    // the operation picked by operationName decides
    const picked = await get(s.url, '/v1/graphql', {
      query: 'query Q { item { id } } mutation M { delete_item(where: {}) { affected_rows } }',
      operationName: 'M',
    });
    assert.equal(picked.status, 405);
    const q = await get(s.url, '/v1/graphql', {
      query: 'query Q { item_by_pk(id: 1) { id } } mutation M { delete_item(where: {}) { affected_rows } }',
      operationName: 'Q',
    });
    assert.deepEqual(q.body, { data: { item_by_pk: { id: 1 } } });
    const sub = await get(s.url, '/v1/graphql', { query: 'subscription { item { id } }' });
    assert.equal(sub.status, 405);
    assert.deepEqual(await sql(s.databaseUrl, 'select count(*)::int as n from item'), [{ n: 2 }]);
    // the same mutation over POST runs
    const p = await post(s.url, '/v1/graphql', { query: 'mutation { insert_item(objects: [{id: 3, name: "c"}]) { affected_rows } }' });
    assert.deepEqual(p.body, { data: { insert_item: { affected_rows: 1 } } });
    await sql(s.databaseUrl, 'delete from item where id = 3');
  });

  test('errors stay HTTP 200: a bad query, malformed variables, no query', async () => {
    const bad = await get(s.url, '/v1/graphql', { query: '{ nope }' });
    assert.equal(bad.status, 200);
    assert.equal(bad.body.errors[0].extensions.code, 'validation-failed');
    const vars = await get(s.url, '/v1/graphql', { query: ITEMS, variables: '{x' });
    assert.equal(vars.status, 200);
    assert.deepEqual(vars.body.errors[0].extensions, { path: '$.variables', code: 'invalid-json' });
    const none = await get(s.url, '/v1/graphql', {});
    assert.equal(none.status, 200);
    assert.equal(none.body.errors[0].message, 'key "query" not found');
    // /v1alpha1/graphql stays POST-only
    assert.equal((await get(s.url, '/v1alpha1/graphql', { query: ITEMS })).status, 404);
  });

  test('Accept: application/graphql-response+json alone gets that type; no acceptable type is 406 (GET) or JSON (POST)', async () => {
    const only = await get(s.url, '/v1/graphql', { query: ITEMS }, { accept: 'application/graphql-response+json' });
    assert.equal(only.status, 200);
    assert.equal(only.headers.get('content-type'), 'application/graphql-response+json; charset=utf-8');
    assert.deepEqual(only.body, ITEMS_DATA);
    const onlyErr = await get(s.url, '/v1/graphql', { query: '{ nope }' }, { accept: 'application/graphql-response+json' });
    assert.equal(onlyErr.status, 200);
    assert.equal(onlyErr.headers.get('content-type'), 'application/graphql-response+json; charset=utf-8');
    // Apollo Client's header and urql's: application/json is acceptable, so it is answered
    for (const accept of [
      'application/graphql-response+json,application/json;q=0.9',
      'application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed',
      '*/*',
      'application/*',
    ]) {
      const r = await get(s.url, '/v1/graphql', { query: ITEMS }, { accept });
      assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8', accept);
    }
    const gr = await get(s.url, '/v1/graphql', { query: ITEMS }, { accept: 'application/json;q=0, application/graphql-response+json' });
    assert.equal(gr.headers.get('content-type'), 'application/graphql-response+json; charset=utf-8');
    // each answered the same the second time (the server remembers what an Accept text asks for)
    for (let i = 0; i < 2; i++) {
      const none = await get(s.url, '/v1/graphql', { query: ITEMS }, { accept: 'text/html' });
      assert.equal(none.status, 406);
      assert.equal(none.body.errors[0].extensions.code, 'not-acceptable');
      const again = await get(s.url, '/v1/graphql', { query: ITEMS }, { accept: 'application/graphql-response+json' });
      assert.equal(again.headers.get('content-type'), 'application/graphql-response+json; charset=utf-8');
    }
    const p = await post(s.url, '/v1/graphql', { query: ITEMS }, { accept: 'text/html' });
    assert.equal(p.status, 200);
    assert.equal(p.headers.get('content-type'), 'application/json; charset=utf-8');
    const pg = await post(s.url, '/v1/graphql', { query: ITEMS }, { accept: 'application/graphql-response+json' });
    assert.equal(pg.headers.get('content-type'), 'application/graphql-response+json; charset=utf-8');
  });
});

describe('automatic persisted queries', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ persistedQueriesMaxBytes: 1000 });
    await query(s.url, SETUP);
  });
  after(() => s?.close());

  const NOT_FOUND = { errors: [{ extensions: { path: '$.extensions.persistedQuery', code: 'PERSISTED_QUERY_NOT_FOUND' }, message: 'PersistedQueryNotFound' }] };
  const ext = (q: string) => ({ persistedQuery: { version: 1, sha256Hash: sha256Hex(q) } });

  test("Apollo's link over POST: hash → not found, hash + text → data, then the hash alone", async () => {
    const q = 'query Items { item(order_by: {id: asc}) { id name } }';
    const first = await post(s.url, '/v1/graphql', { operationName: 'Items', variables: {}, extensions: ext(q) });
    assert.equal(first.status, 200);
    assert.deepEqual(first.body, NOT_FOUND);
    const second = await post(s.url, '/v1/graphql', { operationName: 'Items', variables: {}, extensions: ext(q), query: q });
    assert.deepEqual(second.body, ITEMS_DATA);
    const third = await post(s.url, '/v1/graphql', { operationName: 'Items', variables: {}, extensions: ext(q) });
    assert.deepEqual(third.body, ITEMS_DATA);
  });

  test("Apollo's link with useGETForHashedQueries: GET with the hash, the text over POST, then GET again", async () => {
    const q = 'query One($id: Int!) { item_by_pk(id: $id) { name } }';
    const params = { operationName: 'One', variables: '{"id":1}', extensions: JSON.stringify(ext(q)) };
    const first = await get(s.url, '/v1/graphql', params);
    assert.equal(first.status, 200);
    assert.deepEqual(first.body, NOT_FOUND);
    const second = await post(s.url, '/v1/graphql', { operationName: 'One', variables: { id: 1 }, extensions: ext(q), query: q });
    assert.deepEqual(second.body, { data: { item_by_pk: { name: 'a' } } });
    const third = await get(s.url, '/v1/graphql', params);
    assert.deepEqual(third.body, { data: { item_by_pk: { name: 'a' } } });
  });

  test('a hash that does not match the text is refused and registers nothing; a persisted mutation over GET is 405', async () => {
    const q = '{ item_by_pk(id: 2) { name } }';
    const wrong = { persistedQuery: { version: 1, sha256Hash: sha256Hex('{ item { id } }') } };
    const r = await post(s.url, '/v1/graphql', { query: q, extensions: wrong });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.errors[0], {
      extensions: { path: '$.extensions.persistedQuery.sha256Hash', code: 'validation-failed' },
      message: 'provided sha does not match query',
    });
    assert.deepEqual((await post(s.url, '/v1/graphql', { extensions: wrong })).body, NOT_FOUND);
    const bad = await post(s.url, '/v1/graphql', { extensions: { persistedQuery: { version: 2, sha256Hash: sha256Hex(q) } } });
    assert.equal(bad.body.errors[0].extensions.code, 'validation-failed');
    const m = 'mutation { insert_item(objects: [{id: 9, name: "z"}]) { affected_rows } }';
    assert.deepEqual((await post(s.url, '/v1/graphql', { query: m, extensions: ext(m) })).body, { data: { insert_item: { affected_rows: 1 } } });
    const g = await get(s.url, '/v1/graphql', { extensions: JSON.stringify(ext(m)) });
    assert.equal(g.status, 405);
    assert.deepEqual(await sql(s.databaseUrl, 'select count(*)::int as n from item'), [{ n: 3 }]);
    await sql(s.databaseUrl, 'delete from item where id = 9');
  });

  test('the store is bounded by bytes, least recently used evicted first', async () => {
    // 1000 bytes: entries cost their text + 128; three texts of ~190 bytes fit, a fourth evicts the oldest
    const texts = [1, 2, 3, 4].map((n) => `query Q${n} { item_by_pk(id: 1) { name } }${' '.repeat(150)}`);
    const register = (t: string) => post(s.url, '/v1/graphql', { query: t, extensions: ext(t) });
    const byHash = (t: string) => post(s.url, '/v1/graphql', { extensions: ext(t) });
    for (const t of texts.slice(0, 3)) assert.equal((await register(t)).body.errors, undefined);
    assert.equal((await byHash(texts[0]!)).body.errors, undefined); // texts[0] is now the most recently used
    await register(texts[3]!);
    assert.deepEqual((await byHash(texts[1]!)).body, NOT_FOUND);
    for (const t of [texts[0]!, texts[2]!, texts[3]!]) assert.deepEqual((await byHash(t)).body, { data: { item_by_pk: { name: 'a' } } });
    // a text larger than the store is answered but not kept
    const big = `{ item_by_pk(id: 1) { name } }${' '.repeat(1000)}`;
    assert.equal((await register(big)).body.errors, undefined);
    assert.deepEqual((await byHash(big)).body, NOT_FOUND);
  });

  test('PersistedQueryStore accounting', () => {
    const store = new PersistedQueryStore(700);
    assert.equal(store.set('a', 'x'.repeat(100)), true);
    assert.equal(store.set('b', 'y'.repeat(100)), true);
    assert.equal(store.bytes, 456);
    assert.equal(store.set('a', 'x'.repeat(100)), true); // re-registering does not count twice
    assert.equal(store.bytes, 456);
    assert.equal(store.set('c', 'z'.repeat(300)), true); // evicts b (a was re-registered after it)
    assert.equal(store.get('b'), undefined);
    assert.equal(store.size, 2);
    assert.equal(store.bytes, 656);
    assert.equal(store.set('d', 'w'.repeat(600)), false);
  });
});

describe('automatic persisted queries with the allow-list', () => {
  let s: TestServer;
  const listed = 'query { item { id name } }';
  before(async () => {
    s = await startTestServer({ enableAllowlist: true });
    await query(s.url, SETUP);
    await query(s.url, { type: 'create_query_collection', args: { name: 'c1', definition: { queries: [{ name: 'q1', query: listed }] } } });
    await query(s.url, { type: 'add_collection_to_allowlist', args: { collection: 'c1' } });
  });
  after(() => s?.close());

  test('only allow-listed queries are registered, also when an admin sends them', async () => {
    const user = { 'x-svc-role': 'user' };
    const other = 'query { item { name id } }';
    const h = { persistedQuery: { version: 1, sha256Hash: sha256Hex(other) } };
    const r = await post(s.url, '/v1/graphql', { query: other, extensions: h }, user);
    assert.equal(r.body.errors[0].message, 'query is not allowed');
    const admin = await post(s.url, '/v1/graphql', { query: other, extensions: h }, { 'x-svc-role': 'admin' });
    assert.equal(admin.body.errors, undefined);
    assert.deepEqual((await post(s.url, '/v1/graphql', { extensions: h }, user)).body.errors[0].message, 'PersistedQueryNotFound');
    assert.deepEqual((await get(s.url, '/v1/graphql', { extensions: JSON.stringify(h) }, user)).body.errors[0].message, 'PersistedQueryNotFound');
    // a listed one registers and is then served by its hash, over POST and GET
    const l = { persistedQuery: { version: 1, sha256Hash: sha256Hex(listed) } };
    assert.equal((await post(s.url, '/v1/graphql', { query: listed, extensions: l }, user)).body.errors, undefined);
    assert.equal((await post(s.url, '/v1/graphql', { extensions: l }, user)).body.errors, undefined);
    const g = await get(s.url, '/v1/graphql', { extensions: JSON.stringify(l) }, user);
    assert.deepEqual(g.body, {
      data: {
        item: [
          { id: 1, name: 'a' },
          { id: 2, name: 'b' },
        ],
      },
    });
    // GET is held to the allow-list like POST
    assert.equal((await get(s.url, '/v1/graphql', { query: other }, user)).body.errors[0].message, 'query is not allowed');
  });
});
