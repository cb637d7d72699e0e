/**
 * Resolving remote schemas and remote relationships against a freshly built schema cache
 * (`schema/load.ts` calls `attachRemote` after the pure builder): introspections from the store
 * (fetched when missing), type and root-field conflicts with the database schema and with earlier
 * remotes, remote relationship validation and dependencies. What fails becomes an inconsistent
 * object; the rest keeps serving.
 */
import type {
  IntrospectionInputTypeRef,
  IntrospectionObjectType,
  IntrospectionType,
  IntrospectionTypeRef,
  IntrospectionInterfaceType,
  IntrospectionField,
} from 'graphql';
import { SvcError } from '../errors.js';
import { displayName, qualifiedKey, type Metadata, type RemoteRelationshipDef, type RemoteSchemaMetadata, type TableMetadata } from '../model/metadata.js';
import { buildRoleSchemaAsync } from '../schema/graphql/schema.js';
import { gqlScalarName } from '../schema/graphql/names.js';
import type { SchemaCache } from '../schema/model.js';
import type { ColumnModel, TableModel } from '../model/tables.js';
import type { RemoteIntrospection, RemoteStore } from './introspect.js';
import type { RemoteCacheModel, RemotePathStep, RemoteRelationshipModel, RemoteSchemaModel } from '../model/remote.js';

const BUILTIN_SCALARS = new Set(['Int', 'Float', 'String', 'Boolean', 'ID']);

export function remoteSchemaModel(name: string, r: RemoteIntrospection): RemoteSchemaModel {
  const s = r.schema;
  const types = new Map<string, IntrospectionType>();
  for (const t of s.types) if (!t.name.startsWith('__')) types.set(t.name, t);
  const obj = (n: { name: string } | null | undefined): IntrospectionObjectType | null => {
    const t = n ? types.get(n.name) : undefined;
    return t && t.kind === 'OBJECT' ? t : null;
  };
  const query = obj(s.queryType);
  if (!query) throw new SvcError(400, 'remote-schema-error', `query root type ${JSON.stringify(s.queryType?.name)} not found in the remote schema`);
  const mutation = obj(s.mutationType);
  const subscription = obj(s.subscriptionType);
  const rootTypes = new Set([query.name, mutation?.name, subscription?.name].filter((x): x is string => !!x));
  return { name, endpoint: r.endpoint, intro: s, types, query, mutation, subscription, rootTypes };
}

/** Root fields and types of a schema, for conflict checks. */
interface Names {
  roots: Set<string>;
  /** type name → JSON of its introspection (remotes) or 'db' */
  types: Map<string, string>;
}

/** (built in slices, as a role's schema for a request: a large remote's types do not hold the event loop) */
async function dbNames(cache: SchemaCache): Promise<Names> {
  const rs = await buildRoleSchemaAsync(cache, 'admin');
  const roots = new Set<string>([...Object.keys(rs.query.getFields()), ...Object.keys(rs.mutation?.getFields() ?? {})]);
  const types = new Map<string, string>();
  for (const [n, t] of Object.entries(rs.schema.getTypeMap())) {
    if (n.startsWith('__') || n === 'query_root' || n === 'mutation_root' || n === 'subscription_root') continue;
    types.set(n, t.constructor.name === 'GraphQLScalarType' ? 'scalar' : 'db');
  }
  return { roots, types };
}

/**
 * What makes two remotes' types of one name the same type (upstream v1.3 compares them without their
 * descriptions, and fields, arguments and values as maps): the type with every description left
 * out and every list sorted by name. The type is bounded (src/remote/bounds.ts) before it gets here.
 */
export function typeSignature(t: IntrospectionType): string {
  const byName = <T extends { name: string }>(xs: readonly T[] | null | undefined) =>
    xs ? [...xs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) : null;
  const value = (v: { name: string; type: unknown; defaultValue?: unknown }) => ({ name: v.name, type: v.type, defaultValue: v.defaultValue ?? null });
  const o = t as unknown as {
    kind: string;
    name: string;
    fields?: Array<{ name: string; type: unknown; args: Array<{ name: string; type: unknown; defaultValue?: unknown }>; isDeprecated?: boolean }> | null;
    inputFields?: Array<{ name: string; type: unknown; defaultValue?: unknown }> | null;
    enumValues?: Array<{ name: string; isDeprecated?: boolean }> | null;
    interfaces?: Array<{ name: string }> | null;
    possibleTypes?: Array<{ name: string }> | null;
  };
  return JSON.stringify({
    kind: o.kind,
    name: o.name,
    fields: byName(o.fields)?.map((f) => ({ name: f.name, type: f.type, args: byName(f.args)!.map(value) })) ?? null,
    inputFields: byName(o.inputFields)?.map(value) ?? null,
    enumValues: byName(o.enumValues)?.map((e) => e.name) ?? null,
    interfaces: byName(o.interfaces)?.map((i) => i.name) ?? null,
    possibleTypes: byName(o.possibleTypes)?.map((p) => p.name) ?? null,
  });
}

