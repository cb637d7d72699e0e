/**
 * Streaming subscriptions, the executor's side: a subscription whose one root field is
 * `<table>_stream` (schema/graphql/stream.ts) is planned into ONE multiplexed statement per shape:
 *
 *   SELECT "_subs"."result_id", "_fld_resp"."root", "_fld_resp"."cursor", "_fld_resp"."n"
 *   FROM unnest($1::integer[], $2::json[]) AS "_subs"("result_id", "result_vars")
 *   CROSS JOIN LATERAL (
 *     <the next batch_size rows after the subscriber's cursor, in cursor order, as one JSON array,
 *      with the cursor value of the last one; no row at all when there is nothing new>
 *   ) AS "_fld_resp"
 *
 * Each subscriber is a row: an id and the JSON array of its parameter values (the session, the
 * leaves of its variables, and its cursor, as `bindParams` gives them), so permissions, session
 * variables and cursors stay parameters. subscriptions/streamManager.ts runs the batches and advances
 * every subscriber's cursor from the `cursor` column.
 *
 * Rows committed out of cursor order: a row is delivered only when its writing transaction
 * (`xmin`) is older than every transaction still running (`pg_snapshot_xmin` of the statement's
 * snapshot) and than the snapshot of every statement running on this database
 * (`pg_stat_activity.backend_xmin`); the batch stops at the first row that is not, so a row another
 * transaction may still commit before it in cursor order is never jumped over (README: "Streaming
 * subscriptions" for what this guarantees). Tables only: views have no `xmin` (no holding back).
 */
import { createHash } from 'node:crypto';
import { SvcError } from '../errors.js';
import { validationError } from '../ir/messages.js';
import type { Select, StreamSpec } from '../ir/types.js';
import type { TypedValue } from '../model/values.js';
import { bindParams, compileSql, ident, raw, sql, valueAtPath, type CompiledSql } from '../sql/ast.js';
import { andSql, col, valueSql } from '../sql/boolexp.js';
import { SelectCompiler, type SelectCompileOptions } from '../sql/select.js';
import { roleSchemaPending } from '../schema/graphql/schema.js';
import type { SchemaCache } from '../schema/model.js';
import { useBackendOnlyPermissions } from '../core/session.js';
import type { ExecContext, GraphQLRequest } from '../execute/interface.js';
import { checkSessionVariables, planRequest, type RunOptions } from '../execute/graphql.js';
import { multiplexedParam, type QueryPlan } from '../execute/plan.js';
import { withEntry } from '../core/objects.js';

/** the name of the cursor's parameter (no GraphQL variable can be called this) */
export const CURSOR_VAR = '#cursor';

export interface StreamPlan {
  /** the cohort: subscribers with equal keys share one statement */
  key: string;
  /** the schema cache the plan was compiled for (a newer one re-plans the subscriber) */
  cache: SchemaCache;
  name: string;
  text: string;
  /** this subscriber's parameter values, its cursor at `cursorIndex` (text, as PostgreSQL prints it) */
  values: Array<string | null>;
  cursorIndex: number;
  /** rows per batch at most (batch_size, and the role's limit) */
  batchSize: number;
  /** the response text of a batch (the JSON array of its rows) */
  render: (rows: string) => string;
  /** the streamed table, `schema.name` (its change notifications wake the cohort) */
  table: string;
}

interface Compiled {
  name: string;
  text: string;
  compiled: CompiledSql;
  cursorIndex: number;
  batchSize: number;
  alias: string;
  spec: StreamSpec;
}

const compiledStreams = new WeakMap<QueryPlan, Compiled>();
const cacheIds = new WeakMap<SchemaCache, number>();
let nextCacheId = 0;

/** The spec of a plan's stream field (null: not a streaming subscription). Throws when a stream field is not alone. */
function streamField(plan: QueryPlan): { alias: string; spec: StreamSpec } | null {
  if (plan.opType !== 'subscription') return null;
  const found = plan.fields.find((f) => f.kind === 'db' && f.ir.kind === 'select' && f.ir.stream);
  if (!found || found.kind !== 'db' || found.ir.kind !== 'select' || !found.ir.stream) return null;
  if (plan.fields.length !== 1) throw validationError('subscriptions must select one top level field', '$');
  if (plan.remote) throw new SvcError(400, 'not-supported', 'remote relationships are not supported in streaming subscriptions', '$');
  return { alias: found.alias, spec: found.ir.stream };
}

