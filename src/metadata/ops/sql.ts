/**
 * run_sql: executes SQL on the request's connection; afterwards the database
 * is re-introspected and compared with what the metadata was built on:
 * renamed tables/columns are carried into the metadata, dropped or retyped
 * objects that metadata depends on fail with dependency-error unless
 * `cascade`.
 */
import type { DbIntrospection } from '../../catalog/introspect.js';
import { introspect } from '../../catalog/introspect.js';
import { asPgError } from '../../db/db.js';
import { SvcError } from '../../errors.js';
import type { SchemaObjectRef } from '../../schema/model.js';
import { dependentsOf, dependencyError, removeRef } from '../dependencies.js';
import { defineOp } from '../registry.js';
import { reader } from '../run.js';
import { renameColumn, renameTable } from '../rename.js';
import { displayName, type QualifiedTable } from '../types.js';

export function pgExecError(e: unknown, statement: string, path: string): SvcError {
  const pe = asPgError(e);
  if (!pe) return e instanceof SvcError ? e : new SvcError(500, 'unexpected', (e as Error)?.message ?? 'unexpected error', path);
  return new SvcError(400, 'postgres-error', 'query execution failed', path, {
    statement,
    prepared: false,
    error: { exec_status: 'FatalError', hint: pe.hint ?? null, message: pe.message, status_code: pe.code, description: pe.detail ?? null },
    arguments: [],
  });
}

defineOp('run_sql', {
  kind: 'data',
  accessMode: (args) => ((args as { read_only?: boolean })?.read_only === true ? 'read-only-forced' : 'write'),
  async run(ctx, args) {
    const a = reader(args);
    const sql = a.string('sql');
    const cascade = a.bool('cascade', false);
    const check = a.bool('check_metadata_consistency', true);
    const readOnly = a.bool('read_only', false);
    a.done();

    const tracked = ctx.state.metadata.tables.length + ctx.state.metadata.functions.length > 0;
    const diff = check && !readOnly && tracked;
    const before = diff ? ctx.state.cache.db : undefined;
    let results;
    try {
      await ctx.conn.query('savepoint svc_run_sql');
      results = await ctx.conn.multi(sql);
      await ctx.conn.query('release savepoint svc_run_sql');
    } catch (e) {
      throw pgExecError(e, sql, ctx.path);
    }
    if (!readOnly) ctx.state.dbChanged = true;
    if (!readOnly) {
      // later ops of a bulk see the database as this SQL left it
      const after = await introspect(ctx.conn);
      if (diff) applySchemaDiff(ctx, before!, after, cascade);
      await ctx.rebuild({ db: after });
    }
    const last = results[results.length - 1];
    if (!last || last.command !== 'SELECT' || (last.fields.length === 0 && last.rows.length === 0 && last.command !== 'SELECT')) {
      return { result_type: 'CommandOk', result: null };
    }
    return { result_type: 'TuplesOk', result: [last.fields, ...last.rows] };
  },
});

function applySchemaDiff(ctx: Parameters<Parameters<typeof defineOp>[1]['run']>[0], before: DbIntrospection, after: DbIntrospection, cascade: boolean): void {
  const md = ctx.state.metadata;
  const cache = ctx.state.cache;
  const afterByOid = new Map([...after.tables.values()].map((t) => [t.oid, t]));
  const droppedTables: QualifiedTable[] = [];
  const droppedObjects: SchemaObjectRef[] = [];
  const renamedTables: Array<[QualifiedTable, QualifiedTable]> = [];
  const renamedColumns: Array<[QualifiedTable, string, string]> = [];
  const typeChanges: Array<{ table: QualifiedTable; column: string }> = [];

  for (const tm of md.tables) {
    const b = before.tables.get(`${tm.table.schema}.${tm.table.name}`);
    if (!b) continue;
    const a = afterByOid.get(b.oid);
    if (!a) {
      droppedTables.push(tm.table);
      droppedObjects.push({ kind: 'table', table: tm.table });
      continue;
    }
    const newName = { schema: a.schema, name: a.name };
    if (a.schema !== b.schema || a.name !== b.name) renamedTables.push([tm.table, newName]);
    const afterCols = new Map(a.columns.map((c) => [c.attnum, c]));
    for (const c of b.columns) {
      const ac = afterCols.get(c.attnum);
      if (!ac) droppedObjects.push({ kind: 'column', table: tm.table, column: c.name });
      else {
        if (ac.name !== c.name) renamedColumns.push([newName, c.name, ac.name]);
        if (ac.typeOid !== c.typeOid) typeChanges.push({ table: tm.table, column: c.name });
      }
    }
  }
  const afterFnOids = new Set([...after.functions.values()].map((f) => f.oid));
  for (const [k, f] of before.functions) {
    if (!afterFnOids.has(f.oid)) droppedObjects.push({ kind: 'function', function: { schema: f.schema, name: f.name } });
    else {
      const now = [...after.functions.values()].find((x) => x.oid === f.oid)!;
      if (now.volatility === 'v' && f.volatility !== 'v' && md.functions.some((m) => `${m.function.schema}.${m.function.name}` === k)) {
        throw new SvcError(400, 'not-supported', `type of function ${JSON.stringify(displayName(f))} is altered to "VOLATILE" which is not supported now`, ctx.path);
      }
    }
  }

  for (const tc of typeChanges) {
    const deps = cache.dependencies.filter(
      (d) => d.onType && d.on.kind === 'column' && d.on.table.schema === tc.table.schema && d.on.table.name === tc.table.name && d.on.column === tc.column,
    );
    if (deps.length) {
      const names = [...new Set(deps.map((d) => d.dependent))].sort();
      throw new SvcError(400, 'dependency-error', `cannot change type of column ${JSON.stringify(tc.column)} in table ${JSON.stringify(displayName(tc.table))} because of the following dependencies : ${names.join(', ')}`, ctx.path);
    }
  }

  if (droppedObjects.length) {
    const deps = dependentsOf(cache, droppedObjects, droppedTables).filter((d) => !(d.ref.kind === 'table'));
    // the dropped tables' own definitions go away with them; functions that were dropped are untracked
    const droppedFn = (r: (typeof deps)[number]['ref']) =>
      r.kind === 'function' && droppedObjects.some((o) => o.kind === 'function' && o.function.name === r.function.name && o.function.schema === r.function.schema);
    const external = deps.filter((d) => !droppedFn(d.ref));
    if (external.length && !cascade) throw dependencyError(external, ctx.path);
    for (const d of deps) removeRef(md, d.ref);
    for (const t of droppedTables) removeRef(md, { kind: 'table', table: t });
    for (const o of droppedObjects) if (o.kind === 'function') removeRef(md, { kind: 'function', function: o.function });
    ctx.state.metadataChanged = true;
  }
  for (const [from, to] of renamedTables) {
    renameTable(md, from, to);
    ctx.state.metadataChanged = true;
  }
  // relationships resolved by the cache (built on the old names)
  const oldName = (t: QualifiedTable) => renamedTables.find(([, n]) => n.schema === t.schema && n.name === t.name)?.[0] ?? t;
  const newName = (t: QualifiedTable) => renamedTables.find(([o]) => o.schema === t.schema && o.name === t.name)?.[1] ?? t;
  const relTarget = (t: QualifiedTable, rel: string) => {
    const r = cache.tables.get(`${oldName(t).schema}.${oldName(t).name}`)?.relationships.get(rel);
    return r ? newName(r.remoteTable) : undefined;
  };
  for (const [table, from, to] of renamedColumns) {
    renameColumn(md, table, from, to, relTarget);
    ctx.state.metadataChanged = true;
  }
}
