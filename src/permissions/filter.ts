/**
 * Boolean expressions in metadata syntax (permission filters/checks, and the
 * `where` of /v1/query DML) → IR. In permissions a string `x-svc-*` value is
 * a session variable (referenced, never inlined); in DML `where` it is a
 * plain string. Operators may be written `_op` or `$op`.
 *
 * A request's expression is built with the role's views: every table,
 * column, relationship and computed field it names must be selectable by
 * the role (else Hasura's `permission-denied` at the key), and the select
 * filter of every table reached through a relationship or `_exists` is
 * ANDed in. Permission filters (written by the admin) are built without.
 */
import { err400, pathKey } from '../errors.js';
import { unknownOperator } from './messages.js';
import { fieldNotExists, tableNotExists } from '../document/messages.js';
import { expectBool } from '../document/args.js';
import { COLUMN_COMPARE_BY_NAME, COMPARE_BY_NAME, COMPARE_OPERATORS } from '../ir/operators.js';
import type { BoolExp, ColumnOp, ColumnTarget, ColumnModel, TableModel } from '../model/tables.js';
import type { TypedValue, ValueRef, PgType } from '../model/values.js';
import { displayName, type QualifiedTable } from '../model/metadata.js';
import type { RoleViews, TableView } from './view.js';
import { pgType } from '../sql/pgtypes.js';
import { isSessionVariable, normalizeTableName, operatorName } from './boolexp.js';
import { isJsonObject } from '../json.js';

export interface FilterOptions {
  /** treat `x-svc-*` strings as session variables (permissions) */
  sessionVariables: boolean;
  /** a request's expression: checked against (and filtered by) the role's select permissions */
  views?: RoleViews;
  /** null-safe `_eq` (permissions compare with IS NULL for a null literal) */
  nullSafeEq?: boolean;
}

export { pathKey };

export const columnType = (c: ColumnModel): PgType => ({ name: c.type, schema: c.typeSchema });
const TEXT = pgType('text');

/** Finds a table by name (the schema cache's tables, or the ones being built). */
export type TableLookup = (t: QualifiedTable) => TableModel | undefined;

export class FilterBuilder {
  constructor(
    private readonly lookup: TableLookup,
    private readonly opts: FilterOptions,
  ) {}

  build(exp: unknown, table: TableModel, path = '$'): BoolExp {
    const views = this.opts.views;
    return this.node(exp, table, views ? views.requireTable(table, path) : null, path, path);
  }

  /**
   * `view`: the role's view of `table` (null: unchecked, a permission filter).
   * Paths as upstream's (RQL/GBoolExp.hs `annBoolExp`, RQL/DML/Internal.hs `checkSelPerm`):
   * `_and`/`_or`/`_not` and relationships add no key, a column adds its name and an operator
   * its own, `_exists` adds `._exists._table`/`._exists._where`; the role's permission on what
   * the expression names is checked at the expression's root (`perm`).
   */
  private node(exp: unknown, table: TableModel, view: TableView | null, path: string, perm: string): BoolExp {
    if (exp === null || exp === undefined) return { kind: 'true' };
    if (!isJsonObject(exp)) throw err400('parse-failed', 'expecting an object for boolean expression', path);
    const views = this.opts.views;
    const items: BoolExp[] = [];
    for (const [k, v] of Object.entries(exp as Record<string, unknown>)) {
      const p = path + pathKey(k);
      if (k === '_and' || k === '$and' || k === '_or' || k === '$or') {
        if (!Array.isArray(v)) throw err400('parse-failed', `expecting an array for ${k}`, p);
        const sub = v.map((e) => this.node(e, table, view, path, perm));
        items.push(k.endsWith('and') ? { kind: 'and', items: sub } : { kind: 'or', items: sub });
      } else if (k === '_not' || k === '$not') {
        items.push({ kind: 'not', item: this.node(v, table, view, path, perm) });
      } else if (k === '_exists' || k === '$exists') {
        if (!isJsonObject(v)) throw err400('parse-failed', 'expecting an object for _exists', p);
        const ex = v as { _table?: unknown; _where?: unknown };
        const name = normalizeTableName(ex._table);
        const t = this.lookup(name);
        if (!t) throw tableNotExists(name, `${p}._table`);
        const tv = views ? views.requireTable(t, `${p}._table`) : null;
        items.push({ kind: 'exists', table: t, exp: this.node(ex._where ?? {}, t, tv, `${p}._where`, perm), filter: tv?.filter ?? null });
      } else if (table.columnsByName.has(k)) {
        // the role's view of the column (an inherited role's may carry a guard: compared as the role reads it)
        const c = view ? views!.requireColumn(view, k, perm) : table.columnsByName.get(k)!;
        items.push({
          kind: 'column',
          target: { kind: 'column', column: c },
          ops: this.columnOps(v, { kind: 'column', column: c }, columnType(c), table, p, view),
          nullSafeEq: this.opts.nullSafeEq,
        });
      } else if (table.relationships.has(k)) {
        const rel = table.relationships.get(k)!;
        const target = this.lookup(rel.remoteTable);
        if (!target) throw err400('not-exists', `table ${JSON.stringify(displayName(rel.remoteTable))} does not exist`, p);
        const rv = view ? views!.requireRelationship(view, rel, perm) : null;
        items.push({ kind: 'relationship', rel, target, exp: this.node(v, target, rv, path, perm), filter: rv?.filter ?? null });
      } else if (table.computedFields.has(k)) {
        const declared = table.computedFields.get(k)!;
        if (declared.returns.kind !== 'scalar') throw err400('unexpected-payload', `computed field ${JSON.stringify(k)} does not return a scalar`, p);
        const cf = view ? views!.requireComputedField(view, declared, perm) : declared;
        const t = pgType(declared.returns.type, declared.returns.typeSchema);
        const target: ColumnTarget = { kind: 'computed', field: cf, type: t };
        items.push({ kind: 'column', target, ops: this.columnOps(v, target, t, table, p, view), nullSafeEq: this.opts.nullSafeEq });
      } else {
        // upstream's annColExp (RQL/GBoolExp.hs): askFieldInfo, at the expression's path
        throw fieldNotExists(k, path);
      }
    }
    if (items.length === 1) return items[0]!;
    return { kind: 'and', items };
  }

