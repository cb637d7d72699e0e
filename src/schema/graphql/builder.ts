/**
 * The per-role type registry and the input types of reads: scalars, enum
 * tables, `<T>_comparison_exp`, `<table>_bool_exp`, `<table>_order_by`,
 * `<table>_select_column`. Every type that needs interpreting carries its
 * parser in `extensions.svc`, so the IR is built from the schema itself.
 */
import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLFloat,
  GraphQLID,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLScalarType,
  GraphQLString,
  type GraphQLFieldConfig,
  type GraphQLInputFieldConfig,
  type GraphQLInputType,
  type GraphQLInterfaceType,
  type GraphQLNamedType,
  type GraphQLOutputType,
} from 'graphql';
import type { DocumentContext } from '../../ir/document.js';
import { type InVal } from '../../ir/input.js';
import { fieldNotFound, unexpectedEnumValue } from '../../ir/messages.js';
import { COMPARE_OPERATORS, graphqlOperators, type GraphQLArg, type OperatorFamily } from '../../ir/operators.js';
import type { CompareOp, PgType, TypedValue, ValueRef } from '../../model/values.js';
import type { AggregateOp, OrderByItem, OrderByTarget } from '../../ir/types.js';
import type { BoolExp, ColumnOp, ColumnModel, TableModel } from '../../model/tables.js';
import { columnType } from '../../permissions/filter.js';
import { RoleMutationAccess } from '../../permissions/mutation.js';
import type { RoleViews, TableView } from '../../permissions/view.js';
import { pgType } from '../../sql/pgtypes.js';
import type { SchemaCache } from '../model.js';
import {
  COMPARABLE_AGG_OPS,
  NUMERIC_AGG_OPS,
  ORDER_BY_VALUES,
  gqlScalarName,
  isComparableType,
  isGraphQLName,
  isNumericType,
  isStringType,
  qualifiedGqlName,
  quotedTable,
  sortedEntries,
} from './names.js';

export type BoolExpParser = (ctx: DocumentContext, v: InVal, path: string) => BoolExp;
export type CompareParser = (ctx: DocumentContext, v: InVal, type: PgType, path: string) => ColumnOp[];
export type OrderByParser = (ctx: DocumentContext, v: InVal, path: string) => OrderByItem[];

export function svcExt<T>(x: { extensions?: unknown } | undefined): T {
  return (x?.extensions as { svc?: T } | undefined)?.svc as T;
}

const BUILTIN: Record<string, GraphQLScalarType> = { Int: GraphQLInt, Float: GraphQLFloat, String: GraphQLString, Boolean: GraphQLBoolean, ID: GraphQLID };

/**
 * What a schema variant adds to every table object type: the Relay schema's
 * `Node` interface, global `id` and array-relationship connections
 * (schema/graphql/relay.ts).
 */
export interface TableObjectExtension {
  interfaces(v: TableView): GraphQLInterfaceType[];
  /** adds (or removes) fields of the table's object type */
  extendFields(v: TableView, fields: Record<string, GraphQLFieldConfig<unknown, unknown>>): void;
}

/** The GraphQL type of a column: a scalar, or the enum of the enum table it references. */
export interface ColumnGqlType {
  type: GraphQLScalarType | GraphQLEnumType;
  /** comparison expression type name prefix */
  name: string;
  enumRef: boolean;
}

export class RoleSchemaBuilder {
  readonly types = new Map<string, GraphQLNamedType>();
  /** set while building the Relay schema */
  extension: TableObjectExtension | null = null;

  constructor(
    readonly cache: SchemaCache,
    readonly views: RoleViews,
    /** what the role may write (backend-only insert permissions included when asked for) */
    readonly access: RoleMutationAccess = new RoleMutationAccess(cache, views.role),
  ) {}

  get role(): string {
    return this.views.role;
  }

  /** The role's select view of a table, or (no select permission) a view with no columns, for `where` arguments of mutations. */
  viewOrEmpty(t: TableModel): TableView {
    return (
      this.views.view(t) ?? {
        table: t,
        role: this.role,
        columns: [],
        objectRelationships: [],
        arrayRelationships: [],
        computedFields: [],
        allowAggregations: false,
        filter: null,
        limit: null,
      }
    );
  }

