/**
 * Modelling the database in the console without SQL, in headless Chromium against a real Svc: create
 * tables with the form (a foreign key among them), add, rename and retype columns, add and drop
 * constraints and indexes, manual relationships, function tracking, computed fields, the enum-table
 * switch, custom root field and column names, a remote relationship to a real GraphQL server; and
 * the SQL runner's PostgreSQL error with its position and hint. Every flow ends in an assertion on
 * the database, the metadata or the GraphQL API.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from '../helpers/db.js';
import { userSchema } from '../fixtures/remote/schemas.js';
import { startGraphQLServer, type GraphQLTestServer } from '../fixtures/remote/server.js';
import { BROWSER_SKIP, graphqlAs, openConsole, type ConsoleSession } from './browser.js';

describe('console: modelling the database', { skip: BROWSER_SKIP }, () => {
  let s: ConsoleSession;
  let remote: GraphQLTestServer;
  const db = (text: string) => sql(s.server.databaseUrl, text);
  const metadataTable = async (name: string) => (await s.admin('export_metadata', {})).tables.find((t: any) => t.table.name === name);

  before(async () => {
    s = await openConsole();
    remote = await startGraphQLServer({ '/graphql': { schema: userSchema() } });
  });
  after(async () => {
    await s?.close();
    await remote?.close();
  });

  test('create a table with the form: serial primary key, a not-null column; tracked', async () => {
    const { page } = s;
    await s.open('/console/data/schema/public/create');
    await page.getByLabel('Table name').fill('author');
    await page.getByRole('button', { name: 'Add column' }).click();
    const c2 = page.getByRole('group', { name: 'Column 2' });
    await c2.getByLabel('Name', { exact: true }).fill('name');
    await c2.getByLabel('Type').fill('text');
    await c2.getByLabel('Nullable').uncheck();
    await page.getByText('SQL', { exact: true }).click();
    assert.match((await page.getByLabel('SQL of the new table').textContent()) ?? '', /"name" text not null/);
    await s.shot('create-table-form');
    await page.getByRole('button', { name: 'Create table' }).click();
    await s.status('Created author');
    await page.getByRole('heading', { name: 'author', exact: true }).waitFor();
    const cols = await db(`select column_name, data_type, is_nullable from information_schema.columns where table_name = 'author' order by ordinal_position`);
    assert.deepEqual(cols, [
      { column_name: 'id', data_type: 'integer', is_nullable: 'NO' },
      { column_name: 'name', data_type: 'text', is_nullable: 'NO' },
    ]);
    assert.ok(await metadataTable('author'), 'author is tracked');
  });

  test('create a table with a foreign key (on delete cascade) and a unique column', async () => {
    const { page } = s;
    await s.open('/console/data/schema/public/create');
    await page.getByLabel('Table name').fill('article');
    await page.getByRole('button', { name: 'Add column' }).click();
    const c2 = page.getByRole('group', { name: 'Column 2' });
    await c2.getByLabel('Name', { exact: true }).fill('title');
    await c2.getByLabel('Type').fill('text');
    await c2.getByLabel('Nullable').uncheck();
    await c2.getByLabel('Unique').check();
    await page.getByRole('button', { name: 'Add column' }).click();
    const c3 = page.getByRole('group', { name: 'Column 3' });
    await c3.getByLabel('Name', { exact: true }).fill('author_id');
    await c3.getByLabel('Type').fill('integer');
    await page.getByRole('button', { name: 'Add foreign key' }).click();
    const fk = page.getByRole('group', { name: 'Foreign key 1', exact: true });
    await fk.getByLabel('References table').selectOption('public.author');
    await fk.getByLabel('Column', { exact: true }).selectOption('author_id');
    assert.equal(await fk.getByLabel('Referenced column').inputValue(), 'id', 'the primary key is proposed');
    await fk.getByLabel('On delete').selectOption('cascade');
    await page.getByRole('button', { name: 'Create table' }).click();
    await s.status('Created article');
    const fks = await db(`select confdeltype, pg_get_constraintdef(oid) as def from pg_constraint where conrelid = 'article'::regclass and contype = 'f'`);
    assert.deepEqual(fks, [{ confdeltype: 'c', def: 'FOREIGN KEY (author_id) REFERENCES author(id) ON DELETE CASCADE' }]);
    const uniq = await db(`select pg_get_constraintdef(oid) as def from pg_constraint where conrelid = 'article'::regclass and contype = 'u'`);
    assert.deepEqual(uniq, [{ def: 'UNIQUE (title)' }]);
    await db(`insert into author (name) values ('Ada'), ('Brian'); insert into article (title, author_id) values ('first', 1), ('second', 2), ('third', 1)`);
  });

  test('Modify: add a column (type, default, not null); rename a column a permission uses: the permission follows', async () => {
    const { page } = s;
    await s.admin('create_select_permission', { table: 'article', role: 'user', permission: { columns: ['id', 'title'], filter: {} } });
    await s.open('/console/data/schema/public/tables/article/modify', () => page.getByRole('group', { name: 'New column' }));
    const nc = page.getByRole('group', { name: 'New column' });
    await nc.getByLabel('Name', { exact: true }).fill('published');
    await nc.getByLabel('Type').fill('boolean');
    await nc.getByLabel(/^Default/).fill('false');
    await nc.getByLabel('Nullable').uncheck();
    await page.getByRole('button', { name: 'Add column', exact: true }).click();
    await s.status('Added column published');
    const [published] = await db(
      `select data_type, is_nullable, column_default from information_schema.columns where table_name = 'article' and column_name = 'published'`,
    );
    assert.deepEqual(published, { data_type: 'boolean', is_nullable: 'NO', column_default: 'false' });

    await page.getByRole('button', { name: 'Edit column title' }).click();
    const edit = page.getByRole('group', { name: 'Column title' });
    await edit.getByLabel('Name', { exact: true }).fill('headline');
    await page.getByRole('button', { name: 'Save column' }).click();
    await s.status('Saved column headline');
    const names = await db(`select column_name from information_schema.columns where table_name = 'article' order by ordinal_position`);
    assert.deepEqual(
      names.map((r) => r.column_name),
      ['id', 'headline', 'author_id', 'published'],
    );
    const perm = (await metadataTable('article')).select_permissions[0].permission;
    assert.deepEqual(perm.columns, ['id', 'headline']);
  });

  test('Modify: change a column type; add a check constraint and an index, then drop the index', async () => {
    const { page } = s;
    await s.open('/console/data/schema/public/tables/article/modify', () => page.getByRole('button', { name: 'Edit column headline' }));
    await page.getByRole('button', { name: 'Edit column headline' }).click();
    await page.getByRole('group', { name: 'Column headline' }).getByLabel('Type').fill('varchar(200)');
    await page.getByRole('button', { name: 'Save column' }).click();
    await s.status('Saved column headline');
    const [t] = await db(
      `select data_type, character_maximum_length from information_schema.columns where table_name = 'article' and column_name = 'headline'`,
    );
    assert.deepEqual(t, { data_type: 'character varying', character_maximum_length: 200 });

    const add = page.getByRole('form', { name: 'Add a constraint' });
    await add.getByLabel('Kind').selectOption('check');
    await add.getByLabel(/^Constraint name/).fill('headline_not_empty');
    await add.getByLabel(/^Condition/).fill("headline <> ''");
    await add.getByRole('button', { name: 'Add constraint' }).click();
    await s.status('Added the check constraint');
    const checks = await db(`select conname, pg_get_constraintdef(oid) as def from pg_constraint where conrelid = 'article'::regclass and contype = 'c'`);
    assert.deepEqual(checks, [{ conname: 'headline_not_empty', def: "CHECK (((headline)::text <> ''::text))" }]);

    const ix = page.getByRole('form', { name: 'Create an index' });
    await ix.getByLabel(/^Index name/).fill('article_by_author');
    await ix.getByLabel('author_id').check();
    await ix.getByLabel('published').check();
    await ix.getByRole('button', { name: 'Create index' }).click();
    await s.status('Created the index');
    const [def] = await db(`select indexdef from pg_indexes where indexname = 'article_by_author'`);
    assert.equal(def!.indexdef, 'CREATE INDEX article_by_author ON public.article USING btree (author_id, published)');
    await s.shot('modify-table');
    await page.getByRole('button', { name: 'Drop index article_by_author' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Drop index article_by_author' }).click();
    await s.status('Dropped index article_by_author');
    assert.deepEqual(await db(`select indexname from pg_indexes where indexname = 'article_by_author'`), []);
  });

  test('Relationships: a manual object relationship and an array relationship; queried through GraphQL', async () => {
    const { page } = s;
    await s.open('/console/data/schema/public/tables/article/relationships', () => page.getByRole('form', { name: 'Add a relationship' }));
    const form = page.getByRole('form', { name: 'Add a relationship' });
    await form.getByLabel('Kind').selectOption('object');
    await form.getByLabel('Relationship name').fill('writer');
    await form.getByLabel('Remote table').selectOption('public.author');
    await form.getByLabel('Column of article').selectOption('author_id');
    await form.getByLabel('Remote column').selectOption('id');
    await form.getByRole('button', { name: 'Add relationship' }).click();
    await s.status('Added object relationship writer');
    await s.shot('relationships');

    await s.open('/console/data/schema/public/tables/author/relationships', () => page.getByRole('form', { name: 'Add a relationship' }));
    const f2 = page.getByRole('form', { name: 'Add a relationship' });
    await f2.getByLabel('Kind').selectOption('array');
    await f2.getByLabel('Relationship name').fill('posts');
    await f2.getByLabel('Remote table').selectOption('public.article');
    await f2.getByLabel('Column of author').selectOption('id');
    await f2.getByLabel('Remote column').selectOption('author_id');
    await f2.getByRole('button', { name: 'Add relationship' }).click();
    await s.status('Added array relationship posts');

    assert.deepEqual((await metadataTable('article')).object_relationships, [
      { name: 'writer', using: { manual_configuration: { remote_table: { schema: 'public', name: 'author' }, column_mapping: { author_id: 'id' } } } },
    ]);
    assert.deepEqual((await metadataTable('author')).array_relationships, [
      { name: 'posts', using: { manual_configuration: { remote_table: { schema: 'public', name: 'article' }, column_mapping: { id: 'author_id' } } } },
    ]);
    const r = await graphqlAs(s, '{ author(order_by: {id: asc}) { name posts(order_by: {id: asc}) { headline writer { name } } } }', {});
    assert.deepEqual(r, {
      data: {
        author: [
          {
            name: 'Ada',
            posts: [
              { headline: 'first', writer: { name: 'Ada' } },
              { headline: 'third', writer: { name: 'Ada' } },
            ],
          },
          { name: 'Brian', posts: [{ headline: 'second', writer: { name: 'Brian' } }] },
        ],
      },
    });
  });

  test('Functions: track a function returning rows; a computed field from a function of a row', async () => {
    const { page } = s;
    await s.admin('run_sql', {
      sql: `create function search_articles(q text) returns setof article language sql stable as $$ select * from article where headline ilike q $$;
      create function author_shout(a author) returns text language sql stable as $$ select upper(a.name) $$;`,
    });
    await s.open('/console/data/schema/public', () => page.getByRole('button', { name: 'Track function search_articles' }));
    await page.getByRole('button', { name: 'Track function search_articles' }).click();
    await s.status('Tracked function search_articles');
    const md = await s.admin('export_metadata', {});
    assert.deepEqual(md.functions, [{ function: { schema: 'public', name: 'search_articles' } }]);

    await s.open('/console/data/schema/public/tables/author/modify', () => page.getByRole('form', { name: 'Add a computed field' }));
    const cf = page.getByRole('form', { name: 'Add a computed field' });
    await cf.getByLabel('Field name').fill('shout');
    await cf.getByLabel('Function').selectOption('public.author_shout');
    await cf.getByRole('button', { name: 'Add computed field' }).click();
    await s.status('Added computed field shout');
    assert.deepEqual((await metadataTable('author')).computed_fields, [
      { name: 'shout', definition: { function: { schema: 'public', name: 'author_shout' } } },
    ]);
    const r = await graphqlAs(s, '{ search_articles(args: {q: "s%"}) { headline writer { shout } } }', {});
    assert.deepEqual(r, { data: { search_articles: [{ headline: 'second', writer: { shout: 'BRIAN' } }] } });
  });

  test('Settings: enum table switch; custom root field and column names', async () => {
    const { page } = s;
    await s.admin('run_sql', {
      sql: `create table article_state (value text primary key, comment text); insert into article_state values ('draft', 'not yet'), ('live', 'public')`,
    });
    await s.admin('track_table', { table: 'article_state' });
    await s.open('/console/data/schema/public/tables/article_state/modify', () => page.getByRole('button', { name: 'Set as enum table' }));
    await page.getByRole('button', { name: 'Set as enum table' }).click();
    await s.status('Set as an enum table');
    assert.equal((await metadataTable('article_state')).is_enum, true);

    await s.open('/console/data/schema/public/tables/article/modify', () => page.getByRole('form', { name: 'Custom names' }));
    const names = page.getByRole('form', { name: 'Custom names' });
    await names.getByLabel('select', { exact: true }).fill('articles');
    await names.getByLabel('headline', { exact: true }).fill('Headline');
    await names.getByRole('button', { name: 'Save custom names' }).click();
    await s.status('Saved the custom names');
    assert.deepEqual((await metadataTable('article')).configuration, {
      custom_root_fields: { select: 'articles' },
      custom_column_names: { headline: 'Headline' },
    });
    const r = await graphqlAs(s, '{ articles(order_by: {id: asc}, limit: 1) { Headline } }', {});
    assert.deepEqual(r, { data: { articles: [{ Headline: 'first' }] } });
  });

  test('Remote relationship: article.author_id → user(id:) of a real GraphQL server', async () => {
    const { page } = s;
    await s.admin('add_remote_schema', { name: 'users', definition: { url: `${remote.url}/graphql` } });
    await s.open('/console/data/schema/public/tables/article/relationships', () => page.getByRole('form', { name: 'Add a remote relationship' }));
    const form = page.getByRole('form', { name: 'Add a remote relationship' });
    await form.getByLabel('Name', { exact: true }).fill('account');
    await form.getByLabel('Remote schema').selectOption('users');
    await form.getByLabel(/^Remote field/).fill('user');
    await form.getByLabel('author_id').check();
    await form.getByRole('group', { name: 'Argument 1' }).getByLabel('Argument').fill('id');
    await form.getByRole('group', { name: 'Argument 1' }).getByLabel('Value').fill('$author_id');
    await form.getByRole('button', { name: 'Add remote relationship' }).click();
    await s.status('Added remote relationship account');
    assert.deepEqual((await metadataTable('article')).remote_relationships, [
      { name: 'account', definition: { svc_fields: ['author_id'], remote_schema: 'users', remote_field: { user: { arguments: { id: '$author_id' } } } } },
    ]);
    const r = await graphqlAs(s, '{ articles(order_by: {id: asc}) { Headline account { username } } }', {});
    assert.deepEqual(r, {
      data: {
        articles: [
          { Headline: 'first', account: { username: 'jane' } },
          { Headline: 'second', account: { username: 'john' } },
          { Headline: 'third', account: { username: 'jane' } },
        ],
      },
    });
  });

  test("SQL runner: PostgreSQL's message, detail, hint and position; nothing of the failed SQL stays", async () => {
    const { page } = s;
    await s.open('/console/data/sql', () => page.getByRole('textbox', { name: /^SQL/ }));
    const box = page.getByRole('textbox', { name: /^SQL/ });
    await box.fill('create table half_done (id int);\nselect *\n  from no_such_table');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const alert = await s.alert('relation "no_such_table" does not exist');
    const text = await alert.textContent();
    assert.match(text ?? '', /SQLSTATE42P01/);
    assert.match(text ?? '', /Positionline 3, column 8 \(character 50\)/);
    assert.equal(await alert.getByLabel('where the error is').textContent(), '  from no_such_table\n       ^');
    await s.shot('sql-error');
    await box.fill("select lenght('x')");
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const hint = await s.alert('function lenght(unknown) does not exist');
    assert.match((await hint.textContent()) ?? '', /HintNo function matches the given name and argument types/);
    assert.deepEqual(await db(`select to_regclass('half_done') as t`), [{ t: null }]);
  });

  test('no page error and no request outside the server', () => {
    assert.deepEqual(s.problems, []);
  });
});
