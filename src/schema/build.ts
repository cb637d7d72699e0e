/**
 * build(metadata, introspection) → SchemaCache. Pure: objects whose database
 * part is missing or invalid become inconsistent objects (with Hasura's
 * "in table …: in relationship …: reason" messages) instead of failing.
 */
import { BoundedRoleCache } from './roleCache.js';
import type { DbIntrospection, FunctionIntrospection } from '../model/introspection.js';
import { SvcError } from '../errors.js';
import { isSessionVariable } from '../permissions/boolexp.js';
import { permissionExp, permissionExpUses } from '../permissions/filter.js';
import type {
  BoolExp as FilterExp,
  ColumnModel,
  ComputedFieldModel,
  Dependency,
  FunctionModel,
  InconsistentObject,
  InconsistentType,
  RelationshipModel,
  RolePermissions,
  TableModel,
} from '../model/tables.js';
import { customTypesReason, normalizeCustomTypes, validateCustomTypes } from './customTypes.js';
import { emptyCustomTypes, resolveActions, resolveCustomTypes } from './actions.js';
import { qualifiedGqlName } from './graphql/names.js';
import { computedFieldDependent } from './dependencies.js';
import { resolveRestEndpoints } from '../rest/endpoints.js';
import { orderInheritedRoles, roleCycles } from '../document/inherited.js';
import { displayName, qualifiedKey, type ColumnList, type Metadata, type PermissionKind, type QualifiedTable, type TableMetadata } from '../model/metadata.js';
import type { SchemaCache } from './model.js';
import { envNotSet, unsetVariables } from '../env.js';

export type EnumRows = Map<string, Array<{ value: string; comment: string | null }>>;

class Inconsistency extends Error {
  constructor(
    message: string,
    public readonly code = 'constraint-violation',
    public readonly bare = false,
  ) {
    super(message);
  }
}
const fail = (m: string): never => {
  throw new Inconsistency(m);
};

