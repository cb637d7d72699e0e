/**
 * The typed IR of reads: what to select from where, with the role's
 * permission already folded in. Built by the role's schema parsers (GraphQL)
 * or by the /v1/query DML parsers; compiled to SQL by `sql/select.ts`.
 * Values are references (literal, GraphQL variable, session variable), never
 * inlined text.
 */
import type { BoolExp, ColumnModel, ComputedFieldModel, RelationshipModel, TableModel } from '../model/tables.js';
import type { PgType, TypedValue, ValueRef } from '../model/values.js';
import type { CompiledSql } from '../sql/ast.js';
import type { ActionModel } from '../model/actions.js';
import type { CollectedField } from './document.js';
import type { RemoteRelationshipModel } from '../model/remote.js';

/** A remote relationship field as selected: the relationship and the client's field (arguments, selection). */
export interface RemoteJoinField {
  rel: RemoteRelationshipModel;
  field: CollectedField;
}

export const TRUE: BoolExp = { kind: 'true' };

export function andExp(...items: Array<BoolExp | null | undefined>): BoolExp {
  const xs = items.filter((x): x is BoolExp => !!x && x.kind !== 'true');
  if (xs.length === 0) return TRUE;
  if (xs.length === 1) return xs[0]!;
  return { kind: 'and', items: xs };
}

export type OrderDir = 'asc' | 'desc';
export type NullsOrder = 'first' | 'last';

export type AggregateOp = 'sum' | 'avg' | 'stddev' | 'stddev_samp' | 'stddev_pop' | 'variance' | 'var_samp' | 'var_pop' | 'max' | 'min';

export type OrderByTarget =
  | { kind: 'column'; column: ColumnModel }
  | { kind: 'object'; rel: RelationshipModel; target: TableModel; filter: BoolExp | null; next: OrderByTarget }
  | {
      kind: 'aggregate';
      rel: RelationshipModel;
      target: TableModel;
      filter: BoolExp | null;
      agg: { kind: 'count' } | { kind: 'op'; op: AggregateOp; column: ColumnModel };
    };

export interface OrderByItem {
  target: OrderByTarget;
  dir: OrderDir;
  nulls: NullsOrder;
}

/** Limit/offset: a number known at compile time. */
export interface SelectArgs {
  where: BoolExp | null;
  orderBy: OrderByItem[];
  distinctOn: ColumnModel[] | null;
  limit: number | null;
  offset: number | null;
}

export const NO_ARGS: SelectArgs = { where: null, orderBy: [], distinctOn: null, limit: null, offset: null };

/** An argument of a function call. */
export type FunctionArg =
  | { kind: 'value'; value: TypedValue }
  /** the row of the enclosing table (computed fields) */
  | { kind: 'row' }
  /** the session JSON */
  | { kind: 'session'; type: PgType }
  /** omitted: the function's default applies (only trailing arguments) */
  | { kind: 'default' };

export type SelectSource =
  | { kind: 'table'; table: TableModel }
  | { kind: 'function'; schema: string; name: string; args: FunctionArg[]; table: TableModel }
  /** the rows a mutation wrote (its `returning`), as values of the table's row type */
  | { kind: 'mutated'; table: TableModel };

/** How a nested select is tied to its parent row. */
export type Correlation =
  | { kind: 'relationship'; rel: RelationshipModel }
  /** the source is a function of the parent row (computed field) */
  | { kind: 'row' };

export interface SelectBase {
  source: SelectSource;
  /** the role's select filter on the source table (null: unrestricted) */
  filter: BoolExp | null;
  /** the role's row limit */
  permLimit: number | null;
  args: SelectArgs;
}

export interface Select extends SelectBase {
  fields: Field[];
}

export interface AggregateSelect extends SelectBase {
  fields: AggregateField[];
}

export type Field =
  | { alias: string; kind: 'column'; column: ColumnModel; jsonPath?: (string | number)[] }
  | { alias: string; kind: 'typename'; name: string }
  | { alias: string; kind: 'object'; rel: RelationshipModel; select: Select }
  | { alias: string; kind: 'array'; rel: RelationshipModel; select: Select }
  | { alias: string; kind: 'array_aggregate'; rel: RelationshipModel; select: AggregateSelect }
  | { alias: string; kind: 'computed_scalar'; field: ComputedFieldModel; args: FunctionArg[]; type: PgType; jsonPath?: (string | number)[] }
  | { alias: string; kind: 'computed_table'; field: ComputedFieldModel; select: Select }
  /** the Relay global id of the row: base64 of `[1, schema, table, pk…]` */
  | { alias: string; kind: 'node_id'; table: TableModel }
  | { alias: string; kind: 'array_connection'; rel: RelationshipModel; select: ConnectionSelect }
  /** a remote relationship (src/remote): the statement outputs the join columns as a JSON array; the remote call fills the field */
  | { alias: string; kind: 'remote_join'; columns: ColumnModel[]; join: RemoteJoinField };

