/**
 * Output types of reads and their parsers: `<table>` (columns,
 * relationships, computed fields), `<table>_aggregate`, `<table>_aggregate_fields`,
 * `<table>_<op>_fields`, and the root fields `<table>`, `<table>_by_pk`,
 * `<table>_aggregate`, `<function>`, `<function>_aggregate`.
 */
import {
  GraphQLEnumType,
  GraphQLFloat,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLBoolean,
  GraphQLString,
  getNamedType,
  isLeafType,
  type GraphQLField,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLInputFieldConfig,
  type GraphQLOutputType,
} from 'graphql';
import { SvcError } from '../../errors.js';
import type { CollectedField, DocumentContext } from '../../ir/document.js';
import { type InVal } from '../../ir/input.js';
import { fieldNotFound, mustHaveSelection, mustNotHaveSelection, validationError } from '../../ir/messages.js';
import { parseJsonPath } from '../../ir/jsonpath.js';
import type {
  AggregateField,
  AggregateOp,
  AggregateOpField,
  AggregateSelect,
  Field,
  FunctionArg,
  RootField,
  Select,
  SelectArgs,
  SelectSource,
} from '../../ir/types.js';
import type { BoolExp, ColumnModel, ComputedFieldModel, FunctionModel, RelationshipModel } from '../../model/tables.js';
import { andExp } from '../../ir/types.js';
import { columnType } from '../../permissions/filter.js';
import type { TableView } from '../../permissions/view.js';
import { pgType } from '../../sql/pgtypes.js';
import type { PgType } from '../../model/values.js';
import type { FunctionIntrospection } from '../../model/introspection.js';
import { listItems, refOf, svcExt, type BoolExpParser, type OrderByParser, type RoleSchemaBuilder } from './builder.js';
import type { RootFieldConfig } from '../extensions.js';
import { COMPARABLE_AGG_OPS, NUMERIC_AGG_OPS, isGraphQLName, qualifiedGqlName, quotedTable, sortedEntries } from './names.js';

/** The parser on an output field: the field as collected → its IR. */
export type SelectionParser<T> = (ctx: DocumentContext, f: CollectedField, def: GraphQLField<unknown, unknown>) => T;

const notSupported = (message: string, path: string) => new SvcError(400, 'not-supported', message, path);

/** Parses the selection set of `f` on an object type whose fields carry parsers. */
export function parseSelectionSet<T>(
  ctx: DocumentContext,
  f: CollectedField,
  type: GraphQLObjectType,
  typename: (alias: string) => T,
  abstract?: GraphQLInterfaceType,
): T[] {
  const defs = type.getFields();
  return ctx.collect(f.subSelections, type, abstract).map((sf) => {
    if (sf.name === '__typename') {
      checkLeaf(sf, GraphQLString);
      return typename(sf.alias);
    }
    const def = defs[sf.name];
    if (!def) throw fieldNotFound(sf.name, type.name, sf.path);
    checkLeaf(sf, def.type);
    return svcExt<SelectionParser<T>>(def)(ctx, sf, def);
  });
}

export function checkLeaf(f: CollectedField, type: GraphQLOutputType): void {
  const leaf = isLeafType(getNamedType(type));
  if (leaf && f.subSelections.length > 0) {
    throw mustNotHaveSelection(f.name, String(type), f.path);
  }
  if (!leaf && f.subSelections.length === 0) {
    throw mustHaveSelection(f.name, String(type), f.path);
  }
}

function viewOfRel(b: RoleSchemaBuilder, rel: RelationshipModel): TableView | null {
  return b.remoteView(rel);
}

// ---- select arguments ---------------------------------------------------------

export function selectArgs(b: RoleSchemaBuilder, v: TableView): GraphQLFieldConfigArgumentMap {
  return {
    distinct_on: { type: new GraphQLList(new GraphQLNonNull(b.selectColumnEnum(v))), description: 'distinct select on columns' },
    limit: { type: GraphQLInt, description: 'limit the number of rows returned' },
    offset: { type: GraphQLInt, description: 'skip the first n rows. Use only with order_by' },
    order_by: { type: new GraphQLList(new GraphQLNonNull(b.orderBy(v))), description: 'sort the rows by one or more columns' },
    where: { type: b.boolExp(v), description: 'filter the rows returned' },
  };
}