export function buildSchemaCache(
  md: Metadata,
  db: DbIntrospection,
  resourceVersion: number,
  enumRows: EnumRows = new Map(),
  roleCacheMaxBytes?: number,
): SchemaCache {
  const tables = new Map<string, TableModel>();
  const functions = new Map<string, FunctionModel>();
  const inconsistent: InconsistentObject[] = [];
  const dependencies: Dependency[] = [];
  const roles = new Set<string>();
  const lookup = (t: QualifiedTable) => tables.get(qualifiedKey(t));

  const attempt = (type: InconsistentType, definition: unknown, prefix: string, fn: () => void): boolean => {
    try {
      fn();
      return true;
    } catch (e) {
      if (e instanceof Inconsistency || e instanceof SvcError) {
        // field-name collisions are reported without the object's context, as Hasura does
        const bare = e instanceof Inconsistency && e.bare;
        inconsistent.push({ definition, reason: bare ? e.message : prefix + e.message, type });
        return false;
      }
      throw e;
    }
  };

  // 1. tables and their columns
  for (const tm of md.tables) {
    attempt('table', tm.table, '', () => {
      const info = db.tables.get(qualifiedKey(tm.table));
      if (!info) fail(`no such table/view exists in postgres: ${JSON.stringify(displayName(tm.table))}`);
      const custom = tm.configuration?.custom_column_names ?? {};
      const columns: ColumnModel[] = info!.columns.map((c) => ({ ...c, gqlName: custom[c.name] ?? c.name }));
      for (const col of Object.keys(custom)) {
        if (!info!.columns.some((c) => c.name === col)) {
          fail(`the custom field name ${JSON.stringify(custom[col])} was given for the column ${JSON.stringify(col)}, but no such column exists`);
        }
      }
      // two columns mapped to one GraphQL field name would make the schema invalid
      const byGql = new Map<string, string[]>();
      for (const c of columns) byGql.set(c.gqlName, [...(byGql.get(c.gqlName) ?? []), c.name]);
      for (const [gql, cols] of byGql) {
        if (cols.length > 1) {
          const list = cols.length === 2 ? `${cols[0]} and ${cols[1]}` : `${cols.slice(0, -1).join(', ')}, and ${cols[cols.length - 1]}`;
          fail(`the definitions of columns ${list} are in conflict: they are mapped to the same field name, ${JSON.stringify(gql)}`);
        }
      }
      const table: TableModel = {
        name: tm.table,
        key: qualifiedKey(tm.table),
        info: info!,
        columns,
        columnsByName: new Map(columns.map((c) => [c.name, c])),
        primaryKey: info!.primaryKey?.columns ?? null,
        isEnum: !!tm.is_enum,
        customRootFields: Object.fromEntries(
          Object.entries(tm.configuration?.custom_root_fields ?? {}).filter(([, v]) => typeof v === 'string'),
        ) as TableModel['customRootFields'],
        relationships: new Map(),
        computedFields: new Map(),
        permissions: new Map(),
        meta: tm,
      };
      if (tm.is_enum) {
        validateEnumTable(table, enumRows.get(table.key));
        table.enumValues = enumRows.get(table.key) ?? [];
      }
      tables.set(table.key, table);
    });
  }

  // 2–5. the objects of each table. In upstream v1.3's order (Cache.hs: alignExtraTableInfo, then
  // per table): first the relationships and then the computed fields of tables that are not there,
  // then each table's relationships and computed fields; then the permissions and then the event
  // triggers of tables that are not there, then each table's permissions and event triggers. So an
  // inconsistency report (get_inconsistent_metadata, the errors of metadata operations) lists a
  // dropped table, its own objects, and then the objects of other tables that depended on it.
  const missing = md.tables.filter((tm) => !lookup(tm.table));
  const notThere = (tm: TableMetadata) => `table ${JSON.stringify(displayName(tm.table))} does not exist`;
  for (const tm of missing) {
    for (const [kind, def] of relationshipDefs(tm)) {
      inconsistent.push({ definition: relationshipDefinition(tm, def), reason: notThere(tm), type: kind === 'object' ? 'object_relation' : 'array_relation' });
    }
  }
  for (const tm of missing) {
    for (const def of tm.computed_fields) inconsistent.push({ definition: computedFieldDefinition(tm, def), reason: notThere(tm), type: 'computed_field' });
  }
  for (const tm of md.tables) {
    const table = lookup(tm.table);
    if (!table) continue;
    const prefix = `in table ${JSON.stringify(displayName(tm.table))}: `;
    // relationships
    for (const [kind, def] of relationshipDefs(tm)) {
      const type = kind === 'object' ? 'object_relation' : 'array_relation';
      attempt(type, relationshipDefinition(tm, def), `${prefix}in relationship ${JSON.stringify(def.name)}: `, () => {
        // eslint-disable-next-line @typescript-eslint/no-explicit-any -- stored relationship definition, validated when it was added
        const rel = resolveRelationship(table, kind, def.name, def.using as Record<string, any>, def.comment ?? null, db, lookup);
        checkFieldConflicts(table, def.name);
        if (table.relationships.has(def.name)) fail(`relationship ${JSON.stringify(def.name)} already exists`);
        table.relationships.set(def.name, rel);
        const dependent = `relationship ${displayName(tm.table)}.${def.name}`;
        const ref = { kind: 'relationship' as const, table: tm.table, name: def.name };
        for (const [l, r] of rel.mapping) {
          dependencies.push({ dependent, ref, on: { kind: 'column', table: tm.table, column: l } });
          dependencies.push({ dependent, ref, on: { kind: 'column', table: rel.remoteTable, column: r } });
        }
        dependencies.push({ dependent, ref, on: { kind: 'table', table: rel.remoteTable } });
        if (rel.constraint) dependencies.push({ dependent, ref, on: { kind: 'constraint', ...rel.constraint } });
      });
    }
    // computed fields
    for (const def of tm.computed_fields) {
      attempt('computed_field', computedFieldDefinition(tm, def), `${prefix}in computed field ${JSON.stringify(def.name)}: `, () => {
        checkFieldConflicts(table, def.name);
        if (table.relationships.has(def.name)) fail(`conflicting definitions for field ${JSON.stringify(def.name)}`);
        const cf = resolveComputedField(table, def, db);
        table.computedFields.set(def.name, cf);
        // the function itself is followed by run_sql's schema diff (it need not be tracked)
        if (cf.returns.kind === 'table') {
          dependencies.push({
            dependent: computedFieldDependent(tm.table, def.name),
            ref: { kind: 'computed_field', table: tm.table, name: def.name },
            on: { kind: 'table', table: cf.returns.table },
          });
        }
      });
    }
  }

  for (const tm of missing) {
    for (const kind of PERMISSION_KINDS) {
      for (const def of tm[`${kind}_permissions`]) {
        inconsistent.push({ definition: permissionDefinition(tm, kind, def), reason: notThere(tm), type: `${kind}_permission` });
      }
    }
  }
  for (const tm of missing) {
    for (const et of tm.event_triggers) inconsistent.push({ definition: eventTriggerDefinition(tm, et), reason: notThere(tm), type: 'event_trigger' });
  }
  for (const tm of md.tables) {
    const table = lookup(tm.table);
    if (!table) continue;
    const prefix = `in table ${JSON.stringify(displayName(tm.table))}: `;
    // permissions
    for (const kind of PERMISSION_KINDS) {
      for (const def of tm[`${kind}_permissions`]) {
        const type = `${kind}_permission` as InconsistentType;
        attempt(type, permissionDefinition(tm, kind, def), `${prefix}in permission for role ${JSON.stringify(def.role)}: `, () => {
          if (def.role === 'admin') fail('cannot define permission for admin role');
          const perms: RolePermissions = table.permissions.get(def.role) ?? {};
          // eslint-disable-next-line @typescript-eslint/no-explicit-any -- stored permission definition, validated when it was added
          const deps = resolvePermission(table, kind, def.permission as any, perms, lookup);
          table.permissions.set(def.role, perms);
          roles.add(def.role);
          const dependent = `permission ${displayName(tm.table)}.${def.role}.${kind}`;
          const ref = { kind: 'permission' as const, table: tm.table, role: def.role, perm: kind };
          for (const c of deps.columns) dependencies.push({ dependent, ref, on: { kind: 'column', table: tm.table, column: c } });
          for (const r of deps.relationships) dependencies.push({ dependent, ref, on: { kind: 'relationship', table: tm.table, name: r } });
          for (const cf of deps.computedFields) dependencies.push({ dependent, ref, on: { kind: 'computed_field', table: tm.table, name: cf } });
          // eslint-disable-next-line @typescript-eslint/no-explicit-any -- stored permission definition, validated when it was added
          const p = def.permission as Record<string, any>;
          const typed = [...deps.literalColumns];
          for (const [col, v] of Object.entries((p.set ?? {}) as Record<string, unknown>)) {
            if (!isSessionVariable(v)) typed.push({ table: tm.table, column: col });
          }
          for (const t of typed) dependencies.push({ dependent, ref, on: { kind: 'column', table: t.table, column: t.column }, onType: true });
          for (const rt of deps.remote) {
            dependencies.push({ dependent, ref, on: { kind: 'table', table: rt.table } });
            for (const c of rt.columns) dependencies.push({ dependent, ref, on: { kind: 'column', table: rt.table, column: c } });
          }
          // relationships and computed fields used at any depth (also of other tables, through relationships)
          for (const u of deps.fields) dependencies.push({ dependent, ref, on: u });
        });
      }
    }
    // event triggers: the columns they listen to and send must exist
    for (const et of tm.event_triggers) {
      attempt('event_trigger', eventTriggerDefinition(tm, et), `${prefix}in event trigger ${JSON.stringify(et.name)}: `, () => {
        const ref = { kind: 'event_trigger' as const, table: tm.table, name: et.name };
        // a webhook (or header) from an environment variable that is not set cannot be delivered
        for (const v of unsetVariables({ names: [et.webhook_from_env], headers: et.headers })) fail(envNotSet(v).message);
        for (const op of ['insert', 'update', 'delete'] as const) {
          const spec = et.definition[op];
          if (!spec) continue;
          for (const list of [spec.columns, spec.payload]) {
            if (!Array.isArray(list)) continue;
            for (const c of list) {
              if (!table.columnsByName.has(c)) fail(`column ${JSON.stringify(c)} does not exist`);
              dependencies.push({ dependent: `event-trigger ${displayName(tm.table)}.${et.name}`, ref, on: { kind: 'column', table: tm.table, column: c } });
            }
          }
        }
      });
    }
  }

  // 6. functions
  for (const fm of md.functions) {
    attempt('function', fm.function, `in function ${JSON.stringify(displayName(fm.function))}: `, () => {
      const info = db.functions.get(qualifiedKey(fm.function));
      if (!info) fail(`no such function exists in postgres : ${JSON.stringify(displayName(fm.function))}`);
      const sessionArgument = fm.configuration?.session_argument;
      const problem = functionTrackingProblem(info!, sessionArgument, lookup);
      if (problem) fail(problem);
      const returnTable = { schema: info!.returnType.schema, name: info!.returnType.name };
      const inArgs = info!.args.filter((a) => a.mode === 'i' || a.mode === 'b');
      const firstDefault = inArgs.length - info!.defaultArgs;
      functions.set(qualifiedKey(fm.function), {
        name: fm.function,
        key: qualifiedKey(fm.function),
        info: info!,
        returnTable,
        sessionArgument,
        inputArgs: inArgs
          .map((a, i) => ({ name: argName(inArgs, i), type: a.type, typeSchema: a.typeSchema, hasDefault: i >= firstDefault }))
          .filter((a) => a.name !== sessionArgument),
        meta: fm,
      });
      dependencies.push({
        dependent: `function ${displayName(fm.function)}`,
        ref: { kind: 'function', function: fm.function },
        on: { kind: 'table', table: returnTable },
      });
    });
  }

  // 7. custom types
  const ct = md.custom_types ?? {};
  let customTypes = emptyCustomTypes();
  if (['input_objects', 'objects', 'scalars', 'enums'].some((k) => Array.isArray((ct as Record<string, unknown>)[k]))) {
    const problems = validateCustomTypes(ct, db.scalarTypes, lookup);
    if (problems.length) inconsistent.push({ definition: normalizeCustomTypes(ct), reason: customTypesReason(problems), type: 'custom_types' });
    else customTypes = resolveCustomTypes(ct, lookup);
  }

  // 8. actions (src/schema/actions.ts)
  const actions = resolveActions(md.actions, customTypes, db.scalarTypes, inconsistent, new Set([...tables.values()].map((t) => qualifiedGqlName(t.name))));
  for (const a of actions.values()) for (const r of a.roles) roles.add(r);

  // 9. inherited roles (document/inherited.ts): mutations and actions here, select in permissions/view.ts
  const inheritedRoles = resolveInheritedRoles(md, tables, actions, inconsistent);
  for (const r of inheritedRoles.keys()) roles.add(r);

  const rest = resolveRestEndpoints(md, inconsistent);
  return {
    resourceVersion,
    metadata: md,
    db,
    tables,
    functions,
    inconsistent,
    dependencies,
    roles,
    inheritedRoles,
    perRole: new BoundedRoleCache(roleCacheMaxBytes),
    customTypes,
    actions,
    rest,
    extensions: [],
  };
}

