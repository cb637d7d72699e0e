/**
 * Checks of the permission form, as pure functions (unit-tested under node): the row filter/check
 * JSON against the boolean-expression syntax of the metadata API, presets, the row limit, and the
 * permission object built from the form.
 */
import { valueForColumn, type BoolExp, type ColumnInfo, type QualifiedName } from '../data/model.ts';

export type PermOp = 'insert' | 'select' | 'update' | 'delete';
export const PERM_OPS: readonly PermOp[] = ['insert', 'select', 'update', 'delete'];

export interface Problem {
  /** JSON path of the problem, e.g. `$._and[1].author.id._eq` */
  path: string;
  message: string;
}

/** What a boolean expression may refer to from one table. */
export interface TableContext {
  columns: Array<Pick<ColumnInfo, 'name' | 'type'>>;
  /** relationship name → the table it leads to */
  relationships: Record<string, QualifiedName>;
  computedFields?: string[];
}

export type TableLookup = (t: QualifiedName) => TableContext | undefined;

const GENERIC = ['eq', 'ne', 'neq', 'gt', 'lt', 'gte', 'lte'];
const LIST = ['in', 'nin'];
const TEXT = ['like', 'nlike', 'ilike', 'nilike', 'similar', 'nsimilar'];
const COLUMN_CMP = ['ceq', 'cne', 'cneq', 'cgt', 'clt', 'cgte', 'clte'];
const JSONB = ['contains', 'contained_in', 'has_key', 'has_keys_any', 'has_keys_all'];
const GIS = ['st_contains', 'st_crosses', 'st_equals', 'st_intersects', 'st_overlaps', 'st_touches', 'st_within', 'st_d_within'];
const ALL_OPERATORS = new Set([...GENERIC, ...LIST, ...TEXT, ...COLUMN_CMP, ...JSONB, ...GIS, 'is_null']);

export const isSessionVariable = (v: unknown): v is string => typeof v === 'string' && /^x-svc-/i.test(v);

