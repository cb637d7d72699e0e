/**
 * Streaming subscriptions (`<table>_stream`, issue 39 item 2) under real npm clients: graphql-ws's
 * createClient (graphql-transport-ws) and subscriptions-transport-ws (legacy graphql-ws).
 *
 * - the schema is Hasura v2's (args, cursor input types, cursor_ordering), on subscription_root only;
 * - 10,000 rows streamed in batches, with writes (GraphQL, plain pg) during the stream: every row
 *   exactly once, in cursor order, batches never larger than batch_size, one statement per cohort batch;
 * - a reconnect with the last cursor goes on exactly where the stream stopped (legacy client);
 * - DESC ordering;
 * - permissions: the role's filter, columns and limit, session variables; no stream without select permission;
 * - bad arguments are `error` messages;
 * - two real transactions committing out of cursor order: the later row is held until the earlier
 *   commits, then both arrive in order (none skipped).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import pg from 'pg';
import { createClient, type Client as WsClient } from 'graphql-ws';
import { SubscriptionClient } from 'subscriptions-transport-ws';
import { TEST_HS_KEY as HS_KEY, userJwt as jwt } from '../helpers/jwt.js';
import { devnull, postGraphql, query, startTestServer, type TestServer } from '../helpers/server.js';
import { defaultConfig } from '../../src/config/config.js';
import { createLogger, startSvc } from '../../src/server/start.js';

const SECRET = 'adm1n';
const INTERVAL = 200;
const admin = { 'x-svc-admin-secret': SECRET };
const SETUP = [
  {
    type: 'run_sql',
    args: { sql: 'create table msg (id serial primary key, owner int not null, body text not null, secret text); create table other (id int primary key);' },
  },
  { type: 'track_table', args: { table: 'msg' } },
  { type: 'track_table', args: { table: 'other' } },
  {
    type: 'create_select_permission',
    args: { table: 'msg', role: 'user', permission: { columns: ['id', 'body'], filter: { owner: 'X-Svc-User-Id' }, limit: 7 } },
  },
  { type: 'create_insert_permission', args: { table: 'msg', role: 'user', permission: { columns: ['body'], check: {}, set: { owner: 'X-Svc-User-Id' } } } },
];

let s: TestServer;

before(async () => {
  s = await startTestServer({
    adminSecret: SECRET,
    jwtSecret: { type: 'HS256', key: HS_KEY },
    streamingQueriesRefetchInterval: INTERVAL,
    streamingQueriesBatchSize: 100,
    maxSubscriptionsPerConnection: 1000,
  });
  await query(s.url, { type: 'bulk', args: SETUP }, admin);
});

after(async () => {
  await s?.close();
});

const wsUrl = () => `${s.url.replace('http', 'ws')}/v1/graphql`;

/** Batches of one subscription, awaitable by row count. */
class Stream {
  readonly batches: any[][] = [];
  readonly ids: number[] = [];
  errors: unknown[] = [];
  completed = false;
  private waiters: Array<() => void> = [];
  constructor(private readonly field: string) {}
  push(v: any) {
    if (v.errors) this.errors.push(v.errors);
    else {
      const rows = v.data[this.field] as any[];
      this.batches.push(rows);
      for (const r of rows) this.ids.push(r.id);
    }
    this.wake();
  }
  fail(e: unknown) {
    this.errors.push(e);
    this.wake();
  }
  done() {
    this.completed = true;
    this.wake();
  }
  private wake() {
    this.waiters.splice(0).forEach((w) => w());
  }
  async rows(n: number, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.ids.length < n) {
      if (this.errors.length) throw new Error(`stream failed: ${JSON.stringify(this.errors)}`);
      if (Date.now() > deadline) throw new Error(`${this.ids.length} of ${n} rows within ${timeoutMs} ms`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 100).unref();
      });
    }
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

