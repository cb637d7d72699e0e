/**
 * SQL for actions, over the IR alone: an action's output selection as one JSON expression over the
 * handler's response (a parameter for synchronous actions, `response_payload` of the action log for
 * asynchronous ones), with the output's relationships to tables as correlated subqueries carrying
 * the role's permissions; and the `<action>(id)` query over `svc_catalog.hdb_action_log`
 * (RootField `action_log`).
 *
 * The response's objects are unnested with their order (`json_array_elements … WITH ORDINALITY`),
 * and the fields a relationship maps become typed columns (`json_to_record`), so the join compares
 * like types and the whole response is resolved in one statement, not one query per object.
 */
import type { ActionLogField, Correlation, OutputField, OutputSelection, Select } from '../ir/types.js';
import { SESSION, constParam, ident, join, param, quoteLiteral, raw, sql, type Sql } from './ast.js';
import { valueSql, type Aliases } from './boolexp.js';
import { jsonOutput, pgType, typeSql, type OutputOptions } from './pgtypes.js';

/** What these need of the statement's compiler (sql/select.ts SelectCompiler). */
export interface ActionSqlHost {
  readonly opts: OutputOptions;
  readonly aliases: Aliases;
  objectExpr(pairs: Array<[string, Sql]>): Sql;
  rows(sel: Select, parent?: { alias: string; corr: Correlation }): Sql;
  object(sel: Select, parent?: { alias: string; corr: Correlation }): Sql;
}

const lit = (s: string) => raw(quoteLiteral(s));

/** The JSON of `sel` over `payload` (a json expression; SQL NULL or JSON null give null). */
export function outputSql(c: ActionSqlHost, payload: Sql, sel: OutputSelection): Sql {
  const x = c.aliases.next('x');
  const e = c.aliases.next('e');
  const p = c.aliases.next('p');
  const v = sql`${ident(e)}."v"`;
  // the fields relationships map, typed like the columns they are compared with
  const cols = new Map<string, Sql>();
  for (const f of sel.fields) {
    if (f.kind !== 'object' && f.kind !== 'array') continue;
    const table = f.select.source.kind === 'table' ? f.select.source.table : undefined;
    for (const [field, column] of f.rel.mapping) {
      const cm = table?.columnsByName.get(column);
      if (cm && !cols.has(field)) cols.set(field, sql`${ident(field)} ${typeSql(pgType(cm.type, cm.typeSchema))}`);
    }
  }
  const fieldSql = (f: OutputField): Sql => {
    switch (f.kind) {
      case 'field':
        return sql`(${v} -> ${lit(f.name)})`;
      case 'typename':
        return sql`${lit(f.name)}::text`;
      case 'object':
        return c.object(f.select, { alias: p, corr: { kind: 'relationship', rel: f.rel } });
      case 'array':
        return c.rows(f.select, { alias: p, corr: { kind: 'relationship', rel: f.rel } });
    }
  };
  const obj = sql`CASE WHEN json_typeof(${v}) = 'object' THEN ${c.objectExpr(sel.fields.map((f) => [f.alias, fieldSql(f)]))} END`;
  const typed = cols.size
    ? sql`, LATERAL json_to_record(CASE WHEN json_typeof(${v}) = 'object' THEN ${v} ELSE '{}'::json END) AS ${ident(p)}(${join([...cols.values()], ', ')})`
    : raw('');
  const xv = sql`${ident(x)}."v"`;
  if (!sel.list) {
    return sql`(SELECT ${obj} FROM (SELECT (${payload})::json AS "v") AS ${ident(e)}${typed})`;
  }
  const rows = sql`(SELECT coalesce(json_agg(${obj} ORDER BY ${ident(e)}."o"), '[]') FROM json_array_elements(${xv}) WITH ORDINALITY AS ${ident(e)}("v", "o")${typed})`;
  return sql`(SELECT CASE WHEN json_typeof(${xv}) = 'array' THEN ${rows} END FROM (SELECT (${payload})::json AS "v") AS ${ident(x)})`;
}

/**
 * `<action>(id)`: the log row of that call, or null. A role other than admin reads only the calls
 * made with the same session variables (upstream: the same user), so one user cannot read
 * another's results.
 */
export function actionLogSql(c: ActionSqlHost, f: ActionLogField): Sql {
  const { action, id, fields, admin } = f;
  const l = c.aliases.next('l');
  const colOf = (name: string) => sql`${ident(l)}.${ident(name)}`;
  const pairs = fields.map((x): [string, Sql] => {
    switch (x.kind) {
      case 'id':
        return [x.alias, colOf('id')];
      case 'created_at':
        return [x.alias, jsonOutput(colOf('created_at'), pgType('timestamptz'), c.opts)];
      case 'errors':
        return [x.alias, sql`${colOf('errors')}::json`];
      case 'typename':
        return [x.alias, sql`${lit(x.name)}::text`];
      case 'output':
        return [x.alias, outputSql(c, sql`${colOf('response_payload')}::json`, x.output)];
    }
  });
  const conds = [sql`${colOf('id')} = ${valueSql({ ref: id, type: pgType('uuid') })}`, sql`${colOf('action_name')} = ${constParam(action)}`];
  if (!admin) conds.push(sql`${colOf('session_variables')} = (${param(SESSION)})::jsonb`);
  return sql`(SELECT ${c.objectExpr(pairs)} FROM "svc_catalog"."hdb_action_log" AS ${ident(l)} WHERE ${join(conds, ' AND ')})`;
}
