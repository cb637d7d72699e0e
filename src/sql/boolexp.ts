/**
 * Boolean expressions (IR) → SQL predicates over a table alias.
 * Relationship conditions become `EXISTS` subqueries carrying the target's
 * permission filter.
 */
import { COLUMN_COMPARE_OPERATORS, COMPARE_OPERATORS, SPECIAL_OPERATORS } from '../ir/operators.js';
import type { BoolExp, ColumnOp, ColumnTarget, ColumnModel, TableModel } from '../model/tables.js';
import type { TypedValue, ValueRef, NumberText, PgType } from '../model/values.js';
import { SESSION, constParam, ident, join, param, raw, sql, type Sql } from './ast.js';
import { numberText, plainDecimalText } from './numbers.js';
import { JsonNumber, jsonText } from '../json.js';
import { arrayTypeSql, isGeography, typeSql, valueInput } from './pgtypes.js';

/**
 * Fresh table aliases for one statement, and what conditions on other tables
 * read: the table itself, or (in a statement that inserts into it through a
 * data-modifying CTE, whose rows the rest of the statement cannot see) the
 * table together with the rows inserted so far.
 */
export class Aliases {
  private n = 0;
  private readonly sources = new Map<string, Sql>();
  /** guarded column reads per (alias, column): one text per statement, so DISTINCT ON matches ORDER BY */
  readonly guarded = new Map<string, Sql>();
  next(prefix = 't'): string {
    this.n += 1;
    return `_${prefix}${this.n}`;
  }

  /** The FROM item standing for table `t` (without alias). */
  source(t: TableModel): Sql {
    return this.sources.get(t.key) ?? tableSql(t);
  }

  /** From now on conditions on `t` read `src` (a parenthesized subquery of t's row type). */
  setSource(t: TableModel, src: Sql): void {
    this.sources.set(t.key, src);
  }
}

export function tableSql(t: TableModel): Sql {
  return ident(t.name.schema, t.name.name);
}

export function col(alias: string, column: string): Sql {
  return ident(alias, column);
}

/**
 * A column as the request's role reads it: the column, or for an inherited role's guarded column
 * (permissions/view.ts) `CASE WHEN <guard> THEN col END` — null on the rows none of the roles that
 * may read the column may see.
 */
export function guardedCol(alias: string, c: ColumnModel, aliases: Aliases): Sql {
  if (!c.guard) return col(alias, c.name);
  const key = `${alias}\u0000${c.name}`;
  let out = aliases.guarded.get(key);
  if (!out) {
    out = sql`(CASE WHEN ${boolExpSql(c.guard, alias, aliases)} THEN ${col(alias, c.name)} END)`;
    aliases.guarded.set(key, out);
  }
  return out;
}

/** A scalar computed field's call, guarded like a column (`guard` of an inherited role's view). */
export function guardedCall(call: Sql, guard: BoolExp | undefined, alias: string, aliases: Aliases): Sql {
  return guard ? sql`(CASE WHEN ${boolExpSql(guard, alias, aliases)} THEN ${call} END)` : call;
}

/** `(a) AND (b)`; `true` when empty. */
export function andSql(items: Sql[]): Sql {
  if (items.length === 0) return raw('true');
  if (items.length === 1) return items[0]!;
  return join(
    items.map((i) => sql`(${i})`),
    ' AND ',
  );
}

export function orSql(items: Sql[]): Sql {
  if (items.length === 0) return raw('false');
  if (items.length === 1) return items[0]!;
  return join(
    items.map((i) => sql`(${i})`),
    ' OR ',
  );
}