function transportClient(headers: Record<string, string>): WsClient {
  return createClient({
    url: wsUrl(),
    webSocketImpl: WebSocket,
    connectionParams: { headers },
    retryAttempts: 0,
    lazy: false,
    onNonLazyError: () => undefined,
  });
}

function subscribe(c: WsClient, field: string, q: string, variables?: Record<string, unknown>): { stream: Stream; stop: () => void } {
  const stream = new Stream(field);
  const stop = c.subscribe({ query: q, variables }, { next: (v) => stream.push(v), error: (e) => stream.fail(e), complete: () => stream.done() });
  return { stream, stop };
}

function legacyClient(headers: Record<string, string>): SubscriptionClient {
  return new SubscriptionClient(wsUrl(), { reconnect: false, connectionParams: { headers } }, WebSocket);
}

function legacySubscribe(c: SubscriptionClient, field: string, q: string, variables?: Record<string, unknown>): { stream: Stream; stop: () => void } {
  const stream = new Stream(field);
  const sub = c.request({ query: q, variables }).subscribe({ next: (v) => stream.push(v), error: (e) => stream.fail(e), complete: () => stream.done() });
  return { stream, stop: () => sub.unsubscribe() };
}

async function sqlOn<T = any>(text: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: s.databaseUrl });
  await c.connect();
  try {
    return (await c.query(text, params)).rows as T[];
  } finally {
    await c.end();
  }
}

/** Ids strictly increasing (decreasing with `desc`), no gaps against `expected`. */
function assertExactly(ids: number[], expected: number[]) {
  assert.equal(ids.length, expected.length, `got ${ids.length} rows, expected ${expected.length}`);
  for (let i = 0; i < ids.length; i++) if (ids[i] !== expected[i]) assert.fail(`row #${i}: got id ${ids[i]}, expected ${expected[i]} (duplicates or gaps)`);
}

/** The error messages a subscription got (every `message`/`error` string in them). */
function messages(errors: unknown): string {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if ((k === 'message' || k === 'error') && typeof x === 'string') out.push(x);
        else walk(x);
      }
    }
  };
  walk(errors);
  return out.join('\n');
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('schema', () => {
  test('Hasura v2 types and arguments, on subscription_root only', async () => {
    const r = await postGraphql(
      s.url,
      {
        query: `{ sub: __type(name: "subscription_root") { fields { name args { name type { kind name ofType { kind name ofType { kind name } } } } } }
        q: __type(name: "query_root") { fields { name } }
        ci: __type(name: "msg_stream_cursor_input") { inputFields { name type { kind name ofType { name } } } }
        cv: __type(name: "msg_stream_cursor_value_input") { inputFields { name type { name } } }
        co: __type(name: "cursor_ordering") { enumValues { name } } }`,
      },
      admin,
    );
    const d = r.body.data;
    const f = d.sub.fields.find((x: any) => x.name === 'msg_stream');
    assert.ok(f, 'msg_stream on subscription_root');
    assert.deepEqual(
      f.args.map((a: any) => a.name),
      ['batch_size', 'cursor', 'where'],
    );
    assert.deepEqual(f.args[0].type, { kind: 'NON_NULL', name: null, ofType: { kind: 'SCALAR', name: 'Int', ofType: null } });
    assert.deepEqual(f.args[1].type, {
      kind: 'NON_NULL',
      name: null,
      ofType: { kind: 'LIST', name: null, ofType: { kind: 'INPUT_OBJECT', name: 'msg_stream_cursor_input' } },
    });
    assert.equal(f.args[2].type.name, 'msg_bool_exp');
    assert.ok(!d.q.fields.some((x: any) => x.name === 'msg_stream'), 'not on query_root');
    assert.deepEqual(
      d.ci.inputFields.map((x: any) => [x.name, x.type.kind, x.type.name ?? x.type.ofType.name]),
      [
        ['initial_value', 'NON_NULL', 'msg_stream_cursor_value_input'],
        ['ordering', 'ENUM', 'cursor_ordering'],
      ],
    );
    assert.deepEqual(
      d.cv.inputFields.map((x: any) => x.name),
      ['body', 'id', 'owner', 'secret'],
    );
    assert.deepEqual(
      d.co.enumValues.map((x: any) => x.name),
      ['ASC', 'DESC'],
    );
    // a role sees its columns only; a role without select permission has no stream
    const u = await postGraphql(
      s.url,
      { query: '{ __type(name: "msg_stream_cursor_value_input") { inputFields { name } } }' },
      { ...admin, 'x-svc-role': 'user' },
    );
    assert.deepEqual(
      u.body.data.__type.inputFields.map((x: any) => x.name),
      ['body', 'id'],
    );
    const n = await postGraphql(s.url, { query: '{ __type(name: "subscription_root") { fields { name } } }' }, { ...admin, 'x-svc-role': 'nobody' });
    assert.ok(!JSON.stringify(n.body).includes('msg_stream'), JSON.stringify(n.body));
  });
});

