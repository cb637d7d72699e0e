/**
 * /v1/query operations of remote schemas and remote relationships: add_remote_schema,
 * remove_remote_schema, reload_remote_schema, create/update/delete_remote_relationship.
 */
import { SvcError, alreadyExists, notExists } from '../errors.js';
import { expectArray, expectObject, reader, type ArgReader } from '../document/args.js';
import { dependencyError, dependentsOf } from '../schema/dependencies.js';
import { SUCCESS, defineOp, type OpContext } from '../metadata/registry.js';
import { findTable } from '../metadata/ops/tables.js';
import { displayName, qualifiedKey, type RemoteRelationshipDef, type RemoteSchemaMetadata } from '../model/metadata.js';
import { isGraphQLName } from '../schema/graphql/names.js';
import { EMPTY_REMOTE } from '../model/remote.js';
import { remoteConflicts, remoteSchemaModel, resolveRemoteRelationship, schemaNames } from './cache.js';
import { bumpRemoteGenerations, fetchIntrospection } from './introspect.js';

function parseDefinition(v: unknown, path: string): RemoteSchemaMetadata['definition'] {
  const a = reader(v, 'RemoteSchemaDef');
  const sub = (r: ArgReader, k: string) => `${path}${r.sub(k).slice(1)}`;
  const def: RemoteSchemaMetadata['definition'] = {};
  const url = a.string('url', true);
  const urlFromEnv = a.string('url_from_env', true);
  if (url !== undefined && urlFromEnv !== undefined) throw new SvcError(400, 'invalid-params', "both `url` and `url_from_env` can't be present", path);
  if (url === undefined && urlFromEnv === undefined) throw new SvcError(400, 'invalid-params', "both `url` and `url_from_env` can't be empty", path);
  if (url !== undefined) def.url = url;
  if (urlFromEnv !== undefined) def.url_from_env = urlFromEnv;
  const headers = a.raw('headers');
  if (headers !== undefined && headers !== null) {
    def.headers = expectArray(headers, sub(a, 'headers')).map((h, i) => {
      const hp = `${sub(a, 'headers')}[${i}]`;
      const o = expectObject(h, hp);
      if (typeof o.name !== 'string') throw new SvcError(400, 'parse-failed', 'key "name" not found', hp);
      if (typeof o.value === 'string') return { name: o.name, value: o.value };
      if (typeof o.value_from_env === 'string') return { name: o.name, value_from_env: o.value_from_env };
      throw new SvcError(400, 'parse-failed', 'expecting exactly one of "value" or "value_from_env"', hp);
    });
  }
  def.forward_client_headers = a.bool('forward_client_headers', false);
  const timeout = a.int('timeout_seconds');
  if (timeout !== undefined) {
    if (timeout <= 0) throw new SvcError(400, 'invalid-params', 'timeout_seconds must be a positive integer', sub(a, 'timeout_seconds'));
    def.timeout_seconds = timeout;
  }
  a.done();
  return def;
}

const findRemote = (ctx: OpContext, name: string) => {
  const rs = ctx.state.metadata.remote_schemas.find((r) => r.name === name);
  if (!rs) throw notExists(`remote schema with name ${JSON.stringify(name)} does not exist`, ctx.path);
  return rs;
};

defineOp('add_remote_schema', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const name = a.name('name');
    const definition = parseDefinition(a.required('definition'), a.sub('definition'));
    const comment = a.string('comment', true);
    a.done();
    if (ctx.state.metadata.remote_schemas.some((r) => r.name === name))
      throw alreadyExists(`remote schema with name ${JSON.stringify(name)} already exists`, ctx.path);
    const rs: RemoteSchemaMetadata = { name, definition, ...(comment !== undefined ? { comment } : {}) };
    const intro = await fetchIntrospection(ctx.outbound, rs, ctx.span).catch((e: unknown) => {
      throw e instanceof SvcError ? e.withPath(ctx.path) : e;
    });
    const model = remoteSchemaModel(name, intro);
    // conflicts with the database schema, then with the remotes already added (upstream v1.3's codes)
    const db = remoteConflicts(model, await schemaNames(ctx.state.cache, false));
    if (db) throw new SvcError(400, 'constraint-violation', db, ctx.path);
    const other = remoteConflicts(model, await schemaNames(ctx.state.cache));
    if (other) throw new SvcError(400, 'unexpected', other, ctx.path);
    // a fresh generation: other instances fetch it anew even if they knew a remote of that name
    const gen = await bumpRemoteGenerations(ctx.conn, [name]);
    ctx.remotes.set(rs, intro, gen.get(name) ?? 0);
    ctx.state.metadata.remote_schemas.push(rs);
    return SUCCESS;
  },
});

