/**
 * Remote schemas in a role's GraphQL schema: the remote's types rebuilt from its introspection in the
 * role's type registry (scalars of the same name are shared with the database's), its query and
 * mutation fields added to query_root/mutation_root, and remote relationships added to table row
 * types. Every role sees the remote schemas (as upstream v1.3); a remote relationship is visible to a
 * role that may read all of its join columns.
 */
import {
  GraphQLEnumType,
  GraphQLID,
  GraphQLInputObjectType,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLUnionType,
  parseValue,
  valueFromAST,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLInputFieldConfig,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLOutputType,
  type IntrospectionField,
  type IntrospectionInputTypeRef,
  type IntrospectionInputValue,
  type IntrospectionTypeRef,
} from 'graphql';
import type { Field, RootField } from '../ir/types.js';
import type { RoleSchemaBuilder } from '../schema/graphql/builder.js';
import type { RootFields, SchemaExtension } from '../schema/extensions.js';
import type { SelectionParser } from '../schema/graphql/select.js';
import { attachRemote } from './cache.js';
import { loadRemoteGenerations, type RemoteStore } from './introspect.js';
import type { TableView } from '../permissions/view.js';
import type { RemoteSchemaModel } from '../model/remote.js';

/** The role builder's GraphQL type for a remote's named type. */
function namedType(b: RoleSchemaBuilder, m: RemoteSchemaModel, name: string): GraphQLNamedType {
  if (name === 'ID') return b.register('ID', () => GraphQLID);
  if (name === 'Int' || name === 'Float' || name === 'String' || name === 'Boolean') return b.scalar(name);
  const t = m.types.get(name);
  if (!t) throw new Error(`remote schema ${m.name}: type ${name} not found`);
  const existing = b.types.get(name);
  if (existing) return existing;
  const description = t.description ?? undefined;
  switch (t.kind) {
    case 'SCALAR':
      // the remote's description is kept (a scalar the database already registered keeps its own)
      return b.register(name, () => new GraphQLScalarType({ name, description }));
    case 'ENUM':
      return b.register(
        name,
        () =>
          new GraphQLEnumType({
            name,
            description,
            values: Object.fromEntries(
              t.enumValues.map((v) => [
                v.name,
                { value: v.name, description: v.description ?? undefined, deprecationReason: v.deprecationReason ?? undefined },
              ]),
            ),
          }),
      );
    case 'INPUT_OBJECT':
      return b.register(
        name,
        () =>
          new GraphQLInputObjectType({
            name,
            description,
            fields: () => Object.fromEntries(t.inputFields.map((f) => [f.name, inputValue(b, m, f)])) as Record<string, GraphQLInputFieldConfig>,
          }),
      );
    case 'OBJECT':
      return b.register(
        name,
        () =>
          new GraphQLObjectType({
            name,
            description,
            interfaces: () => t.interfaces.map((i) => namedType(b, m, i.name) as GraphQLInterfaceType),
            fields: () => Object.fromEntries(t.fields.map((f) => [f.name, outputField(b, m, f)])),
          }),
      );
    case 'INTERFACE':
      return b.register(
        name,
        () =>
          new GraphQLInterfaceType({
            name,
            description,
            interfaces: () => (t.interfaces ?? []).map((i) => namedType(b, m, i.name) as GraphQLInterfaceType),
            fields: () => Object.fromEntries(t.fields.map((f) => [f.name, outputField(b, m, f)])),
          }),
      );
    case 'UNION':
      return b.register(
        name,
        () => new GraphQLUnionType({ name, description, types: () => t.possibleTypes.map((p) => namedType(b, m, p.name) as GraphQLObjectType) }),
      );
  }
}

export function outputType(b: RoleSchemaBuilder, m: RemoteSchemaModel, ref: IntrospectionTypeRef): GraphQLOutputType {
  if (ref.kind === 'NON_NULL') return new GraphQLNonNull(outputType(b, m, ref.ofType)) as GraphQLOutputType;
  if (ref.kind === 'LIST') return new GraphQLList(outputType(b, m, ref.ofType));
  return namedType(b, m, ref.name) as GraphQLOutputType;
}

