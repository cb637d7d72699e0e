/**
 * GraphQL names and descriptions as Hasura v1.3 generates them, and the
 * mapping of PostgreSQL types to GraphQL scalars (api-reference/postgresql-types.rst).
 */
import type { QualifiedName } from '../../model/metadata.js';

const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;
export const isGraphQLName = (s: string) => NAME.test(s);

/** `author` for public.author, `hge_tests_author` elsewhere. */
export function qualifiedGqlName(q: QualifiedName): string {
  return q.schema === 'public' ? q.name : `${q.schema}_${q.name}`;
}

/** `"author"` / `"hge_tests.author"` as descriptions quote tables. */
export function quotedTable(q: QualifiedName): string {
  return JSON.stringify(q.schema === 'public' ? q.name : `${q.schema}.${q.name}`);
}

/** The GraphQL scalar of a PostgreSQL type (pg_type.typname). */
export function gqlScalarName(pgTypeName: string): string {
  switch (pgTypeName) {
    case 'int4':
      return 'Int';
    case 'int2':
      return 'smallint';
    case 'int8':
      return 'bigint';
    case 'float4':
      return 'Float';
    case 'bool':
      return 'Boolean';
    case 'text':
    case 'varchar':
      return 'String';
    default:
      return pgTypeName;
  }
}

const NUMERIC = new Set(['int2', 'int4', 'int8', 'float4', 'float8', 'numeric']);
const STRING = new Set(['text', 'varchar', 'citext', 'bpchar']);
/** types Hasura knows; other types are opaque ("unknown") scalars */
const KNOWN = new Set([
  'int2',
  'int4',
  'int8',
  'float4',
  'float8',
  'numeric',
  'money',
  'bool',
  'bpchar',
  'varchar',
  'text',
  'citext',
  'date',
  'timestamp',
  'timestamptz',
  'timetz',
  'json',
  'jsonb',
  'geometry',
  'geography',
  'raster',
  'uuid',
]);
const NOT_COMPARABLE = new Set(['json', 'jsonb', 'geometry', 'geography', 'bool', 'raster']);

export const isNumericType = (t: string) => NUMERIC.has(t);
export const isStringType = (t: string) => STRING.has(t);
/** types with an order (max/min aggregates, _gt… operators) */
export const isComparableType = (t: string) => KNOWN.has(t) && !NOT_COMPARABLE.has(t);

export const NUMERIC_AGG_OPS = ['sum', 'avg', 'stddev', 'stddev_samp', 'stddev_pop', 'variance', 'var_samp', 'var_pop'] as const;
export const COMPARABLE_AGG_OPS = ['max', 'min'] as const;

export const ORDER_BY_VALUES: ReadonlyArray<[string, string, 'asc' | 'desc', 'first' | 'last']> = [
  ['asc', 'in the ascending order, nulls last', 'asc', 'last'],
  ['asc_nulls_first', 'in the ascending order, nulls first', 'asc', 'first'],
  ['asc_nulls_last', 'in the ascending order, nulls last', 'asc', 'last'],
  ['desc', 'in the descending order, nulls first', 'desc', 'first'],
  ['desc_nulls_first', 'in the descending order, nulls first', 'desc', 'first'],
  ['desc_nulls_last', 'in the descending order, nulls last', 'desc', 'last'],
];

/** Sorted copy of a field map (Hasura's introspection lists fields by name). */
export function sortedEntries<T>(o: Record<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const k of Object.keys(o).sort()) out[k] = o[k]!;
  return out;
}
