/**
 * The Relay schema (/v1beta1/relay, schema/relay-schema.rst): every table
 * with a primary key is a `Node` with a global `id`; the root has `node(id:)`
 * and `<table>_connection` / `<function>_connection`; array relationships to
 * tables with a primary key get `<rel>_connection`. Connections page by
 * keyset cursors (sql/connection.ts). Ids and cursors are read back with
 * upstream's messages (relay/globalId.ts); a variable holding one is a
 * statement parameter, only its table (node) or the kinds of its values
 * shape the plan.
 */
import {
  GraphQLBoolean,
  GraphQLID,
  GraphQLInt,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigArgumentMap,
} from 'graphql';
import { SvcError } from '../../errors.js';
import type { CollectedField, DocumentContext } from '../../ir/document.js';
import { validationError, type InVal } from '../../ir/input.js';
import {
  andExp,
  type ConnectionField,
  type ConnectionSelect,
  type CursorItem,
  type EdgeField,
  type Field,
  type OrderByItem,
  type OrderByTarget,
  type PageInfoField,
  type RootField,
  type SelectSource,
} from '../../ir/types.js';
import type { BoolExp, ColumnModel, TableModel } from '../../model/tables.js';
import type { TypedValue, PgType } from '../../model/values.js';
import { columnType } from '../../permissions/filter.js';
import type { TableView } from '../../permissions/view.js';
import { decodeMemo, jvalText, parameterText, parseNodeId, scalarKindError, valueAtKeys, type JVal } from '../../relay/globalId.js';
import { pgType } from '../../sql/pgtypes.js';
import type { RoleSchemaBuilder, TableObjectExtension } from './builder.js';
import { isGraphQLName, qualifiedGqlName, quotedTable } from './names.js';
import { functionSource, parseSelectArgs, parseSelectionSet, parseTableSelection, selectArgs, tableObject, type SelectionParser } from './select.js';
import type { RootFieldConfig } from '../extensions.js';

type FieldConfig = GraphQLFieldConfig<unknown, unknown>;

/** The primary key columns of a table (Relay only knows tables that have one). */
export function primaryKeyColumns(t: TableModel): ColumnModel[] | null {
  if (!t.primaryKey || t.primaryKey.length === 0) return null;
  const cols = t.primaryKey.map((n) => t.columnsByName.get(n));
  return cols.every((c) => c) ? (cols as ColumnModel[]) : null;
}

function nodeInterface(b: RoleSchemaBuilder): GraphQLInterfaceType {
  return b.register(
    'Node',
    () =>
      new GraphQLInterfaceType({
        name: 'Node',
        description: 'An object with globally unique ID',
        fields: { id: { type: new GraphQLNonNull(GraphQLID), description: 'A globally unique identifier' } },
      }),
  );
}

/** Node interface, global `id` (replacing a column named `id`) and `<rel>_connection` fields. */
export function relayExtension(b: RoleSchemaBuilder): TableObjectExtension {
  return {
    interfaces: (v) => (primaryKeyColumns(v.table) ? [nodeInterface(b)] : []),
    extendFields(v, fields) {
      // as upstream: `id` is the global id; a table without a primary key has no `id` field
      delete fields.id;
      if (primaryKeyColumns(v.table)) {
        const parse: SelectionParser<Field> = (_ctx, f) => ({ alias: f.alias, kind: 'node_id', table: v.table });
        fields.id = { type: new GraphQLNonNull(GraphQLID), extensions: { svc: parse } };
      }
      for (const rel of v.arrayRelationships) {
        const rv = b.remoteView(rel);
        const pk = rv && primaryKeyColumns(rv.table);
        if (!rv || !pk || !isGraphQLName(rel.name)) continue;
        const conn = connectionObject(b, rv);
        const parse: SelectionParser<Field> = (ctx, f, def) => {
          const select = connectionSelect(b, ctx, rv, f, ctx.args(f, def), { kind: 'table', table: rv.table }, pk, conn);
          return { alias: f.alias, kind: 'array_connection', rel, select };
        };
        fields[`${rel.name}_connection`] = {
          type: new GraphQLNonNull(conn),
          description: 'An array relationship connection',
          args: connectionArgs(b, rv),
          extensions: { svc: parse },
        };
      }
    },
  };
}

// ---- connection types ------------------------------------------------------------------