  private value(v: unknown, type: PgType, array = false): TypedValue {
    return { ref: this.ref(v), type, array };
  }

  private ref(v: unknown): ValueRef {
    if (this.opts.sessionVariables && isSessionVariable(v)) return { kind: 'session', name: v.toLowerCase() };
    return { kind: 'literal', value: v };
  }

  columnOps(v: unknown, target: ColumnTarget, type: PgType, table: TableModel, path: string, view: TableView | null = null): ColumnOp[] {
    const isJson = type.name === 'json' || type.name === 'jsonb';
    // a value, not an operator object (a numeral kept exact is a value: JsonNumber)
    if (!isJsonObject(v)) return [{ op: 'eq', value: this.value(v, type) }];
    const entries = Object.entries(v as Record<string, unknown>);
    if (isJson && entries.some(([k]) => !operatorName(k))) return [{ op: 'eq', value: this.value(v, type) }];
    const ops: ColumnOp[] = [];
    for (const [k, arg] of entries) {
      const op = operatorName(k);
      const p = path + pathKey(k);
      if (!op) throw unknownOperator(k, p);
      ops.push(this.columnOp(op, k, arg, target, type, table, p, view));
    }
    return ops;
  }

  /** `key`: the operator as written (`_eq`, `$eq`), for messages */
  private columnOp(
    op: string,
    key: string,
    arg: unknown,
    target: ColumnTarget,
    type: PgType,
    table: TableModel,
    path: string,
    view: TableView | null,
  ): ColumnOp {
    const compare = COMPARE_BY_NAME.get(op);
    if (compare) {
      const v = COMPARE_OPERATORS[compare].value;
      const t = v === 'text' ? TEXT : v === 'jsonb' ? pgType('jsonb') : v === 'raster' ? pgType('raster', type.schema) : type;
      return { op: compare, value: this.value(arg, t) };
    }
    const columnCompare = COLUMN_COMPARE_BY_NAME.get(op);
    if (columnCompare) {
      if (typeof arg !== 'string') throw err400('unexpected-payload', 'expecting a string for column operator', path);
      const declared = table.columnsByName.get(arg);
      if (!declared) throw err400('not-exists', `no such column exists : ${JSON.stringify(arg)}`, path);
      const other = view ? this.opts.views!.requireColumn(view, arg, path) : declared;
      return { op: columnCompare, column: other };
    }
    switch (op) {
      case 'in':
      case 'nin':
        if (Array.isArray(arg)) return { op, values: arg.map((x) => this.value(x, type)) };
        return { op, values: this.value(arg, type, true) };
      case 'has_keys_any':
      case 'has_keys_all':
        if (Array.isArray(arg)) return { op, values: arg.map((x) => this.value(x, TEXT)) };
        return { op, values: this.value(arg, TEXT, true) };
      case 'is_null':
        // upstream's parseIsNull decodes the value with aeson
        return { op: 'is_null', value: expectBool(arg, path) };
      case 'st_d_within': {
        const a = (arg ?? {}) as Record<string, unknown>;
        const geog = type.name === 'geography';
        if (!('distance' in a) || !('from' in a)) throw err400('parse-failed', 'expecting "distance" and "from"', path);
        return {
          op: 'st_d_within',
          distance: this.value(a.distance, pgType('float8')),
          from: this.value(a.from, type),
          useSpheroid: geog && 'use_spheroid' in a ? this.value(a.use_spheroid, pgType('bool')) : undefined,
        };
      }
      case 'st_intersects_nband_geom': {
        const a = (arg ?? {}) as Record<string, unknown>;
        return { op, nband: this.value(a.nband, pgType('int4')), geommin: this.value(a.geommin, pgType('geometry', type.schema)) };
      }
      case 'st_intersects_geom_nband': {
        const a = (arg ?? {}) as Record<string, unknown>;
        return {
          op,
          geommin: this.value(a.geommin, pgType('geometry', type.schema)),
          nband: a.nband === undefined || a.nband === null ? undefined : this.value(a.nband, pgType('int4')),
        };
      }
      case 'cast': {
        if (!isJsonObject(arg)) throw err400('parse-failed', 'expecting an object for $cast', path);
        const casts: ColumnOp[] = [];
        for (const [tname, sub] of Object.entries(arg as Record<string, unknown>)) {
          const allowed = (type.name === 'geometry' && tname === 'geography') || (type.name === 'geography' && tname === 'geometry');
          if (!allowed) {
            throw err400('unexpected-payload', `cannot cast column of type ${JSON.stringify(type.name)} to type ${JSON.stringify(tname)}`, path);
          }
          const to = pgType(tname, type.schema);
          casts.push({ op: 'cast', to, ops: this.columnOps(sub, target, to, table, path + pathKey(tname), view) });
        }
        return casts.length === 1 ? casts[0]! : { op: 'cast', to: type, ops: casts };
      }
    }
    throw unknownOperator(key, path);
  }
}

