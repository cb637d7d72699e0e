/**
 * Relay global ids and cursors are built as text (src/sql/connection.ts) but must stay the bytes
 * upstream's json_build_array / json_build_object print: a client may have stored ids, and the
 * conformance cases compare cursors literally. Each is checked against PostgreSQL's own JSON
 * functions over awkward names and values of many types, NULLs included.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import type { ColumnModel, TableModel } from '../../src/model/tables.js';
import type { CursorItem } from '../../src/ir/types.js';
import { compileSql, raw, sql } from '../../src/sql/ast.js';
import { col } from '../../src/sql/boolexp.js';
import { cursorText, nodeIdSql } from '../../src/sql/connection.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let database: TestDatabase;
let client: pg.Client;
before(async () => {
  database = await createTestDatabase();
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query(`create table v (
    i int4 not null, n int8, b bool, t text, u uuid, d numeric, ts timestamptz, j jsonb, f float8, a int[])`);
  await client.query(`insert into v values
    (1, 9007199254740993, true, 'plain', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 1.50, '2020-01-02 03:04:05.678+00', '{"k": [1, "x"]}', 1e-7, '{1,2}'),
    (-2147483648, null, null, E'q"b\\\\s\\n\\t\\u0001 é ✓ 😀', null, null, null, null, 'NaN', null),
    (0, -1, false, '', null, -0.000001, 'infinity', 'null', 'Infinity', '{}')`);
});
after(async () => {
  await client?.end();
  await database?.drop();
});

const column = (name: string, type: string, nullable: boolean): ColumnModel =>
  ({ name, type, typeSchema: 'pg_catalog', nullable, gqlName: name }) as unknown as ColumnModel;
const COLS: ColumnModel[] = [
  column('i', 'int4', false),
  column('n', 'int8', true),
  column('b', 'bool', true),
  column('t', 'text', true),
  column('u', 'uuid', true),
  column('d', 'numeric', true),
  column('ts', 'timestamptz', true),
  column('j', 'jsonb', true),
  column('f', 'float8', true),
  column('a', '_int4', true),
];

async function rows(select: string): Promise<Array<{ got: string; want: string }>> {
  return (await client.query(`select ${select} from v as "_t"`)).rows;
}

test('global ids are base64 of json_build_array(1, schema, table, pk…), awkward names included', async () => {
  for (const [schema, name] of [
    ['public', 'v'],
    ['we"ird\\sch ema', 'tä\tble "x"'],
    ['s', 'a_very_long_table_name_that_makes_the_id_longer_than_seventy_six_characters'],
  ]) {
    for (const pk of [['i'], ['i', 't'], ['t', 'n', 'b', 'u', 'd', 'ts', 'f']]) {
      const t = { name: { schema, name }, primaryKey: pk, columnsByName: new Map(COLS.map((c) => [c.name, c])) } as unknown as TableModel;
      const got = compileSql(nodeIdSql(t, '_t')).text;
      const want = `translate(encode(convert_to(json_build_array(1, ${[schema, name].map((x) => `'${x.replace(/'/g, "''")}'`).join(', ')}, ${pk.map((c) => `"_t"."${c}"`).join(', ')})::text, 'UTF8'), 'base64'), chr(10), '')`;
      for (const r of await rows(`${got} as got, ${want} as want`))
        assert.equal(r.got, r.want, `${schema}.${name} (${pk}): ${Buffer.from(r.want, 'base64').toString()}`);
    }
  }
});

test("cursors are json_build_object's text of the order-by values, nested paths included", async () => {
  const items: CursorItem[] = COLS.map((c) => ({
    item: { target: { kind: 'column', column: c }, dir: 'asc', nulls: 'last' },
    path: c.name === 'j' ? ['rel "1"', 'j'] : c.name === 'f' ? ['rel "1"', 'f'] : [c.name],
    type: { name: c.type, schema: 'pg_catalog' },
  })) as unknown as CursorItem[];
  const got = compileSql(
    cursorText(
      items,
      COLS.map((c) => col('_t', c.name)),
    ),
  ).text;
  const ref = (c: string) => sql`${col('_t', c)}`;
  const want = compileSql(
    sql`json_build_object(${raw(
      COLS.filter((c) => c.name !== 'j' && c.name !== 'f')
        .map((c) => `'${c.name}', "_t"."${c.name}"`)
        .join(', '),
    )}, 'rel "1"', json_build_object('j', ${ref('j')}, 'f', ${ref('f')}))::text`,
  ).text;
  // the shared object sits where its first item is (after "ts"), so "a" moves behind it
  const wantOrdered = want.replace(`, 'a', "_t"."a"`, '').replace(/\)::text$/, `, 'a', "_t"."a")::text`);
  for (const r of await rows(`${got} as got, ${wantOrdered} as want`)) assert.equal(r.got, r.want);
});
