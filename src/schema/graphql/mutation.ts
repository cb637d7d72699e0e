/**
 * Mutation root fields of a table (Hasura v1.3): `insert_<t>`, `insert_<t>_one`,
 * `update_<t>`, `update_<t>_by_pk`, `delete_<t>`, `delete_<t>_by_pk` (or the
 * table's custom root field names), `<t>_mutation_response`, the update
 * operator inputs `<t>_set_input`, `<t>_inc_input`, `<t>_append_input`,
 * `<t>_prepend_input`, `<t>_delete_key_input`, `<t>_delete_elem_input`,
 * `<t>_delete_at_path_input`, and `<t>_pk_columns_input`. A field exists
 * when the role has the permission and the table (or view) allows the
 * operation; `_one`/`_by_pk` fields and `returning` also need select access.
 */
import {
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLInputFieldConfig,
  type GraphQLInputType,
} from 'graphql';
import type { CollectedField, DocumentContext } from '../../ir/document.js';
import { type InVal } from '../../ir/input.js';
import { validationError } from '../../ir/messages.js';
import type { MutationOutput, MutationResponseField, RootField, UpdateItem, UpdateOp } from '../../ir/types.js';
import type { BoolExp, ColumnModel, TableModel } from '../../model/tables.js';
import { andExp } from '../../ir/types.js';
import { columnType } from '../../permissions/filter.js';
import type { TableView } from '../../permissions/view.js';
import { pgType } from '../../sql/pgtypes.js';
import { listItems, refOf, svcExt, type BoolExpParser, type ColumnGqlType, type RoleSchemaBuilder } from './builder.js';
import { insertInput, insertOf, onConflictInput } from './insert.js';
import { isGraphQLName, quotedTable, sortedEntries } from './names.js';
import { parseSelectionSet, parseTableSelection, tableObject, type SelectionParser } from './select.js';
import type { RootFieldConfig } from '../extensions.js';

// ---- output --------------------------------------------------------------------------

/** `<t>_mutation_response { affected_rows returning }` (`returning` only with select access). */
function mutationResponse(b: RoleSchemaBuilder, t: TableModel): GraphQLObjectType {
  const name = `${b.tableName(t)}_mutation_response`;
  return b.register(name, () => {
    const v = b.views.view(t);
    const fields: Record<string, GraphQLFieldConfig<unknown, unknown>> = {
      affected_rows: {
        type: new GraphQLNonNull(GraphQLInt),
        description: 'number of affected rows by the mutation',
        extensions: { svc: ((_ctx, f) => ({ alias: f.alias, kind: 'affected_rows' })) as SelectionParser<MutationResponseField> },
      },
    };
    if (v) {
      const obj = tableObject(b, v);
      const parse: SelectionParser<MutationResponseField> = (ctx, f) => ({ alias: f.alias, kind: 'returning', fields: parseTableSelection(ctx, f, obj) });
      fields.returning = {
        type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(obj))),
        description: 'data of the affected rows by the mutation',
        extensions: { svc: parse },
      };
    }
    return new GraphQLObjectType({ name, description: `response of any mutation on the table ${quotedTable(t.name)}`, fields });
  });
}

function multiOutput(ctx: DocumentContext, f: CollectedField, type: GraphQLObjectType): MutationOutput {
  return { kind: 'multi', fields: parseSelectionSet<MutationResponseField>(ctx, f, type, (alias) => ({ alias, kind: 'typename', name: type.name })) };
}

function singleOutput(ctx: DocumentContext, f: CollectedField, type: GraphQLObjectType): MutationOutput {
  return { kind: 'single', fields: parseTableSelection(ctx, f, type) };
}

/** Database errors of a root field are reported at `$.selectionSet.<field>.args.<arg>` (inserts) or `$`. */
const argPath = (f: CollectedField, arg: string) => `$.selectionSet.${f.name}.args.${arg}`;

// ---- update operators -----------------------------------------------------------------

const NUMERIC = new Set(['int2', 'int4', 'int8', 'float4', 'float8', 'numeric', 'money']);

interface OperatorSpec {
  op: UpdateOp;
  arg: string;
  /** which columns take the operator */
  applies: (c: { column: ColumnModel; gql: ColumnGqlType }) => boolean;
  /** the input type of a column's value, and the type the value is cast to */
  input: (c: { column: ColumnModel; gql: ColumnGqlType }) => GraphQLInputType;
  valueType: (c: ColumnModel) => { type: ReturnType<typeof columnType>; array?: boolean };
  argDesc: string;
  typeDesc: (t: TableModel) => string;
}

const isJsonb = (c: { column: ColumnModel; gql: ColumnGqlType }) => !c.gql.enumRef && c.column.type === 'jsonb';

