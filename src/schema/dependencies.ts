/**
 * Which metadata objects depend on a schema object, and removing them
 * (cascade). Dependencies are collected by the schema builder.
 */
import { SvcError } from '../errors.js';
import type { SchemaCache } from './model.js';
import type { Dependency, InconsistentObject, MetadataRef, SchemaObjectRef } from '../model/tables.js';
import { displayName, sameName, type Metadata, type QualifiedTable } from '../model/metadata.js';
import { dependentObjects } from '../document/messages.js';

export function refMatches(on: SchemaObjectRef, target: SchemaObjectRef): boolean {
  if (on.kind !== target.kind) {
    // a dependency on a column or a constraint is also a dependency on its table
    return target.kind === 'table' && (on.kind === 'column' || on.kind === 'constraint') && sameName(on.table, target.table);
  }
  switch (target.kind) {
    case 'table':
      return sameName((on as typeof target).table, target.table);
    case 'column':
      return sameName((on as typeof target).table, target.table) && (on as typeof target).column === target.column;
    case 'constraint':
      return sameName((on as typeof target).table, target.table) && (on as typeof target).name === target.name;
    case 'function':
      return sameName((on as typeof target).function, target.function);
    case 'relationship':
    case 'computed_field':
      return sameName((on as typeof target).table, target.table) && (on as typeof target).name === target.name;
    case 'remote_schema':
      return (on as typeof target).name === target.name;
  }
}

/** Dependents of any of the targets, excluding objects owned by `ownedBy` tables (they go with the table). */
export function dependentsOf(cache: SchemaCache, targets: SchemaObjectRef[], ownedBy: QualifiedTable[] = []): Dependency[] {
  const out = new Map<string, Dependency>();
  for (const d of cache.dependencies) {
    if (ownedBy.some((t) => refTable(d.ref) && sameName(refTable(d.ref)!, t))) continue;
    if (targets.some((t) => refMatches(d.on, t))) out.set(d.dependent, d);
  }
  // transitive: dropping a relationship drops permissions that use it, and so on
  let grew = true;
  while (grew) {
    grew = false;
    for (const d of cache.dependencies) {
      if (out.has(d.dependent)) continue;
      if (ownedBy.some((t) => refTable(d.ref) && sameName(refTable(d.ref)!, t))) continue;
      for (const x of out.values()) {
        const asObj = refAsSchemaObject(x.ref);
        if (asObj && refMatches(d.on, asObj)) {
          out.set(d.dependent, d);
          grew = true;
          break;
        }
      }
    }
  }
  return [...out.values()];
}

function refTable(r: MetadataRef): QualifiedTable | undefined {
  return r.kind === 'function' ? undefined : r.table;
}

function refAsSchemaObject(r: MetadataRef): SchemaObjectRef | undefined {
  if (r.kind === 'relationship') return { kind: 'relationship', table: r.table, name: r.name };
  if (r.kind === 'computed_field') return { kind: 'computed_field', table: r.table, name: r.name };
  if (r.kind === 'table') return { kind: 'table', table: r.table };
  if (r.kind === 'function') return { kind: 'function', function: r.function };
  return undefined;
}

/** How dependency errors name a computed field (as upstream: `computed field author.full_name`). */
export const computedFieldDependent = (table: QualifiedTable, name: string): string => `computed field ${displayName(table)}.${name}`;

export function dependencyError(deps: Dependency[], path: string): SvcError {
  const names = [...new Set(deps.map((d) => d.dependent))].sort();
  return dependentObjects(names, path);
}

/** Remove one metadata object from a metadata document (in place). */
export function removeRef(md: Metadata, ref: MetadataRef): void {
  if (ref.kind === 'function') {
    md.functions = md.functions.filter((f) => !sameName(f.function, ref.function));
    return;
  }
  const t = md.tables.find((x) => sameName(x.table, ref.table));
  if (!t) return;
  switch (ref.kind) {
    case 'table':
      md.tables = md.tables.filter((x) => x !== t);
      break;
    case 'relationship':
      t.object_relationships = t.object_relationships.filter((r) => r.name !== ref.name);
      t.array_relationships = t.array_relationships.filter((r) => r.name !== ref.name);
      break;
    case 'computed_field':
      t.computed_fields = t.computed_fields.filter((r) => r.name !== ref.name);
      break;
    case 'permission': {
      const k = `${ref.perm}_permissions` as const;
      (t[k] as Array<{ role: string }>) = (t[k] as Array<{ role: string }>).filter((p) => p.role !== ref.role);
      break;
    }
    case 'event_trigger':
      t.event_triggers = t.event_triggers.filter((e) => e.name !== ref.name);
      break;
    case 'remote_relationship':
      t.remote_relationships = t.remote_relationships.filter((e) => e.name !== ref.name);
      break;
  }
}

/** Fails with dependency-error unless cascade; with cascade removes the dependents. */
export function dropDependents(
  md: Metadata,
  cache: SchemaCache,
  targets: SchemaObjectRef[],
  cascade: boolean,
  path: string,
  ownedBy: QualifiedTable[] = [],
): void {
  const deps = dependentsOf(cache, targets, ownedBy);
  if (deps.length === 0) return;
  if (!cascade) throw dependencyError(deps, path);
  for (const d of deps) removeRef(md, d.ref);
}

