/**
 * A flood to a modest webhook loses no events (issue 30 item 10; upstream's
 * test_events.py::TestEventFlood::test_flood): 1,000 inserts, a trigger with no retries and a 2 s
 * timeout, and a receiver that answers one request at a time at its consumer's pace (25 ms an event,
 * test/fixtures/flood_receiver.ts). With the whole pool (100) sent at once, the last of them wait
 * longer than the timeout; opened gradually per host, every request is answered within it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';
import { sql } from '../helpers/db.js';
import { FloodReceiver } from '../fixtures/flood_receiver.js';
import { Receiver } from '../helpers/receiver.js';

let s: TestServer;
let rx: FloodReceiver;
const run = (body: unknown) => query(s.url, body, { 'x-svc-role': 'admin' });
const N = 1000;

before(async () => {
  rx = await new FloodReceiver().start();
  s = await startTestServer({ eventsFetchInterval: 50 });
  await run({ type: 'run_sql', args: { sql: 'create table flood (id int primary key)' } });
  await run({ type: 'track_table', args: { table: 'flood' } });
  await run({
    type: 'create_event_trigger',
    args: {
      name: 'flood',
      table: 'flood',
      webhook: `${rx.url}/flood`,
      insert: { columns: '*' },
      retry_conf: { num_retries: 0, interval_sec: 1, timeout_sec: 2 },
    },
  });
});

after(async () => {
  await s?.close();
  await rx?.close();
});

test('1,000 inserts to a one-at-a-time webhook: every event delivered once, none timed out', async () => {
  await run({ type: 'run_sql', args: { sql: `insert into flood select generate_series(1, ${N})` } });
  const seen = new Set<number>();
  for (let i = 0; i < N; i++) {
    let e;
    try {
      e = await rx.get(5000);
    } catch {
      break;
    }
    seen.add(e.body.event.data.new.id);
    // the consumer's work on an event (the upstream test checks each one)
    await new Promise((r) => setTimeout(r, 25));
  }
  const states = await waitFor(
    'every event finished',
    async () => {
      const r = await sql<{ delivered: number; error: number; n: number }>(
        s.databaseUrl,
        "select count(*) filter (where delivered)::int as delivered, count(*) filter (where error)::int as error, count(*)::int as n from svc_catalog.event_log where trigger_name = 'flood'",
      );
      return r[0]!.delivered + r[0]!.error === N ? r[0] : undefined;
    },
    10_000,
  );
  assert.deepEqual(states, { delivered: N, error: 0, n: N });
  assert.equal(seen.size, N);
});

test('--events-http-max-connections-per-host caps the requests in flight to one host', async () => {
  const slow = await new Receiver().start();
  slow.respond = () => ({ status: 200, delayMs: 150 });
  const capped = await startTestServer({ eventsFetchInterval: 50, eventsHttpMaxConnectionsPerHost: 2 });
  try {
    const q = (body: unknown) => query(capped.url, body, { 'x-svc-role': 'admin' });
    await q({ type: 'run_sql', args: { sql: 'create table c (id int primary key)' } });
    await q({ type: 'track_table', args: { table: 'c' } });
    await q({ type: 'create_event_trigger', args: { name: 'capped', table: 'c', webhook: slow.url, insert: { columns: '*' } } });
    await q({ type: 'run_sql', args: { sql: 'insert into c select generate_series(1, 12)' } });
    const got = await slow.waitFor(12);
    // requests are in flight from their arrival for 150 ms: never more than 2 at once
    const most = Math.max(...got.map((r) => got.filter((o) => o.at <= r.at && o.at + 150 > r.at).length));
    assert.ok(most <= 2, `at most 2 requests at once, saw ${most}`);
  } finally {
    await capped.close();
    await slow.close();
  }
});
