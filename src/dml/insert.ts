/**
 * /v1/query `insert` (Hasura v1 DML): `{table, objects, returning?, on_conflict?}`
 * → `{affected_rows, returning?}`. For a role: only its insertable columns,
 * its presets applied, and its check verified on every inserted row (a failed
 * check raises, so the surrounding transaction rolls back); upserts need the
 * role's update permission, whose filter limits the rows updated.
 */
import { SvcError, err400 } from '../errors.js';
import { isSessionVariable } from '../permissions/boolexp.js';
import { FilterBuilder, columnType } from '../permissions/filter.js';
import type { ColumnModel, TableModel } from '../schema/model.js';
import { ident, join, raw, sql, type Sql } from '../sql/ast.js';
import { Aliases, andSql, boolExpSql, tableSql, valueSql } from '../sql/boolexp.js';
import { isAdminSession, lookupTableArg, requireObject, returningColumns, runMutation, tableDisplay, type DmlContext } from './common.js';

interface InsertArgs {
  table?: unknown;
  objects?: unknown;
  returning?: unknown;
  on_conflict?: unknown;
}

export async function runDmlInsert(ctx: DmlContext, args: unknown): Promise<{ affected_rows: number; returning?: unknown[] }> {
  const a = requireObject(args) as InsertArgs;
  // structural checks of the arguments come before any semantic one (Hasura parses the JSON first)
  if (a.on_conflict && typeof a.on_conflict === 'object' && (a.on_conflict as { action?: unknown }).action === undefined) {
    throw err400('parse-failed', "the key 'action' was not present", '$.on_conflict');
  }
  const table = lookupTableArg(ctx, a.table);
  const admin = isAdminSession(ctx);
  const perms = admin ? undefined : table.permissions.get(ctx.session.role);
  if (!admin && !perms?.insert) {
    throw new SvcError(400, 'permission-denied', `insert on ${tableDisplay(table)} for role ${JSON.stringify(ctx.session.role)} is not allowed. `, '$.args');
  }
  const ins = perms?.insert;
  const objects = Array.isArray(a.objects) ? a.objects : a.objects && typeof a.objects === 'object' ? [a.objects] : null;
  if (!objects) throw err400('parse-failed', 'expecting an array of objects', '$.args.objects');
  if (objects.length === 0) throw err400('unexpected-payload', 'objects should not be empty', '$.args.objects');

  // returning columns are checked first (as Hasura does)
  const returning = returningColumns(ctx, table, a.returning);

  // columns and values
  const presets = ins?.set ?? {};
  const columns: ColumnModel[] = [];
  const rows: Array<Map<string, unknown>> = objects.map((o, i) => {
    const obj = requireObject(o, `$.args.objects[${i}]`);
    const m = new Map<string, unknown>();
    for (const [k, v] of Object.entries(obj)) {
      const col = table.columnsByName.get(k);
      if (!col) throw err400('not-exists', `no such column exists : ${JSON.stringify(k)}`, `$.args.objects[${i}]`);
      if (ins && !ins.columns.includes(k) && !(k in presets)) {
        throw new SvcError(400, 'permission-denied', `role ${JSON.stringify(ctx.session.role)} does not have permission to insert column ${JSON.stringify(k)}`, `$.args.objects[${i}]`);
      }
      m.set(k, v);
    }
    for (const k of Object.keys(presets)) m.delete(k);
    return m;
  });
  for (const c of table.columns) if (rows.some((r) => r.has(c.name)) || c.name in presets) columns.push(c);

  const aliases = new Aliases();
  const t = '_t';
  const valueOf = (c: ColumnModel, r: Map<string, unknown>): Sql => {
    if (c.name in presets) {
      const p = presets[c.name];
      const ref = isSessionVariable(p) ? { kind: 'session' as const, name: p.toLowerCase() } : { kind: 'literal' as const, value: p };
      return valueSql({ ref, type: columnType(c) });
    }
    if (!r.has(c.name)) return raw('DEFAULT');
    return valueSql({ ref: { kind: 'literal', value: r.get(c.name) }, type: columnType(c) });
  };
  const values = join(rows.map((r) => sql`(${join(columns.map((c) => valueOf(c, r)), ', ')})`), ', ');
  const colList = columns.length ? sql`(${join(columns.map((c) => ident(c.name)), ', ')}) VALUES ${values}` : raw('DEFAULT VALUES');
  const conflict = onConflict(ctx, table, a.on_conflict, columns, admin, t, aliases);
  const check = ins ? boolExpSql(new FilterBuilder(ctx.cache, { sessionVariables: true, nullSafeEq: true }).build(ins.check, table), t, aliases) : raw('true');
  const mutation = sql`INSERT INTO ${tableSql(table)} AS ${ident(t)} ${colList}${conflict} RETURNING *, (${check}) AS "__svc_check"`;
  return runMutation(ctx, mutation, returning, 'insert check constraint failed');
}

function onConflict(ctx: DmlContext, table: TableModel, oc: unknown, columns: ColumnModel[], admin: boolean, t: string, aliases: Aliases): Sql {
  if (oc === undefined || oc === null) return raw('');
  const o = requireObject(oc, '$.args.on_conflict') as { action?: unknown; constraint?: unknown; constraint_on?: unknown };
  if (o.action === undefined) throw err400('parse-failed', "the key 'action' was not present", '$.on_conflict');
  if (o.action !== 'ignore' && o.action !== 'update') throw err400('parse-failed', `unexpected action: ${JSON.stringify(o.action)}; expecting "ignore" or "update"`, '$.args.on_conflict.action');
  if (o.constraint !== undefined && o.constraint_on !== undefined) throw err400('unexpected-payload', "'constraint' and 'constraint_on' cannot be set at a time", '$.args.on_conflict');
  let target: Sql = raw('');
  if (typeof o.constraint === 'string') {
    target = sql` ON CONSTRAINT ${ident(o.constraint)}`;
  } else if (o.constraint_on !== undefined) {
    const cols = Array.isArray(o.constraint_on) ? o.constraint_on : [o.constraint_on];
    const names = cols.map((c, i) => {
      if (typeof c !== 'string' || !table.columnsByName.has(c)) throw err400('not-exists', `column ${JSON.stringify(c)} does not exist`, `$.args.on_conflict.constraint_on[${i}]`);
      return ident(c);
    });
    target = sql` (${join(names, ', ')})`;
  }
  if (o.action === 'ignore') return sql` ON CONFLICT${target} DO NOTHING`;
  if (o.constraint === undefined && o.constraint_on === undefined) {
    throw err400('unexpected-payload', "Expecting 'constraint' or 'constraint_on' when the 'action' is 'update'", '$.args.on_conflict');
  }
  const upd = admin ? undefined : table.permissions.get(ctx.session.role)?.update;
  if (!admin && !upd) throw err400('permission-denied', `upsert is not allowed for role ${JSON.stringify(ctx.session.role)}`, '$.args.on_conflict');
  const updatable = columns.filter((c) => admin || upd!.columns.includes(c.name));
  if (updatable.length === 0) return sql` ON CONFLICT${target} DO NOTHING`;
  const set = join(updatable.map((c) => sql`${ident(c.name)} = EXCLUDED.${ident(c.name)}`), ', ');
  const where = upd ? boolExpSql(new FilterBuilder(ctx.cache, { sessionVariables: true, nullSafeEq: true }).build(upd.filter, table), t, aliases) : null;
  return sql` ON CONFLICT${target} DO UPDATE SET ${set}${where ? sql` WHERE ${andSql([where])}` : raw('')}`;
}