function inputType(b: RoleSchemaBuilder, m: RemoteSchemaModel, ref: IntrospectionInputTypeRef): GraphQLInputType {
  if (ref.kind === 'NON_NULL') return new GraphQLNonNull(inputType(b, m, ref.ofType)) as GraphQLInputType;
  if (ref.kind === 'LIST') return new GraphQLList(inputType(b, m, ref.ofType));
  return namedType(b, m, ref.name) as GraphQLInputType;
}

function inputValue(b: RoleSchemaBuilder, m: RemoteSchemaModel, v: IntrospectionInputValue): GraphQLInputFieldConfig {
  const type = inputType(b, m, v.type);
  let defaultValue: unknown;
  if (v.defaultValue !== null && v.defaultValue !== undefined) {
    try {
      defaultValue = valueFromAST(parseValue(v.defaultValue), type);
    } catch {
      defaultValue = undefined;
    }
  }
  // introspection shows the remote's own default literal (as the remote printed it), not a reprint of
  // the parsed value: a value graphql-js cannot print back (an object for a custom scalar) or prints
  // differently (field order, 1.0) still reads as the remote's
  const extensions = typeof v.defaultValue === 'string' ? { svcDefaultLiteral: v.defaultValue } : undefined;
  return { type, description: v.description ?? undefined, defaultValue, extensions };
}

function args(b: RoleSchemaBuilder, m: RemoteSchemaModel, list: readonly IntrospectionInputValue[]): GraphQLFieldConfigArgumentMap {
  return Object.fromEntries(list.map((a) => [a.name, inputValue(b, m, a)]));
}

/** Fields inside remote types are never parsed by Svc: their selections are forwarded as written. */
function outputField(b: RoleSchemaBuilder, m: RemoteSchemaModel, f: IntrospectionField): GraphQLFieldConfig<unknown, unknown> {
  return {
    type: outputType(b, m, f.type),
    description: f.description ?? undefined,
    deprecationReason: f.deprecationReason ?? undefined,
    args: args(b, m, f.args),
  };
}

function rootFields(b: RoleSchemaBuilder, m: RemoteSchemaModel, fields: readonly IntrospectionField[]): Record<string, GraphQLFieldConfig<unknown, unknown>> {
  const out: Record<string, GraphQLFieldConfig<unknown, unknown>> = {};
  for (const f of fields) {
    if (f.name.startsWith('__')) continue;
    const parse: SelectionParser<RootField> = (_ctx, cf) => ({ alias: cf.alias, kind: 'remote', remote: m.name, field: cf });
    out[f.name] = { ...outputField(b, m, f), extensions: { svc: parse } };
  }
  return out;
}

const remoteRootFields = (b: RoleSchemaBuilder): RootFields => {
  const remote = b.cache.remote;
  if (!remote || remote.schemas.size === 0) return {};
  const query: RootFields['query'] = {};
  const mutation: RootFields['mutation'] = {};
  for (const m of remote.schemas.values()) {
    Object.assign(query, rootFields(b, m, m.query.fields));
    if (m.mutation) Object.assign(mutation, rootFields(b, m, m.mutation.fields));
    // the remote's other types are part of the schema even when no field reaches them (introspection shows them)
    for (const n of m.types.keys()) if (!m.rootTypes.has(n)) namedType(b, m, n);
  }
  return { query, mutation };
};

