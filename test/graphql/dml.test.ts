/**
 * /v1/query DML (select, count, insert, update, delete) through the shared
 * compiler and permissions, against PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runDmlInsert } from '../../src/dml/insert.js';
import { runDmlDelete, runDmlUpdate } from '../../src/dml/mutate.js';
import { runDmlCount, runDmlSelect } from '../../src/dml/select.js';
import { SvcError } from '../../src/errors.js';
import { emptyMetadata, fixture, table, type Fixture } from './helpers.js';

let f: Fixture;

before(async () => {
  const md = emptyMetadata();
  md.tables.push(
    table('author', {
      array_relationships: [{ name: 'articles', using: { foreign_key_constraint_on: { table: { schema: 'public', name: 'article' }, column: 'author_id' } } }],
      select_permissions: [{ role: 'user', permission: { columns: ['id', 'name'], filter: {} } }],
    }),
    table('article', {
      object_relationships: [{ name: 'author', using: { foreign_key_constraint_on: 'author_id' } }],
      select_permissions: [{ role: 'user', permission: { columns: ['id', 'title', 'author_id'], filter: { author_id: 'X-Svc-User-Id' } } }],
      insert_permissions: [{ role: 'user', permission: { check: { author_id: 'X-Svc-User-Id' }, columns: ['title', 'author_id'], set: {} } }],
      update_permissions: [{ role: 'user', permission: { columns: ['title'], filter: { author_id: 'X-Svc-User-Id' }, set: {} } }],
      delete_permissions: [{ role: 'user', permission: { filter: { author_id: 'X-Svc-User-Id' } } }],
    }),
  );
  f = await fixture(
    `create table author (id serial primary key, name text, big bigint);
     create table article (id serial primary key, title text, author_id int references author(id));`,
    md,
  );
});
after(() => f.close());

const admin = () => f.ctx();
const user = (id: string) => f.ctx('user', { 'x-svc-user-id': id });

async function rejects(p: Promise<unknown>, expected: Partial<SvcError>): Promise<void> {
  await assert.rejects(p, (e: SvcError) => {
    for (const [k, v] of Object.entries(expected)) assert.equal((e as unknown as Record<string, unknown>)[k], v);
    return true;
  });
}

test('insert (admin) with returning, stringified bigint', async () => {
  const r = await runDmlInsert(f.ctx('admin', {}, { stringifyNumericTypes: true }), {
    table: 'author',
    objects: [{ name: 'A1', big: 5 }, { name: 'A2' }],
    returning: ['id', 'big'],
  });
  assert.deepEqual(r, {
    affected_rows: 2,
    returning: [
      { id: 1, big: '5' },
      { id: 2, big: null },
    ],
  });
  await runDmlInsert(admin(), {
    table: 'article',
    objects: [
      { title: 'T1', author_id: 1 },
      { title: 'T2', author_id: 2 },
    ],
  });
});

test('insert for a role: check and columns', async () => {
  assert.deepEqual(await runDmlInsert(user('1'), { table: 'article', objects: [{ title: 'T3', author_id: 1 }] }), { affected_rows: 1 });
  await rejects(runDmlInsert(user('1'), { table: 'article', objects: [{ title: 'x', author_id: 2 }] }), {
    code: 'permission-error',
    message: 'Check constraint violation. insert check constraint failed',
  });
  await rejects(runDmlInsert(user('1'), { table: 'author', objects: [{ name: 'x' }] }), {
    code: 'permission-denied',
    message: 'insert on "author" for role "user" is not allowed. ',
  });
});

test('select with nested relationships, order, limit; role columns', async () => {
  const r = await runDmlSelect(admin(), {
    table: 'author',
    columns: ['name', { name: 'articles', columns: ['title'], order_by: '-id' }],
    order_by: ['+id'],
    limit: 1,
  });
  assert.deepEqual(r, [{ name: 'A1', articles: [{ title: 'T3' }, { title: 'T1' }] }]);
  const u = await runDmlSelect(user('1'), {
    table: 'article',
    columns: ['*', { name: 'author', alias: 'a', columns: ['name'] }],
    order_by: [{ column: 'id', type: 'asc' }],
  });
  assert.deepEqual(u, [
    { id: 1, title: 'T1', author_id: 1, a: { name: 'A1' } },
    { id: 3, title: 'T3', author_id: 1, a: { name: 'A1' } },
  ]);
  await rejects(runDmlSelect(user('1'), { table: 'author', columns: ['id', 'big'] }), {
    code: 'permission-denied',
    path: '$.args.columns[1]',
    message: 'role "user" does not have permission to select column "big"',
  });
});

test('count, with distinct and permissions', async () => {
  assert.deepEqual(await runDmlCount(admin(), { table: 'article' }), { count: 3 });
  assert.deepEqual(await runDmlCount(admin(), { table: 'article', distinct: ['author_id'] }), { count: 2 });
  assert.deepEqual(await runDmlCount(user('2'), { table: 'article', where: { title: { $like: 'T%' } } }), { count: 1 });
  await rejects(runDmlCount(f.ctx('nobody'), { table: 'article' }), { code: 'permission-denied' });
});

test('update and delete honour the role filter', async () => {
  assert.deepEqual(await runDmlUpdate(user('2'), { table: 'article', where: {}, $set: { title: 'U' }, returning: ['id', 'title'] }), {
    affected_rows: 1,
    returning: [{ id: 2, title: 'U' }],
  });
  assert.deepEqual(await runDmlCount(admin(), { table: 'article', where: { title: 'U' } }), { count: 1 });
  await rejects(runDmlUpdate(user('2'), { table: 'article', where: {}, $set: { author_id: 1 } }), { code: 'permission-denied' });
  await rejects(runDmlUpdate(admin(), { table: 'article', $set: { title: 'x' } }), { code: 'parse-failed', message: 'key "where" not found' });
  assert.deepEqual(await runDmlUpdate(admin(), { table: 'author', where: { id: 1 }, $inc: { big: 2 }, returning: ['big'] }), {
    affected_rows: 1,
    returning: [{ big: 7 }],
  });
  assert.deepEqual(await runDmlDelete(user('2'), { table: 'article', where: { id: { $gt: 0 } } }), { affected_rows: 1 });
  assert.deepEqual(await runDmlCount(admin(), { table: 'article' }), { count: 2 });
});
