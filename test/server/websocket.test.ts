/**
 * The legacy graphql-ws transport under real clients and hostile ones (issues 11 and 12, 21):
 * messages queued while connection_init authenticates (200 concurrent clients, with a JWT), every
 * bad frame answered without throwing, re-init replacing the session, caps on operations and
 * connections, session expiry ending the connection, and SIGTERM closing 100 sockets with 1001
 * and exiting 0.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { TEST_HS_KEY as HS_KEY, userJwt as jwt } from '../helpers/jwt.js';
import WebSocket from 'ws';
import { cleanEnv, spawnSvc } from '../helpers/process.js';
import { query, startTestServer, type TestServer } from '../helpers/server.js';
import { createTestDatabase } from '../helpers/db.js';

const SECRET = 'adm1n';
const SETUP = [
  { type: 'run_sql', args: { sql: 'create table item (id int primary key, owner int not null); insert into item values (1, 1), (2, 2);' } },
  { type: 'track_table', args: { table: 'item' } },
  { type: 'create_select_permission', args: { table: 'item', role: 'user', permission: { columns: ['id'], filter: { owner: 'X-Svc-User-Id' } } } },
];

let s: TestServer;

before(async () => {
  s = await startTestServer({
    adminSecret: SECRET,
    jwtSecret: { type: 'HS256', key: HS_KEY },
    maxSubscriptionsPerConnection: 3,
    liveQueriesRefetchInterval: 50,
  });
  await query(s.url, { type: 'bulk', args: SETUP }, { 'x-svc-admin-secret': SECRET });
});

after(async () => {
  await s?.close();
});

/** A raw client of the protocol: every message kept; `next(type)` awaits one (bounded). */
class Client {
  readonly ws: WebSocket;
  readonly messages: any[] = [];
  /** every message received, in order (next() does not remove from it) */
  readonly log: any[] = [];
  private waiters: Array<() => void> = [];
  readonly opened: Promise<void>;
  readonly closed: Promise<{ code: number; reason: string }>;

  constructor(url: string, path = '/v1/graphql') {
    this.ws = new WebSocket(url.replace('http', 'ws') + path, 'graphql-ws');
    this.ws.on('message', (d) => {
      const m = JSON.parse(d.toString());
      this.messages.push(m);
      this.log.push(m);
      this.waiters.splice(0).forEach((w) => w());
    });
    this.opened = new Promise((res, rej) => {
      this.ws.once('open', () => res());
      this.ws.once('error', rej);
    });
    this.closed = new Promise((res) => this.ws.once('close', (code, reason) => res({ code, reason: reason.toString() })));
  }

  send(m: unknown): void {
    this.ws.send(typeof m === 'string' ? m : JSON.stringify(m));
  }

  async next(type: string, id?: string, timeoutMs = 10_000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.messages.findIndex((m) => m.type === type && (id === undefined || m.id === id));
      if (i >= 0) return this.messages.splice(i, 1)[0];
      if (Date.now() > deadline) throw new Error(`no ${type} message within ${timeoutMs} ms; got ${JSON.stringify(this.messages)}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 200).unref();
      });
    }
  }

  close(): void {
    this.ws.close();
  }
}

describe('start right behind connection_init (subscriptions-transport-ws)', () => {
  for (const withJwt of [false, true]) {
    test(`200 concurrent clients each get their first result (${withJwt ? 'JWT' : 'admin secret'})`, async () => {
      const token = withJwt ? await jwt('1') : undefined;
      const t0 = Date.now();
      const clients = Array.from({ length: 200 }, () => new Client(s.url));
      const firsts = await Promise.all(
        clients.map(async (c, i) => {
          await c.opened;
          // in the same tick, as the real client does
          c.send({ type: 'connection_init', payload: { headers: token ? { Authorization: `Bearer ${token}` } : { 'X-Svc-Admin-Secret': SECRET } } });
          c.send({ id: '1', type: 'start', payload: { query: `subscription s${i % 3} { item(order_by: {id: asc}) { id } }` } });
          return c.next('data', '1', 30_000);
        }),
      );
      const ms = Date.now() - t0;
      for (const c of clients) c.close();
      const expected = withJwt ? [{ id: 1 }] : [{ id: 1 }, { id: 2 }];
      assert.equal(firsts.filter((d) => JSON.stringify(d.payload) === JSON.stringify({ data: { item: expected } })).length, 200);
      process.stdout.write(`# 200/200 clients got their first result (${withJwt ? 'JWT' : 'admin secret'}) in ${ms} ms\n`);
    });
  }
});

