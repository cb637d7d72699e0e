/**
 * The column operators: one entry per operator, the single source for
 *  - the GraphQL `<type>_comparison_exp` input fields (schema/graphql/builder.ts),
 *  - the names /v1/query and permission filters accept (`$eq`/`_eq`, and v1 aliases like `$ne`)
 *    (permissions/filter.ts, permissions/boolexp.ts),
 *  - the SQL each compiles to (sql/boolexp.ts).
 * Adding an operator is one entry here (the `Record<…>` types make a missing piece a compile
 * error) plus its parsing case when its argument is not a plain value.
 */
import type { ColumnCompareOp, CompareOp } from '../model/values.js';

/** Operators with their own argument shapes, parsed case by case. */
export type SpecialOp =
  'in' | 'nin' | 'has_keys_any' | 'has_keys_all' | 'is_null' | 'st_d_within' | 'st_intersects_nband_geom' | 'st_intersects_geom_nband' | 'cast';

export type OperatorName = CompareOp | ColumnCompareOp | SpecialOp;

/**
 * Which columns get the operator in GraphQL:
 * `any` every column type (enums and rasters too), `ordered` every type but enums and rasters,
 * `string` text-like types, then one PostgreSQL type each.
 */
export type OperatorFamily = 'any' | 'ordered' | 'string' | 'jsonb' | 'geometry' | 'geography' | 'raster';

/** The GraphQL type of the operator's argument. */
export type GraphQLArg =
  | 'column'
  | 'column_list'
  | 'string'
  | 'string_list'
  | 'boolean'
  | 'jsonb'
  | 'st_d_within_geometry'
  | 'st_d_within_geography'
  | 'nband_geom'
  | 'geom_nband'
  | 'cast_geometry'
  | 'cast_geography';

/** How a plain value's type is chosen: the column's type, or a fixed one. */
export type ValueType = 'column' | 'text' | 'jsonb' | 'raster';

export interface OperatorSpec {
  /** v1/permission spellings besides the canonical name (written without `$`/`_`) */
  aliases?: readonly string[];
  /** SQL: a binary operator (`=`), or a function name when `fn` */
  sql?: string;
  fn?: boolean;
  /** the type a CompareOp's value is cast to */
  value?: ValueType;
  /** GraphQL fields: one per family the operator belongs to (none: not in GraphQL) */
  graphql?: ReadonlyArray<{ family: OperatorFamily; arg: GraphQLArg; description?: string }>;
}

const RAST = 'evaluates the following boolean Postgres function; ';

export const COMPARE_OPERATORS: Readonly<Record<CompareOp, OperatorSpec>> = {
  eq: { sql: '=', value: 'column', graphql: [{ family: 'any', arg: 'column' }] },
  neq: { sql: '<>', aliases: ['ne'], value: 'column', graphql: [{ family: 'any', arg: 'column' }] },
  gt: { sql: '>', value: 'column', graphql: [{ family: 'ordered', arg: 'column' }] },
  lt: { sql: '<', value: 'column', graphql: [{ family: 'ordered', arg: 'column' }] },
  gte: { sql: '>=', value: 'column', graphql: [{ family: 'ordered', arg: 'column' }] },
  lte: { sql: '<=', value: 'column', graphql: [{ family: 'ordered', arg: 'column' }] },
  like: { sql: 'LIKE', value: 'column', graphql: [{ family: 'string', arg: 'string' }] },
  nlike: { sql: 'NOT LIKE', value: 'column', graphql: [{ family: 'string', arg: 'string' }] },
  ilike: { sql: 'ILIKE', value: 'column', graphql: [{ family: 'string', arg: 'string' }] },
  nilike: { sql: 'NOT ILIKE', value: 'column', graphql: [{ family: 'string', arg: 'string' }] },
  similar: { sql: 'SIMILAR TO', value: 'column', graphql: [{ family: 'string', arg: 'string' }] },
  nsimilar: { sql: 'NOT SIMILAR TO', value: 'column', graphql: [{ family: 'string', arg: 'string' }] },
  contains: {
    sql: '@>',
    value: 'jsonb',
    graphql: [{ family: 'jsonb', arg: 'jsonb', description: 'does the column contain the given json value at the top level' }],
  },
  contained_in: { sql: '<@', value: 'jsonb', graphql: [{ family: 'jsonb', arg: 'jsonb', description: 'is the column contained in the given json value' }] },
  has_key: { sql: '?', value: 'text', graphql: [{ family: 'jsonb', arg: 'string', description: 'does the string exist as a top-level key in the column' }] },
  st_contains: {
    sql: 'ST_Contains',
    fn: true,
    value: 'column',
    graphql: [{ family: 'geometry', arg: 'column', description: 'does the column contain the given geometry value' }],
  },
  st_crosses: {
    sql: 'ST_Crosses',
    fn: true,
    value: 'column',
    graphql: [{ family: 'geometry', arg: 'column', description: 'does the column crosses the given geometry value' }],
  },
  st_equals: {
    sql: 'ST_Equals',
    fn: true,
    value: 'column',
    graphql: [{ family: 'geometry', arg: 'column', description: 'is the column equal to given geometry value. Directionality is ignored' }],
  },
  st_intersects: {
    sql: 'ST_Intersects',
    fn: true,
    value: 'column',
    graphql: [
      { family: 'geometry', arg: 'column', description: 'does the column spatially intersect the given geometry value' },
      { family: 'geography', arg: 'column', description: 'does the column spatially intersect the given geography value' },
    ],
  },
  st_overlaps: {
    sql: 'ST_Overlaps',
    fn: true,
    value: 'column',
    graphql: [
      { family: 'geometry', arg: 'column', description: "does the column 'spatially overlap' (intersect but not completely contain) the given geometry value" },
    ],
  },
  st_touches: {
    sql: 'ST_Touches',
    fn: true,
    value: 'column',
    graphql: [{ family: 'geometry', arg: 'column', description: 'does the column have atleast one point in common with the given geometry value' }],
  },
  st_within: {
    sql: 'ST_Within',
    fn: true,
    value: 'column',
    graphql: [{ family: 'geometry', arg: 'column', description: 'is the column contained in the given geometry value' }],
  },
  st_intersects_rast: {
    sql: 'ST_Intersects',
    fn: true,
    value: 'raster',
    graphql: [{ family: 'raster', arg: 'column', description: `${RAST}ST_Intersects(raster <raster-col>, raster <raster-input>)` }],
  },
};