/**
 * The inherited roles' insert/update/delete permissions and actions, in dependency order (an
 * inherited role after those in its set). A permission the role defines itself is kept; otherwise it
 * inherits its roles' permission of that kind when all of them that have one have the same one (roles
 * without one do not count), and when they differ the role has none on that table and the pair is
 * reported as inconsistent (Hasura v2's rule). An action is the role's when any role of its set may
 * call it. A cycle (refused when added) makes every role on it inconsistent.
 */
function resolveInheritedRoles(
  md: Metadata,
  tables: Map<string, TableModel>,
  actions: SchemaCache['actions'],
  inconsistent: InconsistentObject[],
): Map<string, string[]> {
  const all = new Map<string, string[]>();
  const cyclic = new Set(roleCycles(md.inherited_roles).flat());
  for (const r of md.inherited_roles) {
    if (cyclic.has(r.role_name)) {
      inconsistent.push({
        definition: r,
        reason: `the inherited role ${JSON.stringify(r.role_name)} is on a cycle of inherited roles`,
        type: 'inherited_role',
      });
    } else {
      all.set(r.role_name, r.role_set);
    }
  }
  for (const name of orderInheritedRoles(all)) {
    const set = all.get(name)!;
    const def = md.inherited_roles.find((r) => r.role_name === name)!;
    for (const t of tables.values()) {
      const own = t.permissions.get(name) ?? {};
      let changed = false;
      for (const kind of ['insert', 'update', 'delete'] as const) {
        if (own[kind]) continue;
        const given = set.map((r) => ({ role: r, p: t.permissions.get(r)?.[kind] })).filter((x) => x.p !== undefined);
        if (given.length === 0) continue;
        const keys = given.map((x) => mutationPermissionKey(kind, x.p!));
        if (keys.every((k) => k === keys[0])) {
          // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the same kind's model, copied as is
          (own as any)[kind] = given[0]!.p;
          changed = true;
        } else {
          inconsistent.push({
            definition: { ...def, table: t.name, permission_type: kind },
            reason:
              `in table ${JSON.stringify(displayName(t.name))}: the inherited role ${JSON.stringify(name)} cannot inherit the ${kind} permission: ` +
              `the ${kind} permissions of its roles ${given.map((x) => JSON.stringify(x.role)).join(', ')} differ; define an ${kind} permission for ${JSON.stringify(name)} on this table`,
            type: 'inherited_role',
          });
        }
      }
      if (changed) t.permissions.set(name, own);
    }
    for (const a of actions.values()) if (set.some((r) => a.roles.has(r))) a.roles.add(name);
  }
  return all;
}