export function parseSelectArgs(b: RoleSchemaBuilder, ctx: DocumentContext, v: TableView, f: CollectedField, args: Map<string, InVal>): SelectArgs {
  const apath = `${f.path}.args`;
  const where = args.get('where');
  const orderBy = args.get('order_by');
  const distinct = args.get('distinct_on');
  const out: SelectArgs = {
    where: where && where.kind === 'object' ? svcExt<BoolExpParser>(where.type)(ctx, where, `${apath}.where`) : null,
    orderBy: [],
    distinctOn: null,
    limit: parseLimit(ctx, args.get('limit'), `${apath}.limit`),
    offset: parseOffset(ctx, args.get('offset'), `${apath}.offset`),
  };
  if (orderBy && orderBy.kind !== 'null') {
    const first = listItems(orderBy)[0];
    if (first && first.kind === 'object') out.orderBy = svcExt<OrderByParser>(first.type)(ctx, orderBy, `${apath}.order_by`);
  }
  if (distinct && distinct.kind !== 'null') {
    const cols = listItems(distinct).map((x, i) => b.views.requireColumn(v, enumColumn(ctx, x), `${apath}.distinct_on[${i}]`));
    out.distinctOn = cols;
    const initial = out.orderBy.slice(0, cols.length).flatMap((o) => (o.target.kind === 'column' ? [o.target.column.name] : []));
    const valid = out.orderBy.length === 0 || (initial.length === cols.length && cols.every((c) => initial.includes(c.name)));
    if (!valid) throw validationError('"distinct_on" columns must match initial "order_by" columns', apath);
  }
  return out;
}

/** The column named by a `<table>_select_column` value. */
function enumColumn(ctx: DocumentContext, x: InVal): string {
  const name = ctx.valueOf(x) as string;
  const e = x.kind === 'enum' ? (x.type as GraphQLEnumType).getValue(name) : undefined;
  return (e?.value as string) ?? name;
}

function parseLimit(ctx: DocumentContext, v: InVal | undefined, path: string): number | null {
  if (!v || v.kind === 'null') return null;
  const n = ctx.valueOf(v);
  if (typeof n !== 'number' || !Number.isInteger(n)) throw validationError('expecting Integer value for "limit"', path);
  if (n < 0) throw notSupported('unexpected negative value', path);
  return n;
}

function parseOffset(ctx: DocumentContext, v: InVal | undefined, path: string): number | null {
  if (!v || v.kind === 'null') return null;
  const x = ctx.valueOf(v);
  const n = typeof x === 'string' && /^-?\d+$/.test(x.trim()) ? Number(x) : x;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw validationError('expecting Integer value for "offset"', path);
  if (n < 0) throw notSupported('unexpected negative value', path);
  return n;
}

function baseSelect(v: TableView, source: SelectSource, args: SelectArgs): Omit<Select, 'fields'> {
  return { source, filter: v.filter, permLimit: v.limit, args };
}

// ---- table object ---------------------------------------------------------------

export function tableObject(b: RoleSchemaBuilder, v: TableView): GraphQLObjectType {
  const name = b.tableName(v.table);
  return b.register(
    name,
    () =>
      new GraphQLObjectType({
        name,
        description: v.table.info.description ?? `columns and relationships of ${quotedTable(v.table.name)}`,
        interfaces: () => b.extension?.interfaces(v) ?? [],
        fields: () => {
          const fields = tableFields(b, v);
          b.extension?.extendFields(v, fields);
          return sortedEntries(fields);
        },
      }),
  );
}