/** The conflicts of a remote with what is already in the schema (upstream's messages). */
export function remoteConflicts(m: RemoteSchemaModel, names: Names): string | null {
  const clashTypes: string[] = [];
  for (const [n, t] of m.types) {
    if (m.rootTypes.has(n) || BUILTIN_SCALARS.has(n)) continue;
    const seen = names.types.get(n);
    if (seen === undefined) continue;
    if (t.kind === 'SCALAR' && seen === 'scalar') continue;
    if (seen === typeSignature(t)) continue;
    clashTypes.push(n);
  }
  if (clashTypes.length) {
    return `types: [ ${clashTypes.join(', ')} ] have mismatch with current graphql schema. HINT: Types must be unique across all remote schemas.`;
  }
  const roots = [...m.query.fields, ...(m.mutation?.fields ?? [])].map((f) => f.name).filter((n) => !n.startsWith('__'));
  const clashRoots = roots.filter((n) => names.roots.has(n));
  if (clashRoots.length) {
    return `top-level nodes: [ ${[...new Set(clashRoots)].join(', ')} ] already exist in current graphql schema. HINT: Top-level nodes must be unique across all remote schemas.`;
  }
  return null;
}

/** The root fields and types of a schema cache: its database schema and its consistent remotes. */
export async function schemaNames(cache: SchemaCache, withRemotes = true): Promise<Names> {
  const names = await dbNames(cache);
  const remotes = [...(cache.remote?.schemas.values() ?? [])];
  if (!withRemotes) {
    // the admin schema includes the remotes' fields and types: take them out again
    for (const m of remotes) {
      for (const f of [...m.query.fields, ...(m.mutation?.fields ?? [])]) names.roots.delete(f.name);
      for (const n of m.types.keys()) if (names.types.get(n) !== undefined && !BUILTIN_SCALARS.has(n)) names.types.delete(n);
    }
    return names;
  }
  for (const m of remotes) addNames(m, names);
  return names;
}

/** track_table: a table whose GraphQL name is a remote's root field is refused (upstream's checkConflictingNode). */
export function checkRemoteRootConflict(cache: SchemaCache, name: string, path: string): void {
  for (const m of cache.remote?.schemas.values() ?? []) {
    if ([...m.query.fields, ...(m.mutation?.fields ?? [])].some((f) => f.name === name)) {
      throw new SvcError(400, 'remote-schema-conflicts', `node ${name} already exists in current graphql schema`, path);
    }
  }
}

function addNames(m: RemoteSchemaModel, names: Names): void {
  for (const [n, t] of m.types) if (!m.rootTypes.has(n) && !BUILTIN_SCALARS.has(n)) names.types.set(n, t.kind === 'SCALAR' ? 'scalar' : typeSignature(t));
  for (const f of [...m.query.fields, ...(m.mutation?.fields ?? [])]) names.roots.add(f.name);
}

