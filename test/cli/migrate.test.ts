/**
 * `svc init` and `svc migrate` against a real Svc process on a real database, the CLI run as a
 * child process: init → create two migrations → apply → status → down 1 → status → apply again;
 * a failing migration leaves nothing half-applied; --skip-execution, --version, --goto; squash;
 * seeds; the exit codes of user errors.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createTestDatabase, sql, type TestDatabase } from '../helpers/db.js';
import { cleanEnv, freePort, startSvcProcess, type SvcProcess } from '../helpers/process.js';
import { query } from '../helpers/server.js';
import { HttpClient } from '../../src/cli/client.js';
import { applyOne, ensureMigrationsTable, type Migration } from '../../src/cli/migrations.js';
import { svc, svcOk, tempDir } from './helpers.js';

let db: TestDatabase;
let proc: SvcProcess;
let url: string;
let tmp: { dir: string; remove(): void };
let project: string;

before(async () => {
  db = await createTestDatabase();
  const s = await startSvcProcess(['--database-url', db.url, '--enabled-log-types', 'startup'], cleanEnv());
  proc = s.proc;
  url = s.url;
  tmp = tempDir();
  project = join(tmp.dir, 'proj');
});

after(async () => {
  await proc?.stop(5_000);
  await db?.drop();
  tmp?.remove();
});

const inProject = {
  get cwd() {
    return project;
  },
};
const migrationDirs = () =>
  readdirSync(join(project, 'migrations'))
    .filter((f) => /^\d+_/.test(f))
    .sort();
const rows = async () =>
  (await sql<{ version: string; dirty: boolean }>(db.url, 'select version::text, dirty from svc_catalog.schema_migrations order by version')).map(
    (r) => `${r.version}:${r.dirty}`,
  );
const tableExists = async (name: string) => (await sql<{ t: string | null }>(db.url, 'select to_regclass($1)::text as t', [name]))[0]!.t !== null;
const status = async () =>
  (await svcOk(['migrate', 'status', '-o', 'json'], inProject)).json().migrations as Array<{
    version: string;
    name: string;
    source_status: string;
    database_status: string;
    dirty: boolean;
  }>;
const versionOf = (dir: string) => dir.split('_')[0]!;

test('svc init creates a config v2 project', async () => {
  const r = await svcOk(['init', 'proj', '--endpoint', url], { cwd: tmp.dir });
  assert.match(r.stdout, /created the project proj/);
  assert.equal(readFileSync(join(project, 'config.yaml'), 'utf8').split('\n')[0], 'version: 2');
  assert.match(readFileSync(join(project, 'config.yaml'), 'utf8'), new RegExp(`endpoint: ${url.replace(/[.]/g, '\\.')}`));
  for (const f of [
    'version.yaml',
    'tables.yaml',
    'functions.yaml',
    'actions.yaml',
    'actions.graphql',
    'remote_schemas.yaml',
    'query_collections.yaml',
    'allow_list.yaml',
    'cron_triggers.yaml',
    'rest_endpoints.yaml',
    'inherited_roles.yaml',
  ]) {
    assert.ok(existsSync(join(project, 'metadata', f)), f);
  }
  assert.ok(existsSync(join(project, 'migrations')));
  // a second init there is refused
  const again = await svc(['init', 'proj'], { cwd: tmp.dir });
  assert.equal(again.code, 3, again.stderr);
  assert.match(again.stderr, /already has a config\.yaml/);
});

test('create two migrations, apply, status, down 1, status, apply again', async () => {
  await svcOk(
    ['migrate', 'create', 'create_author', '--up-sql', 'create table author (id serial primary key, name text not null);', '--down-sql', 'drop table author;'],
    inProject,
  );
  const r = await svcOk(
    [
      'migrate',
      'create',
      'add_book',
      '--up-sql',
      'create table book (id serial primary key, title text, author_id int references author (id));',
      '--down-sql',
      'drop table book;',
      '-o',
      'json',
    ],
    inProject,
  );
  assert.equal(r.json().name, 'add_book');
  const dirs = migrationDirs();
  assert.equal(dirs.length, 2);
  assert.match(dirs[0]!, /^\d+_create_author$/);
  assert.match(dirs[1]!, /^\d+_add_book$/);
  assert.ok(BigInt(versionOf(dirs[0]!)) < BigInt(versionOf(dirs[1]!)));
  assert.equal(readFileSync(join(project, 'migrations', dirs[1]!, 'down.sql'), 'utf8'), 'drop table book;\n');

  let st = await status();
  assert.deepEqual(
    st.map((m) => [m.name, m.source_status, m.database_status]),
    [
      ['create_author', 'present', 'not present'],
      ['add_book', 'present', 'not present'],
    ],
  );

  const applied = await svcOk(['migrate', 'apply'], inProject);
  assert.match(applied.stdout, /applied \d+_create_author \(up\)/);
  assert.match(applied.stdout, /2 migrations applied/);
  assert.ok(await tableExists('book'));
  assert.deepEqual(
    await rows(),
    dirs.map((d) => `${versionOf(d)}:false`),
  );

  st = await status();
  assert.deepEqual(
    st.map((m) => [m.name, m.source_status, m.database_status, m.dirty]),
    [
      ['create_author', 'present', 'present', false],
      ['add_book', 'present', 'present', false],
    ],
  );
  const text = await svcOk(['migrate', 'status'], inProject);
  assert.match(text.stdout, /VERSION\s+NAME\s+SOURCE STATUS\s+DATABASE STATUS/);

  // nothing left: apply is a no-op
  assert.match((await svcOk(['migrate', 'apply'], inProject)).stdout, /nothing to apply/);

  const down = await svcOk(['migrate', 'apply', '--down', '1', '-o', 'json'], inProject);
  assert.deepEqual(
    down.json().applied.map((a: { name: string; direction: string }) => [a.name, a.direction]),
    [['add_book', 'down']],
  );
  assert.equal(await tableExists('book'), false);
  assert.ok(await tableExists('author'));
  st = await status();
  assert.deepEqual(
    st.map((m) => m.database_status),
    ['present', 'not present'],
  );

  await svcOk(['migrate', 'apply'], inProject);
  assert.ok(await tableExists('book'));
  st = await status();
  assert.deepEqual(
    st.map((m) => m.database_status),
    ['present', 'present'],
  );
});

test("a failing migration leaves nothing half-applied, names the file and PostgreSQL's message", async () => {
  await svcOk(
    ['migrate', 'create', 'bad', '--up-sql', "create table half_done (id int);\ninsert into author (name) values ('x');\ncreate tabel broken (id int);"],
    inProject,
  );
  const bad = migrationDirs().find((d) => d.endsWith('_bad'))!;
  const before = await rows();
  const r = await svc(['migrate', 'apply'], inProject);
  assert.equal(r.code, 5, r.stderr);
  assert.match(r.stderr, new RegExp(`migration ${bad} \\(up\\) failed`));
  assert.match(r.stderr, new RegExp(`file: migrations/${bad}/up\\.sql`));
  assert.match(r.stderr, /syntax error at or near "tabel" \(SQLSTATE 42601\)/);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  assert.equal(await tableExists('half_done'), false);
  assert.deepEqual(await sql(db.url, 'select * from author'), []);
  assert.deepEqual(await rows(), before);
  const st = await status();
  assert.equal(st.find((m) => m.name === 'bad')!.database_status, 'not present');

  const j = await svc(['migrate', 'apply', '-o', 'json'], inProject);
  assert.equal(j.code, 5);
  const e = j.json().error;
  assert.equal(e.code, 'migration-failed');
  assert.equal(e.file, `migrations/${bad}/up.sql`);
  assert.equal(e.postgres.status_code, '42601');
  assert.deepEqual(j.json().applied, [], 'what was applied before the failure, in the same JSON document');
  rmSync(join(project, 'migrations', bad), { recursive: true });
});

test('--version, --type, --skip-execution, --goto', async () => {
  await svcOk(['migrate', 'create', 'mark_only', '--up-sql', 'create table never_run (id int);', '--down-sql', 'drop table never_run;'], inProject);
  const v = versionOf(migrationDirs().find((d) => d.endsWith('_mark_only'))!);
  await svcOk(['migrate', 'apply', '--version', v, '--skip-execution'], inProject);
  assert.equal(await tableExists('never_run'), false);
  assert.equal((await status()).find((m) => m.version === v)!.database_status, 'present');
  await svcOk(['migrate', 'apply', '--version', v, '--type', 'down', '--skip-execution'], inProject);
  assert.equal((await status()).find((m) => m.version === v)!.database_status, 'not present');
  await svcOk(['migrate', 'apply', '--version', v, '--type', 'up'], inProject);
  assert.ok(await tableExists('never_run'));

  // --goto the first migration: everything after it rolled back, newest first
  const first = versionOf(migrationDirs()[0]!);
  const g = await svcOk(['migrate', 'apply', '--goto', first, '-o', 'json'], inProject);
  assert.deepEqual(
    g.json().applied.map((a: { name: string; direction: string }) => `${a.name}:${a.direction}`),
    ['mark_only:down', 'add_book:down'],
  );
  assert.deepEqual(
    (await status()).map((m) => m.database_status),
    ['present', 'not present', 'not present'],
  );
  await svcOk(['migrate', 'apply', '--up', '1'], inProject);
  assert.deepEqual(
    (await status()).map((m) => m.database_status),
    ['present', 'present', 'not present'],
  );
  await svcOk(['migrate', 'apply', '--up', 'all'], inProject);
  rmSync(
    join(
      project,
      'migrations',
      migrationDirs().find((d) => d.endsWith('_mark_only'))!,
    ),
    { recursive: true },
  );
  await svcOk(['migrate', 'apply', '--version', v, '--type', 'down', '--skip-execution'], inProject);
  await sql(db.url, 'drop table never_run');
});

test('one migration applied by two parties at once runs once: the other sees the bookkeeping row and skips', async () => {
  const client = new HttpClient({ endpoint: url, queryPath: 'v1/query', pgDumpPath: 'v1alpha1/pg_dump' });
  await ensureMigrationsTable(client);
  await sql(db.url, 'create table race_log (at timestamptz default clock_timestamp())');
  const m: Migration = {
    version: 42n,
    name: 'race',
    id: '42_race',
    location: '',
    up: [{ file: 'up.sql', requests: [{ type: 'run_sql', args: { sql: 'select pg_sleep(0.5); insert into race_log default values;' } }], empty: false }],
    down: [{ file: 'down.sql', requests: [{ type: 'run_sql', args: { sql: 'insert into race_log default values;' } }], empty: false }],
    files: [],
  };
  const ups = await Promise.all([applyOne(client, m, 'up', false, 0), applyOne(client, m, 'up', false, 0)]);
  assert.deepEqual(ups.map((r) => r.concurrent).sort(), [false, true]);
  assert.equal((await sql(db.url, 'select * from race_log')).length, 1);
  const downs = await Promise.all([applyOne(client, m, 'down', false, 0), applyOne(client, m, 'down', false, 0)]);
  assert.deepEqual(downs.map((r) => r.concurrent).sort(), [false, true]);
  assert.equal((await sql(db.url, 'select * from race_log')).length, 2);
  assert.equal((await sql(db.url, 'select * from svc_catalog.schema_migrations where version = 42')).length, 0);
  await sql(db.url, 'drop table race_log');
});

test('squash --delete-source: one migration replaces the sources, in the files and on the server', async () => {
  await svcOk(
    ['migrate', 'create', 'add_bio', '--up-sql', 'alter table author add column bio text;', '--down-sql', 'alter table author drop column bio;'],
    inProject,
  );
  await svcOk(
    ['migrate', 'create', 'add_isbn', '--up-sql', 'alter table book add column isbn text;', '--down-sql', 'alter table book drop column isbn;'],
    inProject,
  );
  await svcOk(['migrate', 'apply'], inProject);
  const from = versionOf(migrationDirs().find((d) => d.endsWith('_add_bio'))!);
  const r = await svcOk(['migrate', 'squash', '--from', from, '--name', 'bio_isbn', '--delete-source', '-o', 'json'], inProject);
  const out = r.json();
  assert.equal(out.squashed.length, 2);
  assert.equal(out.marked_applied, true);
  const dirs = migrationDirs();
  assert.deepEqual(
    dirs.map((d) => d.replace(/^\d+_/, '')),
    ['create_author', 'add_book', 'bio_isbn'],
  );
  const sq = join(project, 'migrations', dirs[2]!);
  const up = readFileSync(join(sq, 'up.sql'), 'utf8');
  const down = readFileSync(join(sq, 'down.sql'), 'utf8');
  assert.ok(up.indexOf('add column bio') < up.indexOf('add column isbn'), up);
  assert.ok(down.indexOf('drop column isbn') < down.indexOf('drop column bio'), down);
  const st = await status();
  assert.deepEqual(
    st.map((m) => [m.name, m.source_status, m.database_status]),
    [
      ['create_author', 'present', 'present'],
      ['add_book', 'present', 'present'],
      ['bio_isbn', 'present', 'present'],
    ],
  );
  // the squashed migration rolls back and applies like any other
  await svcOk(['migrate', 'apply', '--down', '1'], inProject);
  assert.deepEqual(
    await sql(db.url, "select column_name from information_schema.columns where table_name in ('author', 'book') and column_name in ('bio', 'isbn')"),
    [],
  );
  await svcOk(['migrate', 'apply'], inProject);
  assert.equal(
    (await sql(db.url, "select column_name from information_schema.columns where table_name in ('author', 'book') and column_name in ('bio', 'isbn')")).length,
    2,
  );
});

test('up.yaml / down.yaml steps (/v1/query requests) run with the SQL in the same transaction', async () => {
  const dir = join(project, 'migrations', '9999999999999_tags');
  mkdirSync(dir);
  writeFileSync(join(dir, 'up.sql'), 'create table tag (id serial primary key, label text);\n');
  writeFileSync(join(dir, 'up.yaml'), '- type: track_table\n  args:\n    table: tag\n');
  writeFileSync(join(dir, 'down.yaml'), '- type: untrack_table\n  args:\n    table: tag\n');
  writeFileSync(join(dir, 'down.sql'), 'drop table tag;\n');
  await svcOk(['migrate', 'apply'], inProject);
  const tracked = async () =>
    (await query(url, { type: 'export_metadata', args: {} })).tables?.some((t: { table: { name: string } }) => t.table.name === 'tag') ?? false;
  assert.equal(await tracked(), true);
  // down: untrack (down.yaml) before the drop (down.sql)
  await svcOk(['migrate', 'apply', '--down', '1'], inProject);
  assert.equal(await tracked(), false);
  assert.equal(await tableExists('tag'), false);
  // a failing YAML step rolls back the SQL before it too, and is named
  writeFileSync(join(dir, 'up.yaml'), '- type: track_table\n  args:\n    table: no_such_table\n');
  const r = await svc(['migrate', 'apply'], inProject);
  assert.equal(r.code, 5, r.stderr);
  assert.match(
    r.stderr,
    /file: migrations\/9999999999999_tags\/up\.yaml\n {2}error: no such table\/view exists in postgres : "no_such_table" \(not-exists\)\n/,
  );
  assert.equal(await tableExists('tag'), false);
  rmSync(dir, { recursive: true });
});

test('seeds: create and apply, all or nothing', async () => {
  writeFileSync(join(tmp.dir, 'authors.sql'), "insert into author (name) values ('Ada'), ('Brian');\n");
  await svcOk(['seed', 'create', 'authors', '--sql-from-file', join(tmp.dir, 'authors.sql')], inProject);
  await svcOk(['seed', 'apply'], inProject);
  assert.deepEqual(
    (await sql<{ name: string }>(db.url, 'select name from author order by name')).map((r) => r.name),
    ['Ada', 'Brian'],
  );
  const dumped = await svcOk(['seed', 'create', 'author_rows', '--from-table', 'author', '-o', 'json'], inProject);
  assert.match(readFileSync(dumped.json().file, 'utf8'), /INSERT INTO public\.author/);
  rmSync(dumped.json().file);
  // a failing seed file: none of the files is applied
  await svcOk(['seed', 'create', 'broken', '--sql-from-file', join(tmp.dir, 'authors.sql')], inProject);
  const broken = readdirSync(join(project, 'seeds')).find((f) => f.endsWith('_broken.sql'))!;
  writeFileSync(join(project, 'seeds', broken), 'insert into nope values (1);\n');
  const r = await svc(['seed', 'apply'], inProject);
  assert.equal(r.code, 5, r.stderr);
  assert.match(r.stderr, new RegExp(`seed seeds/${broken} failed`));
  assert.match(r.stderr, /relation "nope" does not exist/);
  assert.equal((await sql(db.url, 'select * from author')).length, 2);
  await sql(db.url, 'delete from author');
});

test('user errors: usage (2), project (3), server (4); --help with examples and exit codes', async () => {
  const help = await svcOk(['migrate', 'apply', '--help'], inProject);
  assert.match(help.stdout, /Examples:\n/);
  assert.match(help.stdout, /--skip-execution/);
  assert.match(help.stdout, /Exit codes:\n\s+0\s/);
  const group = await svcOk(['metadata', '--help'], inProject);
  assert.match(group.stdout, /inconsistency/);
  const top = await svcOk(['--help']);
  assert.match(top.stdout, /migrate\s+create \| apply \| status \| squash/);

  const flag = await svc(['migrate', 'apply', '--bogus'], inProject);
  assert.equal(flag.code, 2);
  assert.match(flag.stderr, /unknown flag --bogus for "svc migrate apply"/);
  const both = await svc(['migrate', 'apply', '--up', '1', '--down', '1'], inProject);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /flags --up and --down cannot be used together/);
  const cmd = await svc(['migrate', 'frobnicate'], inProject);
  assert.equal(cmd.code, 2);
  assert.match(cmd.stderr, /unknown command "svc migrate frobnicate"/);

  const noProject = await svc(['migrate', 'status'], { cwd: tmp.dir });
  assert.equal(noProject.code, 3);
  assert.match(noProject.stderr, /not in a Svc project: no config\.yaml/);

  const port = await freePort();
  const down = await svc(['migrate', 'status', '--endpoint', `http://127.0.0.1:${port}`, '-o', 'json'], inProject);
  assert.equal(down.code, 4);
  assert.match(down.stderr, new RegExp(`cannot reach Svc at http://127\\.0\\.0\\.1:${port}: ECONNREFUSED`));
  assert.equal(down.json().error.code, 'server-unreachable');
  for (const r of [flag, both, cmd, noProject, down]) assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
});
