/**
 * The metadata document, in the shape `export_metadata` returns (Hasura v1.3
 * "version 2" format). Internally every array is present; `exportMetadata`
 * drops the empty ones and orders keys canonically.
 */

// API limits and allow-list scopes (issue 36; parsed by document/apiLimits.ts)
/** `{global, per_role}` of one limit (v2's `Limit a`); `per_role` overrides `global` */
export interface Limit<T> {
  global: T;
  per_role: Record<string, T>;
}

export interface RateLimitConfig {
  max_reqs_per_min: number;
  /** `"IP"`, a list of session variables, or null: the role alone */
  unique_params: 'IP' | string[] | null;
}

export interface ApiLimits {
  disabled: boolean;
  depth_limit?: Limit<number>;
  node_limit?: Limit<number>;
  /** seconds */
  time_limit?: Limit<number>;
  batch_limit?: Limit<number>;
  rate_limit?: Limit<RateLimitConfig>;
}

export type AllowlistScope = { global: true } | { global: false; roles: string[] };

export interface AllowlistEntry {
  collection: string;
  /** absent: global (v1.3's entries, exported as they were written) */
  scope?: AllowlistScope;
}

export interface QualifiedName {
  schema: string;
  name: string;
}
export type QualifiedTable = QualifiedName;
export type QualifiedFunction = QualifiedName;

export type BoolExp = Record<string, unknown>;
export type ColumnList = string[] | '*';
export type ColumnPresets = Record<string, unknown>;

export interface ObjRelUsing {
  foreign_key_constraint_on?: string;
  manual_configuration?: ManualRelConfig;
}
export interface ArrRelUsing {
  foreign_key_constraint_on?: { table: QualifiedTable; column: string };
  manual_configuration?: ManualRelConfig;
}
export interface ManualRelConfig {
  remote_table: QualifiedTable;
  column_mapping: Record<string, string>;
}
export interface RelationshipDef<U> {
  name: string;
  using: U;
  comment?: string | null;
}
export type ObjectRelationshipDef = RelationshipDef<ObjRelUsing>;
export type ArrayRelationshipDef = RelationshipDef<ArrRelUsing>;

export interface ComputedFieldDef {
  name: string;
  definition: { function: QualifiedFunction; table_argument?: string; session_argument?: string };
  comment?: string | null;
}

export interface InsertPermission {
  check: BoolExp;
  set?: ColumnPresets;
  columns?: ColumnList;
  backend_only?: boolean;
}
export interface SelectPermission {
  columns: ColumnList;
  computed_fields?: string[];
  filter: BoolExp;
  limit?: number | null;
  allow_aggregations?: boolean;
}
export interface UpdatePermission {
  columns: ColumnList;
  filter: BoolExp;
  check?: BoolExp | null;
  set?: ColumnPresets;
}
export interface DeletePermission {
  filter: BoolExp;
}
export interface PermissionDef<P> {
  role: string;
  permission: P;
  comment?: string | null;
}
export type PermissionKind = 'insert' | 'select' | 'update' | 'delete';
export const PERMISSION_KINDS: readonly PermissionKind[] = ['insert', 'select', 'update', 'delete'];

export interface RemoteRelationshipDef {
  name: string;
  definition: { svc_fields: string[]; remote_schema: string; remote_field: Record<string, unknown> };
}

export interface EventTriggerDef {
  name: string;
  definition: {
    enable_manual: boolean;
    insert?: { columns: ColumnList; payload?: ColumnList };
    update?: { columns: ColumnList; payload?: ColumnList };
    delete?: { columns: ColumnList; payload?: ColumnList };
  };
  retry_conf: { num_retries: number; interval_sec: number; timeout_sec: number };
  webhook?: string;
  webhook_from_env?: string;
  headers?: Array<{ name: string; value?: string; value_from_env?: string }>;
}

export interface TableConfiguration {
  custom_root_fields?: Partial<
    Record<'select' | 'select_by_pk' | 'select_aggregate' | 'insert' | 'insert_one' | 'update' | 'update_by_pk' | 'delete' | 'delete_by_pk', string | null>
  >;
  custom_column_names?: Record<string, string>;
}

