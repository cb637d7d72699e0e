/**
 * Shared parts of the /v1/query DML operations (select, count, insert):
 * the context they run in, table and permission lookups with Hasura's
 * messages, and running a compiled statement.
 */
import type { Config } from '../config/config.js';
import type { Queryable } from '../db/db.js';
import { err400 } from '../errors.js';
import { SELECT_NEEDED, sessionVariableNotFound } from '../permissions/messages.js';
import { columnNotExists, notAColumn, tableNotExists } from '../document/messages.js';
import { fromPgError } from '../execute/errors.js';
import { normalizeTableName } from '../permissions/boolexp.js';
import { RoleMutationAccess } from '../permissions/mutation.js';
import { RoleViews, tableDisplay, type TableView } from '../permissions/view.js';
import type { SchemaCache } from '../schema/model.js';
import type { TableModel, ColumnModel } from '../model/tables.js';
import { ADMIN_ROLE, useBackendOnlyPermissions, type Session } from '../core/session.js';
import { traceparentOf, type Span } from '../core/tracing.js';
import { bindParams, compileSql, type Sql } from '../sql/ast.js';
import { compileMutation } from '../sql/mutation.js';
import { mutationError } from '../execute/mutation.js';
import type { Mutation, MutationResponseField } from '../ir/types.js';
import { parseJsonExact, isJsonObject } from '../json.js';

/** What a DML operation needs: an ExecContext fits, and so does the request's connection in place of `db`. */
export interface DmlContext {
  cache: SchemaCache;
  config: Config;
  session: Session;
  db: Queryable;
  /** tracing on: the request's span (its traceparent goes into the event rows its writes create) */
  span?: Span;
}

export function isAdminSession(ctx: DmlContext): boolean {
  return ctx.session.role === ADMIN_ROLE;
}

export function requireObject(args: unknown, path = '$.args'): Record<string, unknown> {
  if (!isJsonObject(args)) throw err400('parse-failed', 'expecting an object', path);
  return args as Record<string, unknown>;
}

/** A column a request names, as upstream's `askPGColInfo` checks it (`why`: the operation's reason a relationship won't do). */
export function askColumn(table: TableModel, name: string, why: string, path: string): ColumnModel {
  const col = table.columnsByName.get(name);
  if (col) return col;
  if (table.relationships.has(name)) throw notAColumn(name, why, path);
  throw columnNotExists(name, path);
}

export function lookupTableArg(ctx: DmlContext, t: unknown, path = '$.args.table'): TableModel {
  let name;
  try {
    name = normalizeTableName(t);
  } catch {
    throw err400('parse-failed', 'expecting a table name', path);
  }
  const table = ctx.cache.tables.get(`${name.schema}.${name.name}`);
  if (!table) throw tableNotExists(name, path);
  return table;
}

/** Per schema cache and key, built once (filters are converted once). */
function memoized<T>(memo: WeakMap<SchemaCache, Map<string, T>>, cache: SchemaCache, key: string, make: () => T): T {
  let m = memo.get(cache);
  if (!m) memo.set(cache, (m = new Map()));
  let v = m.get(key);
  if (v === undefined) m.set(key, (v = make()));
  return v;
}

const viewsMemo = new WeakMap<SchemaCache, Map<string, RoleViews>>();
const accessMemo = new WeakMap<SchemaCache, Map<string, RoleMutationAccess>>();

/** What the request's role may read. */
export function roleViews(ctx: DmlContext): RoleViews {
  return memoized(viewsMemo, ctx.cache, ctx.session.role, () => new RoleViews(ctx.cache, ctx.session.role));
}

/** What the request's role may write: backend-only insert permissions only when the request may use them. */
export function roleAccess(ctx: DmlContext): RoleMutationAccess {
  const backendOnly = useBackendOnlyPermissions(ctx.session);
  return memoized(
    accessMemo,
    ctx.cache,
    `${backendOnly ? 'b' : 'f'}:${ctx.session.role}`,
    () => new RoleMutationAccess(ctx.cache, ctx.session.role, backendOnly),
  );
}

