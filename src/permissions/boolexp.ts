/**
 * Boolean expressions (permission filters/checks and `where` arguments) share
 * one syntax: `{col: {_op: value}}`, `{col: value}` (equality), `{rel: {...}}`,
 * `_and`/`_or`/`_not`, `_exists`. Operators may be written `_eq` or `$eq`.
 * A string value starting with `x-svc-` (any case) is a session variable.
 */
import { SvcError, err400 } from '../errors.js';
import { V1_OPERATOR_NAMES, isColumnCompareOp } from '../ir/operators.js';
import type { QualifiedTable } from '../metadata/types.js';
import type { TableModel } from '../schema/model.js';

/** every operator name a v1/permission boolean expression accepts (from the one operator table) */
const COLUMN_OPERATORS = V1_OPERATOR_NAMES;

export function isSessionVariable(v: unknown): v is string {
  return typeof v === 'string' && /^x-svc-/i.test(v);
}

export function operatorName(key: string): string | undefined {
  if (key.startsWith('_') || key.startsWith('$')) return key.slice(1);
  return undefined;
}

export interface BoolExpRefs {
  columns: Set<string>;
  relationships: Set<string>;
  /** tables reached through relationships/_exists, with the columns used there */
  remote: Array<{ table: QualifiedTable; columns: Set<string> }>;
}

type Lookup = (t: QualifiedTable) => TableModel | undefined;

/**
 * Validates a boolean expression against a table and collects what it uses.
 * Throws SvcError (400) naming the first problem.
 */
export function validateBoolExp(exp: unknown, table: TableModel, lookup: Lookup, refs?: BoolExpRefs): BoolExpRefs {
  const r = refs ?? { columns: new Set(), relationships: new Set(), remote: [] };
  if (exp === null || typeof exp !== 'object' || Array.isArray(exp)) {
    throw err400('parse-failed', 'expecting an object for boolean expression');
  }
  for (const [k, v] of Object.entries(exp as Record<string, unknown>)) {
    if (k === '_and' || k === '$and' || k === '_or' || k === '$or') {
      if (!Array.isArray(v)) throw err400('parse-failed', `expecting an array for ${k}`);
      for (const e of v) validateBoolExp(e, table, lookup, r);
    } else if (k === '_not' || k === '$not') {
      validateBoolExp(v, table, lookup, r);
    } else if (k === '_exists' || k === '$exists') {
      const ex = v as { _table?: unknown; _where?: unknown };
      if (!ex || typeof ex !== 'object') throw err400('parse-failed', 'expecting an object for _exists');
      const t = normalizeTableName(ex._table);
      const target = lookup(t);
      if (!target) throw err400('not-exists', `table ${JSON.stringify(t.name)} does not exist`);
      const sub = validateBoolExp(ex._where ?? {}, target, lookup);
      r.remote.push({ table: t, columns: sub.columns });
    } else if (table.columnsByName.has(k)) {
      r.columns.add(k);
      validateColumnOps(v, table, r);
    } else if (table.relationships.has(k)) {
      const rel = table.relationships.get(k)!;
      r.relationships.add(k);
      const target = lookup(rel.remoteTable);
      if (!target) throw err400('not-exists', `table ${JSON.stringify(rel.remoteTable.name)} does not exist`);
      const sub = validateBoolExp(v, target, lookup);
      r.remote.push({ table: rel.remoteTable, columns: sub.columns });
      for (const x of sub.remote) r.remote.push(x);
    } else if (table.computedFields.has(k)) {
      // scalar computed fields may be compared like columns
      validateColumnOps(v, table, r);
    } else {
      throw err400('not-exists', `no such column exists : ${JSON.stringify(k)}`);
    }
  }
  return r;
}

function validateColumnOps(v: unknown, table: TableModel, r: BoolExpRefs): void {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return; // shorthand equality
  const ops = Object.entries(v as Record<string, unknown>);
  if (ops.length === 0) return;
  for (const [op, arg] of ops) {
    const name = operatorName(op);
    if (!name || !COLUMN_OPERATORS.has(name)) {
      // an object value without operators is compared as a JSON value (json/jsonb columns)
      if (!name) return;
      throw err400('unexpected-payload', `Unknown operator : ${JSON.stringify(op)}`);
    }
    if (isColumnCompareOp(name)) {
      if (typeof arg !== 'string') throw err400('unexpected-payload', 'expecting a string for column operator');
      if (!table.columnsByName.has(arg)) throw err400('not-exists', `no such column exists : ${JSON.stringify(arg)}`);
      r.columns.add(arg);
    }
  }
}

export function normalizeTableName(t: unknown): QualifiedTable {
  if (typeof t === 'string') return { schema: 'public', name: t };
  if (t && typeof t === 'object' && typeof (t as QualifiedTable).name === 'string') {
    return { schema: (t as QualifiedTable).schema ?? 'public', name: (t as QualifiedTable).name };
  }
  throw new SvcError(400, 'parse-failed', 'expecting a table name');
}


/**
 * Columns compared with static (non-session) values: their type is baked
 * into the permission, so changing it must fail with a dependency error.
 */
export function literalColumnsOf(exp: unknown, table: TableModel, lookup: Lookup, out: Array<{ table: QualifiedTable; column: string }> = []): Array<{ table: QualifiedTable; column: string }> {
  if (!exp || typeof exp !== 'object' || Array.isArray(exp)) return out;
  for (const [k, v] of Object.entries(exp as Record<string, unknown>)) {
    if (['_and', '$and', '_or', '$or'].includes(k)) {
      if (Array.isArray(v)) for (const e of v) literalColumnsOf(e, table, lookup, out);
    } else if (k === '_not' || k === '$not') {
      literalColumnsOf(v, table, lookup, out);
    } else if (table.columnsByName.has(k)) {
      const values = v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).some((op) => operatorName(op))
        ? Object.entries(v as Record<string, unknown>).filter(([op]) => !/^[_$]c/.test(op) && !/^[_$]is_null$/.test(op)).map(([, x]) => x)
        : [v];
      const literal = (x: unknown): boolean => (Array.isArray(x) ? x.some(literal) : !isSessionVariable(x));
      if (values.some(literal)) out.push({ table: table.name, column: k });
    } else if (table.relationships.has(k)) {
      const target = lookup(table.relationships.get(k)!.remoteTable);
      if (target) literalColumnsOf(v, target, lookup, out);
    }
  }
  return out;
}