/** What makes two permissions of one kind the same (their definitions, columns in table order, keys sorted). */
function mutationPermissionKey(kind: 'insert' | 'update' | 'delete', p: NonNullable<RolePermissions['insert' | 'update' | 'delete']>): string {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the three models share the keys read here
  const m = p as any;
  const parts = { kind, columns: m.columns ?? null, filter: m.filter ?? null, check: m.check ?? null, set: m.set ?? null, backendOnly: m.backendOnly ?? null };
  return stableJson(parts);
}

function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * A relationship or computed field may not be named like a column of its
 * table: neither its PostgreSQL name (even when the column has a custom
 * GraphQL name) nor another column's custom GraphQL name.
 */
function checkFieldConflicts(table: TableModel, name: string): void {
  // reported without the "in table …: in relationship …:" context, as Hasura does
  const bare = (m: string) => new Inconsistency(m, 'constraint-violation', true);
  if (table.columnsByName.has(name)) throw bare('field definition conflicts with postgres column');
  const custom = table.columns.find((c) => c.gqlName === name);
  if (custom) throw bare(`field definition conflicts with custom field name for postgres column ${JSON.stringify(custom.name)}`);
}

/** Unnamed arguments are `arg_1`, `arg_2`, … counting only the unnamed ones (as Hasura names them). */
function argName(args: Array<{ name: string | null }>, i: number): string {
  const a = args[i]!;
  if (a.name) return a.name;
  return `arg_${args.slice(0, i + 1).filter((x) => !x.name).length}`;
}

