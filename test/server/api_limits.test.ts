/**
 * Issue 36 item 3: API limits (set_api_limits / remove_api_limits / api_limits in the metadata) on
 * real servers over PostgreSQL, and rate limits shared through the real redis-server.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { postGraphql, postQuery, query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';
import { RateLimiter } from '../../src/server/rateLimit.js';
import { measureOperation } from '../../src/execute/apiLimits.js';
import { selectOperation } from '../../src/ir/document.js';
import { parse } from 'graphql';

const REDIS = process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const SETUP = {
  type: 'bulk',
  args: [
    {
      type: 'run_sql',
      args: {
        sql: `create table author (id serial primary key, name text);
              create table article (id serial primary key, title text, author_id int references author(id));
              insert into author (name) values ('a'), ('b');
              insert into article (title, author_id) values ('t1', 1), ('t2', 2);
              create view slow as select 1 as id, pg_sleep(2)::text as x;
              create table sink (id serial primary key, v text);
              create function sink_sleep() returns trigger language plpgsql as $$ begin perform pg_sleep(2); return new; end $$;
              create trigger sink_sleep before insert on sink for each row execute function sink_sleep();`,
      },
    },
    { type: 'track_table', args: { name: 'author' } },
    { type: 'track_table', args: { name: 'article' } },
    { type: 'track_table', args: { name: 'slow' } },
    { type: 'track_table', args: { name: 'sink' } },
    { type: 'create_object_relationship', args: { table: 'article', name: 'author', using: { foreign_key_constraint_on: 'author_id' } } },
    {
      type: 'create_array_relationship',
      args: { table: 'author', name: 'articles', using: { foreign_key_constraint_on: { table: 'article', column: 'author_id' } } },
    },
    ...['user', 'other'].flatMap((role) => [
      { type: 'create_select_permission', args: { table: 'author', role, permission: { columns: ['id', 'name'], filter: {} } } },
      { type: 'create_select_permission', args: { table: 'article', role, permission: { columns: ['id', 'title'], filter: {} } } },
      { type: 'create_select_permission', args: { table: 'slow', role, permission: { columns: ['id', 'x'], filter: {} } } },
      { type: 'create_insert_permission', args: { table: 'sink', role, permission: { columns: ['v'], check: {} } } },
      { type: 'create_select_permission', args: { table: 'sink', role, permission: { columns: ['id', 'v'], filter: {} } } },
    ]),
  ],
};

// depth 3, 3 nodes (v2: a node is a field with a selection set)
const DEEP = 'query { author { id articles { id author { id } } } }';
// depth 1, 1 node
const FLAT = 'query { author { id } }';
const asRole = (role: string, extra: Record<string, string> = {}) => ({ 'x-svc-role': role, ...extra });
const exportMd = async (url: string) => query(url, { type: 'export_metadata', args: {} });
const setLimits = (url: string, args: unknown) => query(url, { type: 'set_api_limits', args });
const errorOf = (r: { body: any }) => r.body.errors?.[0] as { message: string; extensions: { code: string; path: string } } | undefined;

/** Waits until at least 10 s remain in the current minute: a rate-limit test stays in one window. */
async function inOneMinute(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 10_000) await new Promise((r) => setTimeout(r, left + 100));
}

test('depth and node count as v2 defines them (introspection not counted for depth; fragments expanded)', () => {
  const m = (q: string) => measureOperation(selectOperation(parse(q), undefined));
  assert.deepEqual(m('{ viewer { name } }'), { depth: 1, nodes: 1 });
  assert.deepEqual(m('{ viewer { ... on User { name } } }'), { depth: 1, nodes: 1 });
  assert.deepEqual(m('{ viewer { albums { title } } }'), { depth: 2, nodes: 2 });
  assert.deepEqual(m('{ viewer { albums { ...F songs { ...F } } } } fragment F on Music { id title artists }'), { depth: 3, nodes: 3 });
  assert.deepEqual(m('{ author { name articles { id title } } homepage_entries { article_id } }'), { depth: 2, nodes: 3 });
  assert.deepEqual(m('{ __schema { types { fields { name } } } a { b } }'), { depth: 1, nodes: 4 });
  assert.deepEqual(m('{ x { ...A } } fragment A on X { y { ...B } z { ...B } } fragment B on Y { w { v } }'), { depth: 3, nodes: 5 });
});

