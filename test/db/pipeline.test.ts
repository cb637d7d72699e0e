/**
 * Pipelined reads (src/db/pipeline.ts) through the real pool (openDb) on a real PostgreSQL: many
 * statements in flight on a few connections, each answered with its own result; an error, a lock
 * wait, a cancelled request, a killed backend and closing the pool each affect what they should and
 * nothing else.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { CancelToken } from '../../src/core/cancel.js';
import { defaultPipelineLanes, openDb, type Db } from '../../src/db/db.js';
import { FAST_MS, RESCUE_MS, type PipelineStats } from '../../src/db/pipeline.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

type PipelinedDb = Db & { pipelineStats(): PipelineStats };

let database: TestDatabase;
const dbs: Db[] = [];

/**
 * What these tests take as fast (ms): statements' running times decide what is pipelined (under
 * FAST_MS), and on a loaded machine (CI running test files side by side on two cores) a primary-key
 * read's floor drifted over 1 ms between a warm-up and the statements after it, which then ran on
 * connections of their own. The test of the threshold itself opens its Db with FAST_MS.
 */
const LENIENT_MS = 50;

async function open(lanes?: number, connections = 8, fastMs = LENIENT_MS): Promise<PipelinedDb> {
  const db = await openDb({
    databaseUrl: database.url,
    dataDir: '',
    connections,
    usePreparedStatements: true,
    pipelineFastMs: fastMs,
    ...(lanes !== undefined ? { pipelineLanes: lanes } : {}),
  });
  dbs.push(db);
  return db as PipelinedDb;
}

/**
 * runs the statement one at a time until one is answered on a lane (bounded by time: a lane is a
 * pool connection opened on the first pipelinable statement, which a loaded machine can take a
 * second or more to open)
 */
async function warm(db: PipelinedDb, name: string, text: string, values: unknown[]): Promise<void> {
  const t0 = Date.now();
  while (Date.now() - t0 < 15_000) {
    const before = db.pipelineStats().pipelined;
    await db.prepared(name, text, values);
    if (db.pipelineStats().pipelined > before) return;
  }
  assert.fail(`${name} was never pipelined`);
}

/** polls `cond` on each turn of the event loop (bounded): for states reached by time passing */
async function until(cond: () => boolean | Promise<boolean>, what: string, limitMs = 10_000): Promise<void> {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > limitMs) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

before(async () => {
  database = await createTestDatabase();
  const c = new pg.Client({ connectionString: database.url });
  await c.connect();
  await c.query('create table items (id int primary key, v text)');
  await c.query("insert into items select i, 'v' || i from generate_series(1, 1000) i");
  await c.query('create table locked (id int primary key)');
  await c.end();
});
after(async () => {
  for (const db of dbs) await db.close().catch(() => undefined);
  await database?.drop();
});

const BY_ID = 'select id, v, pg_backend_pid() as pid from items where id = $1';

