/**
 * Scheduled triggers (issue 15) against a real webhook receiver, on the scheduler's injectable clock
 * where waiting would be slow: one-off events (body and headers field by field, `dead` past the
 * tolerance, retries then `error` with invocation logs), cron triggers (the window of 100 events,
 * `replace` regenerating it, delivery of due events, export/replace_metadata of include_in_metadata
 * triggers, delete_cron_trigger taking its events along), a process that was down for an hour, bad
 * input, metrics and log lines. (Two processes and the lag of 1,000 events: test/e2e/scheduled_instances.test.ts.)
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, beforeEach, describe, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { devnull, postQuery, query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';
import { defaultConfig } from '../../src/config/config.js';
import { createLogger, startSvc } from '../../src/server/start.js';
import { createTestDatabase, sql, type TestDatabase } from '../helpers/db.js';
import { Receiver } from '../helpers/receiver.js';
import { cronTimes } from '../../src/scheduled/cron.js';

let s: TestServer;
let rx: Receiver;
const logLines: any[] = [];

const run = (body: unknown) => query(s.url, body, { 'x-svc-role': 'admin' });
const runRaw = (body: unknown) => postQuery(s.url, body, { 'x-svc-role': 'admin' });
const rows = (text: string, values: unknown[] = []) => sql(s.databaseUrl, text, values);
const count = async (text: string, values: unknown[] = []) => Number((await rows(text, values))[0]!.n);
const iso = (ms: number) => new Date(ms).toISOString();
/** the scheduler's clock of the server under test, set by hand */
let now = Date.parse('2031-03-04T05:06:07.000Z');

before(async () => {
  rx = await new Receiver().start();
  process.env.SVC_TEST_SCHED_URL = rx.url;
  process.env.SVC_TEST_SCHED_HEADER = 'from-env';
  s = await startTestServer(
    { eventsFetchInterval: 50, logLevel: 'info', enabledLogTypes: ['webhook-log'] },
    new Writable({
      write(chunk, _enc, cb) {
        for (const line of String(chunk).split('\n')) if (line.trim()) logLines.push(JSON.parse(line));
        cb();
      },
    }),
  );
  s.engine.clock = () => now;
});

after(async () => {
  await s?.close();
  await rx?.close();
  delete process.env.SVC_TEST_SCHED_URL;
  delete process.env.SVC_TEST_SCHED_HEADER;
});

beforeEach(() => {
  rx.reset();
});