function tableFields(b: RoleSchemaBuilder, v: TableView): Record<string, GraphQLFieldConfig<unknown, unknown>> {
  const out: Record<string, GraphQLFieldConfig<unknown, unknown>> = {};
  for (const c of b.columns(v)) {
    const isJson = c.column.type === 'json' || c.column.type === 'jsonb';
    const parse: SelectionParser<Field> = (ctx, f, def) => {
      const args = ctx.args(f, def);
      const field: Field = { alias: f.alias, kind: 'column', column: c.column };
      const p = args.get('path');
      if (p && p.kind !== 'null') field.jsonPath = jsonPathArg(ctx, p, `${f.path}.args.path`);
      return field;
    };
    out[c.column.gqlName] = {
      type: b.columnOutputType(c),
      description: c.column.description ?? undefined,
      args: isJson ? { path: { type: GraphQLString, description: 'JSON select path' } } : {},
      extensions: { svc: parse },
    };
  }
  for (const rel of v.objectRelationships) {
    const rv = viewOfRel(b, rel);
    if (!rv || !isGraphQLName(rel.name)) continue;
    const required = rel.viaLocalForeignKey && rel.mapping.every(([l]) => !v.table.columnsByName.get(l)?.nullable);
    const obj = tableObject(b, rv);
    const parse: SelectionParser<Field> = (ctx, f) => ({
      alias: f.alias,
      kind: 'object',
      rel,
      select: { ...baseSelect(rv, { kind: 'table', table: rv.table }, noArgs()), permLimit: null, fields: parseTableSelection(ctx, f, obj) },
    });
    out[rel.name] = { type: required ? new GraphQLNonNull(obj) : obj, description: 'An object relationship', extensions: { svc: parse } };
  }
  for (const rel of v.arrayRelationships) {
    const rv = viewOfRel(b, rel);
    if (!rv || !isGraphQLName(rel.name)) continue;
    const obj = tableObject(b, rv);
    const parse: SelectionParser<Field> = (ctx, f, def) => {
      const args = parseSelectArgs(b, ctx, rv, f, ctx.args(f, def));
      return {
        alias: f.alias,
        kind: 'array',
        rel,
        select: { ...baseSelect(rv, { kind: 'table', table: rv.table }, args), fields: parseTableSelection(ctx, f, obj) },
      };
    };
    out[rel.name] = {
      type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(obj))),
      description: 'An array relationship',
      args: selectArgs(b, rv),
      extensions: { svc: parse },
    };
    if (rv.allowAggregations) {
      const agg = aggregateObject(b, rv);
      const parseAgg: SelectionParser<Field> = (ctx, f, def) => {
        const args = parseSelectArgs(b, ctx, rv, f, ctx.args(f, def));
        return {
          alias: f.alias,
          kind: 'array_aggregate',
          rel,
          select: { ...baseSelect(rv, { kind: 'table', table: rv.table }, args), fields: parseAggregateSelection(ctx, f, agg) },
        };
      };
      out[`${rel.name}_aggregate`] = {
        type: new GraphQLNonNull(agg),
        description: 'An aggregated array relationship',
        args: selectArgs(b, rv),
        extensions: { svc: parseAgg },
      };
    }
  }
  for (const cf of v.computedFields) {
    if (!isGraphQLName(cf.name)) continue;
    const f = computedField(b, cf);
    if (f) out[cf.name] = f;
  }
  for (const x of b.cache.extensions) if (x.tableFields) for (const [k, f] of Object.entries(x.tableFields(b, v))) if (!(k in out)) out[k] = f;
  return out;
}

function noArgs(): SelectArgs {
  return { where: null, orderBy: [], distinctOn: null, limit: null, offset: null };
}

function jsonPathArg(ctx: DocumentContext, v: InVal, path: string): (string | number)[] {
  const s = ctx.valueOf(v);
  if (typeof s !== 'string') throw validationError('expecting a string for "path"', path);
  const p = parseJsonPath(s);
  if (typeof p === 'string') throw validationError(`parse json path error: ${p}`, path);
  return p;
}

export function parseTableSelection(ctx: DocumentContext, f: CollectedField, type: GraphQLObjectType, abstract?: GraphQLInterfaceType): Field[] {
  return parseSelectionSet<Field>(ctx, f, type, (alias) => ({ alias, kind: 'typename', name: type.name }), abstract);
}

// ---- computed fields and function arguments -----------------------------------------

export interface FunctionInputArg {
  name: string;
  type: PgType;
  hasDefault: boolean;
  /** position among the function's input arguments */
  position: number;
}