  /** Columns among `cols` whose names and types can be expressed in GraphQL. */
  gqlColumns(t: TableModel, cols: ColumnModel[]): Array<{ column: ColumnModel; gql: ColumnGqlType }> {
    const out: Array<{ column: ColumnModel; gql: ColumnGqlType }> = [];
    for (const c of cols) {
      if (!isGraphQLName(c.gqlName)) continue;
      const gql = this.columnGqlType(t, c);
      if (gql) out.push({ column: c, gql });
    }
    return out;
  }

  register<T extends GraphQLNamedType>(name: string, make: () => T): T {
    const t = this.types.get(name);
    if (t) return t as T;
    const made = make();
    this.types.set(name, made);
    return made;
  }

  tableName(t: TableModel): string {
    return qualifiedGqlName(t.name);
  }

  /** The role's view of a relationship's target, when the target can appear in GraphQL. */
  remoteView(rel: { remoteTable: { schema: string; name: string } }): TableView | null {
    const v = this.views.viewOf(`${rel.remoteTable.schema}.${rel.remoteTable.name}`);
    return v && isGraphQLName(this.tableName(v.table)) ? v : null;
  }

  scalar(name: string): GraphQLScalarType {
    if (BUILTIN[name]) {
      this.types.set(name, BUILTIN[name]!);
      return BUILTIN[name]!;
    }
    return this.register(name, () => new GraphQLScalarType({ name }));
  }

  /** The scalar of a PostgreSQL type, or undefined when its name is not a GraphQL name. */
  pgScalar(typname: string): GraphQLScalarType | undefined {
    const n = gqlScalarName(typname);
    return isGraphQLName(n) ? this.scalar(n) : undefined;
  }

  /** Enum table referenced by a single-column foreign key of `column`. */
  enumTableOf(table: TableModel, column: ColumnModel): TableModel | undefined {
    for (const fk of table.info.foreignKeys) {
      if (fk.columns.length !== 1 || fk.columns[0] !== column.name) continue;
      const ref = this.cache.tables.get(`${fk.refTable.schema}.${fk.refTable.name}`);
      if (ref?.isEnum) return ref;
    }
    return undefined;
  }

  columnGqlType(table: TableModel, column: ColumnModel): ColumnGqlType | undefined {
    const et = this.enumTableOf(table, column);
    if (et) {
      const e = this.enumType(et);
      return { type: e, name: e.name, enumRef: true };
    }
    const s = this.pgScalar(column.type);
    return s ? { type: s, name: s.name, enumRef: false } : undefined;
  }

