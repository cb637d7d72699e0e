/** The SQL of the console's table forms (console/src/data/ddl.ts), run against real PostgreSQL. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  addColumnSql,
  addConstraintSql,
  alterColumnSql,
  checkTableSpec,
  checkTypeName,
  createIndexSql,
  createTableSql,
  dropColumnSql,
  dropConstraintSql,
  dropIndexSql,
  ident,
  type ColumnSpec,
  type TableSpec,
  alterColumnDownSql,
  defaultConstraintName,
  defaultIndexName,
  dropColumnDownSql,
  migrationName,
  recreateTableSql,
} from '../../../console/src/data/ddl.ts';
import { introspectionSql, type TableInfo } from '../../../console/src/data/model.ts';
import { createTestDatabase, sql, type TestDatabase } from '../../helpers/db.js';

const col = (name: string, type: string, more: Partial<ColumnSpec> = {}): ColumnSpec => ({ name, type, default: '', nullable: true, unique: false, ...more });
const spec = (more: Partial<TableSpec>): TableSpec => ({
  schema: 'public',
  name: 't',
  columns: [],
  primaryKey: [],
  foreignKeys: [],
  uniqueKeys: [],
  checks: [],
  comment: '',
  ...more,
});

describe('table DDL', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    await db?.drop();
  });

  test('identifiers are quoted, quotes doubled', () => {
    assert.equal(ident('a"b'), '"a""b"');
  });

  test('create table: columns, defaults, not null, unique, primary key, foreign key with actions, check, comment', async () => {
    await sql(db.url, 'create table "Author" (id serial primary key)');
    const s = spec({
      name: 'Book "1"',
      columns: [
        col('id', 'uuid', { default: 'gen_random_uuid()', nullable: false }),
        col('title', 'text', { nullable: false, unique: true }),
        col('author id', 'integer'),
        col('price', 'numeric(10,2)', { default: '0' }),
      ],
      primaryKey: ['id'],
      foreignKeys: [{ columns: ['author id'], refSchema: 'public', refTable: 'Author', refColumns: ['id'], onUpdate: 'no action', onDelete: 'set null' }],
      checks: ['price >= 0'],
      comment: "the author's books",
    });
    assert.deepEqual(checkTableSpec(s), []);
    const text = createTableSql(s);
    assert.equal(
      text,
      `create table "public"."Book ""1""" (
  "id" uuid default gen_random_uuid() not null,
  "title" text not null unique,
  "author id" integer,
  "price" numeric(10,2) default 0,
  primary key ("id"),
  foreign key ("author id") references "public"."Author" ("id") on delete set null,
  check (price >= 0)
);
comment on table "public"."Book ""1""" is 'the author''s books';`,
    );
    await sql(db.url, text);
    const fk = await sql(
      db.url,
      `select confdeltype, pg_get_constraintdef(oid) as def from pg_constraint where conrelid = '"Book ""1"""'::regclass and contype = 'f'`,
    );
    assert.deepEqual(fk, [{ confdeltype: 'n', def: 'FOREIGN KEY ("author id") REFERENCES "Author"(id) ON DELETE SET NULL' }]);
    const t = 'public."Book ""1"""';
    await sql(db.url, addColumnSql({ schema: 'public', name: 'Book "1"' }, col('isbn', 'varchar(13)', { nullable: false, default: "''" })));
    await sql(
      db.url,
      alterColumnSql(
        { schema: 'public', name: 'Book "1"' },
        col('isbn', 'varchar(13)', { nullable: false, default: "''" }),
        col('code', 'text', { nullable: true, default: '', unique: true }),
      ).join('\n'),
    );
    const cols = await sql(
      db.url,
      `select a.attname, format_type(a.atttypid, a.atttypmod) as type, a.attnotnull, pg_get_expr(d.adbin, d.adrelid) as def
      from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum where a.attrelid = '${t}'::regclass and a.attname = 'code'`,
    );
    assert.deepEqual(cols, [{ attname: 'code', type: 'text', attnotnull: false, def: null }]);
    const uniq = await sql(db.url, `select conname from pg_constraint where conrelid = '${t}'::regclass and contype = 'u' order by conname`);
    assert.deepEqual(
      uniq.map((r) => r.conname),
      ['Book "1"_code_key', 'Book "1"_title_key'],
    );
    const table = { schema: 'public', name: 'Book "1"' };
    await sql(db.url, addConstraintSql(table, { kind: 'check', name: 'positive', expression: 'price > -1' }));
    await sql(db.url, dropConstraintSql(table, 'positive'));
    await sql(db.url, createIndexSql(table, { name: 'by title', columns: ['title', 'author id'], unique: false, method: 'btree' }));
    assert.equal((await sql(db.url, `select count(*)::int as n from pg_indexes where indexname = 'by title'`))[0]!.n, 1);
    await sql(db.url, dropIndexSql('public', 'by title'));
    await sql(db.url, dropColumnSql(table, 'code'));
    assert.equal(
      (await sql(db.url, `select count(*)::int as n from pg_attribute where attrelid = '${t}'::regclass and attname = 'code' and not attisdropped`))[0]!.n,
      0,
    );
  });

  test('alter column: rename first, then type, default and nullability on the new name', () => {
    const t = { schema: 's', name: 'x' };
    assert.deepEqual(alterColumnSql(t, col('a', 'integer'), col('b', 'bigint', { default: '1', nullable: false })), [
      'alter table "s"."x" rename column "a" to "b";',
      'alter table "s"."x" alter column "b" type bigint using "b"::bigint;',
      'alter table "s"."x" alter column "b" set default 1;',
      'alter table "s"."x" alter column "b" set not null;',
    ]);
    assert.deepEqual(alterColumnSql(t, col('a', 'integer', { default: '1' }), col('a', 'integer')), ['alter table "s"."x" alter column "a" drop default;']);
    assert.deepEqual(alterColumnSql(t, col('a', 'integer'), col('a', 'integer')), []);
    assert.equal(createIndexSql(t, { name: '', columns: ['doc'], unique: false, method: 'gin' }), 'create index on "s"."x" using gin ("doc");');
  });

  test('problems of a spec and of type names', () => {
    assert.deepEqual(checkTableSpec(spec({ name: '' })), ['the table needs a name', 'the table needs at least one column']);
    assert.deepEqual(
      checkTableSpec(
        spec({
          columns: [col('a', 'int'), col('a', ''), col('', 'text; drop table x')],
          primaryKey: ['z'],
          foreignKeys: [{ columns: ['a'], refSchema: 'public', refTable: '', refColumns: [''], onUpdate: 'no action', onDelete: 'no action' }],
        }),
      ),
      [
        'two columns are named a',
        'column a: choose a type',
        'column 3 needs a name',
        'column 3: not a type name: "text; drop table x"',
        'the primary key names no column z',
        'foreign key 1: choose the table it references',
        'foreign key 1: choose a referenced column for each column',
      ],
    );
    for (const ok of ['integer', 'character varying(20)', 'numeric(10, 2)', 'text[]', 'double precision', 'public.my_enum', '"MyType"'])
      assert.equal(checkTypeName(ok), undefined, ok);
  });

  // ---- the down migrations svc console writes (console/src/data/ddl.ts) -------------------------

  const shape = async (table: string) => ({
    columns: await sql(
      db.url,
      `select column_name, data_type, is_nullable, column_default from information_schema.columns where table_name = $1 order by ordinal_position`,
      [table],
    ),
    constraints: await sql(db.url, `select conname, pg_get_constraintdef(oid) as def from pg_constraint where conrelid = $1::regclass order by conname`, [
      `"${table}"`,
    ]),
    indexes: await sql(db.url, `select indexname, indexdef from pg_indexes where tablename = $1 order by indexname`, [table]),
  });
  const info = async (name: string): Promise<TableInfo> => {
    const [r] = await sql<{ tables: unknown }>(db.url, introspectionSql('public'));
    const tables = (typeof r!.tables === 'string' ? JSON.parse(r!.tables) : r!.tables) as TableInfo[];
    return tables.find((t) => t.name === name)!;
  };

  test('migration names and the default names of constraints and indexes', () => {
    assert.equal(migrationName('alter_table', 'public', 'my table', 'add_column', 'é"x'), 'alter_table_public_my_table_add_column_x');
    const t = { schema: 'public', name: 'book' };
    assert.equal(defaultConstraintName(t, { kind: 'unique', name: '', columns: ['a', 'b'] }), 'book_a_b_key');
    assert.equal(defaultConstraintName(t, { kind: 'check', name: '', expression: 'x > 0' }, ['book_check']), 'book_check1');
    assert.equal(defaultIndexName(t, ['a']), 'book_a_idx');
  });

  test('downs: editing a column (rename, retype, default, not null, unique) and back gives the column it was', async () => {
    await sql(db.url, 'create table down_t (id serial primary key, "Name" text, n integer default 1 not null)');
    const t = { schema: 'public', name: 'down_t' };
    const before = await shape('down_t');
    const b = { name: 'Name', type: 'text', default: '', nullable: true, unique: false };
    const a = { name: 'label', type: 'varchar(40)', default: "'x'", nullable: false, unique: true };
    await sql(db.url, alterColumnSql(t, b, a).join('\n'));
    assert.notDeepEqual(await shape('down_t'), before);
    await sql(db.url, alterColumnDownSql(t, b, a).join('\n'));
    assert.deepEqual(await shape('down_t'), before);
    // a unique column made not unique, and back
    await sql(db.url, 'alter table down_t add constraint "down_t_n_key" unique (n)');
    const withUnique = await shape('down_t');
    const nb = { name: 'n', type: 'integer', default: '1', nullable: false, unique: true, uniqueConstraint: 'down_t_n_key' };
    const na = { ...nb, unique: false };
    await sql(db.url, [...alterColumnSql(t, nb, na), dropConstraintSql(t, 'down_t_n_key')].join('\n'));
    await sql(db.url, alterColumnDownSql(t, nb, na).join('\n'));
    assert.deepEqual(await shape('down_t'), withUnique);
  });

  test('downs: a dropped column and a dropped table come back with their types, defaults, constraints, indexes and comment', async () => {
    await sql(
      db.url,
      `create table down_a (id serial primary key, code text not null default 'c' unique, n numeric(8,2) check (n > 0));
      create table down_b (id bigserial primary key, a_id integer references down_a (id) on delete cascade, note text);
      create index down_b_note on down_b (lower(note)); comment on table down_b is 'it''s b'`,
    );
    const t = { schema: 'public', name: 'down_a' };
    const a = await shape('down_a');
    await sql(db.url, dropColumnSql(t, 'code'));
    await sql(db.url, dropColumnDownSql(t, { name: 'code', type: 'text', default: "'c'", nullable: false, unique: true }));
    // the column comes back last
    const byName = (cs: Array<Record<string, unknown>>) => [...cs].sort((x, y) => String(x.column_name).localeCompare(String(y.column_name)));
    assert.deepEqual(byName((await shape('down_a')).columns), byName(a.columns));

    const b = await info('down_b');
    const before = await shape('down_b');
    await sql(db.url, 'drop table down_b');
    await sql(db.url, recreateTableSql(b));
    assert.deepEqual(await shape('down_b'), before);
    assert.deepEqual(await sql(db.url, `select obj_description('down_b'::regclass) as c`), [{ c: "it's b" }]);
  });
});