describe('bad frames never throw', () => {
  const bad: Array<[string, string | Buffer]> = [
    ['null', 'null'],
    ['an array', '[]'],
    ['a number', '42'],
    ['a string', '"start"'],
    ['not JSON', '{nope'],
    ['no type', '{}'],
    ['a numeric type', '{"type": 1}'],
    ['an object id', '{"type": "start", "id": {}, "payload": {"query": "{ __typename }"}}'],
    ['a string payload', '{"type": "connection_init", "payload": "x"}'],
    ['an unknown type', '{"type": "subscribe"}'],
    ['stop without an id', '{"type": "stop"}'],
    ['start without an id', '{"type": "start", "payload": {"query": "{ __typename }"}}'],
    ['a binary frame', Buffer.from([0, 1, 2, 255])],
  ];
  for (const [name, frame] of bad) {
    test(`${name}: connection_error, and the connection still serves`, async () => {
      const c = new Client(s.url);
      await c.opened;
      c.ws.send(frame);
      const e = await c.next('connection_error');
      assert.equal(typeof e.payload, 'string');
      c.send({ type: 'connection_init', payload: { headers: { 'X-Svc-Admin-Secret': SECRET } } });
      await c.next('connection_ack');
      c.send({ id: 'ok', type: 'start', payload: { query: '{ item(order_by: {id: asc}) { id } }' } });
      assert.deepEqual((await c.next('data', 'ok')).payload, { data: { item: [{ id: 1 }, { id: 2 }] } });
      c.close();
    });
  }

  test('start payloads of the wrong shape get an error for that id', async () => {
    const c = new Client(s.url);
    await c.opened;
    c.send({ type: 'connection_init', payload: { headers: { 'X-Svc-Admin-Secret': SECRET } } });
    await c.next('connection_ack');
    c.send({ id: 'a', type: 'start', payload: { query: 42 } });
    c.send({ id: 'b', type: 'start', payload: { query: '{ __typename }', variables: [1] } });
    assert.equal((await c.next('error', 'a')).payload.errors[0].extensions.code, 'parse-failed');
    assert.equal((await c.next('error', 'b')).payload.errors[0].extensions.code, 'parse-failed');
    c.close();
  });

  test('errors before execution are `error` messages followed by `complete` (upstream withComplete); /v1alpha1 uses the legacy {path, error, code} objects', async () => {
    const v1 = new Client(s.url);
    const alpha = new Client(s.url, '/v1alpha1/graphql');
    await Promise.all([v1.opened, alpha.opened]);
    for (const c of [v1, alpha]) {
      c.send({ type: 'connection_init', payload: { headers: { 'X-Svc-Admin-Secret': SECRET } } });
      await c.next('connection_ack');
      c.send({ id: 'v', type: 'start', payload: { query: 'subscription { item { nope } }' } });
      c.send({ id: 'x', type: 'start', payload: { query: 'query { item(where: {id: {_eq: $n}}) { id } }' } });
      // an execution error (a uniqueness violation in PostgreSQL) is data, then complete
      c.send({ id: 'e', type: 'start', payload: { query: 'mutation { insert_item(objects: [{id: 1, owner: 1}]) { affected_rows } }' } });
      await c.next('complete', 'e');
    }
    const notFound = 'field "nope" not found in type: \'item\'';
    assert.deepEqual((await v1.next('error', 'v')).payload, {
      errors: [{ extensions: { path: '$.selectionSet.item.selectionSet.nope', code: 'validation-failed' }, message: notFound }],
    });
    assert.deepEqual((await alpha.next('error', 'v')).payload, { path: '$.selectionSet.item.selectionSet.nope', error: notFound, code: 'validation-failed' });
    assert.equal((await alpha.next('error', 'x')).payload.code, 'validation-failed');
    const v1Data = (await v1.next('data', 'e')).payload;
    assert.equal(v1Data.errors[0].extensions.code, 'constraint-violation');
    assert.match(v1Data.errors[0].message, /^Uniqueness violation/);
    const alphaData = (await alpha.next('data', 'e')).payload;
    assert.deepEqual(Object.keys(alphaData.errors[0]).sort(), ['code', 'error', 'path']);
    assert.equal(alphaData.errors[0].code, 'constraint-violation');
    for (const c of [v1, alpha]) {
      await c.next('complete', 'v');
      await c.next('complete', 'x');
      // the error comes before the complete
      const order = c.log.filter((m) => m.id === 'v').map((m) => m.type);
      assert.deepEqual(order, ['error', 'complete']);
      assert.equal(
        c.messages.some((m) => m.type === 'data' && m.id === 'v'),
        false,
      );
      c.close();
    }
  });

  test('stop for an unknown id is ignored, a duplicate id gets an error, terminate closes 1000', async () => {
    const c = new Client(s.url);
    await c.opened;
    c.send({ type: 'connection_init', payload: { headers: { 'X-Svc-Admin-Secret': SECRET } } });
    await c.next('connection_ack');
    c.send({ id: 'nope', type: 'stop' });
    c.send({ id: 'd', type: 'start', payload: { query: 'subscription { item { id } }' } });
    await c.next('data', 'd');
    c.send({ id: 'd', type: 'start', payload: { query: 'subscription { item { id } }' } });
    assert.match((await c.next('error', 'd')).payload.errors[0].message, /already exists with this id/);
    c.send({ type: 'connection_terminate' });
    c.send({ id: 'late', type: 'start', payload: { query: '{ __typename }' } });
    assert.equal((await c.closed).code, 1000);
    assert.equal(
      c.messages.some((m) => m.id === 'late' || m.type === 'connection_error'),
      false,
    );
  });

  test('a real process survives `null` before connection_init and keeps serving', async () => {
    const db = await createTestDatabase();
    const p = spawnSvc(['serve', '--server-port', '0', '--server-host', '127.0.0.1'], cleanEnv({ SVC_GRAPHQL_DATABASE_URL: db.url }));
    try {
      const { port } = await p.startup;
      const url = `http://127.0.0.1:${port}`;
      const c = new Client(url);
      await c.opened;
      c.send('null');
      await c.next('connection_error');
      c.send({ type: 'connection_init', payload: {} });
      await c.next('connection_ack');
      c.send({ id: '1', type: 'start', payload: { query: '{ __typename }' } });
      assert.deepEqual((await c.next('data', '1')).payload, { data: { __typename: 'query_root' } });
      c.close();
      assert.equal(p.child.exitCode, null, p.output());
    } finally {
      await p.stop();
      await db.drop();
    }
  });
});