/** GraphQL enum value names: names, but not `true`, `false` or `null`. */
const isEnumValueName = (v: string) => /^[_A-Za-z][_0-9A-Za-z]*$/.test(v) && !['true', 'false', 'null'].includes(v);

/**
 * An enum table has a one-column text primary key, at most one other (text) column and rows whose
 * values are GraphQL enum value names. Checked at every schema build: the rows may change at any time.
 */
function validateEnumTable(t: TableModel, rows: Array<{ value: string }> | undefined): void {
  const problems: string[] = [];
  const pk = t.primaryKey;
  let key: ColumnModel | undefined;
  if (!pk || pk.length === 0) problems.push('the table must have a primary key');
  else if (pk.length > 1) problems.push(`the table’s primary key must not span multiple columns (${[...pk].sort().join(', ')})`);
  else {
    const col = t.columnsByName.get(pk[0]!)!;
    if (col.type !== 'text')
      problems.push(`the table’s primary key (${JSON.stringify(col.name)}) must have type "text", not type ${JSON.stringify(col.formatted)}`);
    else key = col;
  }
  // without a usable primary key every column counts as an extra one
  const others = t.columns.filter((c) => c !== key);
  if (others.length === 1 && others[0]!.type !== 'text') {
    problems.push(`the table’s comment column (${JSON.stringify(others[0]!.name)}) must have type "text", not type ${JSON.stringify(others[0]!.formatted)}`);
  } else if (others.length > 1) {
    const names = others
      .map((c) => c.name)
      .sort()
      .join(', ');
    problems.push(`the table must have exactly one primary key and optionally one comment column, not ${others.length} columns (${names})`);
  }
  if (key && rows) {
    if (rows.length === 0) problems.push('the table must have at least one row');
    const bad = rows
      .map((r) => r.value)
      .filter((v) => !isEnumValueName(v))
      .sort();
    if (bad.length) {
      const q = bad.map((v) => JSON.stringify(v));
      problems.push(
        bad.length === 1
          ? `the value ${q[0]} is not a valid GraphQL enum value name`
          : `the values ${q.length === 2 ? `${q[0]} and ${q[1]}` : `${q.slice(0, -1).join(', ')}, and ${q[q.length - 1]}`} are not valid GraphQL enum value names`,
      );
    }
  }
  if (problems.length === 1) fail(`the table ${JSON.stringify(displayName(t.name))} cannot be used as an enum because ${problems[0]}`);
  if (problems.length > 1) {
    fail(
      `the table ${JSON.stringify(displayName(t.name))} cannot be used as an enum for the following reasons:\n${problems.map((p) => `  • ${p}\n`).join('')}`,
    );
  }
}

function resolveRelationship(
  table: TableModel,
  kind: 'object' | 'array',
  name: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- stored relationship definition, validated when it was added
  using: Record<string, any>,
  comment: string | null,
  db: DbIntrospection,
  lookup: (t: QualifiedTable) => TableModel | undefined,
): RelationshipModel {
  if (using.manual_configuration) {
    const mc = using.manual_configuration;
    const remoteTable = mc.remote_table as QualifiedTable;
    const remote = lookup(remoteTable);
    if (!remote) fail(`table ${JSON.stringify(displayName(remoteTable))} does not exist`);
    const mapping: Array<[string, string]> = Object.entries(mc.column_mapping as Record<string, string>);
    for (const [l, r] of mapping) {
      if (!table.columnsByName.has(l)) fail(`no such column exists : ${JSON.stringify(l)}`);
      if (!remote!.columnsByName.has(r)) fail(`no such column exists : ${JSON.stringify(r)}`);
    }
    return { name, kind, table: table.name, remoteTable, mapping, viaLocalForeignKey: false, comment };
  }
  const fk = using.foreign_key_constraint_on;
  if (kind === 'object') {
    const col = fk as string;
    if (!table.columnsByName.has(col)) fail(`no such column exists : ${JSON.stringify(col)}`);
    const fks = table.info.foreignKeys.filter((f) => f.columns.length === 1 && f.columns[0] === col);
    if (fks.length === 0) fail('no foreign constraint exists on the given column');
    if (fks.length > 1) fail('more than one foreign key constraint exists on the given column');
    const f = fks[0]!;
    // reported without the relationship's context, as upstream's dependency resolution does
    if (!lookup(f.refTable)) throw new Inconsistency(`table ${JSON.stringify(displayName(f.refTable))} is not tracked`, 'constraint-violation', true);
    return {
      name,
      kind,
      table: table.name,
      remoteTable: f.refTable,
      mapping: f.columns.map((c, i) => [c, f.refColumns[i]!]),
      viaLocalForeignKey: true,
      constraint: { table: table.name, name: f.name },
      comment,
    };
  }
  const remoteTable = fk.table as QualifiedTable;
  const remoteInfo = db.tables.get(qualifiedKey(remoteTable));
  if (!remoteInfo || !lookup(remoteTable)) fail(`table ${JSON.stringify(displayName(remoteTable))} does not exist`);
  const col = fk.column as string;
  if (!remoteInfo!.columns.some((c) => c.name === col)) fail(`no such column exists : ${JSON.stringify(col)}`);
  const fks = remoteInfo!.foreignKeys.filter(
    (f) => f.columns.length === 1 && f.columns[0] === col && f.refTable.schema === table.name.schema && f.refTable.name === table.name.name,
  );
  if (fks.length === 0) fail('no foreign constraint exists on the given column');
  if (fks.length > 1) fail('more than one foreign key constraint exists on the given column');
  const f = fks[0]!;
  return {
    name,
    kind,
    table: table.name,
    remoteTable,
    mapping: f.refColumns.map((c, i) => [c, f.columns[i]!]),
    viaLocalForeignKey: false,
    constraint: { table: remoteTable, name: f.name },
    comment,
  };
}