const key = (path: string, k: string) => (/^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`);
const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** Line and column (1-based) of a character offset in `text`. */
function lineCol(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `line ${line}, column ${offset - before.lastIndexOf('\n')}`;
}

/**
 * Parses the text of a row filter/check. Empty text means `{}` (no restriction). Returns the
 * expression, or the problems found (JSON syntax first, then the boolean-expression rules).
 */
export function checkBoolExpText(text: string, table: TableContext, lookup: TableLookup): { value?: BoolExp; problems: Problem[] } {
  if (!text.trim()) return { value: {}, problems: [] };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    const msg = (e as Error).message;
    const at = /position (\d+)/.exec(msg);
    return { problems: [{ path: '$', message: `not valid JSON: ${msg.replace(/ in JSON at position \d+.*$/, '')}${at ? ` (${lineCol(text, Number(at[1]))})` : ''}` }] };
  }
  const problems = checkBoolExp(v, table, lookup);
  return problems.length ? { problems } : { value: v as BoolExp, problems };
}

/** Every problem of a boolean expression over `table` (empty when it is valid). */
export function checkBoolExp(exp: unknown, table: TableContext, lookup: TableLookup, path = '$'): Problem[] {
  const out: Problem[] = [];
  if (!isObject(exp)) {
    out.push({ path, message: 'expected an object, such as {} or {"id": {"_eq": "X-Svc-User-Id"}}' });
    return out;
  }
  for (const [k, v] of Object.entries(exp)) {
    const p = key(path, k);
    if (k === '_and' || k === '$and' || k === '_or' || k === '$or') {
      if (!Array.isArray(v)) out.push({ path: p, message: `${k} expects an array of expressions` });
      else v.forEach((e, i) => out.push(...checkBoolExp(e, table, lookup, `${p}[${i}]`)));
    } else if (k === '_not' || k === '$not') {
      out.push(...checkBoolExp(v, table, lookup, p));
    } else if (k === '_exists' || k === '$exists') {
      if (!isObject(v) || v._table === undefined) {
        out.push({ path: p, message: `${k} expects {"_table": ..., "_where": {...}}` });
        continue;
      }
      const t = typeof v._table === 'string' ? { schema: 'public', name: v._table } : isObject(v._table) && typeof v._table.name === 'string'
        ? { schema: typeof v._table.schema === 'string' ? v._table.schema : 'public', name: v._table.name } : undefined;
      const target = t && lookup(t);
      if (!t) out.push({ path: key(p, '_table'), message: 'expected a table name or {"schema": ..., "name": ...}' });
      else if (!target) out.push({ path: key(p, '_table'), message: `table ${t.schema}.${t.name} is not tracked` });
      else out.push(...checkBoolExp(v._where ?? {}, target, lookup, key(p, '_where')));
    } else if (k.startsWith('_') || k.startsWith('$')) {
      out.push({ path: p, message: `unknown operator ${k} here: expected a column, a relationship, _and, _or, _not or _exists` });
    } else if (table.relationships[k]) {
      const target = lookup(table.relationships[k]!);
      if (!target) out.push({ path: p, message: `relationship ${k} leads to a table that is not tracked` });
      else out.push(...checkBoolExp(v, target, lookup, p));
    } else {
      const col = table.columns.find((c) => c.name === k);
      if (!col && !table.computedFields?.includes(k)) out.push({ path: p, message: `no column or relationship named ${JSON.stringify(k)}` });
      else out.push(...checkColumnExp(v, col?.type ?? 'text', table, p));
    }
  }
  return out;
}

function checkColumnExp(v: unknown, type: string, table: TableContext, path: string): Problem[] {
  // {col: value} is shorthand for equality; an object without operators is a JSON value
  if (!isObject(v)) return [];
  const entries = Object.entries(v);
  if (!entries.some(([op]) => op.startsWith('_') || op.startsWith('$'))) {
    return /^jsonb?$/.test(type) || entries.length === 0 ? [] : [{ path, message: 'expected operators such as {"_eq": value}' }];
  }
  const out: Problem[] = [];
  for (const [op, arg] of entries) {
    const p = key(path, op);
    const name = op.startsWith('_') || op.startsWith('$') ? op.slice(1) : '';
    if (!ALL_OPERATORS.has(name)) {
      out.push({ path: p, message: `unknown operator ${op}` });
      continue;
    }
    const problem = checkOperand(name, arg, type, table);
    if (problem) out.push({ path: p, message: problem });
  }
  return out;
}

/** The problem of one operator's operand, if any. Session variables are allowed for values. */
function checkOperand(op: string, arg: unknown, type: string, table: TableContext): string | undefined {
  if (isSessionVariable(arg) && !COLUMN_CMP.includes(op) && op !== 'is_null') return undefined;
  if (op === 'is_null') return typeof arg === 'boolean' ? undefined : '_is_null expects true or false';
  if (LIST.includes(op)) {
    if (!Array.isArray(arg)) return `_${op} expects an array of values (or a session variable)`;
    for (const x of arg) {
      const p = scalarProblem(x, type);
      if (p) return p;
    }
    return undefined;
  }
  if (COLUMN_CMP.includes(op)) {
    if (typeof arg !== 'string') return `_${op} expects the name of a column`;
    return table.columns.some((c) => c.name === arg) ? undefined : `no column named ${JSON.stringify(arg)}`;
  }
  if (TEXT.includes(op)) return typeof arg === 'string' ? undefined : `_${op} expects a string pattern`;
  if (op === 'has_key') return typeof arg === 'string' ? undefined : '_has_key expects a string';
  if (op === 'has_keys_any' || op === 'has_keys_all') {
    return Array.isArray(arg) && arg.every((x) => typeof x === 'string') ? undefined : `_${op} expects an array of strings`;
  }
  if (op === 'contains' || op === 'contained_in' || op.startsWith('st_')) return undefined;
  return scalarProblem(arg, type);
}

function scalarProblem(x: unknown, type: string): string | undefined {
  if (isSessionVariable(x)) return undefined;
  if (x === null) return 'null cannot be compared: use {"_is_null": true}';
  if (typeof x === 'object' && !/^jsonb?$/.test(type)) return `expected a value of type ${type}, not ${Array.isArray(x) ? 'an array' : 'an object'}`;
  if (typeof x === 'string' && /^(smallint|integer|bigint|real|double precision|numeric|decimal)/.test(type) && !/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(x.trim())) {
    return `expected a number for a column of type ${type} (or a session variable such as "X-Svc-User-Id")`;
  }
  if (typeof x === 'boolean' && type !== 'boolean') return `expected a value of type ${type}, not a boolean`;
  return undefined;
}

/** One row of the presets editor: a column and the text typed for its value. */
export interface PresetRow {
  column: string;
  value: string;
}

/** Presets as the `set` of a permission: session variables stay strings, values get their column's type. */
export function checkPresets(rows: PresetRow[], columns: Array<Pick<ColumnInfo, 'name' | 'type'>>): { value: Record<string, unknown>; problems: Problem[] } {
  const value: Record<string, unknown> = {};
  const problems: Problem[] = [];
  rows.forEach((r, i) => {
    if (!r.column && !r.value) return;
    const p = `$.set[${i}]`;
    const col = columns.find((c) => c.name === r.column);
    if (!col) problems.push({ path: p, message: r.column ? `no column named ${JSON.stringify(r.column)}` : 'choose a column' });
    else if (r.column in value) problems.push({ path: p, message: `column ${r.column} has two presets` });
    else if (isSessionVariable(r.value.trim())) value[r.column] = r.value.trim();
    else {
      try {
        value[r.column] = valueForColumn(col.type, r.value);
      } catch (e) {
        problems.push({ path: p, message: `${r.column}: ${(e as Error).message}` });
      }
    }
  });
  return { value, problems };
}

/** The row limit of a select permission: empty for none, else a positive integer. */
export function checkLimit(text: string): { value: number | null; problems: Problem[] } {
  const t = text.trim();
  if (!t) return { value: null, problems: [] };
  if (!/^\d+$/.test(t) || Number(t) < 1 || !Number.isSafeInteger(Number(t))) {
    return { value: null, problems: [{ path: '$.limit', message: 'the limit is a whole number of rows, at least 1 (or empty for none)' }] };
  }
  return { value: Number(t), problems: [] };
}

/** Everything the permission form holds, as typed. */
export interface PermissionFormState {
  filter: string;
  /** update only: the post-update check ('' for none) */
  check: string;
  columns: string[];
  computedFields: string[];
  presets: PresetRow[];
  limit: string;
  allowAggregations: boolean;
  backendOnly: boolean;
}

/**
 * The permission object for `create_<op>_permission` from the form, or the problems that stop it.
 * Column lists equal to every column are sent as listed (not '*') so that adding a column later
 * does not widen the permission by surprise.
 */
export function buildPermission(op: PermOp, form: PermissionFormState, table: TableContext, lookup: TableLookup): { permission?: Record<string, unknown>; problems: Problem[] } {
  const problems: Problem[] = [];
  const exp = (text: string, name: string) => {
    const r = checkBoolExpText(text, table, lookup);
    problems.push(...r.problems.map((p) => ({ ...p, path: p.path.replace(/^\$/, `$.${name}`) })));
    return r.value;
  };
  const unknownCols = form.columns.filter((c) => !table.columns.some((x) => x.name === c));
  if (unknownCols.length) problems.push({ path: '$.columns', message: `no such columns: ${unknownCols.join(', ')}` });
  const columns = table.columns.map((c) => c.name).filter((c) => form.columns.includes(c));
  let permission: Record<string, unknown>;
  switch (op) {
    case 'select': {
      const filter = exp(form.filter, 'filter');
      const limit = checkLimit(form.limit);
      problems.push(...limit.problems);
      if (columns.length === 0 && form.computedFields.length === 0) problems.push({ path: '$.columns', message: 'choose at least one column' });
      permission = { columns, filter, allow_aggregations: form.allowAggregations };
      if (form.computedFields.length) permission.computed_fields = form.computedFields;
      if (limit.value !== null) permission.limit = limit.value;
      break;
    }
    case 'insert': {
      const check = exp(form.filter, 'check');
      const set = checkPresets(form.presets, table.columns);
      problems.push(...set.problems);
      permission = { check, columns, set: set.value, backend_only: form.backendOnly };
      break;
    }
    case 'update': {
      const filter = exp(form.filter, 'filter');
      const check = form.check.trim() ? exp(form.check, 'check') : null;
      const set = checkPresets(form.presets, table.columns);
      problems.push(...set.problems);
      if (columns.length === 0) problems.push({ path: '$.columns', message: 'choose at least one column' });
      permission = { columns, filter, set: set.value };
      if (check) permission.check = check;
      break;
    }
    case 'delete':
      permission = { filter: exp(form.filter, 'filter') };
      break;
  }
  return problems.length ? { problems } : { permission, problems };
}

/** The form's state for an existing permission (or the defaults of a new one). */
export function formOf(op: PermOp, perm: Record<string, any> | undefined, allColumns: string[]): PermissionFormState {
  const cols = perm?.columns === '*' ? allColumns : Array.isArray(perm?.columns) ? (perm!.columns as string[]) : op === 'insert' && perm ? allColumns : [];
  const json = (v: unknown) => (v === undefined || v === null ? '' : JSON.stringify(v, null, 2));
  return {
    filter: perm ? json(op === 'insert' ? perm.check : perm.filter) : '{}',
    check: op === 'update' ? json(perm?.check) : '',
    columns: cols,
    computedFields: Array.isArray(perm?.computed_fields) ? perm!.computed_fields : [],
    presets: Object.entries((perm?.set ?? {}) as Record<string, unknown>).map(([column, v]) => ({ column, value: typeof v === 'string' ? v : JSON.stringify(v) })),
    limit: perm?.limit === undefined || perm?.limit === null ? '' : String(perm.limit),
    allowAggregations: !!perm?.allow_aggregations,
    backendOnly: !!perm?.backend_only,
  };
}

/** How much a permission allows: none, full (no row condition, every column) or partial. */
export function accessLevel(op: PermOp, perm: Record<string, any> | undefined, allColumns: string[]): 'none' | 'full' | 'partial' {
  if (!perm) return 'none';
  const empty = (e: unknown) => isObject(e) && Object.keys(e).length === 0;
  const rows = op === 'insert' ? empty(perm.check) : empty(perm.filter) && (op !== 'update' || !perm.check || empty(perm.check));
  const cols = op === 'delete' || perm.columns === '*' || (op === 'insert' && perm.columns === undefined)
    || (Array.isArray(perm.columns) && allColumns.every((c) => perm.columns.includes(c)));
  const limited = op === 'select' && perm.limit !== undefined && perm.limit !== null;
  return rows && cols && !limited ? 'full' : 'partial';
}
