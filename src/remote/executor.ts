/**
 * The executors of plans with remote fields (execute/interface.ts `PlanExecutor`, registered in
 * src/extensions.ts): remote root fields and remote relationships around the database part, which
 * keeps its one statement (or, for a mutation, its one transaction); and remote relationships
 * under actions' outputs.
 */
import { SvcError } from '../errors.js';
import { executeActionPlan } from '../actions/execute.js';
import { fromPgError } from '../execute/errors.js';
import { logQuery, mutationResponse, readResponse } from '../execute/graphql.js';
import type { ExecContext, PlanExecutor } from '../execute/interface.js';
import { executeMutationPlan } from '../execute/mutation.js';
import type { QueryPlan } from '../execute/plan.js';
import { bindParams } from '../sql/ast.js';
import { executeRemoteRoots, resolveJoins } from './execute.js';

/** remote schemas and remote relationships (src/remote): database fields keep their statement */
export const remoteExecutor: PlanExecutor = (ctx, req, opts, plan, variables, fail) => {
  if (ctx.config.enabledLogTypes.includes('query-log'))
    logQuery(ctx, req, plan, opts, plan.statement ? bindParams(plan.statement.compiled, ctx.session.vars, variables) : undefined);
  return runWithRemote(ctx, plan, variables).catch(fail);
};

/** remote relationships under actions' outputs are joined; remote root fields beside actions are not supported */
export const remoteActionsExecutor: PlanExecutor = (ctx, _req, _opts, plan, variables, fail) => {
  const remote = plan.remote!;
  if (remote.roots.length) throw new SvcError(400, 'not-supported', 'actions and fields of remote schemas cannot be mixed in one request', '$');
  return executeActionPlan(ctx, plan, variables, (texts) => resolveJoins(ctx, remote, texts, variables)).catch(fail);
};

/** Runs the database part of a plan (one statement, or the mutation's transaction); the remote part around it. */
async function runWithRemote(ctx: ExecContext, plan: QueryPlan, variables: Record<string, unknown>): Promise<string> {
  const remote = plan.remote!;
  const joinAll = async (texts: Map<string, string>) => (remote.joins.size ? resolveJoins(ctx, remote, texts, variables) : texts);
  if (plan.opType === 'mutation') {
    // database mutations first (one transaction), then the remote ones, as the operation orders them
    const results = await executeMutationPlan(ctx, { ...plan, fields: plan.fields.filter((f) => f.kind !== 'remote') }, variables);
    const roots = await executeRemoteRoots(ctx, remote, variables);
    let k = 0;
    const texts = new Map(plan.fields.map((f) => [f.alias, f.kind === 'remote' ? (roots.values.get(f.alias) ?? 'null') : results[k++]!]));
    const joined = await joinAll(texts);
    return withRemoteErrors(
      mutationResponse(
        plan,
        plan.fields.map((f) => joined.get(f.alias)!),
      ),
      roots.errors,
    );
  }
  const statement = plan.statement;
  const dbRow = statement
    ? (async () => {
        const values = bindParams(statement.compiled, ctx.session.vars, variables);
        try {
          return (await ctx.db.prepared(statement.name, statement.compiled.text, values, ctx.signal)).rows[0] ?? {};
        } catch (e) {
          throw fromPgError(e, { text: statement.compiled.text, params: values, prepared: ctx.db.usePrepared });
        }
      })()
    : Promise.resolve({} as Record<string, string | null>);
  const [row, roots] = await Promise.all([dbRow, executeRemoteRoots(ctx, remote, variables)]);
  // a copy by Object.assign: entries are added below (src/core/objects.ts)
  const out: Record<string, string | null> = Object.assign({}, row);
  if (remote.joins.size) {
    const texts = new Map<string, string>();
    for (const f of plan.fields) if (f.kind === 'db' && remote.joins.has(f.alias)) texts.set(f.alias, row[String(f.column)] ?? 'null');
    for (const [alias, text] of await joinAll(texts)) {
      const f = plan.fields.find((x) => x.alias === alias);
      if (f?.kind === 'db') out[String(f.column)] = text;
    }
  }
  for (const [alias, text] of roots.values) out[`remote:${alias}`] = text;
  return withRemoteErrors(readResponse(plan, out), roots.errors);
}

/** `{"data":…}` with the remotes' errors appended as they came (their paths are the response's). */
function withRemoteErrors(response: string, errors: unknown[]): string {
  return errors.length ? `${response.slice(0, -1)},"errors":${JSON.stringify(errors)}}` : response;
}
