/**
 * Event triggers under hostile names and values (issue 30, items 2 and 7): the database objects of
 * two triggers never collide whatever their names (long names imported with replace_metadata), the
 * sync re-installs what is missing and replaces objects of an older naming (also at start-up), and
 * create_event_trigger / redeliver_event / invoke_event_trigger refuse bad names and values with a
 * 400 (upstream's messages for names), changing nothing.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';
import { sql } from '../helpers/db.js';
import { Receiver } from '../helpers/receiver.js';

let s: TestServer;
let rx: Receiver;

const run = (body: unknown) => query(s.url, body, { 'x-svc-role': 'admin' });
const runRaw = (body: unknown) => postQuery(s.url, body, { 'x-svc-role': 'admin' });
const rows = (text: string, values: unknown[] = []) => sql(s.databaseUrl, text, values);
const exported = async () => JSON.stringify(await run({ type: 'export_metadata', args: {} }));

before(async () => {
  rx = await new Receiver().start();
  s = await startTestServer({ eventsFetchInterval: 50 });
  await run({
    type: 'bulk',
    args: [
      {
        type: 'run_sql',
        args: {
          sql: 'create table card (id int primary key, number text); create table note (id int primary key, body text); create table plain (id int primary key);',
        },
      },
      { type: 'track_table', args: { table: 'card' } },
      { type: 'track_table', args: { table: 'note' } },
      { type: 'track_table', args: { table: 'plain' } },
    ],
  });
});

after(async () => {
  await s?.close();
  await rx?.close();
});

beforeEach(() => rx.reset());

const spec = { insert: { columns: '*' }, update: { columns: '*' }, delete: { columns: '*' } };
const trig = (name: string, webhook: string) => ({
  name,
  definition: { enable_manual: false, ...spec },
  retry_conf: { num_retries: 0, interval_sec: 10, timeout_sec: 60 },
  webhook,
});

/** the metadata with `triggers` on the tables named: replace_metadata does not apply create_event_trigger's name rule */
async function withTriggers(triggers: Record<string, Array<{ name: string; webhook: string }>>): Promise<void> {
  const md = await run({ type: 'export_metadata', args: {} });
  for (const t of md.tables) t.event_triggers = (triggers[t.table.name] ?? []).map((x) => trig(x.name, x.webhook));
  await run({ type: 'replace_metadata', args: md });
}

describe('database objects of long names', () => {
  const base = 'a'.repeat(52);
  const alpha = `${base}_alpha`; // 58 characters
  const beta = `${base}_beta`;
  const sixty = 'b'.repeat(60);

  test('two 58-character names on two tables: each table goes to its own webhook only; deleting one keeps the other', async () => {
    await withTriggers({ card: [{ name: alpha, webhook: `${rx.url}/alpha` }], note: [{ name: beta, webhook: `${rx.url}/beta` }] });
    const fns = await rows(
      "select proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'svc_catalog' and proname like 'notify_svc_%' order by 1",
    );
    assert.equal(fns.length, 6, 'one function per (trigger, operation)');
    for (const f of fns) assert.ok(Buffer.byteLength(String(f.proname)) <= 63, String(f.proname));
    const trgs = await rows("select tgname, tgrelid::regclass::text as tbl from pg_trigger where tgname like 'notify_svc_%' order by 1");
    assert.equal(trgs.length, 6);

    await run({ type: 'run_sql', args: { sql: "insert into card values (1, '4111 1111 1111 1111'); insert into note values (1, 'hello');" } });
    await rx.waitFor(2);
    await new Promise((r) => setTimeout(r, 300));
    const byPath = (p: string) => rx.requests.filter((r) => r.path === p);
    assert.deepEqual(
      byPath('/alpha').map((r) => [r.body.trigger.name, r.body.table.name]),
      [[alpha, 'card']],
    );
    assert.deepEqual(
      byPath('/beta').map((r) => [r.body.trigger.name, r.body.table.name]),
      [[beta, 'note']],
    );

    // deleting alpha leaves beta's database objects in place
    await withTriggers({ note: [{ name: beta, webhook: `${rx.url}/beta` }] });
    rx.reset();
    await run({ type: 'run_sql', args: { sql: "insert into card values (2, 'x'); insert into note values (2, 'still captured');" } });
    const [got] = await rx.waitFor(1);
    assert.equal(got!.path, '/beta');
    assert.equal(got!.body.event.data.new.body, 'still captured');
    await withTriggers({});
    assert.deepEqual(await rows("select tgname from pg_trigger where tgname like 'notify_svc_%'"), []);
  });

  test('a 60-character name with insert, update and delete captures every operation', async () => {
    await withTriggers({ plain: [{ name: sixty, webhook: `${rx.url}/sixty` }] });
    await run({ type: 'run_sql', args: { sql: 'insert into plain values (1); update plain set id = 2 where id = 1; delete from plain where id = 2;' } });
    const got = await rx.waitFor(3);
    assert.deepEqual(got.map((r) => r.body.event.op).sort(), ['DELETE', 'INSERT', 'UPDATE']);
    await withTriggers({});
  });

  test('objects dropped behind its back or installed under an older (truncated) naming are put right: at the next change and at start-up', async () => {
    await run({ type: 'create_event_trigger', args: { name: 'short_one', table: 'plain', webhook: `${rx.url}/short`, insert: { columns: '*' } } });
    // someone drops the trigger: the run_sql's commit re-installs it
    await run({ type: 'run_sql', args: { sql: 'drop trigger "notify_svc_short_one_INSERT" on plain' } });
    await run({ type: 'run_sql', args: { sql: 'insert into plain values (10)' } });
    const [got] = await rx.waitFor(1);
    assert.equal(got!.body.trigger.name, 'short_one');
    await run({ type: 'delete_event_trigger', args: { name: 'short_one' } });

    // an installation of the old naming: the long name truncated to 63 bytes by PostgreSQL, no owner
    await withTriggers({ plain: [{ name: sixty, webhook: `${rx.url}/sixty` }] });
    const legacy = `notify_svc_${sixty}_INSERT`.slice(0, 63);
    await rows(`drop function svc_catalog."${(await rows("select proname from pg_proc where proname like 'notify_svc_b%INSERT'"))[0]!.proname}"() cascade`);
    await rows(
      `create function svc_catalog."${legacy}"() returns trigger language plpgsql as $$ begin insert into svc_catalog.event_log (schema_name, table_name, trigger_name, payload) values (TG_TABLE_SCHEMA, TG_TABLE_NAME, '${sixty}', '{"op":"LEGACY"}'); return null; end $$`,
    );
    await rows(`create trigger "${legacy}" after insert on plain for each row execute procedure svc_catalog."${legacy}"()`);
    const second = await startTestServer({ databaseUrl: s.databaseUrl, eventsFetchInterval: 50 });
    try {
      const names = (await rows("select proname from pg_proc where proname like 'notify_svc_%' order by 1")).map((r) => String(r.proname));
      assert.equal(names.includes(legacy), false, 'the legacy function is gone');
      assert.equal(names.length, 3);
      rx.reset();
      await run({ type: 'run_sql', args: { sql: 'insert into plain values (11)' } });
      const [ev] = await rx.waitFor(1);
      assert.equal(ev!.body.event.op, 'INSERT');
    } finally {
      await second.close();
    }
    await withTriggers({});
  });
});

