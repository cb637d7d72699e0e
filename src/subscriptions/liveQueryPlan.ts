/**
 * Multiplexed live queries, the executor's side: a subscription's plan (from the plan cache, so
 * every subscriber of the same (role, query text, operation name, variable shape) shares it) is
 * turned into ONE batch statement that answers many subscribers at once:
 *
 *   SELECT "_subs"."result_id", "_fld_resp".*
 *   FROM unnest($1::integer[], $2::json[]) AS "_subs"("result_id", "result_vars")
 *   LEFT OUTER JOIN LATERAL (<the plan's statement, $n read from "result_vars"->>(n-1)>) AS "_fld_resp" ON true
 *
 * Each subscriber is a row: an id and the JSON array of its parameter values (the session JSON
 * and the leaves of its variables, exactly what `bindParams` gives the single statement), so
 * permissions and session variables stay parameters. subscriptions/liveQueryManager.ts runs the batches.
 */
import { bindParams } from '../sql/ast.js';
import type { SchemaCache } from '../schema/model.js';
import type { ExecContext, GraphQLRequest } from '../execute/interface.js';
import { checkSessionVariables, planRequest, readResponse, type RunOptions } from '../execute/graphql.js';
import { batchStatement } from '../execute/multiplex.js';

export interface LiveQueryPlan {
  /** the cohort: subscribers with equal keys share one batch statement */
  key: string;
  /** the schema cache the plan was compiled for (a newer one re-plans the subscriber) */
  cache: SchemaCache;
  /** prepared-statement name and text of the batch statement */
  name: string;
  text: string;
  /** this subscriber's batch row values: a JSON array text (subscribers with equal values share a row) */
  values: string;
  /** the response text from one result row of the batch statement */
  render: (row: Record<string, string | null>) => string;
}

const cacheIds = new WeakMap<SchemaCache, number>();
let nextCacheId = 0;

/**
 * Plans a subscription for a live query: its cohort and batch row, or null when it cannot be
 * multiplexed (no database field: nothing to refetch, or not a subscription). Throws what
 * planning throws (the caller already answered the first run, so this is rare: a newer schema).
 */
export function planLiveQuery(ctx: ExecContext, req: GraphQLRequest, opts: RunOptions = {}): LiveQueryPlan | null {
  const { plan, variables } = planRequest(ctx, req, opts.planCache, opts.relay);
  if (plan.opType !== 'subscription' || !plan.statement || !plan.multiplexed) return null;
  checkSessionVariables(plan, ctx.session);
  const { name, text } = batchStatement(plan);
  let cacheId = cacheIds.get(ctx.cache);
  if (cacheId === undefined) cacheIds.set(ctx.cache, (cacheId = ++nextCacheId));
  const values = JSON.stringify(bindParams(plan.statement.compiled, ctx.session.vars, variables));
  return {
    key: `${cacheId}${opts.relay ? 'r' : ''}\u0000${name}\u0000${ctx.session.role}\u0000${req.operationName ?? ''}\u0000${req.query}`,
    cache: ctx.cache,
    name,
    text,
    values,
    render: (row) => readResponse(plan, row),
  };
}
