/**
 * The console's project API (src/cli/consoleApi.ts) as `svc serve --project-dir` serves it, over
 * HTTP against a real server and database: a change with SQL becomes a migration (files + the
 * bookkeeping row, in one transaction with the change), a refused change leaves neither, metadata
 * changes only rewrite the metadata files, only admins may use it; a project directory without
 * config.yaml stops the start. Plus the pure helpers.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { nameFromSql, opsOf, sqlOf } from '../../src/cli/consoleApi.js';
import { sql } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { tempDir } from './helpers.js';

test('helpers: the operations and SQL of a request; a name from the SQL', () => {
  const body = {
    type: 'bulk',
    args: [
      { type: 'run_sql', args: { sql: 'create table a (id int)' } },
      { type: 'bulk', args: [{ type: 'track_table', args: { table: 'a' } }] },
      { type: 'run_sql', args: { sql: 'select 1', read_only: true } },
    ],
  };
  assert.deepEqual(
    opsOf(body).map((o) => o.type),
    ['run_sql', 'track_table', 'run_sql'],
  );
  assert.deepEqual(sqlOf(body), ['create table a (id int)']);
  assert.equal(nameFromSql('-- new\ncreate table "public"."author" (id int); select 1'), 'create_table_public_author');
  assert.equal(nameFromSql('alter table "public"."a" add column "b" text'), 'alter_table_public_a_add_column_b');
  assert.equal(nameFromSql('--only a comment'), 'migration');
});

describe('svc serve --project-dir: /apis/migrate', () => {
  let server: TestServer;
  let tmp: { dir: string; remove(): void };
  const SECRET = 'project-secret';
  const admin = { 'x-svc-admin-secret': SECRET };
  const post = async (body: unknown, headers: Record<string, string> = admin) => {
    const r = await fetch(`${server.url}/apis/migrate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as any };
  };
  const migrations = () =>
    readdirSync(join(tmp.dir, 'migrations'))
      .filter((f) => /^\d+_/.test(f))
      .sort();
  const rows = async () =>
    (await sql<{ v: string }>(server.databaseUrl, `select version::text as v from svc_catalog.schema_migrations order by 1`)).map((r) => r.v);

  before(async () => {
    tmp = tempDir('svc-project-api-');
    writeFileSync(join(tmp.dir, 'config.yaml'), 'version: 2\n');
    mkdirSync(join(tmp.dir, 'migrations'));
    server = await startTestServer({ adminSecret: SECRET, enableConsole: true, projectDir: tmp.dir });
  });
  after(async () => {
    await server?.close();
    tmp?.remove();
  });

  test('only admins: the project and the API are refused without the admin secret, and nothing is written', async () => {
    const p = await fetch(`${server.url}/apis/project`);
    assert.equal(p.status, 401);
    const ok = await fetch(`${server.url}/apis/project`, { headers: admin });
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), { directory: tmp.dir, migrations_directory: join(tmp.dir, 'migrations'), metadata_directory: join(tmp.dir, 'metadata') });
    const r = await post({ request: { type: 'run_sql', args: { sql: 'create table nope (id int)' } } }, {});
    assert.equal(r.status, 401);
    assert.deepEqual(migrations(), []);
    assert.equal(existsSync(join(tmp.dir, 'metadata')), false);
  });

  test('SQL with tracking: a migration (up.sql, the given down.sql) marked applied with the change; the metadata files', async () => {
    const r = await post({
      request: {
        type: 'bulk',
        args: [
          { type: 'run_sql', args: { sql: 'create table author (id serial primary key, name text)' } },
          { type: 'track_table', args: { table: 'author' } },
        ],
      },
      name: 'create_table_public_author',
      down_sql: 'drop table author;',
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.result, [{ result_type: 'CommandOk', result: null }, { message: 'success' }]);
    const [dir] = migrations();
    assert.match(dir!, /^\d+_create_table_public_author$/);
    assert.equal(r.body.migration.id, dir);
    assert.deepEqual(r.body.migration.files, [`migrations/${dir}/up.sql`, `migrations/${dir}/down.sql`]);
    assert.deepEqual(r.body.metadata_files, [
      'metadata/version.yaml',
      'metadata/tables.yaml',
      'metadata/functions.yaml',
      'metadata/remote_schemas.yaml',
      'metadata/query_collections.yaml',
      'metadata/allow_list.yaml',
      'metadata/actions.yaml',
      'metadata/actions.graphql',
      'metadata/cron_triggers.yaml',
      'metadata/rest_endpoints.yaml',
      'metadata/inherited_roles.yaml',
    ]);
    assert.equal(readFileSync(join(tmp.dir, 'migrations', dir!, 'up.sql'), 'utf8'), 'create table author (id serial primary key, name text);\n');
    assert.equal(readFileSync(join(tmp.dir, 'migrations', dir!, 'down.sql'), 'utf8'), 'drop table author;\n');
    assert.equal(readFileSync(join(tmp.dir, 'metadata', 'tables.yaml'), 'utf8'), '- table:\n    schema: public\n    name: author\n');
    assert.deepEqual(await rows(), [dir!.split('_')[0]]);
  });

  test("refused SQL: the error as /v1/query gives it (PostgreSQL's message for admin), no migration files, no row", async () => {
    const before = await rows();
    const r = await post({ request: { type: 'run_sql', args: { sql: 'alter table author add column x int; select * from no_such_table' } } });
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'postgres-error');
    assert.equal(r.body.path, '$.args');
    assert.equal(r.body.internal.error.message, 'relation "no_such_table" does not exist');
    assert.equal(migrations().length, 1);
    assert.deepEqual(await rows(), before);
    assert.deepEqual(await sql(server.databaseUrl, `select column_name from information_schema.columns where table_name = 'author' and column_name = 'x'`), []);
  });

  test('SQL without a down: the down asks for one; no name: named from the SQL', async () => {
    const r = await post({ request: { type: 'run_sql', args: { sql: 'alter table author add column bio text' } } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.match(r.body.migration.id, /^\d+_alter_table_author_add_column_bio_text$/);
    assert.equal(
      readFileSync(join(tmp.dir, r.body.migration.directory, 'down.sql'), 'utf8'),
      '-- Could not auto-generate a down migration.\n-- Please write an appropriate down migration for the SQL below:\n-- alter table author add column bio text;\n',
    );
    assert.deepEqual(r.body.metadata_files, []);
  });

  test('metadata only, and SQL that is not a migration: no migration, the metadata files follow', async () => {
    const n = migrations().length;
    const r = await post({
      request: { type: 'create_select_permission', args: { table: 'author', role: 'user', permission: { columns: ['id'], filter: {} } } },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, { result: { message: 'success' }, migration: null, metadata_files: ['metadata/tables.yaml'] });
    assert.match(readFileSync(join(tmp.dir, 'metadata', 'tables.yaml'), 'utf8'), /select_permissions:\n {2}- role: user/);
    const s = await post({ request: { type: 'run_sql', args: { sql: "insert into author (name) values ('a')" } }, migration: false });
    assert.equal(s.status, 200);
    assert.equal(s.body.migration, null);
    assert.equal(migrations().length, n);
  });

  test('bad requests are refused with 400', async () => {
    assert.equal((await post({ request: 'x' })).status, 400);
    assert.equal((await post({ request: { type: 'run_sql', args: { sql: 'select 1' } }, name: 'a/b' })).status, 400);
  });
});

test('a --project-dir without config.yaml stops the start', async () => {
  const tmp = tempDir('svc-project-none-');
  try {
    await assert.rejects(startTestServer({ enableConsole: true, projectDir: tmp.dir }), /no config\.yaml|config\.yaml/);
  } finally {
    tmp.remove();
  }
});
