/**
 * Metadata dependencies on the database: one test per cell of the (metadata object kind × DDL)
 * table in docs/dependencies.md (which must list every cell). Every cell starts from the same database (BASE_SQL) with only
 * the metadata of its row (FIXTURES), runs one `run_sql` (or, for a few cells, another request)
 * and checks the outcome:
 *  - an error: status, code, message and path as upstream (v1.3), and nothing changed — the
 *    exported metadata and the database catalog are as before (the DDL was rolled back);
 *  - success: the exported metadata is the snapshot with exactly the listed edits (renames
 *    followed, dependents dropped with `cascade`), and the metadata is consistent.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { sql } from '../helpers/db.js';
import { postGraphql, postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;

before(async () => {
  server = await startTestServer();
});

after(async () => {
  await server?.close();
});

const BASE_SQL = `
drop schema if exists public cascade;
drop schema if exists other cascade;
drop schema if exists other2 cascade;
create schema public;
create table author (id serial primary key, name text not null, bio text, rating int);
create table article (id serial primary key, title text not null, author_id int references author(id), editor_id int);
create table tag_kind (value text primary key, comment text);
insert into tag_kind values ('news', 'News'), ('opinion', 'Opinion');
create table tag (id serial primary key, article_id int references article(id), kind text not null references tag_kind(value));
create view article_title as select id, title from article;
create function author_full_name(a author) returns text language sql stable as $$ select a.name || coalesce(' ' || a.bio, '') $$;
create function author_articles(a author) returns setof article language sql stable as $$ select * from article where author_id = a.id $$;
create function search_authors(q text) returns setof author language sql stable as $$ select * from author where name ilike '%' || q || '%' $$;
create schema other;
create table other.thing (id int primary key, label text);
create function other.things() returns setof other.thing language sql stable as $$ select * from other.thing $$;
insert into author (name, rating) values ('Ada', 5), ('Brian', 3);
insert into article (title, author_id, editor_id) values ('A1', 1, 2), ('A2', 2, 1);
`;

const track = (name: string, extra: Record<string, unknown> = {}) => ({ type: 'track_table', version: 2, args: { table: name, ...extra } });
const perm = (kind: string, table: string, permission: Record<string, unknown>) => ({
  type: `create_${kind}_permission`,
  args: { table, role: 'user', permission },
});
const fkObjRel = { type: 'create_object_relationship', args: { table: 'article', name: 'author', using: { foreign_key_constraint_on: 'author_id' } } };
const fkArrRel = {
  type: 'create_array_relationship',
  args: { table: 'author', name: 'articles', using: { foreign_key_constraint_on: { table: 'article', column: 'author_id' } } },
};
const computedField = (name: string, fn: string) => ({ type: 'add_computed_field', args: { table: 'author', name, definition: { function: fn } } });

/** The metadata of each row of the table (run after BASE_SQL on empty metadata). */
const FIXTURES: Record<string, unknown[]> = {
  table: [track('author')],
  other_table: [track({ schema: 'other', name: 'thing' } as never)],
  view: [track('article_title')],
  perm_select: [track('author'), perm('select', 'author', { columns: ['id', 'name'], filter: { rating: { _gt: 1 } } })],
  perm_insert: [track('author'), perm('insert', 'author', { check: { bio: { _ne: '' } }, set: { rating: 3 }, columns: ['name'] })],
  perm_update: [
    track('author'),
    perm('update', 'author', { columns: ['bio'], filter: { id: { _eq: 'X-Svc-User-Id' } }, check: { name: { _ne: '' } }, set: { rating: 'x-svc-rating' } }),
  ],
  perm_delete: [track('author'), perm('delete', 'author', { filter: { bio: { _is_null: false } } })],
  perm_rel: [
    track('author'),
    track('article'),
    fkObjRel,
    perm('select', 'article', { columns: ['id', 'title'], filter: { author: { name: { _eq: 'Ada' } } } }),
  ],
  perm_exists: [
    track('author'),
    track('article'),
    perm('select', 'article', { columns: ['id'], filter: { _exists: { _table: { schema: 'public', name: 'author' }, _where: { rating: { _gt: 1 } } } } }),
  ],
  objrel_fk: [track('author'), track('article'), fkObjRel],
  arrrel_fk: [track('author'), track('article'), fkArrRel],
  objrel_manual: [
    track('author'),
    track('article'),
    {
      type: 'create_object_relationship',
      args: { table: 'article', name: 'editor', using: { manual_configuration: { remote_table: 'author', column_mapping: { editor_id: 'id' } } } },
    },
  ],
  arrrel_manual: [
    track('author'),
    track('article'),
    {
      type: 'create_array_relationship',
      args: { table: 'author', name: 'edited', using: { manual_configuration: { remote_table: 'article', column_mapping: { id: 'editor_id' } } } },
    },
  ],
  cf_scalar: [track('author'), computedField('full_name', 'author_full_name')],
  cf_perm: [
    track('author'),
    computedField('full_name', 'author_full_name'),
    perm('select', 'author', { columns: ['id'], computed_fields: ['full_name'], filter: {} }),
  ],
  cf_table: [track('author'), track('article'), computedField('written', 'author_articles')],
  custom: [track('author', { configuration: { custom_column_names: { name: 'authorName' }, custom_root_fields: { select: 'authors' } } })],
  custom_perm: [
    track('author', { configuration: { custom_column_names: { name: 'authorName', bio: 'authorBio' } } }),
    perm('select', 'author', { columns: ['id', 'name'], filter: { bio: { _is_null: false } } }),
  ],
  custom_rel: [track('author'), track('article'), fkArrRel, computedField('full_name', 'author_full_name')],
  enum: [track('tag_kind', { is_enum: true }), track('tag')],
  function: [track('author'), { type: 'track_function', args: { schema: 'public', name: 'search_authors' } }],
  other_function: [track({ schema: 'other', name: 'thing' } as never), { type: 'track_function', args: { schema: 'other', name: 'things' } }],
  event_trigger: [
    track('author'),
    {
      type: 'create_event_trigger',
      args: {
        name: 'author_changes',
        table: 'author',
        webhook: 'http://127.0.0.1:9/hook',
        insert: { columns: '*' },
        update: { columns: ['name'], payload: ['id', 'name'] },
      },
    },
  ],
  collection: [
    track('author'),
    { type: 'create_query_collection', args: { name: 'app', definition: { queries: [{ name: 'authors', query: 'query { author { id name } }' }] } } },
    { type: 'add_collection_to_allowlist', args: { collection: 'app' } },
  ],
};

// ---- expected metadata: the snapshot with explicit edits --------------------------------------