export { tableDisplay };

/** The role's select view of a table, or Hasura's permission error. */
export function selectView(ctx: DmlContext, t: TableModel, suffix = '', path = '$.args'): TableView {
  return roleViews(ctx).requireTable(t, path, suffix);
}

/** `where` of update/delete is a read: the role needs select permission (Hasura's message). */
export function whereNeedsSelect(ctx: DmlContext, t: TableModel, op: 'update' | 'delete'): TableView {
  return selectView(ctx, t, SELECT_NEEDED.where(op));
}

export function checkSessionVars(sessionVars: string[], session: Session): void {
  for (const v of sessionVars) {
    if (session.vars[v] === undefined) throw sessionVariableNotFound(v);
  }
}

/** `returning` columns of a mutation: existing, and selectable by the role (which needs select permission). */
export function returningColumns(ctx: DmlContext, table: TableModel, returning: unknown): ColumnModel[] | null {
  if (returning === undefined || returning === null) return null;
  if (!Array.isArray(returning)) throw err400('parse-failed', 'expecting an array for returning', '$.args.returning');
  const views = roleViews(ctx);
  const view = views.requireTable(table, '$.args', SELECT_NEEDED.returning);
  // upstream's checkRetCols: the role's select columns first (admin: every column)
  return returning.map((c) => {
    if (typeof c !== 'string') throw err400('parse-failed', 'expecting a column name', '$.args.returning');
    return views.requireColumn(view, c, '$.args.returning');
  });
}

/**
 * Runs an insert, update or delete (the IR and SQL the GraphQL mutations use)
 * as one statement: `{affected_rows, returning?}` with the `returning` columns.
 * A row failing the role's check aborts the statement (so nothing is written
 * even outside a transaction) with Hasura's message.
 */
export async function runMutation(ctx: DmlContext, m: Mutation, returning: ColumnModel[] | null): Promise<{ affected_rows: number; returning?: unknown[] }> {
  const fields: MutationResponseField[] = [{ alias: 'affected_rows', kind: 'affected_rows' }];
  if (returning) fields.push({ alias: 'returning', kind: 'returning', fields: returning.map((c) => ({ alias: c.name, kind: 'column', column: c })) });
  const compiled = compileMutation(m, { kind: 'multi', fields }, { stringifyNumerics: ctx.config.stringifyNumericTypes });
  if (compiled.kind === 'constant') return parseJsonExact(compiled.json) as { affected_rows: number; returning?: unknown[] };
  const c = compileSql(compiled.write);
  checkSessionVars(c.sessionVars, ctx.session);
  const values = bindParams(c, ctx.session.vars, {});
  let row;
  try {
    // event triggers read the session (in the request's transaction)
    const tp = traceparentOf(ctx.span);
    if (tp !== undefined)
      await ctx.db.query(`select set_config('svc.user', $1, true), set_config('svc.traceparent', $2, true)`, [JSON.stringify(ctx.session.vars), tp]);
    else await ctx.db.query(`select set_config('svc.user', $1, true)`, [JSON.stringify(ctx.session.vars)]);
    row = (await ctx.db.query(c.text, values)).rows[0] ?? {};
  } catch (e) {
    throw mutationError(e, compiled.raises, '$.args', { text: c.text, params: values }, '$');
  }
  return parseJsonExact(row.result ?? 'null') as { affected_rows: number; returning?: unknown[] };
}

/** Runs one statement; returns its first row. */
export async function runStatement(ctx: DmlContext, s: Sql, variables: Record<string, unknown> = {}): Promise<Record<string, string | null>> {
  const c = compileSql(s);
  checkSessionVars(c.sessionVars, ctx.session);
  const values = bindParams(c, ctx.session.vars, variables);
  try {
    const r = await ctx.db.query(c.text, values);
    return r.rows[0] ?? {};
  } catch (e) {
    throw fromPgError(e, { text: c.text, params: values, prepared: false });
  }
}
