/**
 * The visual row-permission builder's model: a boolean expression of the metadata API as a tree
 * of conditions a form can show (groups of _and/_or, _not, _exists, relationships, and column
 * comparisons whose operand is a value, a session variable or another column), converted from and
 * to the JSON. Pure functions, unit-tested under node.
 *
 * The builder keeps its own tree while the person edits it (so that "1." typed into a number box
 * stays "1." until the next key) and writes the JSON from it; JSON typed into the JSON view is read
 * back into a tree. Anything the builder cannot show (an unknown key) stays as a JSON node.
 */
import { valueForColumn, type BoolExp, type QualifiedName } from '../data/model.ts';
import { isSessionVariable, type TableContext, type TableLookup } from './validate.ts';

export type Operand =
  | { kind: 'value'; text: string }
  | { kind: 'session'; name: string }
  | { kind: 'column'; name: string };

export type Cond =
  | { kind: 'group'; op: '_and' | '_or'; children: Cond[] }
  | { kind: 'not'; child: Cond }
  | { kind: 'exists'; table: QualifiedName | null; where: Cond }
  | { kind: 'rel'; name: string; where: Cond }
  | { kind: 'column'; column: string; op: string; operand: Operand }
  | { kind: 'json'; text: string };

export const emptyGroup = (op: '_and' | '_or' = '_and'): Cond => ({ kind: 'group', op, children: [] });

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** Operators offered for a column of type `type` (label is what the select shows: the operator itself, as in the JSON). */
export function operatorsFor(type: string): Array<{ op: string; label: string }> {
  const t = type.toLowerCase();
  const ops = ['_eq', '_neq', '_gt', '_lt', '_gte', '_lte', '_in', '_nin', '_is_null'];
  if (/char|text|citext|name/.test(t)) ops.push('_like', '_nlike', '_ilike', '_nilike', '_similar', '_nsimilar');
  if (t === 'jsonb') ops.push('_contains', '_contained_in', '_has_key', '_has_keys_any', '_has_keys_all');
  ops.push('_ceq', '_cneq', '_cgt', '_clt', '_cgte', '_clte');
  return ops.map((op) => ({ op, label: op }));
}

export const isColumnOperator = (op: string) => /^_c(eq|ne|neq|gt|lt|gte|lte)$/.test(op);
const LIST_OPS = new Set(['_in', '_nin', '_has_keys_any', '_has_keys_all']);
const JSON_OPS = new Set(['_contains', '_contained_in']);

function operandText(op: string, arg: unknown): string {
  if (LIST_OPS.has(op) && Array.isArray(arg) && arg.every((x) => x === null || typeof x !== 'object')) {
    return arg.map((x) => (typeof x === 'string' && /[,[\]]/.test(x) ? JSON.stringify(x) : String(x))).join(', ');
  }
  if (typeof arg === 'string') return arg;
  return JSON.stringify(arg);
}

function tableOf(v: unknown): QualifiedName | null {
  if (typeof v === 'string') return { schema: 'public', name: v };
  if (isObject(v) && typeof v.name === 'string') return { schema: typeof v.schema === 'string' ? v.schema : 'public', name: v.name };
  return null;
}

const NO_TABLE: TableContext = { columns: [], relationships: {} };
const isColumn = (k: string, table: TableContext) => table.columns.some((c) => c.name === k) || !!table.computedFields?.includes(k);

/** The tree of a boolean expression (always a group at the top). */
export function fromJson(exp: unknown, table: TableContext, lookup: TableLookup): Cond {
  if (!isObject(exp)) return { kind: 'group', op: '_and', children: [{ kind: 'json', text: JSON.stringify(exp) }] };
  const children: Cond[] = [];
  for (const [k, v] of Object.entries(exp)) {
    if ((k === '_and' || k === '_or') && Array.isArray(v)) {
      children.push({ kind: 'group', op: k, children: v.map((e) => unwrap(fromJson(e, table, lookup))) });
    } else if (k === '_not') {
      children.push({ kind: 'not', child: fromJson(v, table, lookup) });
    } else if (k === '_exists' && isObject(v) && tableOf(v._table)) {
      children.push({ kind: 'exists', table: tableOf(v._table), where: fromJson(v._where ?? {}, lookup(tableOf(v._table)!) ?? NO_TABLE, lookup) });
    } else if (table.relationships[k]) {
      children.push({ kind: 'rel', name: k, where: fromJson(v, lookup(table.relationships[k]) ?? NO_TABLE, lookup) });
    } else if (isColumn(k, table) && isObject(v) && Object.keys(v).length > 0 && Object.keys(v).every((op) => op.startsWith('_'))) {
      for (const [op, arg] of Object.entries(v)) {
        if (isColumnOperator(op) && typeof arg === 'string') children.push({ kind: 'column', column: k, op, operand: { kind: 'column', name: arg } });
        else if (isSessionVariable(arg)) children.push({ kind: 'column', column: k, op, operand: { kind: 'session', name: arg } });
        else children.push({ kind: 'column', column: k, op, operand: { kind: 'value', text: operandText(op, arg) } });
      }
    } else if (isColumn(k, table) && !isObject(v) && !Array.isArray(v)) {
      // {col: value} is shorthand for equality
      children.push({ kind: 'column', column: k, op: '_eq', operand: isSessionVariable(v) ? { kind: 'session', name: v } : { kind: 'value', text: operandText('_eq', v) } });
    } else {
      children.push({ kind: 'json', text: JSON.stringify({ [k]: v }) });
    }
  }
  if (children.length === 1 && children[0]!.kind === 'group') return children[0]!;
  return { kind: 'group', op: '_and', children };
}

