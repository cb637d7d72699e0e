/**
 * What the console knows about the database and the metadata, and pure functions over it
 * (no React, no fetch: unit-tested under node).
 */

export interface ColumnInfo {
  name: string;
  /** format_type(), e.g. "integer", "text", "character varying(20)" */
  type: string;
  nullable: boolean;
  default: string | null;
}

export interface ForeignKey {
  name: string;
  columns: string[];
  ref_schema: string;
  ref_table: string;
  ref_columns: string[];
  /** referential actions as PostgreSQL names them ('no action', 'cascade', …) */
  on_update?: string;
  on_delete?: string;
}

export interface Constraint {
  name: string;
  /** p primary key, u unique, c check, f foreign key, x exclusion */
  type: string;
  columns: string[];
  /** pg_get_constraintdef(), e.g. "CHECK ((price > 0))" */
  definition: string;
}

export interface IndexInfo {
  name: string;
  /** pg_get_indexdef() */
  definition: string;
  unique: boolean;
  /** the index backs a constraint (primary key, unique, exclusion): drop the constraint instead */
  constraint: string | null;
}

export interface TableInfo {
  schema: string;
  name: string;
  /** pg_class.relkind: r table, v view, m materialized view, f foreign table, p partitioned table */
  kind: string;
  columns: ColumnInfo[];
  primary_key: string[];
  foreign_keys: ForeignKey[];
  /** every constraint (read by the Modify tab; absent in tests that build TableInfo by hand) */
  constraints?: Constraint[];
  indexes?: IndexInfo[];
  comment?: string | null;
}

/** A function of the database, as function tracking and computed fields need it. */
export interface FunctionInfo {
  schema: string;
  name: string;
  /** argument names and types (format_type) in order; unnamed arguments have '' */
  args: Array<{ name: string; type: string }>;
  /** the table whose rows it returns (schema.name of a composite return type), if any */
  returns_table: QualifiedName | null;
  return_type: string;
  returns_set: boolean;
  /** i immutable, s stable, v volatile */
  volatility: string;
  /** the table whose row type the first argument has, if any (a computed-field candidate) */
  first_arg_table: QualifiedName | null;
}

export interface QualifiedName {
  schema: string;
  name: string;
}

export type BoolExp = Record<string, unknown>;

export interface SelectPermission {
  columns: string[] | '*';
  computed_fields?: string[];
  filter: BoolExp;
  limit?: number | null;
  allow_aggregations?: boolean;
}
export interface InsertPermission {
  check: BoolExp;
  columns?: string[] | '*';
  set?: Record<string, unknown>;
  backend_only?: boolean;
}
export interface UpdatePermission {
  columns: string[] | '*';
  filter: BoolExp;
  check?: BoolExp | null;
  set?: Record<string, unknown>;
}
export interface DeletePermission {
  filter: BoolExp;
}

export interface RoleEntry<P> {
  role: string;
  permission: P;
  comment?: string | null;
}

export interface RelationshipEntry {
  name: string;
  using: {
    foreign_key_constraint_on?: string | string[] | { table: string | QualifiedName; column: string | string[] };
    manual_configuration?: { remote_table: string | QualifiedName; column_mapping: Record<string, string> };
  };
  comment?: string | null;
}

export interface RemoteRelationshipEntry {
  name: string;
  definition: { svc_fields?: string[]; hasura_fields?: string[]; remote_schema: string; remote_field: Record<string, unknown> };
}

export interface TableConfiguration {
  custom_root_fields?: Record<string, string | null>;
  custom_column_names?: Record<string, string>;
}

export interface TableMetadata {
  table: QualifiedName;
  is_enum?: boolean;
  configuration?: TableConfiguration;
  remote_relationships?: RemoteRelationshipEntry[];
  object_relationships?: RelationshipEntry[];
  array_relationships?: RelationshipEntry[];
  insert_permissions?: RoleEntry<InsertPermission>[];
  select_permissions?: RoleEntry<SelectPermission>[];
  update_permissions?: RoleEntry<UpdatePermission>[];
  delete_permissions?: RoleEntry<DeletePermission>[];
  computed_fields?: Array<{ name: string; definition?: { function: string | QualifiedName; table_argument?: string; session_argument?: string }; comment?: string | null }>;
  event_triggers?: unknown[];
}