  enumType(t: TableModel): GraphQLEnumType {
    const name = `${this.tableName(t)}_enum`;
    return this.register(name, () => {
      const values: Record<string, { description?: string }> = {};
      for (const v of [...(t.enumValues ?? [])].sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))) {
        if (isGraphQLName(v.value)) values[v.value] = { description: v.comment ?? undefined };
      }
      return new GraphQLEnumType({ name, description: t.info.description ?? undefined, values });
    });
  }

  /** Visible columns whose names and types can be expressed in GraphQL. */
  columns(v: TableView): Array<{ column: ColumnModel; gql: ColumnGqlType }> {
    return this.gqlColumns(v.table, v.columns);
  }

  columnOutputType(c: { column: ColumnModel; gql: ColumnGqlType }): GraphQLOutputType {
    return c.column.nullable ? c.gql.type : new GraphQLNonNull(c.gql.type);
  }

  // ---- order_by -------------------------------------------------------------

  orderByEnum(): GraphQLEnumType {
    return this.register('order_by', () => {
      const values: Record<string, { description: string; value: string }> = {};
      for (const [name, desc] of ORDER_BY_VALUES) values[name] = { description: desc, value: name };
      return new GraphQLEnumType({ name: 'order_by', description: 'column ordering options', values: sortedEntries(values) });
    });
  }

  // ---- comparison expressions -------------------------------------------------

  comparisonExp(c: ColumnGqlType, pg: PgType): GraphQLInputObjectType {
    const name = `${c.name}_comparison_exp`;
    return this.register(name, () => {
      const self = c.type;
      const fields: Record<string, GraphQLInputFieldConfig> = {};
      const plain = (n: string, type: GraphQLInputType, description?: string) => {
        fields[n] = { type, description };
      };
      const t = pg.name;
      const families = new Set<OperatorFamily>(['any']);
      if (!c.enumRef) {
        if (t !== 'raster') families.add('ordered');
        if (isStringType(t)) families.add('string');
        if (t === 'jsonb' || t === 'geometry' || t === 'geography' || t === 'raster') families.add(t);
      }
      const list = (x: GraphQLInputType) => new GraphQLList(new GraphQLNonNull(x));
      const argType = (a: GraphQLArg): GraphQLInputType => {
        switch (a) {
          case 'column':
            return self;
          case 'column_list':
            return list(self);
          case 'string':
            return GraphQLString;
          case 'string_list':
            return list(GraphQLString);
          case 'boolean':
            return GraphQLBoolean;
          case 'jsonb':
            return this.scalar('jsonb');
          case 'st_d_within_geometry':
            return this.stDWithinInput(false);
          case 'st_d_within_geography':
            return this.stDWithinInput(true);
          case 'nband_geom':
            return this.nbandInput('st_intersects_nband_geom_input', true);
          case 'geom_nband':
            return this.nbandInput('st_intersects_geom_nband_input', false);
          case 'cast_geometry':
            return this.castExp('geometry', 'geography', pg);
          case 'cast_geography':
            return this.castExp('geography', 'geometry', pg);
        }
      };
      for (const o of graphqlOperators(families)) plain(o.field, argType(o.arg), o.description);
      const parser: CompareParser = (ctx, v, type, path) => this.parseComparison(ctx, v, type, path);
      return new GraphQLInputObjectType({
        name,
        description: `expression to compare columns of type ${c.name}. All fields are combined with logical 'AND'.`,
        fields: sortedEntries(fields),
        extensions: { svc: parser },
      });
    });
  }

  private stDWithinInput(geography: boolean): GraphQLInputObjectType {
    const name = geography ? 'st_d_within_geography_input' : 'st_d_within_input';
    return this.register(name, () => {
      const fields: Record<string, GraphQLInputFieldConfig> = {
        distance: { type: new GraphQLNonNull(GraphQLFloat) },
        from: { type: new GraphQLNonNull(this.scalar(geography ? 'geography' : 'geometry')) },
      };
      if (geography) fields.use_spheroid = { type: GraphQLBoolean, defaultValue: true };
      return new GraphQLInputObjectType({ name, fields: sortedEntries(fields) });
    });
  }

  private nbandInput(name: string, nbandRequired: boolean): GraphQLInputObjectType {
    return this.register(
      name,
      () =>
        new GraphQLInputObjectType({
          name,
          fields: {
            geommin: { type: new GraphQLNonNull(this.scalar('geometry')) },
            nband: { type: nbandRequired ? new GraphQLNonNull(GraphQLInt) : GraphQLInt },
          },
        }),
    );
  }

  private castExp(from: string, to: string, pg: PgType): GraphQLInputObjectType {
    const name = `${from}_cast_exp`;
    return this.register(name, () => {
      const target = { type: this.scalar(to), name: to, enumRef: false };
      return new GraphQLInputObjectType({
        name,
        description: `Expression to compare the result of casting a column of type ${from}. Typically only used in filters.`,
        fields: () => ({ [to]: { type: this.comparisonExp(target, pgType(to, pg.schema)) } }),
      });
    });
  }

  /** A leaf input value as a typed IR value. */
  typed(v: InVal, type: PgType): TypedValue {
    return { ref: refOf(v), type };
  }

  parseComparison(ctx: DocumentContext, v: InVal, type: PgType, path: string): ColumnOp[] {
    if (v.kind !== 'object') return [];
    const ops: ColumnOp[] = [];
    const text = pgType('text');
    for (const [k, x] of v.fields) {
      const p = `${path}.${k}`;
      const op = k.slice(1);
      switch (op) {
        case 'in':
        case 'nin':
          if (x.kind === 'null') break;
          if (x.kind === 'list' && x.variable) ops.push({ op, values: { ref: { kind: 'variable', name: x.variable, path: [] }, type, array: true } });
          else ops.push({ op, values: listItems(x).map((i) => this.typed(i, type)) });
          break;
        case 'has_keys_any':
        case 'has_keys_all':
          if (x.kind === 'null') break;
          if (x.kind === 'list' && x.variable) ops.push({ op, values: { ref: { kind: 'variable', name: x.variable, path: [] }, type: text, array: true } });
          else ops.push({ op, values: listItems(x).map((i) => this.typed(i, text)) });
          break;
        case 'is_null': {
          const b = ctx.valueOf(x);
          if (b !== null) ops.push({ op: 'is_null', value: b === true });
          break;
        }
        case 'st_d_within': {
          if (x.kind !== 'object') break;
          const f = new Map(x.fields);
          const geog = type.name === 'geography';
          ops.push({
            op: 'st_d_within',
            distance: this.typed(f.get('distance')!, pgType('float8')),
            from: this.typed(f.get('from')!, type),
            useSpheroid: geog && f.has('use_spheroid') ? this.typed(f.get('use_spheroid')!, pgType('bool')) : undefined,
          });
          break;
        }
        case 'st_intersects_nband_geom':
        case 'st_intersects_geom_nband': {
          if (x.kind !== 'object') break;
          const f = new Map(x.fields);
          const geommin = this.typed(f.get('geommin')!, pgType('geometry', type.schema));
          const nb = f.get('nband');
          const nband = nb && nb.kind !== 'null' ? this.typed(nb, pgType('int4')) : undefined;
          if (op === 'st_intersects_nband_geom') ops.push({ op, nband: nband!, geommin });
          else ops.push({ op, geommin, nband });
          break;
        }
        case 'cast': {
          if (x.kind !== 'object') break;
          for (const [tname, sub] of x.fields) {
            const to = pgType(tname, type.schema);
            ops.push({ op: 'cast', to, ops: this.parseComparison(ctx, sub, to, `${p}.${tname}`) });
          }
          break;
        }
        default: {
          const spec = COMPARE_OPERATORS[op as CompareOp];
          if (!spec) break;
          // a null value (literal, or a variable that is null: plans are keyed by which variables
          // are null) drops the comparison, as upstream v1.3 does ("{_eq: null}" is "{}": the docs'
          // null_value_evaluation); `_in`/`_nin`/`_has_keys_*` above alike
          if (x.kind === 'null') break;
          let t = type;
          if (spec.value === 'text') t = text;
          else if (spec.value === 'jsonb') t = pgType('jsonb');
          ops.push({ op: op as CompareOp, value: this.typed(x, t) });
        }
      }
    }
    return ops;
  }

  // ---- table input types ------------------------------------------------------

  boolExp(v: TableView): GraphQLInputObjectType {
    const tname = this.tableName(v.table);
    const name = `${tname}_bool_exp`;
    return this.register(name, () => {
      const cols = this.columns(v);
      const parser: BoolExpParser = (ctx, val, path) => this.parseBoolExp(ctx, v, val, path);
      const self: GraphQLInputObjectType = new GraphQLInputObjectType({
        name,
        description: `Boolean expression to filter rows from the table ${quotedTable(v.table.name)}. All fields are combined with a logical 'AND'.`,
        fields: () => {
          const f: Record<string, GraphQLInputFieldConfig> = {
            _and: { type: new GraphQLList(self) },
            _not: { type: self },
            _or: { type: new GraphQLList(self) },
          };
          for (const c of cols) f[c.column.gqlName] = { type: this.comparisonExp(c.gql, columnType(c.column)) };
          for (const rel of [...v.objectRelationships, ...v.arrayRelationships]) {
            const rv = this.remoteView(rel);
            if (rv && isGraphQLName(rel.name)) f[rel.name] = { type: this.boolExp(rv) };
          }
          return sortedEntries(f);
        },
        extensions: { svc: parser },
      });
      return self;
    });
  }

  /**
   * The IR of a `<table>_bool_exp` value. The type only offers what the role
   * may read; the names are still checked through the role's views (the gate
   * every request's boolean expression goes through), which also give the
   * select filter ANDed into each relationship.
   */
  parseBoolExp(ctx: DocumentContext, v: TableView, val: InVal, path: string): BoolExp {
    if (val.kind !== 'object') return { kind: 'true' };
    const items: BoolExp[] = [];
    const cols = new Map(this.columns(v).map((c) => [c.column.gqlName, c]));
    for (const [k, x] of val.fields) {
      const p = `${path}.${k}`;
      if (x.kind === 'null') continue;
      if (k === '_and' || k === '_or') {
        const sub = listItems(x)
          .filter((i) => i.kind !== 'null')
          .map((i, n) => this.parseBoolExp(ctx, v, i, `${p}[${n}]`));
        items.push({ kind: k === '_and' ? 'and' : 'or', items: sub });
      } else if (k === '_not') {
        items.push({ kind: 'not', item: this.parseBoolExp(ctx, v, x, p) });
      } else if (cols.has(k)) {
        const c = cols.get(k)!;
        const column = this.views.requireColumn(v, c.column.name, p);
        const parse = svcExt<CompareParser>(x.kind === 'object' ? x.type : undefined);
        items.push({ kind: 'column', target: { kind: 'column', column }, ops: parse(ctx, x, columnType(column), p) });
      } else {
        const rel = this.relationshipField(v, k, p);
        const rv = this.views.requireRelationship(v, rel, p);
        items.push({ kind: 'relationship', rel, target: rv.table, filter: rv.filter, exp: this.parseBoolExp(ctx, rv, x, p) });
      }
    }
    if (items.length === 1) return items[0]!;
    return { kind: 'and', items };
  }

  /** A relationship named by an input field (the input types only offer existing ones). */
  private relationshipField(v: TableView, name: string, path: string) {
    const rel = v.table.relationships.get(name);
    if (!rel) throw fieldNotFound(name, `${this.tableName(v.table)}_bool_exp`, path);
    return rel;
  }

  selectColumnEnum(v: TableView): GraphQLEnumType {
    const tname = this.tableName(v.table);
    const name = `${tname}_select_column`;
    return this.register(name, () => {
      const values: Record<string, { description: string; value: string }> = {};
      for (const c of this.columns(v)) values[c.column.gqlName] = { description: 'column name', value: c.column.name };
      return new GraphQLEnumType({ name, description: `select columns of table ${quotedTable(v.table.name)}`, values: sortedEntries(values) });
    });
  }

  /** Columns the aggregate operators apply to. */
  aggColumns(v: TableView) {
    const cols = this.columns(v).filter((c) => !c.gql.enumRef);
    return {
      numeric: cols.filter((c) => isNumericType(c.column.type)),
      comparable: cols.filter((c) => isComparableType(c.column.type)),
    };
  }

  orderBy(v: TableView): GraphQLInputObjectType {
    const tname = this.tableName(v.table);
    const name = `${tname}_order_by`;
    return this.register(name, () => {
      const parser: OrderByParser = (ctx, val, path) => this.parseOrderBy(ctx, v, val, path);
      return new GraphQLInputObjectType({
        name,
        description: `ordering options when selecting data from ${quotedTable(v.table.name)}`,
        fields: () => {
          const f: Record<string, GraphQLInputFieldConfig> = {};
          for (const c of this.columns(v)) f[c.column.gqlName] = { type: this.orderByEnum() };
          for (const rel of v.objectRelationships) {
            const rv = this.remoteView(rel);
            if (rv && isGraphQLName(rel.name)) f[rel.name] = { type: this.orderBy(rv) };
          }
          for (const rel of v.arrayRelationships) {
            const rv = this.remoteView(rel);
            if (rv && rv.allowAggregations && isGraphQLName(rel.name)) f[`${rel.name}_aggregate`] = { type: this.aggregateOrderBy(rv) };
          }
          return sortedEntries(f);
        },
        extensions: { svc: parser },
      });
    });
  }

  aggregateOrderBy(v: TableView): GraphQLInputObjectType {
    const tname = this.tableName(v.table);
    const name = `${tname}_aggregate_order_by`;
    return this.register(name, () => {
      const { numeric, comparable } = this.aggColumns(v);
      const f: Record<string, GraphQLInputFieldConfig> = { count: { type: this.orderByEnum() } };
      const opType = (op: string, cols: typeof numeric) =>
        this.register(`${tname}_${op}_order_by`, () => {
          const fields: Record<string, GraphQLInputFieldConfig> = {};
          for (const c of cols) fields[c.column.gqlName] = { type: this.orderByEnum() };
          return new GraphQLInputObjectType({
            name: `${tname}_${op}_order_by`,
            description: `order by ${op}() on columns of table ${quotedTable(v.table.name)}`,
            fields: sortedEntries(fields),
          });
        });
      if (numeric.length > 0) for (const op of NUMERIC_AGG_OPS) f[op] = { type: opType(op, numeric) };
      if (comparable.length > 0) for (const op of COMPARABLE_AGG_OPS) f[op] = { type: opType(op, comparable) };
      return new GraphQLInputObjectType({
        name,
        description: `order by aggregate values of table ${quotedTable(v.table.name)}`,
        fields: sortedEntries(f),
      });
    });
  }

  parseOrderBy(ctx: DocumentContext, v: TableView, val: InVal, path: string): OrderByItem[] {
    const out: OrderByItem[] = [];
    const views = this.views;
    const visit = (x: InVal, view: TableView, wrap: (t: OrderByTarget) => OrderByTarget, p: string) => {
      if (x.kind !== 'object') return;
      const cols = new Map(this.columns(view).map((c) => [c.column.gqlName, c.column]));
      for (const [k, y] of x.fields) {
        if (y.kind === 'null') continue;
        const kp = `${p}.${k}`;
        const col = cols.get(k);
        if (col) {
          const [dir, nulls] = orderValue(ctx.valueOf(y) as string);
          out.push({ target: wrap({ kind: 'column', column: views.requireColumn(view, col.name, kp) }), dir, nulls });
          continue;
        }
        const rel = view.table.relationships.get(k);
        if (rel && rel.kind === 'object') {
          const rv = views.requireRelationship(view, rel, kp);
          visit(y, rv, (t) => wrap({ kind: 'object', rel, target: rv.table, filter: rv.filter, next: t }), kp);
          continue;
        }
        const arel = this.relationshipField(view, k.replace(/_aggregate$/, ''), kp);
        const rv = views.requireAggregations(views.requireRelationship(view, arel, kp), kp);
        if (y.kind !== 'object') continue;
        const rcols = new Map(this.columns(rv).map((c) => [c.column.gqlName, c.column]));
        for (const [op, z] of y.fields) {
          if (z.kind === 'null') continue;
          if (op === 'count') {
            const [dir, nulls] = orderValue(ctx.valueOf(z) as string);
            out.push({ target: wrap({ kind: 'aggregate', rel: arel, target: rv.table, filter: rv.filter, agg: { kind: 'count' } }), dir, nulls });
          } else if (z.kind === 'object') {
            for (const [cn, w] of z.fields) {
              if (w.kind === 'null') continue;
              const [dir, nulls] = orderValue(ctx.valueOf(w) as string);
              const column = views.requireColumn(rv, rcols.get(cn)!.name, `${kp}.${op}.${cn}`);
              const agg = { kind: 'op' as const, op: op as AggregateOp, column };
              out.push({ target: wrap({ kind: 'aggregate', rel: arel, target: rv.table, filter: rv.filter, agg }), dir, nulls });
            }
          }
        }
      }
    };
    for (const [i, item] of listItems(val).entries()) visit(item, v, (t) => t, val.kind === 'list' ? `${path}[${i}]` : path);
    return out;
  }
}