function pageInfoObject(b: RoleSchemaBuilder): GraphQLObjectType {
  return b.register('PageInfo', () => {
    const field = (kind: 'startCursor' | 'endCursor' | 'hasNextPage' | 'hasPreviousPage', type: typeof GraphQLString | typeof GraphQLBoolean): FieldConfig => {
      const parse: SelectionParser<PageInfoField> = (_ctx, f) => ({ alias: f.alias, kind });
      return { type: new GraphQLNonNull(type), extensions: { svc: parse } };
    };
    return new GraphQLObjectType({
      name: 'PageInfo',
      fields: {
        endCursor: field('endCursor', GraphQLString),
        hasNextPage: field('hasNextPage', GraphQLBoolean),
        hasPreviousPage: field('hasPreviousPage', GraphQLBoolean),
        startCursor: field('startCursor', GraphQLString),
      },
    });
  });
}

function edgeObject(b: RoleSchemaBuilder, v: TableView): GraphQLObjectType {
  const name = `${b.tableName(v.table)}Edge`;
  return b.register(name, () => {
    const obj = tableObject(b, v);
    const parseCursor: SelectionParser<EdgeField> = (_ctx, f) => ({ alias: f.alias, kind: 'cursor' });
    const parseNode: SelectionParser<EdgeField> = (ctx, f) => ({ alias: f.alias, kind: 'node', fields: parseTableSelection(ctx, f, obj) });
    return new GraphQLObjectType({
      name,
      fields: () => ({
        cursor: { type: new GraphQLNonNull(GraphQLString), extensions: { svc: parseCursor } },
        node: { type: new GraphQLNonNull(obj), extensions: { svc: parseNode } },
      }),
    });
  });
}

export function connectionObject(b: RoleSchemaBuilder, v: TableView): GraphQLObjectType {
  const name = `${b.tableName(v.table)}Connection`;
  return b.register(name, () => {
    const edge = edgeObject(b, v);
    const info = pageInfoObject(b);
    const parseEdges: SelectionParser<ConnectionField> = (ctx, f) => ({
      alias: f.alias,
      kind: 'edges',
      fields: parseSelectionSet<EdgeField>(ctx, f, edge, (alias) => ({ alias, kind: 'typename', name: edge.name })),
    });
    const parseInfo: SelectionParser<ConnectionField> = (ctx, f) => ({
      alias: f.alias,
      kind: 'pageInfo',
      fields: parseSelectionSet<PageInfoField>(ctx, f, info, (alias) => ({ alias, kind: 'typename', name: info.name })),
    });
    return new GraphQLObjectType({
      name,
      fields: () => ({
        edges: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(edge))), extensions: { svc: parseEdges } },
        pageInfo: { type: new GraphQLNonNull(info), extensions: { svc: parseInfo } },
      }),
    });
  });
}

function connectionArgs(b: RoleSchemaBuilder, v: TableView): GraphQLFieldConfigArgumentMap {
  const { distinct_on, order_by, where } = selectArgs(b, v);
  return {
    after: { type: GraphQLString },
    before: { type: GraphQLString },
    distinct_on: distinct_on!,
    first: { type: GraphQLInt },
    last: { type: GraphQLInt },
    order_by: order_by!,
    where: where!,
  };
}

// ---- connection arguments ----------------------------------------------------------------

/** `first`/`last`: a count known when planning (its variable shapes the plan). */
function count(ctx: DocumentContext, v: InVal | undefined, path: string): number | null {
  if (!v || v.kind === 'null') return null;
  const n = ctx.valueOf(v);
  if (typeof n !== 'number' || !Number.isInteger(n)) throw validationError('expecting an integer', path);
  if (n < 0) throw validationError('expecting a positive integer', path);
  return n;
}

/** Where an order-by item's value sits in a cursor, and its type. */
function cursorItem(item: OrderByItem): CursorItem {
  const walk = (t: OrderByTarget): { path: string[]; type: PgType } => {
    switch (t.kind) {
      case 'column':
        return { path: [t.column.name], type: columnType(t.column) };
      case 'object': {
        const next = walk(t.next);
        return { path: [t.rel.name, ...next.path], type: next.type };
      }
      case 'aggregate': {
        const key = `${t.rel.name}_aggregate`;
        if (t.agg.kind === 'count') return { path: [key, 'count'], type: pgType('int8') };
        const type = t.agg.op === 'max' || t.agg.op === 'min' ? columnType(t.agg.column) : pgType('numeric');
        return { path: [key, t.agg.op, t.agg.column.name], type };
      }
    }
  };
  return { item, ...walk(item.target) };
}

const invalidCursor = (path: string) => validationError('the "after" or "before" cursor is invalid', path);

/** The kinds of a cursor's values at the items' paths (what a plan for a cursor variable depends on). */
function cursorShape(items: CursorItem[]) {
  return (value: unknown): string => {
    if (typeof value !== 'string') return 'E';
    const v = decodeMemo(value);
    if ('error' in v) return 'E';
    return items.map((i) => valueAtKeys(v, i.path)?.t ?? 'missing').join(',');
  };
}