defineOp('remove_remote_schema', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const name = a.name('name');
    a.done();
    findRemote(ctx, name);
    const deps = dependentsOf(ctx.state.cache, [{ kind: 'remote_schema', name }]);
    if (deps.length) throw dependencyError(deps, ctx.path);
    ctx.state.metadata.remote_schemas = ctx.state.metadata.remote_schemas.filter((r) => r.name !== name);
    return SUCCESS;
  },
});

defineOp('reload_remote_schema', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const name = a.name('name');
    a.done();
    const rs = findRemote(ctx, name);
    ctx.remotes.invalidate(name);
    let intro;
    try {
      intro = await fetchIntrospection(ctx.outbound, rs, ctx.span);
    } catch (e) {
      throw e instanceof SvcError ? e.withPath(ctx.path) : e;
    }
    // the bumped generation (and the version bump's NOTIFY) makes every other instance refetch it
    const gen = await bumpRemoteGenerations(ctx.conn, [name]);
    ctx.remotes.set(rs, intro, gen.get(name) ?? 0);
    ctx.state.metadataChanged = true;
    return SUCCESS;
  },
});

// ---- remote relationships ----------------------------------------------------------

function parseRemoteRelationship(ctx: OpContext, args: unknown): { table: ReturnType<ArgReader['table']>; def: RemoteRelationshipDef } {
  const a = reader(args);
  const name = a.name('name');
  const table = a.table();
  const fieldsKey = a.has('svc_fields') ? 'svc_fields' : 'hasura_fields';
  const cols = expectArray(a.required(fieldsKey), a.sub(fieldsKey)).map((c, i) => {
    if (typeof c !== 'string') throw new SvcError(400, 'parse-failed', 'expecting a column name', `${a.sub(fieldsKey)}[${i}]`);
    return c;
  });
  const remoteSchema = a.name('remote_schema');
  const remoteField = a.object('remote_field');
  a.done();
  if (!isGraphQLName(name)) throw new SvcError(400, 'validation-failed', `${JSON.stringify(name)} is not a valid GraphQL identifier`, ctx.path);
  return { table, def: { name, definition: { svc_fields: [...new Set(cols)], remote_schema: remoteSchema, remote_field: remoteField } } };
}

/** Validates against the request's current schema cache (400 with upstream's message; nothing stored). */
function validate(ctx: OpContext, table: ReturnType<ArgReader['table']>, def: RemoteRelationshipDef): void {
  const tm = ctx.state.cache.tables.get(qualifiedKey(table));
  if (!tm) throw notExists(`table ${JSON.stringify(displayName(table))} does not exist`, ctx.path);
  try {
    resolveRemoteRelationship(tm, def, ctx.state.cache.remote ?? EMPTY_REMOTE);
  } catch (e) {
    throw e instanceof SvcError ? e.withPath(ctx.path) : e;
  }
}

defineOp('create_remote_relationship', {
  kind: 'metadata',
  async run(ctx, args) {
    const { table, def } = parseRemoteRelationship(ctx, args);
    const t = findTable(ctx, table);
    if (t.remote_relationships.some((r) => r.name === def.name))
      throw alreadyExists(`remote relationship with name ${JSON.stringify(def.name)} already exists`, ctx.path);
    validate(ctx, table, def);
    t.remote_relationships.push(def);
    return SUCCESS;
  },
});

defineOp('update_remote_relationship', {
  kind: 'metadata',
  async run(ctx, args) {
    const { table, def } = parseRemoteRelationship(ctx, args);
    const t = findTable(ctx, table);
    const i = t.remote_relationships.findIndex((r) => r.name === def.name);
    if (i < 0) throw notExists(`remote relationship with name ${JSON.stringify(def.name)} does not exist`, ctx.path);
    validate(ctx, table, def);
    t.remote_relationships[i] = def;
    return SUCCESS;
  },
});

defineOp('delete_remote_relationship', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const table = a.table();
    const name = a.name('name');
    a.done();
    const t = findTable(ctx, table);
    if (!t.remote_relationships.some((r) => r.name === name)) throw notExists(`remote relationship with name ${JSON.stringify(name)} does not exist`, ctx.path);
    t.remote_relationships = t.remote_relationships.filter((r) => r.name !== name);
    return SUCCESS;
  },
});
