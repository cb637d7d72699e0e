/**
 * SQL snapshots of mutations: GraphQL mutation → IR → the exact statements of each root field
 * (`write`, then `output` when the response reads rows the statement wrote). Review a changed
 * snapshot as a diff of the generated statements.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { blogCache, mutationSqlOf } from './fake.js';

const cache = blogCache((md) => {
  const [author, article] = md.tables;
  author!.insert_permissions = [{ role: 'user', permission: { check: { id: 'X-Svc-User-Id' }, columns: ['name'], set: { id: 'X-Svc-User-Id' } } }];
  article!.insert_permissions = [{ role: 'user', permission: { check: { author: { name: { _eq: 'me' } } }, columns: ['title', 'author_id'] } }];
  article!.update_permissions = [
    { role: 'user', permission: { columns: ['title'], filter: { author_id: 'X-Svc-User-Id' }, check: { is_published: false }, set: { is_published: false } } },
  ];
  article!.delete_permissions = [{ role: 'user', permission: { filter: { author_id: 'X-Svc-User-Id' } } }];
});

test('insert: one INSERT for all objects, DEFAULT for absent columns, returning from the written rows', () => {
  const sql = mutationSqlOf(
    cache,
    'admin',
    'mutation { insert_author(objects: [{name: "a"}, {name: "b", rating: 2}]) { affected_rows returning { id name } } }',
  );
  assert.deepEqual(sql, [
    [
      'WITH "_i1" AS (INSERT INTO "public"."author" AS "_t" ("name", "rating") VALUES ((\'a\')::text, DEFAULT), ((\'b\')::text, (\'2\')::int8) RETURNING "_t" AS "r"), "_rows2" AS (SELECT ((SELECT array_agg("r") FROM "_i1"))::"public"."author"[] AS "a") SELECT (json_build_object(\'affected_rows\', ((SELECT count(*) FROM "_i1")), \'returning\', (SELECT coalesce(json_agg("_r4"), \'[]\') FROM (SELECT "_t3"."id" AS "id", "_t3"."name" AS "name" FROM unnest((SELECT "a" FROM "_rows2")) AS "_t3" WHERE true) AS "_r4")))::text AS "result"',
    ],
  ]);
});

test('nested insert: parent first, all children in one INSERT reading the parent CTE; returning with relationships is a second statement', () => {
  const sql = mutationSqlOf(
    cache,
    'admin',
    'mutation { insert_author_one(object: {name: "a", articles: {data: [{title: "t1"}, {title: "t2"}]}}) { id articles { title } } }',
  );
  assert.deepEqual(sql, [
    [
      'WITH "_i1" AS (INSERT INTO "public"."author" AS "_t" ("name") VALUES ((\'a\')::text) RETURNING "_t" AS "r"), "_k4" AS (SELECT "r", row_number() OVER () AS "n" FROM "_i1"), "_i5" AS (INSERT INTO "public"."article" AS "_t" ("title", "author_id") SELECT "_v2"."c0", ("_j3"."r")."id" FROM (VALUES (1, 1, (\'t1\')::text), (2, 1, (\'t2\')::text)) AS "_v2"("o", "l0", "c0") JOIN "_k4" AS "_j3" ON "_j3"."n" = "_v2"."l0" WHERE CASE WHEN (SELECT count(*) FROM "_i1") = 1 THEN true ELSE (((\'svc-raise:0\' || (SELECT \'\'))::int4)::text)::bool END ORDER BY "_v2"."o" RETURNING "_t" AS "r") SELECT ((SELECT count(*) FROM "_i1") + (SELECT count(*) FROM "_i5"))::text AS "affected", ((SELECT array_agg("r") FROM "_i1"))::text AS "rows"',
      'SELECT ((SELECT row_to_json("_r2") FROM (SELECT "_t1"."id" AS "id", (SELECT coalesce(json_agg("_r4"), \'[]\') FROM (SELECT "_t3"."title" AS "title" FROM "public"."article" AS "_t3" WHERE ("_t3"."author_id") = ("_t1"."id")) AS "_r4") AS "articles" FROM unnest(($1)::"public"."author"[]) AS "_t1" WHERE true LIMIT 1) AS "_r2"))::text AS "result"',
    ],
  ]);
});

test('object relationship: the related row first (upsert), the parent reads its key', () => {
  const sql = mutationSqlOf(
    cache,
    'admin',
    'mutation { insert_article(objects: [{title: "t", author: {data: {name: "n"}, on_conflict: {constraint: author_pkey, update_columns: [name]}}}]) { affected_rows } }',
  );
  assert.deepEqual(sql, [
    [
      'WITH "_i1" AS (INSERT INTO "public"."author" AS "_t" ("name") VALUES ((\'n\')::text) ON CONFLICT ON CONSTRAINT "author_pkey" DO UPDATE SET "name" = EXCLUDED."name" RETURNING "_t" AS "r"), "_k4" AS (SELECT "r", row_number() OVER () AS "n" FROM "_i1"), "_i5" AS (INSERT INTO "public"."article" AS "_t" ("title", "author_id") SELECT "_v2"."c0", ("_j3"."r")."id" FROM (VALUES (1, 1, (\'t\')::text)) AS "_v2"("o", "l0", "c0") JOIN "_k4" AS "_j3" ON "_j3"."n" = "_v2"."l0" WHERE CASE WHEN (SELECT count(*) FROM "_i1") = 1 THEN true ELSE (((\'svc-raise:0\' || (SELECT \'\'))::int4)::text)::bool END ORDER BY "_v2"."o" RETURNING "_t" AS "r"), "_rows6" AS (SELECT ((SELECT array_agg("r") FROM "_i5"))::"public"."article"[] AS "a") SELECT (json_build_object(\'affected_rows\', ((SELECT count(*) FROM "_i1") + (SELECT count(*) FROM "_i5"))))::text AS "result"',
    ],
  ]);
});

test('role: presets from the session, checks per row; a check through a relationship sees the rows inserted before', () => {
  const sql = mutationSqlOf(cache, 'user', 'mutation { insert_article(objects: [{title: "t", author: {data: {name: "me"}}}]) { affected_rows } }');
  assert.deepEqual(sql, [
    [
      'WITH "_i1" AS (INSERT INTO "public"."author" AS "_t" ("id", "name") VALUES ((($1::json->>\'x-svc-user-id\'))::int4, (\'me\')::text) RETURNING "_t" AS "r", CASE WHEN ("_t"."id") = ((($1::json->>\'x-svc-user-id\'))::int4) THEN NULL ELSE (\'svc-raise:0\' || (SELECT \'\'))::int4 END AS "c"), "_k4" AS (SELECT "r", row_number() OVER () AS "n" FROM "_i1"), "_i6" AS (INSERT INTO "public"."article" AS "_t" ("title", "author_id") SELECT "_v2"."c0", ("_j3"."r")."id" FROM (VALUES (1, 1, (\'t\')::text)) AS "_v2"("o", "l0", "c0") JOIN "_k4" AS "_j3" ON "_j3"."n" = "_v2"."l0" WHERE CASE WHEN (SELECT count(*) FROM "_i1") = 1 THEN true ELSE (((\'svc-raise:1\' || (SELECT \'\'))::int4)::text)::bool END ORDER BY "_v2"."o" RETURNING "_t" AS "r", CASE WHEN EXISTS (SELECT 1 FROM (SELECT * FROM "public"."author" UNION ALL SELECT ("r").* FROM "_i1") AS "_t5" WHERE (("_t5"."id") = ("_t"."author_id")) AND (("_t5"."name") = ((\'me\')::text))) THEN NULL ELSE (\'svc-raise:0\' || (SELECT \'\'))::int4 END AS "c"), "_rows7" AS (SELECT ((SELECT array_agg("r") FROM "_i6"))::"public"."article"[] AS "a") SELECT (json_build_object(\'affected_rows\', ((SELECT count(*) FROM "_i1") + (SELECT count(*) FROM "_i6"))))::text AS "result"',
    ],
  ]);
});

test('update for a role: presets, filter, post-update check', () => {
  const sql = mutationSqlOf(cache, 'user', 'mutation { update_article(where: {id: {_eq: 1}}, _set: {title: "x"}) { affected_rows returning { id title } } }');
  assert.deepEqual(sql, [
    [
      'WITH "_m1" AS (UPDATE "public"."article" AS "_t" SET "is_published" = (\'false\')::bool, "title" = (\'x\')::text WHERE (("_t"."id") = ((\'1\')::int4)) AND (("_t"."author_id") = ((($1::json->>\'x-svc-user-id\'))::int4)) RETURNING "_t" AS "r", CASE WHEN ("_t"."is_published") = ((\'false\')::bool) THEN NULL ELSE (\'svc-raise:0\' || (SELECT \'\'))::int4 END AS "c"), "_rows2" AS (SELECT ((SELECT array_agg("r") FROM "_m1"))::"public"."article"[] AS "a") SELECT (json_build_object(\'affected_rows\', ((SELECT count(*) FROM "_m1")), \'returning\', (SELECT coalesce(json_agg("_r4"), \'[]\') FROM (SELECT "_t3"."id" AS "id", "_t3"."title" AS "title" FROM unnest((SELECT "a" FROM "_rows2")) AS "_t3" WHERE true) AS "_r4")))::text AS "result"',
    ],
  ]);
});

test('update by primary key: _inc and jsonb _append with a variable parameter', () => {
  const sql = mutationSqlOf(
    cache,
    'admin',
    'mutation ($v: jsonb) { update_article_by_pk(pk_columns: {id: 1}, _append: {tags: $v}, _inc: {author_id: 1}) { id } }',
    { v: { a: 1 } },
  );
  assert.deepEqual(sql, [
    [
      'WITH "_m1" AS (UPDATE "public"."article" AS "_t" SET "author_id" = "_t"."author_id" + (\'1\')::int4, "tags" = "_t"."tags" || ($1)::jsonb WHERE ("_t"."id") = ((\'1\')::int4) RETURNING "_t" AS "r"), "_rows2" AS (SELECT ((SELECT array_agg("r") FROM "_m1"))::"public"."article"[] AS "a") SELECT ((SELECT row_to_json("_r4") FROM (SELECT "_t3"."id" AS "id" FROM unnest((SELECT "a" FROM "_rows2")) AS "_t3" WHERE true LIMIT 1) AS "_r4"))::text AS "result"',
    ],
  ]);
});

test('delete for a role: the permission filter ANDed in', () => {
  const sql = mutationSqlOf(cache, 'user', 'mutation { delete_article(where: {title: {_eq: "x"}}) { affected_rows } }');
  assert.deepEqual(sql, [
    [
      'WITH "_m1" AS (DELETE FROM "public"."article" AS "_t" WHERE (("_t"."title") = ((\'x\')::text)) AND (("_t"."author_id") = ((($1::json->>\'x-svc-user-id\'))::int4)) RETURNING "_t" AS "r"), "_rows2" AS (SELECT ((SELECT array_agg("r") FROM "_m1"))::"public"."article"[] AS "a") SELECT (json_build_object(\'affected_rows\', ((SELECT count(*) FROM "_m1"))))::text AS "result"',
    ],
  ]);
});

test('delete by primary key returning a relationship: second statement over the deleted rows', () => {
  const sql = mutationSqlOf(cache, 'admin', 'mutation { delete_author_by_pk(id: 3) { id articles { id } } }');
  assert.deepEqual(sql, [
    [
      'WITH "_m1" AS (DELETE FROM "public"."author" AS "_t" WHERE ("_t"."id") = ((\'3\')::int4) RETURNING "_t" AS "r") SELECT ((SELECT count(*) FROM "_m1"))::text AS "affected", ((SELECT array_agg("r") FROM "_m1"))::text AS "rows"',
      'SELECT ((SELECT row_to_json("_r2") FROM (SELECT "_t1"."id" AS "id", (SELECT coalesce(json_agg("_r4"), \'[]\') FROM (SELECT "_t3"."id" AS "id" FROM "public"."article" AS "_t3" WHERE ("_t3"."author_id") = ("_t1"."id")) AS "_r4") AS "articles" FROM unnest(($1)::"public"."author"[]) AS "_t1" WHERE true LIMIT 1) AS "_r2"))::text AS "result"',
    ],
  ]);
});

test('nothing to insert: a constant response', () => {
  const sql = mutationSqlOf(cache, 'admin', 'mutation { insert_author(objects: []) { affected_rows returning { id } } }');
  assert.deepEqual(sql, [['{"affected_rows":0,"returning":[]}']]);
});
