/**
 * Values as the IR and the compiler see them: PostgreSQL types, references to values (literal,
 * GraphQL variable, session variable, never inlined text) and the column comparison operators
 * (their table: ir/operators.ts).
 */

/** A type as pg_type names it (`int4`, `_text`, `geometry`) with its schema. */
export interface PgType {
  name: string;
  schema: string;
}

/** How a JSON number written into a `numeric` is spelled (it fixes the stored scale; sql/numbers.ts). */
export type NumberText = 'scientific' | 'binary';

/** Operators whose argument is one value compared with a binary SQL operator or a 2-argument function. */
export type CompareOp =
  | 'eq'
  | 'neq'
  | 'gt'
  | 'lt'
  | 'gte'
  | 'lte'
  | 'like'
  | 'nlike'
  | 'ilike'
  | 'nilike'
  | 'similar'
  | 'nsimilar'
  | 'contains'
  | 'contained_in'
  | 'has_key'
  | 'st_contains'
  | 'st_crosses'
  | 'st_equals'
  | 'st_intersects'
  | 'st_overlaps'
  | 'st_touches'
  | 'st_within'
  | 'st_intersects_rast';

/** Operators comparing with another column of the same row (v1 and permissions only). */
export type ColumnCompareOp = 'ceq' | 'cneq' | 'cgt' | 'clt' | 'cgte' | 'clte';

export type ValueRef =
  /** a JSON value written in the query (or a variable used structurally) */
  | { kind: 'literal'; value: unknown }
  /**
   * a GraphQL variable (or a part of one) bound per request; `decode` derives the bound value
   * from the variable's (a Relay node id or cursor: one value read out of the base64 JSON)
   */
  | { kind: 'variable'; name: string; path: (string | number)[]; decode?: (v: unknown) => unknown }
  /** an `x-svc-*` session variable (lower-cased) */
  | { kind: 'session'; name: string };

/** A value and the type it is cast to. `array`: the value is an array of `type`. */
export interface TypedValue {
  ref: ValueRef;
  type: PgType;
  array?: boolean;
  /** how a number written into a `numeric` is spelled (it fixes the stored scale; see sql/numbers.ts) */
  numberText?: NumberText;
}
