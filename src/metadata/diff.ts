/**
 * run_sql's schema diff (upstream v1.3 `withMetadataCheck`): the database before and after the SQL,
 * compared by identity — tables and foreign keys by oid, columns by attnum, the functions of tracked
 * functions and computed fields by oid — and carried into the metadata:
 *
 *  - overloading a tracked function, or the function of a computed field, is not supported;
 *  - objects that depend on a dropped table, column, foreign key or computed-field function (a
 *    function dropped, renamed or replaced by another signature) fail with dependency-error, or are
 *    dropped with `cascade`; the dropped computed fields themselves are dependents too;
 *  - tracked functions that were dropped are untracked (nothing depends on them);
 *  - a function made VOLATILE is not supported; a column type that a permission compares with a
 *    static value cannot change (not even with `cascade`);
 *  - custom names of dropped columns go; renamed tables and columns are renamed in the metadata.
 *
 * What the diff cannot see (a renamed tracked function, an enum table's rows, a column renamed to a
 * relationship's name) shows in the rebuilt schema cache as new inconsistencies; run_sql refuses them.
 */
import type { DbIntrospection, ForeignKeyInfo, FunctionIntrospection } from '../model/introspection.js';
import { SvcError } from '../errors.js';
import type { SchemaCache } from '../schema/model.js';
import type { Dependency, SchemaObjectRef } from '../model/tables.js';
import { computedFieldDependent, dependencyError, dependentsOf, removeRef } from '../schema/dependencies.js';
import { renameColumns, renameTable, type RelationshipTarget } from './rename.js';
import { displayName, qualifiedKey, sameName, type Metadata, type QualifiedName, type QualifiedTable } from '../model/metadata.js';
import { columnTypeDependencies } from '../document/messages.js';

interface TableChange {
  /** the table's name in the metadata (before the SQL) */
  table: QualifiedTable;
  newName: QualifiedTable;
  droppedColumns: string[];
  renamedColumns: Map<string, string>;
  retypedColumns: string[];
  droppedForeignKeys: string[];
}

const quoted = (q: QualifiedName) => JSON.stringify(displayName(q));

function functionsByName(db: DbIntrospection): Map<string, FunctionIntrospection[]> {
  const m = new Map<string, FunctionIntrospection[]>();
  for (const f of db.functionsByOid.values()) {
    const k = qualifiedKey(f);
    m.set(k, [...(m.get(k) ?? []), f]);
  }
  return m;
}

/** A foreign key is dropped when neither its oid nor its (referenced table, column mapping) is left. */
function droppedForeignKeys(before: ForeignKeyInfo[], after: ForeignKeyInfo[]): string[] {
  const mapping = (f: ForeignKeyInfo) => JSON.stringify([qualifiedKey(f.refTable), f.columns.map((c, i) => `${c}=${f.refColumns[i]}`).sort()]);
  const oids = new Set(after.map((f) => f.oid));
  const mappings = new Set(after.map(mapping));
  return before.filter((f) => !oids.has(f.oid) && !mappings.has(mapping(f))).map((f) => f.name);
}