/** Fills `cache.remote` (and its inconsistencies and dependencies) from the metadata. */
/** `generations`: the catalog's remote generations (a remote another instance reloaded is fetched anew). */
export async function attachRemote(cache: SchemaCache, md: Metadata, store: RemoteStore, generations: Map<string, number> = new Map()): Promise<void> {
  const model: RemoteCacheModel = { schemas: new Map(), relationships: new Map() };
  cache.remote = model;
  if (md.remote_schemas.length === 0 && !md.tables.some((t) => t.remote_relationships.length > 0)) return;
  const names = md.remote_schemas.length ? await dbNames(cache) : { roots: new Set<string>(), types: new Map<string, string>() };
  // remotes not fetched yet (start-up) are fetched concurrently: one slow remote costs its timeout once
  const loaded = await Promise.allSettled(md.remote_schemas.map((rs) => store.load(rs, generations.get(rs.name) ?? 0)));
  for (const [i, rs] of md.remote_schemas.entries()) {
    const definition = remoteSchemaDefinition(rs);
    let m: RemoteSchemaModel;
    try {
      const r = loaded[i]!;
      if (r.status === 'rejected') throw r.reason;
      m = remoteSchemaModel(rs.name, r.value);
    } catch (e) {
      cache.inconsistent.push({ definition, reason: e instanceof Error ? e.message : String(e), type: 'remote_schema' });
      continue;
    }
    const conflict = remoteConflicts(m, names);
    if (conflict) {
      cache.inconsistent.push({ definition, reason: conflict, type: 'remote_schema' });
      continue;
    }
    addNames(m, names);
    model.schemas.set(rs.name, m);
  }
  for (const tm of md.tables) {
    for (const def of tm.remote_relationships) {
      const definition = remoteRelationshipDefinition(tm, def);
      const table = cache.tables.get(qualifiedKey(tm.table));
      try {
        if (!table) throw new SvcError(400, 'not-exists', `table ${JSON.stringify(displayName(tm.table))} does not exist`);
        const rel = resolveRemoteRelationship(table, def, model);
        const list = model.relationships.get(table.key) ?? [];
        list.push(rel);
        model.relationships.set(table.key, list);
        const dependent = `remote_relationship ${displayName(tm.table)}.${def.name}`;
        const ref = { kind: 'remote_relationship' as const, table: tm.table, name: def.name };
        for (const c of rel.columns) cache.dependencies.push({ dependent, ref, on: { kind: 'column', table: tm.table, column: c.name } });
        cache.dependencies.push({ dependent, ref, on: { kind: 'remote_schema', name: rel.remote } });
      } catch (e) {
        cache.inconsistent.push({ definition, reason: e instanceof Error ? e.message : String(e), type: 'remote_relationship' });
      }
    }
  }
}

export function remoteSchemaDefinition(rs: RemoteSchemaMetadata): unknown {
  return { name: rs.name, definition: rs.definition, comment: rs.comment ?? null };
}

export function remoteRelationshipDefinition(tm: TableMetadata, def: RemoteRelationshipDef): unknown {
  return { name: def.name, table: tm.table, ...def.definition };
}

// ---- remote relationships ---------------------------------------------------------

const invalid = (message: string) => new SvcError(400, 'remote-schema-error', message);

/** Checks a remote relationship against its table and remote (upstream's validation messages). */
export function resolveRemoteRelationship(table: TableModel, def: RemoteRelationshipDef, model: RemoteCacheModel): RemoteRelationshipModel {
  const d = def.definition;
  const m = model.schemas.get(d.remote_schema);
  if (!m) throw invalid(`remote schema with name ${JSON.stringify(d.remote_schema)} not found`);
  if (table.columnsByName.has(def.name) || table.relationships.has(def.name) || table.computedFields.has(def.name)) {
    throw invalid(`field with name ${JSON.stringify(def.name)} already exists in table ${JSON.stringify(displayName(table.name))}`);
  }
  const columns: ColumnModel[] = d.svc_fields.map((c) => {
    const col = table.columnsByName.get(c);
    if (!col) throw invalid(`field with name ${JSON.stringify(c)} not found in table ${JSON.stringify(displayName(table.name))}`);
    return col;
  });
  const byName = new Map(columns.map((c) => [c.name, c]));
  const path: RemotePathStep[] = [];
  let parent: IntrospectionObjectType | IntrospectionInterfaceType = m.query;
  let node: Record<string, unknown> | undefined = d.remote_field;
  let leafType: IntrospectionTypeRef | undefined;
  while (node) {
    const keys = Object.keys(node);
    if (keys.length !== 1) throw invalid('remote_field must have exactly one field at each level');
    const fname = keys[0]!;
    const spec = (node[fname] ?? {}) as { arguments?: Record<string, unknown>; field?: Record<string, unknown> };
    const fdef: IntrospectionField | undefined = parent.fields.find((f) => f.name === fname);
    if (!fdef) throw invalid(`remote field with name ${JSON.stringify(fname)} and type ${JSON.stringify(parent.name)} not found`);
    const args = spec.arguments ?? {};
    for (const [an, av] of Object.entries(args)) {
      const adef = fdef.args.find((a) => a.name === an);
      if (!adef) throw invalid(`argument with name ${JSON.stringify(an)} not found in remote schema`);
      checkValue(av, adef.type, m, byName);
    }
    const isList = unwrapNonNull(fdef.type).kind === 'LIST';
    path.push({ field: fname, args, def: fdef, list: isList });
    leafType = fdef.type;
    node = spec.field;
    if (node) {
      const named = m.types.get(namedOf(fdef.type));
      if (!named || (named.kind !== 'OBJECT' && named.kind !== 'INTERFACE')) throw invalid(`field ${JSON.stringify(fname)} has no sub-fields`);
      parent = named;
    }
  }
  if (!leafType) throw invalid('remote_field is empty');
  return { name: def.name, table: table.name, columns, remote: m.name, path, leafType, def };
}

