/** export_metadata, replace_metadata, reload_metadata, clear_metadata, get/drop_inconsistent_metadata. */
import { SvcError } from '../../errors.js';
import { exportMetadata, normalizeMetadata } from '../../document/export.js';
import { inconsistentRef, removeRef } from '../../schema/dependencies.js';
import { SUCCESS, defineOp } from '../registry.js';
import { ArgReader, expectArray, expectObject, parseQualified, reader } from '../../document/args.js';
import { emptyMetadata, type InheritedRoleMetadata, type Metadata } from '../../model/metadata.js';
import { apiLimitsEmpty, parseAllowlist, parseApiLimits } from '../../document/apiLimits.js';
import { parseCronTrigger } from './scheduledTriggers.js';
import { parseRestEndpoint } from './restEndpoints.js';
import { bumpRemoteGenerations } from '../../remote/introspect.js';
import { parseInheritedRoles } from '../../document/inherited.js';

defineOp('export_metadata', {
  kind: 'data',
  accessMode: () => 'read',
  async run(ctx) {
    return exportMetadata(ctx.state.metadata);
  },
});

/**
 * The shape of a metadata document, checked before anything is replaced (upstream parses it with
 * aeson: `tables` is required, the other lists are optional, every list is a list of objects).
 * A document that does not parse changes nothing: `{}` or a misspelt key is never "no tables".
 */
function checkMetadataShape(args: unknown): InheritedRoleMetadata[] {
  const a = new ArgReader(args, '$', 'Metadata', false);
  const v = a.raw('version');
  if (v !== undefined && v !== 1 && v !== 2) throw new SvcError(400, 'parse-failed', `expected 1 or 2, encountered ${JSON.stringify(v)}`, '$.version');
  const tables = expectArray(a.required('tables'), '$.tables');
  tables.forEach((t, i) => {
    const tr = new ArgReader(t, `$.tables[${i}]`, 'TableMeta', false);
    parseQualified(tr.required('table'), tr.sub('table'), 'QualifiedTable');
    if (tr.has('is_enum')) tr.bool('is_enum', false);
    tr.object('configuration', true);
    for (const k of TABLE_LISTS) {
      const l = tr.raw(k);
      if (l !== undefined && l !== null) expectArray(l, tr.sub(k)).forEach((x, j) => expectObject(x, `${tr.sub(k)}[${j}]`));
    }
  });
  for (const k of TOP_LISTS) {
    const l = a.raw(k);
    if (l !== undefined && l !== null) expectArray(l, a.sub(k));
  }
  a.object('custom_types', true);
  // issue 36: scoped allow-list entries and API limits, checked whole (v2's messages)
  const al = a.raw('allowlist');
  if (Array.isArray(al)) parseAllowlist(al, a.sub('allowlist'));
  const lim = a.raw('api_limits');
  if (lim !== undefined && lim !== null) parseApiLimits(lim, a.sub('api_limits'));
  const ir = a.raw('inherited_roles');
  return ir !== undefined && ir !== null ? parseInheritedRoles(expectArray(ir, a.sub('inherited_roles')), a.sub('inherited_roles')) : [];
}

/** The cron triggers of `prev` that are not part of the metadata and not redefined by `next`. */
function keptCronTriggers(prev: Metadata, next: Metadata): Metadata['cron_triggers'] {
  const names = new Set(next.cron_triggers.map((c) => c.name));
  return prev.cron_triggers.filter((c) => !c.include_in_metadata && !names.has(c.name));
}

const TABLE_LISTS = [
  'object_relationships',
  'array_relationships',
  'insert_permissions',
  'select_permissions',
  'update_permissions',
  'delete_permissions',
  'event_triggers',
  'computed_fields',
  'remote_relationships',
] as const;
const TOP_LISTS = ['functions', 'remote_schemas', 'query_collections', 'allowlist', 'actions', 'cron_triggers', 'rest_endpoints'] as const;