/** Carries the changes the SQL made to the database into `md` (or throws); true when `md` changed. */
export function applySchemaDiff(md: Metadata, cache: SchemaCache, before: DbIntrospection, after: DbIntrospection, cascade: boolean, path: string): boolean {
  const afterTables = new Map([...after.tables.values()].map((t) => [t.oid, t]));
  const afterFunctions = functionsByName(after);
  const named = (q: QualifiedName) => afterFunctions.get(qualifiedKey(q)) ?? [];

  // tracked functions (the consistent ones: upstream compares the schema cache's)
  const tracked = md.functions.map((f) => f.function).filter((f) => cache.functions.has(qualifiedKey(f)));
  const overloaded = tracked.filter((f) => named(f).length > 1);
  if (overloaded.length) {
    // the names without quotes, as upstream v1.3 (`reportFuncs = T.intercalate ", " . map dquoteTxt`)
    throw new SvcError(400, 'not-supported', `the following tracked function(s) cannot be overloaded: ${overloaded.map(displayName).join(', ')}`, path);
  }
  const droppedFunctions = tracked.filter((f) => !after.functionsByOid.has(cache.functions.get(qualifiedKey(f))!.info.oid));

  // tables and their computed fields
  const droppedTables: QualifiedTable[] = [];
  const changes: TableChange[] = [];
  const droppedComputedFields: Array<{ table: QualifiedTable; name: string }> = [];
  const alteredComputedFields: Array<{ table: QualifiedTable; name: string; fn: FunctionIntrospection; now: FunctionIntrospection[] }> = [];
  for (const tm of md.tables) {
    const model = cache.tables.get(qualifiedKey(tm.table));
    const b = model && before.tables.get(qualifiedKey(tm.table));
    if (!model || !b) continue;
    const a = afterTables.get(b.oid);
    if (!a) {
      droppedTables.push({ ...tm.table });
      continue;
    }
    const change: TableChange = {
      table: { ...tm.table }, // a copy: renaming changes the metadata's own
      newName: { schema: a.schema, name: a.name },
      droppedColumns: [],
      renamedColumns: new Map(),
      retypedColumns: [],
      droppedForeignKeys: droppedForeignKeys(b.foreignKeys, a.foreignKeys),
    };
    const afterColumns = new Map(a.columns.map((c) => [c.attnum, c]));
    for (const c of b.columns) {
      const ac = afterColumns.get(c.attnum);
      if (!ac) change.droppedColumns.push(c.name);
      else {
        if (ac.name !== c.name) change.renamedColumns.set(c.name, ac.name);
        if (ac.typeOid !== c.typeOid) change.retypedColumns.push(c.name);
      }
    }
    changes.push(change);
    for (const cf of model.computedFields.values()) {
      const now = named(cf.def.definition.function);
      // dropped, renamed or replaced by another signature: the function is another one now
      if (!now.some((f) => f.oid === cf.function.oid)) droppedComputedFields.push({ table: tm.table, name: cf.name });
      else alteredComputedFields.push({ table: tm.table, name: cf.name, fn: cf.function, now });
    }
  }

  // dependents of what was dropped: an error, or dropped with them
  const targets: SchemaObjectRef[] = [
    ...droppedTables.map((table): SchemaObjectRef => ({ kind: 'table', table })),
    ...changes.flatMap((c) => [
      ...c.droppedColumns.map((column): SchemaObjectRef => ({ kind: 'column', table: c.table, column })),
      ...c.droppedForeignKeys.map((name): SchemaObjectRef => ({ kind: 'constraint', table: c.table, name })),
    ]),
    ...droppedComputedFields.map((cf): SchemaObjectRef => ({ kind: 'computed_field', ...cf })),
  ];
  const selves: Dependency[] = droppedComputedFields.map((cf) => ({
    dependent: computedFieldDependent(cf.table, cf.name),
    ref: { kind: 'computed_field', ...cf },
    on: { kind: 'computed_field', ...cf },
  }));
  // a tracked function dropped with the table it returns is untracked without asking
  const goneFunction = (d: Dependency) =>
    d.ref.kind === 'function' && droppedFunctions.some((f) => sameName(f, (d.ref as { function: QualifiedName }).function));
  const deps = [...selves, ...(targets.length ? dependentsOf(cache, targets, droppedTables) : [])].filter((d) => d.ref.kind !== 'table');
  const reported = deps.filter((d) => !goneFunction(d));
  if (reported.length && !cascade) throw dependencyError(reported, path);

  // altered functions
  for (const f of tracked) {
    const was = cache.functions.get(qualifiedKey(f))!.info;
    const now = after.functionsByOid.get(was.oid);
    if (now && now.volatility === 'v' && was.volatility !== 'v') {
      throw new SvcError(400, 'not-supported', `type of function ${quoted(f)} is altered to "VOLATILE" which is not supported now`, path);
    }
  }
  for (const cf of alteredComputedFields) {
    if (cf.now.length > 1) {
      throw new SvcError(
        400,
        'not-supported',
        `The function ${quoted(cf.fn)} associated with computed field${JSON.stringify(cf.name)} of table ${quoted(cf.table)} is being overloaded`,
        path,
      );
    }
    if (cf.now[0]!.volatility === 'v' && cf.fn.volatility !== 'v') {
      throw new SvcError(
        400,
        'not-supported',
        `The type of function ${quoted(cf.fn)} associated with computed field ${JSON.stringify(cf.name)} of table ${quoted(cf.table)} is being altered to "VOLATILE"`,
        path,
      );
    }
  }

  // a column type a permission compares with a static value cannot change
  const removed = new Set(deps.map((d) => d.dependent));
  for (const c of changes) {
    for (const column of c.retypedColumns) {
      const typed = cache.dependencies.filter(
        (d) => d.onType && !removed.has(d.dependent) && d.on.kind === 'column' && sameName(d.on.table, c.table) && d.on.column === column,
      );
      if (typed.length) {
        const names = [...new Set(typed.map((d) => d.dependent))].sort();
        throw columnTypeDependencies(column, c.table, names, path);
      }
    }
  }

  // apply
  let changed = false;
  for (const d of deps) removeRef(md, d.ref);
  for (const table of droppedTables) removeRef(md, { kind: 'table', table });
  for (const f of droppedFunctions) removeRef(md, { kind: 'function', function: f });
  changed ||= deps.length > 0 || droppedTables.length > 0 || droppedFunctions.length > 0;
  for (const c of changes) {
    const cfg = md.tables.find((t) => sameName(t.table, c.table))?.configuration;
    for (const column of c.droppedColumns) {
      if (cfg?.custom_column_names && column in cfg.custom_column_names) {
        delete cfg.custom_column_names[column];
        changed = true;
      }
    }
  }
  const renamed = changes.filter((c) => !sameName(c.table, c.newName));
  for (const c of renamed) renameTable(md, c.table, c.newName);
  // relationships are resolved by the cache, under the names before the SQL
  const oldName = (t: QualifiedTable) => renamed.find((c) => sameName(c.newName, t))?.table ?? t;
  const newName = (t: QualifiedTable) => renamed.find((c) => sameName(c.table, t))?.newName ?? t;
  const relTarget: RelationshipTarget = (t, rel) => {
    const r = cache.tables.get(qualifiedKey(oldName(t)))?.relationships.get(rel);
    return r ? newName(r.remoteTable) : undefined;
  };
  for (const c of changes) if (c.renamedColumns.size) renameColumns(md, c.newName, c.renamedColumns, relTarget);
  return changed || renamed.length > 0 || changes.some((c) => c.renamedColumns.size > 0);
}
