/**
 * The schema cache: metadata resolved against the database, immutable, built
 * once per metadata change (`schema/build.ts`). Everything a request needs to
 * know about tables, columns, relationships and permissions is here; the
 * per-role GraphQL schemas hang off it and are built lazily, once per role.
 */
import type { ColumnInfo, DbIntrospection, FunctionIntrospection, TableIntrospection } from '../catalog/introspect.js';
import type { BoolExp as FilterExp } from '../ir/types.js';
import type { ActionModel, CustomTypesModel } from '../actions/model.js';
import type { BoolExp, ComputedFieldDef, FunctionMetadata, Metadata, PermissionKind, QualifiedFunction, QualifiedTable, TableMetadata } from '../model/metadata.js';
import type { RemoteCacheModel } from '../remote/model.js';
import type { SchemaExtension } from './extensions.js';

export interface ColumnModel extends ColumnInfo {
  /** GraphQL field name (custom_column_names or the column name) */
  gqlName: string;
  /**
   * Set only on an inherited role's view of the column (permissions/view.ts): the rows whose value
   * the role may read (the OR of the filters of its roles that may read the column); elsewhere the
   * column reads as null (`CASE WHEN guard THEN col END`, sql/boolexp.ts guardedCol).
   */
  guard?: FilterExp;
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
  guard?: FilterExp;
}

export interface SelectPermissionModel {
  columns: string[];
  computedFields: string[];
  filter: BoolExp;
  /** `filter` parsed once at schema build (permissions/filter.ts permissionExp) */
  filterExp: FilterExp;
  limit: number | null;
  allowAggregations: boolean;
}
export interface InsertPermissionModel {
  check: BoolExp;
  checkExp: FilterExp;
  /** column → static value or session variable name (lower-cased `x-svc-…`) */
  set: Record<string, unknown>;
  columns: string[];
  backendOnly: boolean;
}
export interface UpdatePermissionModel {
  columns: string[];
  filter: BoolExp;
  filterExp: FilterExp;
  check: BoolExp | null;
  checkExp: FilterExp | null;
  set: Record<string, unknown>;
}
export interface DeletePermissionModel {
  filter: BoolExp;
  filterExp: FilterExp;
}
export interface RolePermissions {
  select?: SelectPermissionModel;
  insert?: InsertPermissionModel;
  update?: UpdatePermissionModel;
  delete?: DeletePermissionModel;
}

export type RootFieldName =
  | 'select' | 'select_by_pk' | 'select_aggregate'
  | 'insert' | 'insert_one' | 'update' | 'update_by_pk' | 'delete' | 'delete_by_pk';

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
  | 'table' | 'function' | 'object_relation' | 'array_relation' | 'computed_field'
  | 'insert_permission' | 'select_permission' | 'update_permission' | 'delete_permission'
  | 'event_trigger' | 'remote_schema' | 'remote_relationship' | 'action' | 'custom_types' | 'cron_trigger' | 'endpoint'
  | 'inherited_role';

import type { RestRouter } from '../rest/endpoints.js';

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

export interface SchemaCache {
  resourceVersion: number;
  metadata: Metadata;
  db: DbIntrospection;
  tables: Map<string, TableModel>;
  functions: Map<string, FunctionModel>;
  inconsistent: InconsistentObject[];
  dependencies: Dependency[];
  /** every role named by a permission (admin excluded), and the inherited roles */
  roles: Set<string>;
  /** inherited role → its role set (metadata `inherited_roles`; acyclic: checked when added) */
  inheritedRoles: Map<string, string[]>;
  /** lazily built per-role artefacts (GraphQL schema etc.), keyed by role */
  perRole: Map<string, unknown>;
  /** custom types (empty when inconsistent) and the consistent actions */
  customTypes: CustomTypesModel;
  actions: Map<string, ActionModel>;
  /** the consistent REST endpoints (src/rest/endpoints.ts) */
  rest: RestRouter;
  /** remote schemas and remote relationships (src/remote/cache.ts), set by its extension's attach */
  remote?: RemoteCacheModel;
  /** the schema extensions the cache was built with (src/schema/extensions.ts; set by schema/load.ts) */
  extensions: readonly SchemaExtension[];
}