defineOp('replace_metadata', {
  kind: 'metadata',
  async run(ctx, args) {
    const inheritedRoles = checkMetadataShape(args);
    const md = normalizeMetadata(args);
    const raw = args as Record<string, unknown>;
    md.allowlist = parseAllowlist(md.allowlist, '$.allowlist');
    if (raw.api_limits !== undefined && raw.api_limits !== null) {
      const lim = parseApiLimits(raw.api_limits, '$.api_limits');
      if (apiLimitsEmpty(lim)) delete md.api_limits;
      else md.api_limits = lim;
    }
    md.inherited_roles = inheritedRoles;
    md.cron_triggers = md.cron_triggers.map((c, i) => {
      const a = new ArgReader(c, `$.cron_triggers[${i}]`, 'CronTriggerMetadata');
      const def = parseCronTrigger(a);
      a.done();
      return def;
    });
    const seen = new Set<string>();
    md.rest_endpoints = md.rest_endpoints.map((e, i) => {
      const def = parseRestEndpoint(new ArgReader(e, `$.rest_endpoints[${i}]`, 'CreateEndpoint'));
      if (seen.has(def.name)) throw new SvcError(400, 'already-exists', `Endpoint with name: ${def.name} already exists`, `$.rest_endpoints[${i}]`);
      seen.add(def.name);
      return def;
    });
    // cron triggers left out of the metadata (include_in_metadata: false) live on in the catalog
    md.cron_triggers.push(...keptCronTriggers(ctx.state.metadata, md));
    ctx.state.metadata = md;
    ctx.state.metadataChanged = true;
    const cache = await ctx.rebuild({ introspect: true });
    if (cache.inconsistent.length) {
      throw new SvcError(400, 'unexpected', 'cannot continue due to inconsistent metadata', ctx.path, cache.inconsistent);
    }
    return SUCCESS;
  },
});

defineOp('reload_metadata', {
  kind: 'metadata',
  async run(ctx, args) {
    if (args !== null && args !== undefined) {
      const a = reader(args);
      // new generations: this instance and every other one fetch the remotes anew
      if (a.bool('reload_remote_schemas', false))
        await bumpRemoteGenerations(
          ctx.conn,
          ctx.state.metadata.remote_schemas.map((r) => r.name),
        );
      a.done();
    }
    ctx.state.metadataChanged = true;
    await ctx.rebuild({ introspect: true });
    return SUCCESS;
  },
});

defineOp('clear_metadata', {
  kind: 'metadata',
  async run(ctx) {
    const md = emptyMetadata();
    md.cron_triggers = keptCronTriggers(ctx.state.metadata, md);
    ctx.state.metadata = md;
    return SUCCESS;
  },
});

defineOp('get_inconsistent_metadata', {
  kind: 'data',
  accessMode: () => 'read',
  async run(ctx) {
    const inc = ctx.state.cache.inconsistent;
    return { is_consistent: inc.length === 0, inconsistent_objects: inc };
  },
});

defineOp('drop_inconsistent_metadata', {
  kind: 'metadata',
  async run(ctx) {
    const md = ctx.state.metadata;
    for (const o of ctx.state.cache.inconsistent) {
      const ref = inconsistentRef(o);
      if (ref) removeRef(md, ref);
      else if (o.type === 'remote_schema') md.remote_schemas = md.remote_schemas.filter((r) => r.name !== (o.definition as { name: string }).name);
      else if (o.type === 'action') md.actions = md.actions.filter((r) => r.name !== (o.definition as { name: string }).name);
      else if (o.type === 'endpoint') md.rest_endpoints = md.rest_endpoints.filter((r) => r.name !== (o.definition as { name: string }).name);
      else if (o.type === 'inherited_role')
        md.inherited_roles = md.inherited_roles.filter((r) => r.role_name !== (o.definition as { role_name: string }).role_name);
    }
    ctx.state.metadataChanged = true;
    await ctx.rebuild();
    return SUCCESS;
  },
});

/** A summary of the schema cache, for debugging. */
defineOp('dump_internal_state', {
  kind: 'data',
  accessMode: () => 'read',
  async run(ctx) {
    const c = ctx.state.cache;
    return {
      resource_version: c.resourceVersion,
      tables: [...c.tables.values()].map((t) => ({
        table: t.name,
        columns: t.columns.map((col) => ({ name: col.name, graphql_name: col.gqlName, type: col.formatted, nullable: col.nullable })),
        primary_key: t.primaryKey,
        relationships: [...t.relationships.values()].map((r) => ({
          name: r.name,
          type: r.kind,
          remote_table: r.remoteTable,
          mapping: Object.fromEntries(r.mapping),
        })),
        computed_fields: [...t.computedFields.keys()],
        roles: [...t.permissions.keys()],
      })),
      functions: [...c.functions.values()].map((f) => ({ function: f.name, returns: f.returnTable })),
      roles: [...c.roles],
      inconsistent_objects: c.inconsistent,
    };
  },
});