export const COLUMN_COMPARE_OPERATORS: Readonly<Record<ColumnCompareOp, OperatorSpec>> = {
  ceq: { sql: '=' },
  cneq: { sql: '<>', aliases: ['cne'] },
  cgt: { sql: '>' },
  clt: { sql: '<' },
  cgte: { sql: '>=' },
  clte: { sql: '<=' },
};

export const SPECIAL_OPERATORS: Readonly<Record<SpecialOp, OperatorSpec>> = {
  in: { graphql: [{ family: 'any', arg: 'column_list' }] },
  nin: { graphql: [{ family: 'any', arg: 'column_list' }] },
  is_null: { graphql: [{ family: 'any', arg: 'boolean' }] },
  has_keys_any: { sql: '?|', graphql: [{ family: 'jsonb', arg: 'string_list', description: 'do any of these strings exist as top-level keys in the column' }] },
  has_keys_all: { sql: '?&', graphql: [{ family: 'jsonb', arg: 'string_list', description: 'do all of these strings exist as top-level keys in the column' }] },
  st_d_within: {
    sql: 'ST_DWithin',
    fn: true,
    graphql: [
      { family: 'geometry', arg: 'st_d_within_geometry', description: 'is the column within a distance from a geometry value' },
      { family: 'geography', arg: 'st_d_within_geography', description: 'is the column within a distance from a geography value' },
    ],
  },
  st_intersects_nband_geom: {
    sql: 'ST_Intersects',
    fn: true,
    graphql: [{ family: 'raster', arg: 'nband_geom', description: `${RAST}ST_Intersects(raster <raster-col>, integer nband, geometry geommin)` }],
  },
  st_intersects_geom_nband: {
    sql: 'ST_Intersects',
    fn: true,
    graphql: [{ family: 'raster', arg: 'geom_nband', description: `${RAST}ST_Intersects(raster <raster-col> , geometry geommin, integer nband)` }],
  },
  cast: {
    graphql: [
      { family: 'geometry', arg: 'cast_geometry' },
      { family: 'geography', arg: 'cast_geography' },
    ],
  },
};

export const ALL_OPERATORS: Readonly<Record<OperatorName, OperatorSpec>> = {
  ...COMPARE_OPERATORS,
  ...COLUMN_COMPARE_OPERATORS,
  ...SPECIAL_OPERATORS,
};

function byName<K extends string>(table: Readonly<Record<K, OperatorSpec>>): ReadonlyMap<string, K> {
  const m = new Map<string, K>();
  for (const [name, spec] of Object.entries(table) as Array<[K, OperatorSpec]>) {
    m.set(name, name);
    for (const a of spec.aliases ?? []) m.set(a, name);
  }
  return m;
}

/** v1/permission spelling (without `$`/`_`) → operator, aliases included */
export const COMPARE_BY_NAME = byName(COMPARE_OPERATORS);
export const COLUMN_COMPARE_BY_NAME = byName(COLUMN_COMPARE_OPERATORS);
export const SPECIAL_BY_NAME = byName(SPECIAL_OPERATORS);

/** Every spelling /v1/query and permission filters accept (`_cast` is GraphQL only). */
export const V1_OPERATOR_NAMES: ReadonlySet<string> = new Set(
  [...COMPARE_BY_NAME.keys(), ...COLUMN_COMPARE_BY_NAME.keys(), ...SPECIAL_BY_NAME.keys()].filter((n) => n !== 'cast'),
);

export function isColumnCompareOp(name: string): boolean {
  return COLUMN_COMPARE_BY_NAME.has(name);
}

/** The GraphQL comparison fields of a column family, as `[field name, spec entry]`. */
export function graphqlOperators(families: ReadonlySet<OperatorFamily>): Array<{ field: string; op: OperatorName; arg: GraphQLArg; description?: string }> {
  const out: Array<{ field: string; op: OperatorName; arg: GraphQLArg; description?: string }> = [];
  for (const [op, spec] of Object.entries(ALL_OPERATORS) as Array<[OperatorName, OperatorSpec]>) {
    for (const g of spec.graphql ?? []) {
      if (families.has(g.family)) out.push({ field: `_${op}`, op, arg: g.arg, description: g.description });
    }
  }
  return out;
}