/**
 * The split of a connection at its `after`/`before` cursor: one value per
 * cursor item, from the query text or (as parameters) from a variable.
 */
function parseSplit(ctx: DocumentContext, kind: 'after' | 'before', given: InVal, items: CursorItem[], path: string): ConnectionSplit {
  if (given.kind !== 'scalar') throw invalidCursor(path);
  const variable = given.variable;
  const text = given.value;
  if (typeof text !== 'string') throw invalidCursor(path);
  if (variable) ctx.markDerived(variable, cursorShape(items));
  const decoded = decodeMemo(text);
  if ('error' in decoded) throw invalidCursor(path);
  const values = items.map((it): TypedValue | null => {
    const v = valueAtKeys(decoded, it.path);
    if (!v) throw invalidCursor(path);
    const bad = scalarKindError(v, it.type.name);
    if (bad) throw validationError(bad, path);
    if (v.t === 'null') return null;
    if (!variable) return { ref: { kind: 'literal', value: parameterText(v, it.type.name) }, type: it.type };
    const decode = (x: unknown) => {
      const d = typeof x === 'string' ? decodeMemo(x) : undefined;
      const at = d && !('error' in d) ? valueAtKeys(d, it.path) : undefined;
      return at ? parameterText(at, it.type.name) : null;
    };
    return { ref: { kind: 'variable', name: variable, path: [], decode }, type: it.type };
  });
  return { kind, values };
}

type ConnectionSplit = NonNullable<ConnectionSelect['split']>;

/** A connection's IR from its field's arguments (upstream's checks and messages). */
function connectionSelect(
  b: RoleSchemaBuilder,
  ctx: DocumentContext,
  v: TableView,
  f: CollectedField,
  given: Map<string, InVal>,
  source: SelectSource,
  pk: ColumnModel[],
  conn: GraphQLObjectType,
): ConnectionSelect {
  const apath = `${f.path}.args`;
  const args = parseSelectArgs(b, ctx, v, f, given);
  // DISTINCT ON needs an order that starts with its columns; the primary key completes every
  // order, so that cursors name exactly one row
  const orderBy: OrderByItem[] =
    args.orderBy.length === 0 && args.distinctOn
      ? args.distinctOn.map((column) => ({ target: { kind: 'column', column }, dir: 'asc', nulls: 'last' }))
      : [...args.orderBy];
  const ordered = new Set(orderBy.flatMap((o) => (o.target.kind === 'column' ? [o.target.column.name] : [])));
  for (const c of pk) if (!ordered.has(c.name)) orderBy.push({ target: { kind: 'column', column: c }, dir: 'asc', nulls: 'last' });
  const cursorItems = orderBy.map(cursorItem);

  const after = given.get('after');
  const before = given.get('before');
  const hasAfter = !!after && after.kind !== 'null';
  const hasBefore = !!before && before.kind !== 'null';
  if (hasAfter && hasBefore) throw validationError('"after" and "before" are not allowed at once', f.path);
  const split = hasAfter ? parseSplit(ctx, 'after', after!, cursorItems, f.path) : hasBefore ? parseSplit(ctx, 'before', before!, cursorItems, f.path) : null;

  const first = count(ctx, given.get('first'), `${apath}.first`);
  const last = count(ctx, given.get('last'), `${apath}.last`);
  if (first !== null && last !== null) throw validationError('"first" and "last" are not allowed at once', f.path);
  const slice = first !== null ? { kind: 'first' as const, count: first } : last !== null ? { kind: 'last' as const, count: last } : null;

  return {
    source,
    filter: v.filter,
    permLimit: v.limit,
    args: { ...args, orderBy, limit: null, offset: null },
    cursorItems,
    split,
    slice,
    fields: parseSelectionSet<ConnectionField>(ctx, f, conn, (alias) => ({ alias, kind: 'typename', name: conn.name })),
  };
}

// ---- node ----------------------------------------------------------------------------------

interface NodeTable {
  view: TableView;
  obj: GraphQLObjectType;
  pk: ColumnModel[];
}

/** What a plan for a node id variable depends on: the table and the kinds of the key values. */
function nodeIdShape(value: unknown): string {
  if (typeof value !== 'string') return 'E';
  const id = parseNodeId(value);
  if ('error' in id) return `E${id.error}`;
  return JSON.stringify([id.schema, id.table, id.values.map((x) => x.t)]);
}

