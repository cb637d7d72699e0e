/**
 * Svc behind a real pgbouncer in transaction pooling mode (test/helpers/pgbouncer.ts) with
 * `--use-prepared-statements=false` and `--listen-database-url` pointing straight at PostgreSQL:
 * the core cases of the GraphQL and delivery suites — metadata through /v1/query, queries with
 * relationships, mutations (batched and with a second statement for `returning`), a
 * subscription, event-trigger delivery — and metadata sync between two instances over the
 * direct LISTEN connection.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createTestDatabase, sql, type TestDatabase } from '../helpers/db.js';
import { startPgbouncer, type Bouncer } from '../helpers/pgbouncer.js';
import { Receiver } from '../helpers/receiver.js';
import { postGraphql, query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';

let bouncer: Bouncer;
let db: TestDatabase;
let a: TestServer;
let b: TestServer;
let receiver: Receiver;

async function gql(server: TestServer, q: string, variables?: Record<string, unknown>): Promise<any> {
  const r = await postGraphql(server.url, { query: q, ...(variables ? { variables } : {}) });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.errors, undefined, r.text);
  return r.body.data;
}

before(async () => {
  bouncer = await startPgbouncer({ poolSize: 4 });
  db = await createTestDatabase();
  receiver = await new Receiver().start();
  await sql(
    db.url,
    `create table author (id serial primary key, name text not null);
     create table article (id serial primary key, title text not null, author_id int not null references author(id));`,
  );
  const opts = {
    databaseUrl: bouncer.url(db.name),
    listenDatabaseUrl: db.url,
    usePreparedStatements: false,
    pgConnections: 6,
    liveQueriesRefetchInterval: 100,
    eventsFetchInterval: 100,
  };
  a = await startTestServer(opts);
  b = await startTestServer(opts);
});

after(async () => {
  await a?.close();
  await b?.close();
  await receiver?.close();
  await db?.drop();
  await bouncer?.close();
});

test('the pool runs through pgbouncer, LISTEN straight to PostgreSQL', async () => {
  const rows = await sql<{ n: number }>(db.url, `select count(*)::int as n from pg_stat_activity where datname = $1 and query ilike 'listen %'`, [db.name]);
  assert.equal(rows[0]!.n, 2, 'one direct LISTEN connection per instance');
  await gql(a, '{ __typename }');
  await query(a.url, { type: 'run_sql', args: { sql: 'select 1' } });
  // pgbouncer's admin console lists the instances' pool connections as its clients
  const clients = await sql<{ database: string }>(bouncer.url('pgbouncer'), 'show clients');
  assert.ok(clients.filter((c) => c.database === db.name).length >= 2, JSON.stringify(clients));
});

test('metadata, queries and mutations through pgbouncer; metadata reaches the other instance by LISTEN', { timeout: 60_000 }, async () => {
  for (const name of ['author', 'article']) await query(a.url, { type: 'track_table', args: { schema: 'public', name } });
  await query(a.url, { type: 'create_object_relationship', args: { table: 'article', name: 'author', using: { foreign_key_constraint_on: 'author_id' } } });
  await query(a.url, {
    type: 'create_array_relationship',
    args: { table: 'author', name: 'articles', using: { foreign_key_constraint_on: { table: 'article', column: 'author_id' } } },
  });
  // the other instance rebuilds on the NOTIFY (its poll is 10 s: this wait is shorter)
  await waitFor(
    'instance b to see the relationship',
    async () => (await postGraphql(b.url, { query: '{ author { articles { id } } }' })).body.data !== undefined,
    5_000,
  );

  const ins = await gql(a, 'mutation { insert_author(objects: [{name: "Ada"}, {name: "Brian"}]) { affected_rows returning { id name } } }');
  assert.equal(ins.insert_author.affected_rows, 2);
  const ada = ins.insert_author.returning.find((x: { name: string }) => x.name === 'Ada').id;
  // `returning` with a relationship: a second statement in the mutation's transaction
  const art = await gql(b, 'mutation ($a: Int!) { insert_article_one(object: {title: "Notes", author_id: $a}) { title author { name } } }', { a: ada });
  assert.deepEqual(art.insert_article_one, { title: 'Notes', author: { name: 'Ada' } });
  // many requests at once over a pool of 4 server connections
  const all = await Promise.all(Array.from({ length: 30 }, (_, i) => gql(i % 2 ? a : b, '{ author(order_by: {id: asc}) { name articles { title } } }')));
  for (const d of all)
    assert.deepEqual(d.author, [
      { name: 'Ada', articles: [{ title: 'Notes' }] },
      { name: 'Brian', articles: [] },
    ]);
  const upd = await gql(
    a,
    'mutation { update_author(where: {name: {_eq: "Brian"}}, _set: {name: "Bea"}) { affected_rows } delete_article(where: {}) { affected_rows } }',
  );
  assert.deepEqual(upd, { update_author: { affected_rows: 1 }, delete_article: { affected_rows: 1 } });
  // a failing mutation rolls back through the pooler too
  const bad = await postGraphql(a.url, {
    query: 'mutation { insert_author(objects: [{name: "C"}]) { affected_rows } insert_article(objects: [{title: "x", author_id: 999}]) { affected_rows } }',
  });
  assert.ok(bad.body.errors, bad.text);
  assert.equal((await gql(b, '{ author_aggregate { aggregate { count } } }')).author_aggregate.aggregate.count, 2);
});

test('a subscription through pgbouncer', { timeout: 60_000 }, async () => {
  const client = createClient({ url: a.url.replace('http', 'ws') + '/v1/graphql', webSocketImpl: WebSocket, retryAttempts: 0 });
  const seen: number[] = [];
  const stop = client.subscribe<{ author: unknown[] }>(
    { query: 'subscription { author { id } }' },
    { next: (m) => void seen.push(m.data!.author.length), error: (e) => assert.fail(JSON.stringify(e)), complete: () => undefined },
  );
  try {
    await waitFor('the first result', async () => seen.at(-1) === 2, 10_000);
    await gql(b, 'mutation { insert_author_one(object: {name: "Cy"}) { id } }');
    await waitFor('the update', async () => seen.at(-1) === 3, 10_000);
  } finally {
    stop();
    await client.dispose();
  }
});

test('event triggers are delivered once through pgbouncer', { timeout: 60_000 }, async () => {
  await query(a.url, {
    type: 'create_event_trigger',
    args: { name: 'author_ins', table: { schema: 'public', name: 'author' }, webhook: receiver.url, insert: { columns: '*' } },
  });
  await waitFor('instance b to know the trigger', async () => b.engine.cache.resourceVersion === a.engine.cache.resourceVersion, 5_000);
  for (let i = 0; i < 4; i++) await gql(i % 2 ? a : b, `mutation { insert_author_one(object: {name: "E${i}"}) { id } }`);
  await receiver.waitFor(4, () => true, 20_000);
  await sql(db.url, 'select pg_sleep(0.5)');
  const names = receiver.requests.map((r) => (r.body as { event: { data: { new: { name: string } } } }).event.data.new.name).sort();
  assert.deepEqual(names, ['E0', 'E1', 'E2', 'E3']);
  const [{ n }] = await sql<{ n: number }>(db.url, 'select count(*)::int as n from svc_catalog.event_log where delivered');
  assert.equal(n, 4);
});

test(
  'a client that goes away: its statement is cancelled through pgbouncer (CancelRequest, not pg_cancel_backend of pgbouncer’s pid)',
  { timeout: 30_000 },
  async () => {
    await query(a.url, {
      type: 'run_sql',
      args: {
        sql: 'create function slow_authors(seconds int) returns setof author language sql stable as $$ select pg_sleep(seconds); select * from author $$',
      },
    });
    await query(a.url, { type: 'track_function', args: { name: 'slow_authors' } });
    const aborted = fetch(`${a.url}/v1/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ slow_authors(args: {seconds: 30}) { id } }' }),
      signal: AbortSignal.timeout(500),
    }).catch((e: Error) => e);
    const running = async () =>
      (
        await sql<{ n: number }>(db.url, `select count(*)::int as n from pg_stat_activity where datname = $1 and state = 'active' and wait_event = 'PgSleep'`, [
          db.name,
        ])
      )[0]!.n;
    await waitFor('the slow statement runs', async () => (await running()) === 1, 5_000);
    assert.ok((await aborted) instanceof Error);
    await waitFor('the statement is cancelled', async () => (await running()) === 0, 5_000);
  },
);
