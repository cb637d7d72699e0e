/**
 * The live-query manager alone (src/subscriptions/liveQueryManager.ts), without a websocket: a
 * manager of the test's own over a real engine's database (polled, every 100 ms), subscribers that
 * record what they are pushed, plans from the real planner (server/graphql.ts `planLive`), and the
 * batch statements counted on their way to the database (the real one: a counting wrapper, not a mock).
 *
 * - cohorts: subscribers of the same query text join one cohort whatever their variables; another
 *   query text is another cohort; a cohort goes when its last subscriber stops;
 * - multiplexing: one cohort's subscribers are answered by ONE statement per run, one row each
 *   (subscribers with equal variable values share a row); each subscriber is pushed only its own
 *   result, and only when it changed;
 * - stop: a stopped subscriber gets nothing more, and when it was the last one no statement runs.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Db } from '../../src/db/db.js';
import type { Session } from '../../src/core/session.js';
import { graphqlHandlers } from '../../src/server/graphql.js';
import { LiveQueryManager, newLiveQueryStats, type LiveQueryHandle } from '../../src/subscriptions/liveQueryManager.js';
import { Histograms } from '../../src/core/histogram.js';
import type { LiveQueryPlan } from '../../src/subscriptions/liveQueryPlan.js';
import { query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';

const SECRET = 'adm1n';
const INTERVAL = 100;
const admin: Session = { role: 'admin', vars: { 'x-svc-role': 'admin' }, hasAdminCredentials: true };

const BY_ID = 'subscription ($id: Int!) { item_by_pk(id: $id) { id name } }';
const ALL = 'subscription { item(order_by: {id: asc}) { id } }';

let s: TestServer;
let live: LiveQueryManager;
/** the batch statements sent: their `$1` (the row ids of the batch) */
const statements: string[] = [];

