/**
 * Live queries at scale (issue 18) under real npm clients: `graphql-ws`'s createClient
 * (graphql-transport-ws) and subscriptions-transport-ws's SubscriptionClient (legacy graphql-ws):
 * first result, an update after a mutation within 2 intervals, no message when unrelated rows
 * change, complete/stop, errors (invalid document, unauthorized, expired JWT, the protocol's close
 * codes); 1,000 subscribers with different variables in one cohort run ⌈1000/batch size⌉
 * statements per interval, counted at the driver; explain shows the multiplexed statement; the
 * embedded PGlite database multiplexes too.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { TEST_HS_KEY as HS_KEY, userJwt as jwt } from '../helpers/jwt.js';
import WebSocket from 'ws';
import pg from 'pg';
import { createClient, type Client as WsClient } from 'graphql-ws';
import { SubscriptionClient } from 'subscriptions-transport-ws';
import { defaultConfig } from '../../src/config/config.js';
import { createLogger, startSvc } from '../../src/server/start.js';
import { devnull, post, query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';

const SECRET = 'adm1n';
const INTERVAL = 250;
const SETUP = [
  {
    type: 'run_sql',
    args: {
      sql: "create table item (id int primary key, owner int not null, name text not null); insert into item select g, g % 2 + 1, 'n' || g from generate_series(1, 1000) g;",
    },
  },
  { type: 'track_table', args: { table: 'item' } },
  { type: 'create_select_permission', args: { table: 'item', role: 'user', permission: { columns: ['id', 'name'], filter: { owner: 'X-Svc-User-Id' } } } },
];
const admin = { 'x-svc-admin-secret': SECRET };

let s: TestServer;

before(async () => {
  s = await startTestServer({
    adminSecret: SECRET,
    jwtSecret: { type: 'HS256', key: HS_KEY },
    liveQueriesRefetchInterval: INTERVAL,
    maxSubscriptionsPerConnection: 1000,
  });
  await query(s.url, { type: 'bulk', args: SETUP }, admin);
});

after(async () => {
  await s?.close();
});

const wsUrl = (url: string) => `${url.replace('http', 'ws')}/v1/graphql`;

/** Resolves after `n` more refetch intervals of `server`'s engine have run (its tick counter), bounded. */
async function intervals(n: number, timeoutMs = 30_000, server: { engine: TestServer['engine'] } = s): Promise<void> {
  const stats = server.engine.liveQueryStats;
  const target = stats.ticks + n;
  const deadline = Date.now() + timeoutMs;
  while (stats.ticks < target) {
    if (Date.now() > deadline) throw new Error(`fewer than ${n} refetch intervals ran within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits `n` refetch intervals of wall time (when no cohort is left, no interval runs to count). */
const wallIntervals = (n: number) => new Promise((r) => setTimeout(r, n * INTERVAL + 200));

/** Every result of a subscription, awaitable one by one. */
class Results {
  readonly items: any[] = [];
  errors: unknown[] = [];
  completed = false;
  private waiters: Array<() => void> = [];
  push(v: any) {
    this.items.push(v);
    this.waiters.splice(0).forEach((w) => w());
  }
  fail(e: unknown) {
    this.errors.push(e);
    this.waiters.splice(0).forEach((w) => w());
  }
  done() {
    this.completed = true;
    this.waiters.splice(0).forEach((w) => w());
  }
  async count(n: number, timeoutMs = 15_000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    while (this.items.length < n) {
      if (this.errors.length) throw new Error(`subscription failed: ${JSON.stringify(this.errors)}`);
      if (Date.now() > deadline) throw new Error(`no result #${n} within ${timeoutMs} ms; got ${JSON.stringify(this.items)}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 100).unref();
      });
    }
    return this.items[n - 1];
  }
  async settled(timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.errors.length && !this.completed) {
      if (Date.now() > deadline) throw new Error('the subscription neither failed nor completed');
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 100).unref();
      });
    }
  }
}

function transportClient(
  connectionParams: Record<string, unknown> | (() => Promise<Record<string, unknown>>),
  closed?: (code: number, reason: string) => void,
): WsClient {
  return createClient({
    url: wsUrl(s.url),
    webSocketImpl: WebSocket,
    connectionParams,
    retryAttempts: 0,
    lazy: false,
    // the connection's failure reaches the subscription's error sink; not console.error too
    onNonLazyError: () => undefined,
    on: closed ? { closed: (e) => closed((e as { code: number }).code, String((e as { reason?: string }).reason ?? '')) } : undefined,
  });
}

