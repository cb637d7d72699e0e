/**
 * Executing operations that contain actions (the hook in execute/graphql.ts sends them here).
 *
 * - A query: the statement answering its database fields runs while the handlers of its (query)
 *   actions are called; the response splices every field in order.
 * - A mutation: root fields run in order; database fields each in their own transaction (a
 *   handler is not part of a database transaction), actions by calling their handler, an
 *   asynchronous action by storing the call in `svc_catalog.hdb_action_log` (the delivery
 *   subsystem calls the handler; src/actions/queue.ts).
 *
 * A synchronous action's output is projected from the handler's response: in JavaScript when the
 * selection has no relationships, else by one statement over the response (actions/sql.ts).
 */
import { traceparentOf } from '../core/tracing.js';
import { SvcError } from '../errors.js';
import { bindParams } from '../sql/ast.js';
import type { ExecContext, PlanExecutor } from '../execute/interface.js';
import { executeMutationPlan } from '../execute/mutation.js';
import { fromPgError } from '../execute/errors.js';
import type { QueryPlan } from '../execute/plan.js';
import { fillInput, hasRelationships } from './ir.js';
import type { ActionField, OutputSelection } from '../ir/types.js';
import { RESPONSE_VAR, compileOutputStatement } from './sql.js';
import { isAdminSecretHeader } from '../http/credentials.js';
import { collectSetCookies } from '../http/responseHeaders.js';
import { actionRequest, callHandler, forwardedClientHeaders, readResponse } from './webhook.js';
import { jsonText } from '../json.js';

export function planHasActions(plan: QueryPlan): boolean {
  return plan.fields.some((f) => f.kind === 'action');
}

/**
 * Answers a plan with actions: resolves with the response text `{"data": …}`. `join`, when given,
 * fills the remote relationships inside the root fields' values (src/remote: one request per remote
 * for the whole response).
 */
export function executeActionPlan(
  ctx: ExecContext,
  plan: QueryPlan,
  variables: Record<string, unknown>,
  join?: (texts: Map<string, string>) => Promise<Map<string, string>>,
): Promise<string> {
  // the common query, one action beside constant fields (__typename) only: its call is the only promise
  if (plan.opType !== 'mutation' && !plan.statement && !join) {
    const i = soleActionIndex(plan);
    if (i >= 0) {
      let call: Promise<string>;
      try {
        call = runActionField(ctx, (plan.fields[i] as Extract<QueryPlan['fields'][number], { kind: 'action' }>).field, variables);
      } catch (e) {
        return Promise.reject(e);
      }
      return call.then((text) =>
        dataResponse(
          plan,
          plan.fields.map((f, k) => (k === i ? text : f.kind === 'const' ? f.json : 'null')),
        ),
      );
    }
  }
  return executeMixedPlan(ctx, plan, variables, join);
}

/** index of the plan's one action field when every other root field is constant, else -1 (kept on the plan) */
function soleActionIndex(plan: QueryPlan): number {
  if (plan.soleAction === undefined) {
    const actions = plan.fields.flatMap((f, k) => (f.kind === 'action' ? [k] : []));
    plan.soleAction = actions.length === 1 && plan.fields.every((f) => f.kind === 'action' || f.kind === 'const') ? actions[0]! : -1;
  }
  return plan.soleAction;
}

/** `{"data": …}` of the root fields' JSON texts, in order */
function dataResponse(plan: QueryPlan, parts: readonly string[]): string {
  return `{"data":{${plan.fields.map((f, i) => `${JSON.stringify(f.alias)}:${parts[i]}`).join(',')}}}`;
}

async function executeMixedPlan(
  ctx: ExecContext,
  plan: QueryPlan,
  variables: Record<string, unknown>,
  join?: (texts: Map<string, string>) => Promise<Map<string, string>>,
): Promise<string> {
  const parts: string[] = [];
  if (plan.opType === 'mutation') {
    for (const f of plan.fields) {
      if (f.kind === 'action') parts.push(await runActionField(ctx, f.field, variables));
      else if (f.kind === 'const') parts.push(f.json);
      else parts.push((await executeMutationPlan(ctx, { ...plan, fields: [f] }, variables))[0]!);
    }
  } else {
    const row = plan.statement ? runStatement(ctx, plan, variables) : Promise.resolve({} as Record<string, string | null>);
    const actions = plan.fields.map((f) => (f.kind === 'action' ? runActionField(ctx, f.field, variables) : undefined));
    // settle everything before answering, so no call is left running unobserved
    const [r, ...rest] = await Promise.allSettled([row, ...actions.filter((p): p is Promise<string> => !!p)]);
    const failed = [r, ...rest].find((x): x is PromiseRejectedResult => x!.status === 'rejected');
    if (failed) throw failed.reason;
    const values = (r as PromiseFulfilledResult<Record<string, string | null>>).value;
    let k = 0;
    for (const f of plan.fields) {
      if (f.kind === 'const') parts.push(f.json);
      else if (f.kind === 'db') parts.push(values[String(f.column)] ?? 'null');
      else if (f.kind === 'action') parts.push((rest[k++] as PromiseFulfilledResult<string>).value);
    }
  }
  if (join) {
    const joined = await join(new Map(plan.fields.map((f, i) => [f.alias, parts[i]!])));
    plan.fields.forEach((f, i) => (parts[i] = joined.get(f.alias) ?? parts[i]!));
  }
  return dataResponse(plan, parts);
}