describe('streaming 10,000 rows', () => {
  test('graphql-transport-ws: batches in order, each row exactly once, writes during the stream included', async () => {
    await sqlOn("insert into msg (owner, body) select g % 3, 'b' || g from generate_series(1, 6000) g");
    const c = transportClient(admin);
    const batchesBefore = s.engine.streamStats.batches;
    try {
      const { stream, stop } = subscribe(
        c,
        'msg_stream',
        'subscription ($from: Int!) { msg_stream(batch_size: 500, cursor: {initial_value: {id: $from}, ordering: ASC}) { id body } }',
        { from: 0 },
      );
      await stream.rows(1000);
      // more rows while streaming: through GraphQL and through a plain pg client, 2,000 each
      const objects = range(1, 2000).map((i) => ({ owner: 1, body: `g${i}` }));
      const m = await postGraphql(
        s.url,
        { query: 'mutation ($o: [msg_insert_input!]!) { insert_msg(objects: $o) { affected_rows } }', variables: { o: objects } },
        admin,
      );
      assert.equal(m.body.data?.insert_msg?.affected_rows, 2000, JSON.stringify(m.body));
      await sqlOn("insert into msg (owner, body) select 2, 'p' || g from generate_series(1, 2000) g");
      await stream.rows(10_000);
      // nothing more arrives: wait a few intervals' worth of statements
      const until = s.engine.streamStats.batches + 3;
      while (s.engine.streamStats.batches < until) await new Promise((r) => setTimeout(r, 20));
      stop();
      assertExactly(stream.ids, range(1, 10_000));
      assert.ok(
        stream.batches.every((b) => b.length > 0 && b.length <= 500),
        'batches of 1..500 rows',
      );
      assert.ok(stream.batches.length >= 20, `${stream.batches.length} batches`);
      assert.equal(stream.batches[0]![0].body, 'b1');
      process.stdout.write(`# 10,000 rows in ${stream.batches.length} batches, ${s.engine.streamStats.batches - batchesBefore} statements\n`);
    } finally {
      await c.dispose();
    }
  });

  test('subscriptions-transport-ws: a reconnect with the last cursor goes on exactly', async () => {
    const q = 'subscription ($from: Int!) { msg_stream(batch_size: 100, cursor: {initial_value: {id: $from}}) { id } }';
    const c1 = legacyClient(admin);
    const first = legacySubscribe(c1, 'msg_stream', q, { from: 2500 });
    await first.stream.rows(300);
    first.stop();
    c1.close();
    const last = first.stream.ids[first.stream.ids.length - 1]!;
    assertExactly(first.stream.ids, range(2501, last));
    const c2 = legacyClient(admin);
    try {
      const second = legacySubscribe(c2, 'msg_stream', q, { from: last });
      await second.stream.rows(10_000 - last);
      assertExactly([...first.stream.ids, ...second.stream.ids], range(2501, 10_000));
      second.stop();
    } finally {
      c2.close();
    }
  });

  test('DESC: rows before the cursor, newest first; subscribers in step share a row', async () => {
    const c = transportClient(admin);
    try {
      const q = 'subscription { msg_stream(batch_size: 40, cursor: {initial_value: {id: 101}, ordering: DESC}) { id } }';
      const a = subscribe(c, 'msg_stream', q);
      const b = subscribe(c, 'msg_stream', q);
      await a.stream.rows(100);
      await b.stream.rows(100);
      assertExactly(a.stream.ids, range(1, 100).reverse());
      assertExactly(b.stream.ids, range(1, 100).reverse());
      assert.deepEqual(
        a.stream.batches.map((x) => x.length),
        [40, 40, 20],
      );
      a.stop();
      b.stop();
    } finally {
      await c.dispose();
    }
  });
});