describe('pipelined reads', () => {
  test('the default: two lanes from a pool of 8, none under 4', () => {
    assert.equal(defaultPipelineLanes(50), 2);
    assert.equal(defaultPipelineLanes(8), 2);
    assert.equal(defaultPipelineLanes(4), 1);
    assert.equal(defaultPipelineLanes(3), 0);
    assert.equal(defaultPipelineLanes(1), 0);
  });

  test('many statements in flight on at most two connections, each with its own answer', async () => {
    const db = await open(2);
    await warm(db, 'by_id', BY_ID, [1]);
    const before = db.pipelineStats().pipelined;
    const ids = Array.from({ length: 600 }, (_, i) => (i % 1000) + 1);
    const rows = await Promise.all(ids.map((id) => db.prepared('by_id', BY_ID, [id]).then((r) => r.rows[0] as { id: string; v: string; pid: string })));
    rows.forEach((r, i) => {
      assert.equal(r.id, String(ids[i]));
      assert.equal(r.v, `v${ids[i]}`);
    });
    const s = db.pipelineStats();
    assert.ok(s.lanes >= 1 && s.lanes <= 2, `lanes ${s.lanes}`);
    // 600 at once: the lanes take up to their depth each, the rest run on connections of their own
    assert.ok(s.pipelined - before >= 32, `pipelined ${s.pipelined - before}`);
  });

  test('a statement that takes milliseconds is never pipelined: on a lane it would hold up those behind it', async () => {
    const db = await open(2, 8, FAST_MS);
    await warm(db, 'by_id', BY_ID, [1]); // the lanes are there
    // 2 ms a run (a statement waiting on I/O, say): over FAST_MS (1 ms). Pipelined (as under the
    // 5 ms of before), 40 at once would run one after another on two backends, ~40 ms, instead of
    // side by side on the pool's connections
    assert.ok(FAST_MS <= 1.5);
    const SLOW = 'select pg_sleep($1::float8) is not null as slept';
    const before = db.pipelineStats().pipelined;
    for (let i = 0; i < 5; i++) await db.prepared('slow', SLOW, [0.002]);
    const all = await Promise.all(Array.from({ length: 40 }, () => db.prepared('slow', SLOW, [0.002])));
    assert.equal(all.length, 40);
    assert.equal(db.pipelineStats().pipelined, before);
  });

  test('a statement that fails fails alone; those around it are answered', async () => {
    const db = await open(1);
    const DIV = 'select 100 / $1::int as x';
    await warm(db, 'div', DIV, [1]);
    const before = db.pipelineStats().pipelined;
    const divisors = [1, 2, 4, 5, 0, 10, 20, 25, 0, 50];
    const settled = await Promise.allSettled(divisors.map((d) => db.prepared('div', DIV, [d])));
    settled.forEach((s, i) => {
      if (divisors[i] === 0) {
        assert.equal(s.status, 'rejected');
        assert.equal((s as PromiseRejectedResult).reason.code, '22012');
      } else {
        assert.equal(s.status, 'fulfilled', String((s as PromiseRejectedResult).reason));
        assert.equal((s as PromiseFulfilledResult<{ rows: Array<{ x: string }> }>).value.rows[0]!.x, String(100 / divisors[i]!));
      }
    });
    assert.ok(db.pipelineStats().pipelined - before >= 5, 'they went through the lane');
    // and the lane goes on
    assert.equal((await db.prepared('div', DIV, [4])).rows[0].x, '25');
  });

  test('a statement waiting on a lock holds only itself: the others behind it run elsewhere', { timeout: 30_000 }, async () => {
    const db = await open(1);
    const LOCKED = 'select count(*) as n from locked';
    await warm(db, 'locked', LOCKED, []);
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    try {
      await holder.query('begin; lock table locked in access exclusive mode');
      // a lane used just now: an idle one goes back to the pool after a second or two, and taking
      // the lock can take that long on a loaded machine (seen in CI: the statements below then ran on
      // connections of their own and no lane was ever stuck)
      await warm(db, 'by_id', BY_ID, [1]);
      assert.equal(db.pipelineStats().lanes, 1);
      // the lane's first statement waits on the lock; three more are written behind it
      const sentAt = performance.now();
      const waiting = db.prepared('locked', LOCKED, []);
      const behind = [1, 2, 3].map((id) => db.prepared('by_id', BY_ID, [id]));
      await until(() => db.pipelineStats().stuck === 1 && performance.now() - sentAt > RESCUE_MS + 5, 'the lane to be stuck long enough');
      // nothing was answered anywhere since: an overloaded machine looks the same, so nothing is run twice
      const elsewhere = db.prepared('by_id', BY_ID, [7]);
      assert.equal(db.pipelineStats().rerun, 0);
      // the stuck lane takes no more: that one ran on a connection of its own, and now others have moved
      assert.equal((await elsewhere).rows[0].id, '7');
      const next = await db.prepared('by_id', BY_ID, [8]);
      assert.equal(next.rows[0].id, '8');
      assert.equal(db.pipelineStats().rerun, 3);
      const rows = await Promise.all(behind);
      assert.deepEqual(
        rows.map((r) => r.rows[0].id),
        ['1', '2', '3'],
      );
      await holder.query('commit');
      assert.equal((await waiting).rows[0].n, '0');
    } finally {
      await holder.end();
    }
  });

  test('a request that goes away is answered at once; the lane goes on', async () => {
    const db = await open(1);
    const SLEEPY = 'select pg_sleep($1::float8) is not null as slept';
    await warm(db, 'sleepy', SLEEPY, [0]);
    const token = new CancelToken();
    const p = db.prepared('sleepy', SLEEPY, [0.3], token);
    token.cancel();
    await assert.rejects(p, (e: Error & { code?: string }) => e.code === '57014');
    assert.equal((await db.prepared('sleepy', SLEEPY, [0])).rows[0].slept, 't');
    // an already cancelled request sends nothing
    await assert.rejects(db.prepared('sleepy', SLEEPY, [0], token), (e: Error & { code?: string }) => e.code === '57014');
  });

  test('a killed lane fails what was on it, and the next statements get a new lane', { timeout: 30_000 }, async () => {
    const db = await open(1);
    await warm(db, 'by_id', BY_ID, [1]);
    const pid = (await db.prepared('by_id', BY_ID, [1])).rows[0].pid as string;
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      await admin.query('select pg_terminate_backend($1)', [Number(pid)]);
    } finally {
      await admin.end();
    }
    // the lane's connection is gone: what is sent on it fails with a connection error (as on a connection of its own)
    await until(async () => {
      try {
        const r = await db.prepared('by_id', BY_ID, [2]);
        return r.rows[0].pid !== pid && db.pipelineStats().lanes === 1 && r.rows[0].id === '2';
      } catch {
        return false;
      }
    }, 'a new lane');
    const before = db.pipelineStats().pipelined;
    const rows = await Promise.all([3, 4, 5].map((id) => db.prepared('by_id', BY_ID, [id])));
    assert.deepEqual(
      rows.map((r) => r.rows[0].id),
      ['3', '4', '5'],
    );
    assert.ok(db.pipelineStats().pipelined > before);
  });

  test('a threshold of 0 ms (--pipeline-fast-ms 0): lanes are never used, however fast the statement', async () => {
    const db = await open(2, 8, 0);
    for (let i = 0; i < 20; i++) await db.prepared('by_id', BY_ID, [1]);
    await Promise.all([1, 2, 3, 4].map((id) => db.prepared('by_id', BY_ID, [id])));
    assert.deepEqual(db.pipelineStats(), { lanes: 0, stuck: 0, pipelined: 0, rerun: 0 });
  });

  test('no lanes: every statement on a connection of its own', async () => {
    const db = await open(0);
    for (let i = 0; i < 20; i++) await db.prepared('by_id', BY_ID, [1]);
    await Promise.all([1, 2, 3, 4].map((id) => db.prepared('by_id', BY_ID, [id])));
    assert.deepEqual(db.pipelineStats(), { lanes: 0, stuck: 0, pipelined: 0, rerun: 0 });
  });

  test('closing with statements in flight answers them and gives every lane back', { timeout: 30_000 }, async () => {
    const db = await open(2);
    await warm(db, 'by_id', BY_ID, [1]);
    const inFlight = Promise.all([1, 2, 3, 4, 5, 6].map((id) => db.prepared('by_id', BY_ID, [id])));
    const closed = db.close();
    const rows = await inFlight;
    assert.equal(rows.length, 6);
    await closed;
    assert.equal(db.pipelineStats().lanes, 0);
  });
});
