/**
 * The table-change tracker (src/changes/tracker.ts) on real PostgreSQL: every tracked table
 * carries the statement-level trigger; a write through GraphQL, run_sql and a plain pg client each
 * bump the table's version; a transaction of many statements over two tables notifies once per
 * table; triggers follow track/untrack and renames; untracked tables give no signal; a lost LISTEN
 * connection makes every table count as changed once on reconnect. The embedded PGlite notifies too.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import type { ChangedTables } from '../../src/changes/tracker.js';
import { installedChangeTriggers } from '../../src/changes/tracker.js';
import { defaultConfig } from '../../src/config/config.js';
import { createLogger, startSvc } from '../../src/server/start.js';
import { devnull, postGraphql, query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';

const SECRET = 'adm1n';
const admin = { 'x-svc-admin-secret': SECRET };

/** Resolves with the next change event of the tracker that satisfies `pred` (bounded). */
function nextChange(s: TestServer, pred: (t: ChangedTables) => boolean, timeoutMs = 5_000): Promise<ChangedTables> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no matching table change within ${timeoutMs} ms`));
    }, timeoutMs);
    const off = s.engine.changes.subscribe((t) => {
      if (!pred(t)) return;
      clearTimeout(timer);
      off();
      resolve(t);
    });
  });
}
const has = (k: string) => (t: ChangedTables) => t === 'all' || t.has(k);

async function sql(url: string, text: string): Promise<pg.QueryResult> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await c.query(text);
  } finally {
    await c.end();
  }
}

describe('table changes on PostgreSQL', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ adminSecret: SECRET });
    await query(
      s.url,
      {
        type: 'bulk',
        args: [
          {
            type: 'run_sql',
            args: {
              sql: 'create table a (id int primary key, v text); create table b (id int primary key); create table untracked (id int); create view av as select * from a;',
            },
          },
          { type: 'track_table', args: { table: 'a' } },
          { type: 'track_table', args: { table: 'b' } },
          { type: 'track_table', args: { table: 'av' } },
        ],
      },
      admin,
    );
  });
  after(async () => {
    await s?.close();
  });

  test('tracked tables carry the trigger, views do not; the tracker listens', async () => {
    const installed = (await installedChangeTriggers(s.engine.db)).map((t) => `${t.schema}.${t.name}`).sort();
    assert.deepEqual(installed, ['public.a', 'public.b']);
    assert.equal(s.engine.changes.mode, 'notify');
    assert.equal(s.engine.changes.listening(), true);
    await waitFor('watched', async () => s.engine.changes.watched('public.a') || undefined);
    assert.equal(s.engine.changes.watched('public.av'), false);
    assert.equal(s.engine.changes.watched('public.untracked'), false);
  });

  test('what a statement reads: tables, through views and function bodies; dynamic SQL is unknown', async () => {
    await query(
      s.url,
      {
        type: 'run_sql',
        args: {
          sql: `create function f_sql(x int) returns setof b language sql stable as $$ select * from b where id = x and exists (select 1 from "untracked") $$;
            create function f_dyn() returns setof b language plpgsql stable as $$ begin return query execute 'select * from b'; end $$;
            create function f_calls() returns setof b language sql stable as $$ select * from f_sql(1) $$;`,
        },
      },
      admin,
    );
    await waitFor('catalog re-read', async () => (s.engine.changes.tablesRead('select 1 from "public"."f_calls"()') ?? []).length > 0 || undefined);
    const reads = (sql: string) => s.engine.changes.tablesRead(sql);
    assert.deepEqual(reads('select 1 from "public"."a" join "public"."b" on true'), ['public.a', 'public.b']);
    assert.deepEqual(reads('select 1 from "public"."av" as "_root"'), ['public.a']);
    assert.deepEqual(reads('select 1 from "public"."f_sql"(1)'), ['public.b', 'public.untracked']);
    assert.deepEqual(reads('select 1 from "public"."f_calls"()'), ['public.b', 'public.untracked']);
    assert.equal(reads('select 1 from "public"."f_dyn"()'), null);
    assert.deepEqual(reads('select "_root"."id" from "public"."a" as "_root"'), ['public.a']);
  });

  test('a GraphQL mutation bumps its table', async () => {
    const v = s.engine.changes.version('public.a');
    const got = nextChange(s, has('public.a'));
    const r = await postGraphql(s.url, { query: 'mutation { insert_a(objects: [{id: 1, v: "x"}]) { affected_rows } }' }, admin);
    assert.equal(r.body.data.insert_a.affected_rows, 1);
    await got;
    assert.ok(s.engine.changes.version('public.a') > v);
  });

  test('run_sql bumps its table', async () => {
    const v = s.engine.changes.version('public.b');
    const got = nextChange(s, has('public.b'));
    await query(s.url, { type: 'run_sql', args: { sql: 'insert into b values (1)' } }, admin);
    await got;
    assert.ok(s.engine.changes.version('public.b') > v);
  });

  test('a plain pg client: a transaction of many statements notifies once per table', async () => {
    const va = s.engine.changes.version('public.a');
    const vb = s.engine.changes.version('public.b');
    const n0 = s.engine.changes.stats.notifications;
    const seen = new Set<string>();
    const off = s.engine.changes.subscribe((t) => {
      if (t !== 'all') for (const k of t) seen.add(k);
    });
    const stmts = ['begin'];
    for (let i = 10; i < 60; i++) stmts.push(`insert into a values (${i}, 'y')`, `update b set id = id`);
    stmts.push('delete from a where id = 10', 'truncate untracked', 'commit');
    await sql(s.databaseUrl, stmts.join(';'));
    try {
      await waitFor('both tables', async () => (seen.has('public.a') && seen.has('public.b')) || undefined);
      // a marker write after it: once its notification is in, nothing more of the transaction can come
      const marker = nextChange(s, has('public.b'));
      await sql(s.databaseUrl, 'update b set id = id where false');
      await marker;
    } finally {
      off();
    }
    assert.ok(s.engine.changes.version('public.a') > va);
    assert.ok(s.engine.changes.version('public.b') > vb);
    // one notification per table for the transaction, one for the marker
    assert.equal(s.engine.changes.stats.notifications - n0, 3);
    assert.ok(!seen.has('public.untracked'));
  });

  test('a rolled-back transaction notifies nothing', async () => {
    const va = s.engine.changes.version('public.a');
    await sql(s.databaseUrl, "begin; insert into a values (1000, 'z'); rollback");
    const marker = nextChange(s, has('public.b'));
    await sql(s.databaseUrl, 'truncate b');
    await marker;
    assert.equal(s.engine.changes.version('public.a'), va);
  });

  test('triggers follow untrack, track and renames by run_sql', async () => {
    await query(s.url, { type: 'untrack_table', args: { table: 'b' } }, admin);
    assert.deepEqual(
      (await installedChangeTriggers(s.engine.db)).map((t) => t.name),
      ['a'],
    );
    await waitFor('b unwatched', async () => !s.engine.changes.watched('public.b') || undefined);
    await query(s.url, { type: 'run_sql', args: { sql: 'alter table a rename to a2' } }, admin);
    assert.deepEqual(
      (await installedChangeTriggers(s.engine.db)).map((t) => t.name),
      ['a2'],
    );
    await waitFor('a2 watched', async () => s.engine.changes.watched('public.a2') || undefined);
    const got = nextChange(s, has('public.a2'));
    await sql(s.databaseUrl, "insert into a2 values (2000, 'r')");
    await got;
    // dropped and created again by run_sql: the new table is tracked (same name) and gets a trigger
    await query(s.url, { type: 'run_sql', args: { sql: 'drop view av; drop table a2; create table a2 (id int primary key, v text)', cascade: true } }, admin);
    const tracked = (await query(s.url, { type: 'export_metadata', args: {} }, admin)).tables.map((t: any) => t.table.name);
    if (tracked.includes('a2'))
      assert.deepEqual(
        (await installedChangeTriggers(s.engine.db)).map((t) => t.name),
        ['a2'],
      );
    else assert.deepEqual(await installedChangeTriggers(s.engine.db), []);
  });

  test('a lost LISTEN connection: listening() false meanwhile, every table changed once on reconnect', async () => {
    await query(s.url, { type: 'run_sql', args: { sql: 'create table c (id int)' } }, admin);
    await query(s.url, { type: 'track_table', args: { table: 'c' } }, admin);
    const v = s.engine.changes.version('public.c');
    const r0 = s.engine.changes.stats.reconnects;
    const all = nextChange(s, (t) => t === 'all', 15_000);
    const killed = await sql(
      s.databaseUrl,
      `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = current_database() and query ilike 'listen %' and pid <> pg_backend_pid()`,
    );
    assert.equal(killed.rows[0].n, 1, 'one LISTEN connection (metadata sync and table changes share it)');
    await all;
    await waitFor('reconnected', async () => (s.engine.changes.stats.reconnects > r0 && s.engine.changes.listening()) || undefined, 15_000);
    assert.ok(s.engine.changes.version('public.c') > v);
    const got = nextChange(s, has('public.c'));
    await sql(s.databaseUrl, 'insert into c values (1)');
    await got;
  });
});

describe('partitions and --table-change-triggers', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ adminSecret: SECRET });
    await query(
      s.url,
      {
        type: 'bulk',
        args: [
          {
            type: 'run_sql',
            args: {
              sql: `create table ev (id int not null, at date not null) partition by range (at);
                create table ev_2025 partition of ev for values from ('2025-01-01') to ('2026-01-01');
                create table ev_2026 partition of ev for values from ('2026-01-01') to ('2027-01-01') partition by list (id);
                create table ev_2026_a partition of ev_2026 for values in (1, 2, 3);`,
            },
          },
          { type: 'track_table', args: { table: 'ev' } },
          { type: 'track_table', args: { table: 'ev_2026' } },
        ],
      },
      admin,
    );
  });
  after(async () => {
    await s?.close();
  });

  const key = (t: { schema: string; name: string; roots?: Array<{ schema: string; name: string }> }) =>
    [t.name, ...(t.roots ?? []).map((r) => r.name).sort()].join('>');

  test('a write straight into a partition (at any depth) signals every tracked ancestor', async () => {
    const installed = (await installedChangeTriggers(s.engine.db)).map(key).sort();
    assert.deepEqual(installed, ['ev', 'ev_2025>ev', 'ev_2026>ev', 'ev_2026_a>ev>ev_2026']);
    const v = s.engine.changes.version('public.ev');
    const got = nextChange(s, has('public.ev'));
    await sql(s.databaseUrl, "insert into ev_2025 values (1, '2025-06-01')");
    await got;
    assert.ok(s.engine.changes.version('public.ev') > v);
    const both = new Set<string>();
    const off = s.engine.changes.subscribe((t) => {
      if (t !== 'all') for (const k of t) both.add(k);
    });
    try {
      await sql(s.databaseUrl, "insert into ev_2026_a values (2, '2026-06-01')");
      await waitFor('ev and ev_2026', async () => (both.has('public.ev') && both.has('public.ev_2026')) || undefined);
    } finally {
      off();
    }
  });

  test('a partition created by run_sql gets its trigger', async () => {
    await query(s.url, { type: 'run_sql', args: { sql: "create table ev_2024 partition of ev for values from ('2024-01-01') to ('2025-01-01')" } }, admin);
    assert.ok((await installedChangeTriggers(s.engine.db)).map(key).includes('ev_2024>ev'));
    const got = nextChange(s, has('public.ev'));
    await sql(s.databaseUrl, "insert into ev_2024 values (1, '2024-06-01')");
    await got;
  });

  test('--table-change-triggers false drops the triggers: nothing is watched, readers poll', async () => {
    const off = await startTestServer({ adminSecret: SECRET, databaseUrl: s.databaseUrl, tableChangeTriggers: false });
    try {
      assert.deepEqual(await installedChangeTriggers(off.engine.db), []);
      await waitFor('unwatched', async () => !off.engine.changes.watched('public.ev') || undefined);
      // and a metadata change keeps them off
      await query(off.url, { type: 'run_sql', args: { sql: "create table ev_2023 partition of ev for values from ('2023-01-01') to ('2024-01-01')" } }, admin);
      assert.deepEqual(await installedChangeTriggers(off.engine.db), []);
    } finally {
      await off.close();
    }
  });
});

describe('table changes on the embedded PGlite', () => {
  let s: TestServer;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-changes-'));
    const config = {
      ...defaultConfig(),
      port: 0,
      host: '127.0.0.1',
      logLevel: 'error' as const,
      enabledLogTypes: [],
      dataDir: dir,
      databaseUrl: undefined,
      adminSecret: SECRET,
    };
    const svc = await startSvc(config, createLogger(config, devnull()));
    s = { url: svc.url, port: svc.port, engine: svc.engine, databaseUrl: '', close: () => svc.close() };
  });
  after(async () => {
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  test('notify mode; a GraphQL write bumps its table', async () => {
    await query(
      s.url,
      {
        type: 'bulk',
        args: [
          { type: 'run_sql', args: { sql: 'create table p (id int primary key)' } },
          { type: 'track_table', args: { table: 'p' } },
        ],
      },
      admin,
    );
    assert.equal(s.engine.changes.mode, 'notify');
    await waitFor('watched', async () => s.engine.changes.watched('public.p') || undefined);
    const got = nextChange(s, has('public.p'));
    const rp = await postGraphql(s.url, { query: 'mutation { insert_p(objects: [{id: 1}]) { affected_rows } }' }, admin);
    assert.equal(rp.body.data.insert_p.affected_rows, 1);
    await got;
  });
});
