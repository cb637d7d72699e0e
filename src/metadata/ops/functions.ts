/** track_function (v1, v2), untrack_function, add_computed_field, drop_computed_field. */
import { SvcError, notExists } from '../../errors.js';
import { ArgReader, expectObject, parseQualified, reader } from '../../document/args.js';
import { dropDependents } from '../../schema/dependencies.js';
import { SUCCESS, defineOp, type OpContext } from '../registry.js';
import { displayName, sameName, type QualifiedFunction } from '../../model/metadata.js';
import { findTable } from './tables.js';

/**
 * Only what upstream's trackFunctionP1 checks is checked here (already tracked, a table of that name);
 * the function itself — missing, overloaded, not trackable, a bad session argument — is checked by the
 * schema builder when the runner rebuilds the cache (src/metadata/run.ts): it answers as for any
 * object a change makes inconsistent, `constraint-violation` with the reasons ("in function "f": …")
 * and the inconsistent object in `internal`, as upstream's buildSchemaCacheFor.
 */
function track(ctx: OpContext, fn: QualifiedFunction, configuration?: { session_argument?: string }) {
  const md = ctx.state.metadata;
  if (md.functions.some((f) => sameName(f.function, fn))) {
    throw new SvcError(400, 'already-tracked', `function already tracked : ${JSON.stringify(displayName(fn))}`, ctx.path);
  }
  if (md.tables.some((t) => sameName(t.table, fn))) {
    throw new SvcError(400, 'not-supported', `table with name ${JSON.stringify(displayName(fn))} already exists`, ctx.path);
  }
  md.functions.push(configuration && Object.keys(configuration).length ? { function: fn, configuration } : { function: fn });
  return SUCCESS;
}

defineOp('track_function', {
  kind: 'metadata',
  async run(ctx, args, version) {
    if (version === 1) return track(ctx, parseQualified(args, '$', 'QualifiedFunction'));
    const a = reader(args);
    const fn = parseQualified(a.required('function'), a.sub('function'), 'QualifiedFunction');
    const cfgRaw = a.raw('configuration');
    a.done();
    let configuration: { session_argument?: string } | undefined;
    if (cfgRaw !== undefined && cfgRaw !== null) {
      const c = new ArgReader(cfgRaw, a.sub('configuration'));
      const sa = c.name('session_argument', true);
      c.done();
      configuration = sa !== undefined ? { session_argument: sa } : {};
    }
    return track(ctx, fn, configuration);
  },
});

defineOp('untrack_function', {
  kind: 'metadata',
  async run(ctx, args) {
    const o = expectObject(args, '$');
    const fn = 'function' in o ? parseQualified(o.function, `${ctx.path}.function`, 'QualifiedFunction') : parseQualified(args, '$', 'QualifiedFunction');
    const md = ctx.state.metadata;
    if (!md.functions.some((f) => sameName(f.function, fn))) {
      throw notExists(`function not found in cache ${JSON.stringify(displayName(fn))}`, ctx.path);
    }
    md.functions = md.functions.filter((f) => !sameName(f.function, fn));
    return SUCCESS;
  },
});

defineOp('add_computed_field', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const table = a.table();
    const name = a.name('name');
    const d = new ArgReader(a.required('definition'), a.sub('definition'));
    const fn = parseQualified(d.required('function'), d.sub('function'), 'QualifiedFunction');
    const tableArgument = d.name('table_argument', true);
    const sessionArgument = d.name('session_argument', true);
    d.done();
    const comment = a.string('comment', true);
    a.done();
    const t = findTable(ctx, table, `${ctx.path}.table`);
    if (t.computed_fields.some((c) => c.name === name)) {
      throw new SvcError(400, 'already-exists', `computed field ${JSON.stringify(name)} already exists`, ctx.path);
    }
    if ([...t.object_relationships, ...t.array_relationships].some((r) => r.name === name)) {
      throw new SvcError(400, 'already-exists', `field definition conflicts with relationship ${JSON.stringify(name)}`, ctx.path);
    }
    const definition: { function: QualifiedFunction; table_argument?: string; session_argument?: string } = { function: fn };
    if (tableArgument !== undefined) definition.table_argument = tableArgument;
    if (sessionArgument !== undefined) definition.session_argument = sessionArgument;
    t.computed_fields.push({ name, definition, ...(comment !== undefined ? { comment } : {}) });
    return SUCCESS;
  },
});

defineOp('drop_computed_field', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const table = a.table();
    const name = a.name('name');
    const cascade = a.bool('cascade', false);
    a.done();
    const t = findTable(ctx, table, `${ctx.path}.table`);
    if (!t.computed_fields.some((c) => c.name === name)) {
      throw notExists(`computed field ${JSON.stringify(name)} does not exist`, `${ctx.path}.name`);
    }
    dropDependents(ctx.state.metadata, ctx.state.cache, [{ kind: 'computed_field', table, name }], cascade, ctx.path);
    const t2 = findTable(ctx, table);
    // permissions naming the field lose it (the builder would otherwise flag them)
    t2.computed_fields = t2.computed_fields.filter((c) => c.name !== name);
    return SUCCESS;
  },
});