export function boolExpSql(e: BoolExp, alias: string, aliases: Aliases): Sql {
  switch (e.kind) {
    case 'true':
      return raw('true');
    case 'and':
      return andSql(e.items.map((i) => boolExpSql(i, alias, aliases)));
    case 'or':
      return orSql(e.items.map((i) => boolExpSql(i, alias, aliases)));
    case 'not':
      return sql`NOT (${boolExpSql(e.item, alias, aliases)})`;
    case 'column': {
      const lhs = targetSql(e.target, alias, aliases);
      return andSql(e.ops.map((op) => columnOpSql(lhs, op, alias, e.nullSafeEq ?? false, aliases)));
    }
    case 'relationship': {
      const r = aliases.next('t');
      const conds = [
        ...e.rel.mapping.map(([l, rc]) => sql`(${col(r, rc)}) = (${col(alias, l)})`),
        ...(e.filter ? [boolExpSql(e.filter, r, aliases)] : []),
        boolExpSql(e.exp, r, aliases),
      ];
      return sql`EXISTS (SELECT 1 FROM ${aliases.source(e.target)} AS ${ident(r)} WHERE ${andSql(conds)})`;
    }
    case 'exists': {
      const r = aliases.next('t');
      const conds = [...(e.filter ? [boolExpSql(e.filter, r, aliases)] : []), boolExpSql(e.exp, r, aliases)];
      return sql`EXISTS (SELECT 1 FROM ${aliases.source(e.table)} AS ${ident(r)} WHERE ${andSql(conds)})`;
    }
  }
}

export function targetSql(t: ColumnTarget, alias: string, aliases?: Aliases): Sql {
  if (t.kind === 'column') return aliases ? guardedCol(alias, t.column, aliases) : col(alias, t.column.name);
  const fn = t.field.function;
  const args: Sql[] = [];
  // scalar computed fields in filters take the row (and the session when configured)
  const inArgs = fn.args.filter((a) => a.mode === 'i' || a.mode === 'b');
  inArgs.forEach((a, i) => {
    if (i === t.field.tableArgIndex) args.push(ident(alias));
    else if (i === t.field.sessionArgIndex) args.push(sql`(${param(SESSION)})::${typeSql({ name: a.type, schema: a.typeSchema })}`);
  });
  const call = sql`${ident(fn.schema, fn.name)}(${join(args, ', ')})`;
  return aliases ? guardedCall(call, t.field.guard, alias, aliases) : call;
}

/**
 * Text of a value for a parameter of type t: a value of the document (encoded once per plan) or of
 * a variable (per request). Numerals a double would change are JsonNumbers (in literals, and in
 * bodies read by parseJsonExact): the database gets their text, json/jsonb get them as written
 * (jsonText).
 */
export function encodeValue(value: unknown, t: PgType, array = false, how?: NumberText): string | null {
  if (value === null || value === undefined) return null;
  if (array && Array.isArray(value)) return pgArrayLiteral(value.map((v) => encodeValue(v, t, false, how)));
  if (t.name === 'json' || t.name === 'jsonb') return jsonText(value);
  if (value instanceof JsonNumber) value = value.text; // a numeral kept as written: the database parses its text
  if (how && t.name === 'numeric' && t.schema === 'pg_catalog') value = numberText(value, how);
  // money does not read exponents
  if (t.name === 'money' && ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'string'))
    value = plainDecimalText(String(value)) ?? value;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return jsonText(value);
}

export function pgArrayLiteral(items: Array<string | null>): string {
  return `{${items.map((i) => (i === null ? 'NULL' : `"${i.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`)).join(',')}}`;
}

/** The parameter (or session reference) holding a value, before the cast. */
export function refParam(ref: ValueRef, t: PgType, array = false, how?: NumberText): Sql {
  switch (ref.kind) {
    case 'literal':
      return constParam(encodeValue(ref.value, t, array, how));
    case 'variable': {
      const decode = ref.decode;
      return param({
        kind: 'var',
        name: ref.name,
        path: ref.path,
        encode: decode ? (v) => encodeValue(decode(v), t, array, how) : (v) => encodeValue(v, t, array, how),
      });
    }
    case 'session':
      return param({ kind: 'sessionVar', name: ref.name });
  }
}