describe('bad names and values: 400, nothing changed', () => {
  test('create_event_trigger: upstream name rule, header values without CR/LF, NUL and lone surrogates', async () => {
    const before = await exported();
    const base = { table: 'plain', insert: { columns: '*' }, webhook: `${rx.url}/x` };
    const chars = 'only alphanumeric and underscore and hyphens allowed for name';
    const cases: Array<[string, Record<string, unknown>, string, string]> = [
      ['43 characters', { ...base, name: 'a'.repeat(43) }, '$', 'event trigger name can be at most 42 characters'],
      ['10,000 characters', { ...base, name: 'a'.repeat(10_000) }, '$', 'event trigger name can be at most 42 characters'],
      ['sql in the name', { ...base, name: 'x;drop table plain;"' }, '$', chars],
      ['leading digit', { ...base, name: '1abc' }, '$', chars],
      ['NUL in the name', { ...base, name: 'ab\u0000c' }, '$.name', 'the NUL character (\\u0000) is not allowed'],
      ['lone surrogate in the name', { ...base, name: 'ab\ud800c' }, '$.name', 'lone surrogates are not allowed (the text is not valid Unicode)'],
      [
        'CRLF in a header value',
        { ...base, name: 'ok', headers: [{ name: 'X-A', value: 'a\r\nX-Injected: 1' }] },
        '$.headers[0].value',
        'a header value must not contain control characters (CR, LF, NUL …) or lone surrogates',
      ],
      ['bad header name', { ...base, name: 'ok', headers: [{ name: 'X A:', value: 'a' }] }, '$.headers[0].name', 'invalid header name "X A:"'],
    ];
    for (const [what, args, path, error] of cases) {
      const r = await runRaw({ type: 'create_event_trigger', args });
      assert.equal(r.status, 400, what);
      assert.deepEqual(r.body, { path, error, code: 'parse-failed' }, what);
    }
    const ok = await runRaw({ type: 'create_event_trigger', args: { ...base, name: `A${'b'.repeat(40)}-` } });
    assert.equal(ok.status, 200, '42 characters are fine');
    await run({ type: 'delete_event_trigger', args: { name: `A${'b'.repeat(40)}-` } });
    assert.equal(await exported(), before);
  });

  test('redeliver_event and invoke_event_trigger: NUL and lone surrogates are 400s', async () => {
    await run({ type: 'create_event_trigger', args: { name: 'manual', table: 'plain', webhook: `${rx.url}/m`, enable_manual: true } });
    const cases: Array<[string, unknown, string]> = [
      ['redeliver_event', { event_id: 'a\u0000b' }, '$.event_id'],
      ['redeliver_event', { event_id: '\udc00' }, '$.event_id'],
      ['invoke_event_trigger', { name: 'man\u0000ual', payload: {} }, '$.name'],
      ['invoke_event_trigger', { name: 'manual', payload: { k: 'a\u0000' } }, '$.payload.k'],
      ['invoke_event_trigger', { name: 'manual', payload: { k: ['\ud83d'] } }, '$.payload.k[0]'],
      ['invoke_event_trigger', { name: 'manual', payload: { ['\u0000']: 1 } }, '$.payload'],
    ];
    for (const [type, args, path] of cases) {
      const r = await runRaw({ type, args });
      assert.equal(r.status, 400, `${type} ${JSON.stringify(args)}`);
      assert.equal(r.body.path, path, `${type} ${JSON.stringify(args)}`);
      assert.equal(r.body.code, 'parse-failed');
    }
    assert.deepEqual(await rows("select count(*)::int as n from svc_catalog.event_log where trigger_name = 'manual'"), [{ n: 0 }]);
    // a surrogate pair is fine
    const fine = await run({ type: 'invoke_event_trigger', args: { name: 'manual', payload: { k: '\ud83d\ude00' } } });
    const [got] = await rx.waitFor(1);
    assert.equal(got!.body.id, fine.event_id);
    assert.equal(got!.body.event.data.new.k, '\ud83d\ude00');
    await run({ type: 'delete_event_trigger', args: { name: 'manual' } });
  });
});
