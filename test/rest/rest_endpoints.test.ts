/**
 * Issue 37, item 4: REST endpoints (Hasura v2's create_rest_endpoint / drop_rest_endpoint, served at
 * /api/rest/…, described at /api/swagger/json) on a real server and PostgreSQL: the metadata
 * operations and their errors (metadata unchanged after each), export/replace round trip, the
 * dependency of endpoints on their collections, calls with path/query/body parameters of several
 * types, permissions by role, the allow-list and admin secret, bounds, the shared plan cache, and a
 * REST call checked against the OpenAPI document (validated by a standard OpenAPI validator).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv } from 'ajv';
import { postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';
import { TEST_HS_KEY, userJwt } from '../helpers/jwt.js';

const SETUP = {
  type: 'bulk',
  args: [
    {
      type: 'run_sql',
      args: {
        sql: `create table author (id int primary key, name text not null, rating float8, big bigint, active boolean not null default true, tags jsonb, born date);
insert into author values (1, 'Ann', 4.5, 9007199254740993, true, '{"a": 1, "b": 2}', '1990-01-02'), (2, 'Bob', null, 2, false, null, null), (3, 'Cy', 3.25, 3, true, '{"a": 2}', null);
create table article (id serial primary key, author_id int not null references author (id), title text not null);
insert into article (author_id, title) values (1, 'A1'), (1, 'A2'), (2, 'B1');`,
      },
    },
    { type: 'track_table', args: { name: 'author' } },
    { type: 'track_table', args: { name: 'article' } },
    {
      type: 'create_array_relationship',
      args: { table: 'author', name: 'articles', using: { foreign_key_constraint_on: { table: 'article', column: 'author_id' } } },
    },
    { type: 'create_object_relationship', args: { table: 'article', name: 'author', using: { foreign_key_constraint_on: 'author_id' } } },
    {
      type: 'create_select_permission',
      args: { table: 'author', role: 'user', permission: { columns: ['id', 'name', 'active'], filter: { id: { _eq: 'X-Svc-User-Id' } } } },
    },
    { type: 'create_select_permission', args: { table: 'article', role: 'user', permission: { columns: ['id', 'title', 'author_id'], filter: {} } } },
    {
      type: 'create_insert_permission',
      args: { table: 'article', role: 'user', permission: { columns: ['author_id', 'title'], check: { author_id: { _eq: 'X-Svc-User-Id' } } } },
    },
    {
      type: 'create_query_collection',
      args: {
        name: 'rest',
        definition: {
          queries: [
            { name: 'author_by_id', query: 'query author_by_id($id: Int!) { author_by_pk(id: $id) { id name articles(order_by: {id: asc}) { title } } }' },
            {
              name: 'authors_active',
              query:
                'query ($active: Boolean!, $limit: Int) { author(where: {active: {_eq: $active}}, order_by: {id: asc}, limit: $limit) { id name active } }',
            },
            { name: 'by_big', query: 'query ($big: bigint!) { author(where: {big: {_eq: $big}}) { id big } }' },
            { name: 'by_tags', query: 'query ($tags: jsonb!) { author(where: {tags: {_contains: $tags}}, order_by: {id: asc}) { id tags } }' },
            { name: 'by_rating', query: 'query ($r: float8!, $born: date) { author(where: {rating: {_gte: $r}}, order_by: {id: asc}) { id rating born } }' },
            {
              name: 'add_article',
              query:
                'mutation add_article($author_id: Int!, $title: String!) { insert_article(objects: [{author_id: $author_id, title: $title}]) { affected_rows returning { title author { name } } } }',
            },
            {
              name: 'filtered',
              query:
                'query filtered($where: author_bool_exp, $order: [author_order_by!] = [{id: asc}]) { author(where: $where, order_by: $order) { id name } }',
            },
            { name: 'sub', query: 'subscription { author { id } }' },
            { name: 'two', query: 'query a { author { id } } query b { author { name } }' },
          ],
        },
      },
    },
  ],
};

const endpoint = (name: string, url: string, methods: string[], queryName: string, extra: Record<string, unknown> = {}) => ({
  type: 'create_rest_endpoint',
  args: { name, url, methods, definition: { query: { collection_name: 'rest', query_name: queryName } }, ...extra },
});

const ENDPOINTS = [
  endpoint('author', 'authors/:id', ['GET'], 'author_by_id', { comment: 'one author' }),
  endpoint('authors_active', 'authors', ['GET', 'POST'], 'authors_active'),
  endpoint('big', 'big/:big', ['GET'], 'by_big'),
  endpoint('tags', 'tags', ['GET', 'POST'], 'by_tags'),
  endpoint('rating', 'rating/:r', ['GET'], 'by_rating'),
  endpoint('add_article', 'authors/:author_id/articles', ['POST', 'PUT'], 'add_article'),
  endpoint('filtered', 'filtered', ['POST'], 'filtered'),
];

interface Res {
  status: number;
  body: any;
  headers: Headers;
}

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res> {
  const init: RequestInit = { method, headers: { ...headers }, signal: AbortSignal.timeout(15_000) };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const r = await fetch(base + path, init);
  const text = await r.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* keep the text */
  }
  return { status: r.status, body: parsed, headers: r.headers };
}

