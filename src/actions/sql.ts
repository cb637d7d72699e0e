/**
 * The statement answering a synchronous action's output: the output selection as one JSON
 * expression over the handler's response, bound as a parameter (`RESPONSE_VAR`); the SQL itself is
 * sql/actions.ts (shared with the asynchronous action's `<action>(id)` query).
 */
import type { OutputSelection } from '../ir/types.js';
import { compileSql, param, sql, type CompiledSql } from '../sql/ast.js';
import { outputSql } from '../sql/actions.js';
import { SelectCompiler, type SelectCompileOptions } from '../sql/select.js';

/** The variable name the handler's response is bound to (not a GraphQL name: no clash). */
export const RESPONSE_VAR = '\u0000action_response';

/** The statement answering a synchronous action's output (the response is `RESPONSE_VAR`). */
export function compileOutputStatement(sel: OutputSelection, opts: SelectCompileOptions): CompiledSql {
  const c = new SelectCompiler(opts);
  const response = param({ kind: 'var', name: RESPONSE_VAR, path: [], encode: (v) => (v === undefined ? null : (v as string)) });
  return compileSql(sql`SELECT (${outputSql(c, response, sel)})::text AS "result"`);
}