function operatorSpecs(): OperatorSpec[] {
  const same = (c: ColumnModel) => ({ type: columnType(c) });
  const json = (desc: string) => ({ argDesc: desc, typeDesc: () => desc });
  return [
    {
      op: 'set',
      arg: '_set',
      applies: () => true,
      input: (c) => c.gql.type,
      valueType: same,
      argDesc: 'sets the columns of the filtered rows to the given values',
      typeDesc: (t) => `input type for updating data in table ${quotedTable(t.name)}`,
    },
    {
      op: 'inc',
      arg: '_inc',
      applies: (c) => !c.gql.enumRef && NUMERIC.has(c.column.type),
      input: (c) => c.gql.type,
      valueType: same,
      argDesc: 'increments the integer columns with given value of the filtered values',
      typeDesc: (t) => `input type for incrementing integer column in table ${quotedTable(t.name)}`,
    },
    {
      op: 'prepend',
      arg: '_prepend',
      applies: isJsonb,
      input: (c) => c.gql.type,
      valueType: same,
      ...json('prepend existing jsonb value of filtered columns with new jsonb value'),
    },
    {
      op: 'append',
      arg: '_append',
      applies: isJsonb,
      input: (c) => c.gql.type,
      valueType: same,
      ...json('append existing jsonb value of filtered columns with new jsonb value'),
    },
    {
      op: 'delete_key',
      arg: '_delete_key',
      applies: isJsonb,
      input: () => GraphQLString,
      valueType: () => ({ type: pgType('text') }),
      ...json('delete key/value pair or string element. key/value pairs are matched based on their key value'),
    },
    {
      op: 'delete_elem',
      arg: '_delete_elem',
      applies: isJsonb,
      input: () => GraphQLInt,
      valueType: () => ({ type: pgType('int4') }),
      ...json('delete the array element with specified index (negative integers count from the end). throws an error if top level container is not an array'),
    },
    {
      op: 'delete_at_path',
      arg: '_delete_at_path',
      applies: isJsonb,
      input: () => new GraphQLList(new GraphQLNonNull(GraphQLString)),
      valueType: () => ({ type: pgType('text'), array: true }),
      ...json('delete the field or element with specified path (for JSON arrays, negative integers count from the end)'),
    },
  ];
}

const OPERATORS = operatorSpecs();

interface UpdateOperators {
  args: GraphQLFieldConfigArgumentMap;
  parse: (ctx: DocumentContext, given: Map<string, InVal>) => UpdateItem[];
}

/** The operator arguments of `update_<t>` for the role, or undefined when it may update no column. */
function updateOperators(b: RoleSchemaBuilder, t: TableModel): UpdateOperators | undefined {
  const acc = b.access.update(t);
  if (!acc) return undefined;
  const cols = b.gqlColumns(t, acc.columns);
  const tname = b.tableName(t);
  const args: GraphQLFieldConfigArgumentMap = {};
  const present: Array<{ spec: OperatorSpec; cols: typeof cols }> = [];
  for (const spec of OPERATORS) {
    const applicable = cols.filter(spec.applies);
    if (applicable.length === 0) continue;
    present.push({ spec, cols: applicable });
    const typeName = `${tname}${spec.arg}_input`;
    const type = b.register(typeName, () => {
      const fields: Record<string, GraphQLInputFieldConfig> = {};
      for (const c of applicable) fields[c.column.gqlName] = { type: spec.input(c), description: c.column.description ?? undefined };
      return new GraphQLInputObjectType({ name: typeName, description: spec.typeDesc(t), fields: sortedEntries(fields) });
    });
    args[spec.arg] = { type, description: spec.argDesc };
  }
  if (present.length === 0) return undefined;
  const parse = (ctx: DocumentContext, given: Map<string, InVal>): UpdateItem[] => {
    const items: UpdateItem[] = [];
    let anyOperator = false;
    for (const { spec, cols: applicable } of present) {
      const v = given.get(spec.arg);
      if (!v || v.kind === 'null') continue;
      anyOperator = true;
      if (v.kind !== 'object') continue;
      const fields = new Map(v.fields);
      // in column order, as Hasura reports them
      for (const c of applicable) {
        const x = fields.get(c.column.gqlName);
        if (x === undefined) continue;
        const vt = spec.valueType(c.column);
        items.push({ column: c.column, op: spec.op, value: { ref: refOf(x), type: vt.type, array: vt.array, numberText: 'scientific' } });
      }
    }
    if (!anyOperator && acc.presets.length === 0) {
      throw validationError(`at lease one of ${present.map((p) => p.spec.arg).join(', ')} is expected`, '$');
    }
    const byColumn = new Map<string, UpdateOp[]>();
    for (const i of items) byColumn.set(i.column.name, [...(byColumn.get(i.column.name) ?? []), i.op]);
    const repeated = [...byColumn].filter(([, ops]) => ops.length > 1);
    if (repeated.length > 0) {
      const opName = (op: UpdateOp) => `_${op}`;
      throw validationError(
        `column found in multiple operators; ${repeated.map(([c, ops]) => `${JSON.stringify(c)} in ${ops.map(opName).join(', ')}`).join('. ')}`,
        '$',
      );
    }
    // the presets are set whatever the operators say; with neither, nothing is written
    return [...acc.presets.map((p): UpdateItem => ({ column: p.column, op: 'set', value: p.value })), ...items];
  };
  return { args, parse };
}