before(async () => {
  s = await startTestServer({ adminSecret: SECRET });
  await query(
    s.url,
    {
      type: 'bulk',
      args: [
        { type: 'run_sql', args: { sql: "create table item (id int primary key, name text not null); insert into item values (1, 'a'), (2, 'b'), (3, 'c');" } },
        { type: 'track_table', args: { table: 'item' } },
      ],
    },
    { 'x-svc-admin-secret': SECRET },
  );
  const db = s.engine.db;
  // the engine's database, its batch statements counted
  const counting = new Proxy(db, {
    get(target, p, receiver) {
      if (p === 'prepared') {
        return (name: string, text: string, values: unknown[]) => {
          statements.push(String(values[0]));
          return target.prepared(name, text, values);
        };
      }
      const v = Reflect.get(target, p, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  }) as Db;
  live = new LiveQueryManager({
    stats: newLiveQueryStats(),
    histograms: new Histograms(),
    db: () => counting,
    log: s.engine.log,
    intervalMs: INTERVAL,
    batchSize: 100,
    currentCache: () => s.engine.cache,
    concurrency: 2,
  });
});

after(async () => {
  await live?.close();
  await s?.close();
});

function plan(q: string, variables: Record<string, unknown> | null = null): LiveQueryPlan {
  const p = graphqlHandlers.planLive(s.engine, admin, { query: q, variables, operationName: null }, {});
  assert.ok(p, 'a multiplexed plan');
  return p;
}

/** every subscriber of a test, stopped after it (a failed test leaves no cohort to the next) */
const joined: LiveQueryHandle[] = [];
afterEach(() => {
  for (const h of joined.splice(0)) h.stop();
});

/** A subscriber that records its pushes. */
class Recorder {
  readonly pushed: unknown[] = [];
  handle!: LiveQueryHandle;
  push(text: string): void {
    this.pushed.push(JSON.parse(text));
  }
  replan(): string {
    return '{"errors":[{"message":"no re-plan in this test"}]}';
  }
  errorText(e: unknown): string {
    return JSON.stringify({ errors: [{ message: String(e) }] });
  }
  /** `first` = '' differs from every result: the first run pushes the current one */
  join(p: LiveQueryPlan, first = ''): this {
    this.handle = live.add(p, this, first);
    joined.push(this.handle);
    return this;
  }
}

const sql = (text: string) => s.engine.db.query(text);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nameOf = (v: unknown) => (v as { data: { item_by_pk: { name: string } | null } }).data.item_by_pk?.name;

describe('live-query manager', () => {
  test('same query text, different variables: one cohort, one statement per run with a row each; another text is another cohort', async () => {
    const p1 = plan(BY_ID, { id: 1 });
    const p2 = plan(BY_ID, { id: 2 });
    assert.equal(p1.key, p2.key, 'variables do not change the cohort');
    assert.notEqual(p1.values, p2.values, 'each subscriber has its row values');
    const a = new Recorder().join(p1);
    const b = new Recorder().join(p2);
    assert.equal(live.cohortCount, 1);
    const c = new Recorder().join(plan(ALL));
    assert.equal(live.cohortCount, 2, 'another query text, another cohort');

    await waitFor('first results', async () => a.pushed.length >= 1 && b.pushed.length >= 1 && c.pushed.length >= 1, 10_000, 10);
    assert.deepEqual(a.pushed[0], { data: { item_by_pk: { id: 1, name: 'a' } } });
    assert.deepEqual(b.pushed[0], { data: { item_by_pk: { id: 2, name: 'b' } } });
    assert.deepEqual(c.pushed[0], { data: { item: [{ id: 1 }, { id: 2 }, { id: 3 }] } });

    // a run of the BY_ID cohort answers both subscribers in one statement: two row ids in its $1
    const n0 = statements.length;
    await waitFor('a few runs', async () => statements.length >= n0 + 4, 10_000, 10);
    const batches = statements.slice(n0).map((ids) => ids.slice(1, -1).split(',').length);
    assert.ok(batches.includes(2), `one statement for both subscribers of the cohort (row counts: ${batches.join(' ')})`);
    assert.ok(
      batches.every((n) => n <= 2),
      `never one statement per subscriber beyond its cohort (row counts: ${batches.join(' ')})`,
    );

    // nothing changed: nothing more pushed
    await sleep(3 * INTERVAL);
    assert.equal(a.pushed.length, 1);
    assert.equal(b.pushed.length, 1);

    // a change to item 1 reaches a (and c's list is unchanged: nothing for c), not b
    await sql("update item set name = 'a2' where id = 1");
    await waitFor('a gets a2', async () => a.pushed.length === 2, 10_000, 10);
    assert.equal(nameOf(a.pushed[1]), 'a2');
    await sleep(3 * INTERVAL);
    assert.equal(b.pushed.length, 1, 'b: its result did not change');
    assert.equal(c.pushed.length, 1, 'c: its result did not change');

    c.handle.stop();
    assert.equal(live.cohortCount, 1, 'the cohort of the last subscriber of a text goes with it');
    a.handle.stop();
    assert.equal(live.cohortCount, 1, 'b still subscribes');
    b.handle.stop();
    assert.equal(live.cohortCount, 0);
  });

  test('equal variable values share one row; each of its subscribers is pushed the result', async () => {
    const a = new Recorder().join(plan(BY_ID, { id: 3 }));
    const b = new Recorder().join(plan(BY_ID, { id: 3 }));
    assert.equal(live.cohortCount, 1);
    await waitFor('first results', async () => a.pushed.length >= 1 && b.pushed.length >= 1, 10_000, 10);
    const n0 = statements.length;
    await waitFor('a few runs', async () => statements.length >= n0 + 3, 10_000, 10);
    assert.ok(
      statements.slice(n0).every((ids) => ids.slice(1, -1).split(',').length === 1),
      `one row for both: ${statements.slice(n0).join(' ')}`,
    );
    await sql("update item set name = 'c2' where id = 3");
    await waitFor('both get c2', async () => a.pushed.length === 2 && b.pushed.length === 2, 10_000, 10);
    assert.equal(nameOf(a.pushed[1]), 'c2');
    assert.equal(nameOf(b.pushed[1]), 'c2');

    // one leaves: the row stays for the other
    a.handle.stop();
    await sql("update item set name = 'c3' where id = 3");
    await waitFor('b gets c3', async () => b.pushed.length === 3, 10_000, 10);
    await sleep(3 * INTERVAL);
    assert.equal(a.pushed.length, 2, 'a stopped: nothing more');
    b.handle.stop();
    assert.equal(live.cohortCount, 0);
  });

  test('the first result given to add is not pushed again; stop frees the cohort and no statement runs after it', async () => {
    const p = plan(BY_ID, { id: 2 });
    // the current result, as the caller (the websocket's first run) already sent it
    const a = new Recorder().join(p, '{"data":{"item_by_pk":{"id":2,"name":"b"}}}');
    const n0 = statements.length;
    await waitFor('runs', async () => statements.length >= n0 + 3, 10_000, 10);
    assert.equal(a.pushed.length, 0, 'the result it already has is not pushed');
    await sql("update item set name = 'b2' where id = 2");
    await waitFor('a gets b2', async () => a.pushed.length === 1, 10_000, 10);
    assert.equal(nameOf(a.pushed[0]), 'b2');

    a.handle.stop();
    a.handle.stop(); // twice is harmless
    assert.equal(live.cohortCount, 0, 'the cohort is freed');
    await sleep(2 * INTERVAL); // a run in flight when it stopped ends
    const n1 = statements.length;
    await sql("update item set name = 'b3' where id = 2");
    await sleep(5 * INTERVAL);
    assert.equal(statements.length, n1, 'no statement without subscribers');
    assert.equal(a.pushed.length, 1, 'nothing pushed after stop');
  });
});