async function runStatement(ctx: ExecContext, plan: QueryPlan, variables: Record<string, unknown>): Promise<Record<string, string | null>> {
  const { name, compiled } = plan.statement!;
  const values = bindParams(compiled, ctx.session.vars, variables);
  try {
    const r = await ctx.db.prepared(name, compiled.text, values, ctx.signal);
    return r.rows[0] ?? {};
  } catch (e) {
    throw fromPgError(e, { text: compiled.text, params: values, prepared: ctx.db.usePrepared });
  }
}

function runActionField(ctx: ExecContext, field: ActionField, variables: Record<string, unknown>): Promise<string> {
  const input = fillInput(field.input, variables);
  const client = field.action.forwardClientHeaders ? forwardedClientHeaders(ctx.headers) : [];
  if (field.action.kind === 'asynchronous') return queueAsyncAction(ctx, field, input, client);
  return runSyncAction(ctx, field, input, client);
}

async function runSyncAction(ctx: ExecContext, field: ActionField, input: unknown, client: ReturnType<typeof forwardedClientHeaders>): Promise<string> {
  const a = field.action;
  const req = actionRequest(a, input, ctx.session.vars, client);
  const res = await callHandler(ctx.outbound, req, a.timeoutSec * 1000, ctx.span);
  const { text, value } = readResponse(a, req, res);
  // the handler's cookies reach the client, as upstream (only of a successful answer)
  collectSetCookies(ctx.headers, res.headers);
  const sel = field.output!;
  if (!hasRelationships(sel)) return jsonText(project(value, sel));
  field.compiled ??= compileOutputStatement(sel, { stringifyNumerics: ctx.config.stringifyNumericTypes });
  const c = field.compiled;
  for (const v of c.sessionVars) {
    if (ctx.session.vars[v] === undefined) throw new SvcError(400, 'not-found', `${JSON.stringify(v)} header is expected but not found`, '$');
  }
  const values = bindParams(c, ctx.session.vars, { [RESPONSE_VAR]: text });
  try {
    const r = await ctx.db.query(c.text, values);
    return (r.rows[0] as { result: string | null } | undefined)?.result ?? 'null';
  } catch (e) {
    throw fromPgError(e, { text: c.text, params: values, prepared: false });
  }
}

/** The selected fields of the (checked) response, in selection order. */
function project(v: unknown, sel: OutputSelection): unknown {
  const one = (o: unknown): unknown => {
    if (o === null || typeof o !== 'object') return null;
    const src = o as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const f of sel.fields) {
      if (f.kind === 'field') out[f.alias] = src[f.name] ?? null;
      else if (f.kind === 'typename') out[f.alias] = f.name;
    }
    return out;
  };
  if (v === null) return null;
  return sel.list ? (v as unknown[]).map(one) : one(v);
}

const INSERT_ASYNC = `insert into svc_catalog.hdb_action_log (action_name, input_payload, request_headers, session_variables, status, trace_context)
values ($1, $2::jsonb, $3::jsonb, $4::jsonb, 'created', $5) returning id`;

async function queueAsyncAction(ctx: ExecContext, field: ActionField, input: unknown, client: ReturnType<typeof forwardedClientHeaders>): Promise<string> {
  // stored as forwarded later: never the admin secret (src/http/credentials.ts)
  const stored = client.filter((h) => !isAdminSecretHeader(h.name));
  // trace_context: the request's traceparent (tracing on, sampled), the parent of the handler call's span
  const values = [field.action.name, jsonText(input), jsonText(stored), JSON.stringify(ctx.session.vars), traceparentOf(ctx.span) ?? null];
  let id: string;
  try {
    const r = await ctx.db.query(INSERT_ASYNC, values);
    id = String((r.rows[0] as { id: unknown }).id);
  } catch (e) {
    throw fromPgError(e, { text: INSERT_ASYNC, params: values, prepared: false });
  }
  // the engine's asynchronous-action worker polls at once (src/engine.ts)
  ctx.asyncActionQueued?.();
  return JSON.stringify(id);
}

/** The executor of plans with actions (execute/interface.ts `PlanExecutor`, registered in src/extensions.ts). */
export const actionsExecutor: PlanExecutor = (ctx, _req, _opts, plan, variables, fail) => executeActionPlan(ctx, plan, variables).catch(fail);