function resolveComputedField(table: TableModel, def: TableMetadata['computed_fields'][number], db: DbIntrospection): ComputedFieldModel {
  const fn = def.definition.function;
  const info = db.functions.get(qualifiedKey(fn));
  if (!info) fail(`no such function exists in postgres : ${JSON.stringify(displayName(fn))}`);
  const f = info!;
  const fname = JSON.stringify(displayName(fn));
  if (f.overloaded) fail(`function ${fname} is overloaded. Overloaded functions are not supported`);
  const inArgs = f.args.filter((a) => a.mode === 'i' || a.mode === 'b');
  if (inArgs.length === 0) {
    fail(
      `the computed field ${JSON.stringify(def.name)} cannot be added to table ${JSON.stringify(displayName(table.name))} because the function ${fname} has no input arguments`,
    );
  }
  const problems: string[] = [];
  if (f.volatility === 'v') problems.push(`the function ${fname} is of type VOLATILE; cannot be added as a computed field`);
  let tableArgIndex = 0;
  if (def.definition.table_argument !== undefined) {
    tableArgIndex = inArgs.findIndex((a) => a.name === def.definition.table_argument);
    if (tableArgIndex < 0) problems.push(`${JSON.stringify(def.definition.table_argument)} is not an input argument of the function ${fname}`);
  }
  if (tableArgIndex >= 0) {
    const a = inArgs[tableArgIndex]!;
    const argTable = db.tables.get(`${a.typeSchema}.${a.type}`);
    const which = def.definition.table_argument !== undefined ? `${JSON.stringify(def.definition.table_argument)} argument` : 'first argument';
    if (!argTable) {
      problems.push(`${which} of the function ${fname} is not COMPOSITE type`);
    }
    if (a.typeSchema !== table.name.schema || a.type !== table.name.name) {
      problems.push(
        `${which} of the function ${fname} of type ${JSON.stringify(`${a.typeSchema}.${a.type}`)} is not the table to which the computed field is being added`,
      );
    }
  }
  let sessionArgIndex: number | undefined;
  if (def.definition.session_argument !== undefined) {
    sessionArgIndex = inArgs.findIndex((a) => a.name === def.definition.session_argument);
    if (sessionArgIndex < 0) {
      problems.push(`${JSON.stringify(def.definition.session_argument)} is not an input argument of the function ${fname}`);
      sessionArgIndex = undefined;
    } else if (!['json', 'jsonb'].includes(inArgs[sessionArgIndex]!.type)) {
      problems.push(`${JSON.stringify(def.definition.session_argument)} argument of the function ${fname} is not of type JSON`);
    }
  }
  if (f.returnType.isTable && !db.tables.has(`${f.returnType.schema}.${f.returnType.name}`)) {
    problems.push(`the function ${fname} returns a table that does not exist`);
  }
  const tname = JSON.stringify(displayName(table.name));
  if (problems.length === 1) fail(`the computed field ${JSON.stringify(def.name)} cannot be added to table ${tname} because ${problems[0]}`);
  if (problems.length > 1) {
    fail(
      `the computed field ${JSON.stringify(def.name)} cannot be added to table ${tname} for the following reasons:\n${problems.map((p) => `  • ${p}\n`).join('')}`,
    );
  }
  const firstDefault = inArgs.length - f.defaultArgs;
  return {
    name: def.name,
    table: table.name,
    function: f,
    tableArgIndex,
    sessionArgIndex,
    returns: f.returnType.isTable
      ? { kind: 'table', table: { schema: f.returnType.schema, name: f.returnType.name }, set: f.returnsSet }
      : { kind: 'scalar', type: f.returnType.name, typeSchema: f.returnType.schema },
    inputArgs: inArgs
      .map((a, i) => ({ name: argName(inArgs, i), type: a.type, typeSchema: a.typeSchema, hasDefault: i >= firstDefault, i }))
      .filter((a) => a.i !== tableArgIndex && a.i !== sessionArgIndex)
      .map(({ i: _i, ...rest }) => rest),
    def,
    comment: def.comment ?? null,
  };
}

