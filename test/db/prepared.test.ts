/**
 * PreparedQuery (src/db/prepared.ts): the lean submittable of the request path. Against a real
 * PostgreSQL on two real connections; the protocol messages a connection sends are counted by
 * wrapping its own `parse`/`describe` methods (the messages still go out).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { PreparedQuery } from '../../src/db/prepared.js';
import type { QueryResultLike } from '../../src/db/statement.js';
import { openDb } from '../../src/db/db.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let database: TestDatabase;
const clients: pg.Client[] = [];
const sent = new Map<pg.Client, { parse: number; describe: number }>();

const textTypes = { getTypeParser: () => (v: string) => v } as unknown as pg.CustomTypesConfig;

async function client(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: database.url, types: textTypes });
  await c.connect();
  const counts = { parse: 0, describe: 0 };
  const con = (c as unknown as { connection: Record<string, (...a: unknown[]) => unknown> }).connection;
  for (const m of ['parse', 'describe'] as const) {
    const orig = con[m]!.bind(con);
    con[m] = (...a: unknown[]) => {
      counts[m]++;
      return orig(...a);
    };
  }
  sent.set(c, counts);
  clients.push(c);
  return c;
}

function run(
  c: pg.Client,
  name: string,
  text: string,
  values: unknown[],
  columns?: readonly string[],
  learnt?: (cols: readonly string[]) => void,
): Promise<QueryResultLike> {
  return new Promise((resolve, reject) => {
    c.query(new PreparedQuery(name, text, values, columns, learnt, (e, r) => (e ? reject(e) : resolve(r!))) as unknown as pg.QueryConfig);
  });
}

before(async () => {
  database = await createTestDatabase();
  const c = await client();
  await c.query("create table t (id int primary key, v text, j jsonb); insert into t values (1, 'one', '{\"a\":1}'), (2, null, null), (3, 'three', '[1]')");
});
after(async () => {
  for (const c of clients) await c.end().catch(() => undefined);
  await database?.drop();
});

const TEXT = 'select id, v, j from t where id <= $1 order by id';

describe('PreparedQuery', () => {
  test('first execution describes the statement and reports its columns; rows, nulls, rowCount and command', async () => {
    const a = await client();
    let learnt: readonly string[] | undefined;
    const r = await run(a, 'pq_rows', TEXT, [2], undefined, (cols) => (learnt = cols));
    assert.deepEqual(learnt, ['id', 'v', 'j']);
    assert.deepEqual(r.rows, [
      { id: '1', v: 'one', j: '{"a": 1}' },
      { id: '2', v: null, j: null },
    ]);
    assert.equal(r.rowCount, 2);
    assert.equal(r.command, 'SELECT');
    assert.deepEqual(sent.get(a), { parse: 1, describe: 1 });
  });

  test('with the columns known: no Describe; Parse once per connection; the same rows on another connection', async () => {
    const a = await client();
    const b = await client();
    let cols: readonly string[] | undefined;
    await run(a, 'pq_known', TEXT, [3], undefined, (c) => (cols = c));
    const again = await run(a, 'pq_known', TEXT, [3], cols);
    assert.deepEqual(sent.get(a), { parse: 1, describe: 1 }, 'the second execution on the same connection sends neither Parse nor Describe');
    const other = await run(b, 'pq_known', TEXT, [3], cols);
    assert.deepEqual(sent.get(b), { parse: 1, describe: 0 }, 'another connection parses the statement once and does not describe it');
    assert.deepEqual(other.rows, again.rows);
    assert.equal(other.rows.length, 3);
    assert.deepEqual(other.rows[2], { id: '3', v: 'three', j: '[1]' });
  });

  test('values are prepared as node-postgres prepares them (arrays, objects, dates, booleans, null)', async () => {
    const a = await client();
    const r = await run(a, '', "select $1::int[] as a, $2::jsonb as o, $3::timestamptz at time zone 'UTC' as d, $4::bool as b, $5::text as n", [
      [1, 2, 3],
      { k: 'v' },
      new Date('2024-01-02T03:04:05Z'),
      true,
      null,
    ]);
    assert.deepEqual(r.rows, [{ a: '{1,2,3}', o: '{"k": "v"}', d: '2024-01-02 03:04:05', b: 't', n: null }]);
  });

  test('an error fails the statement with the driver error; the connection stays usable', async () => {
    const a = await client();
    const e = await run(a, 'pq_div', 'select 1 / $1::int as x', [0]).then(
      () => assert.fail('expected an error'),
      (err: { code?: string; message: string }) => err,
    );
    assert.equal(e.code, '22012');
    assert.deepEqual((await run(a, 'pq_div', 'select 1 / $1::int as x', [1])).rows, [{ x: '1' }]);
  });

  test('a statement that does not parse is not recorded as prepared; a value that cannot be sent fails alone', async () => {
    const a = await client();
    const e = await run(a, 'pq_bad', 'selec 1', []).then(
      () => assert.fail('expected an error'),
      (err: { code?: string }) => err,
    );
    assert.equal(e.code, '42601');
    const con = (a as unknown as { connection: { parsedStatements: Record<string, string>; submittedNamedStatements: Record<string, string> } }).connection;
    assert.equal(con.parsedStatements.pq_bad, undefined);
    assert.equal(con.submittedNamedStatements.pq_bad, undefined);
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await assert.rejects(run(a, 'pq_val', 'select $1::jsonb as j', [circular]));
    assert.equal(con.submittedNamedStatements.pq_val, undefined, 'nothing was sent for it');
    assert.deepEqual((await run(a, 'pq_val', 'select $1::jsonb as j', [{ ok: true }])).rows, [{ j: '{"ok": true}' }]);
  });

  test('a name used for another text is refused', async () => {
    const a = await client();
    await run(a, 'pq_same', 'select 1 as x', []);
    await assert.rejects(run(a, 'pq_same', 'select 2 as x', []), /must be unique/);
    assert.deepEqual((await run(a, 'pq_same', 'select 1 as x', [])).rows, [{ x: '1' }]);
  });
});

describe('Db.prepared', () => {
  test('repeated executions across the pool return the same rows (columns learnt once)', async () => {
    const db = await openDb({ databaseUrl: database.url, dataDir: '', connections: 4, usePreparedStatements: true });
    try {
      const rs = await Promise.all(Array.from({ length: 40 }, (_, i) => db.prepared('pq_pool', TEXT, [(i % 3) + 1])));
      for (let i = 0; i < rs.length; i++) assert.equal(rs[i]!.rows.length, (i % 3) + 1);
      assert.deepEqual(rs[2]!.rows[2], { id: '3', v: 'three', j: '[1]' });
      // a broken statement fails alone; the pool goes on
      await assert.rejects(db.prepared('pq_pool_bad', 'select 1 / $1::int as x', [0]), { code: '22012' });
      assert.deepEqual((await db.prepared('pq_pool', TEXT, [1])).rows, [{ id: '1', v: 'one', j: '{"a": 1}' }]);
    } finally {
      await db.close();
    }
  });
});

describe('spare connections (PoolDb keeps a given-back client for the next checkout)', () => {
  test('every checkout path takes a spare client: a pool full of spare clients never makes a checkout wait', async () => {
    const db = await openDb({ databaseUrl: database.url, dataDir: '', connections: 2, usePreparedStatements: true });
    try {
      // both connections used at once, then given back: both are spare now
      await Promise.all([db.prepared('pq_spare', 'select pg_sleep(0.05) is null as x', []), db.prepared('pq_spare', 'select pg_sleep(0.05) is null as x', [])]);
      assert.deepEqual(db.poolStats!(), { total: 2, idle: 2, waiting: 0, max: 2 });
      // two checkouts held at once on a pool of two: each took a spare client at once
      let release!: () => void;
      const hold = new Promise<void>((r) => (release = r));
      const started: number[] = [];
      // (withConn calls its function once it has a client: no I/O in between when a spare one is taken)
      const txs = [1, 2].map((i) =>
        db.withConn(async (c) => {
          started.push(i);
          await hold;
          await c.query('select 1');
        }),
      );
      await new Promise((r) => setImmediate(r));
      assert.deepEqual([...started].sort(), [1, 2], 'both checkouts got a client without waiting for the pool');
      assert.equal(db.poolStats!().waiting, 0);
      // a statement now waits for a connection, and gets one when a checkout ends
      const q = db.query('select 3 as x');
      release();
      await Promise.all(txs);
      assert.deepEqual((await q).rows, [{ x: '3' }]);
      assert.equal(db.poolStats!().total, 2);
    } finally {
      await db.close();
    }
  });

  test('a client whose simple-protocol text failed is not kept (its session may be in a failed transaction block)', async () => {
    const db = await openDb({ databaseUrl: database.url, dataDir: '', connections: 1, usePreparedStatements: true });
    try {
      await assert.rejects(db.query('begin; select 1 / 0'), { code: '22012' });
      assert.deepEqual((await db.query('select 1 as x')).rows, [{ x: '1' }]);
      // a failing prepared statement (one implicit transaction, ended by its Sync) keeps its client
      await assert.rejects(db.prepared('pq_keep', 'select 1 / $1::int as x', [0]), { code: '22012' });
      assert.deepEqual((await db.prepared('pq_keep', 'select 1 / $1::int as x', [1])).rows, [{ x: '1' }]);
    } finally {
      await db.close();
    }
  });

  test('a spare connection whose backend is terminated is dropped; later statements succeed', async () => {
    const db = await openDb({ databaseUrl: database.url, dataDir: '', connections: 2, usePreparedStatements: true });
    const admin = await client();
    try {
      await Promise.all([
        db.query("select set_config('application_name', 'svc_spare_test', false)"),
        db.query("select set_config('application_name', 'svc_spare_test', false)"),
      ]);
      assert.equal(db.poolStats!().total, 2);
      const killed = await admin.query(
        "select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'svc_spare_test') t",
      );
      assert.ok(Number(killed.rows[0].n) >= 1);
      // the terminated clients report their error and leave the pool (awaited, bounded)
      for (let i = 0; i < 2000 && db.poolStats!().total > 0; i++) await new Promise((r) => setTimeout(r, 5));
      assert.equal(db.poolStats!().total, 0, 'the terminated connections left the pool');
      for (let i = 0; i < 5; i++) assert.deepEqual((await db.prepared('pq_after_kill', 'select $1::int as x', [i])).rows, [{ x: String(i) }]);
    } finally {
      await db.close();
    }
  });
});
