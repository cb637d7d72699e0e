/**
 * Running mutations: every root field of the operation, in order, in one
 * transaction that first sets `svc.user` to the session (event triggers read
 * it). A failing field rolls back all of them. Database errors become
 * Hasura's errors, reported at the field's path.
 */
import type { BatchError } from '../db/batch.js';
import { asPgError, type Conn } from '../db/db.js';
import type { QueryResultLike, Statement } from '../db/statement.js';
import { SvcError } from '../errors.js';
import { AFFECTED_PARAM, ROWS_PARAM, raisedError, type RaisedError } from '../sql/mutation.js';
import { bindParams, type CompiledSql } from '../sql/ast.js';
import { fromPgError } from './errors.js';
import type { ExecContext } from './interface.js';
import type { MutationFieldPlan, QueryPlan } from './plan.js';
import { traceparentOf } from '../core/tracing.js';
import { withEntry } from '../core/objects.js';

/**
 * A database error of a mutation statement as an SvcError at `path` (our raises:
 * failed checks, nested inserts writing nothing) or `pgPath` (the database's own).
 */
export function mutationError(e: unknown, raises: RaisedError[], path: string, statement: { text: string; params: unknown[] }, pgPath = path): SvcError {
  if (e instanceof SvcError) return e;
  const pg = asPgError(e);
  const raised = pg ? raisedError(pg.message, raises) : undefined;
  if (raised) return new SvcError(400, raised.code, raised.message, path);
  const err = fromPgError(e, { ...statement, prepared: false });
  return err.status < 500 ? new SvcError(err.status, err.code, err.message, pgPath, err.internal) : err;
}

async function run(
  c: Conn,
  compiled: CompiledSql,
  ctx: ExecContext,
  variables: Record<string, unknown>,
  plan: MutationFieldPlan,
): Promise<Record<string, string | null>> {
  const values = bindParams(compiled, ctx.session.vars, variables);
  try {
    const r = await c.query(compiled.text, values);
    return r.rows[0] ?? {};
  } catch (e) {
    throw mutationError(e, plan.raises, plan.errorPath, { text: compiled.text, params: values });
  }
}

/** Runs one mutation root field on the transaction's connection; returns its JSON text. */
export async function runMutationField(c: Conn, ctx: ExecContext, plan: MutationFieldPlan, variables: Record<string, unknown>): Promise<string> {
  const w = await run(c, plan.write, ctx, variables, plan);
  if (!plan.output) return w.result ?? 'null';
  const vars: Record<string, unknown> = withEntry(variables, ROWS_PARAM, w.rows);
  vars[AFFECTED_PARAM] = w.affected ?? '0';
  const o = await run(c, plan.output, ctx, vars, plan);
  return o.result ?? 'null';
}

/** The session as `svc.user` holds it (lower-cased `x-svc-*` names). */
export function sessionJson(ctx: ExecContext): string {
  return JSON.stringify(ctx.session.vars);
}

const BEGIN: Statement = { text: 'begin' };
/**
 * The transaction's session (and the API limits' time limit: every statement of the transaction);
 * with tracing on and the request sampled also its traceparent, which the event log's
 * `trace_context` default reads (the events' deliveries are linked to the request).
 */
const setSession = (ctx: ExecContext): Statement => {
  const tp = traceparentOf(ctx.span);
  if (tp !== undefined) {
    return ctx.timeLimitMs === undefined
      ? { name: 'svc_set_session_tp', text: "select set_config('svc.user', $1, true), set_config('svc.traceparent', $2, true)", values: [sessionJson(ctx), tp] }
      : {
          name: 'svc_set_session_timeout_tp',
          text: "select set_config('svc.user', $1, true), set_config('statement_timeout', $2, true), set_config('svc.traceparent', $3, true)",
          values: [sessionJson(ctx), String(ctx.timeLimitMs), tp],
        };
  }
  return ctx.timeLimitMs === undefined
    ? { name: 'svc_set_session', text: "select set_config('svc.user', $1, true)", values: [sessionJson(ctx)] }
    : // API limits' time limit: every statement of the transaction
      {
        name: 'svc_set_session_timeout',
        text: "select set_config('svc.user', $1, true), set_config('statement_timeout', $2, true)",
        values: [sessionJson(ctx), String(ctx.timeLimitMs)],
      };
};

/** The first failure of a pipeline, as an SvcError. */
function firstFailure(results: Array<PromiseSettledResult<unknown>>): SvcError | undefined {
  const r = results.find((x): x is PromiseRejectedResult => x.status === 'rejected');
  return r && fromPgError(r.reason, { text: '', params: [], prepared: false });
}

/**
 * Runs a mutation plan; returns the JSON text of every root field in order.
 * All root fields run in one transaction that first sets `svc.user`. When no
 * field needs a second statement (`returning` reading relationships), the
 * whole transaction is one batch (the session and every write, one implicit
 * transaction): one round trip to the server.
 */
export async function executeMutationPlan(ctx: ExecContext, plan: QueryPlan, variables: Record<string, unknown>): Promise<string[]> {
  const fields = plan.fields;
  if (!fields.some((f) => f.kind === 'mutation')) return fields.map((f) => (f.kind === 'const' ? f.json : 'null'));
  const writes = fields.flatMap((f) => (f.kind === 'mutation' ? [f.plan] : []));
  return ctx.db.withConn(async (c) => {
    if (writes.every((w) => !w.output)) {
      // the session and every write: one transaction, one round trip
      const params = writes.map((w) => bindParams(w.write, ctx.session.vars, variables));
      const statements: Statement[] = [setSession(ctx)];
      writes.forEach((w, i) => statements.push({ text: w.write.text, values: params[i], name: plan.cached ? w.name : undefined }));
      let results: QueryResultLike[];
      try {
        results = await c.batch(statements);
      } catch (e) {
        const i = ((e as BatchError).batchIndex ?? 0) - 1;
        const w = writes[i];
        throw w
          ? mutationError(e, w.raises, w.errorPath, { text: w.write.text, params: params[i]! })
          : fromPgError(e, { text: '', params: [], prepared: false });
      }
      let k = 1;
      return fields.map((f) => (f.kind === 'const' ? f.json : (results[k++]!.rows[0]?.result ?? 'null')));
    }
    const opened = firstFailure(await c.pipeline([BEGIN, setSession(ctx)]));
    if (opened) {
      await c.query('rollback').catch(() => undefined);
      throw opened;
    }
    try {
      const out: string[] = [];
      for (const f of fields) {
        if (f.kind === 'const') out.push(f.json);
        else if (f.kind === 'mutation') out.push(await runMutationField(c, ctx, f.plan, variables));
      }
      await c.query('commit');
      return out;
    } catch (e) {
      await c.query('rollback').catch(() => undefined);
      throw e;
    }
  });
}