describe('sessions', () => {
  test('a second connection_init replaces the session: an earlier admin secret does not linger', async () => {
    const c = new Client(s.url);
    await c.opened;
    c.send({ type: 'connection_init', payload: { headers: { 'X-Svc-Admin-Secret': SECRET } } });
    await c.next('connection_ack');
    c.send({ type: 'connection_init', payload: { headers: { Authorization: `Bearer ${await jwt('2')}` } } });
    await c.next('connection_ack');
    c.send({ id: '1', type: 'start', payload: { query: '{ item { id } }' } });
    assert.deepEqual((await c.next('data', '1')).payload, { data: { item: [{ id: 2 }] } });
    c.send({ type: 'connection_init', payload: { headers: {} } });
    const e = await c.next('connection_error');
    assert.match(e.payload, /required|not found|missing/i);
    assert.equal((await c.closed).code, 1000);
  });

  test('the session expiring ends its subscriptions and the connection', async () => {
    const c = new Client(s.url);
    await c.opened;
    c.send({ type: 'connection_init', payload: { headers: { Authorization: `Bearer ${await jwt('1', 2)}` } } });
    await c.next('connection_ack');
    c.send({ id: 'sub', type: 'start', payload: { query: 'subscription { item { id } }' } });
    await c.next('data', 'sub');
    const t0 = Date.now();
    const closed = await c.closed;
    assert.equal(closed.code, 1000);
    assert.match(closed.reason, /expired/);
    assert.ok(Date.now() - t0 < 4_000, 'closed at the expiry');
    assert.ok(c.messages.some((m) => m.type === 'connection_error'));
  });
});