describe('permissions', () => {
  test("the role's filter, limit and session variables apply; its columns only", async () => {
    const token = await jwt('2');
    const c = transportClient({ Authorization: `Bearer ${token}` });
    try {
      // user 2 owns ids ≡ 2 (mod 3) among 1..6000, and 8001..10000
      const { stream, stop } = subscribe(
        c,
        'msg_stream',
        'subscription { msg_stream(batch_size: 100, cursor: {initial_value: {id: 5900}}, where: {body: {_like: "%0"}}) { id body } }',
      );
      const expected = [...range(5901, 6000).filter((i) => i % 3 === 2 && i % 10 === 0), ...range(8001, 10_000).filter((i) => i % 10 === 0)];
      await stream.rows(expected.length);
      assertExactly(stream.ids, expected);
      // the role's limit (7) caps every batch
      assert.ok(
        stream.batches.every((b) => b.length <= 7),
        JSON.stringify(stream.batches.map((b) => b.length)),
      );
      stop();
      const hidden = subscribe(c, 'msg_stream', 'subscription { msg_stream(batch_size: 10, cursor: {initial_value: {id: 0}}) { id owner } }');
      await hidden.stream.settled();
      assert.match(messages(hidden.stream.errors), /field "owner" not found in type: 'msg'/);
      const col = subscribe(c, 'msg_stream', 'subscription { msg_stream(batch_size: 10, cursor: {initial_value: {owner: 0}}) { id } }');
      await col.stream.settled();
      assert.match(messages(col.stream.errors), /owner/);
    } finally {
      await c.dispose();
    }
  });

  test('a role without select permission has no stream; a permission dropped while streaming ends it', async () => {
    const c = transportClient({ ...admin, 'x-svc-role': 'nobody' });
    try {
      const a = subscribe(c, 'msg_stream', 'subscription { msg_stream(batch_size: 10, cursor: {initial_value: {id: 0}}) { id } }');
      await a.stream.settled();
      assert.match(messages(a.stream.errors), /field "msg_stream" not found in type: 'subscription_root'/);
    } finally {
      await c.dispose();
    }
    await query(s.url, { type: 'create_select_permission', args: { table: 'other', role: 'user', permission: { columns: ['id'], filter: {} } } }, admin);
    await sqlOn('insert into other select generate_series(1, 5)');
    const u = transportClient({ Authorization: `Bearer ${await jwt('2')}` });
    try {
      const b = subscribe(u, 'other_stream', 'subscription { other_stream(batch_size: 10, cursor: {initial_value: {id: 0}}) { id } }');
      await b.stream.rows(5);
      await query(s.url, { type: 'drop_select_permission', args: { table: 'other', role: 'user' } }, admin);
      await b.stream.settled();
      assert.match(messages(b.stream.errors), /other_stream/);
    } finally {
      await u.dispose();
    }
  });
});

