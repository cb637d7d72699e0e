/**
 * SQL snapshots: GraphQL query → IR (through the role schema's parsers) → the exact SQL.
 * Literals of the query text are inlined (the plan is cached per query text); GraphQL
 * variables are `$n` parameters; session variables are read from the session JSON `$1`.
 * Review a changed snapshot as a diff of the generated statement.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { blogCache, sqlOf } from './fake.js';

const cache = blogCache();

test('columns of a table: json_agg over the rows', () => {
  const sql = sqlOf(cache, 'admin', '{ author { id name } }', {}, true);
  assert.deepEqual(sql, [
    'SELECT (SELECT coalesce(json_agg("_r2"), \'[]\') FROM (SELECT "_t1"."id" AS "id", "_t1"."name" AS "name" FROM "public"."author" AS "_t1" WHERE true) AS "_r2") AS "root"',
  ]);
});

test('where, order by through an object relationship, limit/offset, object relationship', () => {
  const sql = sqlOf(
    cache,
    'admin',
    '{ article(where: {id: {_eq: 1}, title: {_like: "%a%"}}, order_by: [{author: {name: desc}}, {id: asc}], limit: 5, offset: 2) { id author { name } } }',
    {},
    true,
  );
  assert.deepEqual(sql, [
    'SELECT (SELECT coalesce(json_agg("_r2"), \'[]\') FROM (SELECT "_t1"."id" AS "id", (SELECT row_to_json("_r4") FROM (SELECT "_t3"."name" AS "name" FROM "public"."author" AS "_t3" WHERE ("_t3"."id") = ("_t1"."author_id") LIMIT 1) AS "_r4") AS "author" FROM "public"."article" AS "_t1" WHERE (("_t1"."id") = ((\'1\')::int4)) AND (("_t1"."title") LIKE ((\'%a%\')::text)) ORDER BY (SELECT "_o5"."name" FROM "public"."author" AS "_o5" WHERE ("_o5"."id") = ("_t1"."author_id") LIMIT 1) DESC NULLS FIRST, "_t1"."id" ASC NULLS LAST LIMIT 5 OFFSET 2) AS "_r2") AS "root"',
  ]);
});

test('role filters and limit; session variables read from $1', () => {
  const sql = sqlOf(cache, 'user', '{ author { id articles(where: {title: {_eq: "t"}}) { title } } }', {}, true);
  assert.deepEqual(sql, [
    'SELECT (SELECT coalesce(json_agg("_r2"), \'[]\') FROM (SELECT "_t1"."id" AS "id", (SELECT coalesce(json_agg("_r4"), \'[]\') FROM (SELECT "_t3"."title" AS "title" FROM "public"."article" AS "_t3" WHERE (("_t3"."author_id") = ("_t1"."id")) AND ((("_t3"."author_id") = ((($1::json->>\'x-svc-user-id\'))::int4)) OR (("_t3"."is_published") = ((\'true\')::bool))) AND (("_t3"."title") = ((\'t\')::text))) AS "_r4") AS "articles" FROM "public"."author" AS "_t1" WHERE ("_t1"."id") = ((($1::json->>\'x-svc-user-id\'))::int4) LIMIT 10) AS "_r2") AS "root"',
  ]);
});

test('aggregate with nodes', () => {
  const sql = sqlOf(
    cache,
    'admin',
    '{ author_aggregate(where: {rating: {_gt: 2}}) { aggregate { count(columns: [id], distinct: true) sum { rating } max { name } } nodes { name } } }',
    {},
    true,
  );
  assert.deepEqual(sql, [
    'SELECT (SELECT json_build_object(\'aggregate\', json_build_object(\'count\', count(DISTINCT "_r2"."a0"), \'sum\', json_build_object(\'rating\', sum("_r2"."a1")), \'max\', json_build_object(\'name\', max("_r2"."a2"))), \'nodes\', coalesce(json_agg("_r2"."n0"), \'[]\')) FROM (SELECT "_t1"."id" AS "a0", "_t1"."rating" AS "a1", "_t1"."name" AS "a2", (SELECT row_to_json("_e3") FROM (SELECT "_t1"."name" AS "name") AS "_e3") AS "n0" FROM "public"."author" AS "_t1" WHERE ("_t1"."rating") > ((\'2\')::int8)) AS "_r2") AS "root"',
  ]);
});

test('by primary key with a variable parameter', () => {
  const sql = sqlOf(cache, 'admin', 'query($id: Int!) { author_by_pk(id: $id) { id } }', { id: 1 }, true);
  assert.deepEqual(sql, [
    'SELECT (SELECT row_to_json("_r2") FROM (SELECT "_t1"."id" AS "id" FROM "public"."author" AS "_t1" WHERE ("_t1"."id") = (($1)::int4) LIMIT 1) AS "_r2") AS "root"',
  ]);
});

test('_or/_not, jsonb operator, relationship EXISTS', () => {
  const sql = sqlOf(
    cache,
    'admin',
    '{ article(where: {_or: [{tags: {_has_keys_any: ["a","b"]}}, {author: {name: {_in: ["x","y"]}}}], _not: {id: {_is_null: true}}}) { id } }',
    {},
    true,
  );
  assert.deepEqual(sql, [
    'SELECT (SELECT coalesce(json_agg("_r2"), \'[]\') FROM (SELECT "_t1"."id" AS "id" FROM "public"."article" AS "_t1" WHERE ((("_t1"."tags") ?| (ARRAY[(\'a\')::text, (\'b\')::text]::text[])) OR (EXISTS (SELECT 1 FROM "public"."author" AS "_t3" WHERE (("_t3"."id") = ("_t1"."author_id")) AND (("_t3"."name") IN ((\'x\')::text, (\'y\')::text))))) AND (NOT (("_t1"."id") IS NULL))) AS "_r2") AS "root"',
  ]);
});

test('order by an array relationship aggregate', () => {
  const sql = sqlOf(cache, 'admin', '{ author(order_by: {articles_aggregate: {count: desc}}) { id } }', {}, true);
  assert.deepEqual(sql, [
    'SELECT (SELECT coalesce(json_agg("_r2"), \'[]\') FROM (SELECT "_t1"."id" AS "id" FROM "public"."author" AS "_t1" WHERE true ORDER BY (SELECT count(*) FROM "public"."article" AS "_o3" WHERE ("_o3"."author_id") = ("_t1"."id")) DESC NULLS FIRST) AS "_r2") AS "root"',
  ]);
});

test('distinct_on', () => {
  const sql = sqlOf(cache, 'admin', '{ author(distinct_on: [name], order_by: [{name: asc}, {id: desc}]) { id } }', {}, true);
  assert.deepEqual(sql, [
    'SELECT (SELECT coalesce(json_agg("_r2"), \'[]\') FROM (SELECT DISTINCT ON ("_t1"."name") "_t1"."id" AS "id" FROM "public"."author" AS "_t1" WHERE true ORDER BY "_t1"."name" ASC NULLS LAST, "_t1"."id" DESC NULLS FIRST) AS "_r2") AS "root"',
  ]);
});

test('aggregate for a role', () => {
  const sql = sqlOf(cache, 'user', '{ article_aggregate { aggregate { count } } }', {}, true);
  assert.deepEqual(sql, [
    'SELECT (SELECT json_build_object(\'aggregate\', json_build_object(\'count\', count(*))) FROM (SELECT 1 AS "one" FROM "public"."article" AS "_t1" WHERE (("_t1"."author_id") = ((($1::json->>\'x-svc-user-id\'))::int4)) OR (("_t1"."is_published") = ((\'true\')::bool))) AS "_r2") AS "root"',
  ]);
});

test('bigint stringified, string literal cast by the database', () => {
  const sql = sqlOf(cache, 'admin', '{ author(where: {rating: {_eq: "12"}}) { rating } }', {}, true);
  assert.deepEqual(sql, [
    'SELECT (SELECT coalesce(json_agg("_r2"), \'[]\') FROM (SELECT ("_t1"."rating")::text AS "rating" FROM "public"."author" AS "_t1" WHERE ("_t1"."rating") = ((\'12\')::int8)) AS "_r2") AS "root"',
  ]);
});