// ---- primary keys ------------------------------------------------------------------------

/** Primary key columns, when the role can select all of them. */
function pkColumns(b: RoleSchemaBuilder, v: TableView): Array<{ column: ColumnModel; gql: ColumnGqlType }> | undefined {
  const pk = v.table.primaryKey;
  if (!pk || pk.length === 0) return undefined;
  const visible = new Map(b.columns(v).map((c) => [c.column.name, c]));
  if (!pk.every((c) => visible.has(c))) return undefined;
  return pk.map((c) => visible.get(c)!);
}

function pkWhere(cols: Array<{ column: ColumnModel }>, given: Map<string, InVal>): BoolExp {
  return andExp(
    ...cols.map((c): BoolExp => ({
      kind: 'column',
      target: { kind: 'column', column: c.column },
      ops: [{ op: 'eq', value: { ref: refOf(given.get(c.column.gqlName)!), type: columnType(c.column) } }],
    })),
  );
}

function pkArgs(cols: Array<{ column: ColumnModel; gql: ColumnGqlType }>): GraphQLFieldConfigArgumentMap {
  const args: GraphQLFieldConfigArgumentMap = {};
  for (const c of cols) args[c.column.gqlName] = { type: new GraphQLNonNull(c.gql.type), description: c.column.description ?? undefined };
  return sortedEntries(args);
}

// ---- root fields --------------------------------------------------------------------------

function whereArg(ctx: DocumentContext, f: CollectedField, given: Map<string, InVal>): BoolExp | null {
  const w = given.get('where');
  return w && w.kind === 'object' ? svcExt<BoolExpParser>(w.type)(ctx, w, `${f.path}.args.where`) : null;
}