/**
 * Why a function cannot be tracked (with its session argument), in upstream's words, or undefined:
 * `the function "f" cannot be tracked because <reason>` / `… for the following reasons: …`. The
 * schema build reports it as the function's inconsistency; track_function answers it as
 * `not-supported` before changing anything (upstream's mkFunctionInfo).
 */
const PERMISSION_KINDS = ['insert', 'select', 'update', 'delete'] as const;

function relationshipDefs(tm: TableMetadata) {
  return [...tm.object_relationships.map((def) => ['object', def] as const), ...tm.array_relationships.map((def) => ['array', def] as const)];
}

/** The definitions inconsistency reports show (upstream's: the object as stored, with its table). */
function relationshipDefinition(tm: TableMetadata, def: TableMetadata['object_relationships'][number] | TableMetadata['array_relationships'][number]) {
  return { using: def.using, name: def.name, comment: def.comment ?? null, table: tm.table };
}

function computedFieldDefinition(tm: TableMetadata, def: TableMetadata['computed_fields'][number]) {
  return { definition: def.definition, name: def.name, comment: def.comment ?? null, table: tm.table };
}

/** upstream v1.3's (mkEventTriggerMetadataObject): the table and the trigger's configuration as stored */
function eventTriggerDefinition(tm: TableMetadata, et: TableMetadata['event_triggers'][number]) {
  return { table: tm.table, configuration: et };
}

function permissionDefinition(tm: TableMetadata, kind: PermissionKind, def: { role: string; comment?: string | null; permission: object }) {
  return { role: def.role, comment: def.comment ?? null, permission: normalizePermission(kind, def.permission as Record<string, unknown>), table: tm.table };
}

export function functionTrackingProblem(
  f: FunctionIntrospection,
  sessionArgument: string | undefined,
  lookup: (t: QualifiedTable) => TableModel | undefined,
): string | undefined {
  const name = JSON.stringify(displayName(f));
  if (f.overloaded) return `function ${name} is overloaded. Overloaded functions are not supported`;
  // in the order and words of upstream v1.3's mkFunctionInfo (every reason is listed)
  const problems: string[] = [];
  if (f.args.some((a) => a.mode === 'v')) problems.push('function with "VARIADIC" parameters are not supported');
  if (f.returnType.category !== 'C') problems.push('the function does not return a "COMPOSITE" type');
  if (!f.returnsSet) problems.push('the function does not return a SETOF');
  if (!f.returnType.isTable) problems.push('the function does not return a SETOF table');
  if (f.volatility === 'v') problems.push('function of type "VOLATILE" is not supported now');
  if (f.args.some((a) => a.mode !== 'i' && a.mode !== 'v')) problems.push('the function has arguments that are not IN arguments');
  if (sessionArgument !== undefined) {
    const a = f.args.find((x) => (x.mode === 'i' || x.mode === 'b') && x.name === sessionArgument);
    if (!a) problems.push(`given session argument ${JSON.stringify(sessionArgument)} not the input argument of the function`);
    else if (a.type !== 'json' && a.type !== 'jsonb') problems.push(`given session argument ${JSON.stringify(sessionArgument)} is not of type json`);
  }
  if (problems.length === 1) return `the function ${name} cannot be tracked because ${problems[0]}`;
  if (problems.length > 1) return `the function ${name} cannot be tracked for the following reasons:\n${problems.map((p) => `  • ${p}\n`).join('')}`;
  const rt = { schema: f.returnType.schema, name: f.returnType.name };
  if (!lookup(rt)) return `the function ${name} cannot be tracked because the returning table ${JSON.stringify(displayName(rt))} is not tracked`;
  return undefined;
}

function expandColumns(table: TableModel, cols: ColumnList | undefined): string[] {
  if (cols === undefined || cols === '*') return table.columns.map((c) => c.name);
  for (const c of cols) {
    if (!table.columnsByName.has(c)) {
      if (table.relationships.has(c)) fail(`relationships can't be used as columns: ${JSON.stringify(c)}`);
      fail(`column ${JSON.stringify(c)} does not exist`);
    }
  }
  return table.columns.map((c) => c.name).filter((n) => cols.includes(n));
}

