/**
 * /v1/query `update` and `delete` (Hasura v1 DML).
 *   update: `{table, where, $set?, $inc?, $mul?, $default?, returning?}`
 *   delete: `{table, where, returning?}`
 * For a role: its update/delete filter is ANDed into the where, only its
 * updatable columns may be set, its presets are applied and its update check
 * is verified on the updated rows.
 */
import { SvcError, err400 } from '../errors.js';
import { isSessionVariable } from '../permissions/boolexp.js';
import { FilterBuilder, columnType, pathKey } from '../permissions/filter.js';
import type { ColumnModel, TableModel } from '../schema/model.js';
import { ident, join, raw, sql, type Sql } from '../sql/ast.js';
import { Aliases, andSql, boolExpSql, tableSql, valueSql } from '../sql/boolexp.js';
import { isAdminSession, lookupTableArg, requireObject, returningColumns, runMutation, tableDisplay, type DmlContext } from './common.js';
import { whereBuilder } from './select.js';

const T = '_t';

function permFilter(ctx: DmlContext, table: TableModel, exp: unknown, aliases: Aliases): Sql {
  return boolExpSql(new FilterBuilder(ctx.cache, { sessionVariables: true, nullSafeEq: true }).build(exp, table), T, aliases);
}

function userWhere(ctx: DmlContext, table: TableModel, where: unknown, aliases: Aliases): Sql {
  if (where === undefined) throw err400('parse-failed', 'key "where" not found', '$');
  return boolExpSql(whereBuilder(ctx).build(where, table, '$.args.where'), T, aliases);
}

const OPERATORS = ['$set', '$inc', '$mul', '$default'] as const;

export async function runDmlUpdate(ctx: DmlContext, args: unknown): Promise<{ affected_rows: number; returning?: unknown[] }> {
  const a = requireObject(args) as Record<string, unknown>;
  if (a.where === undefined) throw err400('parse-failed', 'key "where" not found', '$');
  const table = lookupTableArg(ctx, a.table);
  const admin = isAdminSession(ctx);
  const upd = admin ? undefined : table.permissions.get(ctx.session.role)?.update;
  if (!admin && !upd) {
    throw new SvcError(400, 'permission-denied', `update on ${tableDisplay(table)} for role ${JSON.stringify(ctx.session.role)} is not allowed. `, '$.args');
  }
  const returning = returningColumns(ctx, table, a.returning);
  const presets = upd?.set ?? {};
  const aliases = new Aliases();
  const sets: Sql[] = [];
  const seen = new Set<string>();
  const column = (op: string, name: string): ColumnModel => {
    const path = `$.args${pathKey(op)}`;
    const col = table.columnsByName.get(name);
    if (!col) throw err400('not-exists', `no such column exists : ${JSON.stringify(name)}`, path);
    if (name in presets) {
      throw new SvcError(400, 'not-supported', `column ${JSON.stringify(name)} is not updatable for role ${JSON.stringify(ctx.session.role)}; its value is predefined in permission`, path);
    }
    if (upd && !upd.columns.includes(name)) {
      throw new SvcError(400, 'permission-denied', `role ${JSON.stringify(ctx.session.role)} does not have permission to update column ${JSON.stringify(name)}`, path);
    }
    if (seen.has(name)) throw err400('unexpected-payload', `column ${JSON.stringify(name)} found in multiple operators`, path);
    seen.add(name);
    return col;
  };
  for (const op of OPERATORS) {
    const v = a[op];
    if (v === undefined || v === null) continue;
    if (op === '$default') {
      if (!Array.isArray(v)) throw err400('parse-failed', 'expecting an array of columns', `$.args['$default']`);
      for (const n of v) sets.push(sql`${ident(column(op, String(n)).name)} = DEFAULT`);
      continue;
    }
    for (const [name, value] of Object.entries(requireObject(v, `$.args${pathKey(op)}`))) {
      const col = column(op, name);
      const val = valueSql({ ref: { kind: 'literal', value }, type: columnType(col) });
      const target = ident(col.name);
      if (op === '$set') sets.push(sql`${target} = ${val}`);
      else if (op === '$inc') sets.push(sql`${target} = ${ident(T, col.name)} + ${val}`);
      else sets.push(sql`${target} = ${ident(T, col.name)} * ${val}`);
    }
  }
  for (const [name, p] of Object.entries(presets)) {
    const col = table.columnsByName.get(name)!;
    const ref = isSessionVariable(p) ? { kind: 'session' as const, name: p.toLowerCase() } : { kind: 'literal' as const, value: p };
    sets.push(sql`${ident(col.name)} = ${valueSql({ ref, type: columnType(col) })}`);
  }
  if (sets.length === 0) throw err400('unexpected-payload', 'atleast one of $set, $inc, $mul has to be present', '$.args');
  const conds = [userWhere(ctx, table, a.where, aliases)];
  if (upd) conds.push(permFilter(ctx, table, upd.filter, aliases));
  const check = upd?.check ? permFilter(ctx, table, upd.check, aliases) : raw('true');
  const mutation = sql`UPDATE ${tableSql(table)} AS ${ident(T)} SET ${join(sets, ', ')} WHERE ${andSql(conds)} RETURNING *, (${check}) AS "__svc_check"`;
  return runMutation(ctx, mutation, returning, 'update check constraint failed');
}

export async function runDmlDelete(ctx: DmlContext, args: unknown): Promise<{ affected_rows: number; returning?: unknown[] }> {
  const a = requireObject(args) as Record<string, unknown>;
  if (a.where === undefined) throw err400('parse-failed', 'key "where" not found', '$');
  const table = lookupTableArg(ctx, a.table);
  const admin = isAdminSession(ctx);
  const del = admin ? undefined : table.permissions.get(ctx.session.role)?.delete;
  if (!admin && !del) {
    throw new SvcError(400, 'permission-denied', `delete on ${tableDisplay(table)} for role ${JSON.stringify(ctx.session.role)} is not allowed. `, '$.args');
  }
  const returning = returningColumns(ctx, table, a.returning);
  const aliases = new Aliases();
  const conds = [userWhere(ctx, table, a.where, aliases)];
  if (del) conds.push(permFilter(ctx, table, del.filter, aliases));
  const mutation = sql`DELETE FROM ${tableSql(table)} AS ${ident(T)} WHERE ${andSql(conds)} RETURNING *, true AS "__svc_check"`;
  return runMutation(ctx, mutation, returning, '');
}
