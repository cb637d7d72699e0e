/**
 * `getRoleSchema(cache, role)`: the GraphQL schema a role sees, built once
 * per schema cache and role. Admin sees every tracked table and function; a
 * role sees what its select permissions allow and nothing else exists for it.
 *
 * Root fields of features above this layer (actions, remote schemas) come from
 * the schema cache's extensions (src/schema/extensions.ts).
 */
import { GraphQLInputObjectType, GraphQLInterfaceType, GraphQLObjectType, GraphQLSchema, GraphQLUnionType, type GraphQLNamedType } from 'graphql';
import { RoleMutationAccess } from '../../permissions/mutation.js';
import { RoleViews } from '../../permissions/view.js';
import type { SchemaCache } from '../model.js';
import { RoleSchemaBuilder } from './builder.js';
import { BoundedRoleCache } from '../roleCache.js';
import { tableMutationFields } from './mutation.js';
import { isGraphQLName, sortedEntries } from './names.js';
import { relayExtension, relayRootFields } from './relay.js';
import { functionRootFields, tableRootFields } from './select.js';
import type { RootFieldConfig } from '../extensions.js';
import { tableStreamRootFields } from './stream.js';
import { performance } from 'node:perf_hooks';

export interface RoleSchema {
  role: string;
  schema: GraphQLSchema;
  query: GraphQLObjectType;
  mutation: GraphQLObjectType | null;
  subscription: GraphQLObjectType | null;
  builder: RoleSchemaBuilder;
}

export type { RootFieldProvider, RootFields } from '../extensions.js';

const KEY = (role: string, backendOnly: boolean, relay: boolean) => `${relay ? 'relay' : 'graphql'}:${role}${backendOnly ? ':backend' : ''}`;

/**
 * The role's schema. `backendOnly`: the request may use backend-only insert
 * permissions (admin credentials and `x-svc-use-backend-only-permissions: true`).
 * `relay`: the Relay schema of /v1beta1/relay (schema/graphql/relay.ts).
 */
export function getRoleSchema(cache: SchemaCache, role: string, backendOnly = false, relay = false): RoleSchema {
  const key = KEY(role, backendOnly, relay);
  const hit = cache.perRole.get(key) as RoleSchema | undefined;
  if (hit) return hit;
  return store(cache, key, buildRoleSchema(cache, role, backendOnly, relay));
}

function store(cache: SchemaCache, key: string, built: RoleSchema): RoleSchema {
  if (cache.perRole instanceof BoundedRoleCache) cache.perRole.setWeighed(key, built, estimateBytes(built.schema));
  else cache.perRole.set(key, built);
  return built;
}

/** builds in progress, per schema cache and key: concurrent first requests of a role share one */
const building = new WeakMap<SchemaCache, Map<string, Promise<RoleSchema>>>();

/**
 * Issue 30 item 9: null when the role's schema is cached; otherwise a promise of it, built without
 * blocking the event loop for long (the types are resolved in slices of about SLICE_MS, yielding
 * to other requests between them) and shared by every request that needs it meanwhile. The request
 * path awaits it before planning (src/execute/graphql.ts); getRoleSchema then finds it cached.
 */
export function roleSchemaPending(cache: SchemaCache, role: string, backendOnly = false, relay = false): Promise<RoleSchema> | null {
  const key = KEY(role, backendOnly, relay);
  if (cache.perRole.has(key)) return null;
  let inCache = building.get(cache);
  if (!inCache) building.set(cache, (inCache = new Map()));
  const running = inCache.get(key);
  if (running) return running;
  const started = buildRoleSchemaAsync(cache, role, backendOnly, relay)
    .then((built) => store(cache, key, built))
    .finally(() => inCache.delete(key));
  inCache.set(key, started);
  return started;
}

/** the longest the event loop is held by a role schema build between two yields */
export const SLICE_MS = 10;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** buildRoleSchema, with the lazily defined types resolved slice by slice before the schema is made */
export async function buildRoleSchemaAsync(cache: SchemaCache, role: string, backendOnly = false, relay = false): Promise<RoleSchema> {
  await yieldToEventLoop();
  const parts = roleSchemaParts(cache, role, backendOnly, relay);
  await yieldToEventLoop();
  const resolved = new Set<GraphQLNamedType>();
  let until = performance.now() + SLICE_MS;
  const roots = [parts.query, parts.subscription, parts.mutation].filter((t): t is GraphQLObjectType => t !== null);
  // resolving a type's fields can define more types: repeat until a pass finds none new
  for (let found = true; found;) {
    found = false;
    for (const t of [...roots, ...parts.builder.types.values()]) {
      if (resolved.has(t)) continue;
      resolved.add(t);
      found = true;
      resolveType(t);
      if (performance.now() >= until) {
        await yieldToEventLoop();
        until = performance.now() + SLICE_MS;
      }
    }
  }
  return finishRoleSchema(parts);
}