export interface Metadata {
  version?: number;
  tables: TableMetadata[];
  [key: string]: unknown;
}

export const sameTable = (a: QualifiedName, b: QualifiedName): boolean => a.schema === b.schema && a.name === b.name;

export function qualified(t: string | QualifiedName): QualifiedName {
  return typeof t === 'string' ? { schema: 'public', name: t } : { schema: t.schema ?? 'public', name: t.name };
}

export function tableLabel(t: QualifiedName): string {
  return t.schema === 'public' ? t.name : `${t.schema}.${t.name}`;
}

export const KIND_LABEL: Record<string, string> = { r: 'table', v: 'view', m: 'materialized view', f: 'foreign table', p: 'partitioned table' };

/** An SQL string literal (standard_conforming_strings is on in every supported PostgreSQL). */
export function sqlLiteral(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** One read-only statement returning the tables of `schema` (or of every user schema) as JSON. */
export function introspectionSql(schema?: string): string {
  const cols = `(select coalesce(json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod),
      'nullable', not a.attnotnull, 'default', pg_get_expr(d.adbin, d.adrelid)) order by a.attnum), '[]')
    from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped)`;
  const pk = `(select coalesce(json_agg(a.attname order by k.ord), '[]')
    from pg_index i cross join lateral unnest(i.indkey::int2[]) with ordinality k(num, ord)
    join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.num
    where i.indrelid = c.oid and i.indisprimary)`;
  const names = (keys: string, rel: string) => `(select json_agg(a.attname order by u.ord) from unnest(${keys}) with ordinality u(num, ord)
      join pg_attribute a on a.attrelid = ${rel} and a.attnum = u.num)`;
  const action = (col: string) => `case ${col} when 'r' then 'restrict' when 'c' then 'cascade' when 'n' then 'set null' when 'd' then 'set default' else 'no action' end`;
  const fks = `(select coalesce(json_agg(json_build_object('name', k.conname, 'columns', ${names('k.conkey', 'k.conrelid')},
      'ref_schema', rn.nspname, 'ref_table', rc.relname, 'ref_columns', ${names('k.confkey', 'k.confrelid')},
      'on_update', ${action('k.confupdtype')}, 'on_delete', ${action('k.confdeltype')}) order by k.conname), '[]')
    from pg_constraint k join pg_class rc on rc.oid = k.confrelid join pg_namespace rn on rn.oid = rc.relnamespace
    where k.conrelid = c.oid and k.contype = 'f')`;
  const constraints = `(select coalesce(json_agg(json_build_object('name', k.conname, 'type', k.contype,
      'columns', coalesce(${names('k.conkey', 'k.conrelid')}, '[]'), 'definition', pg_get_constraintdef(k.oid)) order by k.contype, k.conname), '[]')
    from pg_constraint k where k.conrelid = c.oid)`;
  const indexes = `(select coalesce(json_agg(json_build_object('name', ic.relname, 'definition', pg_get_indexdef(i.indexrelid),
      'unique', i.indisunique, 'constraint', (select k.conname from pg_constraint k where k.conindid = i.indexrelid and k.conrelid = c.oid limit 1))
      order by ic.relname), '[]')
    from pg_index i join pg_class ic on ic.oid = i.indexrelid where i.indrelid = c.oid)`;
  const where = schema === undefined
    ? `n.nspname not in ('pg_catalog', 'information_schema', 'svc_catalog') and n.nspname not like 'pg\\_%'`
    : `n.nspname = ${sqlLiteral(schema)}`;
  return `select coalesce(json_agg(t order by t.schema, t.name), '[]') as tables from (
  select n.nspname as schema, c.relname as name, c.relkind as kind, ${cols} as columns, ${pk} as primary_key, ${fks} as foreign_keys,
    ${constraints} as constraints, ${indexes} as indexes, obj_description(c.oid, 'pg_class') as comment
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where c.relkind in ('r', 'v', 'm', 'f', 'p') and not c.relispartition and ${where}) t`;
}

/** One read-only statement returning the functions of every user schema as JSON. */
export function functionsSql(): string {
  const tableOf = (typ: string) => `(select json_build_object('schema', tn.nspname, 'name', tc.relname)
      from pg_type tt join pg_class tc on tc.oid = tt.typrelid join pg_namespace tn on tn.oid = tc.relnamespace
      where tt.oid = ${typ} and tc.relkind in ('r', 'v', 'm', 'f', 'p'))`;
  return `select coalesce(json_agg(f order by f.schema, f.name), '[]') as functions from (
  select n.nspname as schema, p.proname as name,
    (select coalesce(json_agg(json_build_object('name', coalesce(p.proargnames[u.ord], ''), 'type', format_type(u.t, null)) order by u.ord), '[]')
       from unnest(p.proargtypes::oid[]) with ordinality u(t, ord)) as args,
    ${tableOf('p.prorettype')} as returns_table, format_type(p.prorettype, null) as return_type,
    p.proretset as returns_set, p.provolatile as volatility,
    ${tableOf('p.proargtypes[0]')} as first_arg_table
  from pg_proc p join pg_namespace n on n.oid = p.pronamespace
  where p.prokind = 'f' and n.nspname not in ('pg_catalog', 'information_schema', 'svc_catalog') and n.nspname not like 'pg\\_%'
    and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')) f`;
}

/** The user schemas of the database, one read-only statement. */
export const SCHEMAS_SQL = `select nspname from pg_namespace
  where nspname not in ('pg_catalog', 'information_schema', 'svc_catalog') and nspname not like 'pg\\_%'
  order by nspname = 'public' desc, nspname`;

/** A relationship the console proposes from a foreign key between two tracked tables. */
export interface SuggestedRelationship {
  kind: 'object' | 'array';
  /** the table the relationship is defined on */
  table: QualifiedName;
  name: string;
  /** the /v1/query operation that creates it */
  op: { type: 'create_object_relationship' | 'create_array_relationship'; args: unknown };
  /** human-readable description, e.g. "article.author_id → author.id" */
  via: string;
}

function relationshipNames(md: TableMetadata | undefined): Set<string> {
  return new Set([...(md?.object_relationships ?? []), ...(md?.array_relationships ?? [])].map((r) => r.name));
}

/** true when a relationship of `md` already uses the foreign key `fk` of table `child` */
function fkAlreadyUsed(fk: ForeignKey, child: TableInfo, childMd: TableMetadata | undefined, parentMd: TableMetadata | undefined): { object: boolean; array: boolean } {
  const sameCols = (c: string | string[] | undefined) => c !== undefined && JSON.stringify([c].flat()) === JSON.stringify(fk.columns);
  const object = (childMd?.object_relationships ?? []).some((r) => {
    const f = r.using.foreign_key_constraint_on;
    if (typeof f === 'string' || Array.isArray(f)) return sameCols(f);
    const m = r.using.manual_configuration;
    return !!m && sameTable(qualified(m.remote_table), { schema: fk.ref_schema, name: fk.ref_table }) && sameCols(Object.keys(m.column_mapping));
  });
  const array = (parentMd?.array_relationships ?? []).some((r) => {
    const f = r.using.foreign_key_constraint_on;
    if (f && typeof f === 'object' && !Array.isArray(f)) return sameTable(qualified(f.table), child) && sameCols(f.column);
    const m = r.using.manual_configuration;
    return !!m && sameTable(qualified(m.remote_table), child) && sameCols(Object.values(m.column_mapping));
  });
  return { object, array };
}

function freeName(base: string, taken: Set<string>): string {
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}_${i}`)) return `${base}_${i}`;
}

/**
 * Relationships suggested by the foreign keys among tracked tables that no relationship uses yet:
 * an object relationship on the referencing table (named after the column without `_id`, or the
 * referenced table) and an array relationship on the referenced table (the referencing table's
 * name + "s"). Names never clash with columns or existing relationships.
 */
export function suggestRelationships(tables: TableInfo[], metadata: Metadata): SuggestedRelationship[] {
  const mdOf = (t: QualifiedName) => metadata.tables.find((m) => sameTable(m.table, t));
  const infoOf = (t: QualifiedName) => tables.find((x) => sameTable(x, t));
  const out: SuggestedRelationship[] = [];
  const planned = new Map<string, Set<string>>();
  const taken = (t: TableInfo) => {
    const key = `${t.schema}.${t.name}`;
    if (!planned.has(key)) planned.set(key, new Set([...t.columns.map((c) => c.name), ...relationshipNames(mdOf(t))]));
    return planned.get(key)!;
  };
  for (const child of tables) {
    const childMd = mdOf(child);
    if (!childMd) continue;
    for (const fk of child.foreign_keys) {
      const parentName = { schema: fk.ref_schema, name: fk.ref_table };
      const parent = infoOf(parentName);
      const parentMd = mdOf(parentName);
      if (!parent || !parentMd) continue;
      const used = fkAlreadyUsed(fk, child, childMd, parentMd);
      const via = `${tableLabel(child)}.(${fk.columns.join(', ')}) → ${tableLabel(parent)}.(${fk.ref_columns.join(', ')})`;
      const single = fk.columns.length === 1 ? fk.columns[0]! : undefined;
      if (!used.object) {
        const stripped = single?.replace(/_id$/, '');
        const base = stripped && stripped !== single ? stripped : parent.name;
        const name = freeName(base, taken(child));
        taken(child).add(name);
        out.push({
          kind: 'object', table: { schema: child.schema, name: child.name }, name, via,
          op: {
            type: 'create_object_relationship',
            args: {
              table: { schema: child.schema, name: child.name }, name,
              using: single
                ? { foreign_key_constraint_on: single }
                : { manual_configuration: { remote_table: parentName, column_mapping: Object.fromEntries(fk.columns.map((c, i) => [c, fk.ref_columns[i]!])) } },
            },
          },
        });
      }
      if (!used.array) {
        const plural = child.name.endsWith('s') ? child.name : `${child.name}s`;
        const base = child.schema === parent.schema ? plural : `${child.schema}_${plural}`;
        const name = freeName(taken(parent).has(base) && single ? `${base}_by_${single}` : base, taken(parent));
        taken(parent).add(name);
        out.push({
          kind: 'array', table: parentName, name, via,
          op: {
            type: 'create_array_relationship',
            args: {
              table: parentName, name,
              using: single
                ? { foreign_key_constraint_on: { table: { schema: child.schema, name: child.name }, column: single } }
                : { manual_configuration: { remote_table: { schema: child.schema, name: child.name }, column_mapping: Object.fromEntries(fk.ref_columns.map((c, i) => [c, fk.columns[i]!])) } },
            },
          },
        });
      }
    }
  }
  return out;
}

const NUMERIC = /^(smallint|integer|bigint|real|double precision|numeric|decimal|int2|int4|int8|float4|float8|oid)\b/;

/**
 * The JSON value sent for a column of type `type` from the text a person typed: numbers for
 * numeric types (when the text is a number), booleans for boolean, parsed JSON for json/jsonb,
 * the text otherwise (PostgreSQL casts it). Throws with a message when the text cannot be one.
 */
export function valueForColumn(type: string, text: string): unknown {
  const t = type.toLowerCase();
  if (t.endsWith('[]')) {
    const v = JSON.parse(text);
    if (!Array.isArray(v)) throw new Error(`expected a JSON array for ${type}`);
    return v;
  }
  if (NUMERIC.test(t)) {
    const trimmed = text.trim();
    if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(trimmed)) throw new Error(`not a number: ${JSON.stringify(text)}`);
    // big integers and numerics stay text so that no digit is lost
    const n = Number(trimmed);
    return Number.isSafeInteger(n) || (!/^(bigint|numeric|decimal|int8)/.test(t) && Number.isFinite(n)) ? n : trimmed;
  }
  if (t === 'boolean' || t === 'bool') {
    const v = text.trim().toLowerCase();
    if (['true', 't', 'yes', '1'].includes(v)) return true;
    if (['false', 'f', 'no', '0'].includes(v)) return false;
    throw new Error(`not a boolean: ${JSON.stringify(text)}`);
  }
  if (t === 'json' || t === 'jsonb') {
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new Error(`not JSON: ${(e as Error).message}`);
    }
  }
  return text;
}

/** A value as the text shown in an input (inverse of valueForColumn). */
export function textOfValue(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/**
 * The `where` that identifies one row: its primary key, or else every column that is not null
 * (json columns cannot be compared with _eq and are left out) with _is_null for nulls.
 */
export function rowIdentity(table: TableInfo, row: Record<string, unknown>): BoolExp {
  const cols = table.primary_key.length ? table.primary_key : table.columns.filter((c) => !/^json/.test(c.type)).map((c) => c.name);
  return Object.fromEntries(cols.map((c) => [c, row[c] === null || row[c] === undefined ? { _is_null: true } : { _eq: row[c] }]));
}

/** A condition of the row browser: column, operator and the text typed. */
export interface RowFilter {
  column: string;
  op: string;
  value: string;
}

export const FILTER_OPS: ReadonlyArray<{ op: string; label: string }> = [
  { op: '_eq', label: '=' }, { op: '_neq', label: '≠' }, { op: '_gt', label: '>' }, { op: '_lt', label: '<' },
  { op: '_gte', label: '≥' }, { op: '_lte', label: '≤' }, { op: '_in', label: 'in (a, b, …)' }, { op: '_nin', label: 'not in (a, b, …)' },
  { op: '_like', label: 'like' }, { op: '_ilike', label: 'ilike' }, { op: '_is_null', label: 'is null (true/false)' },
];

/** The `where` of the row browser's conditions (all must hold); throws naming the bad condition. */
export function filtersWhere(filters: RowFilter[], columns: ColumnInfo[]): BoolExp {
  const parts: BoolExp[] = [];
  filters.forEach((f, i) => {
    if (!f.column) return;
    const col = columns.find((c) => c.name === f.column);
    if (!col) throw new Error(`condition ${i + 1}: no column ${f.column}`);
    let v: unknown;
    try {
      if (f.op === '_is_null') v = valueForColumn('boolean', f.value || 'true');
      else if (f.op === '_in' || f.op === '_nin') v = f.value.split(',').map((x) => x.trim()).filter((x) => x !== '').map((x) => valueForColumn(col.type, x));
      else if (f.op === '_like' || f.op === '_ilike') v = f.value;
      else v = valueForColumn(col.type, f.value);
    } catch (e) {
      throw new Error(`condition ${i + 1} (${f.column}): ${(e as Error).message}`);
    }
    parts.push({ [f.column]: { [f.op]: v } });
  });
  return parts.length === 0 ? {} : parts.length === 1 ? parts[0]! : { _and: parts };
}

/**
 * The `remote_field` of a remote relationship: a field path ("a.b": field b under field a) with
 * arguments on its last field. An argument value `$column` joins on that column; other text is
 * JSON when it parses ("1", "true", "[1]") and a string otherwise.
 */
export function remoteFieldOf(path: string, args: Array<{ name: string; value: string }>): Record<string, unknown> {
  const parts = path.split('.').map((p) => p.trim()).filter((p) => p !== '');
  const argObject = Object.fromEntries(args.filter((a) => a.name.trim()).map((a) => {
    const v = a.value.trim();
    if (v.startsWith('$')) return [a.name.trim(), v];
    try {
      return [a.name.trim(), JSON.parse(v) as unknown];
    } catch {
      return [a.name.trim(), a.value];
    }
  }));
  let field: Record<string, unknown> = {};
  parts.reverse().forEach((p, i) => {
    field = { [p]: i === 0 ? { arguments: argObject } : { arguments: {}, field } };
  });
  return field;
}

/** The columns a remote relationship joins on (`svc_fields`, or upstream's `hasura_fields`). */
export const remoteJoinColumns = (r: RemoteRelationshipEntry): string[] => r.definition.svc_fields ?? r.definition.hasura_fields ?? [];
