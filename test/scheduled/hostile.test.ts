/**
 * Scheduled triggers under hostile values (issue 30, items 3, 6, 7): every numeric and time argument
 * is range-checked at the API (400 with the key's path, nothing stored); rows with absurd values
 * (written by hand or by an older version) never stop the claim of the others, and a row that cannot
 * be sent ends `error` with an invocation log saying why; delete_scheduled_event removes one event.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { postQuery, query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';
import { sql } from '../helpers/db.js';
import { Receiver } from '../helpers/receiver.js';

let s: TestServer;
let rx: Receiver;
const run = (body: unknown) => query(s.url, body, { 'x-svc-role': 'admin' });
const runRaw = (body: unknown) => postQuery(s.url, body, { 'x-svc-role': 'admin' });
const rows = (text: string, values: unknown[] = []) => sql(s.databaseUrl, text, values);
const count = async (text: string) => Number((await rows(text))[0]!.n);

before(async () => {
  rx = await new Receiver().start();
  s = await startTestServer({ eventsFetchInterval: 50 });
});

after(async () => {
  await s?.close();
  await rx?.close();
});

beforeEach(() => rx.reset());

describe('range checks at the API', () => {
  test('create_scheduled_event and create_cron_trigger: out-of-range numbers and times are 400s naming the key; nothing stored', async () => {
    const one = { webhook: `${rx.url}/x`, schedule_at: new Date().toISOString() };
    const cron = { name: 'c', webhook: `${rx.url}/x`, schedule: '* * * * *', include_in_metadata: false };
    const cases: Array<[string, string, Record<string, unknown>, string, RegExp]> = [
      [
        'huge tolerance',
        'create_scheduled_event',
        { ...one, retry_conf: { tolerance_seconds: 999999999999 } },
        '$.retry_conf.tolerance_seconds',
        /tolerance_seconds must be an integer from 0 to 315360000/,
      ],
      ['1e300 tolerance', 'create_scheduled_event', { ...one, retry_conf: { tolerance_seconds: 1e300 } }, '$.retry_conf.tolerance_seconds', /from 0 to/],
      [
        'huge retry interval',
        'create_scheduled_event',
        { ...one, retry_conf: { retry_interval_seconds: 1e300 } },
        '$.retry_conf.retry_interval_seconds',
        /from 0 to/,
      ],
      ['huge num_retries', 'create_scheduled_event', { ...one, retry_conf: { num_retries: 1e12 } }, '$.retry_conf.num_retries', /from 0 to 1000000/],
      [
        'timeout past Node timers (30 days)',
        'create_scheduled_event',
        { ...one, retry_conf: { timeout_seconds: 2592000 } },
        '$.retry_conf.timeout_seconds',
        /timeout_seconds must be an integer from 1 to 2147483/,
      ],
      ['offset +25:00', 'create_scheduled_event', { ...one, schedule_at: '2030-01-01T00:00:00+25:00' }, '$.schedule_at', /not an ISO 8601 timestamp/],
      ['offset minutes 99', 'create_scheduled_event', { ...one, schedule_at: '2030-01-01T00:00:00+01:99' }, '$.schedule_at', /not an ISO 8601 timestamp/],
      ['year 0000', 'create_scheduled_event', { ...one, schedule_at: '0000-01-01T00:00:00Z' }, '$.schedule_at', /not an ISO 8601 timestamp/],
      ['CRLF in a header value', 'create_scheduled_event', { ...one, headers: [{ name: 'X-A', value: 'a\r\nb' }] }, '$.headers[0].value', /control characters/],
      ['NUL in the payload', 'create_scheduled_event', { ...one, payload: { a: 'x\u0000' } }, '$.payload.a', /NUL/],
      ['lone surrogate in the comment', 'create_scheduled_event', { ...one, comment: '\ud800' }, '$.comment', /lone surrogates/],
      ['cron: huge tolerance', 'create_cron_trigger', { ...cron, retry_conf: { tolerance_seconds: 1e300 } }, '$.retry_conf.tolerance_seconds', /from 0 to/],
      [
        'cron: timeout past Node timers',
        'create_cron_trigger',
        { ...cron, retry_conf: { timeout_seconds: 2592000 } },
        '$.retry_conf.timeout_seconds',
        /from 1 to 2147483/,
      ],
      [
        'cron: CRLF in a header value',
        'create_cron_trigger',
        { ...cron, headers: [{ name: 'X-A', value: 'a\nb' }] },
        '$.headers[0].value',
        /control characters/,
      ],
      [
        'event trigger: timeout past Node timers',
        'create_event_trigger',
        { name: 't', table: 'x', webhook: `${rx.url}/x`, insert: { columns: '*' }, retry_conf: { timeout_sec: 2592000 } },
        '$.retry_conf.timeout_sec',
        /from 1 to 2147483/,
      ],
    ];
    for (const [what, type, args, path, message] of cases) {
      const r = await runRaw({ type, args });
      assert.equal(r.status, 400, `${what}: ${r.text}`);
      assert.equal(r.body.path, path, what);
      assert.match(r.body.error, message, what);
    }
    assert.equal(await count('select count(*)::int as n from svc_catalog.hdb_scheduled_events'), 0);
    assert.equal(await count('select count(*)::int as n from svc_catalog.hdb_cron_triggers'), 0);
    // the largest accepted values work
    const ok = await runRaw({
      type: 'create_scheduled_event',
      args: { ...one, schedule_at: '2030-01-01T00:00:00+14:00', retry_conf: { tolerance_seconds: 315360000, timeout_seconds: 2147483 } },
    });
    assert.equal(ok.status, 200, ok.text);
    await run({ type: 'delete_scheduled_event', args: { type: 'one_off', event_id: ok.body.event_id } });
  });
});

describe('rows with absurd values', () => {
  test('never stop the claim: the others are delivered; a row that cannot be sent ends error with the reason', async () => {
    const insert = (retryConf: string, headerConf = '[]', path = 'x') =>
      rows(
        `insert into svc_catalog.hdb_scheduled_events (webhook_conf, scheduled_time, retry_conf, header_conf, created_at) values ($1::json, now(), $2::json, $3::json, now()) returning id`,
        [JSON.stringify(`${rx.url}/${path}`), retryConf, headerConf],
      );
    const [huge] = await insert('{"tolerance_seconds": 1e300, "timeout_seconds": 1e300, "retry_interval_seconds": 1e300, "num_retries": -5}', '[]', 'huge');
    const [odd] = await insert('{"tolerance_seconds": "soon", "timeout_seconds": [], "num_retries": null}', '[]', 'odd');
    const [bad] = await insert('null', '{"not": "a list"}', 'bad');
    const good = await run({ type: 'create_scheduled_event', args: { webhook: `${rx.url}/good`, schedule_at: new Date().toISOString() } });
    const got = await rx.waitFor(3);
    assert.deepEqual(got.map((r) => r.path).sort(), ['/good', '/huge', '/odd']);
    await waitFor(
      'all four finished',
      async () => (await count("select count(*)::int as n from svc_catalog.hdb_scheduled_events where status in ('delivered', 'error')")) === 4,
    );
    const state = await rows('select id, status from svc_catalog.hdb_scheduled_events');
    const status = (id: unknown) => state.find((r) => r.id === id)!.status;
    assert.equal(status(good.event_id), 'delivered');
    assert.equal(status(huge!.id), 'delivered');
    assert.equal(status(odd!.id), 'delivered');
    assert.equal(status(bad!.id), 'error');
    const [log] = await rows('select status, response from svc_catalog.hdb_scheduled_event_invocation_logs where event_id = $1', [bad!.id]);
    assert.equal(log!.status, 1000);
    assert.equal((log!.response as any).type, 'client_error');
    assert.equal(typeof (log!.response as any).data.message, 'string');
  });
});

describe('delete_scheduled_event', () => {
  test('removes a one-off or a cron event with its logs; bad type is a 400; an unknown id is success (upstream)', async () => {
    const { event_id } = await run({ type: 'create_scheduled_event', args: { webhook: `${rx.url}/later`, schedule_at: '2099-01-01T00:00:00Z' } });
    assert.equal(await count(`select count(*)::int as n from svc_catalog.hdb_scheduled_events where id = '${event_id}'`), 1);
    assert.deepEqual(await run({ type: 'delete_scheduled_event', args: { type: 'one_off', event_id } }), { message: 'success' });
    assert.equal(await count(`select count(*)::int as n from svc_catalog.hdb_scheduled_events where id = '${event_id}'`), 0);

    await run({ type: 'create_cron_trigger', args: { name: 'hourly', webhook: `${rx.url}/cron`, schedule: '0 * * * *', include_in_metadata: false } });
    const [first] = await rows("select id from svc_catalog.hdb_cron_events where trigger_name = 'hourly' order by scheduled_time limit 1");
    assert.deepEqual(await run({ type: 'delete_scheduled_event', args: { type: 'cron', event_id: first!.id } }), { message: 'success' });
    assert.equal(await count(`select count(*)::int as n from svc_catalog.hdb_cron_events where id = '${first!.id}'`), 0);
    assert.equal(await count("select count(*)::int as n from svc_catalog.hdb_cron_events where trigger_name = 'hourly'"), 99);

    const bad = await runRaw({ type: 'delete_scheduled_event', args: { type: 'weekly', event_id } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.path, '$.type');
    const nul = await runRaw({ type: 'delete_scheduled_event', args: { type: 'one_off', event_id: 'a\u0000' } });
    assert.equal(nul.status, 400);
    assert.equal(nul.body.path, '$.event_id');
    assert.deepEqual(await run({ type: 'delete_scheduled_event', args: { type: 'one_off', event_id: 'no-such-event' } }), { message: 'success' });
    await run({ type: 'delete_cron_trigger', args: { name: 'hourly' } });
  });
});
