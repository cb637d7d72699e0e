/**
 * The multiplexed batch statement of a subscription plan: one statement answering many subscribers,
 * each a row of `unnest($1 ids, $2 value arrays)`. The executor's side (explain shows it); the live
 * queries that run it are in src/subscriptions (liveQueryPlan.ts plans a subscriber's row,
 * liveQueryManager.ts runs the cohorts; streamManager.ts uses `batchParams` too).
 */
import { createHash } from 'node:crypto';
import { SvcError } from '../errors.js';
import { pgArrayLiteral } from '../sql/boolexp.js';
import type { QueryPlan } from './plan.js';

const batchStatements = new WeakMap<QueryPlan, { name: string; text: string }>();

/** The batch statement of a subscription plan (built once per plan). */
export function batchStatement(plan: QueryPlan): { name: string; text: string } {
  let b = batchStatements.get(plan);
  if (!b) {
    if (!plan.multiplexed) throw new SvcError(500, 'unexpected', 'the plan is not a multiplexed subscription', '$');
    const text =
      'SELECT "_subs"."result_id", "_fld_resp".* FROM unnest($1::integer[], $2::json[]) AS "_subs"("result_id", "result_vars") ' +
      `LEFT OUTER JOIN LATERAL (${plan.multiplexed.text}) AS "_fld_resp" ON true`;
    b = { name: `svc_lq_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`, text };
    batchStatements.set(plan, b);
  }
  return b;
}

/** The `$1`/`$2` values of a batch statement: subscriber ids and their JSON value arrays. */
export function batchParams(rows: ReadonlyArray<{ id: number; values: string }>): [string, string] {
  return [`{${rows.map((r) => r.id).join(',')}}`, pgArrayLiteral(rows.map((r) => r.values))];
}
