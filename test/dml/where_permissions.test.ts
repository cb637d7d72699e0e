/**
 * The boolean expressions a role sends to /v1/query (`where` of select,
 * count, update and delete; `_exists`; relationship paths; `order_by`;
 * relationship columns) are checked against the role's select permissions
 * for every table and column they touch, and the select filter of every
 * table reached through a relationship or `_exists` is ANDed in (issue 11,
 * item 1). Over HTTP on a real server. A rejection's path is the `where`
 * itself, as upstream's checkSelPerm reports it (RQL/DML/Internal.hs: the
 * permission check runs on the parsed expression, outside any withPathK).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;

const SQL = `
  create table users (id int primary key, email text not null, secret text not null);
  create table docs (id int primary key, title text not null, owner_id int not null references users(id), hidden text);
  create table secrets (id int primary key, value text not null);
  insert into users values (1, 'a@x', 's1'), (2, 'b@x', 's2');
  insert into docs values (1, 'd1', 1, 'h1'), (2, 'd2', 2, 'h2'), (3, 'd3', 2, 'h3');
  insert into secrets values (1, 'topsecret');
`;

const DOC_COLUMNS = ['id', 'title', 'owner_id'];

before(async () => {
  s = await startTestServer();
  await query(s.url, {
    type: 'bulk',
    args: [
      { type: 'run_sql', args: { sql: SQL } },
      { type: 'track_table', args: { name: 'users' } },
      { type: 'track_table', args: { name: 'docs' } },
      { type: 'track_table', args: { name: 'secrets' } },
      { type: 'create_object_relationship', args: { table: 'docs', name: 'owner', using: { foreign_key_constraint_on: 'owner_id' } } },
      {
        type: 'create_array_relationship',
        args: { table: 'users', name: 'docs', using: { foreign_key_constraint_on: { table: 'docs', column: 'owner_id' } } },
      },
      // user: sees its own user row (no secret), every doc (not `hidden`)
      { type: 'create_select_permission', args: { table: 'users', role: 'user', permission: { columns: ['id', 'email'], filter: { id: 'X-Svc-User-Id' } } } },
      { type: 'create_select_permission', args: { table: 'docs', role: 'user', permission: { columns: DOC_COLUMNS, filter: {} } } },
      { type: 'create_update_permission', args: { table: 'docs', role: 'user', permission: { columns: ['title'], filter: {} } } },
      { type: 'create_delete_permission', args: { table: 'docs', role: 'user', permission: { filter: {} } } },
      // reader: docs only, no permission at all on users
      { type: 'create_select_permission', args: { table: 'docs', role: 'reader', permission: { columns: DOC_COLUMNS, filter: {} } } },
      { type: 'create_update_permission', args: { table: 'docs', role: 'reader', permission: { columns: ['title'], filter: {} } } },
      { type: 'create_delete_permission', args: { table: 'docs', role: 'reader', permission: { filter: {} } } },
      // writer: may update and delete docs but not select them
      { type: 'create_update_permission', args: { table: 'docs', role: 'writer', permission: { columns: ['title'], filter: {} } } },
      { type: 'create_delete_permission', args: { table: 'docs', role: 'writer', permission: { filter: {} } } },
    ],
  });
});
after(() => s?.close());

const as = (role: string, id = '1') => ({ 'x-svc-role': role, 'x-svc-user-id': id });

async function denied(role: string, q: unknown, expected: { error: string; path: string; code?: string }) {
  const r = await postQuery(s.url, q, as(role));
  assert.equal(r.status, 400, r.text);
  assert.deepEqual(r.body, { code: expected.code ?? 'permission-denied', error: expected.error, path: expected.path });
}

const docs = async () => await query(s.url, { type: 'select', args: { table: 'docs', columns: ['id', 'title', 'hidden'], order_by: 'id' } });

const column = (role: string, c: string) => `role "${role}" does not have permission to select column "${c}"`;
const relationship = (role: string, rel: string, table: string) =>
  `role "${role}" does not have permission to read relationship "${rel}"; no permission on table "${table}"`;

describe('_exists', () => {
  test('on a table the role may not select: rejected (not a yes/no oracle)', async () => {
    const where = { _exists: { _table: 'secrets', _where: { value: { _like: 't%' } } } };
    for (const type of ['count', 'select', 'update', 'delete']) {
      const args: Record<string, unknown> = { table: 'docs', where };
      if (type === 'select') args.columns = ['id'];
      if (type === 'update') args.$set = { title: 'pwned' };
      await denied('user', { type, args }, { error: 'select on "secrets" for role "user" is not allowed. ', path: '$.args.where._exists._table' });
    }
    assert.deepEqual(
      (await docs()).map((d: { title: string }) => d.title),
      ['d1', 'd2', 'd3'],
    );
  });

  test('on a column of the target table the role may not select: rejected', async () => {
    await denied(
      'user',
      { type: 'count', args: { table: 'docs', where: { _exists: { _table: 'users', _where: { secret: { _like: 's%' } } } } } },
      {
        error: column('user', 'secret'),
        path: '$.args.where',
      },
    );
  });

  test("the target table's select filter is ANDed in", async () => {
    // user 1 sees only its own row of users: no visible user has email b@x
    const r = await query(
      s.url,
      { type: 'count', args: { table: 'docs', where: { _exists: { _table: 'users', _where: { email: { _eq: 'b@x' } } } } } },
      as('user', '1'),
    );
    assert.deepEqual(r, { count: 0 });
    const own = await query(
      s.url,
      { type: 'count', args: { table: 'docs', where: { _exists: { _table: 'users', _where: { email: { _eq: 'a@x' } } } } } },
      as('user', '1'),
    );
    assert.deepEqual(own, { count: 3 });
  });
});

describe('relationships', () => {
  test('into a table the role may not select: rejected in select, count, update and delete', async () => {
    const where = { owner: { email: { _like: 'b@%' } } };
    const cases: Array<Record<string, unknown>> = [
      { type: 'count', args: { table: 'docs', where } },
      { type: 'select', args: { table: 'docs', columns: ['id'], where } },
      { type: 'update', args: { table: 'docs', where, $set: { title: 'pwned' } } },
      { type: 'delete', args: { table: 'docs', where } },
    ];
    for (const q of cases) await denied('reader', q, { error: relationship('reader', 'owner', 'users'), path: '$.args.where' });
    assert.deepEqual(
      (await docs()).map((d: { title: string }) => d.title),
      ['d1', 'd2', 'd3'],
    );
  });

  test('on a column of the target the role may not select: rejected', async () => {
    await denied(
      'user',
      { type: 'count', args: { table: 'docs', where: { owner: { secret: { _like: 's2%' } } } } },
      {
        error: column('user', 'secret'),
        path: '$.args.where',
      },
    );
    await denied(
      'user',
      { type: 'select', args: { table: 'docs', columns: ['id'], where: { _or: [{ owner: { _not: { secret: { _eq: 'x' } } } }] } } },
      {
        error: column('user', 'secret'),
        path: '$.args.where',
      },
    );
  });

  test("the target table's select filter is ANDed in", async () => {
    assert.deepEqual(await query(s.url, { type: 'count', args: { table: 'docs', where: { owner: { email: { _eq: 'b@x' } } } } }, as('user', '1')), {
      count: 0,
    });
    assert.deepEqual(await query(s.url, { type: 'count', args: { table: 'docs', where: { owner: { email: { _eq: 'a@x' } } } } }, as('user', '1')), {
      count: 1,
    });
  });

  test('order_by and columns through a relationship into a table the role may not select: rejected', async () => {
    await denied(
      'reader',
      { type: 'select', args: { table: 'docs', columns: ['id'], order_by: 'owner.email' } },
      {
        error: relationship('reader', 'owner', 'users'),
        path: '$.args.order_by',
      },
    );
    await denied(
      'reader',
      { type: 'select', args: { table: 'docs', columns: ['id', { name: 'owner', columns: ['email'] }] } },
      {
        error: relationship('reader', 'owner', 'users'),
        path: '$.args.columns[1]',
      },
    );
  });
});

describe('columns the role may not select', () => {
  test('rejected in the where of select, count, update and delete; nothing written', async () => {
    const where = { hidden: { _eq: 'h1' } };
    const cases: Array<Record<string, unknown>> = [
      { type: 'count', args: { table: 'docs', where } },
      { type: 'select', args: { table: 'docs', columns: ['id'], where } },
      { type: 'update', args: { table: 'docs', where, $set: { title: 'pwned' } } },
      { type: 'delete', args: { table: 'docs', where } },
    ];
    for (const q of cases) await denied('user', q, { error: column('user', 'hidden'), path: '$.args.where' });
    assert.deepEqual(
      (await docs()).map((d: { title: string }) => d.title),
      ['d1', 'd2', 'd3'],
    );
  });

  test('as the other side of a column operator', async () => {
    await denied(
      'user',
      { type: 'count', args: { table: 'docs', where: { title: { _ceq: 'hidden' } } } },
      { error: column('user', 'hidden'), path: '$.args.where.title._ceq' },
    );
  });

  test('in order_by and count distinct', async () => {
    await denied(
      'user',
      { type: 'select', args: { table: 'docs', columns: ['id'], order_by: ['-hidden'] } },
      { error: column('user', 'hidden'), path: '$.args.order_by[0]' },
    );
    await denied('user', { type: 'count', args: { table: 'docs', distinct: ['hidden'] } }, { error: column('user', 'hidden'), path: '$.args.distinct[0]' });
  });

  test('selectable columns still filter', async () => {
    assert.deepEqual(await query(s.url, { type: 'count', args: { table: 'docs', where: { title: { _eq: 'd2' } } } }, as('user')), { count: 1 });
    assert.deepEqual(await query(s.url, { type: 'count', args: { table: 'docs', where: { owner_id: { _eq: 2 } } } }, as('reader')), { count: 2 });
  });
});

describe('update and delete need select permission (their where is a read)', () => {
  test('rejected with upstream messages; nothing written', async () => {
    const suffix = (op: string) =>
      `select on "docs" for role "writer" is not allowed. ; "${op}" is only allowed if the role has "select" permission as "where" can't be used without "select" permission on the table`;
    await denied(
      'writer',
      { type: 'update', args: { table: 'docs', where: { id: { _eq: 1 } }, $set: { title: 'pwned' } } },
      { error: suffix('update'), path: '$.args' },
    );
    await denied('writer', { type: 'delete', args: { table: 'docs', where: { id: { _eq: 1 } } } }, { error: suffix('delete'), path: '$.args' });
    assert.deepEqual(
      (await docs()).map((d: { title: string }) => d.title),
      ['d1', 'd2', 'd3'],
    );
  });
});

describe('admin', () => {
  test('unrestricted: every table, column and relationship', async () => {
    const r = await query(s.url, {
      type: 'count',
      args: {
        table: 'docs',
        where: {
          _and: [
            { hidden: { _like: 'h%' } },
            { owner: { secret: { _eq: 's2' } } },
            { _exists: { _table: 'secrets', _where: { value: { _eq: 'topsecret' } } } },
          ],
        },
      },
    });
    assert.deepEqual(r, { count: 2 });
  });
});
