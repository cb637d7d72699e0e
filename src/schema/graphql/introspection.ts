/**
 * `__schema` / `__type` answered from the role's GraphQLSchema, in the order
 * Hasura v1.3 lists things: types, fields, arguments, input fields and enum
 * values sorted by name. The directives are `@include`, `@skip` and `@cached` (Hasura v2's response
 * cache directive on queries, src/cache/directive.ts; beyond v1.3).
 * Every field graphql-js 16's `getIntrospectionQuery` can ask for is answered (`isOneOf`,
 * `specifiedByURL`, `isRepeatable`, `__Schema.description`, `includeDeprecated` on arguments and
 * input fields with their `isDeprecated`/`deprecationReason`), so current GraphiQL and codegen work.
 */
import {
  GraphQLEnumType,
  GraphQLIncludeDirective,
  GraphQLInputObjectType,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLSkipDirective,
  GraphQLUnionType,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  astFromValue,
  getNamedType,
  isLeafType,
  print,
  type GraphQLArgument,
  type GraphQLDirective,
  type GraphQLEnumValue,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLSchema,
  type GraphQLType,
} from 'graphql';
import type { CollectedField, DocumentContext } from '../../ir/document.js';
import { fieldNotFound } from '../../ir/messages.js';
import { checkLeaf } from './select.js';
import { CachedDirective } from '../../cache/directive.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- graphql-js's introspection values are untyped
type Resolver = (value: any, args: Map<string, unknown>, schema: GraphQLSchema) => unknown;