/**
 * A permission's boolean expression (filter or check, metadata syntax) → IR, once, at schema
 * build: throws SvcError (400) naming the first problem, which makes the permission inconsistent.
 * Requests use the IR stored on the permission model; its dependencies and the columns it compares
 * with literals are read off the IR (permissionExpUses).
 */
export function permissionExp(lookup: TableLookup, table: TableModel, exp: unknown): BoolExp {
  return new FilterBuilder(lookup, { sessionVariables: true, nullSafeEq: true }).build(exp ?? {}, table);
}

/** What a permission's expression uses, for the metadata dependencies. */
export interface PermissionExpUses {
  /** columns of the permission's own table */
  columns: Set<string>;
  /** relationships of the permission's own table */
  relationships: Set<string>;
  /** tables reached through relationships (at any depth) and `_exists`, with the columns used there */
  remote: Array<{ table: QualifiedTable; columns: Set<string> }>;
  /** every relationship and computed field used, at any depth, with its table */
  fields: Array<{ kind: 'relationship' | 'computed_field'; table: QualifiedTable; name: string }>;
  /** columns compared with a static value (not a session variable), at any depth through relationships */
  literalColumns: Array<{ table: QualifiedTable; column: string }>;
}

export function permissionExpUses(exp: BoolExp, table: TableModel): PermissionExpUses {
  const out: PermissionExpUses = { columns: new Set(), relationships: new Set(), remote: [], fields: [], literalColumns: [] };
  walkUses(exp, table, out, { top: true, literal: true });
  return out;
}

const isLiteral = (v: TypedValue | TypedValue[] | undefined): boolean =>
  v === undefined ? false : Array.isArray(v) ? v.some((x) => x.ref.kind === 'literal') : v.ref.kind === 'literal';

function opHasLiteral(op: ColumnOp): boolean {
  switch (op.op) {
    case 'is_null':
      return false;
    case 'in':
    case 'nin':
    case 'has_keys_any':
    case 'has_keys_all':
      return isLiteral(op.values);
    case 'st_d_within':
      return isLiteral(op.distance) || isLiteral(op.from) || isLiteral(op.useSpheroid);
    case 'st_intersects_nband_geom':
    case 'st_intersects_geom_nband':
      return isLiteral(op.nband) || isLiteral(op.geommin);
    case 'cast':
      return op.ops.some(opHasLiteral);
    default:
      return 'value' in op ? isLiteral(op.value) : false;
  }
}

/**
 * `columns` collects the columns used at this level (the caller's table); `top`: the permission's
 * own table (its relationships are listed too); `literal`: literal columns are collected here
 * (through relationships, not inside `_exists`, as upstream's dependency of a column's type).
 */
function walkUses(e: BoolExp, table: TableModel, out: PermissionExpUses, at: { top: boolean; literal: boolean }, columns: Set<string> = out.columns): void {
  switch (e.kind) {
    case 'true':
      return;
    case 'and':
    case 'or':
      for (const x of e.items) walkUses(x, table, out, at, columns);
      return;
    case 'not':
      walkUses(e.item, table, out, at, columns);
      return;
    case 'column':
      if (e.target.kind === 'column') {
        columns.add(e.target.column.name);
        if (at.literal && e.ops.some(opHasLiteral)) out.literalColumns.push({ table: table.name, column: e.target.column.name });
      } else {
        out.fields.push({ kind: 'computed_field', table: table.name, name: e.target.field.name });
      }
      for (const op of e.ops) if ('column' in op) columns.add(op.column.name);
      return;
    case 'relationship': {
      if (at.top) out.relationships.add(e.rel.name);
      out.fields.push({ kind: 'relationship', table: table.name, name: e.rel.name });
      const sub = new Set<string>();
      const entry = { table: e.target.name, columns: sub };
      out.remote.push(entry);
      walkUses(e.exp, e.target, out, { top: false, literal: at.literal }, sub);
      return;
    }
    case 'exists': {
      const sub = new Set<string>();
      out.remote.push({ table: e.table.name, columns: sub });
      walkUses(e.exp, e.table, out, { top: false, literal: false }, sub);
      return;
    }
  }
}
