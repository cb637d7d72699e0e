/**
 * Issue 37 item 3 with `--redis-url`: one response cache shared by two Svc processes (child
 * processes, same PostgreSQL database, redis-server on 127.0.0.1:6379); writes through a mutation
 * of either, run_sql and a plain pg client invalidate for both; Redis unreachable = misses, never
 * errors, and writes announced meanwhile are not lost when it comes back.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { cleanEnv, startSvcProcess, type SvcProcess } from '../helpers/process.js';
import { post, query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';

const REDIS = process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const SETUP = {
  type: 'bulk',
  args: [
    { type: 'run_sql', args: { sql: "create table item (id int primary key, name text not null); insert into item values (1, 'a'), (2, 'b');" } },
    { type: 'track_table', args: { name: 'item' } },
  ],
};
const ITEMS = 'query Items @cached(ttl: 300) { item(order_by: {id: asc}) { id name } }';

async function gql(url: string, body: unknown) {
  const r = await post(url, '/v1/graphql', body);
  assert.equal(r.status, 200, r.text);
  return { body: r.body, cache: r.headers.get('x-svc-query-cache'), key: r.headers.get('x-svc-query-cache-key') };
}

async function names(client: pg.Client) {
  return (await client.query('select id, name from item order by id')).rows;
}

describe('@cached with Redis: two Svc processes share one cache', () => {
  let db: TestDatabase;
  let a: { proc: SvcProcess; url: string };
  let b: { proc: SvcProcess; url: string };
  let client: pg.Client;
  before(async () => {
    db = await createTestDatabase();
    const env = cleanEnv({ SVC_GRAPHQL_DATABASE_URL: db.url, SVC_GRAPHQL_REDIS_URL: REDIS, SVC_GRAPHQL_ENABLED_LOG_TYPES: 'startup' });
    a = await startSvcProcess([], env);
    await query(a.url, SETUP);
    b = await startSvcProcess([], env);
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    // B has the metadata and the trigger is installed (A's metadata change)
    await waitFor('B serves item', async () => (await gql(b.url, { query: '{ item { id } }' })).body.data?.item?.length === 2, 20_000);
  });
  after(async () => {
    await client?.end();
    await a?.proc.stop(5_000);
    await b?.proc.stop(5_000);
    await db?.drop();
  });

  test('an entry stored by A is a hit on B, under the same key', async () => {
    const first = await gql(a.url, { query: ITEMS });
    assert.equal(first.cache, 'miss');
    // (B's start-up counts every table as changed once when its catalog read ends: until then it may miss)
    const onB = await waitFor<{ body: any; cache: string | null; key: string | null } | undefined>('a hit on B', async () => {
      const x = await gql(b.url, { query: ITEMS });
      if (x.cache !== 'hit') await gql(a.url, { query: ITEMS });
      return x.cache === 'hit' ? x : undefined;
    });
    assert.equal(onB!.key, first.key);
    assert.deepEqual(onB!.body, first.body);
  });

  test('a mutation through either process invalidates for the other before its response', async () => {
    for (const [writer, reader, name] of [
      [a, b, 'm1'],
      [b, a, 'm2'],
    ] as const) {
      // (the NOTIFY of the previous write may still be arriving: read until a hit)
      await waitFor('a hit', async () => (await gql(reader.url, { query: ITEMS })).cache === 'hit');
      await gql(writer.url, { query: `mutation { update_item_by_pk(pk_columns: {id: 1}, _set: {name: "${name}"}) { id } }` });
      const r = await gql(reader.url, { query: ITEMS });
      assert.equal(r.cache, 'miss');
      assert.equal(r.body.data.item[0].name, name);
    }
  });

  test('a write through run_sql and through a plain pg client invalidates for both processes', async () => {
    let n = 0;
    for (const write of [
      (name: string) => query(a.url, { type: 'run_sql', args: { sql: `update item set name = '${name}' where id = 2` } }),
      (name: string) => client.query(`update item set name = '${name}' where id = 2`),
    ]) {
      const name = `w${++n}`;
      // (the NOTIFY of the previous test's writes may still be arriving: read until B hits)
      await waitFor('a hit on B', async () => {
        await gql(a.url, { query: ITEMS });
        return (await gql(b.url, { query: ITEMS })).cache === 'hit';
      });
      await write(name);
      const want = await names(client);
      // bounded by the NOTIFY's arrival at some process: then both miss and see the write
      for (const p of [a, b]) {
        const r = await waitFor(`the write on ${p.url}`, async () => {
          const x = await gql(p.url, { query: ITEMS });
          return x.body.data.item[1].name === name ? x : undefined;
        });
        assert.deepEqual(r!.body.data.item, want);
      }
    }
  });

  test('automatic persisted queries are shared: a text registered through A runs by its hash on B', async () => {
    const text = `query Apq${Date.now()} { item(order_by: {id: asc}) { id } }`;
    const hash = createHash('sha256').update(text).digest('hex');
    const ext = { persistedQuery: { version: 1, sha256Hash: hash } };
    const unknown = await gql(b.url, { extensions: ext });
    assert.equal(unknown.body.errors[0].extensions.code, 'PERSISTED_QUERY_NOT_FOUND');
    assert.deepEqual((await gql(a.url, { query: text, extensions: ext })).body, { data: { item: [{ id: 1 }, { id: 2 }] } });
    await waitFor('the text in Redis', async () => (await gql(b.url, { extensions: ext })).body.data !== undefined);
    const r = await fetch(`${b.url}/v1/graphql?extensions=${encodeURIComponent(JSON.stringify(ext))}`);
    assert.deepEqual(await r.json(), { data: { item: [{ id: 1 }, { id: 2 }] } });
  });

  test('property: mutations through either process, reads through both, never a stale hit', async () => {
    let x = 7;
    const rnd = (k: number) => {
      x = (x * 1103515245 + 12345) % 2147483648;
      return x % k;
    };
    let hits = 0;
    for (let step = 0; step < 80; step++) {
      const p = rnd(2) === 0 ? a : b;
      if (rnd(3) === 0) {
        await gql(p.url, { query: `mutation { update_item_by_pk(pk_columns: {id: ${1 + rnd(2)}}, _set: {name: "p${step}"}) { id } }` });
        continue;
      }
      const cached = await gql(p.url, { query: ITEMS });
      if (cached.cache === 'hit') hits++;
      assert.deepEqual(cached.body.data.item, await names(client), `step ${step} (${cached.cache})`);
    }
    assert.ok(hits > 10, `only ${hits} hits`);
  });
});

/** A TCP proxy to Redis that can be cut and restored (Redis itself is never stopped). */
function redisProxy(target: URL) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const open = () =>
    new Promise<void>((res, rej) => {
      server = createServer((s) => {
        const up = connect(Number(target.port || 6379), target.hostname);
        sockets.add(s).add(up);
        s.pipe(up).pipe(s);
        const end = () => {
          s.destroy();
          up.destroy();
        };
        s.on('error', end).on('close', end);
        up.on('error', end).on('close', end);
      });
      server.once('error', rej);
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as { port: number }).port;
        res();
      });
    });
  return {
    open,
    get url() {
      return `redis://127.0.0.1:${port}`;
    },
    cut: () =>
      new Promise<void>((res) => {
        for (const s of sockets) s.destroy();
        sockets.clear();
        server!.close(() => res());
      }),
  };
}

