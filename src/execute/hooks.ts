/**
 * The request pipeline's hook interface. Every GraphQL request — HTTP POST/GET, a websocket
 * operation, a REST endpoint call — runs the same stages after authentication:
 * admit → plan → execute → respond (server/graphql.ts `run`, execute/graphql.ts `runGraphQL`).
 * Features that act on every request plug in as hooks instead of editing the stages. A server
 * lists its hooks once per engine (server/graphql.ts `requestHooks`); they run in list order:
 *
 * - `admit(ctx, req, opts)`: before planning. A hook refuses the request by throwing, or rejecting
 *   with, an SvcError: that error is the response. Examples: the per-role rate limit, the allow-list.
 * - `execute(call, next)`: around the execution of a planned request. `next` runs the next hook,
 *   and after the last one the plan's executor. A hook may change the call (its context, its
 *   error mapping) or answer without calling `next`. Example: the per-role time limit.
 *
 * Without hooks (a bare ExecContext, tools, tests) the stages run as they are.
 */
import type { ExecContext, ExecuteCall, GraphQLRequest, RequestHook, RunOptions } from './interface.js';
export type { ExecuteCall, RequestHook } from './interface.js';

/**
 * Runs the admit hooks, then `then`. Synchronous all the way when no hook returns a promise (a
 * refusal is thrown to the caller); once one is asynchronous, a refusal after it rejects.
 */
export function admitThen<T>(
  hooks: readonly RequestHook[] | undefined,
  ctx: ExecContext,
  req: GraphQLRequest,
  opts: RunOptions,
  then: () => T | Promise<T>,
): T | Promise<T> {
  if (!hooks) return then();
  for (let i = 0; i < hooks.length; i++) {
    const r = hooks[i]!.admit?.(ctx, req, opts);
    if (r instanceof Promise) return r.then(() => admitThen(hooks.slice(i + 1), ctx, req, opts, then));
  }
  return then();
}

/** Runs `call` through the execute hooks, the executor last. */
export function executeThrough(
  hooks: readonly RequestHook[] | undefined,
  call: ExecuteCall,
  executor: (call: ExecuteCall) => Promise<string>,
): Promise<string> {
  if (!hooks?.length) return executor(call);
  const step =
    (i: number) =>
    (c: ExecuteCall): Promise<string> => {
      for (let j = i; j < hooks.length; j++) {
        const h = hooks[j]!.execute;
        if (h) return h(c, step(j + 1));
      }
      return executor(c);
    };
  return step(0)(call);
}
