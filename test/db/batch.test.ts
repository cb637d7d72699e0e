/**
 * Db.batch: several statements as one implicit transaction in one round trip
 * (a node-postgres submittable ending with a single Sync), and the driver's
 * prepared-statement bookkeeping after a failure inside a batch. One
 * connection, so every batch runs on the same server session.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDb, type Db } from '../../src/db/db.js';
import type { BatchError } from '../../src/db/batch.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let database: TestDatabase;
let db: Db;

before(async () => {
  database = await createTestDatabase();
  db = await openDb({ databaseUrl: database.url, dataDir: '', connections: 1, usePreparedStatements: true });
  await db.query('create table t (id int primary key, v text)');
});
after(async () => {
  await db?.close();
  await database?.drop();
});

const failure = (p: Promise<unknown>) =>
  p.then(
    () => assert.fail('expected an error'),
    (e: BatchError) => e,
  );

describe('batch', () => {
  test('results in order, one round trip, the session setting visible to later statements', async () => {
    const trips = db.roundTrips;
    const r = await db.withConn((c) =>
      c.batch([
        { name: 'b_set', text: "select set_config('svc.user', $1, true) as s", values: ['{"x-svc-role":"u"}'] },
        { name: 'b_ins', text: 'insert into t values ($1, $2) returning v', values: ['1', 'one'] },
        { text: "select current_setting('svc.user') as s" },
      ]),
    );
    assert.equal(db.roundTrips - trips, 1);
    assert.equal(r.length, 3);
    assert.deepEqual(r[1]!.rows, [{ v: 'one' }]);
    assert.equal(r[1]!.rowCount, 1);
    assert.deepEqual(r[2]!.rows, [{ s: '{"x-svc-role":"u"}' }]);
    // the setting was local to the batch's transaction
    assert.deepEqual((await db.query("select current_setting('svc.user', true) as s")).rows, [{ s: '' }]);
  });

  test('a failing statement rolls back the whole batch and names its index', async () => {
    const e = await failure(
      db.withConn((c) =>
        c.batch([
          { name: 'b_ins', text: 'insert into t values ($1, $2) returning v', values: ['2', 'two'] },
          { text: 'insert into t values ($1, $2)', values: ['1', 'duplicate'] },
          { name: 'b_after', text: 'select 1 as one' },
        ]),
      ),
    );
    assert.equal(e.batchIndex, 1);
    assert.equal((e as unknown as { code: string }).code, '23505');
    assert.deepEqual((await db.query('select id from t order by id')).rows, [{ id: '1' }]);
  });

  test('after a failure, named statements (parsed or skipped) run again', async () => {
    // parsed, then failed at execution: still prepared on the server
    const e1 = await failure(db.withConn((c) => c.batch([{ name: 'b_div', text: 'select 1 / $1::int as x', values: ['0'] }])));
    assert.equal(e1.batchIndex, 0);
    // b_skipped was never parsed: the server skipped it after the failure
    const e2 = await failure(
      db.withConn((c) =>
        c.batch([
          { name: 'b_bad', text: 'select nonsense from nowhere' },
          { name: 'b_skipped', text: 'select 2 as two' },
        ]),
      ),
    );
    assert.equal(e2.batchIndex, 0);
    const r = await db.withConn((c) =>
      c.batch([
        { name: 'b_div', text: 'select 1 / $1::int as x', values: ['1'] },
        { name: 'b_skipped', text: 'select 2 as two' },
        { name: 'b_after', text: 'select 1 as one' },
      ]),
    );
    assert.deepEqual(
      r.map((x) => x.rows[0]),
      [{ x: '1' }, { two: '2' }, { one: '1' }],
    );
    // and through the ordinary path too
    assert.deepEqual((await db.prepared('b_skipped', 'select 2 as two', [])).rows, [{ two: '2' }]);
  });

  test('the connection serves ordinary queries after batches', async () => {
    assert.deepEqual((await db.query('select count(*)::int as n from t')).rows, [{ n: '1' }]);
  });
});