/** A one-condition _and group is shown as the condition itself inside _and/_or lists. */
function unwrap(c: Cond): Cond {
  return c.kind === 'group' && c.op === '_and' && c.children.length === 1 ? c.children[0]! : c;
}

/** The JSON value of an operand typed as text, for a column of type `type` (kept as text when it is not one). */
export function operandValue(op: string, text: string, type: string): unknown {
  const t = text.trim();
  try {
    if (op === '_is_null') return t === '' ? true : valueForColumn('boolean', t);
    if (LIST_OPS.has(op)) {
      if (t.startsWith('[')) return JSON.parse(t);
      const items = t === '' ? [] : splitList(t);
      return op.startsWith('_has_keys') ? items : items.map((x) => valueForColumn(type, x));
    }
    if (JSON_OPS.has(op)) return JSON.parse(t);
    if (/like|similar/.test(op) || op === '_has_key') return text;
    return valueForColumn(type, text);
  } catch {
    return text;
  }
}

function splitList(t: string): string[] {
  const out: string[] = [];
  const re = /\s*("(?:[^"\\]|\\.)*"|[^,]*)\s*(?:,|$)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(t)) && m[0] !== '') {
    const item = m[1]!.trim();
    if (item !== '') out.push(item.startsWith('"') ? (JSON.parse(item) as string) : item);
  }
  return out;
}

/** The boolean expression of a tree (JSON nodes that are not JSON are left out). */
export function toJson(c: Cond, table: TableContext, lookup: TableLookup): BoolExp {
  switch (c.kind) {
    case 'group': {
      const parts = c.children.map((x) => toJson(x, table, lookup));
      if (c.op === '_or') return { _or: parts };
      return merge(parts);
    }
    case 'not':
      return { _not: toJson(c.child, table, lookup) };
    case 'exists': {
      const target = c.table ? lookup(c.table) : undefined;
      return { _exists: { _table: c.table ?? { schema: 'public', name: '' }, _where: toJson(c.where, target ?? NO_TABLE, lookup) } };
    }
    case 'rel': {
      const t = table.relationships[c.name];
      const target = t ? lookup(t) : undefined;
      return { [c.name]: toJson(c.where, target ?? NO_TABLE, lookup) };
    }
    case 'column': {
      const type = table.columns.find((x) => x.name === c.column)?.type ?? 'text';
      const arg = c.operand.kind === 'value' ? operandValue(c.op, c.operand.text, type) : c.operand.name;
      return { [c.column]: { [c.op]: arg } };
    }
    case 'json':
      try {
        const v = JSON.parse(c.text) as unknown;
        return isObject(v) ? v : {};
      } catch {
        return {};
      }
  }
}

/**
 * The parts of an _and as one object when their keys do not clash (`{a: …, b: …}`, and one
 * column's operators together: `{id: {_gt: 1, _lt: 9}}`), else as `{_and: [...]}`.
 */
function merge(parts: BoolExp[]): BoolExp {
  const out: BoolExp = {};
  for (const p of parts) {
    for (const [k, v] of Object.entries(p)) {
      if (!(k in out)) out[k] = v;
      else if (isObject(out[k]) && isObject(v) && Object.keys(v).every((op) => op.startsWith('_') && !(op in (out[k] as object)))
        && Object.keys(out[k] as object).every((op) => op.startsWith('_')) && !k.startsWith('_')) {
        out[k] = { ...(out[k] as object), ...v };
      } else return parts.length === 1 ? parts[0]! : { _and: parts };
    }
  }
  return out;
}

/** Replaces the node at `path` (child indexes from the top group) with `f(node)`; `null` removes it. */
export function updateAt(root: Cond, path: number[], f: (c: Cond) => Cond | null): Cond {
  if (path.length === 0) return f(root) ?? emptyGroup();
  const [i, ...rest] = path as [number, ...number[]];
  const inner = (c: Cond): Cond | null => (rest.length === 0 ? f(c) : updateAt(c, rest, f));
  switch (root.kind) {
    case 'group': {
      const children = [...root.children];
      const next = inner(children[i]!);
      if (next === null) children.splice(i, 1);
      else children[i] = next;
      return { ...root, children };
    }
    case 'not':
      return { ...root, child: inner(root.child) ?? emptyGroup() };
    case 'exists':
    case 'rel':
      return { ...root, where: inner(root.where) ?? emptyGroup() };
    default:
      return root;
  }
}