test('an auth webhook session expiring (Cache-Control max-age) ends the connection too', async () => {
  const { createServer } = await import('node:http');
  const hook = createServer((_q, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ 'X-Svc-Role': 'user', 'X-Svc-User-Id': '1', 'Cache-Control': 'max-age=2' }));
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
  const t = await startTestServer({
    adminSecret: SECRET,
    authHook: `http://127.0.0.1:${(hook.address() as { port: number }).port}/`,
    liveQueriesRefetchInterval: 50,
  });
  try {
    await query(t.url, { type: 'bulk', args: SETUP }, { 'x-svc-admin-secret': SECRET });
    const c = new Client(t.url);
    await c.opened;
    c.send({ type: 'connection_init', payload: { headers: {} } });
    await c.next('connection_ack');
    c.send({ id: 'sub', type: 'start', payload: { query: 'subscription { item { id } }' } });
    assert.deepEqual((await c.next('data', 'sub')).payload, { data: { item: [{ id: 1 }] } });
    const closed = await c.closed;
    assert.equal(closed.code, 1000);
    assert.match(closed.reason, /expired/);
  } finally {
    await t.close();
    await new Promise<void>((r) => hook.close(() => r()));
  }
});

describe('caps', () => {
  test('--max-subscriptions-per-connection: the next start gets an error; a stop frees a place', async () => {
    const c = new Client(s.url);
    await c.opened;
    c.send({ type: 'connection_init', payload: { headers: { 'X-Svc-Admin-Secret': SECRET } } });
    await c.next('connection_ack');
    for (const id of ['1', '2', '3']) c.send({ id, type: 'start', payload: { query: 'subscription { item { id } }' } });
    for (const id of ['1', '2', '3']) await c.next('data', id);
    c.send({ id: '4', type: 'start', payload: { query: 'subscription { item { id } }' } });
    assert.match((await c.next('error', '4')).payload.errors[0].message, /too many operations on this connection \(limit 3\)/);
    c.send({ id: '1', type: 'stop' });
    c.send({ id: '5', type: 'start', payload: { query: 'subscription { item { id } }' } });
    await c.next('data', '5');
    c.close();
  });

  test('--max-websocket-connections: the upgrade past the cap is refused with 503', async () => {
    const t = await startTestServer({ maxWebsocketConnections: 2 });
    try {
      const a = new Client(t.url);
      const b = new Client(t.url);
      await Promise.all([a.opened, b.opened]);
      const c = new WebSocket(t.url.replace('http', 'ws') + '/v1/graphql', 'graphql-ws');
      const status = await new Promise<number>((res) => {
        c.once('unexpected-response', (_req, resp) => res(resp.statusCode ?? 0));
        c.once('open', () => res(101));
        c.once('error', () => undefined);
      });
      assert.equal(status, 503);
      a.close();
      await a.closed;
      const d = new Client(t.url);
      await d.opened;
      d.close();
      b.close();
    } finally {
      await t.close();
    }
  });
});

test('SIGTERM with 100 open subscriptions: every socket closes with 1001, exit 0 within seconds', async () => {
  const db = await createTestDatabase();
  const p = spawnSvc(
    ['serve', '--server-port', '0', '--server-host', '127.0.0.1'],
    cleanEnv({ SVC_GRAPHQL_DATABASE_URL: db.url, SVC_GRAPHQL_ENABLED_LOG_TYPES: 'startup' }),
  );
  try {
    const { port } = await p.startup;
    const url = `http://127.0.0.1:${port}`;
    const clients = Array.from({ length: 100 }, () => new Client(url));
    await Promise.all(
      clients.map(async (c) => {
        await c.opened;
        c.send({ type: 'connection_init', payload: {} });
        c.send({ id: '1', type: 'start', payload: { query: 'subscription { __typename }' } });
        await c.next('data', '1');
      }),
    );
    const t0 = Date.now();
    p.child.kill('SIGTERM');
    const codes = await Promise.all(clients.map((c) => c.closed.then((x) => x.code)));
    const exit = await p.exited;
    const ms = Date.now() - t0;
    assert.deepEqual([...new Set(codes)], [1001]);
    assert.equal(exit.code, 0, p.output());
    assert.ok(ms < 5_000, `shutdown took ${ms} ms`);
    process.stdout.write(`# SIGTERM with 100 open subscriptions: all closed 1001, exit 0 in ${ms} ms\n`);
  } finally {
    await p.stop();
    await db.drop();
  }
});
