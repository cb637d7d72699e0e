/**
 * Websocket details as upstream v1.3 answers them (issues 28 and 29; src/server/websocket/):
 * - legacy `graphql-ws`: a `start` before `connection_init` gets an `error` for its id, code
 *   start-failed; on /v1alpha1/graphql an execution error's payload has `"data": null`;
 * - `--disable-cors`: the handshake's Cookie header reaches the auth webhook only with
 *   `--ws-read-cookie`;
 * - websocket-log lines: accepted, operation started/completed/stopped/query_err (request id,
 *   user_vars), rejected (4403), closed with its code and reason.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { Receiver } from '../helpers/receiver.js';
import { query, startTestServer, type TestServer } from '../helpers/server.js';

const SECRET = 'adm1n';

/** A raw client of either sub-protocol: every message kept; `next(type)` awaits one (bounded). */
class Client {
  readonly ws: WebSocket;
  readonly messages: any[] = [];
  private waiters: Array<() => void> = [];
  readonly opened: Promise<void>;
  readonly closed: Promise<{ code: number; reason: string }>;

  constructor(url: string, path: string, protocol = 'graphql-ws', headers: Record<string, string> = {}) {
    this.ws = new WebSocket(url.replace('http', 'ws') + path, protocol, { headers });
    this.ws.on('message', (d) => {
      this.messages.push(JSON.parse(d.toString()));
      this.waiters.splice(0).forEach((w) => w());
    });
    this.opened = new Promise((res, rej) => {
      this.ws.once('open', () => res());
      this.ws.once('error', rej);
    });
    this.closed = new Promise((res) => this.ws.once('close', (code, reason) => res({ code, reason: reason.toString() })));
  }

  send(m: unknown): void {
    this.ws.send(JSON.stringify(m));
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
}

describe('legacy graphql-ws frames', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ adminSecret: SECRET });
    await query(
      s.url,
      {
        type: 'bulk',
        args: [
          {
            type: 'run_sql',
            args: {
              sql: 'create table author (id int primary key); create table article (id int primary key, author_id int not null references author(id)); insert into author values (1);',
            },
          },
          { type: 'track_table', args: { table: 'author' } },
          { type: 'track_table', args: { table: 'article' } },
        ],
      },
      { 'x-svc-admin-secret': SECRET },
    );
  });
  after(() => s?.close());

  for (const path of ['/v1alpha1/graphql', '/v1/graphql']) {
    test(`${path}: start before connection_init answers an error for that id (start-failed); the connection then serves`, async () => {
      const c = new Client(s.url, path);
      await c.opened;
      c.send({ id: '1', type: 'start', payload: { query: '{ author { id } }' } });
      const e = await c.next('error', '1');
      const expected = { path: '$', error: 'start received before the connection is initialised', code: 'start-failed' };
      if (path === '/v1alpha1/graphql') assert.deepEqual(e.payload, expected);
      else assert.deepEqual(e.payload, { errors: [{ extensions: { path: '$', code: 'start-failed' }, message: expected.error }] });
      assert.equal(
        c.messages.some((m) => m.type === 'connection_error'),
        false,
      );
      c.send({ type: 'connection_init', payload: { headers: { 'X-Svc-Admin-Secret': SECRET } } });
      await c.next('connection_ack');
      c.send({ id: '2', type: 'start', payload: { query: '{ author { id } }' } });
      assert.deepEqual((await c.next('data', '2')).payload, { data: { author: [{ id: 1 }] } });
      c.ws.close();
    });
  }

  test('/v1alpha1/graphql: an execution error answers {"data": null, "errors": [...]}; /v1/graphql keeps {"errors": [...]}', async () => {
    for (const path of ['/v1alpha1/graphql', '/v1/graphql']) {
      const c = new Client(s.url, path);
      await c.opened;
      c.send({ type: 'connection_init', payload: { headers: { 'X-Svc-Admin-Secret': SECRET } } });
      await c.next('connection_ack');
      c.send({ id: 'm', type: 'start', payload: { query: 'mutation { insert_article(objects: [{id: 1, author_id: 99}]) { affected_rows } }' } });
      const d = await c.next('data', 'm');
      await c.next('complete', 'm');
      if (path === '/v1alpha1/graphql') {
        assert.deepEqual(Object.keys(d.payload), ['data', 'errors'], JSON.stringify(d.payload));
        assert.equal(d.payload.data, null);
        assert.equal(d.payload.errors[0].code, 'constraint-violation');
      } else {
        assert.deepEqual(Object.keys(d.payload), ['errors'], JSON.stringify(d.payload));
        assert.equal(d.payload.errors[0].extensions.code, 'constraint-violation');
      }
      c.ws.close();
    }
  });
});

