/**
 * The schema cache's model of the database as the metadata tracks it: tables, columns,
 * relationships, computed fields, functions and each role's permissions, with the permission
 * filters parsed once (`BoolExp`, the IR of a boolean expression: permissions/filter.ts), and the
 * inconsistent objects and dependencies the builder found (schema/build.ts).
 */
import type {
  BoolExp as BoolExpDoc,
  ComputedFieldDef,
  FunctionMetadata,
  PermissionKind,
  QualifiedFunction,
  QualifiedTable,
  TableMetadata,
} from './metadata.js';
import type { ColumnInfo, FunctionIntrospection, TableIntrospection } from './introspection.js';
import type { ColumnCompareOp, CompareOp, PgType, TypedValue } from './values.js';

export interface ColumnModel extends ColumnInfo {
  /** GraphQL field name (custom_column_names or the column name) */
  gqlName: string;
  /**
   * Set only on an inherited role's view of the column (permissions/view.ts): the rows whose value
   * the role may read (the OR of the filters of its roles that may read the column); elsewhere the
   * column reads as null (`CASE WHEN guard THEN col END`, sql/boolexp.ts guardedCol).
   */
  guard?: BoolExp;
}

export interface RelationshipModel {
  name: string;
  kind: 'object' | 'array';
  table: QualifiedTable;
  remoteTable: QualifiedTable;
  /** local column → remote column */
  mapping: Array<[string, string]>;
  /** object relationship built on the local table's foreign key (the remote row is required when the FK columns are not null) */
  viaLocalForeignKey: boolean;
  /** the foreign key constraint a `foreign_key_constraint_on` relationship is built on */
  constraint?: { table: QualifiedTable; name: string };
  comment: string | null;
}

export interface ComputedFieldModel {
  name: string;
  table: QualifiedTable;
  function: FunctionIntrospection;
  /** argument position (0-based) receiving the row */
  tableArgIndex: number;
  /** argument position receiving the session JSON, if any */
  sessionArgIndex?: number;
  /** scalar return (PG type name) or a set/row of a tracked table */
  returns: { kind: 'scalar'; type: string; typeSchema: string } | { kind: 'table'; table: QualifiedTable; set: boolean };
  /** extra arguments exposed as GraphQL `args` */
  inputArgs: Array<{ name: string; type: string; typeSchema: string; hasDefault: boolean }>;
  def: ComputedFieldDef;
  comment: string | null;
  /** as ColumnModel.guard: an inherited role's view of a scalar computed field */
  guard?: BoolExp;
}

export interface SelectPermissionModel {
  columns: string[];
  computedFields: string[];
  filter: BoolExpDoc;
  /** `filter` parsed once at schema build (permissions/filter.ts permissionExp) */
  filterExp: BoolExp;
  limit: number | null;
  allowAggregations: boolean;
}

export interface InsertPermissionModel {
  check: BoolExpDoc;
  checkExp: BoolExp;
  /** column → static value or session variable name (lower-cased `x-svc-…`) */
  set: Record<string, unknown>;
  columns: string[];
  backendOnly: boolean;
}

export interface UpdatePermissionModel {
  columns: string[];
  filter: BoolExpDoc;
  filterExp: BoolExp;
  check: BoolExpDoc | null;
  checkExp: BoolExp | null;
  set: Record<string, unknown>;
}

export interface DeletePermissionModel {
  filter: BoolExpDoc;
  filterExp: BoolExp;
}

export interface RolePermissions {
  select?: SelectPermissionModel;
  insert?: InsertPermissionModel;
  update?: UpdatePermissionModel;
  delete?: DeletePermissionModel;
}

export type RootFieldName = 'select' | 'select_by_pk' | 'select_aggregate' | 'insert' | 'insert_one' | 'update' | 'update_by_pk' | 'delete' | 'delete_by_pk';

export interface TableModel {
  name: QualifiedTable;
  key: string;
  info: TableIntrospection;
  /** columns in table order */
  columns: ColumnModel[];
  columnsByName: Map<string, ColumnModel>;
  primaryKey: string[] | null;
  isEnum: boolean;
  /** rows of an enum table: value and comment */
  enumValues?: Array<{ value: string; comment: string | null }>;
  customRootFields: Partial<Record<RootFieldName, string>>;
  relationships: Map<string, RelationshipModel>;
  computedFields: Map<string, ComputedFieldModel>;
  permissions: Map<string, RolePermissions>;
  meta: TableMetadata;
}