function subscribe(c: WsClient, query: string, variables?: Record<string, unknown>): { results: Results; stop: () => void } {
  const results = new Results();
  const stop = c.subscribe({ query, variables }, { next: (v) => results.push(v), error: (e) => results.fail(e), complete: () => results.done() });
  return { results, stop };
}

/** a write straight to PostgreSQL (run_sql would also rebuild the schema cache) */
async function mutate(sql: string, url = s.databaseUrl): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

describe('graphql-transport-ws (graphql-ws createClient)', () => {
  test('variables, a non-admin role, update within 2 intervals, no message on unrelated changes, complete', async () => {
    const token = await jwt('1');
    const c = transportClient({ headers: { Authorization: `Bearer ${token}` } });
    try {
      const q = 'subscription ($ids: [Int!]) { item(where: {id: {_in: $ids}}, order_by: {id: asc}) { id name } }';
      const a = subscribe(c, q, { ids: [1, 2, 3] });
      // owner = id % 2 + 1: user 1 owns the even ids
      assert.deepEqual(await a.results.count(1), { data: { item: [{ id: 2, name: 'n2' }] } });

      const t0 = Date.now();
      await mutate("update item set name = 'changed' where id = 2");
      const second = await a.results.count(2);
      const ms = Date.now() - t0;
      assert.deepEqual(second, { data: { item: [{ id: 2, name: 'changed' }] } });
      process.stdout.write(`# update pushed ${ms} ms after the mutation (interval ${INTERVAL} ms)\n`);
      assert.ok(ms < 2 * INTERVAL + 2_000, `update after ${ms} ms`);

      // rows the subscriber does not see (another owner, another id) change: no message
      await mutate("update item set name = 'other' where id in (1, 3, 4)");
      await intervals(3);
      assert.equal(a.results.items.length, 2, JSON.stringify(a.results.items));

      a.stop();
      await mutate("update item set name = 'after-complete' where id = 2");
      await wallIntervals(3);
      assert.equal(a.results.items.length, 2, 'no message after complete');
    } finally {
      await c.dispose();
    }
  });

  test('a metadata change re-plans the cohort: a dropped permission is pushed once as an error, restoring it resumes', async () => {
    const c = transportClient({ headers: { Authorization: `Bearer ${await jwt('1')}` } });
    try {
      const a = subscribe(c, 'subscription { item_by_pk(id: 20) { id name } }');
      assert.deepEqual(await a.results.count(1), { data: { item_by_pk: { id: 20, name: 'n20' } } });
      await query(s.url, { type: 'drop_select_permission', args: { table: 'item', role: 'user' } }, admin);
      const err = await a.results.count(2);
      assert.equal(err.errors?.[0]?.extensions?.code, 'validation-failed', JSON.stringify(err));
      await intervals(3);
      assert.equal(a.results.items.length, 2, 'the error is pushed once');
      await query(s.url, SETUP[2], admin);
      assert.deepEqual(await a.results.count(3), { data: { item_by_pk: { id: 20, name: 'n20' } } });
      a.stop();
    } finally {
      await c.dispose();
    }
  });

  test('a query and a mutation over the same protocol: next then complete', async () => {
    const c = transportClient({ headers: admin });
    try {
      const q = subscribe(c, 'query { item_by_pk(id: 5) { id } }');
      await q.results.settled();
      assert.deepEqual(q.results.items, [{ data: { item_by_pk: { id: 5 } } }]);
      assert.ok(q.results.completed);
      const m = subscribe(c, 'mutation { update_item(where: {id: {_eq: 5}}, _set: {name: "m"}) { affected_rows } }');
      await m.results.settled();
      assert.deepEqual(m.results.items, [{ data: { update_item: { affected_rows: 1 } } }]);
    } finally {
      await c.dispose();
    }
  });

  test('an invalid document is an `error` message with the errors; the connection keeps serving', async () => {
    const c = transportClient({ headers: admin });
    try {
      const bad = subscribe(c, 'subscription { no_such_field { id } }');
      await bad.results.settled();
      const errs = bad.results.errors[0] as Array<{ message: string; extensions: { code: string } }>;
      assert.ok(Array.isArray(errs), JSON.stringify(errs));
      assert.equal(errs[0]!.extensions.code, 'validation-failed');
      const ok = subscribe(c, 'subscription { item_by_pk(id: 7) { id } }');
      assert.deepEqual(await ok.results.count(1), { data: { item_by_pk: { id: 7 } } });
      ok.stop();
    } finally {
      await c.dispose();
    }
  });

  test('unauthorized (no admin secret) closes 4403; an expired JWT closes 4403', async () => {
    for (const params of [{ headers: { 'x-svc-admin-secret': 'wrong' } }, { headers: { Authorization: `Bearer ${await jwt('1', -10)}` } }]) {
      let closed: { code: number; reason: string } | undefined;
      const c = transportClient(params, (code, reason) => (closed ??= { code, reason }));
      const r = subscribe(c, 'subscription { item_by_pk(id: 1) { id } }');
      await r.results.settled();
      assert.equal(closed?.code, 4403, JSON.stringify(closed));
      assert.match(closed!.reason, /^Forbidden/);
      await c.dispose();
    }
  });

  test('a JWT expiring during the subscription closes 4403', async () => {
    let closed: { code: number; reason: string } | undefined;
    const c = transportClient({ headers: { Authorization: `Bearer ${await jwt('1', 2)}` } }, (code, reason) => (closed ??= { code, reason }));
    const r = subscribe(c, 'subscription { item(limit: 1) { id } }');
    await r.results.count(1);
    await r.results.settled(15_000);
    assert.equal(closed?.code, 4403);
    assert.match(closed!.reason, /session expired/);
    await c.dispose();
  });

  test('protocol violations get the graphql-ws close codes', async () => {
    const raw = async (frames: unknown[], waitForAck = false): Promise<{ code: number; reason: string }> => {
      const ws = new WebSocket(wsUrl(s.url), 'graphql-transport-ws');
      const closed = new Promise<{ code: number; reason: string }>((res) => ws.once('close', (code, reason) => res({ code, reason: reason.toString() })));
      await new Promise((res, rej) => {
        ws.once('open', res);
        ws.once('error', rej);
      });
      assert.equal(ws.protocol, 'graphql-transport-ws');
      if (waitForAck) {
        ws.send(JSON.stringify({ type: 'connection_init', payload: { headers: admin } }));
        await new Promise<void>((res) => ws.once('message', () => res()));
      }
      for (const f of frames) ws.send(typeof f === 'string' ? f : JSON.stringify(f));
      const t = setTimeout(() => ws.terminate(), 10_000);
      const out = await closed;
      clearTimeout(t);
      return out;
    };
    const sub = (id: string) => ({ id, type: 'subscribe', payload: { query: 'subscription { item(limit: 1) { id } }' } });
    assert.deepEqual(await raw(['{not json']), { code: 4400, reason: 'Invalid message received' });
    assert.deepEqual(await raw([sub('1')]), { code: 4401, reason: 'Unauthorized' });
    assert.deepEqual(await raw([{ type: 'connection_init' }], true), { code: 4429, reason: 'Too many initialisation requests' });
    assert.deepEqual(await raw([sub('1'), sub('1')], true), { code: 4409, reason: 'Subscriber for 1 already exists' });
    assert.deepEqual(await raw([{ type: 'next', id: '1', payload: {} }], true), { code: 4400, reason: 'Unexpected message of type next received' });
    // no connection_init at all
    assert.deepEqual(await raw([]), { code: 4408, reason: 'Connection initialisation timeout' });
  });

  test('ping is answered with pong (payload echoed)', async () => {
    const ws = new WebSocket(wsUrl(s.url), 'graphql-transport-ws');
    await new Promise((res) => ws.once('open', res));
    const got: any[] = [];
    ws.on('message', (d) => got.push(JSON.parse(d.toString())));
    ws.send(JSON.stringify({ type: 'connection_init', payload: { headers: admin } }));
    ws.send(JSON.stringify({ type: 'ping', payload: { x: 1 } }));
    const deadline = Date.now() + 10_000;
    while (got.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(got, [{ type: 'connection_ack' }, { type: 'pong', payload: { x: 1 } }]);
    ws.close();
  });
});

describe('legacy graphql-ws (subscriptions-transport-ws client)', () => {
  test('first result, update after a mutation, stop; errors for an invalid document', async () => {
    const token = await jwt('2');
    const client = new SubscriptionClient(wsUrl(s.url), { connectionParams: { headers: { Authorization: `Bearer ${token}` } }, reconnect: false }, WebSocket);
    try {
      const results = new Results();
      const sub = client.request({ query: 'subscription ($id: Int!) { item_by_pk(id: $id) { id name } }', variables: { id: 11 } }).subscribe({
        next: (v) => results.push(v),
        error: (e) => results.fail(e),
        complete: () => results.done(),
      });
      assert.deepEqual(await results.count(1), { data: { item_by_pk: { id: 11, name: 'n11' } } });
      const t0 = Date.now();
      await mutate("update item set name = 'legacy' where id = 11");
      assert.deepEqual(await results.count(2), { data: { item_by_pk: { id: 11, name: 'legacy' } } });
      assert.ok(Date.now() - t0 < 2 * INTERVAL + 2_000);
      await mutate("update item set name = 'x' where id = 13");
      await intervals(3);
      assert.equal(results.items.length, 2);
      sub.unsubscribe();
      await mutate("update item set name = 'after-stop' where id = 11");
      await wallIntervals(3);
      assert.equal(results.items.length, 2);

      const bad = new Results();
      client
        .request({ query: 'subscription { no_such_field { id } }' })
        .subscribe({ next: (v) => bad.push(v), error: (e) => bad.fail(e), complete: () => bad.done() });
      await bad.settled();
      assert.equal(bad.items.length, 0);
      assert.equal((bad.errors[0] as { extensions: { code: string } }).extensions.code, 'validation-failed');
    } finally {
      client.close();
    }
  });
});

describe('multiplexing', () => {
  test(
    '1,000 subscribers with different variables in one cohort: ⌈1000/100⌉ statements per interval, counted at the driver',
    { timeout: 180_000 },
    async () => {
      const N = 1000;
      const perSocket = 250;
      const db = s.engine.db;
      // every statement the engine sends, with its text, from the driver wrapper
      const sent: string[] = [];
      const origPrepared = db.prepared.bind(db);
      const origQuery = db.query.bind(db);
      (db as any).prepared = (name: string, text: string, values: unknown[], cancel?: unknown) => {
        sent.push(text);
        return origPrepared(name, text, values, cancel as never);
      };
      (db as any).query = (text: string, values?: unknown[]) => {
        sent.push(text);
        return origQuery(text, values);
      };
      const sockets: WebSocket[] = [];
      const got = new Map<string, any[]>();
      try {
        for (let k = 0; k < N / perSocket; k++) {
          const ws = new WebSocket(wsUrl(s.url), 'graphql-ws');
          sockets.push(ws);
          await new Promise((res, rej) => {
            ws.once('open', res);
            ws.once('error', rej);
          });
          ws.on('message', (d) => {
            const m = JSON.parse(d.toString());
            if (m.type === 'data') {
              let l = got.get(m.id);
              if (!l) got.set(m.id, (l = []));
              l.push(m.payload);
            }
          });
          ws.send(JSON.stringify({ type: 'connection_init', payload: { headers: admin } }));
          for (let i = 0; i < perSocket; i++) {
            const id = k * perSocket + i + 1;
            ws.send(
              JSON.stringify({
                id: String(id),
                type: 'start',
                payload: { query: 'subscription ($id: Int!) { item_by_pk(id: $id) { id name } }', variables: { id } },
              }),
            );
          }
        }
        const deadline = Date.now() + 60_000;
        while (got.size < N && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        assert.equal(got.size, N, 'every subscriber got its first result');
        assert.deepEqual(got.get('500'), [{ data: { item_by_pk: { id: 500, name: 'n500' } } }]);

        await intervals(2); // every subscriber has joined and been run once
        // count between two moments when no cohort run is in flight, so every statement of each
        // run falls inside the window
        const quiet = async () => {
          const until = Date.now() + 30_000;
          while (s.engine.liveQueryStats.running > 0 && Date.now() < until) await new Promise((r) => setImmediate(r));
          assert.equal(s.engine.liveQueryStats.running, 0);
        };
        await quiet();
        sent.length = 0;
        const t0 = s.engine.liveQueryStats.ticks;
        await intervals(5);
        await quiet();
        const batches = () => sent.filter((t) => t.startsWith('SELECT "_subs"."result_id"'));
        process.stdout.write(`# idle: ${s.engine.liveQueryStats.ticks - t0} intervals, ${batches().length} statements sent for ${N} subscribers\n`);
        assert.deepEqual(batches(), [], 'idle (no write): no live-query statement (change-driven refetch)');

        // a write to the table (even one that changes nothing): one run, ⌈1000/100⌉ statements
        const r0 = s.engine.liveQueryStats.runs;
        await mutate('update item set name = name where id = 1');
        await waitFor('a run', async () => s.engine.liveQueryStats.runs > r0 || undefined, 15_000);
        await intervals(2);
        await quiet();
        const runs = s.engine.liveQueryStats.runs - r0;
        const others = sent.filter((t) => !t.startsWith('SELECT "_subs"."result_id"') && t.includes('"item"'));
        process.stdout.write(`# one write: ${runs} cohort runs, ${batches().length} statements\n`);
        assert.deepEqual(others, [], 'no per-subscriber statement');
        assert.equal(runs, 1, 'one run per write');
        assert.equal(batches().length, runs * Math.ceil(N / 100), 'statements per run: ⌈1000/100⌉');

        // a change to one row reaches exactly its one subscriber
        const before = new Map([...got].map(([k, v]) => [k, v.length]));
        await mutate("update item set name = 'only-500' where id = 500");
        const until = Date.now() + 15_000;
        while (got.get('500')!.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
        await intervals(2);
        const changed = [...got].filter(([k, v]) => v.length !== before.get(k)).map(([k]) => k);
        assert.deepEqual(changed, ['500']);
        assert.deepEqual(got.get('500')![1], { data: { item_by_pk: { id: 500, name: 'only-500' } } });
      } finally {
        (db as any).prepared = origPrepared;
        (db as any).query = origQuery;
        for (const ws of sockets) ws.close();
      }
      // the cohort is dropped when its subscribers leave
      const deadline = Date.now() + 10_000;
      while (s.engine.liveQueryStats.cohorts > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.equal(s.engine.liveQueryStats.cohorts, 0);
    },
  );

  test('explain of a subscription: the multiplexed statement, the same for equal variable shapes', async () => {
    const q = 'subscription ($condition: item_bool_exp) { item(where: $condition) { id } }';
    const explain = async (variables: unknown) => {
      const r = await post(s.url, '/v1/graphql/explain', { query: { query: q, variables } }, admin);
      assert.equal(r.status, 200, r.text);
      return r.body as { sql: string; plan: string[] };
    };
    const one = await explain({ condition: { id: { _eq: 1 } } });
    assert.match(one.sql, /unnest\(\$1::integer\[\], \$2::json\[\]\)/);
    assert.ok(one.plan.length > 0);
    assert.equal((await explain({ condition: { id: { _eq: 2 } } })).sql, one.sql);
    assert.notEqual((await explain({ condition: { id: { _gt: 1 } } })).sql, one.sql);
    assert.notEqual((await explain({ condition: null })).sql, one.sql);
  });
});

test('embedded PGlite: subscribers are multiplexed too', { timeout: 180_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-live-'));
  const config = {
    ...defaultConfig(),
    port: 0,
    host: '127.0.0.1',
    logLevel: 'error' as const,
    enabledLogTypes: [],
    dataDir,
    databaseUrl: undefined,
    liveQueriesRefetchInterval: INTERVAL,
    liveQueriesBatchSize: 2,
  };
  const svc = await startSvc(config, createLogger(config, devnull()));
  try {
    await query(svc.url, { type: 'run_sql', args: { sql: "create table t (id int primary key, v text); insert into t values (1, 'a'), (2, 'b'), (3, 'c');" } });
    await query(svc.url, { type: 'track_table', args: { table: 't' } });
    const c = createClient({ url: wsUrl(svc.url), webSocketImpl: WebSocket, retryAttempts: 0 });
    try {
      const subs = [1, 2, 3].map((id) => {
        const results = new Results();
        c.subscribe(
          { query: 'subscription ($id: Int!) { t_by_pk(id: $id) { v } }', variables: { id } },
          { next: (v) => results.push(v), error: (e) => results.fail(e), complete: () => results.done() },
        );
        return results;
      });
      for (const [i, r] of subs.entries()) assert.deepEqual(await r.count(1), { data: { t_by_pk: { v: 'abc'[i] } } });
      await intervals(3, undefined, svc); // the new subscribers' rows have run
      while (svc.engine.liveQueryStats.running > 0) await new Promise((r) => setImmediate(r));
      const b0 = svc.engine.liveQueryStats.batches;
      const r0 = svc.engine.liveQueryStats.runs;
      await intervals(3, undefined, svc);
      assert.equal(svc.engine.liveQueryStats.batches - b0, 0, 'idle: no statement (PGlite notifies too)');
      assert.equal(svc.engine.changes.mode, 'notify');
      await post(svc.url, '/v1/graphql', { query: 'mutation { update_t_by_pk(pk_columns: {id: 3}, _set: {v: "z"}) { id } }' });
      assert.deepEqual(await subs[2]!.count(2), { data: { t_by_pk: { v: 'z' } } });
      await intervals(2, undefined, svc);
      while (svc.engine.liveQueryStats.running > 0) await new Promise((r) => setImmediate(r));
      // 3 subscribers in batches of 2: 2 statements per run
      assert.ok(svc.engine.liveQueryStats.runs > r0);
      assert.equal(svc.engine.liveQueryStats.batches - b0, (svc.engine.liveQueryStats.runs - r0) * 2);
      assert.equal(subs[0]!.items.length, 1);
    } finally {
      await c.dispose();
    }
  } finally {
    await svc.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a slow client gets the latest result, not a growing queue (backpressure); metrics count it', { timeout: 120_000 }, async () => {
  const bigLength = 2_000_000;
  const s2 = await startTestServer({ liveQueriesRefetchInterval: 100 });
  const ws = new WebSocket(wsUrl(s2.url), 'graphql-transport-ws');
  const opened = new Promise((res) => ws.once('open', res));
  try {
    await query(s2.url, {
      type: 'run_sql',
      args: { sql: `create table blob (id int primary key, n int not null, body text not null); insert into blob values (1, 0, repeat('x', ${bigLength}));` },
    });
    await query(s2.url, { type: 'track_table', args: { table: 'blob' } });
    await opened;
    const got: any[] = [];
    ws.on('message', (d) => got.push(JSON.parse(d.toString())));
    ws.send(JSON.stringify({ type: 'connection_init', payload: {} }));
    ws.send(JSON.stringify({ id: 'b', type: 'subscribe', payload: { query: 'subscription { blob_by_pk(id: 1) { n body } }' } }));
    const deadline = Date.now() + 15_000;
    while (!got.some((m) => m.type === 'next') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    // the client stops reading: the server's socket buffer fills
    (ws as any)._socket.pause();
    const dropped0 = s2.engine.liveQueryStats.dropped;
    let n = 0;
    const until = Date.now() + 60_000;
    while (s2.engine.liveQueryStats.dropped === dropped0 && Date.now() < until) {
      await mutate(`update blob set n = ${++n}`, s2.databaseUrl);
      await new Promise((r) => setTimeout(r, 150));
    }
    assert.ok(s2.engine.liveQueryStats.dropped > dropped0, `results were replaced while the client was slow (after ${n} updates)`);
    const last = ++n;
    await mutate(`update blob set n = ${last}`, s2.databaseUrl);
    await new Promise((r) => setTimeout(r, 500));
    (ws as any)._socket.resume();
    const end = Date.now() + 30_000;
    const latest = () => got.filter((m) => m.type === 'next').at(-1)?.payload.data.blob_by_pk.n;
    while (latest() !== last && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    assert.equal(latest(), last, 'the client ends with the latest result');
    const nexts = got.filter((m) => m.type === 'next').length;
    assert.ok(nexts < last + 1, `${nexts} results for ${last + 1} states: some were skipped`);
    const metrics = await (await fetch(`${s2.url}/v1/metrics`, { headers: { 'x-svc-role': 'admin' } })).text();
    assert.match(metrics, /^svc_live_query_messages_dropped_total [1-9]/m);
    assert.match(metrics, /^svc_live_query_cohorts 1$/m);
    assert.match(metrics, /^svc_live_query_batch_ms\{quantile="0.99"\} /m);
    process.stdout.write(`# backpressure: ${nexts} results delivered for ${last + 1} states\n`);
  } finally {
    ws.terminate();
    await s2.close();
  }
});