type Md = { tables: any[]; functions?: any[]; [k: string]: unknown };
const tbl = (md: Md, name: string, schema = 'public') => {
  const t = md.tables.find((x) => x.table.name === name && x.table.schema === schema);
  assert.ok(t, `expected table ${schema}.${name} in the metadata snapshot`);
  return t;
};
/** removes the items of t[key] matching `pred`; the key goes when the list is empty (as export_metadata prints it) */
function drop(t: any, key: string, pred: (x: any) => boolean): void {
  const before = (t[key] ?? []).length;
  t[key] = (t[key] ?? []).filter((x: any) => !pred(x));
  assert.notEqual(t[key].length, before, `the snapshot has no ${key} item to drop`);
  if (t[key].length === 0 && key !== 'tables') delete t[key];
}
const dropTable = (md: Md, name: string, schema = 'public') => drop(md, 'tables', (x) => x.table.name === name && x.table.schema === schema);
const dropFunction = (md: Md, name: string, schema = 'public') => drop(md, 'functions', (x) => x.function.name === name && x.function.schema === schema);
const dropPerm = (md: Md, table: string, kind: string) => drop(tbl(md, table), `${kind}_permissions`, (p) => p.role === 'user');
const dropRel = (md: Md, table: string, name: string) => {
  const t = tbl(md, table);
  const key = (t.object_relationships ?? []).some((r: any) => r.name === name) ? 'object_relationships' : 'array_relationships';
  drop(t, key, (r) => r.name === name);
};
const dropComputedField = (md: Md, name: string) => drop(tbl(md, 'author'), 'computed_fields', (c) => c.name === name);
const renameTable = (md: Md, from: string, to: string) => {
  tbl(md, from).table.name = to;
  const key = (x: any) => `${x.table.schema}\u0000${x.table.name}`;
  md.tables.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
};
const unchanged = () => undefined;

// ---- the cells --------------------------------------------------------------------------------

interface Cell {
  row: string;
  ddl: string;
  fixture: keyof typeof FIXTURES;
  sql: string;
  cascade?: boolean;
  /** another request instead of run_sql */
  request?: unknown;
  /** an error, and nothing changed; or success with the expected metadata edits */
  expect: { status: number; code: string; error: string; internal?: Array<{ reason: string; type: string }> } | ((md: Md) => void);
  /** more checks after a success */
  then?: () => Promise<void>;
}

const depError = (...dependents: string[]) => ({
  status: 400,
  code: 'dependency-error',
  error: `cannot drop due to the following dependent objects : ${dependents.join(', ')}`,
});
const typeError = (column: string, table: string, ...dependents: string[]) => ({
  status: 400,
  code: 'dependency-error',
  error: `cannot change type of column ${JSON.stringify(column)} in table ${JSON.stringify(table)} because of the following dependencies : ${dependents.join(', ')}`,
});
const notSupported = (error: string) => ({ status: 400, code: 'not-supported', error });
/** run_sql that leaves the metadata inconsistent is refused (upstream: checkNewInconsistentMeta) */
const newInconsistency = (...internal: Array<{ reason: string; type: string }>) => ({
  status: 500,
  code: 'unexpected',
  error: 'cannot continue due to newly found inconsistent metadata',
  internal,
});
const enumReason = (...why: string[]) => ({
  type: 'table',
  reason:
    why.length === 1
      ? `the table "tag_kind" cannot be used as an enum because ${why[0]}`
      : `the table "tag_kind" cannot be used as an enum for the following reasons:\n${why.map((w) => `  • ${w}\n`).join('')}`,
});
const tooManyColumns = (names: string) => `the table must have exactly one primary key and optionally one comment column, not 2 columns (${names})`;

async function gql(q: string, role?: string): Promise<any> {
  const r = await postGraphql(server.url, { query: q }, role ? { 'X-Svc-Role': role } : {});
  assert.equal(r.status, 200, r.text);
  return r.body;
}
async function gqlData(q: string): Promise<any> {
  const b = await gql(q);
  assert.equal(b.errors, undefined, JSON.stringify(b.errors));
  return b.data;
}
const eventCount = async (trigger: string) =>
  Number((await sql(server.databaseUrl, 'select count(*)::int as n from svc_catalog.event_log where trigger_name = $1', [trigger]))[0]!.n);
async function enumValues(): Promise<string[]> {
  const d = await gqlData('{ __type(name: "tag_kind_enum") { enumValues { name } } }');
  return d.__type.enumValues.map((v: { name: string }) => v.name).sort();
}
async function inconsistent(): Promise<any[]> {
  return (await query(server.url, { type: 'get_inconsistent_metadata', args: {} })).inconsistent_objects;
}