// ---- Relay connections --------------------------------------------------------------

/** One order-by item of a connection and where its value sits in the cursor JSON. */
export interface CursorItem {
  item: OrderByItem;
  /** keys of the item's value in the cursor object (`["articles_aggregate", "count"]`) */
  path: string[];
  /** the type the cursor's value is cast to */
  type: PgType;
}

/** The cursor a connection pages from: its values, one per `CursorItem` (null: JSON null in the cursor). */
export interface ConnectionSplit {
  kind: 'after' | 'before';
  values: Array<TypedValue | null>;
}

/**
 * A Relay connection: rows ordered by `args.orderBy` with the primary key
 * appended (so every order is total), cut at the cursor (keyset, never an
 * offset) and sliced to the first or last `count` rows.
 */
export interface ConnectionSelect extends SelectBase {
  cursorItems: CursorItem[];
  split: ConnectionSplit | null;
  slice: { kind: 'first' | 'last'; count: number } | null;
  fields: ConnectionField[];
}

export type ConnectionField =
  | { alias: string; kind: 'typename'; name: string }
  | { alias: string; kind: 'pageInfo'; fields: PageInfoField[] }
  | { alias: string; kind: 'edges'; fields: EdgeField[] };

export type PageInfoField =
  { alias: string; kind: 'typename'; name: string } | { alias: string; kind: 'startCursor' | 'endCursor' | 'hasNextPage' | 'hasPreviousPage' };

export type EdgeField =
  { alias: string; kind: 'typename'; name: string } | { alias: string; kind: 'cursor' } | { alias: string; kind: 'node'; fields: Field[] };

export type AggregateField =
  | { alias: string; kind: 'typename'; name: string }
  | { alias: string; kind: 'aggregate'; fields: AggregateOpField[] }
  | { alias: string; kind: 'nodes'; fields: Field[] };

export type AggregateOpField =
  | { alias: string; kind: 'typename'; name: string }
  | { alias: string; kind: 'count'; columns: ColumnModel[] | null; distinct: boolean }
  | {
      alias: string;
      kind: 'op';
      op: AggregateOp;
      fields: Array<{ alias: string; kind: 'column'; column: ColumnModel } | { alias: string; kind: 'typename'; name: string }>;
    };

// ---- mutations -------------------------------------------------------------------

/** A value written into a column. */
export interface ColumnValue {
  column: ColumnModel;
  value: TypedValue;
}

export type ConflictTarget = { kind: 'constraint'; name: string } | { kind: 'columns'; columns: ColumnModel[] };

/** `ON CONFLICT`: ignore the row, or update some columns of the existing row (where `where` holds). */
export type OnConflict =
  | { action: 'ignore'; target: ConflictTarget | null }
  | { action: 'update'; target: ConflictTarget; columns: ColumnModel[]; presets: ColumnValue[]; where: BoolExp | null };

/** One object to insert, with the related objects inserted before (object relationships) and after (array relationships) it. */
export interface InsertRow {
  values: ColumnValue[];
  /** each inserts one row whose columns give this row's mapped columns */
  objectRels: Array<{ rel: RelationshipModel; insert: Insert }>;
  /** rows taking this row's mapped columns */
  arrayRels: Array<{ rel: RelationshipModel; insert: Insert }>;
}

export interface Insert {
  table: TableModel;
  rows: InsertRow[];
  /** permission presets: columns set whatever the input says */
  presets: ColumnValue[];
  onConflict: OnConflict | null;
  /** the role's insert check (null: none) */
  check: BoolExp | null;
  /** the role's update check, for rows an upsert updated (null: the insert check applies) */
  updateCheck: BoolExp | null;
}

export type UpdateOp = 'set' | 'inc' | 'mul' | 'default' | 'append' | 'prepend' | 'delete_key' | 'delete_elem' | 'delete_at_path';

export interface UpdateItem {
  column: ColumnModel;
  op: UpdateOp;
  /** null for `default` */
  value: TypedValue | null;
}

export interface Update {
  table: TableModel;
  /** including the permission's presets (as `set`) */
  items: UpdateItem[];
  /** the caller's condition and the permission filter */
  where: BoolExp;
  /** the role's post-update check (null: none) */
  check: BoolExp | null;
}

