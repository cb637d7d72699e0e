/**
 * /v1/query `update` and `delete` (Hasura v1 DML).
 *   update: `{table, where, $set?, $inc?, $mul?, $default?, returning?}`
 *   delete: `{table, where, returning?}`
 * For a role: the where is a read (select permission required, checked as
 * every request's boolean expression is), its update/delete filter is ANDed
 * into it, only its updatable columns may be set, its presets are applied
 * and its update check is verified on the updated rows.
 */
import { err400 } from '../errors.js';
import { keyNotFound } from '../document/args.js';
import { columnNotAllowed, operationNotAllowed, presetNotUpdatable } from '../permissions/messages.js';
import { andExp, type UpdateItem, type UpdateOp } from '../ir/types.js';
import type { BoolExp, ColumnModel, TableModel } from '../model/tables.js';
import { columnType, pathKey } from '../permissions/filter.js';
import { presetValue } from '../permissions/mutation.js';
import { askColumn, isAdminSession, lookupTableArg, requireObject, returningColumns, runMutation, whereNeedsSelect, type DmlContext } from './common.js';
import { whereBuilder } from './select.js';

function userWhere(ctx: DmlContext, table: TableModel, where: unknown): BoolExp {
  if (where === undefined) throw keyNotFound('where', '$');
  return whereBuilder(ctx).build(where, table, '$.args.where');
}

const OPERATORS = ['$set', '$inc', '$mul', '$default'] as const;
const OP: Record<(typeof OPERATORS)[number], UpdateOp> = { $set: 'set', $inc: 'inc', $mul: 'mul', $default: 'default' };

export async function runDmlUpdate(ctx: DmlContext, args: unknown): Promise<{ affected_rows: number; returning?: unknown[] }> {
  const a = requireObject(args) as Record<string, unknown>;
  if (a.where === undefined) throw keyNotFound('where', '$');
  const table = lookupTableArg(ctx, a.table);
  const admin = isAdminSession(ctx);
  const upd = admin ? undefined : table.permissions.get(ctx.session.role)?.update;
  if (!admin && !upd) {
    throw operationNotAllowed('update', table.name, ctx.session.role, '$.args');
  }
  whereNeedsSelect(ctx, table, 'update');
  const returning = returningColumns(ctx, table, a.returning);
  const presets = upd?.set ?? {};
  const items: UpdateItem[] = [];
  const seen = new Set<string>();
  const column = (op: string, name: string): ColumnModel => {
    const path = `$.args${pathKey(op)}`;
    // upstream's convOp: the preset, then the permission's columns (admin: every column), then the column
    if (name in presets) throw presetNotUpdatable(name, ctx.session.role, path);
    if (upd ? !upd.columns.includes(name) : !table.columnsByName.has(name)) throw columnNotAllowed('update', ctx.session.role, name, path);
    const col = askColumn(table, name, "relationships can't be updated", path);
    if (seen.has(name)) throw err400('unexpected-payload', `column ${JSON.stringify(name)} found in multiple operators`, path);
    seen.add(name);
    return col;
  };
  for (const op of OPERATORS) {
    const v = a[op];
    if (v === undefined || v === null) continue;
    if (op === '$default') {
      if (!Array.isArray(v)) throw err400('parse-failed', 'expecting an array of columns', `$.args['$default']`);
      for (const n of v) items.push({ column: column(op, String(n)), op: 'default', value: null });
      continue;
    }
    for (const [name, value] of Object.entries(requireObject(v, `$.args${pathKey(op)}`))) {
      const col = column(op, name);
      items.push({ column: col, op: OP[op], value: { ref: { kind: 'literal', value }, type: columnType(col), numberText: 'binary' } });
    }
  }
  for (const [name, p] of Object.entries(presets)) {
    const pv = presetValue(table.columnsByName.get(name)!, p);
    items.push({ column: pv.column, op: 'set', value: pv.value });
  }
  if (items.length === 0) throw err400('unexpected-payload', 'atleast one of $set, $inc, $mul has to be present', '$.args');
  const where = andExp(userWhere(ctx, table, a.where), upd ? upd.filterExp : null);
  const check = upd?.checkExp ?? null;
  return runMutation(ctx, { kind: 'update', update: { table, items, where, check } }, returning);
}

export async function runDmlDelete(ctx: DmlContext, args: unknown): Promise<{ affected_rows: number; returning?: unknown[] }> {
  const a = requireObject(args) as Record<string, unknown>;
  if (a.where === undefined) throw keyNotFound('where', '$');
  const table = lookupTableArg(ctx, a.table);
  const admin = isAdminSession(ctx);
  const del = admin ? undefined : table.permissions.get(ctx.session.role)?.delete;
  if (!admin && !del) {
    throw operationNotAllowed('delete', table.name, ctx.session.role, '$.args');
  }
  whereNeedsSelect(ctx, table, 'delete');
  const returning = returningColumns(ctx, table, a.returning);
  const where = andExp(userWhere(ctx, table, a.where), del ? del.filterExp : null);
  return runMutation(ctx, { kind: 'delete', delete: { table, where } }, returning);
}