describe('one-off scheduled events', () => {
  test('an event due now is delivered once, with the body of catalog-tables.md and the configured headers', async () => {
    const r = await run({
      type: 'create_scheduled_event',
      args: {
        webhook: '{{SVC_TEST_SCHED_URL}}/one-off',
        schedule_at: iso(now),
        payload: { foo: 'baz', n: [1, 2] },
        headers: [
          { name: 'X-Static', value: 'static-value' },
          { name: 'X-From-Env', value_from_env: 'SVC_TEST_SCHED_HEADER' },
        ],
        comment: 'test scheduled event',
      },
    });
    assert.equal(r.message, 'success');
    assert.match(r.event_id, /^[0-9a-f-]{36}$/);
    const [got] = await rx.waitFor(1);
    assert.equal(got!.path, '/one-off');
    assert.deepEqual(Object.keys(got!.body), ['id', 'scheduled_time', 'payload', 'comment', 'created_at']);
    assert.equal(got!.body.id, r.event_id);
    assert.equal(got!.body.scheduled_time, '2031-03-04T05:06:07Z');
    assert.deepEqual(got!.body.payload, { foo: 'baz', n: [1, 2] });
    assert.equal(got!.body.comment, 'test scheduled event');
    const [row] = await rows('select to_char(created_at, \'YYYY-MM-DD"T"HH24:MI:SS.US\') as c from svc_catalog.hdb_scheduled_events where id = $1', [
      r.event_id,
    ]);
    assert.equal(got!.body.created_at, `${String(row!.c).replace(/\.?0+$/, '')}Z`);
    assert.ok(Math.abs(Date.parse(got!.body.created_at) - Date.now()) < 60_000, 'created_at is the real creation time (UTC)');
    assert.equal(got!.headers['content-type'], 'application/json');
    assert.equal(got!.headers['x-static'], 'static-value');
    assert.equal(got!.headers['x-from-env'], 'from-env');

    await waitFor(
      'delivered',
      async () => (await rows('select status from svc_catalog.hdb_scheduled_events where id = $1', [r.event_id]))[0]?.status === 'delivered',
    );
    const [ev] = await rows('select status, tries, locked_by, locked_until, next_retry_at from svc_catalog.hdb_scheduled_events where id = $1', [r.event_id]);
    assert.deepEqual(ev, { status: 'delivered', tries: 1, locked_by: null, locked_until: null, next_retry_at: null });
    const logs = await rows('select status, request, response from svc_catalog.hdb_scheduled_event_invocation_logs where event_id = $1', [r.event_id]);
    assert.equal(logs.length, 1);
    assert.equal(logs[0]!.status, 200);
    assert.deepEqual((logs[0]!.request as any).payload, got!.body);
    assert.deepEqual((logs[0]!.request as any).headers, [
      { name: 'X-Static', value: 'static-value' },
      { name: 'X-From-Env', value: 'from-env' },
    ]);
    assert.deepEqual((logs[0]!.response as any).data, { status: 200, body: '{"ok":true}', headers: (logs[0]!.response as any).data.headers });
    // no comment, no payload: comment left out, payload null
    const bare = await run({ type: 'create_scheduled_event', args: { webhook: `${rx.url}/bare`, schedule_at: iso(now - 1000) } });
    const [b] = await rx.waitFor(1, (x) => x.path === '/bare');
    assert.deepEqual(Object.keys(b!.body), ['id', 'scheduled_time', 'payload', 'created_at']);
    assert.equal(b!.body.id, bare.event_id);
    assert.equal(b!.body.payload, null);
    assert.equal(b!.body.scheduled_time, '2031-03-04T05:06:06Z');
  });

  test('an event in the future waits for its time; one past its tolerance is dead, never delivered', async () => {
    const later = await run({
      type: 'create_scheduled_event',
      args: { webhook: `${rx.url}/later`, schedule_at: iso(now + 3_600_000), payload: { later: true } },
    });
    const dead = await run({ type: 'create_scheduled_event', args: { webhook: `${rx.url}/dead`, schedule_at: '2020-01-01T00:00:00Z', payload: {} } });
    const tight = await run({
      type: 'create_scheduled_event',
      args: { webhook: `${rx.url}/dead`, schedule_at: iso(now - 120_000), retry_conf: { tolerance_seconds: 60 } },
    });
    await waitFor(
      'both past events dead',
      async () => (await count("select count(*)::int as n from svc_catalog.hdb_scheduled_events where status = 'dead'")) === 2,
    );
    const st = await rows('select id, status, tries from svc_catalog.hdb_scheduled_events where id = any($1) order by status', [
      [later.event_id, dead.event_id, tight.event_id],
    ]);
    assert.deepEqual(
      st.map((x) => [x.status, x.tries]),
      [
        ['dead', 0],
        ['dead', 0],
        ['scheduled', 0],
      ],
    );
    assert.equal(
      await count('select count(*)::int as n from svc_catalog.hdb_scheduled_event_invocation_logs where event_id = any($1)', [[dead.event_id, tight.event_id]]),
      0,
    );
    // the clock reaches the later event: delivered
    now += 3_600_000;
    const [got] = await rx.waitFor(1, (x) => x.path === '/later');
    assert.equal(got!.body.id, later.event_id);
    assert.equal(rx.requests.filter((x) => x.path === '/dead').length, 0);
  });

  test('a failing webhook is tried 1 + num_retries times, retry_interval_seconds apart, then the event is `error` with an invocation log per try', async () => {
    rx.respond = (r) => (r.path === '/fail' ? { status: 500, body: 'nope' } : { status: 200 });
    const r = await run({
      type: 'create_scheduled_event',
      args: {
        webhook: `${rx.url}/fail`,
        schedule_at: iso(now),
        payload: { x: 1 },
        retry_conf: { num_retries: 2, retry_interval_seconds: 30, timeout_seconds: 5, tolerance_seconds: 21600 },
      },
    });
    await rx.waitFor(1, (x) => x.path === '/fail');
    await waitFor(
      'first try recorded',
      async () => (await rows('select tries from svc_catalog.hdb_scheduled_events where id = $1', [r.event_id]))[0]?.tries === 1,
    );
    const [first] = await rows(
      'select status, tries, extract(epoch from next_retry_at)::float8 * 1000 as next from svc_catalog.hdb_scheduled_events where id = $1',
      [r.event_id],
    );
    assert.equal(first!.status, 'scheduled');
    assert.equal(Number(first!.next), now + 30_000, 'next_retry_at = the scheduler clock + retry_interval_seconds');
    // nothing before the interval has passed on the scheduler's clock
    await new Promise((res) => setTimeout(res, 300));
    assert.equal(rx.requests.filter((x) => x.path === '/fail').length, 1);
    now += 30_000;
    await rx.waitFor(2, (x) => x.path === '/fail');
    await waitFor(
      'second try recorded',
      async () => (await rows('select tries from svc_catalog.hdb_scheduled_events where id = $1', [r.event_id]))[0]?.tries === 2,
    );
    now += 30_000;
    await rx.waitFor(3, (x) => x.path === '/fail');
    await waitFor('error', async () => (await rows('select status from svc_catalog.hdb_scheduled_events where id = $1', [r.event_id]))[0]?.status === 'error');
    const [ev] = await rows('select status, tries, locked_by from svc_catalog.hdb_scheduled_events where id = $1', [r.event_id]);
    assert.deepEqual(ev, { status: 'error', tries: 3, locked_by: null });
    const logs = await rows('select status, response from svc_catalog.hdb_scheduled_event_invocation_logs where event_id = $1 order by created_at', [
      r.event_id,
    ]);
    assert.deepEqual(
      logs.map((l) => [l.status, (l.response as any).data.body]),
      [
        [500, 'nope'],
        [500, 'nope'],
        [500, 'nope'],
      ],
    );
    now += 120_000;
    await new Promise((res) => setTimeout(res, 300));
    assert.equal(rx.requests.filter((x) => x.path === '/fail').length, 3, 'no try after error');
  });

  test('a timeout is a failed try logged as a client error', async () => {
    rx.respond = () => ({ status: 200, delayMs: 3_000 });
    const r = await run({ type: 'create_scheduled_event', args: { webhook: `${rx.url}/slow`, schedule_at: iso(now), retry_conf: { timeout_seconds: 1 } } });
    await waitFor(
      'error after the timeout',
      async () => (await rows('select status from svc_catalog.hdb_scheduled_events where id = $1', [r.event_id]))[0]?.status === 'error',
      10_000,
    );
    const [log] = await rows('select status, response from svc_catalog.hdb_scheduled_event_invocation_logs where event_id = $1', [r.event_id]);
    assert.equal(log!.status, 1000);
    assert.equal((log!.response as any).type, 'client_error');
  });
});

