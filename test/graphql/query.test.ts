/**
 * GraphQL reads end to end against PostgreSQL: introspect + buildSchemaCache
 * + runGraphQL (no HTTP). Responses are compared as text where key order matters.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { explainGraphQL, planRequest, runGraphQL } from '../../src/execute/graphql.js';
import { PlanCache } from '../../src/execute/planCache.js';
import { emptyMetadata, fixture, table, type Fixture } from './helpers.js';

let f: Fixture;

const SETUP = `
create table author (id serial primary key, name text, rating bigint, bio jsonb, "createdAt" timestamptz);
create table article (id serial primary key, title text not null, author_id int not null references author(id), is_published bool, price numeric);
create table colors (value text primary key, comment text);
insert into colors values ('red', '#f00'), ('blue', '#00f');
create table paint (id serial primary key, color text references colors(value));
insert into paint (color) values ('red'), ('blue'), ('red');
insert into author (name, rating, bio, "createdAt") values
  ('A1', 9007199254740993, '{"x": {"y": [1, 2]}}', '2017-09-21T09:39:44Z'), ('A2', 2, null, null), ('A3', null, '{"k": 1}', null);
insert into article (title, author_id, is_published, price) values
  ('T1', 1, true, 1.50), ('T2', 1, false, 2), ('T3', 2, true, null), ('T4', 3, false, 10);
create function search_articles(q text, lim int default 10) returns setof article as $$
  select * from article where title ilike '%' || q || '%' limit lim $$ language sql stable;
create function author_label(a author, suffix text default '!') returns text as $$ select a.name || suffix $$ language sql stable;
create function my_session(a author, s json) returns text as $$ select s->>'x-svc-user-id' $$ language sql stable;
`;

before(async () => {
  const md = emptyMetadata();
  md.tables.push(
    table('author', {
      array_relationships: [{ name: 'articles', using: { foreign_key_constraint_on: { table: { schema: 'public', name: 'article' }, column: 'author_id' } } }],
      computed_fields: [
        { name: 'label', definition: { function: { schema: 'public', name: 'author_label' } } },
        { name: 'sess', definition: { function: { schema: 'public', name: 'my_session' }, session_argument: 's' } },
      ],
      select_permissions: [{ role: 'user', permission: { columns: ['id', 'name'], filter: { id: 'X-Svc-User-Id' }, computed_fields: ['label'] } }],
    }),
    table('article', {
      object_relationships: [{ name: 'author', using: { foreign_key_constraint_on: 'author_id' } }],
      select_permissions: [
        {
          role: 'user',
          permission: {
            columns: ['id', 'title', 'author_id'],
            filter: { _or: [{ author_id: 'X-Svc-User-Id' }, { is_published: true }] },
            limit: 2,
            allow_aggregations: true,
          },
        },
      ],
    }),
    table('colors', { is_enum: true }),
    table('paint'),
  );
  md.functions.push({ function: { schema: 'public', name: 'search_articles' } });
  f = await fixture(SETUP, md);
});
after(() => f.close());

const run = (query: string, variables?: Record<string, unknown>, role = 'admin', vars: Record<string, string> = {}, config = {}) =>
  runGraphQL(f.ctx(role, vars, config), { query, variables });

describe('selects', () => {
  test('columns, relationships, key order follows the selection', async () => {
    const r = await run('{ author(order_by: {id: asc}, limit: 2) { name id articles(order_by: {id: desc}) { title } } }');
    assert.equal(
      JSON.stringify(JSON.parse(r)),
      '{"data":{"author":[{"name":"A1","id":1,"articles":[{"title":"T2"},{"title":"T1"}]},{"name":"A2","id":2,"articles":[{"title":"T3"}]}]}}',
    );
  });

  test('object relationship, where through relationship, aliases, __typename', async () => {
    const r = JSON.parse(await run('{ a: article(where: {author: {name: {_eq: "A1"}}}, order_by: {id: asc}) { __typename t: title author { name } } }'));
    assert.deepEqual(r, {
      data: {
        a: [
          { __typename: 'article', t: 'T1', author: { name: 'A1' } },
          { __typename: 'article', t: 'T2', author: { name: 'A1' } },
        ],
      },
    });
  });

  test('numbers: bigint/numeric as numbers, or strings with stringify', async () => {
    const plain = JSON.parse(await run('{ article_by_pk(id: 1) { price author { rating } } }'));
    assert.deepEqual(plain.data.article_by_pk.price, 1.5);
    const r = await run('{ article_by_pk(id: 1) { price author { rating } } }', undefined, 'admin', {}, { stringifyNumericTypes: true });
    assert.equal(r, '{"data":{"article_by_pk":{"price":"1.50","author":{"rating":"9007199254740993"}}}}');
  });

  test('integer literals beyond double precision keep their digits', async () => {
    const r = JSON.parse(await run('{ author(where: {rating: {_eq: 9007199254740993}}) { id } }'));
    assert.deepEqual(r.data.author, [{ id: 1 }]);
  });

  test('json path argument and timestamptz formatting', async () => {
    const r = JSON.parse(await run('{ author_by_pk(id: 1) { y: bio(path: "$.x.y[1]") bio createdAt } }'));
    assert.deepEqual(r.data.author_by_pk, { y: 2, bio: { x: { y: [1, 2] } }, createdAt: '2017-09-21T09:39:44+00:00' });
  });

  test('operators: _in/_nin (empty lists), _like, _is_null, jsonb, _not', async () => {
    const q = `{
      a: author(where: {name: {_in: []}}) { id }
      b: author(where: {name: {_nin: []}}, order_by: {id: asc}) { id }
      c: author(where: {bio: {_has_key: "k"}}) { id }
      d: author(where: {bio: {_contains: {x: {y: [2]}}}}) { id }
      e: article(where: {_not: {price: {_is_null: false}}}) { id }
      g: article(where: {title: {_ilike: "t1%"}}) { id }
    }`;
    const r = JSON.parse(await run(q));
    assert.deepEqual(r.data, { a: [], b: [{ id: 1 }, { id: 2 }, { id: 3 }], c: [{ id: 3 }], d: [{ id: 1 }], e: [{ id: 3 }], g: [{ id: 1 }] });
  });

  test('order by array relationship aggregate and object relationship; distinct_on', async () => {
    const r = JSON.parse(
      await run('{ author(order_by: [{articles_aggregate: {count: desc}}, {id: desc}]) { id } article(order_by: [{author: {name: desc}}, {id: asc}]) { id } }'),
    );
    assert.deepEqual(
      r.data.author.map((x: { id: number }) => x.id),
      [1, 3, 2],
    );
    assert.deepEqual(
      r.data.article.map((x: { id: number }) => x.id),
      [4, 3, 1, 2],
    );
    const d = JSON.parse(await run('{ article(distinct_on: author_id, order_by: [{author_id: asc}, {id: desc}]) { id } }'));
    assert.deepEqual(d.data.article, [{ id: 2 }, { id: 3 }, { id: 4 }]);
  });

  test('aggregates', async () => {
    const r = await run('{ article_aggregate(where: {is_published: {_eq: true}}) { aggregate { count max { title } sum { price } } nodes { id } } }');
    assert.deepEqual(JSON.parse(r), {
      data: { article_aggregate: { aggregate: { count: 2, max: { title: 'T3' }, sum: { price: 1.5 } }, nodes: [{ id: 1 }, { id: 3 }] } },
    });
  });

  test('enum tables: values are GraphQL enums', async () => {
    const r = JSON.parse(await run('{ paint(where: {color: {_eq: red}}) { id color } }'));
    assert.deepEqual(r.data.paint, [
      { id: 1, color: 'red' },
      { id: 3, color: 'red' },
    ]);
    const bad = JSON.parse(await run('{ paint(where: {color: {_eq: green}}) { id } }'));
    assert.deepEqual(bad.errors[0], {
      extensions: { path: '$.selectionSet.paint.args.where.color._eq', code: 'validation-failed' },
      message: 'unexpected value "green" for enum: \'colors_enum\'',
    });
  });

  test('tracked functions and computed fields', async () => {
    const text = await run(
      '{ search_articles(args: {q: "t"}, order_by: {id: asc}, limit: 2) { id } author_by_pk(id: 1) { label(args: {}) l2: label(args: {suffix: "?"}) sess } }',
      undefined,
      'admin',
      { 'x-svc-user-id': '7' },
    );
    const r = JSON.parse(text);
    assert.ok(r.data, text);
    assert.deepEqual(r.data, { search_articles: [{ id: 1 }, { id: 2 }], author_by_pk: { label: 'A1!', l2: 'A1?', sess: '7' } });
  });

  test('@skip/@include and fragments merge fields', async () => {
    const q = 'query($s: Boolean!) { author_by_pk(id: 1) { id @skip(if: $s) ...F } } fragment F on author { name id }';
    assert.equal(await run(q, { s: true }), '{"data":{"author_by_pk":{"name":"A1","id":1}}}');
    assert.equal(await run(q, { s: false }), '{"data":{"author_by_pk":{"id":1,"name":"A1"}}}');
  });
});

describe('permissions', () => {
  test('row filter, column set and limit of the role', async () => {
    const text = await run('{ article(order_by: {id: asc}) { id title } author { id name label(args: {}) } }', undefined, 'user', { 'x-svc-user-id': '3' });
    const r = JSON.parse(text);
    assert.ok(r.data, text);
    assert.deepEqual(r.data, {
      article: [
        { id: 1, title: 'T1' },
        { id: 3, title: 'T3' },
      ],
      author: [{ id: 3, name: 'A3', label: 'A3!' }],
    });
  });

  test('aggregates count all permitted rows; the role limit bounds nodes', async () => {
    const r = JSON.parse(await run('{ article_aggregate { aggregate { count } nodes { id } } }', undefined, 'user', { 'x-svc-user-id': '3' }));
    assert.deepEqual(r.data.article_aggregate, { aggregate: { count: 3 }, nodes: [{ id: 1 }, { id: 3 }] });
  });

  test('hidden columns and tables do not exist for the role', async () => {
    const r = JSON.parse(await run('{ article { price } }', undefined, 'user', { 'x-svc-user-id': '3' }));
    assert.deepEqual(r.errors[0], {
      extensions: { path: '$.selectionSet.article.selectionSet.price', code: 'validation-failed' },
      message: 'field "price" not found in type: \'article\'',
    });
    const t = JSON.parse(await run('{ paint { id } }', undefined, 'user', { 'x-svc-user-id': '3' }));
    assert.equal(t.errors[0].message, 'field "paint" not found in type: \'query_root\'');
    const agg = JSON.parse(await run('{ author_aggregate { aggregate { count } } }', undefined, 'user', { 'x-svc-user-id': '3' }));
    assert.equal(agg.errors[0].message, 'field "author_aggregate" not found in type: \'query_root\'');
  });

  test('a missing session variable is named', async () => {
    const r = JSON.parse(await run('{ author { id } }', undefined, 'user'));
    assert.deepEqual(r, { errors: [{ extensions: { path: '$', code: 'not-found' }, message: '"x-svc-user-id" header is expected but not found' }] });
  });
});

describe('validation errors', () => {
  const err = async (q: string, variables?: Record<string, unknown>) => JSON.parse(await run(q, variables)).errors[0];
  test('unknown field, argument, operator', async () => {
    assert.deepEqual(await err('{ nope { id } }'), {
      extensions: { path: '$.selectionSet.nope', code: 'validation-failed' },
      message: 'field "nope" not found in type: \'query_root\'',
    });
    assert.deepEqual(await err('{ author(where: {name: {_ne: "x"}}) { id } }'), {
      extensions: { path: '$.selectionSet.author.args.where.name._ne', code: 'validation-failed' },
      message: 'field "_ne" not found in type: \'String_comparison_exp\'',
    });
  });
  test('limit and offset', async () => {
    assert.deepEqual(await err('{ author(limit: -1) { id } }'), {
      extensions: { path: '$.selectionSet.author.args.limit', code: 'not-supported' },
      message: 'unexpected negative value',
    });
    assert.deepEqual(await err('{ author(limit: "1") { id } }'), {
      extensions: { path: '$.selectionSet.author.args.limit', code: 'validation-failed' },
      message: 'expecting Integer value for "limit"',
    });
  });
  test('variables', async () => {
    assert.deepEqual(await err('query($id: Int!) { author_by_pk(id: $id) { id } }', { id: null }), {
      extensions: { path: '$.variableValues.id', code: 'validation-failed' },
      message: 'null value found for non-nullable type: Int!',
    });
  });
  test('fragment cycles', async () => {
    const e = await err('{ author { ...A } } fragment A on author { articles { ...B } } fragment B on article { author { ...A } }');
    assert.equal(e.message, 'cannot spread fragment "A" within itself via B,A');
    assert.equal(e.extensions.path, '$.selectionSet.author.selectionSet.A.selectionSet.articles.selectionSet.B.selectionSet.author.selectionSet');
  });
  test('function arguments', async () => {
    const e = await err('{ search_articles(args: {lim: 1}) { id } }');
    assert.deepEqual(e, {
      extensions: { path: '$.selectionSet.search_articles.args.args', code: 'not-supported' },
      message: 'Non default arguments cannot be omitted',
    });
  });
  test('a string that is no integer is refused before SQL; what only the database can judge is a data error', async () => {
    const e = await err('{ author(where: {id: {_eq: "x"}}) { id } }');
    assert.deepEqual(e, {
      extensions: { path: '$.selectionSet.author.args.where.id._eq', code: 'validation-failed' },
      message: 'expected Int32, encountered String "x"',
    });
    const d = await err('{ author(where: {id: {_eq: "99999999999999999999"}}) { id } }');
    assert.equal(d.extensions.code, 'parse-failed');
  });
});

describe('plan cache', () => {
  test('a repeated request reuses its plan; leaf variables are parameters', async () => {
    f.planCache.resetStats();
    const q = 'query($id: Int) { author(where: {id: {_eq: $id}}) { name } }';
    assert.equal(await run(q, { id: 1 }), '{"data":{"author":[{"name":"A1"}]}}');
    assert.equal(await run(q, { id: 2 }), '{"data":{"author":[{"name":"A2"}]}}');
    assert.deepEqual({ ...f.planCache.stats }, { hits: 1, misses: 1 });
  });

  test('variables that shape the statement key the plan by value', async () => {
    f.planCache.resetStats();
    const q = 'query($w: author_bool_exp, $l: Int) { author(where: $w, limit: $l, order_by: {id: asc}) { id } }';
    assert.equal(await run(q, { w: { id: { _eq: 2 } } }), '{"data":{"author":[{"id":2}]}}');
    assert.equal(await run(q, { w: { id: { _gt: 1 } }, l: 1 }), '{"data":{"author":[{"id":2}]}}');
    assert.equal(await run(q, { w: { id: { _eq: 2 } } }), '{"data":{"author":[{"id":2}]}}');
    assert.deepEqual({ ...f.planCache.stats }, { hits: 1, misses: 2 });
  });

  test('a list variable of scalars is one array parameter', async () => {
    f.planCache.resetStats();
    const q = 'query($ids: [Int!]) { author(where: {id: {_in: $ids}}, order_by: {id: asc}) { id } }';
    assert.deepEqual(JSON.parse(await run(q, { ids: [1, 3] })), { data: { author: [{ id: 1 }, { id: 3 }] } });
    assert.equal(await run(q, { ids: [] }), '{"data":{"author":[]}}');
    assert.equal(await run(q, { ids: [2] }), '{"data":{"author":[{"id":2}]}}');
    assert.deepEqual({ ...f.planCache.stats }, { hits: 2, misses: 1 });
  });

  test('an object variable keys the plan by its shape; its leaves are parameters', async () => {
    f.planCache.resetStats();
    const q = 'query($w: author_bool_exp) { author(where: $w, order_by: {id: asc}) { id } }';
    assert.equal(await run(q, { w: { name: { _eq: 'A1' } } }), '{"data":{"author":[{"id":1}]}}');
    assert.equal(await run(q, { w: { name: { _eq: 'A3' } } }), '{"data":{"author":[{"id":3}]}}');
    assert.equal(await run(q, { w: { name: { _in: ['A2', 'A3'] } } }).then((t) => t.replace(/\s/g, '')), '{"data":{"author":[{"id":2},{"id":3}]}}');
    assert.equal(await run(q, { w: { name: { _in: ['A1', 'A2'] } } }).then((t) => t.replace(/\s/g, '')), '{"data":{"author":[{"id":1},{"id":2}]}}');
    assert.equal(await run(q, { w: { _and: [{ id: { _gt: 1 } }, { id: { _lt: 3 } }] } }), '{"data":{"author":[{"id":2}]}}');
    assert.equal(await run(q, { w: { _and: [{ id: { _gt: 0 } }, { id: { _lt: 2 } }] } }), '{"data":{"author":[{"id":1}]}}');
    // same shapes → hits: the second of each pair
    assert.deepEqual({ ...f.planCache.stats }, { hits: 3, misses: 3 });
  });

  test('values a plan is built from (not parameters) still key it by value', async () => {
    f.planCache.resetStats();
    const q = 'query($w: author_bool_exp, $o: [author_order_by!]) { author(where: $w, order_by: $o) { id } }';
    const ids = async (v: Record<string, unknown>) => (JSON.parse(await run(q, v)).data.author as Array<{ id: number }>).map((a) => a.id);
    assert.deepEqual(await ids({ w: { rating: { _is_null: true } }, o: [{ id: 'asc' }] }), [3]);
    assert.deepEqual(await ids({ w: { rating: { _is_null: false } }, o: [{ id: 'asc' }] }), [1, 2]);
    assert.deepEqual(await ids({ w: { rating: { _is_null: false } }, o: [{ id: 'desc' }] }), [2, 1]);
    assert.deepEqual(await ids({ w: { rating: { _is_null: true } }, o: [{ id: 'asc' }] }), [3]);
    assert.equal(f.planCache.stats.misses, 3);
  });

  test('plans are per role and per schema version', async () => {
    const cache = new PlanCache();
    const ctx = f.ctx('user', { 'x-svc-user-id': '1' });
    await runGraphQL(ctx, { query: '{ author { id } }' }, { planCache: cache });
    await runGraphQL(f.ctx(), { query: '{ author { id } }' }, { planCache: cache });
    await runGraphQL(ctx, { query: '{ author { id } }' }, { planCache: cache });
    assert.deepEqual({ ...cache.stats }, { hits: 1, misses: 2 });
  });
});

describe('explain and v1alpha1', () => {
  test('explain shows the SQL with the session values and the plan', async () => {
    const r = (await explainGraphQL(f.ctx(), { query: { query: '{ author { id } }' }, user: { 'x-svc-role': 'user', 'X-Svc-User-Id': '2' } })) as Array<{
      field: string;
      sql: string;
      plan: string[];
    }>;
    assert.equal(r[0]!.field, 'author');
    assert.match(r[0]!.sql, /'2'/);
    assert.ok(r[0]!.plan.length > 0);
  });

  test('v1alpha1 error envelope', async () => {
    const r = JSON.parse(await runGraphQL(f.ctx(), { query: '{ nope { id } }' }, { v1alpha1: true }));
    assert.deepEqual(r, {
      errors: [{ extensions: { path: '$.selectionSet.nope', code: 'validation-failed' }, message: 'field "nope" not found in type: \'query_root\'' }],
    });
  });
});

describe('a query of one database field: PostgreSQL writes the whole response text', () => {
  const plan = (query: string) => planRequest(f.ctx(), { query }, new PlanCache()).plan;

  test('constant fields around it are part of the statement; a missing row is null', async () => {
    const q = '{ a: __typename author_by_pk(id: 1) { name } z: __typename }';
    const p = plan(q);
    assert.deepEqual(p.response, { texts: ['', ''], columns: ['0'] });
    assert.match(p.statement!.compiled.text, /^SELECT '\{"data":\{"a":"query_root","author_by_pk":'::text \|\| coalesce\(/);
    assert.match(p.statement!.compiled.text, /\|\| ',"z":"query_root"\}\}'::text AS "0"$/);
    assert.equal(await run(q), '{"data":{"a":"query_root","author_by_pk":{"name":"A1"},"z":"query_root"}}');
    assert.equal(await run('{ author_by_pk(id: 99) { name } }'), '{"data":{"author_by_pk":null}}');
    assert.equal(await run('query ($id: Int!) { x: author_by_pk(id: $id) { id } }', { id: 2 }), '{"data":{"x":{"id":2}}}');
  });

  test('not with two database fields, a large constant (introspection) or a subscription: the row is spliced', async () => {
    const two = plan('{ a: author_by_pk(id: 1) { id } b: author_by_pk(id: 2) { id } }');
    assert.equal(two.response!.columns.length, 2);
    assert.equal(await run('{ a: author_by_pk(id: 1) { id } b: author_by_pk(id: 2) { id } }'), '{"data":{"a":{"id":1},"b":{"id":2}}}');
    const intro = plan('{ __schema { queryType { name } types { name } } author_by_pk(id: 1) { id } }');
    assert.equal(intro.response!.texts[0]!.startsWith('{"data":{"__schema":'), true);
    assert.ok(!intro.statement!.compiled.text.includes('__schema'));
    const sub = plan('subscription { author_by_pk(id: 1) { id } }');
    assert.deepEqual(sub.response, { texts: ['{"data":{"author_by_pk":', '}}'], columns: ['0'] });
  });
});

describe('plan cache: null and absent variables', () => {
  test('a plan built for a null or absent leaf variable is not reused for a value', async () => {
    const cache = new PlanCache();
    const query = 'query($l: Int) { author(limit: $l, order_by: {id: asc}) { id } }';
    const count = async (variables: Record<string, unknown>) =>
      JSON.parse(await runGraphQL(f.ctx(), { query, variables }, { planCache: cache })).data.author.length;
    assert.equal(await count({ l: null }), 3);
    assert.equal(await count({ l: 1 }), 1);
    assert.equal(await count({}), 3);
    assert.equal(await count({ l: 2 }), 2);
  });
});