describe('API limits (no Redis)', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    await query(s.url, SETUP);
  });
  after(() => s?.close());

  test('no limits: nothing is refused; export has no api_limits', async () => {
    const r = await postGraphql(s.url, { query: DEEP }, asRole('user'));
    assert.equal(r.body.errors, undefined);
    assert.equal((await exportMd(s.url)).api_limits, undefined);
  });

  test('depth limit: global, per-role override, admin exempt, hit and not hit', async () => {
    await setLimits(s.url, { depth_limit: { global: 2, per_role: { other: 3 } } });
    const hit = await postGraphql(s.url, { query: DEEP }, asRole('user'));
    assert.deepEqual(hit.body, {
      errors: [{ extensions: { path: '$', code: 'validation-failed' }, message: "depth limit exceeded: the operation's depth is 3, the limit is 2" }],
    });
    // repeated: answered from the cached plan entry's stored size, same error
    assert.deepEqual((await postGraphql(s.url, { query: DEEP }, asRole('user'))).body, hit.body);
    assert.equal((await postGraphql(s.url, { query: 'query { author { id articles { id } } }' }, asRole('user'))).body.errors, undefined);
    assert.equal((await postGraphql(s.url, { query: DEEP }, asRole('other'))).body.errors, undefined);
    assert.equal((await postGraphql(s.url, { query: DEEP })).body.errors, undefined, 'admin is exempt');
    // introspection is not subject to the depth limit
    assert.equal(
      (await postGraphql(s.url, { query: '{ __schema { types { fields { type { ofType { name } } } } } }' }, asRole('user'))).body.errors,
      undefined,
    );
  });

  test('node limit; a limit set for admin applies to admin', async () => {
    await setLimits(s.url, { node_limit: { global: 2, per_role: { admin: 1 } } });
    const hit = await postGraphql(s.url, { query: DEEP }, asRole('user'));
    assert.equal(errorOf(hit)?.message, 'node limit exceeded: the operation has 3 nodes, the limit is 2');
    assert.equal(errorOf(hit)?.extensions.code, 'validation-failed');
    assert.equal((await postGraphql(s.url, { query: 'query { author { id articles { id } } }' }, asRole('user'))).body.errors, undefined);
    assert.equal(
      errorOf(await postGraphql(s.url, { query: 'query { author { id articles { id } } }' }))?.message,
      'node limit exceeded: the operation has 2 nodes, the limit is 1',
    );
    assert.equal((await postGraphql(s.url, { query: FLAT })).body.errors, undefined);
  });

  test('disabled: true keeps the limits in the metadata and applies none', async () => {
    await setLimits(s.url, { disabled: true, depth_limit: { global: 1 } });
    assert.equal((await postGraphql(s.url, { query: DEEP }, asRole('user'))).body.errors, undefined);
    assert.deepEqual((await exportMd(s.url)).api_limits, { disabled: true, depth_limit: { global: 1, per_role: {} } });
  });

  test('batch limit: a batched request with more operations is refused whole', async () => {
    await setLimits(s.url, { batch_limit: { global: 2 } });
    const three = [{ query: FLAT }, { query: FLAT }, { query: FLAT }];
    const r = await postGraphql(s.url, three, asRole('user'));
    assert.equal(errorOf(r)?.message, 'batch limit exceeded: the request has 3 operations, the limit is 2');
    const two = await postGraphql(s.url, three.slice(1), asRole('user'));
    assert.ok(Array.isArray(two.body) && two.body.length === 2 && two.body.every((x: any) => x.data));
    assert.ok(Array.isArray((await postGraphql(s.url, three)).body), 'admin is exempt');
  });

  test('time limit: a query is answered with time-limit-exceeded at the deadline and its statement cancelled', async () => {
    await setLimits(s.url, { time_limit: { global: 0.3 } });
    const t0 = Date.now();
    const r = await postGraphql(s.url, { query: 'query { slow { id x } }' }, asRole('user'));
    const ms = Date.now() - t0;
    assert.deepEqual(r.body, {
      errors: [{ extensions: { path: '$', code: 'time-limit-exceeded' }, message: 'time limit exceeded: the operation took longer than 0.3 seconds' }],
    });
    assert.ok(ms < 1500, `answered after ${ms} ms`);
    // the statement was cancelled in PostgreSQL: no backend is still sleeping in it
    await waitFor(
      'the statement to be cancelled',
      async () => {
        const q = await query(s.url, {
          type: 'run_sql',
          args: { sql: "select count(*) from pg_stat_activity where query like '%pg_sleep%' and query not like '%pg_stat_activity%' and state = 'active'" },
        });
        return q.result[1][0] === '0';
      },
      1500,
    );
    // not hit: a quick query; admin is exempt (runs the full 2 s)
    assert.equal((await postGraphql(s.url, { query: FLAT }, asRole('user'))).body.errors, undefined);
    const a = await postGraphql(s.url, { query: 'query { slow { id } }' });
    assert.equal(a.body.errors, undefined);
  });

  test('time limit: a mutation runs with statement_timeout and is rolled back', async () => {
    await setLimits(s.url, { time_limit: { global: 0.3 } });
    const r = await postGraphql(s.url, { query: 'mutation { insert_sink(objects: [{v: "late"}]) { affected_rows } }' }, asRole('user'));
    assert.equal(errorOf(r)?.extensions.code, 'time-limit-exceeded', JSON.stringify(r.body));
    const rows = await query(s.url, { type: 'run_sql', args: { sql: "select count(*) from sink where v = 'late'" } });
    assert.equal(rows.result[1][0], '0');
  });

  test('rate limit without Redis: per role, per session variable, per IP; admin exempt; other roles unaffected', async () => {
    const role = 'user';
    await setLimits(s.url, {
      rate_limit: { global: { max_reqs_per_min: 3, unique_params: ['x-svc-user-id'] }, per_role: { other: { max_reqs_per_min: 2, unique_params: 'IP' } } },
    });
    await inOneMinute();
    const u1 = asRole(role, { 'x-svc-user-id': `u1-${randomUUID()}` });
    const codes: Array<string | undefined> = [];
    for (let i = 0; i < 4; i++) codes.push(errorOf(await postGraphql(s.url, { query: FLAT }, u1))?.extensions.code);
    assert.deepEqual(codes, [undefined, undefined, undefined, 'rate-limit-exceeded']);
    const e = errorOf(await postGraphql(s.url, { query: FLAT }, u1));
    assert.equal(e?.message, 'rate limit exceeded: at most 3 requests per minute');
    // another user id has its own count
    assert.equal((await postGraphql(s.url, { query: FLAT }, asRole(role, { 'x-svc-user-id': `u2-${randomUUID()}` }))).body.errors, undefined);
    // the admin role is exempt
    for (let i = 0; i < 5; i++) assert.equal((await postGraphql(s.url, { query: FLAT })).body.errors, undefined);
    // role "other" is keyed by IP (all of this test's requests come from 127.0.0.1)
    const other: Array<string | undefined> = [];
    for (let i = 0; i < 3; i++)
      other.push(errorOf(await postGraphql(s.url, { query: FLAT }, asRole('other', { 'x-svc-user-id': randomUUID() })))?.extensions.code);
    assert.deepEqual(other, [undefined, undefined, 'rate-limit-exceeded']);
  });

  test('rate limit over websockets: each start counts', async () => {
    const { default: WebSocket } = await import('ws');
    await setLimits(s.url, { rate_limit: { global: { max_reqs_per_min: 2, unique_params: ['x-svc-user-id'] } } });
    await inOneMinute();
    const ws = new WebSocket(s.url.replace('http', 'ws') + '/v1/graphql', 'graphql-ws');
    const got: any[] = [];
    const waiters: Array<() => void> = [];
    ws.on('message', (d) => {
      got.push(JSON.parse(d.toString()));
      waiters.splice(0).forEach((w) => w());
    });
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    const next = async (id: string) => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const m = got.find((x) => x.id === id && (x.type === 'data' || x.type === 'error'));
        if (m) return m;
        if (Date.now() > deadline) throw new Error(`no answer for ${id}: ${JSON.stringify(got)}`);
        await new Promise<void>((r) => waiters.push(r));
      }
    };
    ws.send(JSON.stringify({ type: 'connection_init', payload: { headers: { 'x-svc-role': 'user', 'x-svc-user-id': randomUUID() } } }));
    const out: string[] = [];
    for (const id of ['1', '2', '3']) {
      ws.send(JSON.stringify({ id, type: 'start', payload: { query: FLAT } }));
      const m = await next(id);
      out.push(m.type === 'data' ? 'data' : `${m.type}:${m.payload?.errors?.[0]?.extensions?.code ?? JSON.stringify(m.payload)}`);
    }
    ws.close();
    assert.deepEqual(out, ['data', 'data', 'error:rate-limit-exceeded']);
  });

  test('rate limit on REST endpoints (/api/rest): each call counts', async () => {
    await query(s.url, { type: 'create_query_collection', args: { name: 'rest', definition: { queries: [{ name: 'flat', query: FLAT }] } } });
    await query(s.url, {
      type: 'create_rest_endpoint',
      args: { name: 'flat', url: 'flat', methods: ['GET'], definition: { query: { collection_name: 'rest', query_name: 'flat' } } },
    });
    await setLimits(s.url, { rate_limit: { global: { max_reqs_per_min: 2, unique_params: ['x-svc-user-id'] } } });
    await inOneMinute();
    const h = asRole('user', { 'x-svc-user-id': randomUUID() });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await fetch(`${s.url}/api/rest/flat`, { headers: h, signal: AbortSignal.timeout(10_000) })).status);
    assert.deepEqual(statuses, [200, 200, 429]);
  });

  test('remove_api_limits: every limit goes', async () => {
    await setLimits(s.url, { depth_limit: { global: 1 } });
    await query(s.url, { type: 'remove_api_limits', args: {} });
    assert.equal((await exportMd(s.url)).api_limits, undefined);
    assert.equal((await postGraphql(s.url, { query: DEEP }, asRole('user'))).body.errors, undefined);
  });
});

