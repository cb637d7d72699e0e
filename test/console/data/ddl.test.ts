/** The SQL of the console's table forms (console/src/data/ddl.ts), run against real PostgreSQL. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  addColumnSql, addConstraintSql, alterColumnSql, checkTableSpec, checkTypeName, createIndexSql, createTableSql, dropColumnSql,
  dropConstraintSql, dropIndexSql, ident, type ColumnSpec, type TableSpec,
} from '../../../console/src/data/ddl.ts';
import { createTestDatabase, sql, type TestDatabase } from '../../helpers/db.js';

const col = (name: string, type: string, more: Partial<ColumnSpec> = {}): ColumnSpec => ({ name, type, default: '', nullable: true, unique: false, ...more });
const spec = (more: Partial<TableSpec>): TableSpec => ({ schema: 'public', name: 't', columns: [], primaryKey: [], foreignKeys: [], uniqueKeys: [], checks: [], comment: '', ...more });

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
    assert.equal(text, `create table "public"."Book ""1""" (
  "id" uuid default gen_random_uuid() not null,
  "title" text not null unique,
  "author id" integer,
  "price" numeric(10,2) default 0,
  primary key ("id"),
  foreign key ("author id") references "public"."Author" ("id") on delete set null,
  check (price >= 0)
);
comment on table "public"."Book ""1""" is 'the author''s books';`);
    await sql(db.url, text);
    const fk = await sql(db.url, `select confdeltype, pg_get_constraintdef(oid) as def from pg_constraint where conrelid = '"Book ""1"""'::regclass and contype = 'f'`);
    assert.deepEqual(fk, [{ confdeltype: 'n', def: 'FOREIGN KEY ("author id") REFERENCES "Author"(id) ON DELETE SET NULL' }]);
    const t = 'public."Book ""1"""';
    await sql(db.url, addColumnSql({ schema: 'public', name: 'Book "1"' }, col('isbn', 'varchar(13)', { nullable: false, default: "''" })));
    await sql(db.url, alterColumnSql({ schema: 'public', name: 'Book "1"' }, col('isbn', 'varchar(13)', { nullable: false, default: "''" }), col('code', 'text', { nullable: true, default: '', unique: true })).join('\n'));
    const cols = await sql(db.url, `select a.attname, format_type(a.atttypid, a.atttypmod) as type, a.attnotnull, pg_get_expr(d.adbin, d.adrelid) as def
      from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum where a.attrelid = '${t}'::regclass and a.attname = 'code'`);
    assert.deepEqual(cols, [{ attname: 'code', type: 'text', attnotnull: false, def: null }]);
    const uniq = await sql(db.url, `select conname from pg_constraint where conrelid = '${t}'::regclass and contype = 'u' order by conname`);
    assert.deepEqual(uniq.map((r) => r.conname), ['Book "1"_code_key', 'Book "1"_title_key']);
    const table = { schema: 'public', name: 'Book "1"' };
    await sql(db.url, addConstraintSql(table, { kind: 'check', name: 'positive', expression: 'price > -1' }));
    await sql(db.url, dropConstraintSql(table, 'positive'));
    await sql(db.url, createIndexSql(table, { name: 'by title', columns: ['title', 'author id'], unique: false, method: 'btree' }));
    assert.equal((await sql(db.url, `select count(*)::int as n from pg_indexes where indexname = 'by title'`))[0]!.n, 1);
    await sql(db.url, dropIndexSql('public', 'by title'));
    await sql(db.url, dropColumnSql(table, 'code'));
    assert.equal((await sql(db.url, `select count(*)::int as n from pg_attribute where attrelid = '${t}'::regclass and attname = 'code' and not attisdropped`))[0]!.n, 0);
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
    assert.deepEqual(checkTableSpec(spec({
      columns: [col('a', 'int'), col('a', ''), col('', 'text; drop table x')],
      primaryKey: ['z'],
      foreignKeys: [{ columns: ['a'], refSchema: 'public', refTable: '', refColumns: [''], onUpdate: 'no action', onDelete: 'no action' }],
    })), [
      'two columns are named a', 'column a: choose a type', 'column 3 needs a name', 'column 3: not a type name: "text; drop table x"',
      'the primary key names no column z', 'foreign key 1: choose the table it references', 'foreign key 1: choose a referenced column for each column',
    ]);
    for (const ok of ['integer', 'character varying(20)', 'numeric(10, 2)', 'text[]', 'double precision', 'public.my_enum', '"MyType"']) assert.equal(checkTypeName(ok), undefined, ok);
  });
});