/** Input arguments exposed in GraphQL: unnamed ones are arg_1, arg_2… counted among the unnamed. */
export function functionInputArgs(info: FunctionIntrospection, exclude: Set<number>): FunctionInputArg[] {
  const inArgs = info.args.filter((a) => a.mode === 'i' || a.mode === 'b');
  const firstDefault = inArgs.length - info.defaultArgs;
  let unnamed = 0;
  const out: FunctionInputArg[] = [];
  inArgs.forEach((a, i) => {
    const name = a.name ?? `arg_${++unnamed}`;
    if (exclude.has(i)) return;
    out.push({ name, type: pgType(a.type, a.typeSchema), hasDefault: i >= firstDefault, position: i });
  });
  return out;
}

function functionArgsInput(b: RoleSchemaBuilder, typeName: string, args: FunctionInputArg[]): GraphQLInputObjectType {
  return b.register(typeName, () => {
    const fields: Record<string, GraphQLInputFieldConfig> = {};
    for (const a of args) {
      const s = b.pgScalar(a.type.name);
      if (s && isGraphQLName(a.name)) fields[a.name] = { type: s };
    }
    return new GraphQLInputObjectType({ name: typeName, fields: sortedEntries(fields) });
  });
}

/**
 * Positional arguments of a call. `special` gives the row/session arguments;
 * omitted arguments must be trailing ones with defaults (Hasura's messages).
 */
export function functionCallArgs(
  info: FunctionIntrospection,
  inputs: FunctionInputArg[],
  given: InVal | undefined,
  special: Map<number, FunctionArg>,
  path: string,
): FunctionArg[] {
  const provided = new Map<string, InVal>(given && given.kind === 'object' ? given.fields : []);
  const count = info.args.filter((a) => a.mode === 'i' || a.mode === 'b').length;
  const byPos = new Map(inputs.map((a) => [a.position, a]));
  const out: FunctionArg[] = [];
  let omitted = false;
  for (let i = 0; i < count; i++) {
    const sp = special.get(i);
    if (sp) {
      if (omitted) throw notSupported('Only last set of positional arguments can be omitted', path);
      out.push(sp);
      continue;
    }
    const a = byPos.get(i)!;
    const v = provided.get(a.name);
    if (v === undefined) {
      if (!a.hasDefault) throw notSupported('Non default arguments cannot be omitted', path);
      omitted = true;
      out.push({ kind: 'default' });
      continue;
    }
    if (omitted) throw notSupported('Only last set of positional arguments can be omitted', path);
    out.push({ kind: 'value', value: { ref: refOf(v), type: a.type } });
  }
  return out;
}

