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
import { rateLimitExceeded, roleLimits } from '../execute/apiLimits.js';
import { errorResponse } from '../execute/errors.js';
import { RateLimiter } from './rateLimit.js';
import { runningWorkers } from './cluster.js';
import { EXTENSION_EXECUTORS } from '../extensions.js';

const limiters = new WeakMap<Engine, RateLimiter>();
/** the engine's rate-limit counters (src/server/rateLimit.ts) */
export function rateLimiter(engine: Engine): RateLimiter {
  let l = limiters.get(engine);
  if (!l) limiters.set(engine, (l = new RateLimiter(engine.redis, runningWorkers(), engine.log)));
  return l;
}

const context = (engine: Engine, session: Session, headers: ExecContext['headers'], signal?: CancelToken): ExecContext => ({
  cache: engine.cache,
  db: engine.db,
  readDb: engine.readDb(session.role, headers),
  config: engine.config,
  session,
  log: engine.log,
  headers,
  signal,
  responseCache: engine.responseCache,
  planCache: engine.planCache,
  histograms: engine.histograms,
  outbound: engine.outbound,
  executors: EXTENSION_EXECUTORS,
  asyncActionQueued: () => engine.asyncActions?.poke(),
});

export const graphqlHandlers: GraphQLHandlers = {
  run(engine, session, req, headers, opts) {
    // API limits' rate limit (issue 36): a client's operation (not a live query's refetch)
    const rate = opts.client && engine.cache.metadata.api_limits !== undefined ? roleLimits(engine.cache, session.role)?.rate : undefined;
    if (rate) {
      const limiter = rateLimiter(engine);
      const params = rate.unique === null ? [] : rate.unique === 'IP' ? [opts.client?.ip ?? ''] : rate.unique.map((v) => session.vars[v.toLowerCase()] ?? '');
      const ok = limiter.take(RateLimiter.key(session.role, params), rate.max);
      const go = (allowed: boolean): Promise<string> => {
        if (!allowed) throw rateLimitExceeded(rate.max);
        if (engine.config.enableAllowlist && !isAdmin(session)) checkAllowlist(engine.cache, req.query, session.role);
        return runGraphQL(context(engine, session, headers, opts.signal), req, opts);
      };
      if (typeof ok === 'boolean') return go(ok);
      // after the await nothing throws to the caller: an error is the response (or, for the
      // websocket's start, the rejection it expects)
      return ok
        .then(go)
        .catch((e: unknown) => (opts.rejectPreExec ? Promise.reject(e) : errorResponse(e, { v1alpha1: opts.v1alpha1, legacy: opts.legacyErrors })));
    }
    if (engine.config.enableAllowlist && !isAdmin(session)) checkAllowlist(engine.cache, req.query, session.role);
    return runGraphQL(context(engine, session, headers, opts.signal), req, opts);
  },
  planLive(engine, session, req, headers, opts) {
    return planLiveQuery(context(engine, session, headers), req, { relay: opts?.relay });
  },
  async planStream(engine, session, req, headers, opts) {
    if (engine.config.enableAllowlist && !isAdmin(session)) checkAllowlist(engine.cache, req.query, session.role);
    return planStream(context(engine, session, headers), req, { relay: opts?.relay });
  },
  planStreamNow(engine, session, req, headers, opts) {
    if (engine.config.enableAllowlist && !isAdmin(session)) checkAllowlist(engine.cache, req.query, session.role);
    return planStreamNow(context(engine, session, headers), req, { relay: opts?.relay });
  },
  explain(engine, session, body, headers) {
    return explainGraphQL(context(engine, session, headers), body as ExplainBody);
  },
};
