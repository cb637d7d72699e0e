/**
 * The operator table (src/ir/operators.ts) pinned by snapshots, without a database:
 *  - every GraphQL comparison operator of every column family, compiled to SQL
 *    (test/sql/snapshots/operators.graphql.sql: one `field(family): SQL` line each);
 *  - every v1/permission spelling in a permission filter (test/sql/snapshots/operators.permission.sql);
 *  - the `<type>_comparison_exp` input types list exactly the table's operators.
 * A changed compiler shows as a diff of those files. `SVC_UPDATE_SNAPSHOTS=1` rewrites them.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { test } from 'node:test';
import { isInputObjectType } from 'graphql';
import { ALL_OPERATORS, V1_OPERATOR_NAMES, graphqlOperators, type GraphQLArg, type OperatorFamily } from '../../src/ir/operators.js';
import { emptyMetadata, emptyTable } from '../../src/model/metadata.js';
import { buildSchemaCache } from '../../src/schema/build.js';
import { getRoleSchema } from '../../src/schema/graphql/schema.js';
import type { DbIntrospection } from '../../src/model/introspection.js';
import { col, sqlOf, tbl } from './fake.js';

const SNAP = new URL('./snapshots/', import.meta.url);
const UPDATE = process.env.SVC_UPDATE_SNAPSHOTS === '1';

function snapshot(name: string, actual: string): void {
  const file = new URL(name, SNAP);
  if (UPDATE || !existsSync(file)) {
    writeFileSync(file, actual);
    if (!UPDATE) assert.fail(`snapshot ${name} did not exist; written — review and commit it`);
    return;
  }
  assert.equal(actual, readFileSync(file, 'utf8'), `snapshot ${name} differs (SVC_UPDATE_SNAPSHOTS=1 rewrites it)`);
}

/** one column per family: text (string), int4 (ordered), jsonb, geometry, geography, an enum-free bool */
const COLUMNS: Record<Exclude<OperatorFamily, 'raster'>, { column: string; type: string }> = {
  any: { column: 'flag', type: 'bool' },
  ordered: { column: 'n', type: 'int4' },
  string: { column: 'name', type: 'text' },
  jsonb: { column: 'doc', type: 'jsonb' },
  geometry: { column: 'geom', type: 'geometry' },
  geography: { column: 'geog', type: 'geography' },
};

function shapesCache(filter?: Record<string, unknown>) {
  const db: DbIntrospection = {
    tables: new Map(),
    functions: new Map(),
    functionsByOid: new Map(),
    scalarTypes: new Set(['int4', 'text', 'bool', 'jsonb', 'geometry', 'geography']),
  };
  db.tables.set(
    'public.shape',
    tbl('shape', [col('id', 'int4', false), ...Object.values(COLUMNS).map((c) => col(c.column, c.type)), col('m', 'int4')], ['id']),
  );
  const md = emptyMetadata();
  md.tables.push({
    ...emptyTable({ schema: 'public', name: 'shape' }),
    select_permissions: filter ? [{ role: 'user', permission: { columns: ['id'], filter } }] : [],
  });
  return buildSchemaCache(md, db, 1);
}

const POINT = '{type: "Point", coordinates: [1, 2]}';
function literal(arg: GraphQLArg, type: string): string {
  const one = type === 'int4' ? '1' : type === 'bool' ? 'true' : type === 'jsonb' ? '{a: 1}' : type === 'geometry' || type === 'geography' ? POINT : '"a"';
  switch (arg) {
    case 'column':
      return one;
    case 'column_list':
      return `[${one}]`;
    case 'string':
      return '"a%"';
    case 'string_list':
      return '["a", "b"]';
    case 'boolean':
      return 'false';
    case 'jsonb':
      return '{a: 1}';
    case 'st_d_within_geometry':
      return `{distance: 2, from: ${POINT}}`;
    case 'st_d_within_geography':
      return `{distance: 2, from: ${POINT}, use_spheroid: false}`;
    case 'cast_geometry':
      return `{geography: {_st_intersects: ${POINT}}}`;
    case 'cast_geography':
      return `{geometry: {_st_within: ${POINT}}}`;
    case 'nband_geom':
    case 'geom_nband':
      throw new Error('raster operators are not in this table');
  }
}