function computedField(b: RoleSchemaBuilder, cf: ComputedFieldModel): GraphQLFieldConfig<unknown, unknown> | undefined {
  const info = cf.function;
  const exclude = new Set<number>([cf.tableArgIndex, ...(cf.sessionArgIndex !== undefined ? [cf.sessionArgIndex] : [])]);
  const inputs = functionInputArgs(info, exclude);
  const special = new Map<number, FunctionArg>([[cf.tableArgIndex, { kind: 'row' }]]);
  if (cf.sessionArgIndex !== undefined) {
    const a = info.args.filter((x) => x.mode === 'i' || x.mode === 'b')[cf.sessionArgIndex]!;
    special.set(cf.sessionArgIndex, { kind: 'session', type: pgType(a.type, a.typeSchema) });
  }
  const args: GraphQLFieldConfigArgumentMap = {};
  const argsType = `${qualifiedGqlName({ schema: info.schema, name: info.name })}_args`;
  if (inputs.length > 0) {
    args.args = {
      type: new GraphQLNonNull(functionArgsInput(b, argsType, inputs)),
      description: `input parameters for computed field ${JSON.stringify(cf.name)}`,
    };
  }
  const description = info.description ?? `A computed field, executes function ${quotedTable(info)}`;
  const callArgs = (f: CollectedField, given: Map<string, InVal>) => functionCallArgs(info, inputs, given.get('args'), special, `${f.path}.args.args`);
  if (cf.returns.kind === 'scalar') {
    const s = b.pgScalar(cf.returns.type);
    if (!s) return undefined;
    const type = pgType(cf.returns.type, cf.returns.typeSchema);
    const isJson = type.name === 'json' || type.name === 'jsonb';
    if (isJson) args.path = { type: GraphQLString, description: 'JSON select path' };
    const parse: SelectionParser<Field> = (ctx, f, def) => {
      const given = ctx.args(f, def);
      const field: Field = { alias: f.alias, kind: 'computed_scalar', field: cf, args: callArgs(f, given), type };
      const p = given.get('path');
      if (p && p.kind !== 'null') field.jsonPath = jsonPathArg(ctx, p, `${f.path}.args.path`);
      return field;
    };
    return { type: s, description, args: sortedEntries(args), extensions: { svc: parse } };
  }
  const ret = cf.returns;
  const rv = b.remoteView({ remoteTable: ret.table });
  if (!rv) return undefined;
  const obj = tableObject(b, rv);
  Object.assign(args, selectArgs(b, rv));
  const parse: SelectionParser<Field> = (ctx, f, def) => {
    const given = ctx.args(f, def);
    const source: SelectSource = { kind: 'function', schema: info.schema, name: info.name, args: callArgs(f, given), table: rv.table };
    const select: Select = { ...baseSelect(rv, source, parseSelectArgs(b, ctx, rv, f, given)), fields: parseTableSelection(ctx, f, obj) };
    return { alias: f.alias, kind: 'computed_table', field: cf, select };
  };
  return {
    type: ret.set ? new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(obj))) : obj,
    description,
    args: sortedEntries(args),
    extensions: { svc: parse },
  };
}

// ---- aggregates -------------------------------------------------------------------

export function aggregateObject(b: RoleSchemaBuilder, v: TableView): GraphQLObjectType {
  const tname = b.tableName(v.table);
  const name = `${tname}_aggregate`;
  return b.register(name, () => {
    const fieldsType = aggregateFieldsObject(b, v);
    const obj = tableObject(b, v);
    const parseAgg: SelectionParser<AggregateField> = (ctx, f) => ({
      alias: f.alias,
      kind: 'aggregate',
      fields: parseSelectionSet<AggregateOpField>(ctx, f, fieldsType, (alias) => ({ alias, kind: 'typename', name: fieldsType.name })),
    });
    const parseNodes: SelectionParser<AggregateField> = (ctx, f) => ({ alias: f.alias, kind: 'nodes', fields: parseTableSelection(ctx, f, obj) });
    return new GraphQLObjectType({
      name,
      description: `aggregated selection of ${quotedTable(v.table.name)}`,
      fields: () => ({
        aggregate: { type: fieldsType, extensions: { svc: parseAgg } },
        nodes: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(obj))), extensions: { svc: parseNodes } },
      }),
    });
  });
}

function aggregateFieldsObject(b: RoleSchemaBuilder, v: TableView): GraphQLObjectType {
  const tname = b.tableName(v.table);
  const name = `${tname}_aggregate_fields`;
  return b.register(name, () => {
    const { numeric, comparable } = b.aggColumns(v);
    const fields: Record<string, GraphQLFieldConfig<unknown, unknown>> = {};
    const parseCount: SelectionParser<AggregateOpField> = (ctx, f, def) => {
      const args = ctx.args(f, def);
      const cols = args.get('columns');
      const columns =
        cols && cols.kind !== 'null' ? listItems(cols).map((x, i) => b.views.requireColumn(v, enumColumn(ctx, x), `${f.path}.args.columns[${i}]`)) : null;
      return { alias: f.alias, kind: 'count', columns, distinct: ctx.valueOf(args.get('distinct')) === true };
    };
    fields.count = {
      type: GraphQLInt,
      args: { columns: { type: new GraphQLList(new GraphQLNonNull(b.selectColumnEnum(v))) }, distinct: { type: GraphQLBoolean } },
      extensions: { svc: parseCount },
    };
    const opField = (op: AggregateOp, cols: typeof numeric) => {
      const oname = `${tname}_${op}_fields`;
      const obj = b.register(oname, () => {
        const ofields: Record<string, GraphQLFieldConfig<unknown, unknown>> = {};
        for (const c of cols) {
          const type = op === 'sum' || op === 'max' || op === 'min' ? c.gql.type : GraphQLFloat;
          const parse: SelectionParser<{ alias: string; kind: 'column'; column: ColumnModel }> = (_ctx, f) => ({
            alias: f.alias,
            kind: 'column',
            column: c.column,
          });
          ofields[c.column.gqlName] = { type, extensions: { svc: parse } };
        }
        return new GraphQLObjectType({ name: oname, description: `aggregate ${op} on columns`, fields: sortedEntries(ofields) });
      });
      const parse: SelectionParser<AggregateOpField> = (ctx, f) => ({
        alias: f.alias,
        kind: 'op',
        op,
        fields: parseSelectionSet(ctx, f, obj, (alias) => ({ alias, kind: 'typename' as const, name: oname })),
      });
      fields[op] = { type: obj, extensions: { svc: parse } };
    };
    if (numeric.length > 0) for (const op of NUMERIC_AGG_OPS) opField(op, numeric);
    if (comparable.length > 0) for (const op of COMPARABLE_AGG_OPS) opField(op, comparable);
    return new GraphQLObjectType({ name, description: `aggregate fields of ${quotedTable(v.table.name)}`, fields: sortedEntries(fields) });
  });
}

