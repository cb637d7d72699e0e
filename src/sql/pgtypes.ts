/**
 * PostgreSQL types as the compiler needs them: how to name a type in a cast,
 * how a value of the type enters a statement, and how a column of the type is
 * turned into JSON (reference: api-reference/postgresql-types.rst).
 */
import { ident, raw, sql, type Sql } from './ast.js';
import type { PgType } from '../model/values.js';

export const pgType = (name: string, schema = 'pg_catalog'): PgType => ({ name, schema });

export const TEXT = pgType('text');
export const JSONB = pgType('jsonb');

const PLAIN_TYPE = /^[a-z_][a-z0-9_]*$/;
const RESERVED_TYPE_NAMES = new Set(['char', 'name', 'user', 'time', 'timestamp', 'interval', 'bit', 'varchar', 'numeric', 'decimal']);

/** The type as written in a cast: `int4`, `_text`, `"public"."citext"`. */
export function typeSql(t: PgType): Sql {
  if (t.schema === 'pg_catalog' && PLAIN_TYPE.test(t.name) && !RESERVED_TYPE_NAMES.has(t.name)) return raw(t.name);
  if (t.schema === 'pg_catalog') return ident(t.name);
  return ident(t.schema, t.name);
}

export function arrayTypeSql(t: PgType): Sql {
  if (t.name.startsWith('_')) return typeSql(t); // already an array type
  return sql`${typeSql(t)}[]`;
}

export const isGeometry = (t: PgType) => t.name === 'geometry';
export const isGeography = (t: PgType) => t.name === 'geography';

/** bigint, numeric and double precision lose precision in JSON numbers */
const BIG_NUMBERS = new Set(['int8', 'numeric', 'float8']);
export const isBigNumber = (t: PgType) => t.schema === 'pg_catalog' && BIG_NUMBERS.has(t.name);

export interface OutputOptions {
  stringifyNumerics: boolean;
}

/** A column value ready for `row_to_json`/`json_agg`. */
export function jsonOutput(expr: Sql, t: PgType, opts: OutputOptions): Sql {
  if (isGeometry(t) || isGeography(t)) return sql`ST_AsGeoJSON(${expr}, 15, 4)::json`;
  if (opts.stringifyNumerics && isBigNumber(t)) return sql`(${expr})::text`;
  return expr;
}

/** A text parameter (or session-variable reference) as a value of type t. */
export function valueInput(p: Sql, t: PgType): Sql {
  if (isGeometry(t)) return sql`ST_GeomFromGeoJSON(${p})`;
  if (isGeography(t)) return sql`(ST_GeomFromGeoJSON(${p}))::geography`;
  return sql`(${p})::${typeSql(t)}`;
}
