/**
 * SQL for actions: an output selection as one JSON expression over the handler's response (a
 * parameter for synchronous actions, `response_payload` of the action log for asynchronous ones),
 * with the output's relationships to tables as correlated subqueries carrying the role's
 * permissions; and the `<action>(id)` query over `svc_catalog.hdb_action_log`.
 *
 * The response's objects are unnested with their order (`json_array_elements … WITH ORDINALITY`),
 * and the fields a relationship maps become typed columns (`json_to_record`), so the join compares
 * like types and the whole response is resolved in one statement, not one query per object.
 */
import type { InVal } from '../ir/input.js';
import { SESSION, compileSql, constParam, ident, join, param, quoteLiteral, raw, sql, type CompiledSql, type Sql } from '../sql/ast.js';
import { valueSql } from '../sql/boolexp.js';
import { jsonOutput, pgType, typeSql } from '../sql/pgtypes.js';
import { SelectCompiler, type SelectCompileOptions } from '../sql/select.js';
import { refOf } from '../schema/graphql/builder.js';
import type { OutputField, OutputSelection } from './ir.js';
import type { ActionModel } from '../model/actions.js';

/** The variable name the handler's response is bound to (not a GraphQL name: no clash). */
export const RESPONSE_VAR = '\u0000action_response';

/** What `<action>(id)` selects. */
export type AsyncSelection = Array<
  | { alias: string; kind: 'id' | 'created_at' | 'errors' }
  | { alias: string; kind: 'typename'; name: string }
  | { alias: string; kind: 'output'; output: OutputSelection }
>;

const lit = (s: string) => raw(quoteLiteral(s));

/** The JSON of `sel` over `payload` (a json expression; SQL NULL or JSON null give null). */
export function outputSql(c: SelectCompiler, payload: Sql, sel: OutputSelection): Sql {
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

/** The statement answering a synchronous action's output (the response is `RESPONSE_VAR`). */
export function compileOutputStatement(sel: OutputSelection, opts: SelectCompileOptions): CompiledSql {
  const c = new SelectCompiler(opts);
  const response = param({ kind: 'var', name: RESPONSE_VAR, path: [], encode: (v) => (v === undefined ? null : (v as string)) });
  return compileSql(sql`SELECT (${outputSql(c, response, sel)})::text AS "result"`);
}

/**
 * `<action>(id)`: the log row of that call, or null. A role other than admin reads only the calls
 * made with the same session variables (upstream: the same user), so one user cannot read
 * another's results.
 */
export function asyncActionQuerySql(c: SelectCompiler, a: ActionModel, id: InVal, fields: AsyncSelection, admin: boolean): Sql {
  const l = c.aliases.next('l');
  const colOf = (name: string) => sql`${ident(l)}.${ident(name)}`;
  const pairs = fields.map((f): [string, Sql] => {
    switch (f.kind) {
      case 'id':
        return [f.alias, colOf('id')];
      case 'created_at':
        return [f.alias, jsonOutput(colOf('created_at'), pgType('timestamptz'), c.opts)];
      case 'errors':
        return [f.alias, sql`${colOf('errors')}::json`];
      case 'typename':
        return [f.alias, sql`${lit(f.name)}::text`];
      case 'output':
        return [f.alias, outputSql(c, sql`${colOf('response_payload')}::json`, f.output)];
    }
  });
  const conds = [sql`${colOf('id')} = ${valueSql({ ref: refOf(id), type: pgType('uuid') })}`, sql`${colOf('action_name')} = ${constParam(a.name)}`];
  if (!admin) conds.push(sql`${colOf('session_variables')} = (${param(SESSION)})::jsonb`);
  return sql`(SELECT ${c.objectExpr(pairs)} FROM "svc_catalog"."hdb_action_log" AS ${ident(l)} WHERE ${join(conds, ' AND ')})`;
}