function nodeField(b: RoleSchemaBuilder, tables: Map<string, NodeTable>): RootFieldConfig {
  const iface = nodeInterface(b);
  const parse: SelectionParser<RootField> = (ctx, f, def) => {
    const idPath = `${f.path}.args.id`;
    const given = ctx.args(f, def).get('id');
    if (!given || given.kind !== 'scalar' || typeof given.value !== 'string') throw validationError('the node id is invalid: expected a string', idPath);
    const text = given.value;
    const variable = given.variable;
    if (variable) ctx.markDerived(variable, nodeIdShape);
    const id = parseNodeId(text);
    if ('error' in id) throw validationError(`the node id is invalid: ${id.error}`, idPath);
    const target = tables.get(`${id.schema}.${id.table}`);
    if (!target) throw validationError(`the node id is invalid: the table ${JSON.stringify(text)}`, idPath);
    const { view, obj, pk } = target;
    if (id.values.length < pk.length) {
      const missing = pk
        .slice(id.values.length)
        .map((c) => JSON.stringify(c.name))
        .join(', ');
      throw validationError(`the node id is invalid: primary key columns ${missing} are missing`, f.path);
    }
    if (id.values.length > pk.length) {
      throw validationError(`the node id is invalid: unexpected column values [${id.values.slice(pk.length).map(jvalText).join(',')}]`, f.path);
    }
    const conds: BoolExp[] = pk.map((c, i) => {
      const v: JVal = id.values[i]!;
      const bad = scalarKindError(v, c.type);
      if (bad) throw new SvcError(400, 'parse-failed', `value of column ${JSON.stringify(c.name)} in node id: ${bad}`, f.path);
      const type = columnType(c);
      const decode = (x: unknown) => {
        const d = typeof x === 'string' ? parseNodeId(x) : undefined;
        return d && !('error' in d) && d.values[i] ? parameterText(d.values[i]!, c.type) : null;
      };
      const value: TypedValue = variable
        ? { ref: { kind: 'variable', name: variable, path: [], decode }, type }
        : { ref: { kind: 'literal', value: parameterText(v, c.type) }, type };
      return { kind: 'column', target: { kind: 'column', column: c }, ops: [{ op: 'eq', value }] };
    });
    const fields = parseTableSelection(ctx, f, obj, iface);
    const where = andExp(...conds);
    return {
      alias: f.alias,
      kind: 'select_one',
      select: {
        source: { kind: 'table', table: view.table },
        filter: view.filter,
        permLimit: null,
        args: { where, orderBy: [], distinctOn: null, limit: null, offset: null },
        fields,
      },
    };
  };
  return { type: iface, args: { id: { type: new GraphQLNonNull(GraphQLID), description: 'A globally unique id' } }, extensions: { svc: parse } };
}

// ---- root fields ---------------------------------------------------------------------------

/** The query root of the Relay schema: `node` and the connections of tables and functions with a primary key. */
export function relayRootFields(b: RoleSchemaBuilder): Record<string, RootFieldConfig> {
  const out: Record<string, RootFieldConfig> = {};
  const nodeTables = new Map<string, NodeTable>();
  for (const t of b.cache.tables.values()) {
    const v = b.views.view(t);
    const pk = primaryKeyColumns(t);
    const tname = b.tableName(t);
    if (!v || !pk || !isGraphQLName(tname)) continue;
    const obj = tableObject(b, v);
    nodeTables.set(t.key, { view: v, obj, pk });
    const conn = connectionObject(b, v);
    const parse: SelectionParser<RootField> = (ctx, f, def) => ({
      alias: f.alias,
      kind: 'connection',
      select: connectionSelect(b, ctx, v, f, ctx.args(f, def), { kind: 'table', table: t }, pk, conn),
    });
    out[`${tname}_connection`] = {
      type: new GraphQLNonNull(conn),
      description: `fetch data from the table: ${quotedTable(t.name)}`,
      args: connectionArgs(b, v),
      extensions: { svc: parse },
    };
  }
  for (const fn of b.views.functions()) {
    const v = b.remoteView({ remoteTable: fn.returnTable });
    const pk = v && primaryKeyColumns(v.table);
    const fname = qualifiedGqlName(fn.name);
    if (!v || !pk || !isGraphQLName(fname)) continue;
    const call = functionSource(b, fn, v);
    const conn = connectionObject(b, v);
    const parse: SelectionParser<RootField> = (ctx, f, def) => {
      const given = ctx.args(f, def);
      return { alias: f.alias, kind: 'connection', select: connectionSelect(b, ctx, v, f, given, call.source(f, given), pk, conn) };
    };
    out[`${fname}_connection`] = {
      type: new GraphQLNonNull(conn),
      description: fn.info.description ?? `execute function ${quotedTable(fn.name)} which returns ${quotedTable(fn.returnTable)}`,
      args: { ...connectionArgs(b, v), ...call.args },
      extensions: { svc: parse },
    };
  }
  out.node = nodeField(b, nodeTables);
  return out;
}