const CELLS: Cell[] = [
  // tracked table
  { row: 'tracked table', ddl: 'drop table', fixture: 'table', sql: 'drop table author cascade', expect: (md) => dropTable(md, 'author') },
  {
    row: 'tracked table',
    ddl: 'rename table',
    fixture: 'table',
    sql: 'alter table author rename to writer',
    expect: (md) => renameTable(md, 'author', 'writer'),
    then: async () => assert.deepEqual(await gqlData('{ writer(order_by: {id: asc}) { name } }'), { writer: [{ name: 'Ada' }, { name: 'Brian' }] }),
  },
  { row: 'tracked table', ddl: 'drop column', fixture: 'table', sql: 'alter table author drop column bio', expect: unchanged },
  { row: 'tracked table', ddl: 'rename column', fixture: 'table', sql: 'alter table author rename column bio to about', expect: unchanged },
  { row: 'tracked table', ddl: 'change column type', fixture: 'table', sql: 'alter table author alter column rating type bigint', expect: unchanged },
  { row: 'tracked table', ddl: 'drop primary key', fixture: 'table', sql: 'alter table author drop constraint author_pkey cascade', expect: unchanged },
  {
    row: 'tracked table',
    ddl: 'drop and create again',
    fixture: 'table',
    sql: 'drop table author cascade; create table author (id int primary key)',
    expect: (md) => dropTable(md, 'author'),
  },
  { row: 'tracked table', ddl: 'drop schema', fixture: 'other_table', sql: 'drop schema other cascade', expect: (md) => dropTable(md, 'thing', 'other') },
  {
    row: 'tracked table',
    ddl: 'rename schema',
    fixture: 'other_table',
    sql: 'alter schema other rename to other2',
    expect: (md) => {
      tbl(md, 'thing', 'other').table.schema = 'other2';
    },
  },

  // tracked view
  { row: 'tracked view', ddl: 'drop view', fixture: 'view', sql: 'drop view article_title', expect: (md) => dropTable(md, 'article_title') },
  {
    row: 'tracked view',
    ddl: 'rename view',
    fixture: 'view',
    sql: 'alter view article_title rename to article_titles',
    expect: (md) => renameTable(md, 'article_title', 'article_titles'),
  },
  {
    row: 'tracked view',
    ddl: 'replace view (add column)',
    fixture: 'view',
    sql: 'create or replace view article_title as select id, title, author_id from article',
    expect: unchanged,
    then: async () => assert.deepEqual(await gqlData('{ article_title(order_by: {id: asc}, limit: 1) { author_id } }'), { article_title: [{ author_id: 1 }] }),
  },
  { row: 'tracked view', ddl: 'rename column', fixture: 'view', sql: 'alter view article_title rename column title to headline', expect: unchanged },
  { row: 'tracked view', ddl: 'drop base table', fixture: 'view', sql: 'drop table article cascade', expect: (md) => dropTable(md, 'article_title') },

  // permissions
  {
    row: 'select permission (columns, filter)',
    ddl: 'drop column (columns)',
    fixture: 'perm_select',
    sql: 'alter table author drop column name',
    expect: depError('permission author.user.select'),
  },
  {
    row: 'select permission (columns, filter)',
    ddl: 'drop column (columns)',
    fixture: 'perm_select',
    sql: 'alter table author drop column name',
    cascade: true,
    expect: (md) => dropPerm(md, 'author', 'select'),
  },
  {
    row: 'select permission (columns, filter)',
    ddl: 'drop column (filter)',
    fixture: 'perm_select',
    sql: 'alter table author drop column rating',
    expect: depError('permission author.user.select'),
  },
  {
    row: 'select permission (columns, filter)',
    ddl: 'rename column (columns)',
    fixture: 'perm_select',
    sql: 'alter table author rename column name to full_name',
    expect: (md) => {
      tbl(md, 'author').select_permissions[0].permission.columns = ['id', 'full_name'];
    },
  },
  {
    row: 'select permission (columns, filter)',
    ddl: 'rename column (filter)',
    fixture: 'perm_select',
    sql: 'alter table author rename column rating to score',
    expect: (md) => {
      tbl(md, 'author').select_permissions[0].permission.filter = { score: { _gt: 1 } };
    },
  },
  {
    row: 'select permission (columns, filter)',
    ddl: 'rename table and column',
    fixture: 'perm_select',
    sql: 'alter table author rename to writer; alter table writer rename column rating to score',
    expect: (md) => {
      renameTable(md, 'author', 'writer');
      tbl(md, 'writer').select_permissions[0].permission.filter = { score: { _gt: 1 } };
    },
  },
  {
    row: 'select permission (columns, filter)',
    ddl: 'change column type (filter, static value)',
    fixture: 'perm_select',
    sql: 'alter table author alter column rating type text',
    expect: typeError('rating', 'author', 'permission author.user.select'),
  },
  {
    row: 'select permission (columns, filter)',
    ddl: 'change column type (filter, static value)',
    fixture: 'perm_select',
    sql: 'alter table author alter column rating type text',
    cascade: true,
    expect: typeError('rating', 'author', 'permission author.user.select'),
  },
  {
    row: 'select permission (columns, filter)',
    ddl: 'change column type (columns)',
    fixture: 'perm_select',
    sql: 'alter table author alter column name type varchar(200)',
    expect: unchanged,
  },
  {
    row: 'select permission (columns, filter)',
    ddl: 'rename table',
    fixture: 'perm_select',
    sql: 'alter table author rename to writer',
    expect: (md) => renameTable(md, 'author', 'writer'),
  },
  {
    row: 'select permission (columns, filter)',
    ddl: 'drop table',
    fixture: 'perm_select',
    sql: 'drop table author cascade',
    expect: (md) => dropTable(md, 'author'),
  },

  {
    row: 'insert permission (check, presets)',
    ddl: 'drop column (check)',
    fixture: 'perm_insert',
    sql: 'alter table author drop column bio',
    expect: depError('permission author.user.insert'),
  },
  {
    row: 'insert permission (check, presets)',
    ddl: 'drop column (preset)',
    fixture: 'perm_insert',
    sql: 'alter table author drop column rating',
    expect: depError('permission author.user.insert'),
  },
  {
    row: 'insert permission (check, presets)',
    ddl: 'drop column (preset)',
    fixture: 'perm_insert',
    sql: 'alter table author drop column rating',
    cascade: true,
    expect: (md) => dropPerm(md, 'author', 'insert'),
  },
  {
    row: 'insert permission (check, presets)',
    ddl: 'rename column (check)',
    fixture: 'perm_insert',
    sql: 'alter table author rename column bio to about',
    expect: (md) => {
      tbl(md, 'author').insert_permissions[0].permission.check = { about: { _ne: '' } };
    },
  },
  {
    row: 'insert permission (check, presets)',
    ddl: 'rename column (preset)',
    fixture: 'perm_insert',
    sql: 'alter table author rename column rating to score',
    expect: (md) => {
      tbl(md, 'author').insert_permissions[0].permission.set = { score: 3 };
    },
  },
  {
    row: 'insert permission (check, presets)',
    ddl: 'change column type (static preset)',
    fixture: 'perm_insert',
    sql: 'alter table author alter column rating type text',
    expect: typeError('rating', 'author', 'permission author.user.insert'),
  },

  {
    row: 'update permission (columns, filter, check, presets)',
    ddl: 'drop column (columns)',
    fixture: 'perm_update',
    sql: 'alter table author drop column bio',
    expect: depError('permission author.user.update'),
  },
  {
    row: 'update permission (columns, filter, check, presets)',
    ddl: 'drop column (check)',
    fixture: 'perm_update',
    sql: 'alter table author drop column name',
    expect: depError('permission author.user.update'),
  },
  {
    row: 'update permission (columns, filter, check, presets)',
    ddl: 'drop column (check)',
    fixture: 'perm_update',
    sql: 'alter table author drop column name',
    cascade: true,
    expect: (md) => dropPerm(md, 'author', 'update'),
  },
  {
    row: 'update permission (columns, filter, check, presets)',
    ddl: 'rename column (filter)',
    fixture: 'perm_update',
    sql: 'alter table author rename column id to author_id',
    expect: (md) => {
      tbl(md, 'author').update_permissions[0].permission.filter = { author_id: { _eq: 'X-Svc-User-Id' } };
    },
  },
  {
    row: 'update permission (columns, filter, check, presets)',
    ddl: 'rename column (session preset)',
    fixture: 'perm_update',
    sql: 'alter table author rename column rating to score',
    expect: (md) => {
      tbl(md, 'author').update_permissions[0].permission.set = { score: 'x-svc-rating' };
    },
  },
  {
    row: 'update permission (columns, filter, check, presets)',
    ddl: 'change column type (session preset)',
    fixture: 'perm_update',
    sql: 'alter table author alter column rating type bigint',
    expect: unchanged,
  },

  {
    row: 'delete permission (filter)',
    ddl: 'drop column (filter)',
    fixture: 'perm_delete',
    sql: 'alter table author drop column bio',
    expect: depError('permission author.user.delete'),
  },
  {
    row: 'delete permission (filter)',
    ddl: 'drop column (filter)',
    fixture: 'perm_delete',
    sql: 'alter table author drop column bio',
    cascade: true,
    expect: (md) => dropPerm(md, 'author', 'delete'),
  },
  {
    row: 'delete permission (filter)',
    ddl: 'rename column (filter)',
    fixture: 'perm_delete',
    sql: 'alter table author rename column bio to about',
    expect: (md) => {
      tbl(md, 'author').delete_permissions[0].permission.filter = { about: { _is_null: false } };
    },
  },

  {
    row: 'permission through a relationship',
    ddl: 'drop remote column',
    fixture: 'perm_rel',
    sql: 'alter table author drop column name',
    expect: depError('permission article.user.select'),
  },
  {
    row: 'permission through a relationship',
    ddl: 'drop remote column',
    fixture: 'perm_rel',
    sql: 'alter table author drop column name',
    cascade: true,
    expect: (md) => dropPerm(md, 'article', 'select'),
  },
  {
    row: 'permission through a relationship',
    ddl: 'rename remote column',
    fixture: 'perm_rel',
    sql: 'alter table author rename column name to full_name',
    expect: (md) => {
      tbl(md, 'article').select_permissions[0].permission.filter = { author: { full_name: { _eq: 'Ada' } } };
    },
  },
  {
    row: 'permission through a relationship',
    ddl: 'drop foreign key',
    fixture: 'perm_rel',
    sql: 'alter table article drop constraint article_author_id_fkey',
    expect: depError('permission article.user.select', 'relationship article.author'),
  },
  {
    row: 'permission through a relationship',
    ddl: 'drop foreign key',
    fixture: 'perm_rel',
    sql: 'alter table article drop constraint article_author_id_fkey',
    cascade: true,
    expect: (md) => {
      dropPerm(md, 'article', 'select');
      dropRel(md, 'article', 'author');
    },
  },

  {
    row: 'permission with _exists',
    ddl: 'rename table',
    fixture: 'perm_exists',
    sql: 'alter table author rename to writer',
    expect: (md) => {
      renameTable(md, 'author', 'writer');
      tbl(md, 'article').select_permissions[0].permission.filter._exists._table = { schema: 'public', name: 'writer' };
    },
  },
  {
    row: 'permission with _exists',
    ddl: 'drop table',
    fixture: 'perm_exists',
    sql: 'drop table author cascade',
    expect: depError('permission article.user.select'),
  },
  {
    row: 'permission with _exists',
    ddl: 'drop table',
    fixture: 'perm_exists',
    sql: 'drop table author cascade',
    cascade: true,
    expect: (md) => {
      dropTable(md, 'author');
      dropPerm(md, 'article', 'select');
    },
  },
  {
    row: 'permission with _exists',
    ddl: 'rename column',
    fixture: 'perm_exists',
    sql: 'alter table author rename column rating to score',
    expect: (md) => {
      tbl(md, 'article').select_permissions[0].permission.filter._exists._where = { score: { _gt: 1 } };
    },
  },
  {
    row: 'permission with _exists',
    ddl: 'drop column',
    fixture: 'perm_exists',
    sql: 'alter table author drop column rating',
    expect: depError('permission article.user.select'),
  },

  // relationships
  {
    row: 'object relationship (foreign key)',
    ddl: 'drop foreign key',
    fixture: 'objrel_fk',
    sql: 'alter table article drop constraint article_author_id_fkey',
    expect: depError('relationship article.author'),
  },
  {
    row: 'object relationship (foreign key)',
    ddl: 'drop foreign key',
    fixture: 'objrel_fk',
    sql: 'alter table article drop constraint article_author_id_fkey',
    cascade: true,
    expect: (md) => dropRel(md, 'article', 'author'),
  },
  {
    row: 'object relationship (foreign key)',
    ddl: 'drop column',
    fixture: 'objrel_fk',
    sql: 'alter table article drop column author_id',
    expect: depError('relationship article.author'),
  },
  {
    row: 'object relationship (foreign key)',
    ddl: 'drop column',
    fixture: 'objrel_fk',
    sql: 'alter table article drop column author_id',
    cascade: true,
    expect: (md) => dropRel(md, 'article', 'author'),
  },
  {
    row: 'object relationship (foreign key)',
    ddl: 'rename column',
    fixture: 'objrel_fk',
    sql: 'alter table article rename column author_id to writer_id',
    expect: (md) => {
      tbl(md, 'article').object_relationships[0].using.foreign_key_constraint_on = 'writer_id';
    },
  },
  {
    row: 'object relationship (foreign key)',
    ddl: 'rename remote table',
    fixture: 'objrel_fk',
    sql: 'alter table author rename to writer',
    expect: (md) => renameTable(md, 'author', 'writer'),
    then: async () =>
      assert.deepEqual(await gqlData('{ article(order_by: {id: asc}) { author { name } } }'), {
        article: [{ author: { name: 'Ada' } }, { author: { name: 'Brian' } }],
      }),
  },
  {
    row: 'object relationship (foreign key)',
    ddl: 'drop remote table',
    fixture: 'objrel_fk',
    sql: 'drop table author cascade',
    expect: depError('relationship article.author'),
  },
  {
    row: 'object relationship (foreign key)',
    ddl: 'drop primary key (remote)',
    fixture: 'objrel_fk',
    sql: 'alter table author drop constraint author_pkey cascade',
    expect: depError('relationship article.author'),
  },
  {
    row: 'object relationship (foreign key)',
    ddl: 'replace foreign key (same columns)',
    fixture: 'objrel_fk',
    sql: 'alter table article drop constraint article_author_id_fkey; alter table article add constraint article_writer_fkey foreign key (author_id) references author(id)',
    expect: unchanged,
  },
  {
    row: 'object relationship (foreign key)',
    ddl: 'change column type',
    fixture: 'objrel_fk',
    sql: 'alter table article alter column author_id type bigint',
    expect: unchanged,
  },

  {
    row: 'array relationship (foreign key)',
    ddl: 'drop foreign key',
    fixture: 'arrrel_fk',
    sql: 'alter table article drop constraint article_author_id_fkey',
    expect: depError('relationship author.articles'),
  },
  {
    row: 'array relationship (foreign key)',
    ddl: 'drop foreign key',
    fixture: 'arrrel_fk',
    sql: 'alter table article drop constraint article_author_id_fkey',
    cascade: true,
    expect: (md) => dropRel(md, 'author', 'articles'),
  },
  {
    row: 'array relationship (foreign key)',
    ddl: 'rename column',
    fixture: 'arrrel_fk',
    sql: 'alter table article rename column author_id to writer_id',
    expect: (md) => {
      tbl(md, 'author').array_relationships[0].using.foreign_key_constraint_on.column = 'writer_id';
    },
  },
  {
    row: 'array relationship (foreign key)',
    ddl: 'rename remote table',
    fixture: 'arrrel_fk',
    sql: 'alter table article rename to post',
    expect: (md) => {
      renameTable(md, 'article', 'post');
      tbl(md, 'author').array_relationships[0].using.foreign_key_constraint_on.table = { schema: 'public', name: 'post' };
    },
  },
  {
    row: 'array relationship (foreign key)',
    ddl: 'drop remote table',
    fixture: 'arrrel_fk',
    sql: 'drop table article cascade',
    expect: depError('relationship author.articles'),
  },
  {
    row: 'array relationship (foreign key)',
    ddl: 'drop remote table',
    fixture: 'arrrel_fk',
    sql: 'drop table article cascade',
    cascade: true,
    expect: (md) => {
      dropTable(md, 'article');
      dropRel(md, 'author', 'articles');
    },
  },

  {
    row: 'object relationship (manual)',
    ddl: 'drop column',
    fixture: 'objrel_manual',
    sql: 'alter table article drop column editor_id',
    expect: depError('relationship article.editor'),
  },
  {
    row: 'object relationship (manual)',
    ddl: 'drop column',
    fixture: 'objrel_manual',
    sql: 'alter table article drop column editor_id',
    cascade: true,
    expect: (md) => dropRel(md, 'article', 'editor'),
  },
  {
    row: 'object relationship (manual)',
    ddl: 'rename column',
    fixture: 'objrel_manual',
    sql: 'alter table article rename column editor_id to reviewer_id',
    expect: (md) => {
      tbl(md, 'article').object_relationships[0].using.manual_configuration.column_mapping = { reviewer_id: 'id' };
    },
  },
  {
    row: 'object relationship (manual)',
    ddl: 'rename remote column',
    fixture: 'objrel_manual',
    sql: 'alter table author rename column id to author_id',
    expect: (md) => {
      tbl(md, 'article').object_relationships[0].using.manual_configuration.column_mapping = { editor_id: 'author_id' };
    },
  },
  {
    row: 'object relationship (manual)',
    ddl: 'rename remote table',
    fixture: 'objrel_manual',
    sql: 'alter table author rename to writer',
    expect: (md) => {
      renameTable(md, 'author', 'writer');
      tbl(md, 'article').object_relationships[0].using.manual_configuration.remote_table = { schema: 'public', name: 'writer' };
    },
  },
  {
    row: 'object relationship (manual)',
    ddl: 'drop remote table',
    fixture: 'objrel_manual',
    sql: 'drop table author cascade',
    expect: depError('relationship article.editor'),
  },
  {
    row: 'object relationship (manual)',
    ddl: 'change column type',
    fixture: 'objrel_manual',
    sql: 'alter table article alter column editor_id type bigint',
    expect: unchanged,
  },

  {
    row: 'array relationship (manual)',
    ddl: 'drop remote column',
    fixture: 'arrrel_manual',
    sql: 'alter table article drop column editor_id',
    expect: depError('relationship author.edited'),
  },
  {
    row: 'array relationship (manual)',
    ddl: 'drop remote column',
    fixture: 'arrrel_manual',
    sql: 'alter table article drop column editor_id',
    cascade: true,
    expect: (md) => dropRel(md, 'author', 'edited'),
  },
  {
    row: 'array relationship (manual)',
    ddl: 'rename remote column',
    fixture: 'arrrel_manual',
    sql: 'alter table article rename column editor_id to reviewer_id',
    expect: (md) => {
      tbl(md, 'author').array_relationships[0].using.manual_configuration.column_mapping = { id: 'reviewer_id' };
    },
  },
  {
    row: 'array relationship (manual)',
    ddl: 'rename remote table',
    fixture: 'arrrel_manual',
    sql: 'alter table article rename to post',
    expect: (md) => {
      renameTable(md, 'article', 'post');
      tbl(md, 'author').array_relationships[0].using.manual_configuration.remote_table = { schema: 'public', name: 'post' };
    },
  },

  // computed fields
  {
    row: 'computed field (scalar)',
    ddl: 'drop function',
    fixture: 'cf_scalar',
    sql: 'drop function author_full_name(author)',
    expect: depError('computed field author.full_name'),
  },
  {
    row: 'computed field (scalar)',
    ddl: 'drop function',
    fixture: 'cf_scalar',
    sql: 'drop function author_full_name(author)',
    cascade: true,
    expect: (md) => dropComputedField(md, 'full_name'),
  },
  {
    row: 'computed field (scalar)',
    ddl: 'rename function',
    fixture: 'cf_scalar',
    sql: 'alter function author_full_name(author) rename to author_fullname',
    expect: depError('computed field author.full_name'),
  },
  {
    row: 'computed field (scalar)',
    ddl: 'rename function',
    fixture: 'cf_scalar',
    sql: 'alter function author_full_name(author) rename to author_fullname',
    cascade: true,
    expect: (md) => dropComputedField(md, 'full_name'),
  },
  {
    row: 'computed field (scalar)',
    ddl: 'replace function (other signature)',
    fixture: 'cf_scalar',
    sql: `drop function author_full_name(author); create function author_full_name(a author, sep text default ' ') returns text language sql stable as $$ select a.name $$`,
    expect: depError('computed field author.full_name'),
  },
  {
    row: 'computed field (scalar)',
    ddl: 'replace function (same signature)',
    fixture: 'cf_scalar',
    sql: `create or replace function author_full_name(a author) returns text language sql stable as $$ select upper(a.name) $$`,
    expect: unchanged,
    then: async () => assert.deepEqual(await gqlData('{ author(order_by: {id: asc}, limit: 1) { full_name } }'), { author: [{ full_name: 'ADA' }] }),
  },
  {
    row: 'computed field (scalar)',
    ddl: 'replace function (volatile)',
    fixture: 'cf_scalar',
    sql: `create or replace function author_full_name(a author) returns text language sql volatile as $$ select a.name $$`,
    expect: notSupported('The type of function "author_full_name" associated with computed field "full_name" of table "author" is being altered to "VOLATILE"'),
  },
  {
    row: 'computed field (scalar)',
    ddl: 'add overload',
    fixture: 'cf_scalar',
    sql: `create function author_full_name(a author, n int) returns text language sql stable as $$ select a.name $$`,
    expect: notSupported('The function "author_full_name" associated with computed field"full_name" of table "author" is being overloaded'),
  },
  {
    row: 'computed field (scalar)',
    ddl: 'add overload',
    fixture: 'cf_scalar',
    cascade: true,
    sql: `create function author_full_name(a author, n int) returns text language sql stable as $$ select a.name $$`,
    expect: notSupported('The function "author_full_name" associated with computed field"full_name" of table "author" is being overloaded'),
  },
  { row: 'computed field (scalar)', ddl: 'drop table', fixture: 'cf_scalar', sql: 'drop table author cascade', expect: (md) => dropTable(md, 'author') },
  {
    row: 'computed field (scalar)',
    ddl: 'rename table',
    fixture: 'cf_scalar',
    sql: 'alter table author rename to writer',
    expect: (md) => renameTable(md, 'author', 'writer'),
    then: async () => assert.deepEqual(await gqlData('{ writer(order_by: {id: asc}, limit: 1) { full_name } }'), { writer: [{ full_name: 'Ada' }] }),
  },
  {
    row: 'computed field (scalar)',
    ddl: 'drop column (used in the function body only)',
    fixture: 'cf_scalar',
    sql: 'alter table author drop column rating',
    expect: unchanged,
  },

  {
    row: 'computed field used by a permission',
    ddl: 'drop function',
    fixture: 'cf_perm',
    sql: 'drop function author_full_name(author)',
    expect: depError('computed field author.full_name', 'permission author.user.select'),
  },
  {
    row: 'computed field used by a permission',
    ddl: 'drop function',
    fixture: 'cf_perm',
    sql: 'drop function author_full_name(author)',
    cascade: true,
    expect: (md) => {
      dropComputedField(md, 'full_name');
      dropPerm(md, 'author', 'select');
    },
  },

  {
    row: 'computed field (table-returning)',
    ddl: 'drop returned table',
    fixture: 'cf_table',
    sql: 'drop table article cascade',
    expect: depError('computed field author.written'),
  },
  {
    row: 'computed field (table-returning)',
    ddl: 'drop returned table',
    fixture: 'cf_table',
    sql: 'drop table article cascade',
    cascade: true,
    expect: (md) => {
      dropTable(md, 'article');
      dropComputedField(md, 'written');
    },
  },
  {
    row: 'computed field (table-returning)',
    ddl: 'drop function',
    fixture: 'cf_table',
    sql: 'drop function author_articles(author)',
    expect: depError('computed field author.written'),
  },
  {
    row: 'computed field (table-returning)',
    ddl: 'rename returned table',
    fixture: 'cf_table',
    sql: 'alter table article rename to post',
    expect: (md) => renameTable(md, 'article', 'post'),
    then: async () =>
      assert.deepEqual(
        await gqlData('{ __type(name: "author") { fields { name type { ofType { ofType { ofType { name } } } } } } }').then(
          (d) => d.__type.fields.find((f: any) => f.name === 'written').type.ofType.ofType.ofType.name,
        ),
        'post',
      ),
  },

  // custom column names and root fields
  {
    row: 'custom column names, custom root fields',
    ddl: 'rename column',
    fixture: 'custom',
    sql: 'alter table author rename column name to full_name',
    expect: (md) => {
      tbl(md, 'author').configuration.custom_column_names = { full_name: 'authorName' };
    },
    then: async () => assert.deepEqual(await gqlData('{ authors(order_by: {id: asc}, limit: 1) { authorName } }'), { authors: [{ authorName: 'Ada' }] }),
  },
  {
    row: 'custom column names, custom root fields',
    ddl: 'drop column',
    fixture: 'custom',
    sql: 'alter table author drop column name',
    expect: (md) => {
      tbl(md, 'author').configuration.custom_column_names = {};
    },
  },
  {
    row: 'custom column names, custom root fields',
    ddl: 'change column type',
    fixture: 'custom',
    sql: 'alter table author alter column name type varchar(100)',
    expect: unchanged,
  },
  {
    row: 'custom column names, custom root fields',
    ddl: 'rename table',
    fixture: 'custom',
    sql: 'alter table author rename to writer',
    expect: (md) => renameTable(md, 'author', 'writer'),
    then: async () => assert.deepEqual(await gqlData('{ authors(order_by: {id: asc}, limit: 1) { authorName } }'), { authors: [{ authorName: 'Ada' }] }),
  },
  {
    row: 'custom column names, custom root fields',
    ddl: 'drop table',
    fixture: 'custom',
    sql: 'drop table author cascade',
    expect: (md) => dropTable(md, 'author'),
  },
  {
    row: 'custom column names, custom root fields',
    ddl: 'swap two column names',
    fixture: 'custom_perm',
    sql: 'alter table author rename column name to tmp; alter table author rename column bio to name; alter table author rename column tmp to bio',
    expect: (md) => {
      const t = tbl(md, 'author');
      t.configuration.custom_column_names = { bio: 'authorName', name: 'authorBio' };
      t.select_permissions[0].permission = { columns: ['id', 'bio'], filter: { name: { _is_null: false } } };
    },
    then: async () => assert.deepEqual(await gqlData('{ author(order_by: {id: asc}, limit: 1) { authorName } }'), { author: [{ authorName: 'Ada' }] }),
  },
  {
    row: 'custom column names, custom root fields',
    ddl: 'rename column to a relationship name',
    fixture: 'custom_rel',
    sql: 'alter table author rename column bio to articles',
    expect: newInconsistency({ type: 'array_relation', reason: 'field definition conflicts with postgres column' }),
  },
  {
    row: 'custom column names, custom root fields',
    ddl: 'set_table_custom_fields: name of a relationship',
    fixture: 'custom_rel',
    sql: '',
    request: { type: 'set_table_custom_fields', version: 2, args: { table: 'author', custom_column_names: { bio: 'articles' } } },
    expect: {
      status: 400,
      code: 'unexpected',
      error: 'cannot continue due to new inconsistent metadata',
      internal: [{ type: 'array_relation', reason: 'field definition conflicts with custom field name for postgres column "bio"' }],
    },
  },
  {
    row: 'custom column names, custom root fields',
    ddl: 'set_table_custom_fields: name of a computed field',
    fixture: 'custom_rel',
    sql: '',
    request: { type: 'set_table_custom_fields', version: 2, args: { table: 'author', custom_column_names: { bio: 'full_name' } } },
    expect: {
      status: 400,
      code: 'unexpected',
      error: 'cannot continue due to new inconsistent metadata',
      internal: [{ type: 'computed_field', reason: 'field definition conflicts with custom field name for postgres column "bio"' }],
    },
  },

  // enum tables
  {
    row: 'enum table',
    ddl: 'insert a valid value',
    fixture: 'enum',
    sql: `insert into tag_kind values ('review', 'Review')`,
    expect: unchanged,
    then: async () => assert.deepEqual(await enumValues(), ['news', 'opinion', 'review']),
  },
  // data changes carry no DDL keyword: as upstream, run_sql does not check them; the enum table is
  // inconsistent afterwards (get_inconsistent_metadata says why)
  ...(
    [
      [
        'insert a value that is not a GraphQL name',
        `insert into tag_kind values ('not valid', null)`,
        'the value "not valid" is not a valid GraphQL enum value name',
      ],
      [
        'insert reserved values',
        `insert into tag_kind values ('true', null), ('null', null), ('3d', null)`,
        'the values "3d", "null", and "true" are not valid GraphQL enum value names',
      ],
      ['delete all rows', 'delete from tag; delete from tag_kind', 'the table must have at least one row'],
    ] as const
  ).map(([ddl, sql, reason]): Cell => ({
    row: 'enum table',
    ddl,
    fixture: 'enum',
    sql,
    request: { type: 'run_sql', args: { sql } },
    expect: unchanged,
    then: async () => {
      const inc = await inconsistent();
      assert.ok(
        inc.some((o: { type: string; reason: string }) => o.type === 'table' && o.reason.includes(reason)),
        JSON.stringify(inc),
      );
    },
  })),
  {
    row: 'enum table',
    ddl: 'drop primary key',
    fixture: 'enum',
    sql: 'alter table tag_kind drop constraint tag_kind_pkey cascade',
    expect: newInconsistency(enumReason('the table must have a primary key', tooManyColumns('comment, value'))),
  },
  {
    row: 'enum table',
    ddl: 'primary key on two columns',
    fixture: 'enum',
    sql: `update tag_kind set comment = value where comment is null; alter table tag_kind drop constraint tag_kind_pkey cascade; alter table tag_kind add primary key (value, comment)`,
    expect: newInconsistency(enumReason('the table’s primary key must not span multiple columns (comment, value)', tooManyColumns('comment, value'))),
  },
  {
    row: 'enum table',
    ddl: 'add a column',
    fixture: 'enum',
    sql: 'alter table tag_kind add column extra int',
    expect: newInconsistency(enumReason(tooManyColumns('comment, extra'))),
  },
  {
    row: 'enum table',
    ddl: 'change column type (comment)',
    fixture: 'enum',
    sql: 'update tag_kind set comment = null; alter table tag_kind alter column comment type int using null',
    expect: newInconsistency(enumReason('the table’s comment column ("comment") must have type "text", not type "integer"')),
  },
  {
    row: 'enum table',
    ddl: 'rename table',
    fixture: 'enum',
    sql: 'alter table tag_kind rename to tag_kinds',
    expect: (md) => renameTable(md, 'tag_kind', 'tag_kinds'),
  },
  { row: 'enum table', ddl: 'drop table', fixture: 'enum', sql: 'drop table tag_kind cascade', expect: (md) => dropTable(md, 'tag_kind') },

  // tracked functions
  {
    row: 'tracked function',
    ddl: 'drop function',
    fixture: 'function',
    sql: 'drop function search_authors(text)',
    expect: (md) => dropFunction(md, 'search_authors'),
  },
  {
    row: 'tracked function',
    ddl: 'rename function',
    fixture: 'function',
    sql: 'alter function search_authors(text) rename to find_authors',
    expect: newInconsistency({ type: 'function', reason: 'in function "search_authors": no such function exists in postgres : "search_authors"' }),
  },
  {
    row: 'tracked function',
    ddl: 'rename function',
    fixture: 'function',
    sql: 'alter function search_authors(text) rename to find_authors',
    cascade: true,
    expect: newInconsistency({ type: 'function', reason: 'in function "search_authors": no such function exists in postgres : "search_authors"' }),
  },
  {
    row: 'tracked function',
    ddl: 'replace function (other signature)',
    fixture: 'function',
    sql: `drop function search_authors(text); create function search_authors(q text, lim int) returns setof author language sql stable as $$ select * from author limit lim $$`,
    expect: (md) => dropFunction(md, 'search_authors'),
  },
  {
    row: 'tracked function',
    ddl: 'replace function (same signature)',
    fixture: 'function',
    sql: `create or replace function search_authors(q text) returns setof author language sql stable as $$ select * from author where name = q $$`,
    expect: unchanged,
    then: async () => assert.deepEqual(await gqlData('{ search_authors(args: {q: "Ada"}) { id } }'), { search_authors: [{ id: 1 }] }),
  },
  {
    row: 'tracked function',
    ddl: 'replace function (volatile)',
    fixture: 'function',
    sql: `create or replace function search_authors(q text) returns setof author language sql volatile as $$ select * from author $$`,
    expect: notSupported('type of function "search_authors" is altered to "VOLATILE" which is not supported now'),
  },
  {
    row: 'tracked function',
    ddl: 'add overload',
    fixture: 'function',
    sql: `create function search_authors(q text, lim int) returns setof author language sql stable as $$ select * from author limit lim $$`,
    expect: notSupported('the following tracked function(s) cannot be overloaded: search_authors'),
  },
  {
    row: 'tracked function',
    ddl: 'add overload',
    fixture: 'function',
    cascade: true,
    sql: `create function search_authors(q text, lim int) returns setof author language sql stable as $$ select * from author limit lim $$`,
    expect: notSupported('the following tracked function(s) cannot be overloaded: search_authors'),
  },
  {
    row: 'tracked function',
    ddl: 'change column type (returned table)',
    fixture: 'function',
    sql: 'alter table author alter column rating type bigint',
    expect: unchanged,
  },
  {
    row: 'tracked function',
    ddl: 'drop returned table',
    fixture: 'function',
    sql: 'drop table author cascade',
    expect: (md) => {
      dropTable(md, 'author');
      dropFunction(md, 'search_authors');
    },
  },
  {
    row: 'tracked function',
    ddl: 'rename returned table',
    fixture: 'function',
    sql: 'alter table author rename to writer',
    expect: (md) => renameTable(md, 'author', 'writer'),
    then: async () =>
      assert.equal(
        (await gqlData('{ __schema { queryType { fields { name type { ofType { ofType { ofType { name } } } } } } } }')).__schema.queryType.fields.find(
          (f: any) => f.name === 'search_authors',
        ).type.ofType.ofType.ofType.name,
        'writer',
      ),
  },
  {
    row: 'tracked function',
    ddl: 'drop schema',
    fixture: 'other_function',
    sql: 'drop schema other cascade',
    expect: (md) => {
      dropTable(md, 'thing', 'other');
      dropFunction(md, 'things', 'other');
    },
  },
  {
    row: 'tracked function',
    ddl: 'rename schema',
    fixture: 'other_function',
    sql: 'alter schema other rename to other2',
    expect: newInconsistency({ type: 'function', reason: 'in function "other.things": no such function exists in postgres : "other.things"' }),
  },

  // event triggers
  {
    row: 'event trigger (columns, payload)',
    ddl: 'drop column (listened to)',
    fixture: 'event_trigger',
    sql: 'alter table author drop column name',
    expect: depError('event-trigger author.author_changes'),
  },
  {
    row: 'event trigger (columns, payload)',
    ddl: 'drop column (listened to)',
    fixture: 'event_trigger',
    sql: 'alter table author drop column name',
    cascade: true,
    expect: (md) => drop(tbl(md, 'author'), 'event_triggers', (e) => e.name === 'author_changes'),
    then: async () => {
      await query(server.url, { type: 'run_sql', args: { sql: `insert into author (id) values (10)` } });
      assert.equal(await eventCount('author_changes'), 0);
    },
  },
  {
    row: 'event trigger (columns, payload)',
    ddl: 'rename column (listened to)',
    fixture: 'event_trigger',
    sql: 'alter table author rename column name to full_name',
    expect: (md) => {
      const d = tbl(md, 'author').event_triggers[0].definition;
      d.update = { columns: ['full_name'], payload: ['id', 'full_name'] };
    },
    then: async () => {
      await query(server.url, { type: 'run_sql', args: { sql: `update author set full_name = 'Adele' where id = 1` } });
      assert.equal(await eventCount('author_changes'), 1);
    },
  },
  {
    row: 'event trigger (columns, payload)',
    ddl: 'drop column (payload)',
    fixture: 'event_trigger',
    sql: 'alter table author drop column id cascade',
    expect: depError('event-trigger author.author_changes'),
  },
  {
    row: 'event trigger (columns, payload)',
    ddl: 'change column type',
    fixture: 'event_trigger',
    sql: 'alter table author alter column name type varchar(100)',
    expect: unchanged,
  },
  {
    row: 'event trigger (columns, payload)',
    ddl: 'drop column (not listened to)',
    fixture: 'event_trigger',
    sql: 'alter table author drop column bio',
    expect: unchanged,
  },
  {
    row: 'event trigger (columns, payload)',
    ddl: 'rename table',
    fixture: 'event_trigger',
    sql: 'alter table author rename to writer',
    expect: (md) => renameTable(md, 'author', 'writer'),
    then: async () => {
      await query(server.url, { type: 'run_sql', args: { sql: `insert into writer (name) values ('Cy')` } });
      assert.equal(await eventCount('author_changes'), 1);
    },
  },
  {
    row: 'event trigger (columns, payload)',
    ddl: 'drop table',
    fixture: 'event_trigger',
    sql: 'drop table author cascade',
    expect: (md) => dropTable(md, 'author'),
  },

  // query collections: no dependency on the database
  { row: 'query collection, allow-list', ddl: 'drop column', fixture: 'collection', sql: 'alter table author drop column name', expect: unchanged },
  { row: 'query collection, allow-list', ddl: 'drop table', fixture: 'collection', sql: 'drop table author cascade', expect: (md) => dropTable(md, 'author') },

  // check_metadata_consistency: false skips all of the above
  {
    row: 'select permission (columns, filter)',
    ddl: 'drop column, check_metadata_consistency false',
    fixture: 'perm_select',
    sql: 'alter table author drop column rating',
    request: { type: 'run_sql', args: { sql: 'alter table author drop column rating', check_metadata_consistency: false } },
    expect: unchanged,
    then: async () =>
      assert.deepEqual(
        (await inconsistent()).map((o) => o.type),
        ['select_permission'],
      ),
  },
];

