/**
 * /v1/query `select` and `count` (Hasura v1 DML) on the same IR, compiler and
 * permissions as GraphQL reads.
 *
 * select args: `{table, columns, where?, order_by?, limit?, offset?}`; a column
 * is a name, `"*"`, or `{name, alias?, columns, where?, order_by?, limit?, offset?}`
 * for a relationship; order_by is `"-col"`/`"+col"`/`"col"` (dotted through
 * object relationships) or `{column, type, nulls}`, alone or in a list.
 */
import { SvcError, err400 } from '../errors.js';
import { typeMismatch } from '../document/args.js';
import type { Field, OrderByItem, OrderByTarget, Select, SelectArgs } from '../ir/types.js';
import type { BoolExp, TableModel } from '../model/tables.js';
import { FilterBuilder } from '../permissions/filter.js';
import { lookupTable, type TableView } from '../permissions/view.js';
import { ident, join, sql } from '../sql/ast.js';
import { Aliases, andSql, boolExpSql, tableSql } from '../sql/boolexp.js';
import { rootFieldSql } from '../sql/select.js';
import { lookupTableArg, requireObject, roleViews, runStatement, selectView, type DmlContext } from './common.js';
import { SELECT_NEEDED, columnNotAllowed } from '../permissions/messages.js';
import { parseJsonExact, isJsonObject } from '../json.js';

const notSupported = (m: string, p: string) => new SvcError(400, 'not-supported', m, p);

/** The builder of a role's `where`: checked against its select permissions (see permissions/filter.ts). */
export function whereBuilder(ctx: DmlContext): FilterBuilder {
  return new FilterBuilder((t) => lookupTable(ctx.cache, t), { sessionVariables: false, views: roleViews(ctx) });
}

function parseCount(v: unknown, path: string): number | null {
  if (v === undefined || v === null) return null;
  // a wrong JSON type fails upstream's aeson parse of the args: aeson's wording, a path relative
  // to the args (`$.limit`); a negative number is a later check at the request path
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw typeMismatch('Int', 'Number', v, path.replace(/^\$\.args(?=[.[]|$)/, '$'));
  }
  if (v < 0) throw notSupported('unexpected negative value', path);
  return v;
}

function parseOrderBy(ctx: DmlContext, view: TableView, ob: unknown, path: string): OrderByItem[] {
  if (ob === undefined || ob === null) return [];
  const items = Array.isArray(ob) ? ob : [ob];
  if (Array.isArray(ob) && ob.length === 0) throw err400('unexpected-payload', 'order_by array should not be empty', path);
  return items.map((it, i) => {
    const p = Array.isArray(ob) ? `${path}[${i}]` : path;
    let column: string;
    let dir: 'asc' | 'desc' = 'asc';
    let nulls: 'first' | 'last' | undefined;
    if (typeof it === 'string') {
      if (it.startsWith('-')) [dir, column] = ['desc', it.slice(1)];
      else column = it.startsWith('+') ? it.slice(1) : it;
    } else if (isJsonObject(it)) {
      const o = it as { column?: unknown; type?: unknown; nulls?: unknown };
      if (typeof o.column !== 'string') throw err400('parse-failed', 'expecting a column', p);
      column = o.column;
      if (o.type === 'desc') dir = 'desc';
      else if (o.type !== undefined && o.type !== 'asc') throw err400('parse-failed', 'expecting "asc" or "desc"', `${p}.type`);
      if (o.nulls === 'first' || o.nulls === 'last') nulls = o.nulls;
    } else {
      throw err400('parse-failed', 'expecting a string or an object for order_by', p);
    }
    return { target: orderTarget(ctx, view, column.split('.'), p), dir, nulls: nulls ?? (dir === 'asc' ? 'last' : 'first') };
  });
}

function orderTarget(ctx: DmlContext, view: TableView, parts: string[], path: string): OrderByTarget {
  const [head, ...rest] = parts as [string, ...string[]];
  const t = view.table;
  const col = t.columnsByName.get(head);
  if (col) {
    if (rest.length > 0) throw err400('unexpected-payload', `${JSON.stringify(head)} is a Postgres column and cannot be chained further`, path);
    return { kind: 'column', column: roleViews(ctx).requireColumn(view, head, path) };
  }
  const rel = t.relationships.get(head);
  if (!rel) throw err400('not-exists', `no such column exists : ${JSON.stringify(head)}`, path);
  if (rel.kind === 'array') throw err400('unexpected-payload', `${JSON.stringify(head)} is an array relationship and can't be used in order_by`, path);
  if (rest.length === 0) throw err400('unexpected-payload', `${JSON.stringify(head)} is a relationship and should be expanded`, path);
  const rv = roleViews(ctx).requireRelationship(view, rel, path);
  return { kind: 'object', rel, target: rv.table, filter: rv.filter, next: orderTarget(ctx, rv, rest, path) };
}

interface SelectSpec {
  where?: unknown;
  order_by?: unknown;
  limit?: unknown;
  offset?: unknown;
  columns?: unknown;
}

function parseArgs(ctx: DmlContext, view: TableView, a: SelectSpec, path: string): SelectArgs {
  const where: BoolExp | null = a.where === undefined || a.where === null ? null : whereBuilder(ctx).build(a.where, view.table, `${path}.where`);
  return {
    where,
    orderBy: parseOrderBy(ctx, view, a.order_by, `${path}.order_by`),
    distinctOn: null,
    limit: parseCount(a.limit, `${path}.limit`),
    offset: parseCount(a.offset, `${path}.offset`),
  };
}