describe('@cached with Redis unreachable', () => {
  let s: TestServer;
  let client: pg.Client;
  const proxy = redisProxy(new URL(REDIS));
  before(async () => {
    await proxy.open();
    s = await startTestServer({ redisUrl: proxy.url });
    await query(s.url, SETUP);
    await waitFor('the change trigger is watched', async () => s.engine.changes.watched('public.item'));
    client = new pg.Client({ connectionString: s.databaseUrl });
    await client.connect();
  });
  after(async () => {
    await client?.end();
    await s?.close();
    await proxy.cut().catch(() => undefined);
  });

  test('Redis down = misses with the right data, no errors; a write meanwhile is not lost when it comes back', async () => {
    await gql(s.url, { query: ITEMS });
    assert.equal((await gql(s.url, { query: ITEMS })).cache, 'hit');
    await proxy.cut();
    await waitFor('the Redis connection is down', async () => !s.engine.redis!.ready());
    const errorsBefore = s.engine.responseCache.stats.redisErrors;
    const down = await gql(s.url, { query: ITEMS });
    assert.equal(down.cache, 'miss');
    assert.deepEqual(down.body.data.item, await names(client));
    assert.ok(s.engine.responseCache.stats.redisErrors > errorsBefore);
    // a write while Redis is unreachable: its announcement cannot reach Redis
    const v = s.engine.changes.version('public.item');
    await client.query("update item set name = 'while-down' where id = 1");
    await waitFor('the NOTIFY', async () => s.engine.changes.version('public.item') > v);
    await proxy.open();
    await waitFor('the Redis connection is back', async () => s.engine.redis!.ready(), 15_000);
    // the entry stored before the outage is not served: the process owed an announcement
    const back = await gql(s.url, { query: ITEMS });
    assert.equal(back.cache, 'miss');
    assert.equal(back.body.data.item[0].name, 'while-down');
    assert.equal((await gql(s.url, { query: ITEMS })).cache, 'hit');
  });
});