/** The metadata object an inconsistency is about (undefined for kinds outside tables and functions). */
export function inconsistentRef(o: InconsistentObject): MetadataRef | undefined {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- stored metadata JSON, validated when it was added
  const d = o.definition as Record<string, any>;
  const table = d?.table as QualifiedTable;
  switch (o.type) {
    case 'table':
      return { kind: 'table', table: d as QualifiedTable };
    case 'function':
      return { kind: 'function', function: d as QualifiedTable };
    case 'object_relation':
    case 'array_relation':
      return { kind: 'relationship', table, name: d.name };
    case 'computed_field':
      return { kind: 'computed_field', table, name: d.name };
    case 'insert_permission':
    case 'select_permission':
    case 'update_permission':
    case 'delete_permission':
      return { kind: 'permission', table, role: d.role, perm: o.type.replace('_permission', '') as 'select' };
    case 'event_trigger':
      // upstream's definition of an event trigger: {table, configuration} (the trigger as stored)
      return { kind: 'event_trigger', table, name: d.configuration?.name ?? d.name };
    case 'remote_relationship':
      return { kind: 'remote_relationship', table, name: d.name };
    default:
      return undefined;
  }
}

/** An inconsistent object's identity: its kind and name, not its definition (as upstream's MetadataObjId). */
function inconsistencyId(o: InconsistentObject): string {
  const ref = inconsistentRef(o);
  if (ref) return JSON.stringify(ref);
  const name = (o.definition as { name?: unknown } | null)?.name;
  return JSON.stringify([o.type, typeof name === 'string' ? name : null]);
}

/** The objects of `after` that were not inconsistent in `before`. */
export function newInconsistencies(before: InconsistentObject[], after: InconsistentObject[]): InconsistentObject[] {
  const known = new Set(before.map(inconsistencyId));
  return after.filter((o) => !known.has(inconsistencyId(o)));
}

/**
 * run_sql left metadata objects inconsistent (a renamed tracked function, an enum table whose rows are no
 * longer GraphQL names, a column renamed to a relationship's name, …): refused, as upstream does.
 */
export function newInconsistencyAfterSql(fresh: InconsistentObject[], path: string): SvcError {
  return new SvcError(500, 'unexpected', 'cannot continue due to newly found inconsistent metadata', path, fresh);
}

/** The metadata document's definition of the object an inconsistency is about (JSON), if it has one. */
function definitionIn(md: Metadata, o: InconsistentObject): string | undefined {
  const ref = inconsistentRef(o);
  const name = (o.definition as { name?: unknown } | null)?.name;
  if (!ref) {
    if (o.type === 'inherited_role') return JSON.stringify(md.inherited_roles.find((r) => r.role_name === (o.definition as { role_name?: unknown }).role_name));
    const list =
      o.type === 'remote_schema'
        ? md.remote_schemas
        : o.type === 'action'
          ? md.actions
          : o.type === 'cron_trigger'
            ? md.cron_triggers
            : o.type === 'endpoint'
              ? md.rest_endpoints
              : undefined;
    return JSON.stringify(o.type === 'custom_types' ? md.custom_types : list?.find((x) => x.name === name));
  }
  if (ref.kind === 'function') return JSON.stringify(md.functions.find((f) => sameName(f.function, ref.function)));
  const t = md.tables.find((x) => sameName(x.table, ref.table));
  if (!t) return undefined;
  switch (ref.kind) {
    case 'table':
      return JSON.stringify([t.is_enum ?? false, t.configuration ?? null]);
    case 'relationship':
      return JSON.stringify([...t.object_relationships, ...t.array_relationships].find((r) => r.name === ref.name));
    case 'computed_field':
      return JSON.stringify(t.computed_fields.find((r) => r.name === ref.name));
    case 'permission':
      return JSON.stringify((t[`${ref.perm}_permissions`] as Array<{ role: string }>).find((p) => p.role === ref.role));
    case 'event_trigger':
      return JSON.stringify(t.event_triggers.find((r) => r.name === ref.name));
    case 'remote_relationship':
      return JSON.stringify(t.remote_relationships.find((r) => r.name === ref.name));
  }
}

/**
 * A metadata change left objects newly inconsistent. When they include objects the change defined or
 * redefined, it is their fault: constraint-violation with their reasons. Otherwise the change broke
 * other objects (a custom column name taking a relationship's name): `unexpected`, listing them —
 * upstream's buildSchemaCacheFor.
 */
export function newInconsistencyAfterChange(fresh: InconsistentObject[], before: Metadata, after: Metadata, path: string): SvcError {
  const own = fresh.filter((o) => definitionIn(before, o) !== definitionIn(after, o));
  if (own.length) return new SvcError(400, 'constraint-violation', own.map((o) => o.reason).join(', '), path, own);
  return new SvcError(400, 'unexpected', 'cannot continue due to new inconsistent metadata', path, fresh);
}