describe('bad arguments', () => {
  const cases: Array<[string, RegExp]> = [
    ['msg_stream(batch_size: 0, cursor: {initial_value: {id: 0}}) { id }', /"batch_size" must be a positive integer/],
    ['msg_stream(cursor: {initial_value: {id: 0}}) { id }', /the required argument "batch_size" is missing/],
    ['msg_stream(batch_size: 5, cursor: []) { id }', /one streaming column field is expected/],
    ['msg_stream(batch_size: 5, cursor: {initial_value: {id: 0, owner: 1}}) { id }', /one streaming column field is expected/],
    ['msg_stream(batch_size: 5, cursor: [{initial_value: {id: 0}}, {initial_value: {owner: 0}}]) { id }', /one streaming column field is expected/],
    ['msg_stream(batch_size: 5, cursor: {initial_value: {}}) { id }', /one streaming column field is expected/],
    ['msg_stream(batch_size: 5, cursor: {initial_value: {id: 0}, ordering: UP}) { id }', /UP/],
    ['msg_stream(batch_size: 5, cursor: {initial_value: {id: "x"}}) { id }', /./],
    ['msg_stream(batch_size: 5, cursor: {initial_value: {id: 0}}) { id } other { id }', /one top level field/],
  ];
  test('each is an error message (both protocols); the connection keeps serving', async () => {
    const c = transportClient(admin);
    const l = legacyClient(admin);
    try {
      for (const [sel, re] of cases) {
        const a = subscribe(c, 'msg_stream', `subscription { ${sel} }`);
        await a.stream.settled().catch((e) => assert.fail(`${sel}: ${e}`));
        assert.match(messages(a.stream.errors), re, sel);
        const b = legacySubscribe(l, 'msg_stream', `subscription { ${sel} }`);
        await b.stream.settled().catch((e) => assert.fail(`legacy ${sel}: ${e}`));
        assert.match(messages(b.stream.errors), re, sel);
      }
      const ok = subscribe(c, 'msg_stream', 'subscription { msg_stream(batch_size: 2, cursor: {initial_value: {id: 9998}}) { id } }');
      await ok.stream.rows(2);
      ok.stop();
    } finally {
      await c.dispose();
      l.close();
    }
  });
});

describe('rows committed out of cursor order', () => {
  test('two real transactions: the later id is held until the earlier id commits; both arrive, in order', async () => {
    const [{ max }] = await sqlOn<{ max: number }>('select max(id) as max from msg');
    const c = transportClient(admin);
    const t1 = new pg.Client({ connectionString: s.databaseUrl });
    const t2 = new pg.Client({ connectionString: s.databaseUrl });
    await t1.connect();
    await t2.connect();
    try {
      const { stream, stop } = subscribe(
        c,
        'msg_stream',
        'subscription ($from: Int!) { msg_stream(batch_size: 10, cursor: {initial_value: {id: $from}}) { id body } }',
        { from: max },
      );
      await t1.query('begin');
      const a = (await t1.query("insert into msg (owner, body) values (1, 'first') returning id")).rows[0].id as number;
      await t2.query('begin');
      const b = (await t2.query("insert into msg (owner, body) values (1, 'second') returning id")).rows[0].id as number;
      assert.ok(b > a);
      await t2.query('commit');
      // the later id is committed and visible, the earlier is not: several polls deliver nothing
      const until = s.engine.streamStats.batches + 4;
      while (s.engine.streamStats.batches < until) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(stream.ids, [], `held back while the earlier transaction runs: ${JSON.stringify(stream.ids)}`);
      await t1.query('commit');
      await stream.rows(2);
      assert.deepEqual(stream.ids, [a, b]);
      // a transaction that rolls back holds nothing back once it ends
      await t1.query('begin');
      await t1.query("insert into msg (owner, body) values (1, 'rolled back')");
      await t2.query("insert into msg (owner, body) values (1, 'third')");
      await t1.query('rollback');
      await stream.rows(3);
      assert.equal(stream.batches.flat().at(-1).body, 'third');
      stop();
    } finally {
      await t1.end();
      await t2.end();
      await c.dispose();
    }
  });
});

