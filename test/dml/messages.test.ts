/**
 * /v1/query DML errors with upstream v1.3's messages, codes and paths (src/permissions/messages.ts,
 * src/document/messages.ts): RQL/DML/Internal.hs `checkPermOnCol` (a role's columns are checked
 * before the column itself: admin is told "no such column exists"), RQL/Types.hs `askPGColInfo`
 * (`column "x" does not exist`), RQL/DML/Insert.hs, RQL/DML/Update.hs, RQL/DML/Count.hs.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const user = { 'X-Svc-Role': 'user' };

before(async () => {
  s = await startTestServer();
  await query(s.url, {
    type: 'run_sql',
    args: { sql: 'create table author (id int primary key, name text); create table article (id int primary key, author_id int references author(id))' },
  });
  await query(s.url, {
    type: 'bulk',
    args: [
      { type: 'track_table', args: { table: 'author' } },
      { type: 'track_table', args: { table: 'article' } },
      {
        type: 'create_array_relationship',
        args: { table: 'author', name: 'articles', using: { foreign_key_constraint_on: { table: 'article', column: 'author_id' } } },
      },
      { type: 'create_select_permission', args: { table: 'author', role: 'user', permission: { columns: ['id'], filter: {} } } },
      { type: 'create_update_permission', args: { table: 'author', role: 'user', permission: { columns: ['name'], filter: {} } } },
    ],
  });
});

after(async () => {
  await s?.close();
});

async function error(body: unknown, headers: Record<string, string> = {}) {
  const r = await postQuery(s.url, body, headers);
  assert.equal(r.status, 400, JSON.stringify(r.body));
  return r.body;
}

test('insert: a column the table lacks, a relationship given as a column (askPGColInfo)', async () => {
  assert.deepEqual(await error({ type: 'insert', args: { table: 'author', objects: [{ id: 1, nope: 2 }] } }), {
    path: '$.args.objects[0]',
    error: 'column "nope" does not exist',
    code: 'not-exists',
  });
  assert.deepEqual(await error({ type: 'insert', args: { table: 'author', objects: [{ id: 1, articles: [] }] } }), {
    path: '$.args.objects[0]',
    error: 'expecting a postgres column; but, "articles" is a relationship; relationships can\'t be inserted',
    code: 'unexpected-payload',
  });
});

test('insert: empty objects are refused before the table is looked up', async () => {
  assert.deepEqual(await error({ type: 'insert', args: { table: 'nope', objects: [] } }), {
    path: '$.args.objects',
    error: 'objects should not be empty',
    code: 'unexpected-payload',
  });
});

test('update: the permission is checked before the column (checkPermOnCol)', async () => {
  assert.deepEqual(await error({ type: 'update', args: { table: 'author', where: {}, $set: { nope: 1 } } }), {
    path: "$.args['$set']",
    error: 'no such column exists : "nope"',
    code: 'permission-denied',
  });
  assert.deepEqual(await error({ type: 'update', args: { table: 'author', where: {}, $set: { nope: 1 } } }, user), {
    path: "$.args['$set']",
    error: 'role "user" does not have permission to update column "nope"',
    code: 'permission-denied',
  });
});

test('returning, select columns and count distinct: the role is told about permission, not existence', async () => {
  assert.deepEqual(await error({ type: 'update', args: { table: 'author', where: {}, $set: { name: 'x' }, returning: ['nope'] } }, user), {
    path: '$.args.returning',
    error: 'role "user" does not have permission to select column "nope"',
    code: 'permission-denied',
  });
  assert.deepEqual(await error({ type: 'select', args: { table: 'author', columns: ['articles'] } }, user), {
    path: '$.args.columns[0]',
    error: 'role "user" does not have permission to select column "articles"',
    code: 'permission-denied',
  });
  assert.deepEqual(await error({ type: 'select', args: { table: 'author', columns: ['articles'] } }), {
    path: '$.args.columns[0]',
    error: 'no such column exists : "articles"',
    code: 'permission-denied',
  });
  assert.deepEqual(await error({ type: 'count', args: { table: 'author', distinct: ['name'] } }, user), {
    path: '$.args.distinct[0]',
    error: 'role "user" does not have permission to select column "name"',
    code: 'permission-denied',
  });
});

// RQL/GBoolExp.hs: `_and`/`_or`/`_not` and relationships add no path key; a column adds its name,
// an operator its own (unquoted in the message); an unknown field is askFieldInfo's "does not exist"
test('where: the paths and messages of annBoolExp', async () => {
  assert.deepEqual(await error({ type: 'select', args: { table: 'author', columns: ['id'], where: { _and: [{ _not: { id: { _foo: 1 } } }] } } }), {
    path: '$.args.where.id._foo',
    error: 'Unknown operator : _foo',
    code: 'unexpected-payload',
  });
  assert.deepEqual(await error({ type: 'select', args: { table: 'author', columns: ['id'], where: { articles: { nope: { _eq: 1 } } } } }), {
    path: '$.args.where',
    error: '"nope" does not exist',
    code: 'not-exists',
  });
});