export function valueSql(v: TypedValue): Sql {
  if (v.array) return sql`(${refParam(v.ref, v.type, true, v.numberText)})::${arrayTypeSql(v.type)}`;
  return valueInput(refParam(v.ref, v.type, false, v.numberText), v.type);
}

function isNullLiteral(v: TypedValue): boolean {
  return v.ref.kind === 'literal' && (v.ref.value === null || v.ref.value === undefined);
}

export function columnOpSql(lhs: Sql, op: ColumnOp, alias: string, nullSafeEq: boolean, aliases?: Aliases): Sql {
  switch (op.op) {
    case 'is_null':
      return op.value ? sql`(${lhs}) IS NULL` : sql`(${lhs}) IS NOT NULL`;
    case 'in':
    case 'nin': {
      const neg = op.op === 'nin';
      if (Array.isArray(op.values)) {
        if (op.values.length === 0) return raw(neg ? 'true' : 'false');
        const list = join(op.values.map(valueSql), ', ');
        return neg ? sql`(${lhs}) NOT IN (${list})` : sql`(${lhs}) IN (${list})`;
      }
      const arr = valueSql({ ...op.values, array: true });
      return neg ? sql`(${lhs}) <> ALL (${arr})` : sql`(${lhs}) = ANY (${arr})`;
    }
    case 'has_keys_any':
    case 'has_keys_all': {
      const sym = SPECIAL_OPERATORS[op.op].sql!;
      const arr = Array.isArray(op.values) ? sql`(ARRAY[${join(op.values.map(valueSql), ', ')}]::text[])` : valueSql({ ...op.values, array: true });
      return sql`(${lhs}) ${raw(sym)} ${arr}`;
    }
    case 'ceq':
    case 'cneq':
    case 'cgt':
    case 'clt':
    case 'cgte':
    case 'clte':
      return sql`(${lhs}) ${raw(COLUMN_COMPARE_OPERATORS[op.op].sql!)} (${aliases ? guardedCol(alias, op.column, aliases) : col(alias, op.column.name)})`;
    case 'st_d_within': {
      const args = [lhs, valueSql(op.from), valueSql(op.distance)];
      if (isGeography(op.from.type)) args.push(op.useSpheroid ? valueSql(op.useSpheroid) : raw('true'));
      return sql`${raw(SPECIAL_OPERATORS.st_d_within.sql!)}(${join(args, ', ')})`;
    }
    case 'st_intersects_nband_geom':
      return sql`${raw(SPECIAL_OPERATORS.st_intersects_nband_geom.sql!)}(${lhs}, ${valueSql(op.nband)}, ${valueSql(op.geommin)})`;
    case 'st_intersects_geom_nband':
      return op.nband
        ? sql`${raw(SPECIAL_OPERATORS.st_intersects_geom_nband.sql!)}(${lhs}, ${valueSql(op.geommin)}, ${valueSql(op.nband)})`
        : sql`${raw(SPECIAL_OPERATORS.st_intersects_geom_nband.sql!)}(${lhs}, ${valueSql(op.geommin)})`;
    case 'cast': {
      const casted = sql`(${lhs})::${typeSql(op.to)}`;
      return andSql(op.ops.map((o) => columnOpSql(casted, o, alias, nullSafeEq, aliases)));
    }
    default: {
      const spec = COMPARE_OPERATORS[op.op];
      if (spec.fn) return sql`${raw(spec.sql!)}(${lhs}, ${valueSql(op.value)})`;
      if (nullSafeEq && (op.op === 'eq' || op.op === 'neq') && isNullLiteral(op.value)) {
        return op.op === 'eq' ? sql`(${lhs}) IS NULL` : sql`(${lhs}) IS NOT NULL`;
      }
      return sql`(${lhs}) ${raw(spec.sql!)} (${valueSql(op.value)})`;
    }
  }
}