function whereSql(sqlText: string): string {
  const m = /WHERE (.*) LIMIT|WHERE (.*)\) AS "_r2"/.exec(sqlText);
  return (m?.[1] ?? m?.[2] ?? sqlText).trim();
}

test('every GraphQL comparison operator of every family compiles (snapshot)', () => {
  const cache = shapesCache();
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const [family, { column, type }] of Object.entries(COLUMNS)) {
    for (const o of graphqlOperators(new Set([family as OperatorFamily]))) {
      const q = `{ shape(where: {${column}: {${o.field}: ${literal(o.arg, type)}}}) { id } }`;
      const [s] = sqlOf(cache, 'admin', q);
      lines.push(`${o.field} (${family}: ${type}): ${whereSql(s!)}`);
      seen.add(o.op);
    }
  }
  // every operator with a GraphQL field but raster's is covered
  for (const [op, spec] of Object.entries(ALL_OPERATORS)) {
    if (spec.graphql?.some((g) => g.family !== 'raster')) assert.ok(seen.has(op), `operator ${op} has no snapshot`);
  }
  snapshot('operators.graphql.sql', lines.join('\n') + '\n');
});

test('the comparison_exp input types list exactly the operator table’s fields', () => {
  const rs = getRoleSchema(shapesCache(), 'admin');
  const expect: Record<string, Set<OperatorFamily>> = {
    Boolean_comparison_exp: new Set(['any', 'ordered']),
    Int_comparison_exp: new Set(['any', 'ordered']),
    String_comparison_exp: new Set(['any', 'ordered', 'string']),
    jsonb_comparison_exp: new Set(['any', 'ordered', 'jsonb']),
    geometry_comparison_exp: new Set(['any', 'ordered', 'geometry']),
    geography_comparison_exp: new Set(['any', 'ordered', 'geography']),
  };
  for (const [name, fams] of Object.entries(expect)) {
    const t = rs.schema.getType(name);
    assert.ok(t && isInputObjectType(t), `${name} exists`);
    const want = [...new Set(graphqlOperators(fams).map((o) => o.field))].sort();
    assert.deepEqual(Object.keys(t.getFields()).sort(), want, name);
  }
});

test('every v1/permission spelling compiles in a permission filter (snapshot)', () => {
  const lines: string[] = [];
  const values: Record<string, unknown> = {
    in: [1, 2],
    nin: [1, 2],
    is_null: true,
    has_keys_any: ['a'],
    has_keys_all: ['a'],
    has_key: 'a',
    contains: { a: 1 },
    contained_in: { a: 1 },
    st_d_within: { distance: 1, from: { type: 'Point', coordinates: [1, 2] } },
  };
  const columnOf = (op: string): string => {
    if (op.startsWith('st_')) return 'geom';
    if (['contains', 'contained_in', 'has_key', 'has_keys_any', 'has_keys_all'].includes(op)) return 'doc';
    if (['like', 'nlike', 'ilike', 'nilike', 'similar', 'nsimilar'].includes(op)) return 'name';
    return 'n';
  };
  for (const name of [...V1_OPERATOR_NAMES].sort()) {
    if (name.includes('nband') || name.endsWith('_rast')) continue; // raster: needs a raster column
    const column = columnOf(name);
    const value =
      name.startsWith('c') && /^c(eq|ne|neq|gt|lt|gte|lte)$/.test(name)
        ? 'm'
        : (values[name] ?? (column === 'geom' ? { type: 'Point', coordinates: [1, 2] } : column === 'name' ? 'a%' : 'X-Svc-User-Id'));
    for (const prefix of ['_', '$']) {
      const cache = shapesCache({ [column]: { [prefix + name]: value } });
      const [s] = sqlOf(cache, 'user', '{ shape { id } }');
      lines.push(`${prefix}${name}: ${whereSql(s!)}`);
    }
  }
  snapshot('operators.permission.sql', lines.join('\n') + '\n');
});
