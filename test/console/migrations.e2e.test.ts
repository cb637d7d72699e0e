/**
 * Migrations from the console (`svc console` for a project directory), in headless Chromium: the
 * console is served by `svc console` (a child process) in front of a real Svc; changes made in it
 * — the SQL runner with "This is a migration", tables created with the form (a foreign key), a
 * column added and one renamed, a constraint added, a relationship and custom names — are written
 * as migrations (up.sql, down.sql with the derived down) marked applied, and into the metadata
 * files; the page says what it wrote. Then the CLI applies the migrations and the metadata to a
 * fresh database: its schema, bookkeeping and metadata match; the downs undo the changes.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from '../helpers/db.js';
import { startTestServer, query, type TestServer } from '../helpers/server.js';
import { startSvcConsole, svcOk, tempDir } from '../cli/helpers.js';
import { BROWSER_SKIP, openConsole, type ConsoleSession } from './browser.js';

const SCHEMA_SQL = `select c.table_name, c.column_name, c.data_type, c.is_nullable, c.column_default
  from information_schema.columns c where c.table_schema = 'public' order by 1, 2`;
const CONSTRAINTS_SQL = `select conrelid::regclass::text as t, conname, pg_get_constraintdef(oid) as def
  from pg_constraint where connamespace = 'public'::regnamespace order by 1, 2`;

describe('console: migrations for a project (svc console)', { skip: BROWSER_SKIP }, () => {
  let s: ConsoleSession;
  let tmp: { dir: string; remove(): void };
  let project: string;
  const db = (text: string) => sql(s.server.databaseUrl, text);
  const migrations = () =>
    readdirSync(join(project, 'migrations'))
      .filter((f) => /^\d+_/.test(f))
      .sort();
  const file = (...p: string[]) => readFileSync(join(project, ...p), 'utf8');
  /** the project bar's message about the last change */
  const recorded = async (text: string | RegExp) => {
    await s.page.getByRole('status', { name: 'Recorded' }).filter({ hasText: text }).waitFor();
    return (await s.page.getByRole('status', { name: 'Recorded' }).textContent()) ?? '';
  };

  before(async () => {
    tmp = tempDir('svc-conmig-');
    project = join(tmp.dir, 'proj');
    s = await openConsole({
      front: async (server) => {
        await svcOk(['init', 'proj', '--endpoint', server.url], { cwd: tmp.dir });
        return startSvcConsole(project);
      },
    });
  });
  after(async () => {
    await s?.close();
    tmp?.remove();
  });

  test('the console served by svc console names the project; the SQL runner writes a migration with a name (down to be written)', async () => {
    const { page } = s;
    await s.open('/console/data/sql', () => page.getByRole('textbox', { name: /^SQL/ }));
    const bar = page.getByRole('region', { name: 'Project' });
    assert.match((await bar.textContent()) ?? '', new RegExp(`Project ${project.replace(/[.]/g, '\\.')}`));
    await page.getByRole('textbox', { name: /^SQL/ }).fill('create table tag (id serial primary key, label text not null)');
    assert.equal(await page.getByLabel('This is a migration').isChecked(), true, 'ticked by default');
    await page.getByLabel(/^Migration name/).fill('add_tags');
    await page.getByLabel('Track tables and views this creates').check();
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await s.status(/tracked tag/);
    const text = await recorded(/_add_tags/);
    assert.match(text, /Wrote migration \d+_add_tags \(up\.sql, down\.sql\)/);
    const [dir] = migrations();
    assert.match(dir!, /^\d+_add_tags$/);
    assert.equal(file('migrations', dir!, 'up.sql'), 'create table tag (id serial primary key, label text not null);\n');
    assert.match(
      file('migrations', dir!, 'down.sql'),
      /^-- Could not auto-generate a down migration\.\n-- Please write an appropriate down migration for the SQL below:\n-- create table tag/,
    );
    // the tracking (a separate metadata change) went into the metadata files
    await recorded(/No migration written; metadata: tables\.yaml/);
    assert.match(file('metadata', 'tables.yaml'), /name: tag/);
    assert.deepEqual(await db('select version::text from svc_catalog.schema_migrations'), [{ version: dir!.split('_')[0] }]);

    // unticked: the SQL runs, no migration is written
    await page.getByRole('textbox', { name: /^SQL/ }).fill("insert into tag (label) values ('x')");
    await page.getByLabel('This is a migration').uncheck();
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await recorded(/No migration written; metadata files unchanged/);
    assert.deepEqual(migrations(), [dir]);
    assert.deepEqual(await db('select label from tag'), [{ label: 'x' }]);
  });

  test('create tables with the form (a foreign key): create_table migrations whose down drops the table', async () => {
    const { page } = s;
    await s.open('/console/data/schema/public/create');
    await page.getByLabel('Table name').fill('author');
    await page.getByRole('button', { name: 'Add column' }).click();
    const c2 = page.getByRole('group', { name: 'Column 2' });
    await c2.getByLabel('Name', { exact: true }).fill('name');
    await c2.getByLabel('Type').fill('text');
    await c2.getByLabel('Nullable').uncheck();
    await page.getByRole('button', { name: 'Create table' }).click();
    await s.status('Created author');
    await recorded(/create_table_public_author/);

    await s.open('/console/data/schema/public/create');
    await page.getByLabel('Table name').fill('book');
    await page.getByRole('button', { name: 'Add column' }).click();
    const b2 = page.getByRole('group', { name: 'Column 2' });
    await b2.getByLabel('Name', { exact: true }).fill('title');
    await b2.getByLabel('Type').fill('text');
    await page.getByRole('button', { name: 'Add column' }).click();
    const b3 = page.getByRole('group', { name: 'Column 3' });
    await b3.getByLabel('Name', { exact: true }).fill('author_id');
    await b3.getByLabel('Type').fill('integer');
    await page.getByRole('button', { name: 'Add foreign key' }).click();
    const fk = page.getByRole('group', { name: 'Foreign key 1', exact: true });
    await fk.getByLabel('References table').selectOption('public.author');
    await fk.getByLabel('Column', { exact: true }).selectOption('author_id');
    await page.getByRole('button', { name: 'Create table' }).click();
    await s.status('Created book');
    const text = await recorded(/create_table_public_book/);
    assert.match(text, /metadata: tables\.yaml/);
    await s.shot('console-project-create-table');

    const ms = migrations();
    assert.equal(ms.length, 3);
    assert.match(ms[1]!, /^\d+_create_table_public_author$/);
    assert.match(ms[2]!, /^\d+_create_table_public_book$/);
    assert.match(
      file('migrations', ms[2]!, 'up.sql'),
      /^create table "public"\."book" \(\n {2}"id" serial not null,\n {2}"title" text,\n {2}"author_id" integer,\n {2}primary key \("id"\),\n {2}foreign key \("author_id"\) references "public"\."author" \("id"\)\n\);\n$/,
    );
    assert.equal(file('migrations', ms[2]!, 'down.sql'), 'drop table "public"."book";\n');
    assert.match(file('metadata', 'tables.yaml'), /name: book/);
  });

  test('Modify: add a column, rename one, add a constraint without a name, comment the table: each a migration with its down', async () => {
    const { page } = s;
    await s.open('/console/data/schema/public/tables/author/modify', () => page.getByRole('group', { name: 'New column' }));
    const nc = page.getByRole('group', { name: 'New column' });
    await nc.getByLabel('Name', { exact: true }).fill('bio');
    await nc.getByLabel('Type').fill('text');
    await page.getByRole('button', { name: 'Add column', exact: true }).click();
    await s.status('Added column bio');
    await recorded(/alter_table_public_author_add_column_bio/);

    await page.getByRole('button', { name: 'Edit column name' }).click();
    await page.getByRole('group', { name: 'Column name' }).getByLabel('Name', { exact: true }).fill('full_name');
    await page.getByRole('button', { name: 'Save column' }).click();
    await s.status('Saved column full_name');
    await recorded(/alter_table_public_author_alter_column_name/);

    await s.open('/console/data/schema/public/tables/book/modify', () => page.getByRole('form', { name: 'Add a constraint' }));
    const add = page.getByRole('form', { name: 'Add a constraint' });
    await add.getByLabel('Kind').selectOption('unique');
    await add.getByLabel('title').check();
    await add.getByRole('button', { name: 'Add constraint' }).click();
    await s.status('Added the unique constraint');
    await recorded(/alter_table_public_book_add_constraint_book_title_key/);

    const comment = page.getByRole('form', { name: 'Table comment' });
    await comment.getByLabel('Table comment').fill("Books we've read");
    await comment.getByRole('button', { name: 'Save comment' }).click();
    await s.status('Saved the comment');
    await recorded(/comment_on_table_public_book/);
    assert.deepEqual(await db(`select obj_description('book'::regclass) as c`), [{ c: "Books we've read" }]);

    const ms = migrations().slice(3);
    assert.equal(ms.length, 4);
    assert.equal(file('migrations', ms[0]!, 'up.sql'), 'alter table "public"."author" add column "bio" text;\n');
    assert.equal(file('migrations', ms[0]!, 'down.sql'), 'alter table "public"."author" drop column "bio";\n');
    assert.equal(file('migrations', ms[1]!, 'up.sql'), 'alter table "public"."author" rename column "name" to "full_name";\n');
    assert.equal(file('migrations', ms[1]!, 'down.sql'), 'alter table "public"."author" rename column "full_name" to "name";\n');
    assert.equal(file('migrations', ms[2]!, 'up.sql'), 'alter table "public"."book" add constraint "book_title_key" unique ("title");\n');
    assert.equal(file('migrations', ms[2]!, 'down.sql'), 'alter table "public"."book" drop constraint "book_title_key";\n');
    assert.equal(file('migrations', ms[3]!, 'up.sql'), 'comment on table "public"."book" is \'Books we\'\'ve read\';\n');
    assert.equal(file('migrations', ms[3]!, 'down.sql'), 'comment on table "public"."book" is null;\n');
    const status = (await svcOk(['migrate', 'status', '-o', 'json', '--admin-secret', s.secret!], { cwd: project })).json().migrations as Array<{
      source_status: string;
      database_status: string;
    }>;
    assert.equal(status.length, 7);
    assert.ok(
      status.every((m) => m.source_status === 'present' && m.database_status === 'present'),
      JSON.stringify(status),
    );
  });

  test('metadata changes (a relationship, custom names, an event trigger on one column) update the metadata files and write no migration', async () => {
    const { page } = s;
    const before = migrations();
    await s.open('/console/data/schema/public/tables/book/relationships', () => page.getByRole('form', { name: 'Add a relationship' }));
    const form = page.getByRole('form', { name: 'Add a relationship' });
    await form.getByLabel('Kind').selectOption('object');
    await form.getByLabel('Relationship name').fill('writer');
    await form.getByLabel('Remote table').selectOption('public.author');
    await form.getByLabel('Column of book').selectOption('author_id');
    await form.getByLabel('Remote column').selectOption('id');
    await form.getByRole('button', { name: 'Add relationship' }).click();
    await s.status('Added object relationship writer');
    await recorded(/No migration written; metadata: tables\.yaml/);
    assert.match(file('metadata', 'tables.yaml'), /object_relationships:\n {2}- name: writer/);

    await s.open('/console/data/schema/public/tables/author/modify', () => page.getByRole('form', { name: 'Custom names' }));
    const names = page.getByRole('form', { name: 'Custom names' });
    await names.getByLabel('select', { exact: true }).fill('authors');
    await names.getByRole('button', { name: 'Save custom names' }).click();
    await s.status('Saved the custom names');
    await s.page.getByRole('status', { name: 'Recorded' }).filter({ hasText: 'metadata: tables.yaml' }).waitFor();
    await s.shot('console-project-metadata');

    // an event trigger on updates of one column
    await s.open('/console/events', () => page.getByRole('button', { name: 'Create event trigger' }));
    await page.getByLabel('Name', { exact: true }).fill('book_retitled');
    await page.getByLabel('Table', { exact: true }).selectOption('book');
    await page.getByLabel(/^Webhook URL/).fill('http://127.0.0.1:9/hook');
    await page.getByLabel('Insert', { exact: true }).uncheck();
    await page.getByLabel('Update', { exact: true }).check();
    await page.getByLabel('Any column').uncheck();
    await page.getByLabel('title', { exact: true }).check();
    await page.getByRole('button', { name: 'Create event trigger' }).click();
    await s.status('Created event trigger book_retitled');
    await recorded(/No migration written; metadata: tables\.yaml/);
    const book = (await s.admin('export_metadata', {})).tables.find((t: any) => t.table.name === 'book');
    assert.deepEqual(book.event_triggers[0].definition, { enable_manual: false, update: { columns: ['title'] } });
    assert.match(file('metadata', 'tables.yaml'), /event_triggers:\n {2}- name: book_retitled/);
    assert.deepEqual(migrations(), before);
    assert.match(file('metadata', 'tables.yaml'), /custom_root_fields:\n {6}select: authors/);
    // the files are the server's metadata
    const local = (await svcOk(['metadata', 'diff', '-o', 'json', '--admin-secret', s.secret!], { cwd: project })).json();
    assert.equal(local.identical, true, JSON.stringify(local));
  });

  test('at 800 px the project bar wraps inside the page: no sideways scroll', async () => {
    const { page } = s;
    await page.setViewportSize({ width: 800, height: 900 });
    try {
      await s.open('/console/data/schema/public/tables/author/modify', () => page.getByRole('form', { name: 'Custom names' }));
      await page.getByRole('form', { name: 'Custom names' }).getByRole('button', { name: 'Save custom names' }).click();
      await s.page.getByRole('status', { name: 'Recorded' }).filter({ hasText: 'metadata files unchanged' }).waitFor();
      await s.shot('console-project-800');
      const { scroll, inner } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
      assert.ok(scroll <= inner, `scrollWidth ${scroll} > ${inner}`);
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  test('the CLI applies the recorded migrations and metadata to a fresh database: same schema, bookkeeping and metadata; the downs undo them', async () => {
    const fresh: TestServer = await startTestServer({ adminSecret: 'fresh-secret' });
    try {
      const flags = ['--endpoint', fresh.url, '--admin-secret', 'fresh-secret'];
      await svcOk(['migrate', 'apply', ...flags], { cwd: project });
      const freshDb = (text: string) => sql(fresh.databaseUrl, text);
      assert.deepEqual(await freshDb(SCHEMA_SQL), await db(SCHEMA_SQL));
      assert.deepEqual(await freshDb(CONSTRAINTS_SQL), await db(CONSTRAINTS_SQL));
      const versions = 'select version::text from svc_catalog.schema_migrations order by 1';
      const comments = `select c.relname, obj_description(c.oid) as comment from pg_class c where c.relnamespace = 'public'::regnamespace and c.relkind = 'r' order by 1`;
      assert.deepEqual(await freshDb(comments), await db(comments));
      assert.deepEqual(await freshDb(versions), await db(versions));

      // every derived down works: back to the SQL runner's table only, then up again
      await svcOk(['migrate', 'apply', '--down', '6', ...flags], { cwd: project });
      assert.deepEqual(
        (await freshDb(`select table_name from information_schema.tables where table_schema = 'public' order by 1`)).map((r) => r.table_name),
        ['tag'],
      );
      await svcOk(['migrate', 'apply', ...flags], { cwd: project });
      assert.deepEqual(await freshDb(SCHEMA_SQL), await db(SCHEMA_SQL));

      await svcOk(['metadata', 'apply', ...flags], { cwd: project });
      const md = await query(fresh.url, { type: 'export_metadata', args: {} }, { 'x-svc-admin-secret': 'fresh-secret' });
      assert.deepEqual(md, await s.admin('export_metadata', {}));
      await freshDb(`insert into author (full_name) values ('Ada'); insert into book (title, author_id) values ('Notes', 1)`);
      const r = await fetch(`${fresh.url}/v1/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-admin-secret': 'fresh-secret' },
        body: JSON.stringify({ query: '{ book { title writer { full_name } } authors { full_name } }' }),
      });
      assert.deepEqual(await r.json(), { data: { book: [{ title: 'Notes', writer: { full_name: 'Ada' } }], authors: [{ full_name: 'Ada' }] } });
    } finally {
      await fresh.close();
    }
    assert.deepEqual(s.problems, []);
  });
});