export function unwrapNonNull<T extends IntrospectionTypeRef | IntrospectionInputTypeRef>(t: T): T {
  return (t.kind === 'NON_NULL' ? (t as unknown as { ofType: T }).ofType : t) as T;
}

export function namedOf(t: IntrospectionTypeRef | IntrospectionInputTypeRef): string {
  let x = t as { kind: string; name?: string; ofType?: unknown };
  while (x.kind === 'NON_NULL' || x.kind === 'LIST') x = x.ofType as typeof x;
  return x.name!;
}

function typeText(t: IntrospectionInputTypeRef): string {
  if (t.kind === 'NON_NULL') return `${typeText(t.ofType)}!`;
  if (t.kind === 'LIST') return `[${typeText(t.ofType)}]`;
  return t.name;
}

/** The GraphQL scalar a column's values are (as the column's field type in Svc's schema). */
function columnScalar(c: ColumnModel): string {
  return gqlScalarName(c.type);
}

function scalarAccepts(expected: string, given: string): boolean {
  if (expected === given) return true;
  if (expected === 'ID') return given === 'String' || given === 'Int' || given === 'bigint';
  if (expected === 'Float') return given === 'Int';
  return false;
}

/** A configured argument value against the remote input type. */
function checkValue(v: unknown, type: IntrospectionInputTypeRef, m: RemoteSchemaModel, columns: Map<string, ColumnModel>): void {
  if (v === null) {
    if (type.kind === 'NON_NULL') throw invalid('null is not allowed here');
    return;
  }
  const t = unwrapNonNull(type) as { kind: string; name: string; ofType: IntrospectionInputTypeRef };
  if (typeof v === 'string' && v.startsWith('$')) {
    const c = columns.get(v.slice(1));
    if (!c) throw invalid(`variable ${JSON.stringify(v.slice(1))} is not found`);
    const got = columnScalar(c);
    if (t.kind === 'LIST' || !scalarAccepts(t.name, got)) throw invalid(`expected type ${JSON.stringify(typeText(type))} but got ${JSON.stringify(got)}`);
    return;
  }
  if (t.kind === 'LIST') {
    if (!Array.isArray(v)) return checkValue(v, t.ofType, m, columns);
    for (const x of v) checkValue(x, t.ofType, m, columns);
    return;
  }
  const named = m.types.get(t.name);
  if (Array.isArray(v)) throw invalid(`expected type ${JSON.stringify(typeText(type))} but got a list`);
  if (named?.kind === 'INPUT_OBJECT') {
    if (typeof v !== 'object') throw invalid(`expected type ${JSON.stringify(typeText(type))} but got ${JSON.stringify(JSON.stringify(v))}`);
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      const f = named.inputFields.find((i) => i.name === k);
      if (!f) throw invalid(`field with name ${JSON.stringify(k)} not found in input type ${JSON.stringify(named.name)}`);
      checkValue(x, f.type, m, columns);
    }
    return;
  }
  if (named?.kind === 'ENUM') {
    if (typeof v !== 'string' || !named.enumValues.some((e) => e.name === v))
      throw invalid(`expected type ${JSON.stringify(t.name)} but got ${JSON.stringify(JSON.stringify(v))}`);
    return;
  }
  const ok =
    t.name === 'Int'
      ? Number.isInteger(v)
      : t.name === 'Float'
        ? typeof v === 'number'
        : t.name === 'String'
          ? typeof v === 'string'
          : t.name === 'Boolean'
            ? typeof v === 'boolean'
            : t.name === 'ID'
              ? typeof v === 'string' || Number.isInteger(v)
              : typeof v !== 'object';
  if (!ok) throw invalid(`expected type ${JSON.stringify(t.name)} but got ${JSON.stringify(JSON.stringify(v))}`);
}
