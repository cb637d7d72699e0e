/**
 * Issue 37 item 3: `@cached` queries on a real server and PostgreSQL — headers, refresh, keys per
 * session variable, invalidation by writes through a mutation, run_sql and a plain pg client, a
 * random interleaving of reads and writes that never observes a stale hit, metrics, what is not
 * cached.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { postGraphql, query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';

const SETUP = {
  type: 'bulk',
  args: [
    {
      type: 'run_sql',
      args: {
        sql: `create table item (id int primary key, name text not null, owner text not null);
              insert into item values (1, 'a', 'u1'), (2, 'b', 'u2'), (3, 'c', 'u1');
              create table tag (id int primary key, item_id int not null references item (id), label text not null);
              insert into tag values (1, 1, 'red'), (2, 3, 'blue');
              create view item_view as select * from item;
              create function item_upper(i item) returns text language sql stable as $$ select upper(i.name) $$;
              create function item_dyn(i item) returns text language plpgsql stable as $$
                declare r text; begin execute 'select upper($1)' into r using i.name; return r; end $$;`,
      },
    },
    { type: 'track_table', args: { name: 'item' } },
    { type: 'track_table', args: { name: 'tag' } },
    { type: 'track_table', args: { name: 'item_view' } },
    { type: 'create_array_relationship', args: { table: 'item', name: 'tags', using: { foreign_key_constraint_on: { table: 'tag', column: 'item_id' } } } },
    { type: 'create_object_relationship', args: { table: 'tag', name: 'item', using: { foreign_key_constraint_on: 'item_id' } } },
    { type: 'add_computed_field', args: { table: 'item', name: 'upper', definition: { function: 'item_upper' } } },
    { type: 'add_computed_field', args: { table: 'item', name: 'dyn', definition: { function: 'item_dyn' } } },
    // role user: its own items (reads x-svc-user-id); role guest: every item (reads no session variable)
    {
      type: 'create_select_permission',
      args: { table: 'item', role: 'user', permission: { columns: ['id', 'name', 'owner'], filter: { owner: { _eq: 'X-Svc-User-Id' } } } },
    },
    {
      type: 'create_select_permission',
      args: { table: 'tag', role: 'user', permission: { columns: ['id', 'label'], filter: { item: { owner: { _eq: 'X-Svc-User-Id' } } } } },
    },
    { type: 'create_select_permission', args: { table: 'item', role: 'guest', permission: { columns: ['id', 'name'], filter: {} } } },
  ],
};

const ITEMS = 'query Items @cached(ttl: 120) { item(order_by: {id: asc}) { id name tags(order_by: {id: asc}) { label } } }';

async function gql(s: TestServer, body: unknown, headers: Record<string, string> = {}) {
  const r = await postGraphql(s.url, body, headers);
  assert.equal(r.status, 200, r.text);
  return { body: r.body, cache: r.headers.get('x-svc-query-cache'), key: r.headers.get('x-svc-query-cache-key'), cacheControl: r.headers.get('cache-control') };
}

/** waits until this server's change tracker has heard of a write to `table` after `before` */
async function heard(s: TestServer, table: string, before: number) {
  await waitFor(`the change NOTIFY of ${table}`, async () => s.engine.changes.version(table) > before, 5_000, 5);
}

