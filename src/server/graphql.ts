/** Wires the GraphQL executor (and the allow-list) into the HTTP and websocket routes. */
import { checkAllowlist } from '../execute/allowlist.js';
import { explainGraphQL, runGraphQL, type ExplainBody } from '../execute/graphql.js';
import type { ExecContext } from '../execute/interface.js';
import { planLiveQuery } from '../subscriptions/liveQueryPlan.js';
import { planStream, planStreamNow } from '../subscriptions/streamPlan.js';
import type { Engine } from '../engine.js';
import type { GraphQLHandlers } from './handlers.js';
import { isAdmin, type Session } from './auth/session.js';
import type { CancelToken } from '../core/cancel.js';
import type { Span } from '../core/tracing.js';
import { rateLimitExceeded, roleLimits } from '../execute/apiLimits.js';
import { timeLimitHook } from '../execute/timeLimit.js';
import { admitThen, type RequestHook } from '../execute/hooks.js';
import { errorResponse } from '../execute/errors.js';
import { RateLimiter } from './rateLimit.js';
import { runningWorkers } from './cluster.js';
import { EXTENSION_EXECUTORS } from '../extensions.js';

const limiters = new WeakMap<Engine, { limiter: RateLimiter; hooks: readonly RequestHook[] }>();
/** the engine's rate-limit counters (src/server/rateLimit.ts) */
export function rateLimiter(engine: Engine): RateLimiter {
  return perEngine(engine).limiter;
}

/**
 * The engine's request hooks (execute/hooks.ts), in order: the per-role rate limit and the
 * allow-list at admission, the per-role time limit around execution.
 */
export function requestHooks(engine: Engine): readonly RequestHook[] {
  return perEngine(engine).hooks;
}

function perEngine(engine: Engine): { limiter: RateLimiter; hooks: readonly RequestHook[] } {
  let l = limiters.get(engine);
  if (!l) {
    const limiter = new RateLimiter(engine.redis, runningWorkers(), engine.log);
    l = { limiter, hooks: Object.freeze([rateLimitHook(limiter), allowListHook, timeLimitHook]) };
    limiters.set(engine, l);
  }
  return l;
}

/** API limits' rate limit (issue 36): a client's operation (not a live query's refetch) */
function rateLimitHook(limiter: RateLimiter): RequestHook {
  return {
    name: 'rate-limit',
    admit(ctx, _req, opts) {
      const rate = opts.client && ctx.cache.metadata.api_limits !== undefined ? roleLimits(ctx.cache, ctx.session.role)?.rate : undefined;
      if (!rate) return;
      const vars = ctx.session.vars;
      const params = rate.unique === null ? [] : rate.unique === 'IP' ? [opts.client?.ip ?? ''] : rate.unique.map((v) => vars[v.toLowerCase()] ?? '');
      const ok = limiter.take(RateLimiter.key(ctx.session.role, params), rate.max);
      const check = (allowed: boolean) => {
        if (!allowed) throw rateLimitExceeded(rate.max);
      };
      if (typeof ok === 'boolean') return check(ok);
      return ok.then(check);
    },
  };
}

/** the allow-list (per role with scopes): non-admin requests only */
const allowListHook: RequestHook = {
  name: 'allow-list',
  admit(ctx, req) {
    if (ctx.config.enableAllowlist && !isAdmin(ctx.session)) checkAllowlist(ctx.cache, req.query, ctx.session.role);
  },
};

const context = (engine: Engine, session: Session, headers: ExecContext['headers'], signal?: CancelToken, span?: Span): ExecContext => {
  // tracing on: its statements are children of its span (when sampled: Db.withSpan)
  const db = span ? engine.db.withSpan(span) : engine.db;
  const reads = engine.readDb(session.role, headers);
  return {
    cache: engine.cache,
    db,
    readDb: !span ? reads : reads === engine.db ? db : reads.withSpan(span),
    config: engine.config,
    session,
    log: engine.log,
    headers,
    signal,
    span,
    responseCache: engine.responseCache,
    planCache: engine.planCache,
    histograms: engine.histograms,
    outbound: engine.outbound,
    executors: EXTENSION_EXECUTORS,
    hooks: requestHooks(engine),
    asyncActionQueued: () => engine.asyncActions?.poke(),
  };
};

export const graphqlHandlers: GraphQLHandlers = {
  run(engine, session, req, headers, opts) {
    // admit (the hooks: rate limit, allow-list) → plan → execute (runGraphQL; the time limit) → respond
    const ctx = context(engine, session, headers, opts.signal, opts.span);
    // a refusal by a synchronous hook is thrown to the caller; after an asynchronous one nothing
    // throws: an error is the response (or, for the websocket's start, the rejection it expects)
    const out = admitThen(ctx.hooks, ctx, req, opts, () => runGraphQL(ctx, req, opts)) as Promise<string>;
    return out.catch((e: unknown) => (opts.rejectPreExec ? Promise.reject(e) : errorResponse(e, { v1alpha1: opts.v1alpha1, legacy: opts.legacyErrors })));
  },
  planLive(engine, session, req, headers, opts) {
    return planLiveQuery(context(engine, session, headers), req, { relay: opts?.relay });
  },
  async planStream(engine, session, req, headers, opts) {
    const ctx = context(engine, session, headers);
    await admitThen(ctx.hooks, ctx, req, {}, () => undefined);
    return planStream(ctx, req, { relay: opts?.relay });
  },
  planStreamNow(engine, session, req, headers, opts) {
    const ctx = context(engine, session, headers);
    // streams are re-planned synchronously: their admission is too (the allow-list; no rate limit without a client)
    const admitted = admitThen(ctx.hooks, ctx, req, {}, () => true);
    if (admitted !== true) throw new Error('asynchronous admission of a stream re-plan');
    return planStreamNow(ctx, req, { relay: opts?.relay });
  },
  explain(engine, session, body, headers) {
    return explainGraphQL(context(engine, session, headers), body as ExplainBody);
  },
};