describe('@cached with Redis, strict mode', () => {
  let s: TestServer;
  let client: pg.Client;
  before(async () => {
    s = await startTestServer({ redisUrl: REDIS, queryCacheStrict: true });
    await query(s.url, SETUP);
    await waitFor('the change trigger is watched', async () => s.engine.changes.watched('public.item'));
    client = new pg.Client({ connectionString: s.databaseUrl });
    await client.connect();
  });
  after(async () => {
    await client?.end();
    await s?.close();
  });

  test('a write by another client committed before the request is never missed', async () => {
    let hits = 0;
    for (let i = 0; i < 40; i++) {
      const cached = await gql(s.url, { query: ITEMS });
      if (cached.cache === 'hit') hits++;
      assert.deepEqual(cached.body.data.item, await names(client), `step ${i} (${cached.cache})`);
      if (i % 2 === 1) await client.query(`update item set name = 's${i}' where id = ${1 + (i % 2)}`);
    }
    assert.ok(hits >= 10, `only ${hits} hits`);
  });
});

describe('@cached with Redis, strict mode, two Svc processes', () => {
  let db: TestDatabase;
  let a: { proc: SvcProcess; url: string };
  let b: { proc: SvcProcess; url: string };
  let client: pg.Client;
  before(async () => {
    db = await createTestDatabase();
    const env = cleanEnv({
      SVC_GRAPHQL_DATABASE_URL: db.url,
      SVC_GRAPHQL_REDIS_URL: REDIS,
      SVC_GRAPHQL_QUERY_CACHE_STRICT: 'true',
      SVC_GRAPHQL_ENABLED_LOG_TYPES: 'startup',
    });
    a = await startSvcProcess([], env);
    await query(a.url, SETUP);
    b = await startSvcProcess([], env);
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await waitFor('B serves item', async () => (await gql(b.url, { query: '{ item { id } }' })).body.data?.item?.length === 2, 20_000);
  });
  after(async () => {
    await client?.end();
    await a?.proc.stop(5_000);
    await b?.proc.stop(5_000);
    await db?.drop();
  });

  test('property: random writes (mutation on A or B, run_sql on A or B, pg) and reads on A and B, no waiting: never a stale hit', async () => {
    let x = 11;
    const rnd = (k: number) => {
      x = (x * 1103515245 + 12345) % 2147483648;
      return x % k;
    };
    let hits = 0;
    for (let step = 0; step < 120; step++) {
      const p = rnd(2) === 0 ? a : b;
      if (rnd(3) === 0) {
        const id = 1 + rnd(2);
        const name = `p${step}`;
        const how = rnd(3);
        if (how === 0) await gql(p.url, { query: `mutation { update_item_by_pk(pk_columns: {id: ${id}}, _set: {name: "${name}"}) { id } }` });
        else if (how === 1) await query(p.url, { type: 'run_sql', args: { sql: `update item set name = '${name}' where id = ${id}` } });
        else await client.query(`update item set name = '${name}' where id = ${id}`);
        continue;
      }
      const cached = await gql(p.url, { query: ITEMS });
      if (cached.cache === 'hit') hits++;
      assert.deepEqual(cached.body.data.item, await names(client), `step ${step} (${cached.cache} on ${p === a ? 'A' : 'B'})`);
    }
    assert.ok(hits > 10, `only ${hits} hits`);
  });
});