describe('@cached: in-process cache', () => {
  let s: TestServer;
  let client: pg.Client;
  before(async () => {
    s = await startTestServer();
    await query(s.url, SETUP);
    await waitFor('the change triggers are watched', async () => s.engine.changes.watched('public.item') && s.engine.changes.watched('public.tag'));
    client = new pg.Client({ connectionString: s.databaseUrl });
    await client.connect();
  });
  after(async () => {
    await client?.end();
    await s?.close();
  });

  test('miss, then hit: same key, Cache-Control max-age counts down from ttl; refresh recomputes', async () => {
    const first = await gql(s, { query: ITEMS });
    assert.equal(first.cache, 'miss');
    assert.equal(first.cacheControl, 'max-age=120');
    assert.match(first.key ?? '', /^[0-9a-f]{64}$/);
    const second = await gql(s, { query: ITEMS });
    assert.equal(second.cache, 'hit');
    assert.equal(second.key, first.key);
    assert.deepEqual(second.body, first.body);
    const age = Number(/^max-age=(\d+)$/.exec(second.cacheControl ?? '')?.[1]);
    assert.ok(age > 0 && age <= 120, second.cacheControl ?? '');
    const refreshed = await gql(s, { query: ITEMS.replace('ttl: 120', 'ttl: 120, refresh: true') });
    assert.equal(refreshed.cache, 'miss');
    // the normalised query is the key: spacing and comments do not matter
    const spaced = await gql(s, { query: `# a comment\n${ITEMS.replace(/ /g, '  ')}` });
    assert.equal(spaced.key, first.key);
    assert.equal(spaced.cache, 'hit');
  });

  test('variables and operation name are part of the key; ttl from a variable', async () => {
    const q = 'query One($id: Int!, $ttl: Int) @cached(ttl: $ttl) { item_by_pk(id: $id) { name } }';
    const a = await gql(s, { query: q, variables: { id: 1, ttl: 30 } });
    const b = await gql(s, { query: q, variables: { id: 2, ttl: 30 } });
    assert.notEqual(a.key, b.key);
    assert.deepEqual(a.body, { data: { item_by_pk: { name: 'a' } } });
    assert.deepEqual(b.body, { data: { item_by_pk: { name: 'b' } } });
    assert.equal(a.cacheControl, 'max-age=30');
    assert.equal((await gql(s, { query: q, variables: { id: 1, ttl: 30 } })).cache, 'hit');
  });

  test('two users whose permissions read x-svc-user-id never share an entry; a role reading none shares one', async () => {
    const q = 'query Mine @cached { item(order_by: {id: asc}) { id } }';
    const u1 = await gql(s, { query: q }, { 'x-svc-role': 'user', 'x-svc-user-id': 'u1' });
    const u2 = await gql(s, { query: q }, { 'x-svc-role': 'user', 'x-svc-user-id': 'u2' });
    assert.notEqual(u1.key, u2.key);
    assert.deepEqual(u1.body, { data: { item: [{ id: 1 }, { id: 3 }] } });
    assert.deepEqual(u2.body, { data: { item: [{ id: 2 }] } });
    const u2again = await gql(s, { query: q }, { 'x-svc-role': 'user', 'x-svc-user-id': 'u2' });
    assert.equal(u2again.cache, 'hit');
    assert.deepEqual(u2again.body, u2.body);
    // a session variable the permissions do not read does not split the key
    const other = await gql(s, { query: q }, { 'x-svc-role': 'user', 'x-svc-user-id': 'u2', 'x-svc-other': 'x' });
    assert.equal(other.key, u2.key);
    const g1 = await gql(s, { query: q }, { 'x-svc-role': 'guest', 'x-svc-user-id': 'u1' });
    const g2 = await gql(s, { query: q }, { 'x-svc-role': 'guest', 'x-svc-user-id': 'u2' });
    assert.equal(g1.key, g2.key);
    assert.equal(g2.cache, 'hit');
    assert.notEqual(g1.key, u1.key);
  });

  test("a mutation through Svc invalidates before its response; the entry's other tables too", async () => {
    await waitFor('a hit', async () => (await gql(s, { query: ITEMS })).cache === 'hit');
    const first = await gql(s, { query: ITEMS });
    await gql(s, { query: 'mutation { insert_tag_one(object: {id: 10, item_id: 2, label: "green"}) { id } }' });
    // no wait: the mutation's own writes count before its response
    const after = await gql(s, { query: ITEMS });
    assert.equal(after.cache, 'miss');
    assert.notDeepEqual(after.body, first.body);
    assert.deepEqual(after.body.data.item[1].tags, [{ label: 'green' }]);
  });

  test('a write through run_sql and through a plain pg client invalidates once its NOTIFY is heard', async () => {
    for (const write of [
      () => query(s.url, { type: 'run_sql', args: { sql: "update item set name = 'a2' where id = 1" } }),
      () => client.query("update item set name = 'a3' where id = 1"),
    ]) {
      // (the NOTIFY of an earlier write may still be arriving: read until a hit)
      await waitFor('a hit', async () => (await gql(s, { query: ITEMS })).cache === 'hit');
      const v = s.engine.changes.version('public.item');
      await write();
      await heard(s, 'public.item', v);
      const r = await gql(s, { query: ITEMS });
      assert.equal(r.cache, 'miss');
      const fresh = await client.query('select name from item where id = 1');
      assert.equal(r.body.data.item[0].name, fresh.rows[0].name);
    }
  });

  test('property: random reads and writes never observe a stale hit', async () => {
    const seed = Number(process.env.SVC_PROP_SEED ?? 37);
    let x = seed;
    const rnd = (n: number) => {
      x = (x * 1103515245 + 12345) % 2147483648;
      return x % n;
    };
    const reads: Array<{ q: string; vars: () => Record<string, unknown>; headers: Record<string, string> }> = [
      { q: ITEMS, vars: () => ({}), headers: {} },
      { q: 'query P($id: Int!) @cached { item_by_pk(id: $id) { id name tags { label } } }', vars: () => ({ id: 1 + rnd(4) }), headers: {} },
      {
        q: 'query U @cached { item(order_by: {id: asc}) { id name tags(order_by: {id: asc}) { label } } }',
        vars: () => ({}),
        headers: { 'x-svc-role': 'user', 'x-svc-user-id': 'u1' },
      },
      { q: 'query T @cached { tag_aggregate { aggregate { count } } }', vars: () => ({}), headers: {} },
    ];
    let hits = 0;
    let nextTag = 100;
    for (let step = 0; step < 150; step++) {
      if (rnd(3) === 0) {
        const how = rnd(3);
        const table = rnd(2) === 0 ? 'item' : 'tag';
        const id = table === 'item' ? 1 + rnd(3) : nextTag++;
        const name = `n${step}`;
        const item = 1 + rnd(3);
        if (how === 0) {
          const m =
            table === 'item'
              ? `mutation { update_item_by_pk(pk_columns: {id: ${id}}, _set: {name: "${name}"}) { id } }`
              : `mutation { insert_tag_one(object: {id: ${id}, item_id: ${item}, label: "${name}"}) { id } }`;
          await gql(s, { query: m });
        } else {
          const sql = table === 'item' ? `update item set name = '${name}' where id = ${id}` : `insert into tag values (${id}, ${item}, '${name}')`;
          const v = s.engine.changes.version(`public.${table}`);
          if (how === 1) await query(s.url, { type: 'run_sql', args: { sql } });
          else await client.query(sql);
          // the guarantee covers writes whose NOTIFY was heard before the lookup
          await heard(s, `public.${table}`, v);
        }
        continue;
      }
      const r = reads[rnd(reads.length)]!;
      const variables = r.vars();
      const cached = await gql(s, { query: r.q, variables }, r.headers);
      const fresh = await gql(s, { query: r.q.replace(/@cached(\([^)]*\))?/, ''), variables }, r.headers);
      assert.equal(fresh.cache, null);
      if (cached.cache === 'hit') hits++;
      assert.deepEqual(cached.body, fresh.body, `step ${step} (${cached.cache}): ${r.q}`);
    }
    assert.ok(hits > 10, `only ${hits} hits`);
  });

  test('views and SQL functions are cached on the tables they read; dynamic SQL is not (bypass); @cached on a mutation is refused', async () => {
    for (const q of ['query V @cached { item_view(order_by: {id: asc}) { id name } }', 'query F @cached { item(order_by: {id: asc}) { id upper } }']) {
      await waitFor('a hit', async () => (await gql(s, { query: q })).cache === 'hit');
      const v = s.engine.changes.version('public.item');
      await client.query("update item set name = name || 'v' where id = 2");
      await heard(s, 'public.item', v);
      const r = await gql(s, { query: q });
      assert.equal(r.cache, 'miss', q);
      const name = (await client.query('select name from item where id = 2')).rows[0].name;
      assert.equal(
        r.body.data[q.includes('item_view') ? 'item_view' : 'item'][1][q.includes('upper') ? 'upper' : 'name'],
        q.includes('upper') ? name.toUpperCase() : name,
      );
    }
    const dyn = await gql(s, { query: 'query @cached { item { dyn } }' });
    assert.equal(dyn.cache, 'bypass');
    assert.equal(dyn.key, null);
    assert.ok(dyn.body.data.item.length > 0);
    const m = await gql(s, { query: 'mutation @cached { delete_tag(where: {id: {_eq: -1}}) { affected_rows } }' });
    assert.equal(m.body.errors[0].extensions.code, 'validation-failed');
    const bad = await gql(s, { query: 'query @cached(ttl: "x") { item { id } }' });
    assert.equal(bad.body.errors[0].extensions.code, 'validation-failed');
    const unknown = await gql(s, { query: 'query @cached(tll: 3) { item { id } }' });
    assert.equal(unknown.body.errors[0].extensions.code, 'validation-failed');
  });

  test('introspection lists @cached; a query without it gets no cache headers', async () => {
    const r = await gql(s, { query: '{ __schema { directives { name locations args { name defaultValue type { name } } } } }' });
    const cached = r.body.data.__schema.directives.find((d: { name: string }) => d.name === 'cached');
    assert.deepEqual(cached, {
      name: 'cached',
      locations: ['QUERY'],
      args: [
        { name: 'ttl', defaultValue: '60', type: { name: 'Int' } },
        { name: 'refresh', defaultValue: 'false', type: { name: 'Boolean' } },
      ],
    });
    const plain = await gql(s, { query: '{ item { id } }' });
    assert.equal(plain.cache, null);
    assert.equal(plain.cacheControl, null);
  });

  test('metrics: hits, misses, evictions, invalidations', async () => {
    const r = await fetch(`${s.url}/v1/metrics`);
    const text = await r.text();
    for (const m of ['hits', 'misses', 'evictions', 'invalidations']) {
      const line = new RegExp(`^svc_query_cache_${m}_total (\\d+)`, 'm').exec(text);
      assert.ok(line, `svc_query_cache_${m}_total missing`);
      if (m !== 'evictions') assert.ok(Number(line[1]) > 0, `${m} is 0`);
    }
  });
});