describe('api_limits metadata', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    await query(s.url, SETUP);
  });
  after(() => s?.close());

  const FULL = {
    disabled: false,
    rate_limit: {
      global: { max_reqs_per_min: 100, unique_params: 'IP' },
      per_role: { user: { max_reqs_per_min: 10, unique_params: ['x-svc-user-id', 'x-svc-team-id'] } },
    },
    depth_limit: { global: 5, per_role: { user: 3 } },
    node_limit: { global: 5, per_role: { user: 3 } },
    time_limit: { global: 5, per_role: { user: 3 } },
    batch_limit: { global: 5, per_role: { user: 3 } },
  };

  test('set_api_limits → export_metadata → replace_metadata round trip (v2 shape)', async () => {
    await setLimits(s.url, FULL);
    const md = await exportMd(s.url);
    assert.deepEqual(md.api_limits, FULL);
    await query(s.url, { type: 'clear_metadata', args: {} });
    assert.equal((await exportMd(s.url)).api_limits, undefined);
    await query(s.url, { type: 'replace_metadata', args: md });
    assert.deepEqual(await exportMd(s.url), md);
    // unique_params absent → null, per_role absent → {}
    await setLimits(s.url, { rate_limit: { global: { max_reqs_per_min: 7 } } });
    assert.deepEqual((await exportMd(s.url)).api_limits, {
      disabled: false,
      rate_limit: { global: { max_reqs_per_min: 7, unique_params: null }, per_role: {} },
    });
  });

  test('bad input: a clear error, the metadata unchanged', async () => {
    await setLimits(s.url, FULL);
    const before = await exportMd(s.url);
    const cases: Array<[unknown, string, string]> = [
      [{ depth_limit: { per_role: { user: 1 } } }, '$.depth_limit', 'key "global" not found'],
      [{ depth_limit: { global: 'deep' } }, '$.depth_limit.global', 'parsing Int failed, expected Number, but encountered String'],
      [{ node_limit: { global: -1 } }, '$.node_limit.global', 'expected a non-negative integer, encountered -1'],
      [{ node_limit: { global: 1, per_role: { user: 1.5 } } }, '$.node_limit.per_role.user', 'parsing Int failed, expected Number, but encountered Number'],
      [{ time_limit: { global: 0 } }, '$.time_limit.global', 'expected a positive number of seconds, encountered 0'],
      [
        { rate_limit: { global: { max_reqs_per_min: 5, unique_params: 'MAC' } } },
        '$.rate_limit.global.unique_params',
        "Not a valid value. Should be either: 'IP' or a list of Svc session variables",
      ],
      [
        { rate_limit: { global: { max_reqs_per_min: 5, unique_params: ['x-svc-role'] } } },
        '$.rate_limit.global.unique_params',
        "Not a valid value. Should be either: 'IP' or a list of Svc session variables",
      ],
      [
        { rate_limit: { global: { max_reqs_per_min: 5, unique_params: ['user-id'] } } },
        '$.rate_limit.global.unique_params',
        "Not a valid value. Should be either: 'IP' or a list of Svc session variables",
      ],
      [{ rate_limit: { global: { unique_params: 'IP' } } }, '$.rate_limit.global', 'key "max_reqs_per_min" not found'],
      [{ depth_limt: { global: 1 } }, '$', 'unexpected key "depth_limt"'],
      [{ disabled: 'no' }, '$.disabled', 'parsing Bool failed, expected Boolean, but encountered String'],
      [[], '$', 'parsing ApiLimit failed, expected Object, but encountered Array'],
    ];
    for (const [args, path, error] of cases) {
      const r = await postQuery(s.url, { type: 'set_api_limits', args });
      assert.equal(r.status, 400, JSON.stringify(args));
      assert.deepEqual(r.body, { path, error, code: 'parse-failed' }, JSON.stringify(args));
    }
    const rm = await postQuery(s.url, { type: 'remove_api_limits', args: { all: true } });
    assert.deepEqual(rm.body, { path: '$', error: 'remove_api_limits takes no arguments', code: 'parse-failed' });
    // replace_metadata with bad api_limits changes nothing either
    const bad = await postQuery(s.url, { type: 'replace_metadata', args: { ...before, api_limits: { depth_limit: { global: 'x' } } } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'parse-failed');
    assert.deepEqual(await exportMd(s.url), before);
    // a non-admin cannot set them
    const user = await postQuery(s.url, { type: 'set_api_limits', args: { depth_limit: { global: 1 } } }, asRole('user'));
    assert.equal(user.status, 400);
    assert.deepEqual(await exportMd(s.url), before);
  });
});