describe('cron triggers', () => {
  const cronRows = (name: string) =>
    rows(
      'select to_char(scheduled_time at time zone \'UTC\', \'YYYY-MM-DD"T"HH24:MI:SS"Z"\') as t, status from svc_catalog.hdb_cron_events where trigger_name = $1 order by scheduled_time',
      [name],
    );

  test('`* * * * *` keeps a window of 100 future events, the next 100 minutes; replace with a new schedule regenerates it', async () => {
    now = Date.parse('2031-03-04T06:00:30Z');
    await run({
      type: 'create_cron_trigger',
      args: { name: 'every_minute', webhook: `${rx.url}/never`, schedule: '* * * * *', payload: { a: 1 }, include_in_metadata: true },
    });
    const expected = cronTimes('* * * * *', new Date(now), 100).map((d) => d.toISOString().replace('.000Z', 'Z'));
    assert.equal(expected[0], '2031-03-04T06:01:00Z');
    assert.deepEqual(
      (await cronRows('every_minute')).map((r) => r.t),
      expected,
    );
    const [trow] = await rows(
      "select name, webhook_conf, cron_schedule, payload, retry_conf, header_conf, include_in_metadata, comment from svc_catalog.hdb_cron_triggers where name = 'every_minute'",
    );
    assert.deepEqual(trow, {
      name: 'every_minute',
      webhook_conf: `${rx.url}/never`,
      cron_schedule: '* * * * *',
      payload: { a: 1 },
      retry_conf: { num_retries: 0, retry_interval_seconds: 10, timeout_seconds: 60, tolerance_seconds: 21600 },
      header_conf: [],
      include_in_metadata: true,
      comment: null,
    });
    // the generator tops up, idempotently: running it again (or from another process) adds nothing
    await s.engine.cronGenerator.tick();
    await s.engine.cronGenerator.tick();
    assert.equal((await cronRows('every_minute')).length, 100);
    // replace, same schedule: the events stay; new schedule: the future events follow it
    await run({
      type: 'create_cron_trigger',
      args: {
        name: 'every_minute',
        webhook: `${rx.url}/never`,
        schedule: '* * * * *',
        headers: [{ name: 'header-name', value: 'header-value' }],
        include_in_metadata: true,
        replace: true,
      },
    });
    assert.deepEqual(
      (await cronRows('every_minute')).map((r) => r.t),
      expected,
    );
    await run({
      type: 'create_cron_trigger',
      args: { name: 'every_minute', webhook: `${rx.url}/never`, schedule: '*/5 * * * *', include_in_metadata: true, replace: true },
    });
    const five = cronTimes('*/5 * * * *', new Date(now), 100).map((d) => d.toISOString().replace('.000Z', 'Z'));
    assert.deepEqual(
      (await cronRows('every_minute')).map((r) => r.t),
      five,
    );
    // replace of a trigger that does not exist, create of one that does
    const missing = await runRaw({
      type: 'create_cron_trigger',
      args: { name: 'nope', webhook: rx.url, schedule: '* * * * *', include_in_metadata: false, replace: true },
    });
    assert.deepEqual([missing.status, missing.body], [400, { path: '$.args', error: 'cron trigger with name: nope does not exist', code: 'not-exists' }]);
    const dup = await runRaw({
      type: 'create_cron_trigger',
      args: { name: 'every_minute', webhook: rx.url, schedule: '* * * * *', include_in_metadata: false },
    });
    assert.deepEqual([dup.status, dup.body], [400, { path: '$.args', error: 'cron trigger with name: every_minute already exists', code: 'already-exists' }]);
  });

  test('due cron events are delivered with name, payload, comment and headers; the window moves on', async () => {
    now = Date.parse('2031-03-04T07:00:10Z');
    await run({
      type: 'create_cron_trigger',
      args: {
        name: 'hourly_report',
        webhook: '{{SVC_TEST_SCHED_URL}}/cron',
        schedule: '0 * * * *',
        payload: { foo: 'baz' },
        headers: [{ name: 'header-key', value: 'header-value' }],
        comment: 'every hour',
        include_in_metadata: false,
      },
    });
    assert.equal((await cronRows('hourly_report'))[0]!.t, '2031-03-04T08:00:00Z');
    now = Date.parse('2031-03-04T08:00:01Z');
    const [got] = await rx.waitFor(1, (x) => x.path === '/cron');
    assert.deepEqual(Object.keys(got!.body), ['id', 'name', 'scheduled_time', 'payload', 'comment', 'created_at']);
    assert.equal(got!.body.name, 'hourly_report');
    assert.equal(got!.body.scheduled_time, '2031-03-04T08:00:00Z');
    assert.deepEqual(got!.body.payload, { foo: 'baz' });
    assert.equal(got!.body.comment, 'every hour');
    assert.equal(got!.headers['header-key'], 'header-value');
    await waitFor('delivered', async () => (await cronRows('hourly_report'))[0]!.status === 'delivered');
    const [log] = await rows(
      'select l.status from svc_catalog.hdb_cron_event_invocation_logs l join svc_catalog.hdb_cron_events e on e.id = l.event_id where e.trigger_name = $1',
      ['hourly_report'],
    );
    assert.equal(log!.status, 200);
    await s.engine.cronGenerator.tick();
    const all = await cronRows('hourly_report');
    assert.equal(all.length, 101, 'one delivered + a full window of 100 future events');
    assert.equal(all.filter((r) => r.status === 'scheduled').length, 100);
    await new Promise((res) => setTimeout(res, 300));
    assert.equal(rx.requests.filter((x) => x.path === '/cron').length, 1);
  });

  test('export_metadata shows include_in_metadata triggers only; replace_metadata and clear_metadata keep the others', async () => {
    const md = await run({ type: 'export_metadata', args: {} });
    assert.deepEqual(md.cron_triggers, [{ name: 'every_minute', webhook: `${rx.url}/never`, schedule: '*/5 * * * *', include_in_metadata: true }]);
    await run({ type: 'replace_metadata', args: md });
    // (the clock moved on: past events of every_minute were delivered; the window is full again)
    const future = async () => (await cronRows('every_minute')).filter((r) => r.status === 'scheduled').length;
    assert.equal(await future(), 100);
    assert.equal(await count("select count(*)::int as n from svc_catalog.hdb_cron_triggers where name = 'hourly_report'"), 1);
    // a restored trigger gets its window of events
    await run({ type: 'delete_cron_trigger', args: { name: 'every_minute' } });
    assert.equal((await cronRows('every_minute')).length, 0);
    await run({ type: 'replace_metadata', args: { ...md, cron_triggers: [{ ...md.cron_triggers[0], retry_conf: { num_retries: 2 }, comment: 'restored' }] } });
    assert.equal(await future(), 100);
    assert.equal((await cronRows('every_minute')).length, 100);
    const back = await run({ type: 'export_metadata', args: {} });
    assert.deepEqual(back.cron_triggers, [
      {
        name: 'every_minute',
        webhook: `${rx.url}/never`,
        schedule: '*/5 * * * *',
        include_in_metadata: true,
        retry_conf: { num_retries: 2, retry_interval_seconds: 10, timeout_seconds: 60, tolerance_seconds: 21600 },
        comment: 'restored',
      },
    ]);
    const bad = await runRaw({ type: 'replace_metadata', args: { ...md, cron_triggers: [{ ...md.cron_triggers[0], schedule: '* * *' }] } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.path, '$.cron_triggers[0].schedule');
    await run({ type: 'clear_metadata', args: {} });
    assert.equal(await count('select count(*)::int as n from svc_catalog.hdb_cron_triggers'), 1, 'clear_metadata keeps the trigger not in the metadata');
    assert.equal((await cronRows('every_minute')).length, 0);
  });

  test('delete_cron_trigger deletes the trigger and its events', async () => {
    assert.ok((await cronRows('hourly_report')).length > 0);
    await run({ type: 'delete_cron_trigger', args: { name: 'hourly_report' } });
    assert.equal(await count('select count(*)::int as n from svc_catalog.hdb_cron_triggers'), 0);
    assert.equal(await count('select count(*)::int as n from svc_catalog.hdb_cron_events'), 0);
    assert.equal(await count('select count(*)::int as n from svc_catalog.hdb_cron_event_invocation_logs'), 0);
  });
});

describe('bad input', () => {
  test('clear 400s naming the problem, nothing stored', async () => {
    const before = await rows(
      'select (select count(*)::int from svc_catalog.hdb_cron_triggers) as t, (select count(*)::int from svc_catalog.hdb_cron_events) as e, (select count(*)::int from svc_catalog.hdb_scheduled_events) as s',
    );
    const version = s.engine.cache.resourceVersion;
    const cron = (extra: Record<string, unknown>) => ({
      type: 'create_cron_trigger',
      args: { name: 'bad', webhook: rx.url, schedule: '* * * * *', include_in_metadata: false, ...extra },
    });
    const one = (extra: Record<string, unknown>) => ({ type: 'create_scheduled_event', args: { webhook: rx.url, schedule_at: iso(now), ...extra } });
    const cases: Array<[unknown, string, RegExp | string, string]> = [
      [cron({ schedule: '* * *' }), '$.schedule', /^invalid cron expression "\* \* \*": /, 'parse-failed'],
      [cron({ schedule: '61 * * * *' }), '$.schedule', /^invalid cron expression "61 \* \* \* \*": /, 'parse-failed'],
      [cron({ schedule: 'every day' }), '$.schedule', /^invalid cron expression "every day": /, 'parse-failed'],
      [cron({ schedule: '0 0 * * * *' }), '$.schedule', /^invalid cron expression "0 0 \* \* \* \*": expected 5 fields/, 'parse-failed'],
      [cron({ retry_conf: { num_retries: -1 } }), '$.retry_conf.num_retries', 'num_retries must be an integer from 0 to 1000000', 'parse-failed'],
      [
        cron({ retry_conf: { tolerance_seconds: -5 } }),
        '$.retry_conf.tolerance_seconds',
        'tolerance_seconds must be an integer from 0 to 315360000',
        'parse-failed',
      ],
      [
        cron({ retry_conf: { retry_interval_seconds: 1.5 } }),
        '$.retry_conf.retry_interval_seconds',
        'parsing Int failed, expected Number, but encountered Number',
        'parse-failed',
      ],
      [cron({ retry_conf: { timeout_seconds: 0 } }), '$.retry_conf.timeout_seconds', 'timeout_seconds must be an integer from 1 to 2147483', 'parse-failed'],
      [cron({ retry_conf: { retries: 1 } }), '$.retry_conf', 'unexpected key "retries"', 'parse-failed'],
      [cron({ webhook: '{{SVC_TEST_SCHED_UNSET}}/x' }), '$.webhook', 'environment variable "SVC_TEST_SCHED_UNSET" not set', 'not-exists'],
      [cron({ webhook: { from_env: 'SVC_TEST_SCHED_UNSET' } }), '$.webhook', 'environment variable "SVC_TEST_SCHED_UNSET" not set', 'not-exists'],
      [cron({ webhook: 'not a url' }), '$.webhook', 'not a valid URL: "not a url"', 'invalid-params'],
      [
        cron({ headers: [{ name: 'h', value_from_env: 'SVC_TEST_SCHED_UNSET' }] }),
        '$.headers',
        'environment variable "SVC_TEST_SCHED_UNSET" not set',
        'not-exists',
      ],
      [
        cron({ headers: [{ name: 'h', value: 'v', value_from_env: 'SVC_TEST_SCHED_HEADER' }] }),
        '$.headers[0]',
        'expecting exactly one of "value" or "value_from_env"',
        'parse-failed',
      ],
      [cron({ include_in_metadata: undefined }), '$', 'key "include_in_metadata" not found', 'parse-failed'],
      [{ type: 'delete_cron_trigger', args: { name: 'no_such_trigger' } }, '$.args', 'cron trigger with name: no_such_trigger does not exist', 'not-exists'],
      [one({ schedule_at: 'tomorrow' }), '$.schedule_at', 'schedule_at: not an ISO 8601 timestamp: "tomorrow"', 'parse-failed'],
      [one({ schedule_at: '2031-02-30T00:00:00Z' }), '$.schedule_at', 'schedule_at: not an ISO 8601 timestamp: "2031-02-30T00:00:00Z"', 'parse-failed'],
      [one({ schedule_at: 1700000000 }), '$.schedule_at', 'parsing Text failed, expected String, but encountered Number', 'parse-failed'],
      [one({ schedule_at: undefined }), '$', 'key "schedule_at" not found', 'parse-failed'],
      [one({ retry_conf: { num_retries: -2 } }), '$.retry_conf.num_retries', 'num_retries must be an integer from 0 to 1000000', 'parse-failed'],
      [one({ webhook: '{{SVC_TEST_SCHED_UNSET}}' }), '$.webhook', 'environment variable "SVC_TEST_SCHED_UNSET" not set', 'not-exists'],
      [one({ webhook: 'ftp://example.com/x' }), '$.webhook', 'webhook URL must use http or https: "ftp://example.com/x"', 'invalid-params'],
      // bulk is all-or-nothing: a good event followed by a bad one stores neither
      [{ type: 'bulk', args: [one({}), one({ schedule_at: 'nope' })] }, '$.schedule_at', 'schedule_at: not an ISO 8601 timestamp: "nope"', 'parse-failed'],
      [{ type: 'bulk', args: [cron({ name: 'good' }), cron({ schedule: 'x' })] }, '$.schedule', /^invalid cron expression "x"/, 'parse-failed'],
    ];
    const wrong: string[] = [];
    for (const [body, path, error, code] of cases) {
      const r = await runRaw(body);
      const ok =
        r.status === 400 && r.body.code === code && r.body.path === path && (typeof error === 'string' ? r.body.error === error : error.test(r.body.error));
      if (!ok) wrong.push(`${JSON.stringify(body)} → ${r.status} ${r.text}`);
    }
    assert.deepEqual(wrong, []);
    const afterRows = await rows(
      'select (select count(*)::int from svc_catalog.hdb_cron_triggers) as t, (select count(*)::int from svc_catalog.hdb_cron_events) as e, (select count(*)::int from svc_catalog.hdb_scheduled_events) as s',
    );
    assert.deepEqual(afterRows, before);
    assert.equal(s.engine.cache.resourceVersion, version, 'the metadata did not change');
  });
});

describe('observability', () => {
  test('metrics per queue and a webhook-log line per try', async () => {
    const text = await (await fetch(`${s.url}/v1/metrics`, { headers: { 'x-svc-role': 'admin' } })).text();
    const metric = (name: string, queue: string) => Number(new RegExp(`^${name}\\{queue="${queue}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    assert.ok(metric('svc_scheduled_deliveries_delivered_total', 'scheduled') >= 3, text);
    assert.ok(metric('svc_scheduled_deliveries_failed_total', 'scheduled') >= 4);
    assert.ok(metric('svc_scheduled_deliveries_errored_total', 'scheduled') >= 2);
    assert.ok(metric('svc_scheduled_events_dead_total', 'scheduled') >= 2);
    assert.ok(metric('svc_scheduled_deliveries_delivered_total', 'cron') >= 1);
    assert.ok(Number(/^svc_cron_events_generated_total (\S+)$/m.exec(text)?.[1]) >= 100);
    assert.ok(Number.isFinite(metric('svc_scheduled_queue_depth', 'scheduled')));
    const tries = logLines.filter((l) => l.type === 'webhook-log' && (l.detail.queue === 'scheduled' || l.detail.queue === 'cron'));
    assert.ok(tries.length >= 5);
    const ok = tries.find((l) => l.detail.status === 200)!;
    assert.deepEqual(Object.keys(ok.detail).sort(), ['event_id', 'latency_ms', 'next', 'queue', 'status', 'try', 'url']);
    assert.equal(ok.level, 'info');
    assert.ok(!JSON.stringify(tries).includes('static-value'), 'no headers in log lines');
    assert.ok(logLines.some((l) => l.type === 'scheduled-trigger' && l.detail.dead >= 1));
  });
});

describe('time', () => {
  test('a process that was down for an hour delivers what is due within tolerance and marks the rest dead, once', async () => {
    const db: TestDatabase = await createTestDatabase();
    let t0 = Date.parse('2031-05-01T10:00:30Z');
    const a = await startTestServer({ databaseUrl: db.url, eventsFetchInterval: 50 });
    try {
      a.engine.clock = () => t0;
      await query(
        a.url,
        {
          type: 'create_cron_trigger',
          args: { name: 'minutely', webhook: `${rx.url}/down`, schedule: '* * * * *', include_in_metadata: false, retry_conf: { tolerance_seconds: 1800 } },
        },
        { 'x-svc-role': 'admin' },
      );
    } finally {
      await a.close();
    }
    // an hour later (10:00:30 → 11:00:30): events 10:01 … 11:00 are due; 10:31 … 11:00 within 30 minutes
    t0 += 3_600_000;
    const b = await startTestServer({ databaseUrl: db.url, eventsFetchInterval: 50, schedulerClock: `${iso(t0)}x0.000001` });
    try {
      const st = async () =>
        Object.fromEntries(
          (
            await sql(
              db.url,
              "select status, count(*)::int as n from svc_catalog.hdb_cron_events where scheduled_time <= '2031-05-01T11:00:30Z' group by status",
            )
          ).map((r) => [r.status, r.n]),
        );
      await waitFor('30 delivered, 30 dead', async () => JSON.stringify(await st()) === JSON.stringify({ dead: 30, delivered: 30 }), 15_000);
      await new Promise((res) => setTimeout(res, 500));
      const got = rx.requests.filter((x) => x.path === '/down');
      assert.equal(got.length, 30);
      assert.equal(new Set(got.map((x) => x.body.id)).size, 30);
      assert.deepEqual(
        got.map((x) => x.body.scheduled_time).sort(),
        Array.from({ length: 30 }, (_, i) => `2031-05-01T10:${String(31 + i).padStart(2, '0')}:00Z`.replace('10:60', '11:00')),
      );
      assert.deepEqual(await st(), { dead: 30, delivered: 30 });
    } finally {
      await b.close();
      await db.drop();
    }
  });
});

describe('embedded PostgreSQL', () => {
  test('one-off and cron events are delivered on the embedded default (PGlite) too', { timeout: 120_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-sched-'));
    const config = { ...defaultConfig(), port: 0, host: '127.0.0.1', dataDir, logLevel: 'error' as const, enabledLogTypes: [], eventsFetchInterval: 50 };
    delete config.databaseUrl;
    const svc = await startSvc(config, createLogger(config, devnull()));
    try {
      let clock = Date.parse('2031-07-01T00:00:30Z');
      svc.engine.clock = () => clock;
      const q = (body: unknown) => query(svc.url, body, { 'x-svc-role': 'admin' });
      const r = await q({ type: 'create_scheduled_event', args: { webhook: `${rx.url}/pglite-once`, schedule_at: iso(clock), payload: { embedded: true } } });
      const [got] = await rx.waitFor(1, (x) => x.path === '/pglite-once');
      assert.equal(got!.body.id, r.event_id);
      assert.deepEqual(got!.body.payload, { embedded: true });
      await q({
        type: 'create_cron_trigger',
        args: { name: 'pglite_cron', webhook: `${rx.url}/pglite-cron`, schedule: '* * * * *', include_in_metadata: true },
      });
      const window = await q({ type: 'run_sql', args: { sql: "select count(*) from svc_catalog.hdb_cron_events where trigger_name = 'pglite_cron'" } });
      assert.equal(window.result[1][0], '100');
      clock += 60_000;
      const [cron] = await rx.waitFor(1, (x) => x.path === '/pglite-cron');
      assert.equal(cron!.body.name, 'pglite_cron');
      assert.equal(cron!.body.scheduled_time, '2031-07-01T00:01:00Z');
      await waitFor('statuses', async () => {
        const st = await q({
          type: 'run_sql',
          args: {
            sql: "select (select status from svc_catalog.hdb_scheduled_events limit 1) || ',' || (select status from svc_catalog.hdb_cron_events order by scheduled_time limit 1)",
          },
        });
        return st.result[1][0] === 'delivered,delivered';
      });
    } finally {
      await svc.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