const byName = <T extends { name: string }>(xs: readonly T[]): T[] => [...xs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

function kindOf(t: GraphQLType): string {
  if (t instanceof GraphQLNonNull) return 'NON_NULL';
  if (t instanceof GraphQLList) return 'LIST';
  if (t instanceof GraphQLScalarType) return 'SCALAR';
  if (t instanceof GraphQLObjectType) return 'OBJECT';
  if (t instanceof GraphQLInterfaceType) return 'INTERFACE';
  if (t instanceof GraphQLUnionType) return 'UNION';
  if (t instanceof GraphQLEnumType) return 'ENUM';
  return 'INPUT_OBJECT';
}

const DIRECTIVES: GraphQLDirective[] = [GraphQLIncludeDirective, GraphQLSkipDirective, CachedDirective];

const RESOLVERS: Record<string, Record<string, Resolver>> = {
  __Schema: {
    description: () => null,
    types: (_s, _a, schema) => byName(Object.values(schema.getTypeMap())),
    queryType: (_s, _a, schema) => schema.getQueryType() ?? null,
    mutationType: (_s, _a, schema) => schema.getMutationType() ?? null,
    subscriptionType: (_s, _a, schema) => schema.getSubscriptionType() ?? null,
    directives: () => DIRECTIVES,
  },
  __Type: {
    kind: (t) => kindOf(t),
    name: (t) => ('name' in t ? t.name : null),
    description: (t) => ('description' in t ? (t.description ?? null) : null),
    specifiedByURL: () => null,
    fields: (t, a) => {
      if (!(t instanceof GraphQLObjectType || t instanceof GraphQLInterfaceType)) return null;
      const fs = byName(Object.values(t.getFields()) as GraphQLField<unknown, unknown>[]);
      return a.get('includeDeprecated') === true ? fs : fs.filter((f) => !f.deprecationReason);
    },
    interfaces: (t) => (t instanceof GraphQLObjectType || t instanceof GraphQLInterfaceType ? t.getInterfaces() : null),
    possibleTypes: (t, _a, schema) =>
      t instanceof GraphQLUnionType ? t.getTypes() : t instanceof GraphQLInterfaceType ? byName(schema.getPossibleTypes(t)) : null,
    enumValues: (t, a) => {
      if (!(t instanceof GraphQLEnumType)) return null;
      const vs = byName(t.getValues());
      return a.get('includeDeprecated') === true ? vs : vs.filter((v) => !v.deprecationReason);
    },
    inputFields: (t, a) => {
      if (!(t instanceof GraphQLInputObjectType)) return null;
      const fs = byName(Object.values(t.getFields()));
      return a.get('includeDeprecated') === true ? fs : fs.filter((f) => !f.deprecationReason);
    },
    ofType: (t) => (t instanceof GraphQLNonNull || t instanceof GraphQLList ? t.ofType : null),
    // graphql-js 16's getIntrospectionQuery({ oneOf: true }): no @oneOf input objects here
    isOneOf: (t) => (t instanceof GraphQLInputObjectType ? t.isOneOf === true : null),
  },
  __Field: {
    name: (f: GraphQLField<unknown, unknown>) => f.name,
    description: (f) => f.description ?? null,
    args: (f: GraphQLField<unknown, unknown>, a) => (a.get('includeDeprecated') === true ? byName(f.args) : byName(f.args).filter((x) => !x.deprecationReason)),
    type: (f) => f.type,
    isDeprecated: (f) => !!f.deprecationReason,
    deprecationReason: (f) => f.deprecationReason ?? null,
  },
  __InputValue: {
    name: (v: GraphQLArgument | GraphQLInputField) => v.name,
    description: (v) => v.description ?? null,
    type: (v) => v.type,
    defaultValue: (v: GraphQLArgument | GraphQLInputField) => {
      // a remote schema's argument or input field: the remote's own literal (src/remote/fields.ts)
      const literal = (v.extensions as { svcDefaultLiteral?: unknown } | undefined)?.svcDefaultLiteral;
      if (typeof literal === 'string') return literal;
      if (v.defaultValue === undefined) return null;
      const ast = astFromValue(v.defaultValue, v.type);
      return ast ? print(ast) : null;
    },
    isDeprecated: (v: GraphQLArgument | GraphQLInputField) => !!v.deprecationReason,
    deprecationReason: (v: GraphQLArgument | GraphQLInputField) => v.deprecationReason ?? null,
  },
  __EnumValue: {
    name: (v: GraphQLEnumValue) => v.name,
    description: (v) => v.description ?? null,
    isDeprecated: (v) => !!v.deprecationReason,
    deprecationReason: (v) => v.deprecationReason ?? null,
  },
  __Directive: {
    name: (d: GraphQLDirective) => d.name,
    description: () => null,
    locations: (d: GraphQLDirective) =>
      d === CachedDirective ? d.locations : d.locations.filter((l) => l === 'FIELD' || l === 'FRAGMENT_SPREAD' || l === 'INLINE_FRAGMENT'),
    args: (d: GraphQLDirective, a) =>
      d.args.filter((x) => a.get('includeDeprecated') === true || !x.deprecationReason).map((x) => ({ ...x, description: null })),
    isRepeatable: () => false,
  },
};

/** The JSON value of a root `__schema` or `__type` field. */
export function introspectionRoot(ctx: DocumentContext, f: CollectedField, schema: GraphQLSchema): unknown {
  if (f.name === '__schema') {
    checkLeaf(f, SchemaMetaFieldDef.type);
    return resolveObject(ctx, f, schema.getType('__Schema') as GraphQLObjectType, schema, schema);
  }
  checkLeaf(f, TypeMetaFieldDef.type);
  const args = ctx.args(f, TypeMetaFieldDef as GraphQLField<unknown, unknown>);
  const name = ctx.valueOf(args.get('name'));
  const t = typeof name === 'string' ? schema.getType(name) : undefined;
  if (!t) return null;
  return resolveObject(ctx, f, schema.getType('__Type') as GraphQLObjectType, t, schema);
}

function resolveObject(ctx: DocumentContext, f: CollectedField, type: GraphQLObjectType, value: unknown, schema: GraphQLSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const defs = type.getFields();
  const resolvers = RESOLVERS[type.name] ?? {};
  for (const sf of ctx.collect(f.subSelections, type)) {
    if (sf.name === '__typename') {
      out[sf.alias] = type.name;
      continue;
    }
    const def = defs[sf.name];
    const r = resolvers[sf.name];
    if (!def || !r) throw fieldNotFound(sf.name, type.name, sf.path);
    checkLeaf(sf, def.type);
    const args = new Map<string, unknown>();
    for (const [k, v] of ctx.args(sf, def)) args.set(k, ctx.valueOf(v));
    for (const a of def.args) if (!args.has(a.name) && a.defaultValue !== undefined) args.set(a.name, a.defaultValue);
    const result = r(value, args, schema);
    out[sf.alias] = complete(ctx, sf, def.type, result, schema);
  }
  return out;
}

function complete(ctx: DocumentContext, f: CollectedField, type: GraphQLType, value: unknown, schema: GraphQLSchema): unknown {
  if (value === null || value === undefined) return null;
  const named = getNamedType(type);
  if (isLeafType(named)) return value;
  const t = type instanceof GraphQLNonNull ? type.ofType : type;
  if (t instanceof GraphQLList) return (value as unknown[]).map((v) => complete(ctx, f, t.ofType, v, schema));
  return resolveObject(ctx, f, named as GraphQLObjectType, value, schema);
}