const remoteTableFields = (b: RoleSchemaBuilder, v: TableView): Record<string, GraphQLFieldConfig<unknown, unknown>> => {
  const rels = b.cache.remote?.relationships.get(v.table.key);
  if (!rels) return {};
  // an inherited role's guarded columns (null on some rows) do not join: their raw values would reach the remote
  const readable = new Set(v.columns.filter((c) => !c.guard).map((c) => c.name));
  const out: Record<string, GraphQLFieldConfig<unknown, unknown>> = {};
  for (const rel of rels) {
    if (!rel.columns.every((c) => readable.has(c.name))) continue;
    const m = b.cache.remote!.schemas.get(rel.remote)!;
    const leaf = rel.path[rel.path.length - 1]!;
    let type: GraphQLOutputType = outputType(b, m, leaf.def.type);
    if (type instanceof GraphQLNonNull) type = type.ofType as GraphQLOutputType;
    for (let i = rel.path.length - 2; i >= 0; i--) if (rel.path[i]!.list) type = new GraphQLList(type);
    // the leaf's arguments: those the relationship does not set, and what it leaves open of input objects
    const suffix = `${v.table.name.schema}_${v.table.name.name}${rel.name}`;
    const leafArgs: GraphQLFieldConfigArgumentMap = {};
    for (const a of leaf.def.args) {
      if (!(a.name in leaf.args)) leafArgs[a.name] = inputValue(b, m, a);
      else {
        const t = strippedType(b, m, a.type, leaf.args[a.name], suffix);
        if (t) leafArgs[a.name] = { type: t, description: a.description ?? undefined };
      }
    }
    const parse: SelectionParser<Field> = (_ctx, f) => ({ alias: f.alias, kind: 'remote_join', columns: rel.columns, join: { rel, field: f } });
    out[rel.name] = { type, description: 'Remote relationship field', args: leafArgs, extensions: { svc: parse } };
  }
  return out;
};

/**
 * The type of an argument the relationship sets in part (upstream v1.3): an input object keeps the
 * fields the configured value leaves out, under `<Type>_remote_rel_<schema>_<table><relationship>`;
 * a scalar, a `$column` or a list of other than one element is set entirely (no argument: null).
 * The client's value is merged with the configured one (src/remote/execute.ts).
 */
function strippedType(b: RoleSchemaBuilder, m: RemoteSchemaModel, ref: IntrospectionInputTypeRef, value: unknown, suffix: string): GraphQLInputType | null {
  if (value === null || typeof value !== 'object') return null;
  const inner = ref.kind === 'NON_NULL' ? ref.ofType : ref;
  if (Array.isArray(value)) {
    if (value.length !== 1 || inner.kind !== 'LIST') return null;
    const t = strippedType(b, m, inner.ofType, value[0], suffix);
    return t ? new GraphQLList(t) : null;
  }
  if (inner.kind !== 'INPUT_OBJECT') return null;
  const def = m.types.get(inner.name);
  if (!def || def.kind !== 'INPUT_OBJECT') return null;
  const name = `${def.name}_remote_rel_${suffix}`;
  const existing = b.types.get(name);
  if (existing) return existing as GraphQLInputType;
  const given = value as Record<string, unknown>;
  const fields: Record<string, GraphQLInputFieldConfig> = {};
  for (const f of def.inputFields) {
    if (!(f.name in given)) fields[f.name] = inputValue(b, m, f);
    else {
      const t = strippedType(b, m, f.type, given[f.name], suffix);
      if (t) fields[f.name] = { type: t, description: f.description ?? undefined };
    }
  }
  if (Object.keys(fields).length === 0) return null;
  return b.register(name, () => new GraphQLInputObjectType({ name, description: def.description ?? undefined, fields }));
}

/**
 * Remote schemas as a schema extension (src/schema/extensions.ts): their root fields, remote
 * relationships on table types, and their introspections resolved after the pure builder, from the
 * engine's store (`store`: one per engine).
 */
export function remoteExtension(store: RemoteStore): SchemaExtension {
  return {
    name: 'remote schemas',
    rootFields: remoteRootFields,
    tableFields: remoteTableFields,
    attach: async (cache, md, q) => attachRemote(cache, md, store, md.remote_schemas.length ? await loadRemoteGenerations(q) : new Map()),
  };
}
