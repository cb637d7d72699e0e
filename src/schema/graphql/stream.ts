/**
 * Streaming subscriptions (Hasura v2's `<table>_stream`, subscription_root only): the rows after a
 * cursor, in cursor order, `batch_size` at a time.
 *
 *   <table>_stream(batch_size: Int!, cursor: [<table>_stream_cursor_input]!, where: <table>_bool_exp): [<table>!]!
 *   input <table>_stream_cursor_input { initial_value: <table>_stream_cursor_value_input!, ordering: cursor_ordering }
 *   input <table>_stream_cursor_value_input { <column>: <type> … }   (the role's visible columns)
 *   enum cursor_ordering { ASC DESC }
 *
 * The parser gives a `select` root field (the first batch: what a single execution answers) with
 * the stream's spec beside it (ir/types.ts `StreamSpec`), from which subscriptions/streamPlan.ts compiles the
 * multiplexed statement that subscriptions/streamManager.ts runs with each subscriber's cursor.
 */
import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLInputFieldConfig,
} from 'graphql';
import type { InVal } from '../../ir/input.js';
import { validationError } from '../../ir/messages.js';
import { andExp, type OrderDir, type RootField, type Select, type StreamSpec } from '../../ir/types.js';
import type { BoolExp } from '../../model/tables.js';
import type { TypedValue } from '../../model/values.js';
import { columnType } from '../../permissions/filter.js';
import type { TableView } from '../../permissions/view.js';
import { listItems, refOf, svcExt, type BoolExpParser, type RoleSchemaBuilder } from './builder.js';
import { quotedTable, sortedEntries } from './names.js';
import { parseTableSelection, tableObject, type SelectionParser } from './select.js';
import type { RootFieldConfig } from '../extensions.js';

export function cursorOrderingEnum(b: RoleSchemaBuilder): GraphQLEnumType {
  return b.register(
    'cursor_ordering',
    () =>
      new GraphQLEnumType({
        name: 'cursor_ordering',
        description: 'ordering argument of a cursor',
        values: {
          ASC: { description: 'ascending ordering of the cursor', value: 'ASC' },
          DESC: { description: 'descending ordering of the cursor', value: 'DESC' },
        },
      }),
  );
}

function cursorValueInput(b: RoleSchemaBuilder, v: TableView): GraphQLInputObjectType {
  const name = `${b.tableName(v.table)}_stream_cursor_value_input`;
  return b.register(name, () => {
    const fields: Record<string, GraphQLInputFieldConfig> = {};
    for (const c of b.columns(v)) fields[c.column.gqlName] = { type: c.gql.type, description: c.column.description ?? undefined };
    return new GraphQLInputObjectType({
      name,
      description: 'Initial value of the column from where the streaming should start',
      fields: () => sortedEntries(fields),
    });
  });
}

function cursorInput(b: RoleSchemaBuilder, v: TableView): GraphQLInputObjectType {
  const tname = b.tableName(v.table);
  const name = `${tname}_stream_cursor_input`;
  return b.register(
    name,
    () =>
      new GraphQLInputObjectType({
        name,
        description: `Streaming cursor of the table "${tname}"`,
        fields: () => ({
          initial_value: { type: new GraphQLNonNull(cursorValueInput(b, v)), description: 'Stream column input with initial value' },
          ordering: { type: cursorOrderingEnum(b), description: 'cursor ordering' },
        }),
      }),
  );
}

/** The `<table>_stream` root field of a table the role may select from. */
export function tableStreamRootFields(b: RoleSchemaBuilder, v: TableView): Record<string, RootFieldConfig> {
  const t = v.table;
  if (b.columns(v).length === 0) return {};
  const tname = b.tableName(t);
  const obj = tableObject(b, v);
  const args: GraphQLFieldConfigArgumentMap = {
    batch_size: { type: new GraphQLNonNull(GraphQLInt), description: 'maximum number of rows returned in a single batch' },
    cursor: { type: new GraphQLNonNull(new GraphQLList(cursorInput(b, v))), description: 'cursor to stream the results returned by the query' },
    where: { type: b.boolExp(v), description: 'filter the rows returned' },
  };
  const parse: SelectionParser<RootField> = (ctx, f, def) => {
    const given = ctx.args(f, def);
    const apath = `${f.path}.args`;
    const batch = ctx.valueOf(given.get('batch_size'));
    if (typeof batch !== 'number' || !Number.isInteger(batch)) throw validationError('expecting Integer value for "batch_size"', `${apath}.batch_size`);
    if (batch < 1) throw validationError('"batch_size" must be a positive integer', `${apath}.batch_size`);
    const cursors = listItems(given.get('cursor')!).filter((x) => x.kind !== 'null');
    if (cursors.length !== 1) throw validationError('one streaming column field is expected', `${apath}.cursor`);
    const cur = cursors[0]!;
    if (cur.kind !== 'object') throw validationError('expecting an object for "cursor"', `${apath}.cursor`);
    const initialIn = cur.fields.find(([k]) => k === 'initial_value')?.[1];
    const values = initialIn && initialIn.kind === 'object' ? initialIn.fields.filter(([, x]) => x.kind !== 'null') : [];
    if (values.length !== 1) throw validationError('one streaming column field is expected', `${apath}.cursor.initial_value`);
    const [colName, valIn] = values[0] as [string, InVal];
    const visible = b.columns(v).find((c) => c.column.gqlName === colName);
    if (!visible)
      throw validationError(`field "${colName}" not found in type: '${tname}_stream_cursor_value_input'`, `${apath}.cursor.initial_value.${colName}`);
    const column = b.views.requireColumn(v, visible.column.name, `${apath}.cursor.initial_value.${colName}`);
    const orderingIn = cur.fields.find(([k]) => k === 'ordering')?.[1];
    const ordering = orderingIn && orderingIn.kind !== 'null' ? ctx.valueOf(orderingIn) : 'ASC';
    const dir: OrderDir = ordering === 'DESC' ? 'desc' : 'asc';
    const whereIn = given.get('where');
    const where: BoolExp | null = whereIn && whereIn.kind === 'object' ? svcExt<BoolExpParser>(whereIn.type)(ctx, whereIn, `${apath}.where`) : null;
    const initial: TypedValue = { ref: refOf(valIn), type: columnType(column) };
    const select: Select = {
      source: { kind: 'table', table: t },
      filter: v.filter,
      permLimit: v.limit,
      args: { where, orderBy: [], distinctOn: null, limit: null, offset: null },
      fields: parseTableSelection(ctx, f, obj),
    };
    const stream: StreamSpec = { select, column, dir, batchSize: batch, initial };
    // one execution (HTTP, explain): the first batch after the initial value
    const after: BoolExp = { kind: 'column', target: { kind: 'column', column }, ops: [{ op: dir === 'asc' ? 'gt' : 'lt', value: initial }] };
    const first: Select = {
      ...select,
      args: {
        where: andExp(where, after),
        orderBy: [{ target: { kind: 'column', column }, dir, nulls: dir === 'asc' ? 'last' : 'first' }],
        distinctOn: null,
        limit: batch,
        offset: null,
      },
    };
    return { alias: f.alias, kind: 'select', select: first, stream };
  };
  return {
    [`${tname}_stream`]: {
      type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(obj))),
      description: `fetch data from the table in a streaming manner: ${quotedTable(t.name)}`,
      args: sortedEntries(args),
      extensions: { svc: parse },
    },
  };
}