// ---- running a cell ---------------------------------------------------------------------------

/** What the catalog of the test schemas looks like (to check that a refused DDL was rolled back). */
async function dbFingerprint(): Promise<unknown> {
  const [row] = await sql(
    server.databaseUrl,
    `select json_build_object(
       'relations', (select json_agg(format('%s.%s:%s', n.nspname, c.relname, c.relkind) order by 1)
          from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where n.nspname in ('public', 'other', 'other2') and c.relkind in ('r', 'v')),
       'columns', (select json_agg(format('%s.%s.%s:%s', n.nspname, c.relname, a.attname, format_type(a.atttypid, a.atttypmod)) order by 1)
          from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
          where n.nspname in ('public', 'other', 'other2') and c.relkind in ('r', 'v') and a.attnum > 0 and not a.attisdropped),
       'constraints', (select json_agg(format('%s:%s', conrelid::regclass, conname) order by 1) from pg_constraint
          where connamespace in (select oid from pg_namespace where nspname in ('public', 'other', 'other2'))),
       'functions', (select json_agg(format('%s:%s', p.oid::regprocedure, p.provolatile) order by 1) from pg_proc p
          where pronamespace in (select oid from pg_namespace where nspname in ('public', 'other', 'other2'))),
       'enum_rows', (select json_agg(value order by value) from tag_kind)
     ) as f`,
  );
  return row!.f;
}