export interface FunctionModel {
  name: QualifiedFunction;
  key: string;
  info: FunctionIntrospection;
  returnTable: QualifiedTable;
  sessionArgument?: string;
  /** GraphQL-visible arguments (the session argument removed) */
  inputArgs: Array<{ name: string; type: string; typeSchema: string; hasDefault: boolean }>;
  meta: FunctionMetadata;
}

export type InconsistentType =
  | 'table'
  | 'function'
  | 'object_relation'
  | 'array_relation'
  | 'computed_field'
  | 'insert_permission'
  | 'select_permission'
  | 'update_permission'
  | 'delete_permission'
  | 'event_trigger'
  | 'remote_schema'
  | 'remote_relationship'
  | 'action'
  | 'custom_types'
  | 'cron_trigger'
  | 'endpoint'
  | 'inherited_role';

export interface InconsistentObject {
  definition: unknown;
  reason: string;
  type: InconsistentType;
}

/** A metadata object and the database/metadata objects it uses (for dependency errors). */
export interface Dependency {
  /** how messages name the dependent: `permission test.user.select`, `relationship article.author` */
  dependent: string;
  /** what to remove from the metadata when cascading */
  ref: MetadataRef;
  on: SchemaObjectRef;
  /** the dependent relies on the column's type (compares it with a static value) */
  onType?: boolean;
}

export type SchemaObjectRef =
  | { kind: 'table'; table: QualifiedTable }
  | { kind: 'column'; table: QualifiedTable; column: string }
  /** a foreign key constraint of `table` (relationships built on it) */
  | { kind: 'constraint'; table: QualifiedTable; name: string }
  | { kind: 'function'; function: QualifiedFunction }
  | { kind: 'relationship'; table: QualifiedTable; name: string }
  | { kind: 'computed_field'; table: QualifiedTable; name: string }
  | { kind: 'remote_schema'; name: string };

export type MetadataRef =
  | { kind: 'table'; table: QualifiedTable }
  | { kind: 'relationship'; table: QualifiedTable; name: string }
  | { kind: 'computed_field'; table: QualifiedTable; name: string }
  | { kind: 'permission'; table: QualifiedTable; role: string; perm: PermissionKind }
  | { kind: 'event_trigger'; table: QualifiedTable; name: string }
  | { kind: 'remote_relationship'; table: QualifiedTable; name: string }
  | { kind: 'function'; function: QualifiedFunction };

export type ColumnOp =
  | { op: CompareOp; value: TypedValue }
  /** `_in`/`_nin`/`_has_keys_*` with a list of values, or one array value (session variable) */
  | { op: 'in' | 'nin' | 'has_keys_any' | 'has_keys_all'; values: TypedValue[] | TypedValue }
  | { op: 'is_null'; value: boolean }
  | { op: ColumnCompareOp; column: ColumnModel }
  | { op: 'st_d_within'; distance: TypedValue; from: TypedValue; useSpheroid?: TypedValue }
  | { op: 'st_intersects_nband_geom'; nband: TypedValue; geommin: TypedValue }
  | { op: 'st_intersects_geom_nband'; geommin: TypedValue; nband?: TypedValue }
  | { op: 'cast'; to: PgType; ops: ColumnOp[] };

/** What a column operator compares: a column, or a scalar computed field of the row. */
export type ColumnTarget = { kind: 'column'; column: ColumnModel } | { kind: 'computed'; field: ComputedFieldModel; type: PgType };

export type BoolExp =
  | { kind: 'true' }
  | { kind: 'and'; items: BoolExp[] }
  | { kind: 'or'; items: BoolExp[] }
  | { kind: 'not'; item: BoolExp }
  | { kind: 'column'; target: ColumnTarget; ops: ColumnOp[]; nullSafeEq?: boolean }
  /** a condition on the rows a relationship leads to; `filter` is the target's permission filter */
  | { kind: 'relationship'; rel: RelationshipModel; target: TableModel; exp: BoolExp; filter: BoolExp | null }
  /** `_exists`: some row of `table` satisfies `exp`; `filter` is the table's permission filter */
  | { kind: 'exists'; table: TableModel; exp: BoolExp; filter: BoolExp | null };
