/**
 * What a webhook answers is clamped before use (issue 30, items 5 and 6): a Retry-After date in the
 * year 275760 neither fails the write-back of other triggers' events (no duplicates) nor leaves its
 * own event unlogged and re-sent every lease; a stored timeout past Node's timer limit (imported with
 * replace_metadata, which the API's 400 does not cover) waits, not 1 ms.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';
import { sql } from '../helpers/db.js';
import { Receiver } from '../helpers/receiver.js';

let s: TestServer;
let rx: Receiver;
const run = (body: unknown) => query(s.url, body, { 'x-svc-role': 'admin' });
const rows = (text: string, values: unknown[] = []) => sql(s.databaseUrl, text, values);

before(async () => {
  rx = await new Receiver().start();
  // a short lease: an event left leased after a failed write-back would be sent again within a second or two
  s = await startTestServer({ eventsFetchInterval: 50, eventsLeaseSeconds: 1 });
  await run({ type: 'run_sql', args: { sql: 'create table t (id int primary key)' } });
  await run({ type: 'track_table', args: { table: 't' } });
});

after(async () => {
  await s?.close();
  await rx?.close();
});

beforeEach(() => rx.reset());

test("Retry-After: Sat, 13 Sep 275760 00:00:00 GMT: recorded and clamped; the other trigger's events are delivered once", async () => {
  rx.respond = (r) =>
    r.path === '/absurd' ? { status: 503, headers: { 'Retry-After': 'Sat, 13 Sep 275760 00:00:00 GMT' }, delayMs: 100 } : { status: 200, delayMs: 100 };
  await run({
    type: 'create_event_trigger',
    args: {
      name: 'absurd',
      table: 't',
      webhook: `${rx.url}/absurd`,
      insert: { columns: '*' },
      retry_conf: { num_retries: 1, interval_sec: 1, timeout_sec: 10 },
    },
  });
  await run({ type: 'create_event_trigger', args: { name: 'innocent', table: 't', webhook: `${rx.url}/innocent`, insert: { columns: '*' } } });
  await run({ type: 'run_sql', args: { sql: 'insert into t select generate_series(1, 8)' } });
  await rx.waitFor(16);
  await waitFor(
    'every event finished',
    async () => Number((await rows('select count(*)::int as n from svc_catalog.event_log where not locked and tries > 0'))[0]!.n) === 16,
    10_000,
  );
  // three leases' time: nothing is sent again
  await new Promise((r) => setTimeout(r, 3000));
  const innocent = rx.requests
    .filter((r) => r.path === '/innocent')
    .map((r) => r.body.event.data.new.id)
    .sort((a, b) => a - b);
  assert.deepEqual(innocent, [1, 2, 3, 4, 5, 6, 7, 8], 'each event of the other trigger once');
  assert.equal(rx.requests.filter((r) => r.path === '/absurd').length, 8, 'the absurd events are tried once each, then wait');
  const absurd = await rows(
    "select e.tries, e.delivered, e.error, e.locked, e.next_retry_at, (select count(*)::int from svc_catalog.event_invocation_logs i where i.event_id = e.id) as logs from svc_catalog.event_log e where trigger_name = 'absurd'",
  );
  assert.equal(absurd.length, 8);
  for (const e of absurd) {
    assert.equal(e.tries, 1);
    assert.equal(e.locked, false);
    assert.equal(e.logs, 1, 'the try is logged');
    const at = new Date(e.next_retry_at as string).getTime();
    assert.ok(at > Date.now() + 6 * 24 * 3600_000 && at <= Date.now() + 7 * 24 * 3600_000 + 60_000, `retry within a week: ${String(e.next_retry_at)}`);
  }
  await run({ type: 'delete_event_trigger', args: { name: 'absurd' } });
  await run({ type: 'delete_event_trigger', args: { name: 'innocent' } });
});

test('a stored timeout_sec of 30 days (imported) waits for a slow webhook instead of failing at once', async () => {
  rx.respond = () => ({ status: 200, delayMs: 300 });
  const md = await run({ type: 'export_metadata', args: {} });
  md.tables.find((t: any) => t.table.name === 't').event_triggers = [
    {
      name: 'patient',
      definition: { enable_manual: true },
      retry_conf: { num_retries: 0, interval_sec: 10, timeout_sec: 2592000 },
      webhook: `${rx.url}/patient`,
    },
  ];
  await run({ type: 'replace_metadata', args: md });
  const { event_id } = await run({ type: 'invoke_event_trigger', args: { name: 'patient', payload: {} } });
  const ev = await waitFor(
    'finished',
    async () => (await rows('select delivered, error from svc_catalog.event_log where id = $1 and (delivered or error)', [event_id]))[0],
    10_000,
  );
  assert.deepEqual(ev, { delivered: true, error: false });
  const [log] = await rows('select status from svc_catalog.event_invocation_logs where event_id = $1', [event_id]);
  assert.equal(log!.status, 200);
});

test('one row whose write-back fails: the others are recorded once; it ends error with the reason, not re-sent', async () => {
  rx.respond = () => ({ status: 200 });
  await run({ type: 'create_event_trigger', args: { name: 'mixed', table: 't', webhook: `${rx.url}/mixed`, insert: { columns: '*' } } });
  // PostgreSQL refuses the invocation log of one event (a constraint of the operator's, a full disk …)
  await rows(`create function public.refuse_one() returns trigger language plpgsql as $$
    begin
      if new.status <> 1000 and exists (select 1 from svc_catalog.event_log e where e.id = new.event_id and e.payload->'data'->'new'->>'id' = '103') then
        raise exception 'refused for the test';
      end if;
      return new;
    end $$`);
  await rows('create trigger refuse_one before insert on svc_catalog.event_invocation_logs for each row execute procedure public.refuse_one()');
  try {
    await run({ type: 'run_sql', args: { sql: 'insert into t select generate_series(101, 108)' } });
    await rx.waitFor(8);
    await waitFor(
      'every event finished',
      async () =>
        Number((await rows("select count(*)::int as n from svc_catalog.event_log where trigger_name = 'mixed' and (delivered or error)"))[0]!.n) === 8,
      10_000,
    );
    // three leases' time: nothing is sent again
    await new Promise((r) => setTimeout(r, 3000));
    const sent = rx.requests.map((r) => r.body.event.data.new.id).sort((a, b) => a - b);
    assert.deepEqual(sent, [101, 102, 103, 104, 105, 106, 107, 108], 'each event once');
    const state = await rows(
      "select e.payload->'data'->'new'->>'id' as id, e.delivered, e.error, e.locked, (select json_agg(i.status) from svc_catalog.event_invocation_logs i where i.event_id = e.id) as logs, (select min(i.response->'data'->>'message') from svc_catalog.event_invocation_logs i where i.event_id = e.id) as why from svc_catalog.event_log e where trigger_name = 'mixed' order by 1",
    );
    for (const e of state) {
      if (e.id === '103') {
        assert.deepEqual([e.delivered, e.error, e.locked, e.logs], [false, true, false, [1000]]);
        assert.match(String(e.why), /could not be recorded \(refused for the test\)/);
      } else assert.deepEqual([e.delivered, e.error, e.locked, e.logs], [true, false, false, [200]], `event ${String(e.id)}`);
    }
  } finally {
    await rows('drop trigger refuse_one on svc_catalog.event_invocation_logs; drop function public.refuse_one()');
  }
});