export function parseAggregateSelection(ctx: DocumentContext, f: CollectedField, type: GraphQLObjectType): AggregateField[] {
  return parseSelectionSet<AggregateField>(ctx, f, type, (alias) => ({ alias, kind: 'typename', name: type.name }));
}

// ---- root fields ------------------------------------------------------------------------

export function tableRootFields(b: RoleSchemaBuilder, v: TableView): Record<string, RootFieldConfig> {
  const t = v.table;
  const tname = b.tableName(t);
  const out: Record<string, RootFieldConfig> = {};
  const obj = tableObject(b, v);
  const source: SelectSource = { kind: 'table', table: t };
  const custom = Object.fromEntries(
    Object.entries(t.customRootFields).filter(([, n]) => typeof n === 'string' && isGraphQLName(n)),
  ) as typeof t.customRootFields;

  const parseSelect: SelectionParser<RootField> = (ctx, f, def) => {
    const args = parseSelectArgs(b, ctx, v, f, ctx.args(f, def));
    return { alias: f.alias, kind: 'select', select: { ...baseSelect(v, source, args), fields: parseTableSelection(ctx, f, obj) } };
  };
  out[custom.select ?? tname] = {
    type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(obj))),
    description: `fetch data from the table: ${quotedTable(t.name)}`,
    args: selectArgs(b, v),
    extensions: { svc: parseSelect },
  };

  const pk = t.primaryKey;
  const visible = new Map(b.columns(v).map((c) => [c.column.name, c]));
  if (pk && pk.length > 0 && pk.every((c) => visible.has(c))) {
    const pkCols = pk.map((c) => visible.get(c)!);
    const parseByPk: SelectionParser<RootField> = (ctx, f, def) => {
      const args = ctx.args(f, def);
      const conds: BoolExp[] = pkCols.map((c) => ({
        kind: 'column',
        target: { kind: 'column', column: c.column },
        ops: [{ op: 'eq', value: { ref: refOf(args.get(c.column.gqlName)!), type: columnType(c.column) } }],
      }));
      const where = andExp(...conds);
      return { alias: f.alias, kind: 'select_one', select: { ...baseSelect(v, source, { ...noArgs(), where }), fields: parseTableSelection(ctx, f, obj) } };
    };
    const args: GraphQLFieldConfigArgumentMap = {};
    for (const c of pkCols) args[c.column.gqlName] = { type: new GraphQLNonNull(c.gql.type), description: c.column.description ?? undefined };
    out[custom.select_by_pk ?? `${tname}_by_pk`] = {
      type: obj,
      description: `fetch data from the table: ${quotedTable(t.name)} using primary key columns`,
      args: sortedEntries(args),
      extensions: { svc: parseByPk },
    };
  }

  if (v.allowAggregations) {
    const agg = aggregateObject(b, v);
    const parseAgg: SelectionParser<RootField> = (ctx, f, def) => {
      const args = parseSelectArgs(b, ctx, v, f, ctx.args(f, def));
      const select: AggregateSelect = { ...baseSelect(v, source, args), fields: parseAggregateSelection(ctx, f, agg) };
      return { alias: f.alias, kind: 'aggregate', select };
    };
    out[custom.select_aggregate ?? `${tname}_aggregate`] = {
      type: new GraphQLNonNull(agg),
      description: `fetch aggregated fields from the table: ${quotedTable(t.name)}`,
      args: selectArgs(b, v),
      extensions: { svc: parseAgg },
    };
  }
  return out;
}

