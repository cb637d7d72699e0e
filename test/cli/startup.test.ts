/**
 * `svc serve --migrations-dir D --metadata-dir M`: two processes started together on one empty
 * database apply each migration exactly once, then both serve the metadata; a failing migration
 * or a metadata the server refuses stops the start (exit 1, the file and the reason in the
 * message) and leaves nothing half-applied.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createTestDatabase, sql, type TestDatabase } from '../helpers/db.js';
import { cleanEnv, freePort, spawnSvc, startSvcProcess, type SvcProcess } from '../helpers/process.js';
import { query } from '../helpers/server.js';
import { tempDir } from './helpers.js';

const dbs: TestDatabase[] = [];
const procs: SvcProcess[] = [];
let tmp: { dir: string; remove(): void };

before(() => {
  tmp = tempDir();
});

after(async () => {
  for (const p of procs) await p.stop(5_000);
  for (const d of dbs) await d.drop();
  tmp?.remove();
});

function writeTree(root: string, files: Record<string, string>): string {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const TABLES_YAML = `- table:
    schema: public
    name: author
  array_relationships:
  - name: books
    using:
      foreign_key_constraint_on:
        table:
          schema: public
          name: book
        column: author_id
- table:
    schema: public
    name: book
`;

const GOOD = {
  // every migration records that it ran: a second run would add a second row
  'migrations/1_runs/up.sql': 'create table runs (n int not null);\ninsert into runs values (1);\n',
  'migrations/2_author/up.sql': 'select pg_sleep(0.3);\ncreate table author (id serial primary key, name text);\ninsert into runs values (2);\n',
  'migrations/3_book/up.sql': 'create table book (id serial primary key, author_id int references author (id));\ninsert into runs values (3);\n',
  'migrations/3_book/down.sql': 'drop table book;\n',
  'metadata/version.yaml': 'version: 2\n',
  'metadata/tables.yaml': TABLES_YAML,
};

test('two instances started together on one empty database apply each migration exactly once', { timeout: 300_000 }, async () => {
  const db = await createTestDatabase();
  dbs.push(db);
  const dir = writeTree(join(tmp.dir, 'good'), GOOD);
  const args = [
    '--database-url',
    db.url,
    '--migrations-dir',
    join(dir, 'migrations'),
    '--metadata-dir',
    join(dir, 'metadata'),
    '--enabled-log-types',
    'startup',
  ];
  const started = await Promise.allSettled([startSvcProcess(args, cleanEnv(), 120_000), startSvcProcess(args, cleanEnv(), 120_000)]);
  for (const s of started) if (s.status === 'fulfilled') procs.push(s.value.proc);
  for (const s of started) if (s.status === 'rejected') throw s.reason;
  const [a, b] = started.map((s) => (s as PromiseFulfilledResult<Awaited<ReturnType<typeof startSvcProcess>>>).value);

  assert.deepEqual(await sql(db.url, 'select n, count(*)::int as c from runs group by n order by n'), [
    { n: 1, c: 1 },
    { n: 2, c: 1 },
    { n: 3, c: 1 },
  ]);
  assert.deepEqual(await sql(db.url, 'select version::int as v, dirty from svc_catalog.schema_migrations order by version'), [
    { v: 1, dirty: false },
    { v: 2, dirty: false },
    { v: 3, dirty: false },
  ]);
  // the logs agree: three migrations applied, by one process or the other
  const appliedLines = [a!, b!]
    .flatMap((s) => s.proc.output().split('\n'))
    .filter((l) => l.includes('"kind":"migration_applied"') && l.includes('"concurrent":false'));
  assert.equal(appliedLines.length, 3, [a!.proc.output(), b!.proc.output()].join('\n----\n'));
  // both serve the metadata
  for (const s of [a!, b!]) {
    const md = await query(s.url, { type: 'export_metadata', args: {} });
    assert.deepEqual(
      md.tables.map((t: { table: { name: string } }) => t.table.name),
      ['author', 'book'],
    );
    const g = await fetch(`${s.url}/v1/graphql`, { method: 'POST', body: JSON.stringify({ query: '{ author { books { id } } }' }) }).then((r) => r.json());
    assert.deepEqual(g, { data: { author: [] } });
  }

  // a restart finds everything applied and changes nothing (no new metadata version)
  const before = await sql<{ v: string }>(db.url, 'select resource_version::text as v from svc_catalog.svc_metadata');
  await a!.proc.stop(5_000);
  const again = await startSvcProcess(args, cleanEnv(), 120_000);
  procs.push(again.proc);
  assert.match(again.proc.output(), /migrations: the database is up to date/);
  assert.match(again.proc.output(), /metadata: the server already has it/);
  assert.deepEqual(await sql(db.url, 'select resource_version::text as v from svc_catalog.svc_metadata'), before);
});

async function failedStart(args: string[]): Promise<{ code: number | null; output: string }> {
  const port = await freePort();
  const p = spawnSvc(['serve', ...args, '--server-port', String(port), '--server-host', '127.0.0.1', '--enabled-log-types', 'startup'], cleanEnv(), 120_000);
  procs.push(p);
  const { code } = await p.exited;
  return { code, output: p.output() };
}

test('a failing migration stops the start and leaves nothing of it', { timeout: 300_000 }, async () => {
  const db = await createTestDatabase();
  dbs.push(db);
  const dir = writeTree(join(tmp.dir, 'bad'), {
    'migrations/1_ok/up.sql': 'create table ok_table (id int);\n',
    'migrations/2_bad/up.sql': 'create table half_done (id int);\ncreate tabel broken (id int);\n',
    'migrations/3_never/up.sql': 'create table never_reached (id int);\n',
  });
  const r = await failedStart(['--database-url', db.url, '--migrations-dir', join(dir, 'migrations')]);
  assert.equal(r.code, 1, r.output);
  assert.match(
    r.output,
    /svc: failed to start: applying the migrations failed: migration 2_bad \(up\) failed\n {2}file: .*migrations\/2_bad\/up\.sql\n {2}error: syntax error at or near "tabel" \(SQLSTATE 42601\)/,
  );
  assert.deepEqual(
    await sql(db.url, "select to_regclass('ok_table')::text as a, to_regclass('half_done')::text as b, to_regclass('never_reached')::text as c"),
    [{ a: 'ok_table', b: null, c: null }],
  );
  assert.deepEqual(await sql(db.url, 'select version::int as v from svc_catalog.schema_migrations'), [{ v: 1 }]);
});

test('metadata the server refuses stops the start; the metadata is unchanged', { timeout: 300_000 }, async () => {
  const db = await createTestDatabase();
  dbs.push(db);
  const dir = writeTree(join(tmp.dir, 'badmd'), {
    'migrations/1_author/up.sql': 'create table author (id serial primary key);\n',
    'metadata/version.yaml': 'version: 2\n',
    'metadata/tables.yaml': '- table:\n    schema: public\n    name: no_such_table\n',
  });
  const r = await failedStart(['--database-url', db.url, '--migrations-dir', join(dir, 'migrations'), '--metadata-dir', join(dir, 'metadata')]);
  assert.equal(r.code, 1, r.output);
  assert.match(
    r.output,
    /svc: failed to start: applying the metadata failed: the server refused the metadata: cannot continue due to inconsistent metadata \(unexpected at \$\.args\)\n {2}inconsistent table public\.no_such_table: no such table\/view exists in postgres: "no_such_table"/,
  );
  assert.deepEqual(await sql(db.url, "select metadata::jsonb -> 'tables' as t from svc_catalog.svc_metadata"), [{ t: [] }]);
  // a metadata directory that is not one is refused before anything is touched
  const r2 = await failedStart(['--database-url', db.url, '--metadata-dir', join(dir, 'migrations')]);
  assert.equal(r2.code, 1, r2.output);
  assert.match(r2.output, /cannot read the project files: .*not a metadata directory: it has no version\.yaml/);
});
