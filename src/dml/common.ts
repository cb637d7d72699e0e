/**
 * Shared parts of the /v1/query DML operations (select, count, insert):
 * the context they run in, table and permission lookups with Hasura's
 * messages, and running a compiled statement.
 */
import type { Config } from '../config/config.js';
import type { Queryable } from '../db/db.js';
import { SvcError, err400 } from '../errors.js';
import { fromPgError } from '../execute/errors.js';
import { normalizeTableName } from '../permissions/boolexp.js';
import { RoleViews, type TableView } from '../permissions/view.js';
import type { SchemaCache, TableModel } from '../schema/model.js';
import { ADMIN_ROLE, type Session } from '../server/auth/session.js';
import { bindParams, compileSql, ident, join, quoteLiteral, raw, sql, type Sql } from '../sql/ast.js';
import { columnType } from '../permissions/filter.js';
import { jsonOutput } from '../sql/pgtypes.js';
import type { ColumnModel } from '../schema/model.js';

/** What a DML operation needs: an ExecContext fits, and so does the request's connection in place of `db`. */
export interface DmlContext {
  cache: SchemaCache;
  config: Config;
  session: Session;
  db: Queryable;
}

export function isAdminSession(ctx: DmlContext): boolean {
  return ctx.session.role === ADMIN_ROLE;
}

export function requireObject(args: unknown, path = '$.args'): Record<string, unknown> {
  if (!args || typeof args !== 'object' || Array.isArray(args)) throw err400('parse-failed', 'expecting an object', path);
  return args as Record<string, unknown>;
}

export function lookupTableArg(ctx: DmlContext, t: unknown, path = '$.args.table'): TableModel {
  let name;
  try {
    name = normalizeTableName(t);
  } catch {
    throw err400('parse-failed', 'expecting a table name', path);
  }
  const table = ctx.cache.tables.get(`${name.schema}.${name.name}`);
  if (!table) throw err400('not-exists', `table ${JSON.stringify(name.schema === 'public' ? name.name : `${name.schema}.${name.name}`)} does not exist`, path);
  return table;
}

const viewsMemo = new WeakMap<SchemaCache, Map<string, RoleViews>>();

export function roleViews(ctx: DmlContext): RoleViews {
  let m = viewsMemo.get(ctx.cache);
  if (!m) viewsMemo.set(ctx.cache, (m = new Map()));
  let v = m.get(ctx.session.role);
  if (!v) m.set(ctx.session.role, (v = new RoleViews(ctx.cache, ctx.session.role)));
  return v;
}

export const tableDisplay = (t: TableModel) => JSON.stringify(t.name.schema === 'public' ? t.name.name : `${t.name.schema}.${t.name.name}`);

/** The role's select view of a table, or Hasura's permission error. */
export function selectView(ctx: DmlContext, t: TableModel, suffix = '', path = '$.args'): TableView {
  const v = roleViews(ctx).view(t);
  if (!v) throw new SvcError(400, 'permission-denied', `select on ${tableDisplay(t)} for role ${JSON.stringify(ctx.session.role)} is not allowed. ${suffix}`, path);
  return v;
}

export function checkSessionVars(sessionVars: string[], session: Session): void {
  for (const v of sessionVars) {
    if (session.vars[v] === undefined) throw new SvcError(400, 'not-found', `${JSON.stringify(v)} header is expected but not found`, '$');
  }
}

/** `returning` columns of a mutation: existing, and selectable by the role. */
export function returningColumns(ctx: DmlContext, table: TableModel, returning: unknown): ColumnModel[] | null {
  if (returning === undefined || returning === null) return null;
  if (!Array.isArray(returning)) throw err400('parse-failed', 'expecting an array for returning', '$.args.returning');
  const admin = isAdminSession(ctx);
  const sel = admin ? null : table.permissions.get(ctx.session.role)?.select;
  return returning.map((c) => {
    const col = typeof c === 'string' ? table.columnsByName.get(c) : undefined;
    if (!col) throw new SvcError(400, 'permission-denied', `no such column exists : ${JSON.stringify(c)}`, '$.args.returning');
    if (!admin && !sel?.columns.includes(col.name)) {
      throw new SvcError(400, 'permission-denied', `role ${JSON.stringify(ctx.session.role)} does not have permission to select column ${JSON.stringify(col.name)}`, '$.args.returning');
    }
    return col;
  });
}

/** The JSON array of the returned rows of the CTE `"_mut"` (text). */
export function returningSql(ctx: DmlContext, cols: ColumnModel[] | null): Sql {
  if (!cols) return raw('NULL');
  const opts = { stringifyNumerics: ctx.config.stringifyNumericTypes };
  const pairs = cols.map((c) => sql`${raw(quoteLiteral(c.name))}, ${jsonOutput(ident('_m', c.name), columnType(c), opts)}`);
  return sql`(SELECT coalesce(json_agg(json_build_object(${join(pairs, ', ')})), '[]') FROM "_mut" AS "_m")::text`;
}

const CHECK_FAILED = 'svc-permission-check-failed';

/**
 * Runs `WITH "_mut" AS (<mutation> RETURNING *, (<check>) AS "__svc_check") …`. A row
 * failing the check makes the statement itself fail (a cast error raised only then), so
 * the change is undone even outside a transaction; the error becomes Hasura's message.
 */
export async function runMutation(ctx: DmlContext, mutation: Sql, returning: ColumnModel[] | null, checkFailed: string): Promise<{ affected_rows: number; returning?: unknown[] }> {
  const guard = sql`(SELECT (${raw(quoteLiteral(CHECK_FAILED + ':'))} || count(*))::int FROM "_mut" WHERE NOT coalesce("__svc_check", false) HAVING count(*) > 0)`;
  const statement = sql`WITH "_mut" AS (${mutation}) SELECT (SELECT count(*) FROM "_mut")::text AS "affected", ${guard} AS "failed", ${returningSql(ctx, returning)} AS "returning"`;
  let row;
  try {
    row = await runStatement(ctx, statement);
  } catch (e) {
    if (e instanceof SvcError && e.message.includes(CHECK_FAILED)) throw new SvcError(400, 'permission-error', `Check constraint violation. ${checkFailed}`, '$.args');
    throw e;
  }
  const out: { affected_rows: number; returning?: unknown[] } = { affected_rows: Number(row.affected) };
  if (returning) out.returning = JSON.parse(row.returning ?? '[]');
  return out;
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