describe('@cached: the in-process cache is bounded by bytes', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ queryCacheMaxBytes: 4096 });
    await query(s.url, SETUP);
    await waitFor('the change triggers are watched', async () => s.engine.changes.watched('public.item'));
  });
  after(() => s?.close());

  test('least recently used entries are evicted', async () => {
    const q = 'query One($id: Int!) @cached { item_by_pk(id: $id) { name } }';
    for (let i = 0; i < 30; i++) await gql(s, { query: q, variables: { id: i } });
    const mem = s.engine.responseCache.memory!;
    assert.ok(mem.bytes <= 4096, String(mem.bytes));
    assert.ok(s.engine.responseCache.stats.evictions > 0);
    assert.equal((await gql(s, { query: q, variables: { id: 29 } })).cache, 'hit');
    assert.equal((await gql(s, { query: q, variables: { id: 0 } })).cache, 'miss');
  });
});

describe('@cached: strict mode (--query-cache-strict)', () => {
  let s: TestServer;
  let client: pg.Client;
  before(async () => {
    s = await startTestServer({ queryCacheStrict: true });
    await query(s.url, SETUP);
    await waitFor('the change triggers are watched', async () => s.engine.changes.watched('public.item') && s.engine.changes.watched('public.tag'));
    client = new pg.Client({ connectionString: s.databaseUrl });
    await client.connect();
  });
  after(async () => {
    await client?.end();
    await s?.close();
  });

  test('a write committed by another client just before the request is never missed, without waiting for its NOTIFY', async () => {
    let hits = 0;
    for (let i = 0; i < 60; i++) {
      const cached = await gql(s, { query: ITEMS });
      if (cached.cache === 'hit') hits++;
      assert.deepEqual(
        cached.body.data.item.map((r: { name: string }) => r.name),
        (await client.query('select name from item order by id')).rows.map((r) => r.name),
        `step ${i} (${cached.cache})`,
      );
      // every other step: a write through pg, committed before the next request is sent
      if (i % 2 === 1) await client.query(`update item set name = 's${i}' where id = ${1 + (i % 3)}`);
    }
    assert.ok(hits >= 20, `only ${hits} hits`);
  });
});