const exportMd = async (): Promise<Md> => query(server.url, { type: 'export_metadata', args: {} });

async function setUp(fixture: keyof typeof FIXTURES): Promise<void> {
  await sql(server.databaseUrl, 'delete from svc_catalog.event_invocation_logs; delete from svc_catalog.event_log');
  await query(server.url, {
    type: 'bulk',
    args: [
      { type: 'clear_metadata', args: {} },
      { type: 'run_sql', args: { sql: BASE_SQL } },
    ],
  });
  await query(server.url, { type: 'bulk', args: FIXTURES[fixture] });
  assert.deepEqual(await inconsistent(), [], `fixture ${fixture} is consistent`);
}

const cellName = (c: Cell) => `${c.row} × ${c.ddl}${c.cascade ? ' (cascade)' : ''}`;

describe('metadata × DDL', () => {
  test('docs/dependencies.md lists every cell', () => {
    const doc = readFileSync(new URL('../../docs/dependencies.md', import.meta.url), 'utf8');
    assert.deepEqual(
      CELLS.map(cellName).filter((n) => !doc.includes(`| ${n} |`)),
      [],
    );
  });

  for (const cell of CELLS) {
    test(cellName(cell), async () => {
      await setUp(cell.fixture);
      const md = await exportMd();
      const db = await dbFingerprint();
      const r = await postQuery(server.url, cell.request ?? { type: 'run_sql', args: { sql: cell.sql, ...(cell.cascade ? { cascade: true } : {}) } });
      if (typeof cell.expect === 'function') {
        assert.equal(r.status, 200, r.text);
        const expected = structuredClone(md);
        cell.expect(expected);
        assert.deepEqual(await exportMd(), expected, 'metadata after the DDL');
        if (!cell.request) assert.deepEqual(await inconsistent(), [], 'metadata is consistent');
        await cell.then?.();
      } else {
        const { internal, ...e } = cell.expect;
        assert.deepEqual({ status: r.status, code: r.body.code, error: r.body.error, path: r.body.path }, { ...e, path: '$.args' }, r.text);
        if (internal)
          assert.deepEqual(
            r.body.internal?.map((o: any) => ({ type: o.type, reason: o.reason })),
            internal,
            r.text,
          );
        assert.deepEqual(await exportMd(), md, 'metadata unchanged');
        assert.deepEqual(await dbFingerprint(), db, 'database unchanged');
        assert.deepEqual(await inconsistent(), [], 'still consistent');
      }
    });
  }
});