/** what graphql-js would resolve of a type when the schema is made (its thunks; the results are kept) */
function resolveType(t: GraphQLNamedType): void {
  if (t instanceof GraphQLObjectType || t instanceof GraphQLInterfaceType) {
    t.getInterfaces();
    t.getFields();
  } else if (t instanceof GraphQLInputObjectType) t.getFields();
  else if (t instanceof GraphQLUnionType) t.getTypes();
}

/**
 * A rough estimate of a built schema's memory (graphql-js objects, the builder's maps): measured on
 * large remote schemas at about 1.5 KB per type; fields and arguments weigh in too.
 */
function estimateBytes(schema: GraphQLSchema): number {
  let bytes = 0;
  for (const t of Object.values(schema.getTypeMap())) {
    bytes += 1024;
    if ('getFields' in t) {
      for (const f of Object.values(t.getFields() as Record<string, { args?: readonly unknown[] }>)) bytes += 256 + 128 * (f.args?.length ?? 0);
    }
  }
  return bytes;
}

export function buildRoleSchema(cache: SchemaCache, role: string, backendOnly = false, relay = false): RoleSchema {
  return finishRoleSchema(roleSchemaParts(cache, role, backendOnly, relay));
}

type RoleSchemaParts = Omit<RoleSchema, 'schema'>;

/** the role's root types (their fields and the types they reach defined lazily) and its type builder */
function roleSchemaParts(cache: SchemaCache, role: string, backendOnly: boolean, relay: boolean): RoleSchemaParts {
  const views = new RoleViews(cache, role);
  const b = new RoleSchemaBuilder(cache, views, new RoleMutationAccess(cache, role, backendOnly));
  const query: Record<string, RootFieldConfig> = {};
  const mutation: Record<string, RootFieldConfig> = {};
  /** subscription_root only: streaming subscriptions (schema/graphql/stream.ts) */
  const subscriptionOnly: Record<string, RootFieldConfig> = {};
  if (relay) {
    // the Relay schema has no remote schemas or actions (schema/relay-schema.rst): no providers
    b.extension = relayExtension(b);
    Object.assign(query, relayRootFields(b));
  } else {
    for (const t of cache.tables.values()) {
      const v = views.view(t);
      // names GraphQL cannot express leave the table out (Hasura refuses to track them)
      if (v && isGraphQLName(b.tableName(t))) {
        Object.assign(query, tableRootFields(b, v));
        Object.assign(subscriptionOnly, tableStreamRootFields(b, v));
      }
    }
    for (const fn of views.functions()) Object.assign(query, functionRootFields(b, fn));
  }
  for (const t of cache.tables.values()) Object.assign(mutation, tableMutationFields(b, t));
  const queryOnly: Record<string, RootFieldConfig> = {};
  for (const x of relay ? [] : cache.extensions) {
    if (!x.rootFields) continue;
    const r = x.rootFields(b);
    Object.assign(query, r.query ?? {});
    Object.assign(queryOnly, r.queryOnly ?? {});
    Object.assign(mutation, r.mutation ?? {});
  }
  const queryRoot = new GraphQLObjectType({ name: 'query_root', description: 'query root', fields: sortedEntries({ ...query, ...queryOnly }) });
  const subscriptionRoot = new GraphQLObjectType({
    name: 'subscription_root',
    description: 'subscription root',
    fields: sortedEntries({ ...subscriptionOnly, ...query }),
  });
  const mutationRoot =
    Object.keys(mutation).length > 0 ? new GraphQLObjectType({ name: 'mutation_root', description: 'mutation root', fields: sortedEntries(mutation) }) : null;
  return { role, query: queryRoot, mutation: mutationRoot, subscription: subscriptionRoot, builder: b };
}

function finishRoleSchema(p: RoleSchemaParts): RoleSchema {
  // resolve every lazily defined type now, so later requests only read
  const schema = new GraphQLSchema({
    query: p.query,
    mutation: p.mutation,
    subscription: p.subscription,
    types: [...p.builder.types.values()] as GraphQLNamedType[],
    directives: [],
  });
  return { ...p, schema };
}