export interface Delete {
  table: TableModel;
  where: BoolExp;
}

export type Mutation = { kind: 'insert'; insert: Insert } | { kind: 'update'; update: Update } | { kind: 'delete'; delete: Delete };

export type MutationResponseField =
  { alias: string; kind: 'affected_rows' } | { alias: string; kind: 'returning'; fields: Field[] } | { alias: string; kind: 'typename'; name: string };

/** `multi`: `{affected_rows, returning}`; `single`: the one row written (or null). */
export type MutationOutput = { kind: 'multi'; fields: MutationResponseField[] } | { kind: 'single'; fields: Field[] };

/**
 * A streaming subscription's root field (`<table>_stream`): the rows of `select` (the role's
 * filter, limit and columns, the client's `where`; no cursor condition) after the cursor, ordered
 * by the cursor column, `batchSize` at a time. subscriptions/streamManager.ts advances the cursor per
 * subscriber; subscriptions/streamPlan.ts compiles the multiplexed statement.
 */
export interface StreamSpec {
  select: Select;
  column: ColumnModel;
  dir: OrderDir;
  batchSize: number;
  /** the cursor's initial value, as written in the query (a literal or a variable) */
  initial: TypedValue;
}

/** One root field of an operation, ready to compile. */
export type RootField =
  /** `stream`: a `<table>_stream` field (Hasura v2's streaming subscription): `select` is its first batch */
  | { alias: string; kind: 'select'; select: Select; stream?: StreamSpec }
  | { alias: string; kind: 'select_one'; select: Select }
  | { alias: string; kind: 'aggregate'; select: AggregateSelect }
  | { alias: string; kind: 'connection'; select: ConnectionSelect }
  /** a value computed without the database (`__typename`, introspection) */
  | { alias: string; kind: 'const'; json: string }
  /** `errorPath`: where database errors of the mutation are reported (`$.selectionSet.insert_x.args.objects`) */
  | { alias: string; kind: 'mutation'; mutation: Mutation; output: MutationOutput; errorPath: string }
  /** an action (src/actions/): answered by its handler, not by the statement */
  | { alias: string; kind: 'action'; action: ActionField }
  /** `<action>(id)` of an asynchronous action: its row of the action log (sql/actions.ts) */
  | ({ alias: string; kind: 'action_log' } & ActionLogField)
  /** a root field of a remote schema (src/remote), sent to its server */
  | { alias: string; kind: 'remote'; remote: string; field: CollectedField };

// ---- Actions (src/actions) ----------------------------------------------------------
// The IR of an action root field: the handler's input (literals and references to GraphQL
// variables, bound per request) and the selection on the output object type (its fields, and its
// relationships to tables as Select IR with the role's permissions folded in).

/** A JSON value with holes for variables. */
export type InputTemplate =
  | { kind: 'value'; value: unknown }
  | { kind: 'var'; name: string; path: (string | number)[] }
  | { kind: 'list'; items: InputTemplate[] }
  | { kind: 'object'; fields: Array<[string, InputTemplate]> };

export type OutputField =
  /** a scalar or enum field of the object, read from the handler's response */
  | { alias: string; kind: 'field'; name: string }
  | { alias: string; kind: 'typename'; name: string }
  /** a relationship to a table: `rel.mapping` is object field → remote column */
  | { alias: string; kind: 'object' | 'array'; rel: RelationshipModel; select: Select };

export interface OutputSelection {
  fields: OutputField[];
  /** the output type is a list of objects */
  list: boolean;
}

/** A synchronous action call, or the call that queues an asynchronous one. */
export interface ActionField {
  action: ActionModel;
  input: InputTemplate;
  /** null for an asynchronous action's mutation (it answers the action id) */
  output: OutputSelection | null;
  /** the statement resolving the output's relationships (compiled at first use; null: none) */
  compiled?: CompiledSql | null;
}

/** What `<action>(id)` selects. */
export type AsyncSelection = Array<
  | { alias: string; kind: 'id' | 'created_at' | 'errors' }
  | { alias: string; kind: 'typename'; name: string }
  | { alias: string; kind: 'output'; output: OutputSelection }
>;

/**
 * `<action>(id)`: the call `id` of the asynchronous action `action` in the action log; a role
 * other than admin reads only the calls made with its session variables.
 */
export interface ActionLogField {
  action: string;
  id: ValueRef;
  fields: AsyncSelection;
  admin: boolean;
}