describe('multiplexing', () => {
  test('250 subscribers at different cursors, one shape: 3 statements per run (batches of 100); nothing sent to those with nothing new', async () => {
    const c = transportClient(admin);
    try {
      const all = (await sqlOn<{ id: number }>('select id from msg order by id')).map((r) => r.id);
      const q = 'subscription ($from: Int!) { msg_stream(batch_size: 20, cursor: {initial_value: {id: $from}}) { id } }';
      const froms = range(1, 250).map((i) => all[all.length - 1 - i]!);
      const subs = froms.map((from) => subscribe(c, 'msg_stream', q, { from }));
      for (const [i, x] of subs.entries()) await x.stream.rows(i + 1);
      for (const [i, x] of subs.entries())
        assertExactly(
          x.stream.ids,
          all.filter((id) => id > froms[i]!),
        );
      // caught up: every subscriber is at the last id, so they share one row now: one statement a run
      const messages = s.engine.streamStats.messages;
      const r0 = s.engine.streamStats.runs;
      const b0 = s.engine.streamStats.batches;
      while (s.engine.streamStats.runs < r0 + 3) await new Promise((r) => setTimeout(r, 20));
      assert.equal(s.engine.streamStats.messages, messages, 'no message without new rows');
      // (a run counts when it starts, its statement as it starts: the samples are within one of each other)
      assert.ok(
        Math.abs(s.engine.streamStats.batches - b0 - (s.engine.streamStats.runs - r0)) <= 1,
        'subscribers in step share one row: one statement per run',
      );
      // a new row reaches all 250 from that one statement
      const before = subs.map((x) => x.stream.ids.length);
      const [{ id: x }] = await sqlOn<{ id: number }>("insert into msg (owner, body) values (1, 'x') returning id");
      for (const [i, sub] of subs.entries()) {
        await sub.stream.rows(before[i]! + 1);
        assert.equal(sub.stream.ids.at(-1), x);
      }
      for (const x of subs) x.stop();
    } finally {
      await c.dispose();
    }
  });

  test('250 subscribers with different variables (not in step): ceil(250 / 100) statements per run', async () => {
    const c = transportClient(admin);
    try {
      const q =
        'subscription ($from: Int!, $b: String!) { msg_stream(batch_size: 20, cursor: {initial_value: {id: $from}}, where: {body: {_neq: $b}}) { id } }';
      const subs = range(1, 250).map((i) => subscribe(c, 'msg_stream', q, { from: 9_000, b: `none${i}` }));
      const [{ n }] = await sqlOn<{ n: number }>('select count(*)::int as n from msg where id > 9000');
      for (const x of subs) await x.stream.rows(n);
      const r0 = s.engine.streamStats.runs;
      const b0 = s.engine.streamStats.batches;
      while (s.engine.streamStats.runs < r0 + 5) await new Promise((r) => setTimeout(r, 20));
      const runs = s.engine.streamStats.runs - r0;
      const statements = s.engine.streamStats.batches - b0;
      // a run counts when it starts, its statements as they start: the two samples are within one run of each other
      assert.ok(Math.abs(statements - runs * 3) <= 3, `${statements} statements in ${runs} runs`);
      for (const x of subs) x.stop();
    } finally {
      await c.dispose();
    }
  });
});

