/**
 * Event-trigger delivery against a real webhook receiver (issue 14): payloads field by field for
 * insert/update/delete/manual, listened and payload columns, headers from values and from the
 * environment, session variables of a GraphQL mutation, retries with `interval_sec` and
 * `Retry-After`, timeouts and closed sockets as client errors, the final `error`, redeliver_event,
 * the invocation log rows, archived events of a deleted trigger, and bad input.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, beforeEach, describe, test } from 'node:test';
import { postGraphql, postQuery, query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';
import { sql } from '../helpers/db.js';
import { Receiver } from '../helpers/receiver.js';

let s: TestServer;
let rx: Receiver;
const logLines: any[] = [];

const run = (body: unknown) => query(s.url, body, { 'x-svc-role': 'admin' });
const runRaw = (body: unknown) => postQuery(s.url, body, { 'x-svc-role': 'admin' });
const rows = (text: string, values: unknown[] = []) => sql(s.databaseUrl, text, values);

before(async () => {
  rx = await new Receiver().start();
  process.env.SVC_TEST_EVENT_HEADER = 'from-env';
  process.env.SVC_TEST_EVENT_URL = rx.url;
  s = await startTestServer(
    { eventsFetchInterval: 50, logLevel: 'info', enabledLogTypes: ['webhook-log'] },
    new Writable({
      write(chunk, _enc, cb) {
        for (const line of String(chunk).split('\n')) if (line.trim()) logLines.push(JSON.parse(line));
        cb();
      },
    }),
  );
  await run({
    type: 'bulk',
    args: [
      {
        type: 'run_sql',
        args: { sql: 'create table item (id int primary key, name text, price int, secret text, doc json); create table untracked (id int);' },
      },
      { type: 'track_table', args: { table: 'item' } },
      { type: 'create_insert_permission', args: { table: 'item', role: 'user', permission: { check: {}, columns: ['id', 'name', 'price'] } } },
      { type: 'create_select_permission', args: { table: 'item', role: 'user', permission: { filter: {}, columns: ['id'] } } },
    ],
  });
});

after(async () => {
  await s?.close();
  await rx?.close();
  delete process.env.SVC_TEST_EVENT_HEADER;
  delete process.env.SVC_TEST_EVENT_URL;
});

beforeEach(() => {
  rx.reset();
});

async function trigger(name: string, extra: Record<string, unknown>): Promise<void> {
  await run({ type: 'create_event_trigger', args: { name, table: 'item', webhook: `${rx.url}/${name}`, ...extra } });
}
const drop = (name: string) => run({ type: 'delete_event_trigger', args: { name } });
const forTrigger = (name: string) => (r: { body: any }) => r.body?.trigger?.name === name;

describe('payloads', () => {
  test('insert, update and delete: the payload of payload.rst, field by field, with headers and session variables', async () => {
    await trigger('all_ops', {
      insert: { columns: '*' },
      update: { columns: '*' },
      delete: { columns: '*' },
      headers: [
        { name: 'X-Static', value: 'static-value' },
        { name: 'X-From-Env', value_from_env: 'SVC_TEST_EVENT_HEADER' },
      ],
      retry_conf: { num_retries: 3, interval_sec: 5, timeout_sec: 10 },
    });
    // a GraphQL mutation by a role: its session variables travel with the event
    const ins = await postGraphql(
      s.url,
      { query: 'mutation { insert_item_one(object: {id: 1, name: "a", price: 10}) { id } }' },
      { 'x-svc-role': 'user', 'x-svc-user-id': '42' },
    );
    assert.equal(ins.status, 200);
    assert.deepEqual(ins.body, { data: { insert_item_one: { id: 1 } } });
    await run({
      type: 'run_sql',
      args: { sql: 'update item set price = 11 where id = 1; update item set price = 11 where id = 1; delete from item where id = 1;' },
    });
    const got = await rx.waitFor(3, forTrigger('all_ops'));
    const [i, u, d] = ['INSERT', 'UPDATE', 'DELETE'].map((op) => got.find((r) => r.body.event.op === op)!);
    assert.ok(i && u && d, 'one request per operation');
    // the second update changed nothing: no event for it
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(rx.requests.filter(forTrigger('all_ops')).length, 3);

    assert.deepEqual(Object.keys(i.body).sort(), ['created_at', 'delivery_info', 'event', 'id', 'table', 'trigger']);
    assert.deepEqual(i.body.event, {
      op: 'INSERT',
      data: { old: null, new: { id: 1, name: 'a', price: 10, secret: null, doc: null } },
      session_variables: { 'x-svc-role': 'user', 'x-svc-user-id': '42' },
    });
    assert.deepEqual(i.body.trigger, { name: 'all_ops' });
    assert.deepEqual(i.body.table, { schema: 'public', name: 'item' });
    assert.deepEqual(i.body.delivery_info, { max_retries: 3, current_retry: 0 });
    assert.match(i.body.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.match(i.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.ok(Math.abs(Date.parse(i.body.created_at) - Date.now()) < 60_000);
    assert.deepEqual(u.body.event.data, {
      old: { id: 1, name: 'a', price: 10, secret: null, doc: null },
      new: { id: 1, name: 'a', price: 11, secret: null, doc: null },
    });
    assert.equal(u.body.event.session_variables, null);
    assert.deepEqual(d.body.event.data, { old: { id: 1, name: 'a', price: 11, secret: null, doc: null }, new: null });
    assert.equal(i.headers['content-type'], 'application/json');
    assert.equal(i.headers['x-static'], 'static-value');
    assert.equal(i.headers['x-from-env'], 'from-env');
    assert.equal(i.path, '/all_ops');

    // the event log and one invocation log per try
    await waitFor(
      'three delivered events',
      async () => Number((await rows("select count(*)::int as n from svc_catalog.event_log where trigger_name = 'all_ops' and delivered"))[0]!.n) === 3,
    );
    const log = await rows(
      "select e.id, e.tries, e.locked, e.error, i.status, i.request, i.response from svc_catalog.event_log e join svc_catalog.event_invocation_logs i on i.event_id = e.id where e.trigger_name = 'all_ops' and e.payload->>'op' = 'INSERT'",
    );
    assert.equal(log.length, 1);
    assert.equal(log[0]!.id, i.body.id);
    assert.equal(log[0]!.tries, 1);
    assert.equal(log[0]!.locked, false);
    assert.equal(log[0]!.status, 200);
    assert.deepEqual((log[0]!.request as any).payload, i.body);
    assert.deepEqual((log[0]!.request as any).headers, [
      { name: 'X-Static', value: 'static-value' },
      { name: 'X-From-Env', value: 'from-env' },
    ]);
    assert.equal((log[0]!.request as any).version, '2');
    assert.equal((log[0]!.response as any).type, 'webhook_response');
    assert.equal((log[0]!.response as any).data.status, 200);
    assert.equal((log[0]!.response as any).data.body, '{"ok":true}');
    await drop('all_ops');
  });

  test('update fires only when a listened column changed (json columns too); payload sends the selected columns', async () => {
    await run({ type: 'run_sql', args: { sql: "insert into item values (2, 'b', 20, 's', '{}')" } });
    await trigger('listened', { update: { columns: ['price', 'doc'], payload: ['id', 'price'] } });
    await run({
      type: 'run_sql',
      args: {
        sql: "update item set name = 'bb', secret = 't' where id = 2; update item set doc = '{\"a\":1}' where id = 2; update item set price = 21 where id = 2;",
      },
    });
    const got = await rx.waitFor(2, forTrigger('listened'));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(rx.requests.filter(forTrigger('listened')).length, 2, 'the update of unlisted columns is not an event');
    assert.deepEqual(
      got.map((r) => r.body.event.data),
      [
        { old: { id: 2, price: 20 }, new: { id: 2, price: 20 } },
        { old: { id: 2, price: 20 }, new: { id: 2, price: 21 } },
      ],
    );
    await drop('listened');
    await run({ type: 'run_sql', args: { sql: 'delete from item' } });
  });

  test('invoke_event_trigger: op MANUAL with the given payload; refused without enable_manual', async () => {
    await trigger('manual_on', { enable_manual: true });
    await trigger('manual_off', { insert: { columns: '*' } });
    const r = await run({ type: 'invoke_event_trigger', args: { name: 'manual_on', payload: { some_key: 'some_value' } } });
    assert.match(r.event_id, /^[0-9a-f-]{36}$/);
    const [got] = await rx.waitFor(1, forTrigger('manual_on'));
    assert.equal(got!.body.id, r.event_id);
    assert.equal(got!.body.event.op, 'MANUAL');
    assert.deepEqual(got!.body.event.data, { old: null, new: { some_key: 'some_value' } });
    const off = await runRaw({ type: 'invoke_event_trigger', args: { name: 'manual_off', payload: {} } });
    assert.equal(off.status, 400);
    assert.deepEqual(off.body, { path: '$.args', error: 'manual mode is not enabled for event trigger', code: 'not-supported' });
    const unknown = await runRaw({ type: 'invoke_event_trigger', args: { name: 'nope', payload: {} } });
    assert.equal(unknown.status, 400);
    assert.deepEqual(unknown.body, { path: '$.args', error: 'event trigger "nope" does not exist', code: 'not-exists' });
    await drop('manual_on');
    await drop('manual_off');
  });
});

describe('stopped and started again', () => {
  test('an event written while the workers are stopped is delivered once they start again', async () => {
    await trigger('restart', { insert: { columns: '*' } });
    await s.engine.workers.stop(1_000);
    let delivered = 0;
    try {
      await run({ type: 'run_sql', args: { sql: "insert into item (id, name) values (9001, 'while stopped')" } });
      // the row waits in the log, unclaimed
      const pending = await rows(
        `select count(*)::int as n from svc_catalog.event_log where trigger_name = 'restart' and not delivered and tries = 0 and locked_by is null`,
      );
      assert.equal(pending[0]!.n, 1);
      delivered = rx.requests.filter(forTrigger('restart')).length;
    } finally {
      await s.engine.workers.start();
    }
    assert.equal(delivered, 0);
    const [got] = await rx.waitFor(1, forTrigger('restart'));
    assert.equal(got!.body.event.data.new.name, 'while stopped');
    await drop('restart');
    await run({ type: 'run_sql', args: { sql: 'delete from item where id = 9001' } });
  });
});

describe('retries', () => {
  test('a failing webhook is tried 1 + num_retries times, interval_sec apart, then the event is `error`; redeliver_event starts again', async () => {
    rx.respond = () => ({ status: 500, body: 'boom' });
    await trigger('failing', { enable_manual: true, retry_conf: { num_retries: 2, interval_sec: 1, timeout_sec: 5 } });
    const { event_id } = await run({ type: 'invoke_event_trigger', args: { name: 'failing', payload: { n: 1 } } });
    const got = await rx.waitFor(3, forTrigger('failing'));
    assert.deepEqual(
      got.map((r) => r.body.delivery_info),
      [0, 1, 2].map((k) => ({ max_retries: 2, current_retry: k })),
    );
    for (let k = 1; k < 3; k++) assert.ok(got[k]!.at - got[k - 1]!.at >= 900, `retry ${k} waited interval_sec`);
    const ev = await waitFor(
      'the event marked error',
      async () => (await rows('select tries, error, delivered, locked from svc_catalog.event_log where id = $1 and error', [event_id]))[0],
    );
    assert.deepEqual(ev, { tries: 3, error: true, delivered: false, locked: false });
    const logs = await rows('select status, response from svc_catalog.event_invocation_logs where event_id = $1 order by created_at', [event_id]);
    assert.deepEqual(
      logs.map((l) => l.status),
      [500, 500, 500],
    );
    assert.deepEqual((logs[0]!.response as any).data.body, 'boom');
    await new Promise((r) => setTimeout(r, 1200));
    assert.equal(rx.requests.filter(forTrigger('failing')).length, 3, 'no try after the last retry');

    rx.respond = () => ({ status: 200 });
    assert.deepEqual(await run({ type: 'redeliver_event', args: { event_id } }), { message: 'success' });
    const again = await rx.waitFor(4, forTrigger('failing'));
    assert.deepEqual(again[3]!.body.delivery_info, { max_retries: 2, current_retry: 0 });
    await waitFor(
      'delivered after redeliver',
      async () => (await rows('select delivered from svc_catalog.event_log where id = $1', [event_id]))[0]!.delivered === true,
    );
    const missing = await runRaw({ type: 'redeliver_event', args: { event_id: '00000000-0000-0000-0000-000000000000' } });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, { path: '$.args', error: 'event not found', code: 'not-exists' });
    await drop('failing');
  });

  test('Retry-After of a non-2xx response sets the next try, even past num_retries (once)', async () => {
    let n = 0;
    rx.respond = () => (++n === 1 ? { status: 429, headers: { 'Retry-After': '2' } } : { status: 200 });
    await trigger('retry_after', { enable_manual: true, retry_conf: { num_retries: 0, interval_sec: 30, timeout_sec: 5 } });
    const { event_id } = await run({ type: 'invoke_event_trigger', args: { name: 'retry_after', payload: {} } });
    const got = await rx.waitFor(2, forTrigger('retry_after'));
    const gap = got[1]!.at - got[0]!.at;
    assert.ok(gap >= 1800 && gap < 10_000, `second try after Retry-After (2 s), got ${gap} ms`);
    await waitFor('delivered', async () => (await rows('select delivered, tries from svc_catalog.event_log where id = $1', [event_id]))[0]!.delivered === true);
    await drop('retry_after');
  });

  test('a timeout and a closed socket are client errors (status 1000) and failed tries', async () => {
    rx.respond = (r) => (r.body?.event?.data?.new?.kind === 'slow' ? { status: 200, delayMs: 3000 } : 'close');
    await trigger('client_errors', { enable_manual: true, retry_conf: { num_retries: 0, interval_sec: 1, timeout_sec: 1 } });
    const slow = await run({ type: 'invoke_event_trigger', args: { name: 'client_errors', payload: { kind: 'slow' } } });
    const closed = await run({ type: 'invoke_event_trigger', args: { name: 'client_errors', payload: { kind: 'close' } } });
    for (const id of [slow.event_id, closed.event_id]) {
      const logs = await waitFor(
        'an invocation log',
        async () => {
          const l = await rows(
            'select e.error, i.status, i.response from svc_catalog.event_invocation_logs i join svc_catalog.event_log e on e.id = i.event_id where i.event_id = $1',
            [id],
          );
          return l.length ? l : undefined;
        },
        10_000,
      );
      const log = logs![0];
      assert.equal(log!.status, 1000);
      assert.equal((log!.response as any).type, 'client_error');
      assert.equal(typeof (log!.response as any).data.message, 'string');
      assert.equal(log!.error, true);
    }
    const slowLog = await rows('select response from svc_catalog.event_invocation_logs where event_id = $1', [slow.event_id]);
    assert.match((slowLog[0]!.response as any).data.message, /timed out/);
    await drop('client_errors');
  });
});

describe('operations', () => {
  test('delete_event_trigger archives its pending events: kept in the log, never delivered', async () => {
    rx.respond = () => ({ status: 500 });
    await trigger('to_delete', { enable_manual: true, retry_conf: { num_retries: 5, interval_sec: 3600, timeout_sec: 5 } });
    const { event_id } = await run({ type: 'invoke_event_trigger', args: { name: 'to_delete', payload: {} } });
    await rx.waitFor(1, forTrigger('to_delete'));
    await drop('to_delete');
    assert.deepEqual(await rows('select archived, delivered, error from svc_catalog.event_log where id = $1', [event_id]), [
      { archived: true, delivered: false, error: false },
    ]);
  });

  test('webhook templates and webhook_from_env; an unset variable makes the trigger inconsistent at reload', async () => {
    await run({ type: 'create_event_trigger', args: { name: 'from_env', table: 'item', webhook_from_env: 'SVC_TEST_EVENT_URL', enable_manual: true } });
    await run({ type: 'create_event_trigger', args: { name: 'templated', table: 'item', webhook: '{{SVC_TEST_EVENT_URL}}/templated', enable_manual: true } });
    await run({ type: 'invoke_event_trigger', args: { name: 'from_env', payload: {} } });
    await run({ type: 'invoke_event_trigger', args: { name: 'templated', payload: {} } });
    const [t] = await rx.waitFor(1, forTrigger('templated'));
    assert.equal(t!.path, '/templated');
    await rx.waitFor(1, forTrigger('from_env'));
    const saved = process.env.SVC_TEST_EVENT_URL;
    delete process.env.SVC_TEST_EVENT_URL;
    try {
      await run({ type: 'reload_metadata', args: {} });
      const inc = await run({ type: 'get_inconsistent_metadata', args: {} });
      assert.equal(inc.is_consistent, false);
      const names = inc.inconsistent_objects.map((o: any) => o.definition.configuration.name).sort();
      assert.deepEqual(names, ['from_env']);
      assert.match(inc.inconsistent_objects[0].reason, /environment variable "SVC_TEST_EVENT_URL" not set/);
    } finally {
      process.env.SVC_TEST_EVENT_URL = saved;
      await run({ type: 'reload_metadata', args: {} });
    }
    await drop('from_env');
    await drop('templated');
  });

  test('bad input: clear 400s and nothing created', async () => {
    const before = JSON.stringify(await run({ type: 'export_metadata', args: {} }));
    const base = { name: 'bad', table: 'item', insert: { columns: '*' }, webhook: 'http://127.0.0.1:1/x' };
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['not a URL', { ...base, webhook: 'not a url' }, /not a valid URL/],
      ['not http', { ...base, webhook: 'ftp://127.0.0.1/x' }, /http or https/],
      [
        'value and value_from_env',
        { ...base, headers: [{ name: 'X', value: 'a', value_from_env: 'SVC_TEST_EVENT_HEADER' }] },
        /exactly one of "value" or "value_from_env"/,
      ],
      ['unset header variable', { ...base, headers: [{ name: 'X', value_from_env: 'SVC_TEST_NOT_SET' }] }, /environment variable "SVC_TEST_NOT_SET" not set/],
      ['negative retries', { ...base, retry_conf: { num_retries: -1 } }, /num_retries must be an integer from 0 to 1000000/],
      ['non-integer interval', { ...base, retry_conf: { interval_sec: 1.5 } }, /parsing Int failed/],
      ['untracked table', { ...base, table: 'untracked' }, /untracked/],
      [
        'unset webhook_from_env',
        { name: 'bad', table: 'item', insert: { columns: '*' }, webhook_from_env: 'SVC_TEST_NOT_SET' },
        /environment variable "SVC_TEST_NOT_SET" not set/,
      ],
    ];
    for (const [what, args, message] of cases) {
      const r = await runRaw({ type: 'create_event_trigger', args });
      assert.equal(r.status, 400, what);
      assert.match(r.body.error, message, what);
      assert.equal(typeof r.body.code, 'string', what);
    }
    assert.equal(JSON.stringify(await run({ type: 'export_metadata', args: {} })), before);
    assert.deepEqual(await rows("select proname from pg_proc where proname like 'notify_svc_bad%'"), []);
  });

  test('metrics: claimed, delivered, failed, retried, errored, in flight, latency and queue depth', async () => {
    const res = await fetch(`${s.url}/v1/metrics`, { headers: { 'x-svc-role': 'admin' } });
    assert.equal(res.status, 200);
    const text = await res.text();
    const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1]);
    assert.ok(value('svc_event_deliveries_claimed_total') >= 10, text);
    assert.ok(value('svc_event_deliveries_delivered_total') >= 6);
    assert.ok(value('svc_event_deliveries_failed_total') >= 5);
    assert.ok(value('svc_event_deliveries_retried_total') >= 3);
    assert.ok(value('svc_event_deliveries_errored_total') >= 3);
    assert.equal(value('svc_event_deliveries_in_flight'), 0);
    assert.ok(value('svc_event_delivery_latency_ms') > 0);
    assert.equal(Number.isFinite(value('svc_event_queue_depth')), true);
  });

  test('a webhook-log line per try: URL, status, latency; no bodies or headers', () => {
    const tries = logLines.filter((l) => l.type === 'webhook-log' && l.detail?.queue === 'event-trigger');
    assert.ok(tries.length >= 10);
    const ok = tries.find((l) => l.detail.status === 200)!;
    assert.equal(ok.level, 'info');
    assert.deepEqual(Object.keys(ok.detail).sort(), ['event_id', 'latency_ms', 'next', 'queue', 'status', 'try', 'url']);
    assert.match(ok.detail.url, /^http:\/\/127\.0\.0\.1:\d+\//);
    assert.ok(tries.some((l) => l.detail.status === 500 && l.detail.next === 'retry'));
    assert.ok(tries.some((l) => l.detail.status === null && typeof l.detail.error === 'string'));
    assert.equal(JSON.stringify(tries).includes('static-value'), false, 'no header values in logs');
  });
});