interface PermDeps {
  columns: Set<string>;
  relationships: Set<string>;
  computedFields: Set<string>;
  remote: Array<{ table: QualifiedTable; columns: Set<string> }>;
  /** every relationship and computed field a boolean expression uses, with its table */
  fields: Array<{ kind: 'relationship' | 'computed_field'; table: QualifiedTable; name: string }>;
  /** columns compared with static values in filters and checks */
  literalColumns: Array<{ table: QualifiedTable; column: string }>;
}

function resolvePermission(
  table: TableModel,
  kind: PermissionKind,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- stored permission definition, validated when it was added
  p: Record<string, any>,
  perms: RolePermissions,
  lookup: (t: QualifiedTable) => TableModel | undefined,
): PermDeps {
  const deps: PermDeps = { columns: new Set(), relationships: new Set(), computedFields: new Set(), remote: [], fields: [], literalColumns: [] };
  /** the expression parsed once (its IR serves every request); what it uses becomes dependencies */
  const useExp = (e: unknown): FilterExp => {
    const exp = permissionExp(lookup, table, e);
    const r = permissionExpUses(exp, table);
    r.columns.forEach((c) => deps.columns.add(c));
    r.relationships.forEach((c) => deps.relationships.add(c));
    deps.remote.push(...r.remote);
    deps.fields.push(...r.fields);
    deps.literalColumns.push(...r.literalColumns);
    return exp;
  };
  const useCols = (cols: string[]) => cols.forEach((c) => deps.columns.add(c));
  const presets = (set: Record<string, unknown> | undefined) => {
    for (const c of Object.keys(set ?? {})) {
      if (!table.columnsByName.has(c)) fail(`column ${JSON.stringify(c)} does not exist`);
      deps.columns.add(c);
    }
    return { ...(set ?? {}) };
  };
  switch (kind) {
    case 'select': {
      const columns = expandColumns(table, p.columns);
      if (p.columns !== '*') useCols(columns);
      const cfs: string[] = p.computed_fields ?? [];
      for (const cf of cfs) {
        const m = table.computedFields.get(cf);
        if (!m) fail(`computed field ${JSON.stringify(cf)} does not exist`);
        if (m!.returns.kind === 'table') {
          fail(
            `select permissions on computed field ${JSON.stringify(cf)} are auto-derived from the permissions on its returning table ${JSON.stringify(displayName(m!.returns.table))} and cannot be specified manually`,
          );
        }
        deps.computedFields.add(cf);
      }
      const filterExp = useExp(p.filter);
      if (p.limit !== undefined && p.limit !== null && (!Number.isInteger(p.limit) || p.limit < 0)) fail('unexpected negative value');
      perms.select = { columns, computedFields: cfs, filter: p.filter ?? {}, filterExp, limit: p.limit ?? null, allowAggregations: !!p.allow_aggregations };
      break;
    }
    case 'insert': {
      const columns = expandColumns(table, p.columns);
      if (p.columns !== undefined && p.columns !== '*') useCols(columns);
      const checkExp = useExp(p.check);
      perms.insert = { check: p.check ?? {}, checkExp, set: presets(p.set), columns, backendOnly: !!p.backend_only };
      break;
    }
    case 'update': {
      const columns = expandColumns(table, p.columns);
      if (p.columns !== '*') useCols(columns);
      const filterExp = useExp(p.filter);
      const checkExp = p.check ? useExp(p.check) : null;
      perms.update = { columns, filter: p.filter ?? {}, filterExp, check: p.check ?? null, checkExp, set: presets(p.set) };
      break;
    }
    case 'delete':
      perms.delete = { filter: p.filter ?? {}, filterExp: useExp(p.filter) };
      break;
  }
  return deps;
}

/** The permission as Hasura echoes it in inconsistency definitions (defaults filled in). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- stored permission definition, validated when it was added
export function normalizePermission(kind: PermissionKind, p: Record<string, any>): Record<string, unknown> {
  switch (kind) {
    case 'select': {
      const out: Record<string, unknown> = {
        allow_aggregations: !!p.allow_aggregations,
        computed_fields: p.computed_fields ?? [],
        columns: p.columns,
        filter: p.filter,
      };
      if (p.limit !== undefined && p.limit !== null) out.limit = p.limit;
      return out;
    }
    case 'insert':
      return { check: p.check, set: p.set ?? {}, columns: p.columns ?? [], backend_only: !!p.backend_only };
    case 'update':
      return { columns: p.columns, filter: p.filter, check: p.check ?? null, set: p.set ?? {} };
    case 'delete':
      return { filter: p.filter };
  }
}