/** Mutation root fields of one table for the role. */
export function tableMutationFields(b: RoleSchemaBuilder, t: TableModel): Record<string, RootFieldConfig> {
  const out: Record<string, RootFieldConfig> = {};
  const tname = b.tableName(t);
  if (!isGraphQLName(tname)) return out;
  const custom = Object.fromEntries(
    Object.entries(t.customRootFields).filter(([, n]) => typeof n === 'string' && isGraphQLName(n)),
  ) as typeof t.customRootFields;
  const v = b.views.view(t);
  const obj = v ? tableObject(b, v) : undefined;
  const info = t.info;

  // insert
  const input = info.insertable ? insertInput(b, t) : undefined;
  if (input) {
    const response = mutationResponse(b, t);
    const conflict = onConflictInput(b, t);
    const args: GraphQLFieldConfigArgumentMap = {
      objects: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(input))), description: 'the rows to be inserted' },
    };
    if (conflict) args.on_conflict = { type: conflict, description: 'on conflict condition' };
    const parse: SelectionParser<RootField> = (ctx, f, def) => {
      const given = ctx.args(f, def);
      const insert = insertOf(b, t, ctx, {
        objects: listItems(given.get('objects') ?? { kind: 'null' }),
        path: `${f.path}.args.objects`,
        single: false,
        onConflict: given.get('on_conflict'),
        conflictPath: `${f.path}.args.on_conflict`,
        determined: new Set(),
      });
      return {
        alias: f.alias,
        kind: 'mutation',
        mutation: { kind: 'insert', insert },
        output: multiOutput(ctx, f, response),
        errorPath: argPath(f, 'objects'),
      };
    };
    out[custom.insert ?? `insert_${tname}`] = {
      type: response,
      description: `insert data into the table: ${quotedTable(t.name)}`,
      args: sortedEntries(args),
      extensions: { svc: parse },
    };

    if (obj) {
      const oneArgs: GraphQLFieldConfigArgumentMap = { object: { type: new GraphQLNonNull(input), description: 'the row to be inserted' } };
      if (conflict) oneArgs.on_conflict = { type: conflict, description: 'on conflict condition' };
      const parseOne: SelectionParser<RootField> = (ctx, f, def) => {
        const given = ctx.args(f, def);
        const o = given.get('object');
        const insert = insertOf(b, t, ctx, {
          objects: o ? [o] : [],
          path: `${f.path}.args.object`,
          single: true,
          onConflict: given.get('on_conflict'),
          conflictPath: `${f.path}.args.on_conflict`,
          determined: new Set(),
        });
        return { alias: f.alias, kind: 'mutation', mutation: { kind: 'insert', insert }, output: singleOutput(ctx, f, obj), errorPath: argPath(f, 'object') };
      };
      out[custom.insert_one ?? `insert_${tname}_one`] = {
        type: obj,
        description: `insert a single row into the table: ${quotedTable(t.name)}`,
        args: sortedEntries(oneArgs),
        extensions: { svc: parseOne },
      };
    }
  }

  // update
  const ops = info.updatable ? updateOperators(b, t) : undefined;
  const upd = b.access.update(t);
  if (ops && upd) {
    const response = mutationResponse(b, t);
    const where = b.boolExp(b.viewOrEmpty(t));
    const args: GraphQLFieldConfigArgumentMap = {
      ...ops.args,
      where: { type: new GraphQLNonNull(where), description: 'filter the rows which have to be updated' },
    };
    const parse: SelectionParser<RootField> = (ctx, f, def) => {
      const given = ctx.args(f, def);
      const items = ops.parse(ctx, given);
      const update = { table: t, items, where: andExp(whereArg(ctx, f, given), upd.filter), check: upd.check };
      return { alias: f.alias, kind: 'mutation', mutation: { kind: 'update', update }, output: multiOutput(ctx, f, response), errorPath: '$' };
    };
    out[custom.update ?? `update_${tname}`] = {
      type: response,
      description: `update data of the table: ${quotedTable(t.name)}`,
      args: sortedEntries(args),
      extensions: { svc: parse },
    };

    const pk = v ? pkColumns(b, v) : undefined;
    if (pk && obj) {
      const pkName = `${tname}_pk_columns_input`;
      const pkInput = b.register(pkName, () => {
        const fields: Record<string, GraphQLInputFieldConfig> = {};
        for (const c of pk) fields[c.column.gqlName] = { type: new GraphQLNonNull(c.gql.type), description: c.column.description ?? undefined };
        return new GraphQLInputObjectType({ name: pkName, description: `primary key columns input for table: ${tname}`, fields: sortedEntries(fields) });
      });
      const byPkArgs: GraphQLFieldConfigArgumentMap = { ...ops.args, pk_columns: { type: new GraphQLNonNull(pkInput) } };
      const parseByPk: SelectionParser<RootField> = (ctx, f, def) => {
        const given = ctx.args(f, def);
        const items = ops.parse(ctx, given);
        const pkv = given.get('pk_columns');
        const where = pkWhere(pk, new Map(pkv && pkv.kind === 'object' ? pkv.fields : []));
        const update = { table: t, items, where: andExp(where, upd.filter), check: upd.check };
        return { alias: f.alias, kind: 'mutation', mutation: { kind: 'update', update }, output: singleOutput(ctx, f, obj), errorPath: '$' };
      };
      out[custom.update_by_pk ?? `update_${tname}_by_pk`] = {
        type: obj,
        description: `update single row of the table: ${quotedTable(t.name)}`,
        args: sortedEntries(byPkArgs),
        extensions: { svc: parseByPk },
      };
    }
  }

  // delete
  const del = info.deletable ? b.access.delete(t) : null;
  if (del) {
    const response = mutationResponse(b, t);
    const where = b.boolExp(b.viewOrEmpty(t));
    const parse: SelectionParser<RootField> = (ctx, f, def) => {
      const given = ctx.args(f, def);
      const d = { table: t, where: andExp(whereArg(ctx, f, given), del.filter) };
      return { alias: f.alias, kind: 'mutation', mutation: { kind: 'delete', delete: d }, output: multiOutput(ctx, f, response), errorPath: '$' };
    };
    out[custom.delete ?? `delete_${tname}`] = {
      type: response,
      description: `delete data from the table: ${quotedTable(t.name)}`,
      args: { where: { type: new GraphQLNonNull(where), description: 'filter the rows which have to be deleted' } },
      extensions: { svc: parse },
    };
    const pk = v ? pkColumns(b, v) : undefined;
    if (pk && obj) {
      const parseByPk: SelectionParser<RootField> = (ctx, f, def) => {
        const given = ctx.args(f, def);
        const d = { table: t, where: andExp(pkWhere(pk, given), del.filter) };
        return { alias: f.alias, kind: 'mutation', mutation: { kind: 'delete', delete: d }, output: singleOutput(ctx, f, obj), errorPath: '$' };
      };
      out[custom.delete_by_pk ?? `delete_${tname}_by_pk`] = {
        type: obj,
        description: `delete single row from the table: ${quotedTable(t.name)}`,
        args: pkArgs(pk),
        extensions: { svc: parseByPk },
      };
    }
  }
  return out;
}