// ---- enum tables are checked at every schema build --------------------------------------------

describe('enum tables at every schema build', () => {
  const badRow = async () => sql(server.databaseUrl, `insert into tag_kind values ('not valid', null)`);
  const reason = 'the table "tag_kind" cannot be used as an enum because the value "not valid" is not a valid GraphQL enum value name';

  test('a value changed behind the engine is reported by reload_metadata', async () => {
    await setUp('enum');
    await badRow();
    await query(server.url, { type: 'reload_metadata', args: {} });
    assert.deepEqual(await inconsistent(), [{ definition: { schema: 'public', name: 'tag_kind' }, reason, type: 'table' }]);
    // the GraphQL schema is still served (without the enum table)
    assert.deepEqual(await gqlData('{ tag { id } }'), { tag: [] });
  });

  test('a value changed behind the engine fails an unrelated metadata change', async () => {
    await setUp('enum');
    const md = await exportMd();
    await badRow();
    const r = await postQuery(server.url, track('author'));
    assert.deepEqual(
      { status: r.status, code: r.body.code, error: r.body.error, path: r.body.path },
      { status: 400, code: 'unexpected', error: 'cannot continue due to new inconsistent metadata', path: '$.args' },
      r.text,
    );
    assert.deepEqual(r.body.internal, [{ definition: { schema: 'public', name: 'tag_kind' }, reason, type: 'table' }]);
    assert.deepEqual(await exportMd(), md);
  });

  test('a value changed behind the engine is reported at start-up', async () => {
    await setUp('enum');
    await badRow();
    const second = await startTestServer({ databaseUrl: server.databaseUrl });
    try {
      const r = await query(second.url, { type: 'get_inconsistent_metadata', args: {} });
      assert.deepEqual(r.inconsistent_objects, [{ definition: { schema: 'public', name: 'tag_kind' }, reason, type: 'table' }]);
    } finally {
      await second.close();
    }
  });

  test('set_table_is_enum and track_table report the values with the same reason', async () => {
    await setUp('table');
    await sql(server.databaseUrl, `insert into tag_kind values ('bad value', null)`);
    const error = 'the table "tag_kind" cannot be used as an enum because the value "bad value" is not a valid GraphQL enum value name';
    const check = (r: { status: number; body: any; text: string }) =>
      assert.deepEqual({ status: r.status, code: r.body.code, error: r.body.error }, { status: 400, code: 'constraint-violation', error }, r.text);
    check(await postQuery(server.url, { type: 'track_table', args: { schema: 'public', name: 'tag_kind', is_enum: true } }));
    await query(server.url, track('tag_kind'));
    check(await postQuery(server.url, { type: 'set_table_is_enum', args: { table: 'tag_kind', is_enum: true } }));
  });
});