function parseColumns(ctx: DmlContext, view: TableView, cols: unknown, path: string): Field[] {
  if (!Array.isArray(cols)) throw err400('parse-failed', 'expecting an array for columns', path);
  const out: Field[] = [];
  const seen = new Set<string>();
  const push = (f: Field) => {
    if (seen.has(f.alias)) return;
    seen.add(f.alias);
    out.push(f);
  };
  cols.forEach((c, i) => {
    const p = `${path}[${i}]`;
    if (c === '*') {
      for (const col of view.columns) push({ alias: col.name, kind: 'column', column: col });
      return;
    }
    if (typeof c === 'string') {
      // upstream checks the column against the select permission first (checkSelOnCol): a name
      // that is no column (or a relationship) is `permission-denied`, for admin "no such column exists"
      push({ alias: c, kind: 'column', column: roleViews(ctx).requireColumn(view, c, p) });
      return;
    }
    const spec = requireObject(c, p) as SelectSpec & { name?: unknown; alias?: unknown };
    if (typeof spec.name !== 'string') throw err400('parse-failed', 'expecting a relationship name', p);
    const rel = view.table.relationships.get(spec.name);
    if (!rel) throw err400('not-exists', `no such relationship exists : ${JSON.stringify(spec.name)}`, p);
    const alias = typeof spec.alias === 'string' ? spec.alias : spec.name;
    const rv = roleViews(ctx).requireRelationship(view, rel, p);
    const remote = rv.table;
    const fields = parseColumns(ctx, rv, spec.columns, `${p}.columns`);
    if (rel.kind === 'object') {
      if (spec.where !== undefined || spec.order_by !== undefined || spec.limit !== undefined || spec.offset !== undefined) {
        throw err400('unexpected-payload', "when selecting an 'obj_relationship' 'where', 'order_by', 'limit' and 'offset'  can't be used", p);
      }
      push({
        alias,
        kind: 'object',
        rel,
        select: { source: { kind: 'table', table: remote }, filter: rv.filter, permLimit: null, args: parseArgs(ctx, rv, {}, p), fields },
      });
    } else {
      push({
        alias,
        kind: 'array',
        rel,
        select: { source: { kind: 'table', table: remote }, filter: rv.filter, permLimit: rv.limit, args: parseArgs(ctx, rv, spec, p), fields },
      });
    }
  });
  return out;
}

/** The IR of a DML select. */
export function dmlSelectIR(ctx: DmlContext, args: unknown): Select {
  const a = requireObject(args) as SelectSpec & { table?: unknown };
  const table: TableModel = lookupTableArg(ctx, a.table);
  const view = selectView(ctx, table);
  const fields = parseColumns(ctx, view, a.columns, '$.args.columns');
  return { source: { kind: 'table', table }, filter: view.filter, permLimit: view.limit, args: parseArgs(ctx, view, a, '$.args'), fields };
}

/** `select`: the selected rows (JSON). */
export async function runDmlSelect(ctx: DmlContext, args: unknown): Promise<unknown> {
  const select = dmlSelectIR(ctx, args);
  const s = sql`SELECT (${rootFieldSql({ alias: 'root', kind: 'select', select }, { stringifyNumerics: ctx.config.stringifyNumericTypes })})::text AS "root"`;
  const row = await runStatement(ctx, s);
  return parseJsonExact(row.root ?? '[]');
}

/** `count`: `{count: n}`; args `{table, where?, distinct?: [column]}`. */
export async function runDmlCount(ctx: DmlContext, args: unknown): Promise<{ count: number }> {
  const a = requireObject(args) as { table?: unknown; where?: unknown; distinct?: unknown };
  const table = lookupTableArg(ctx, a.table);
  const view = selectView(ctx, table, SELECT_NEEDED.count);
  const where = a.where === undefined || a.where === null ? null : whereBuilder(ctx).build(a.where, table, '$.args.where');
  let distinct: string[] | null = null;
  if (a.distinct !== undefined && a.distinct !== null) {
    if (!Array.isArray(a.distinct)) throw err400('parse-failed', 'expecting an array for distinct', '$.args.distinct');
    distinct = a.distinct.map((c, i) => {
      if (typeof c !== 'string') throw columnNotAllowed('select', ctx.session.role, String(c), `$.args.distinct[${i}]`);
      return roleViews(ctx).requireColumn(view, c, `$.args.distinct[${i}]`).name;
    });
  }
  const aliases = new Aliases();
  const t = aliases.next('t');
  const conds = [view.filter, where].filter((x): x is BoolExp => !!x && x.kind !== 'true').map((e) => boolExpSql(e, t, aliases));
  const list = distinct
    ? sql`DISTINCT ${join(
        distinct.map((c) => ident(t, c)),
        ', ',
      )}`
    : sql`1`;
  const s = sql`SELECT count(*)::text AS "count" FROM (SELECT ${list} FROM ${tableSql(table)} AS ${ident(t)} WHERE ${andSql(conds)}) AS "_c"`;
  const row = await runStatement(ctx, s);
  return { count: Number(row.count) };
}
