/** export_metadata, replace_metadata, reload_metadata, clear_metadata, get/drop_inconsistent_metadata. */
import { SvcError } from '../../errors.js';
import { exportMetadata, normalizeMetadata } from '../export.js';
import { inconsistentRef, removeRef } from '../dependencies.js';
import { SUCCESS, defineOp } from '../registry.js';
import { reader } from '../args.js';
import { emptyMetadata } from '../types.js';

defineOp('export_metadata', {
  kind: 'data',
  accessMode: () => 'read',
  async run(ctx) {
    return exportMetadata(ctx.state.metadata);
  },
});

defineOp('replace_metadata', {
  kind: 'metadata',
  async run(ctx, args) {
    const md = normalizeMetadata(args);
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
      a.bool('reload_remote_schemas', false);
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
    ctx.state.metadata = emptyMetadata();
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
        relationships: [...t.relationships.values()].map((r) => ({ name: r.name, type: r.kind, remote_table: r.remoteTable, mapping: Object.fromEntries(r.mapping) })),
        computed_fields: [...t.computedFields.keys()],
        roles: [...t.permissions.keys()],
      })),
      functions: [...c.functions.values()].map((f) => ({ function: f.name, returns: f.returnTable })),
      roles: [...c.roles],
      inconsistent_objects: c.inconsistent,
    };
  },
});