export function orderValue(name: string): ['asc' | 'desc', 'first' | 'last'] {
  const e = ORDER_BY_VALUES.find(([n]) => n === name);
  if (!e) throw unexpectedEnumValue(name, 'order_by', '$');
  return [e[2], e[3]];
}

export function listItems(v: InVal): InVal[] {
  if (v.kind === 'list') return v.items;
  if (v.kind === 'null') return [];
  return [v];
}

export function refOf(v: InVal): ValueRef {
  if (v.kind === 'scalar' && v.variable) return { kind: 'variable', name: v.variable, path: v.path ?? [] };
  if (v.kind === 'enum' && v.variable) return { kind: 'variable', name: v.variable, path: [] };
  if (v.kind === 'null') return { kind: 'literal', value: null };
  if (v.kind === 'scalar' || v.kind === 'enum') return { kind: 'literal', value: v.value };
  return { kind: 'literal', value: inValToJson(v) };
}

export function inValToJson(v: InVal): unknown {
  switch (v.kind) {
    case 'null':
      return null;
    case 'scalar':
    case 'enum':
      return v.value;
    case 'list':
      return v.items.map(inValToJson);
    case 'object':
      return Object.fromEntries(v.fields.map(([k, x]) => [k, inValToJson(x)]));
  }
}