describe('rate limits shared through Redis', () => {
  let a: TestServer;
  let b: TestServer;
  before(async () => {
    a = await startTestServer({ redisUrl: REDIS });
    await query(a.url, SETUP);
    b = await startTestServer({ databaseUrl: a.databaseUrl, redisUrl: REDIS });
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  test('two Svc servers sharing Redis admit the limit once for the deployment', async () => {
    const role = `r${randomUUID().slice(0, 8)}`;
    await query(a.url, { type: 'create_select_permission', args: { table: 'author', role, permission: { columns: ['id'], filter: {} } } });
    await setLimits(a.url, { rate_limit: { global: { max_reqs_per_min: 6 } } });
    // b learns of the change through the database (NOTIFY)
    await waitFor(
      'b to see the limit',
      async () => errorOf(await postGraphql(b.url, { query: DEEP }, asRole('user'))) === undefined && b.engine.cache.metadata.api_limits !== undefined,
    );
    await inOneMinute();
    let admitted = 0;
    for (let i = 0; i < 12; i++) {
      const r = await postGraphql(i % 2 ? b.url : a.url, { query: FLAT }, asRole(role));
      if (r.body.errors === undefined) admitted++;
      else assert.equal(errorOf(r)?.extensions.code, 'rate-limit-exceeded');
    }
    assert.equal(admitted, 6);
  });
});

describe('rate limits without Redis: per-process counters (measured error)', () => {
  let a: TestServer;
  let b: TestServer;
  before(async () => {
    a = await startTestServer();
    await query(a.url, SETUP);
    b = await startTestServer({ databaseUrl: a.databaseUrl });
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  test('two instances without Redis each admit the whole limit: the deployment admits twice it', async () => {
    const role = `r${randomUUID().slice(0, 8)}`;
    await query(a.url, { type: 'create_select_permission', args: { table: 'author', role, permission: { columns: ['id'], filter: {} } } });
    await setLimits(a.url, { rate_limit: { global: { max_reqs_per_min: 6 } } });
    await waitFor(
      'b to see the limit',
      async () =>
        b.engine.cache.metadata.api_limits !== undefined && b.engine.cache.metadata.tables.some((t) => t.select_permissions.some((p) => p.role === role)),
    );
    await inOneMinute();
    let admitted = 0;
    for (let i = 0; i < 24; i++) if ((await postGraphql(i % 2 ? b.url : a.url, { query: FLAT }, asRole(role))).body.errors === undefined) admitted++;
    // measured error without a shared store: +100 % with two instances (N instances: ×N)
    console.log(`# without Redis, 2 instances, limit 6/min: admitted ${admitted} (error ${Math.round(((admitted - 6) / 6) * 100)} %)`);
    assert.equal(admitted, 12);
  });

  test('--workers N: each process admits limit / N', () => {
    const quiet = { debug() {}, info() {}, warn() {}, error() {} };
    const l = new RateLimiter(undefined, 4, quiet);
    assert.equal(l.localShare(60), 15);
    assert.equal(l.localShare(3), 1); // at least one per process: up to N admitted for a limit below N
    assert.equal(l.localShare(0), 0);
    let n = 0;
    for (let i = 0; i < 40; i++) if (l.take('k', 60) === true) n++;
    assert.equal(n, 15);
  });
});

describe('rate limits when Redis goes away: per-process counting (degraded, not open, not closed)', () => {
  let s: TestServer;
  let proxy: net.Server;
  const sockets = new Set<net.Socket>();
  let up = true;
  before(async () => {
    // a TCP proxy to the real redis-server that the test can cut
    const target = new URL(REDIS);
    proxy = net.createServer((c) => {
      if (!up) return c.destroy();
      const r = net.connect(Number(target.port || 6379), target.hostname);
      sockets.add(c).add(r);
      c.pipe(r).pipe(c);
      const drop = () => {
        c.destroy();
        r.destroy();
        sockets.delete(c);
        sockets.delete(r);
      };
      c.on('error', drop).on('close', drop);
      r.on('error', drop).on('close', drop);
    });
    await new Promise<void>((res) => proxy.listen(0, '127.0.0.1', res));
    const port = (proxy.address() as net.AddressInfo).port;
    s = await startTestServer({ redisUrl: `redis://127.0.0.1:${port}` });
    await query(s.url, SETUP);
  });
  after(async () => {
    await s?.close();
    for (const x of sockets) x.destroy();
    await new Promise((r) => proxy.close(r));
  });

  test('counts in Redis while it is up; on failure, per process; a request is never left hanging', async () => {
    const role = `r${randomUUID().slice(0, 8)}`;
    await query(s.url, { type: 'create_select_permission', args: { table: 'author', role, permission: { columns: ['id'], filter: {} } } });
    await setLimits(s.url, { rate_limit: { global: { max_reqs_per_min: 3 } } });
    await inOneMinute();
    const run = async (n: number) => {
      let ok = 0;
      for (let i = 0; i < n; i++) if ((await postGraphql(s.url, { query: FLAT }, asRole(role))).body.errors === undefined) ok++;
      return ok;
    };
    assert.equal(await run(5), 3);
    // the count is in Redis
    assert.equal(s.engine.redis?.ready(), true);
    // Redis goes away
    up = false;
    for (const x of sockets) x.destroy();
    await waitFor('the store to notice', async () => s.engine.redis?.ready() === false);
    const t0 = Date.now();
    // the per-process counters start afresh: the limit again, then refused
    assert.equal(await run(5), 3);
    assert.ok(Date.now() - t0 < 5_000, 'bounded');
    up = true;
  });
});

test('the CLI metadata directory carries api_limits in api_limits.yaml (written only when set)', async () => {
  const { parseMetadataFiles, renderMetadata, roundTripLoss } = await import('../../src/cli/metadataFiles.js');
  const md = {
    version: 2,
    tables: [],
    api_limits: {
      disabled: false,
      depth_limit: { global: 3, per_role: { user: 2 } },
      rate_limit: { global: { max_reqs_per_min: 5, unique_params: 'IP' }, per_role: {} },
    },
  };
  const files = renderMetadata(md);
  assert.match(files.get('api_limits.yaml')!, /depth_limit:/);
  assert.equal(roundTripLoss(md), undefined);
  assert.deepEqual(parseMetadataFiles(files).api_limits, md.api_limits);
  assert.equal(renderMetadata({ version: 2, tables: [] }).has('api_limits.yaml'), false);
});
