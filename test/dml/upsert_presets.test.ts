/**
 * /v1/query insert with `on_conflict: {action: update}`: the row is updated
 * under the role's update permission, presets included (Hasura v1.3
 * buildConflictClause applies the update permission's `set`), so an upsert
 * cannot bypass a preset the update would apply.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runDmlInsert } from '../../src/dml/insert.js';
import { emptyMetadata, fixture, table, type Fixture } from '../graphql/helpers.js';

let f: Fixture;

before(async () => {
  const md = emptyMetadata();
  md.tables.push(
    table('note', {
      select_permissions: [{ role: 'stamper', permission: { columns: ['id', 'body', 'edited_by'], filter: {} } }],
      insert_permissions: [{ role: 'stamper', permission: { check: {}, columns: ['id', 'body'], set: {} } }],
      update_permissions: [{ role: 'stamper', permission: { columns: ['id', 'body'], filter: {}, set: { edited_by: 'X-Svc-User-Id' } } }],
    }),
    table('memo', {
      insert_permissions: [{ role: 'stamper', permission: { check: {}, columns: ['id', 'body'], set: {} } }],
      update_permissions: [{ role: 'stamper', permission: { columns: ['body'], filter: {} } }],
    }),
    table('log', {
      insert_permissions: [{ role: 'stamper', permission: { check: {}, columns: ['id', 'body'], set: {} } }],
    }),
  );
  f = await fixture(
    `create table note (id int primary key, body text, edited_by text); insert into note values (1, 'first', 'nobody'); create table memo (id int primary key, body text); create table log (id int primary key, body text);`,
    md,
  );
});
after(() => f.close());

test("an upsert that updates applies the update permission's presets", async () => {
  const r = await runDmlInsert(f.ctx('stamper', { 'x-svc-user-id': '42' }), {
    table: 'note',
    objects: [{ id: 1, body: 'second' }],
    on_conflict: { action: 'update', constraint_on: ['id'] },
    returning: ['id', 'body', 'edited_by'],
  });
  assert.deepEqual(r, { affected_rows: 1, returning: [{ id: 1, body: 'second', edited_by: '42' }] });
});

// upstream v1.3 RQL/DML/Insert.hs: `validateInpCols` and the update permission check of `convInsertQuery`
test('an upsert that would update a column outside the update permission is refused', async () => {
  await assert.rejects(
    runDmlInsert(f.ctx('stamper'), { table: 'memo', objects: [{ id: 1, body: 'b' }], on_conflict: { action: 'update', constraint_on: ['id'] } }),
    { status: 400, code: 'validation-failed', message: 'column "id" is not updatable', path: '$.args.on_conflict' },
  );
});

test('on_conflict without update permission is refused, whatever its action', async () => {
  await assert.rejects(runDmlInsert(f.ctx('stamper'), { table: 'log', objects: [{ id: 1, body: 'b' }], on_conflict: { action: 'ignore' } }), {
    status: 400,
    code: 'permission-denied',
    message: 'upsert is not allowed for role "stamper" since update permissions are not defined',
    path: '$.args.on_conflict',
  });
});