/**
 * A tracked function as a root field's source: its `args` argument (when it
 * takes input) and the select source for a field's given arguments.
 */
export function functionSource(b: RoleSchemaBuilder, fn: FunctionModel, v: TableView) {
  const info = fn.info;
  const fname = qualifiedGqlName(fn.name);
  const inArgs = info.args.filter((a) => a.mode === 'i' || a.mode === 'b');
  const sessionIdx = fn.sessionArgument ? inArgs.findIndex((a) => a.name === fn.sessionArgument) : -1;
  const special = new Map<number, FunctionArg>();
  if (sessionIdx >= 0) special.set(sessionIdx, { kind: 'session', type: pgType(inArgs[sessionIdx]!.type, inArgs[sessionIdx]!.typeSchema) });
  const inputs = functionInputArgs(info, new Set(special.keys()));
  const args: GraphQLFieldConfigArgumentMap = {};
  if (inputs.length > 0) {
    args.args = {
      type: new GraphQLNonNull(functionArgsInput(b, `${fname}_args`, inputs)),
      description: `input parameters for function ${quotedTable(fn.name)}`,
    };
  }
  const source = (f: CollectedField, given: Map<string, InVal>): SelectSource => ({
    kind: 'function',
    schema: fn.name.schema,
    name: fn.name.name,
    args: functionCallArgs(info, inputs, given.get('args'), special, `${f.path}.args.args`),
    table: v.table,
  });
  return { args, source };
}

export function functionRootFields(b: RoleSchemaBuilder, fn: FunctionModel): Record<string, RootFieldConfig> {
  const v = b.remoteView({ remoteTable: fn.returnTable });
  if (!v) return {};
  const info = fn.info;
  const fname = qualifiedGqlName(fn.name);
  if (!isGraphQLName(fname)) return {};
  const call = functionSource(b, fn, v);
  const source = call.source;
  const args: GraphQLFieldConfigArgumentMap = { ...selectArgs(b, v), ...call.args };
  const obj = tableObject(b, v);
  const out: Record<string, RootFieldConfig> = {};
  const parse: SelectionParser<RootField> = (ctx, f, def) => {
    const given = ctx.args(f, def);
    const src = source(f, given);
    return {
      alias: f.alias,
      kind: 'select',
      select: { ...baseSelect(v, src, parseSelectArgs(b, ctx, v, f, given)), fields: parseTableSelection(ctx, f, obj) },
    };
  };
  out[fname] = {
    type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(obj))),
    description: info.description ?? `execute function ${quotedTable(fn.name)} which returns ${quotedTable(fn.returnTable)}`,
    args: sortedEntries(args),
    extensions: { svc: parse },
  };
  if (v.allowAggregations) {
    const agg = aggregateObject(b, v);
    const parseAgg: SelectionParser<RootField> = (ctx, f, def) => {
      const given = ctx.args(f, def);
      const src = source(f, given);
      return {
        alias: f.alias,
        kind: 'aggregate',
        select: { ...baseSelect(v, src, parseSelectArgs(b, ctx, v, f, given)), fields: parseAggregateSelection(ctx, f, agg) },
      };
    };
    out[`${fname}_aggregate`] = {
      type: new GraphQLNonNull(agg),
      description: info.description ?? `execute function ${quotedTable(fn.name)} and query aggregates on result of table type ${quotedTable(fn.returnTable)}`,
      args: sortedEntries(args),
      extensions: { svc: parseAgg },
    };
  }
  return out;
}