describe('cookies on the handshake with --disable-cors', () => {
  const hook = new Receiver();
  const servers: TestServer[] = [];
  before(async () => {
    await hook.start();
    // the webhook lets in only a request that carries the session cookie
    hook.respond = (r) => {
      const cookie =
        (r.body as { headers?: Record<string, string> } | undefined)?.headers?.Cookie ??
        (r.body as { headers?: Record<string, string> } | undefined)?.headers?.cookie;
      return cookie === 'session=abc' ? { status: 200, body: JSON.stringify({ 'X-Svc-Role': 'admin' }) } : { status: 401, body: '{}' };
    };
  });
  after(async () => {
    for (const s of servers) await s.close();
    await hook.close();
  });

  async function connect(s: TestServer) {
    const c = new Client(s.url, '/v1/graphql', 'graphql-ws', { Cookie: 'session=abc', Origin: 'http://elsewhere.example' });
    await c.opened;
    c.send({ type: 'connection_init', payload: {} });
    return c;
  }

  test('without --ws-read-cookie the cookie is not passed: connection_error from the webhook', async () => {
    const s = await startTestServer({ adminSecret: SECRET, authHook: `${hook.url}/auth`, authHookMode: 'POST', disableCors: true });
    servers.push(s);
    const c = await connect(s);
    const e = await c.next('connection_error');
    assert.equal(e.payload, 'Authentication hook unauthorized this request');
    await c.closed;
  });

  test('with --ws-read-cookie (or with CORS enabled) the cookie reaches the webhook', async () => {
    for (const overrides of [{ disableCors: true, wsReadCookie: true }, { disableCors: false }]) {
      const s = await startTestServer({ adminSecret: SECRET, authHook: `${hook.url}/auth`, authHookMode: 'POST', ...overrides });
      servers.push(s);
      const c = await connect(s);
      await c.next('connection_ack');
      c.send({ id: '1', type: 'start', payload: { query: '{ __typename }' } });
      assert.deepEqual((await c.next('data', '1')).payload, { data: { __typename: 'query_root' } });
      c.ws.close();
    }
  });
});

describe('websocket-log lines', () => {
  let s: TestServer;
  const lines: any[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      cb();
    },
  });
  before(async () => {
    s = await startTestServer({ adminSecret: SECRET, logLevel: 'info', enabledLogTypes: ['websocket-log'] }, sink);
  });
  after(() => s?.close());

  /** the websocket-log lines of one connection, once `done` holds for them (bounded) */
  async function logsOf(websocketId: () => string | undefined, done: (ls: any[]) => boolean): Promise<any[]> {
    for (let i = 0; i < 400; i++) {
      const id = websocketId();
      const mine = id ? lines.filter((l) => l.type === 'websocket-log' && l.detail.connection_info.websocket_id === id) : [];
      if (done(mine)) return mine;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`log lines not written: ${JSON.stringify(lines.slice(-10))}`);
  }

  test('accepted, operation started/completed/query_err/stopped with request id and user_vars, closed with its reason', async () => {
    const before = lines.length;
    const c = new Client(s.url, '/v1/graphql', 'graphql-ws', { 'x-request-id': 'ws-req-1' });
    await c.opened;
    c.send({ type: 'connection_init', payload: { headers: { 'X-Svc-Admin-Secret': SECRET } } });
    await c.next('connection_ack');
    c.send({ id: 'q', type: 'start', payload: { query: 'query Q { __typename }', operationName: 'Q' } });
    await c.next('complete', 'q');
    c.send({ id: 'bad', type: 'start', payload: { query: '{ nope }' } });
    await c.next('error', 'bad');
    c.send({ id: 'sub', type: 'start', payload: { query: 'subscription { __typename }' } });
    await c.next('data', 'sub');
    c.send({ id: 'sub', type: 'stop' });
    c.ws.close(1000, 'bye');
    await c.closed;
    const wsId = () => lines.slice(before).find((l) => l.type === 'websocket-log' && l.detail.event.type === 'accepted')?.detail.connection_info.websocket_id;
    const mine = await logsOf(wsId, (ls) => ls.some((l) => l.detail.event.type === 'closed'));
    const events = mine.map((l) =>
      l.detail.event.type === 'operation' ? `${l.detail.event.detail.operation_id}:${l.detail.event.detail.operation_type.type}` : l.detail.event.type,
    );
    assert.deepEqual(events, ['accepted', 'q:started', 'q:completed', 'bad:started', 'bad:query_err', 'sub:started', 'sub:stopped', 'closed']);
    const started = mine[1]!.detail;
    assert.deepEqual(started.event.detail, {
      request_id: 'ws-req-1',
      operation_id: 'q',
      query: { variables: {}, query: 'query Q { __typename }' },
      operation_type: { type: 'started' },
      operation_name: 'Q',
    });
    assert.deepEqual(started.user_vars, { 'x-svc-role': 'admin' });
    assert.equal(mine[0]!.detail.user_vars, null);
    assert.deepEqual(mine[4]!.detail.event.detail.operation_type, {
      type: 'query_err',
      detail: { path: '$.selectionSet.nope', error: 'field "nope" not found in type: \'query_root\'', code: 'validation-failed' },
    });
    assert.equal(mine[6]!.detail.event.detail.query, null);
    assert.match(mine[7]!.detail.connection_info.msg, /^1000 bye/);
    assert.equal(mine[7]!.level, 'info');
  });

  test('a graphql-transport-ws connection_init that fails authentication: rejected, closed 4403', async () => {
    const before = lines.length;
    const c = new Client(s.url, '/v1/graphql', 'graphql-transport-ws');
    await c.opened;
    c.send({ type: 'connection_init', payload: { headers: { 'X-Svc-Admin-Secret': 'wrong' } } });
    assert.equal((await c.closed).code, 4403);
    const wsId = () => lines.slice(before).find((l) => l.type === 'websocket-log' && l.detail.event.type === 'accepted')?.detail.connection_info.websocket_id;
    const mine = await logsOf(wsId, (ls) => ls.some((l) => l.detail.event.type === 'closed'));
    assert.deepEqual(
      mine.map((l) => l.detail.event.type),
      ['accepted', 'rejected', 'closed'],
    );
    assert.deepEqual(mine[1]!.detail.event.detail, { path: '$', error: 'invalid x-svc-admin-secret/x-svc-access-key', code: 'access-denied' });
    assert.match(mine[1]!.detail.connection_info.msg, /^4403 Forbidden/);
  });
});