const exportMd = (url: string) => query(url, { type: 'export_metadata', args: {} });

describe('REST endpoints', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    await query(s.url, SETUP);
    await query(s.url, { type: 'bulk', args: ENDPOINTS });
  });
  after(() => s?.close());

  test('export_metadata lists them (by name, v2 shape); replace_metadata takes the export back', async () => {
    const md = await exportMd(s.url);
    assert.deepEqual(
      md.rest_endpoints.map((e: { name: string }) => e.name),
      ['add_article', 'author', 'authors_active', 'big', 'filtered', 'rating', 'tags'],
    );
    assert.deepEqual(md.rest_endpoints[1], {
      name: 'author',
      url: 'authors/:id',
      methods: ['GET'],
      definition: { query: { collection_name: 'rest', query_name: 'author_by_id' } },
      comment: 'one author',
    });
    assert.deepEqual(await query(s.url, { type: 'replace_metadata', args: md }), { message: 'success' });
    assert.deepEqual(await exportMd(s.url), md);
    // a bad entry in replace_metadata changes nothing
    const bad = { ...md, rest_endpoints: [...md.rest_endpoints, { ...md.rest_endpoints[0], name: 'x', methods: ['GET'] }] };
    const r = await postQuery(s.url, { type: 'replace_metadata', args: bad });
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'unexpected');
    assert.match(JSON.stringify(r.body), /mutation, which cannot be served with GET/);
    assert.deepEqual(await exportMd(s.url), md);
  });

  test('create, call, drop: the endpoint is served from the change on and gone after it', async () => {
    await query(s.url, endpoint('tmp', 'tmp/:id', ['GET'], 'author_by_id'));
    assert.equal((await call(s.url, 'GET', '/api/rest/tmp/2')).body.author_by_pk.name, 'Bob');
    assert.deepEqual(await query(s.url, { type: 'drop_rest_endpoint', args: { name: 'tmp' } }), { message: 'success' });
    const r = await call(s.url, 'GET', '/api/rest/tmp/2');
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, { path: '$', error: 'Endpoint not found', code: 'not-found' });
  });

  test('each bad create_rest_endpoint / drop_rest_endpoint is refused with its error and changes nothing', async () => {
    const before = await exportMd(s.url);
    const cases: Array<[unknown, number, string, RegExp]> = [
      [endpoint('author', 'other', ['GET'], 'author_by_id'), 400, 'already-exists', /^Endpoint with name: author already exists$/],
      [endpoint('m', 'm', ['FOO'], 'author_by_id'), 400, 'parse-failed', /^Method FOO not supported\.$/],
      [endpoint('m', 'm', [], 'author_by_id'), 400, 'parse-failed', /empty list/],
      [endpoint('m', 'm', 'GET' as unknown as string[], 'author_by_id'), 400, 'parse-failed', /expected Array/],
      [endpoint('', 'm', ['GET'], 'author_by_id'), 400, 'parse-failed', /empty string not allowed/],
      [{ type: 'create_rest_endpoint', args: { name: 'm', url: 'm', methods: ['GET'] } }, 400, 'parse-failed', /key "definition" not found/],
      [endpoint('m', 'm', ['GET'], 'author_by_id', { extra: 1 }), 400, 'parse-failed', /unexpected key "extra"/],
      [endpoint('m', '/m/:id', ['GET'], 'author_by_id'), 400, 'constraint-violation', /^Empty segments or unnamed variables are not allowed: \/m\/:id$/],
      [endpoint('m', 'm/:/x', ['GET'], 'author_by_id'), 400, 'constraint-violation', /Empty segments or unnamed variables/],
      [endpoint('m', 'm/:id/x/:id', ['GET'], 'author_by_id'), 400, 'constraint-violation', /^Duplicate variables found in endpoint path: m\/:id\/x\/:id$/],
      [endpoint('m', 'm/:id?x', ['GET'], 'author_by_id'), 400, 'constraint-violation', /may contain neither/],
      [endpoint('m', 'authors/:id', ['GET', 'PATCH'], 'author_by_id'), 400, 'constraint-violation', /^Ambiguous URL paths: authors\/:id, authors\/:id$/],
      [endpoint('m', 'authors/top', ['GET'], 'authors_active'), 400, 'constraint-violation', /^Ambiguous URL paths: authors\/:id, authors\/top$/],
      [
        {
          ...endpoint('m', 'm', ['GET'], 'x'),
          args: { name: 'm', url: 'm', methods: ['GET'], definition: { query: { collection_name: 'nope', query_name: 'x' } } },
        },
        400,
        'constraint-violation',
        /^in endpoint "m": collection with name nope does not exist$/,
      ],
      [endpoint('m', 'm', ['GET'], 'nope'), 400, 'constraint-violation', /^in endpoint "m": query with name nope does not exist in collection rest$/],
      [endpoint('m', 'm', ['GET'], 'sub'), 400, 'constraint-violation', /^in endpoint "m": query with name sub is a subscription$/],
      [endpoint('m', 'm', ['POST'], 'two'), 400, 'constraint-violation', /^in endpoint "m": query with name two has multiple definitions\.$/],
      [endpoint('m', 'm', ['GET'], 'add_article'), 400, 'constraint-violation', /is a mutation, which cannot be served with GET/],
      [
        endpoint('m', 'm/:nope', ['GET'], 'author_by_id'),
        400,
        'constraint-violation',
        /the URL template's variable "nope" is not a variable of query author_by_id/,
      ],
      [{ type: 'drop_rest_endpoint', args: { name: 'nope' } }, 400, 'not-exists', /^endpoint with name: nope does not exist$/],
      [{ type: 'drop_rest_endpoint', args: {} }, 400, 'parse-failed', /key "name" not found/],
    ];
    for (const [body, status, code, message] of cases) {
      const r = await postQuery(s.url, body);
      assert.equal(r.status, status, JSON.stringify(body) + ' → ' + r.text);
      assert.equal(r.body.code, code, r.text);
      assert.match(r.body.error, message, r.text);
    }
    // a bulk whose last step fails leaves the earlier create undone too
    const r = await postQuery(s.url, { type: 'bulk', args: [endpoint('ok', 'ok', ['GET'], 'author_by_id'), endpoint('ok', 'ok2', ['GET'], 'author_by_id')] });
    assert.equal(r.status, 400);
    assert.deepEqual(await exportMd(s.url), before);
  });

  test('dropping a collection or query an endpoint uses: dependency-error; cascade drops the endpoints', async () => {
    const before = await exportMd(s.url);
    let r = await postQuery(s.url, { type: 'drop_query_collection', args: { collection: 'rest', cascade: false } });
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'dependency-error');
    assert.equal(
      r.body.error,
      'cannot drop due to the following dependent objects : rest endpoint add_article, rest endpoint author, rest endpoint authors_active, rest endpoint big, rest endpoint filtered, rest endpoint rating, rest endpoint tags',
    );
    r = await postQuery(s.url, { type: 'drop_query_from_collection', args: { collection_name: 'rest', query_name: 'author_by_id' } });
    assert.equal(r.status, 400);
    assert.equal(r.body.error, 'cannot drop due to the following dependent objects : rest endpoint author');
    assert.deepEqual(await exportMd(s.url), before);
    // a query no endpoint uses can go; a whole collection with cascade takes its endpoints along
    await query(s.url, {
      type: 'bulk',
      args: [
        { type: 'create_query_collection', args: { name: 'c2', definition: { queries: [{ name: 'q', query: 'query { author { id } }' }] } } },
        { type: 'create_rest_endpoint', args: { name: 'c2e', url: 'c2', methods: ['GET'], definition: { query: { collection_name: 'c2', query_name: 'q' } } } },
      ],
    });
    assert.equal((await call(s.url, 'GET', '/api/rest/c2')).status, 200);
    await query(s.url, { type: 'drop_query_collection', args: { collection: 'c2', cascade: true } });
    assert.equal((await call(s.url, 'GET', '/api/rest/c2')).status, 404);
    assert.deepEqual(await exportMd(s.url), before);
  });

  test('path, query-string and body parameters of several types become the variables', async () => {
    let r = await call(s.url, 'GET', '/api/rest/authors/1');
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.deepEqual(r.body, { author_by_pk: { id: 1, name: 'Ann', articles: [{ title: 'A1' }, { title: 'A2' }] } });
    // Boolean: a bare key is true, `false` is false; Int from the query string
    r = await call(s.url, 'GET', '/api/rest/authors?active');
    assert.deepEqual(r.body, {
      author: [
        { id: 1, name: 'Ann', active: true },
        { id: 3, name: 'Cy', active: true },
      ],
    });
    r = await call(s.url, 'GET', '/api/rest/authors?active=true&limit=1');
    assert.deepEqual(r.body, { author: [{ id: 1, name: 'Ann', active: true }] });
    r = await call(s.url, 'GET', '/api/rest/authors?active=false');
    assert.deepEqual(r.body, { author: [{ id: 2, name: 'Bob', active: false }] });
    // POST with a JSON body, and mixed with the query string
    r = await call(s.url, 'POST', '/api/rest/authors?limit=1', { active: true });
    assert.deepEqual(r.body, { author: [{ id: 1, name: 'Ann', active: true }] });
    // bigint beyond 2^53 keeps its precision (read as text)
    r = await call(s.url, 'GET', '/api/rest/big/9007199254740993');
    assert.deepEqual(r.body, { author: [{ id: 1, big: 9007199254740993 }] });
    // float8 in the path, a nullable date absent
    r = await call(s.url, 'GET', '/api/rest/rating/3.5');
    assert.deepEqual(r.body, { author: [{ id: 1, rating: 4.5, born: '1990-01-02' }] });
    // jsonb from the query string's text and from the body
    r = await call(s.url, 'GET', `/api/rest/tags?tags=${encodeURIComponent('{"a":1}')}`);
    assert.deepEqual(r.body, { author: [{ id: 1, tags: { a: 1, b: 2 } }] });
    r = await call(s.url, 'POST', '/api/rest/tags', { tags: { a: 2 } });
    assert.deepEqual(r.body, { author: [{ id: 3, tags: { a: 2 } }] });
    // percent-encoded path segments are decoded
    r = await call(s.url, 'GET', '/api/rest/authors/%31');
    assert.equal(r.body.author_by_pk.id, 1);
  });

  test('an uncompressed answer is the UTF-8 bytes of the data, Content-Length counting bytes', async () => {
    await query(s.url, { type: 'run_sql', args: { sql: "insert into author (id, name) values (9, 'Zoë ' || repeat('€😀', 20000))" } });
    try {
      // node:http sends no Accept-Encoding: the answer is not compressed
      const r = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: Buffer }>((resolve, reject) => {
        http
          .get(`${s.url}/api/rest/authors/9`, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }));
            res.on('error', reject);
          })
          .on('error', reject);
      });
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-encoding'], undefined);
      const want = JSON.stringify({ author_by_pk: { id: 9, name: `Zoë ${'€😀'.repeat(20000)}`, articles: [] } });
      assert.equal(Number(r.headers['content-length']), Buffer.byteLength(want));
      assert.equal(r.bytes.toString('utf8'), want);
    } finally {
      await query(s.url, { type: 'run_sql', args: { sql: 'delete from author where id = 9' } });
    }
  });

  test('errors: 404, 405 with Allow, unexpected / repeated variables, bad JSON, type mismatches', async () => {
    let r = await call(s.url, 'GET', '/api/rest/nope');
    assert.equal(r.status, 404);
    r = await call(s.url, 'GET', '/api/rest/authors/1/x/y');
    assert.equal(r.status, 404);
    r = await call(s.url, 'DELETE', '/api/rest/authors/1');
    assert.equal(r.status, 405);
    assert.deepEqual(r.body, { path: '$', error: 'Allowed methods: GET', code: 'method-not-allowed' });
    assert.equal(r.headers.get('allow'), 'GET');
    r = await call(s.url, 'GET', '/api/rest/authors/1/articles');
    assert.equal(r.status, 405);
    assert.equal(r.headers.get('allow'), 'POST, PUT');
    r = await call(s.url, 'GET', '/api/rest/authors/1?x=2');
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { path: '$', error: 'Unexpected variable x', code: 'bad-request' });
    r = await call(s.url, 'GET', '/api/rest/authors?active=true&active=false');
    assert.equal(r.status, 400);
    assert.equal(r.body.error, 'variable active is given more than once');
    r = await call(s.url, 'POST', '/api/rest/authors?active=true', { active: false });
    assert.equal(r.body.error, 'variable active is given more than once');
    r = await call(s.url, 'POST', '/api/rest/authors', '[1]');
    assert.equal(r.status, 400);
    assert.equal(r.body.error, 'the request body must be a JSON object of variables');
    r = await call(s.url, 'POST', '/api/rest/authors', '{"active": tru');
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'invalid-json');
    r = await call(s.url, 'GET', '/api/rest/authors/abc');
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'validation-failed');
    assert.match(r.body.error, /Int32/);
    r = await call(s.url, 'GET', '/api/rest/tags?tags=%7Bnot');
    assert.equal(r.status, 400);
    assert.equal(r.body.error, 'the value of variable tags is not valid JSON');
    r = await call(s.url, 'GET', '/api/rest/authors');
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'validation-failed');
    assert.match(r.body.error, /active/);
    r = await call(s.url, 'GET', `/api/rest/authors?${Array.from({ length: 101 }, (_, i) => `p${i}=1`).join('&')}`);
    assert.equal(r.status, 400);
    assert.equal(r.body.error, 'more than 100 query parameters');
  });

  test('mutations with POST/PUT; permissions by role (session from the same headers as /v1/graphql)', async () => {
    let r = await call(s.url, 'POST', '/api/rest/authors/1/articles', { title: 'A3' }, { 'x-svc-role': 'user', 'x-svc-user-id': '1' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, { insert_article: { affected_rows: 1, returning: [{ title: 'A3', author: { name: 'Ann' } }] } });
    r = await call(s.url, 'PUT', '/api/rest/authors/2/articles', { title: 'not mine' }, { 'x-svc-role': 'user', 'x-svc-user-id': '1' });
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'permission-error');
    // select permissions: the user sees only itself, and only its permitted columns
    r = await call(s.url, 'GET', '/api/rest/authors/2', undefined, { 'x-svc-role': 'user', 'x-svc-user-id': '1' });
    assert.deepEqual(r.body, { author_by_pk: null });
    r = await call(s.url, 'GET', '/api/rest/authors/1', undefined, { 'x-svc-role': 'user', 'x-svc-user-id': '1' });
    assert.deepEqual(r.body, { author_by_pk: { id: 1, name: 'Ann', articles: [{ title: 'A1' }, { title: 'A2' }, { title: 'A3' }] } });
    r = await call(s.url, 'GET', '/api/rest/big/2', undefined, { 'x-svc-role': 'user', 'x-svc-user-id': '1' });
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'validation-failed');
    // a missing session variable
    r = await call(s.url, 'GET', '/api/rest/authors/1', undefined, { 'x-svc-role': 'user' });
    assert.equal(r.status, 400);
    assert.match(r.body.error, /x-svc-user-id/i);
  });

  test('a call is a GraphQL request: the second one is a plan-cache hit', async () => {
    await call(s.url, 'GET', '/api/rest/authors/3');
    const hits = s.engine.planCache.stats.hits;
    const r = await call(s.url, 'GET', '/api/rest/authors/2');
    assert.equal(r.body.author_by_pk.name, 'Bob');
    assert.equal(s.engine.planCache.stats.hits, hits + 1);
  });

  test('/api/swagger/json: a valid OpenAPI 3 document; a call answers what it declares', async () => {
    const denied = await call(s.url, 'GET', '/api/swagger/json', undefined, { 'x-svc-role': 'user' });
    assert.equal(denied.status, 400);
    assert.equal(denied.body.code, 'access-denied');
    const r = await call(s.url, 'GET', '/api/swagger/json');
    assert.equal(r.status, 200);
    const doc = r.body;
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    assert.equal(result.valid, true, JSON.stringify(result.errors));
    assert.equal(validator.version, '3.0');
    assert.deepEqual(Object.keys(doc.paths).sort(), [
      '/api/rest/authors',
      '/api/rest/authors/{author_id}/articles',
      '/api/rest/authors/{id}',
      '/api/rest/big/{big}',
      '/api/rest/filtered',
      '/api/rest/rating/{r}',
      '/api/rest/tags',
    ]);
    // input objects (recursive) and enums are components; a list with a default is a body property
    assert.deepEqual(doc.paths['/api/rest/filtered'].post.requestBody.content['application/json'].schema.properties.where, {
      allOf: [{ $ref: '#/components/schemas/author_bool_exp' }],
      nullable: true,
    });
    assert.deepEqual(doc.components.schemas.author_bool_exp.properties._not, { allOf: [{ $ref: '#/components/schemas/author_bool_exp' }], nullable: true });
    assert.equal(doc.components.schemas.order_by.type, 'string');
    const get = doc.paths['/api/rest/authors/{id}'].get;
    assert.deepEqual(get.parameters, [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }]);
    assert.match(get.description, /^one author\n\*\*\*\nThe GraphQL query for this endpoint is:/);
    assert.deepEqual(
      doc.paths['/api/rest/authors'].get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`),
      ['query:active', 'query:limit'],
    );
    assert.ok(doc.paths['/api/rest/authors'].post.requestBody);
    assert.ok(doc.paths['/api/rest/authors/{author_id}/articles'].put);

    // the responses of real calls match the declared 200 schemas (OpenAPI 3.0 schemas as JSON Schema)
    const ajv = new Ajv({ strict: false });
    const toJsonSchema = (x: unknown): unknown => {
      if (Array.isArray(x)) return x.map(toJsonSchema);
      if (!x || typeof x !== 'object') return x;
      const o: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(x)) if (k !== 'nullable' && k !== 'format') o[k] = toJsonSchema(v);
      if ((x as { nullable?: boolean }).nullable) return { anyOf: [o, { type: 'null' }] };
      return o;
    };
    const check = async (method: string, path: string, url: string, body?: unknown) => {
      const schema = doc.paths[path][method].responses['200'].content['application/json'].schema;
      const res = await call(s.url, method.toUpperCase(), url, body);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const validate = ajv.compile({ ...(toJsonSchema(schema) as object), components: toJsonSchema(doc.components) } as object);
      assert.equal(validate(res.body), true, `${url}: ${JSON.stringify(validate.errors)} ${JSON.stringify(res.body)}`);
      return { schema, body: res.body };
    };
    const one = await check('get', '/api/rest/authors/{id}', '/api/rest/authors/1');
    assert.deepEqual(one.schema.properties.author_by_pk.required, ['id', 'name', 'articles']);
    assert.equal(one.schema.properties.author_by_pk.nullable, true);
    await check('get', '/api/rest/authors/{id}', '/api/rest/authors/99'); // null is declared too
    await check('get', '/api/rest/rating/{r}', '/api/rest/rating/0');
    await check('get', '/api/rest/tags', '/api/rest/tags?tags=%7B%7D');
    await check('post', '/api/rest/authors/{author_id}/articles', '/api/rest/authors/3/articles', { title: 'C1' });
    const f = await check('post', '/api/rest/filtered', '/api/rest/filtered', { where: { id: { _gt: 1 } }, order: [{ id: 'desc' }] });
    assert.deepEqual(f.body, {
      author: [
        { id: 3, name: 'Cy' },
        { id: 2, name: 'Bob' },
      ],
    });
    // and a response that does not match is caught by the same check (the check can fail)
    const schema = doc.paths['/api/rest/authors/{id}'].get.responses['200'].content['application/json'].schema;
    const validate = ajv.compile(toJsonSchema(schema) as object);
    assert.equal(validate({ author_by_pk: { id: 'x', name: 'Ann', articles: [] } }), false);
  });
});

describe('REST endpoints with an admin secret, JWT, the allow-list and a small body limit', () => {
  let s: TestServer;
  const admin = { 'x-svc-admin-secret': 'sekret' };
  before(async () => {
    s = await startTestServer({ adminSecret: 'sekret', jwtSecret: { type: 'HS256', key: TEST_HS_KEY }, enableAllowlist: true, bodyLimit: 8192 });
    await query(s.url, SETUP, admin);
    await query(s.url, { type: 'bulk', args: ENDPOINTS }, admin);
  });
  after(() => s?.close());

  test('the same authentication as /v1/graphql', async () => {
    // the error and status /v1alpha1/graphql (which keeps the auth error's status) answers
    for (const headers of [{}, { 'x-svc-admin-secret': 'wrong' }, { authorization: 'Bearer not-a-jwt' }] as Array<Record<string, string>>) {
      const r = await call(s.url, 'GET', '/api/rest/authors/1', undefined, headers);
      const g = await call(s.url, 'POST', '/v1alpha1/graphql', { query: '{ author { id } }' }, headers);
      assert.ok(r.status === 400 || r.status === 401, String(r.status));
      assert.equal(r.status, g.status);
      assert.deepEqual(r.body, { path: g.body.errors[0].extensions.path, error: g.body.errors[0].message, code: g.body.errors[0].extensions.code });
    }
    let r = await call(s.url, 'GET', '/api/rest/authors/1', undefined, { 'x-svc-admin-secret': 'wrong' });
    assert.equal(r.status, 401);
    r = await call(s.url, 'GET', '/api/rest/authors/1', undefined, admin);
    assert.equal(r.status, 200);
    assert.equal(r.body.author_by_pk.name, 'Ann');
  });

  test('the allow-list applies to non-admin roles as on /v1/graphql (v2): allow-list the collection', async () => {
    const user = { ...admin, 'x-svc-role': 'user', 'x-svc-user-id': '1' };
    let r = await call(s.url, 'GET', '/api/rest/authors/1', undefined, user);
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { path: '$', error: 'query is not allowed', code: 'validation-failed' });
    await query(s.url, { type: 'add_collection_to_allowlist', args: { collection: 'rest' } }, admin);
    r = await call(s.url, 'GET', '/api/rest/authors/1', undefined, user);
    assert.equal(r.status, 200);
    assert.equal(r.body.author_by_pk.name, 'Ann');
    // a JWT's session: its role and user id decide what the call sees
    r = await call(s.url, 'GET', '/api/rest/authors/1', undefined, { authorization: `Bearer ${await userJwt('1')}` });
    assert.deepEqual(r.body, { author_by_pk: { id: 1, name: 'Ann', articles: [{ title: 'A1' }, { title: 'A2' }] } });
    r = await call(s.url, 'GET', '/api/rest/authors/1', undefined, { authorization: `Bearer ${await userJwt('2')}` });
    assert.deepEqual(r.body, { author_by_pk: null });
    r = await call(s.url, 'GET', '/api/rest/authors/1', undefined, { authorization: `Bearer ${await userJwt('1', -60)}` });
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'invalid-jwt');
  });

  test('a body over --body-limit is 413', async () => {
    const r = await call(s.url, 'POST', '/api/rest/authors', { active: true, pad: 'x'.repeat(10_000) }, admin);
    assert.equal(r.status, 413);
    assert.equal(r.body.code, 'payload-too-large');
  });
});