test('embedded PGlite: streams, multiplexed', { timeout: 180_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-stream-'));
  const config = {
    ...defaultConfig(),
    port: 0,
    host: '127.0.0.1',
    logLevel: 'error' as const,
    enabledLogTypes: [],
    dataDir,
    databaseUrl: undefined,
    streamingQueriesRefetchInterval: INTERVAL,
  };
  const svc = await startSvc(config, createLogger(config, devnull()));
  try {
    await query(svc.url, {
      type: 'run_sql',
      args: { sql: "create table t (id serial primary key, v text); insert into t (v) select 'v' || g from generate_series(1, 300) g;" },
    });
    await query(svc.url, { type: 'track_table', args: { table: 't' } });
    const c = createClient({ url: `${svc.url.replace('http', 'ws')}/v1/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    try {
      const a = new Stream('t_stream');
      c.subscribe(
        { query: 'subscription { t_stream(batch_size: 50, cursor: {initial_value: {id: 0}}) { id v } }' },
        { next: (v) => a.push(v), error: (e) => a.fail(e), complete: () => a.done() },
      );
      await a.rows(300);
      await query(svc.url, { type: 'run_sql', args: { sql: "insert into t (v) values ('late')" } });
      await a.rows(301);
      assertExactly(a.ids, range(1, 301));
    } finally {
      await c.dispose();
    }
  } finally {
    await svc.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("the README's example, verbatim", async () => {
  await query(
    s.url,
    {
      type: 'bulk',
      args: [
        { type: 'run_sql', args: { sql: 'create table messages (id bigserial primary key, room int not null, body text not null)' } },
        { type: 'track_table', args: { table: 'messages' } },
        {
          type: 'create_select_permission',
          args: { table: 'messages', role: 'user', permission: { columns: ['id', 'body'], filter: { room: 'X-Svc-Room-Id' } } },
        },
      ],
    },
    admin,
  );
  await sqlOn("insert into messages (room, body) values (1, 'hello svc'), (2, 'svc elsewhere'), (1, 'not this one'), (1, 'SVC again')");
  const c = transportClient({ ...admin, 'x-svc-role': 'user', 'x-svc-room-id': '1' });
  try {
    const q = `subscription ($from: bigint!) {
  messages_stream(batch_size: 10, cursor: {initial_value: {id: $from}, ordering: ASC}, where: {body: {_ilike: "%svc%"}}) {
    id
    body
  }
}`;
    const { stream, stop } = subscribe(c, 'messages_stream', q, { from: 0 });
    await stream.rows(2);
    assert.deepEqual(stream.batches[0], [
      { id: 1, body: 'hello svc' },
      { id: 4, body: 'SVC again' },
    ]);
    stop();
  } finally {
    await c.dispose();
  }
});

test('woken by writes (table-change signal): a row inserted via pg, GraphQL or run_sql arrives long before the 10 s interval', async () => {
  const w = await startTestServer({ adminSecret: SECRET, streamingQueriesRefetchInterval: 10_000 });
  try {
    await query(
      w.url,
      {
        type: 'bulk',
        args: [
          { type: 'run_sql', args: { sql: "create table feed (id serial primary key, body text not null); insert into feed (body) values ('a')" } },
          { type: 'track_table', args: { table: 'feed' } },
        ],
      },
      admin,
    );
    const c = createClient({
      url: `${w.url.replace('http', 'ws')}/v1/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { headers: admin },
      retryAttempts: 0,
    });
    const pgc = new pg.Client({ connectionString: w.databaseUrl });
    await pgc.connect();
    try {
      const stream = new Stream('feed_stream');
      const stop = c.subscribe(
        { query: 'subscription { feed_stream(batch_size: 10, cursor: {initial_value: {id: 0}}) { id body } }' },
        { next: (v) => stream.push(v), error: (e) => stream.fail(e), complete: () => stream.done() },
      );
      await stream.rows(1, 5_000);
      const ms: number[] = [];
      const writes: Array<() => Promise<unknown>> = [
        () => pgc.query("insert into feed (body) values ('pg')"),
        () => postGraphql(w.url, { query: 'mutation { insert_feed_one(object: {body: "graphql"}) { id } }' }, admin),
        () => query(w.url, { type: 'run_sql', args: { sql: "insert into feed (body) values ('run_sql')" } }, admin),
      ];
      for (const [i, write] of writes.entries()) {
        const t0 = Date.now();
        await write();
        await stream.rows(i + 2, 5_000);
        ms.push(Date.now() - t0);
      }
      assert.deepEqual(
        stream.batches.flat().map((r) => r.body),
        ['a', 'pg', 'graphql', 'run_sql'],
      );
      process.stdout.write(`# write → stream (interval 10 s): ${ms.join(', ')} ms\n`);
      stop();
    } finally {
      await pgc.end();
      await c.dispose();
    }
  } finally {
    await w.close();
  }
});
