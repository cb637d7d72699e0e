/**
 * /v1/query `insert` (Hasura v1 DML): `{table, objects, returning?, on_conflict?}`
 * → `{affected_rows, returning?}`. For a role: only its insertable columns
 * (a preset column given is an error), its presets applied, and its check
 * verified on every inserted row (a failed check raises, so the surrounding
 * transaction rolls back); upserts need the role's update permission, whose
 * filter limits the rows updated. A backend-only insert permission exists only
 * for requests that may use it (see permissions/mutation.ts).
 */
import { err400 } from '../errors.js';
import { columnNotAllowed, columnNotUpdatable, operationNotAllowed, presetNotInsertable, upsertNotAllowed } from '../permissions/messages.js';
import type { ColumnValue, ConflictTarget, Insert, InsertRow, OnConflict } from '../ir/types.js';
import { columnType } from '../permissions/filter.js';
import type { ColumnModel, TableModel } from '../model/tables.js';
import { askColumn, lookupTableArg, requireObject, returningColumns, roleAccess, runMutation, type DmlContext } from './common.js';
import { isJsonObject } from '../json.js';

interface InsertArgs {
  table?: unknown;
  objects?: unknown;
  returning?: unknown;
  on_conflict?: unknown;
}

export async function runDmlInsert(ctx: DmlContext, args: unknown): Promise<{ affected_rows: number; returning?: unknown[] }> {
  const a = requireObject(args) as InsertArgs;
  // structural checks of the arguments come before any semantic one (Hasura parses the JSON first)
  if (isJsonObject(a.on_conflict) && a.on_conflict.action === undefined) {
    throw err400('parse-failed', "the key 'action' was not present", '$.on_conflict');
  }
  // upstream (RQL/DML/Insert.hs convInsertQuery): the objects are decoded first, then the table,
  // the permission, `returning`, the objects' columns and `on_conflict`
  const objects = Array.isArray(a.objects) ? a.objects : isJsonObject(a.objects) ? [a.objects] : null;
  if (!objects) throw err400('parse-failed', 'expecting an array of objects', '$.args.objects');
  if (objects.length === 0) throw err400('unexpected-payload', 'objects should not be empty', '$.args.objects');
  const table = lookupTableArg(ctx, a.table);
  const access = roleAccess(ctx);
  const ins = access.insert(table);
  if (!ins) throw operationNotAllowed('insert', table.name, ctx.session.role, '$.args');

  // returning columns are checked first (as Hasura does)
  const returning = returningColumns(ctx, table, a.returning);

  // a column the permission presets is not the client's to give (Hasura: an error, not a silent replacement)
  const preset = new Set(ins.presets.map((p) => p.column.name));
  const insertable = new Set(ins.columns.map((c) => c.name));
  const rows: InsertRow[] = objects.map((o, i) => {
    const obj = requireObject(o, `$.args.objects[${i}]`);
    const values: ColumnValue[] = [];
    for (const [k, v] of Object.entries(obj)) {
      const col = askColumn(table, k, "relationships can't be inserted", `$.args.objects[${i}]`);
      if (preset.has(k)) throw presetNotInsertable(k, ctx.session.role, `$.args.objects[${i}]`);
      if (!insertable.has(k)) throw columnNotAllowed('insert', ctx.session.role, k, `$.args.objects[${i}]`);
      values.push({ column: col, value: { ref: { kind: 'literal', value: v }, type: columnType(col), numberText: 'binary' } });
    }
    return { values, objectRels: [], arrayRels: [] };
  });
  const given = table.columns.filter((c) => rows.some((r) => r.values.some((v) => v.column === c)));
  const columns = table.columns.filter((c) => preset.has(c.name) || given.includes(c));
  const insert: Insert = {
    table,
    rows,
    presets: ins.presets,
    onConflict: onConflict(ctx, table, a.on_conflict, columns, given),
    check: ins.check,
    updateCheck: null,
  };
  return runMutation(ctx, { kind: 'insert', insert }, returning);
}

function onConflict(ctx: DmlContext, table: TableModel, oc: unknown, columns: ColumnModel[], given: ColumnModel[]): OnConflict | null {
  if (oc === undefined || oc === null) return null;
  // upstream: any on_conflict needs update permission, checked before the clause itself
  const upd = roleAccess(ctx).update(table);
  if (!upd) throw upsertNotAllowed(ctx.session.role, '$.args.on_conflict');
  const o = requireObject(oc, '$.args.on_conflict') as { action?: unknown; constraint?: unknown; constraint_on?: unknown };
  if (o.action === undefined) throw err400('parse-failed', "the key 'action' was not present", '$.on_conflict');
  if (o.action !== 'ignore' && o.action !== 'update')
    throw err400('parse-failed', `unexpected action: ${JSON.stringify(o.action)}; expecting "ignore" or "update"`, '$.args.on_conflict.action');
  if (o.constraint !== undefined && o.constraint_on !== undefined)
    throw err400('unexpected-payload', "'constraint' and 'constraint_on' cannot be set at a time", '$.args.on_conflict');
  let target: ConflictTarget | null = null;
  if (typeof o.constraint === 'string') {
    target = { kind: 'constraint', name: o.constraint };
  } else if (o.constraint_on !== undefined) {
    const cols = Array.isArray(o.constraint_on) ? o.constraint_on : [o.constraint_on];
    target = {
      kind: 'columns',
      columns: cols.map((c, i) => {
        return askColumn(table, String(c), '', `$.args.on_conflict.constraint_on[${i}]`);
      }),
    };
  }
  if (o.action === 'ignore') return { action: 'ignore', target };
  if (!target) throw err400('unexpected-payload', "Expecting 'constraint' or 'constraint_on' when the 'action' is 'update'", '$.args.on_conflict');
  // upstream's validateInpCols: every inserted column must be updatable
  for (const c of given) if (!upd.columns.includes(c)) throw columnNotUpdatable(c.name, '$.args.on_conflict');
  const updatable = columns.filter((c) => upd.columns.includes(c));
  if (updatable.length === 0 && upd.presets.length === 0) return { action: 'ignore', target };
  return { action: 'update', target, columns: updatable, presets: upd.presets, where: upd.filter };
}