function compileStream(plan: QueryPlan, alias: string, spec: StreamSpec, opts: SelectCompileOptions): Compiled {
  let c = compiledStreams.get(plan);
  if (c) return c;
  const cursor: TypedValue = { ref: { kind: 'variable', name: CURSOR_VAR, path: [] }, type: spec.initial.type };
  const stmt = streamBatchSql(spec, cursor, opts);
  const compiled = compileSql(stmt, undefined, multiplexedParam);
  const cursorIndex = compiled.params.findIndex((p) => p.kind === 'var' && p.name === CURSOR_VAR);
  const text =
    'SELECT "_subs"."result_id", "_fld_resp"."root", "_fld_resp"."cursor", "_fld_resp"."n" FROM unnest($1::integer[], $2::json[]) AS "_subs"("result_id", "result_vars") ' +
    `CROSS JOIN LATERAL (${compiled.text}) AS "_fld_resp"`;
  const name = `svc_st_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
  const batchSize = spec.select.permLimit !== null ? Math.min(spec.batchSize, spec.select.permLimit) : spec.batchSize;
  c = { name, text, compiled, cursorIndex, batchSize, alias, spec };
  compiledStreams.set(plan, c);
  return c;
}

/**
 * The per-subscriber part (read from `"_subs"`): the next rows after the cursor, held back from
 * the first one whose transaction is not yet older than every running one (see the top).
 */
function streamBatchSql(spec: StreamSpec, cursor: TypedValue, opts: SelectCompileOptions) {
  const c = new SelectCompiler(opts);
  const sel: Select = spec.select;
  const t = c.aliases.next('t');
  const k = col(t, spec.column.name);
  const dir = raw(spec.dir === 'asc' ? 'ASC' : 'DESC');
  const rev = raw(spec.dir === 'asc' ? 'DESC' : 'ASC');
  const after = sql`(${k}) ${raw(spec.dir === 'asc' ? '>' : '<')} ${valueSql(cursor)}`;
  const where = andSql([...c.conditions(sel, t), after]);
  const limit = sel.permLimit !== null ? Math.min(spec.batchSize, sel.permLimit) : spec.batchSize;
  const kind = sel.source.kind === 'table' ? sel.source.table.info.kind : 'v';
  // how old (age) the oldest transaction is that may still commit rows here, once per statement:
  // the snapshot's running transactions but those known to run in other databases; null: none.
  // (Not the snapshots of other statements (pg_stat_activity.backend_xmin): every concurrent read,
  // ours included, would carry the oldest transaction of any database into it.)
  const horizon = raw(
    '(SELECT max(age(xid("v"))) FROM pg_snapshot_xip(pg_current_snapshot()) AS "v" ' +
      'WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_stat_activity AS "o" WHERE "o"."backend_xid" = xid("v") AND "o"."datname" <> current_database()))',
  );
  const ok = kind === 'r' || kind === 'p' ? sql`coalesce(age(${ident(t)}."xmin") > ${horizon}, true)` : raw('true');
  const inner = sql`SELECT ${c.rowJson(sel.fields, t)} AS "j", ${k} AS "k", (${k})::text AS "c", ${ok} AS "ok" FROM ${c.from(sel.source, t)} WHERE ${where} ORDER BY ${k} ${dir} LIMIT ${raw(String(limit))}`;
  const passed = sql`SELECT "_s"."j", "_s"."k", "_s"."c", bool_and("_s"."ok") OVER (ORDER BY "_s"."k" ${dir} ROWS UNBOUNDED PRECEDING) AS "pass" FROM (${inner}) AS "_s"`;
  return sql`SELECT coalesce(json_agg("_x"."j" ORDER BY "_x"."k" ${dir}) FILTER (WHERE "_x"."pass"), '[]')::text AS "root", (array_agg("_x"."c" ORDER BY "_x"."k" ${rev}) FILTER (WHERE "_x"."pass"))[1] AS "cursor", count(*) FILTER (WHERE "_x"."pass") AS "n" FROM (${passed}) AS "_x" HAVING count(*) FILTER (WHERE "_x"."pass") > 0`;
}

/**
 * Plans a subscription as a stream: its cohort, statement and this subscriber's values, or null
 * when it is not a streaming subscription. Throws what planning throws (SvcError before execution).
 */
export async function planStream(ctx: ExecContext, req: GraphQLRequest, opts: RunOptions = {}): Promise<StreamPlan | null> {
  const pending = roleSchemaPending(ctx.cache, ctx.session.role, useBackendOnlyPermissions(ctx.session), opts.relay === true);
  if (pending) await pending.catch(() => undefined);
  return planStreamNow(ctx, req, opts);
}

/** planStream once the role's schema is built (synchronous: re-planning after a metadata change). */
export function planStreamNow(ctx: ExecContext, req: GraphQLRequest, opts: RunOptions = {}): StreamPlan | null {
  const { plan, variables } = planRequest(ctx, req, opts.planCache, opts.relay);
  const field = streamField(plan);
  if (!field) return null;
  checkSessionVariables(plan, ctx.session);
  const c = compileStream(plan, field.alias, field.spec, { stringifyNumerics: ctx.config.stringifyNumericTypes });
  const ref = field.spec.initial.ref;
  const initial = ref.kind === 'literal' ? ref.value : ref.kind === 'variable' ? valueAtPath(variables[ref.name], ref.path) : ctx.session.vars[ref.name];
  if (initial === null || initial === undefined)
    throw validationError('the initial value of the cursor must not be null', '$.selectionSet.' + field.alias + '.args.cursor');
  const values = bindParams(c.compiled, ctx.session.vars, withEntry(variables, CURSOR_VAR, initial));
  let cacheId = cacheIds.get(ctx.cache);
  if (cacheId === undefined) cacheIds.set(ctx.cache, (cacheId = ++nextCacheId));
  const prefix = `{"data":{${JSON.stringify(c.alias)}:`;
  return {
    key: `${cacheId}\u0000${c.name}\u0000${c.alias}`,
    cache: ctx.cache,
    name: c.name,
    text: c.text,
    values,
    cursorIndex: c.cursorIndex,
    batchSize: c.batchSize,
    render: (rows) => `${prefix}${rows}}}`,
    table: c.spec.select.source.kind === 'table' ? `${c.spec.select.source.table.name.schema}.${c.spec.select.source.table.name.name}` : '',
  };
}
