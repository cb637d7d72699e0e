/**
 * Which metadata objects depend on a schema object, and removing them
 * (cascade). Dependencies are collected by the schema builder.
 */
import { SvcError } from '../errors.js';
import type { Dependency, MetadataRef, SchemaCache, SchemaObjectRef } from '../schema/model.js';
import { sameName, type Metadata, type QualifiedTable } from './types.js';

export function refMatches(on: SchemaObjectRef, target: SchemaObjectRef): boolean {
  if (on.kind !== target.kind) {
    // a dependency on a column is also a dependency on its table
    return target.kind === 'table' && on.kind === 'column' && sameName(on.table, target.table);
  }
  switch (target.kind) {
    case 'table':
      return sameName((on as typeof target).table, target.table);
    case 'column':
      return sameName((on as typeof target).table, target.table) && (on as typeof target).column === target.column;
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

export function dependencyError(deps: Dependency[], path: string): SvcError {
  const names = [...new Set(deps.map((d) => d.dependent))].sort();
  return new SvcError(400, 'dependency-error', `cannot drop due to the following dependent objects : ${names.join(', ')}`, path);
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
export function dropDependents(md: Metadata, cache: SchemaCache, targets: SchemaObjectRef[], cascade: boolean, path: string, ownedBy: QualifiedTable[] = []): void {
  const deps = dependentsOf(cache, targets, ownedBy);
  if (deps.length === 0) return;
  if (!cascade) throw dependencyError(deps, path);
  for (const d of deps) removeRef(md, d.ref);
}