export interface TableMetadata {
  table: QualifiedTable;
  is_enum?: boolean;
  configuration?: TableConfiguration;
  object_relationships: ObjectRelationshipDef[];
  array_relationships: ArrayRelationshipDef[];
  computed_fields: ComputedFieldDef[];
  remote_relationships: RemoteRelationshipDef[];
  insert_permissions: PermissionDef<InsertPermission>[];
  select_permissions: PermissionDef<SelectPermission>[];
  update_permissions: PermissionDef<UpdatePermission>[];
  delete_permissions: PermissionDef<DeletePermission>[];
  event_triggers: EventTriggerDef[];
}

export interface FunctionMetadata {
  function: QualifiedFunction;
  configuration?: { session_argument?: string };
}

export interface RemoteSchemaMetadata {
  name: string;
  definition: {
    url?: string;
    url_from_env?: string;
    headers?: Array<{ name: string; value?: string; value_from_env?: string }>;
    forward_client_headers?: boolean;
    timeout_seconds?: number;
  };
  comment?: string | null;
}

export interface QueryCollection {
  name: string;
  definition: { queries: Array<{ name: string; query: string }> };
  comment?: string | null;
}

/** A REST endpoint (Hasura v2's create_rest_endpoint): a URL template over a query of a collection. */
export interface RestEndpointMetadata {
  name: string;
  url: string;
  methods: string[];
  definition: { query: { collection_name: string; query_name: string } };
  comment?: string | null;
}

export interface CustomTypes {
  input_objects?: unknown[] | null;
  objects?: unknown[] | null;
  scalars?: unknown[] | null;
  enums?: unknown[] | null;
}

export interface ActionMetadata {
  name: string;
  definition: Record<string, unknown>;
  comment?: string | null;
  permissions?: Array<{ role: string; comment?: string | null }>;
}

export interface CronTriggerMetadata {
  name: string;
  /** a URL with {{ENV}} templates, or {from_env} */
  webhook: string | { from_env: string };
  schedule: string;
  include_in_metadata: boolean;
  payload?: unknown;
  headers?: Array<{ name: string; value?: string; value_from_env?: string }>;
  retry_conf?: Record<string, number>;
  comment?: string | null;
}

/** An inherited role (Hasura v2's shape): the union of its roles' permissions (src/permissions/inherited.ts). */
export interface InheritedRoleMetadata {
  role_name: string;
  role_set: string[];
}

export interface Metadata {
  version: 2;
  tables: TableMetadata[];
  functions: FunctionMetadata[];
  remote_schemas: RemoteSchemaMetadata[];
  query_collections: QueryCollection[];
  allowlist: AllowlistEntry[];
  custom_types: CustomTypes;
  actions: ActionMetadata[];
  cron_triggers: CronTriggerMetadata[];
  rest_endpoints: RestEndpointMetadata[];
  /** issue 36: Hasura v2's API limits (absent: none) */
  api_limits?: ApiLimits;
  inherited_roles: InheritedRoleMetadata[];
}

export function emptyMetadata(): Metadata {
  return {
    version: 2,
    tables: [],
    functions: [],
    remote_schemas: [],
    query_collections: [],
    allowlist: [],
    custom_types: {},
    actions: [],
    cron_triggers: [],
    rest_endpoints: [],
    inherited_roles: [],
  };
}

export function emptyTable(table: QualifiedTable): TableMetadata {
  return {
    table,
    object_relationships: [],
    array_relationships: [],
    computed_fields: [],
    remote_relationships: [],
    insert_permissions: [],
    select_permissions: [],
    update_permissions: [],
    delete_permissions: [],
    event_triggers: [],
  };
}

export const qualifiedKey = (q: QualifiedName): string => `${q.schema}.${q.name}`;
export const sameName = (a: QualifiedName, b: QualifiedName): boolean => a.schema === b.schema && a.name === b.name;
/** How Hasura prints a table in messages: bare name in public, schema.name elsewhere. */
export const displayName = (q: QualifiedName): string => (q.schema === 'public' ? q.name : `${q.schema}.${q.name}`);
