import { SvcError } from '../errors.js';
import { CancelToken } from '../core/cancel.js';
import { roleLimits, timeLimitExceeded } from './apiLimits.js';
import type { RequestHook } from './interface.js';

/**
 * API limits' `time_limit` as a request hook (execute/hooks.ts): a mutation's transaction runs with
 * `statement_timeout` (PostgreSQL cancels and rolls back; nothing is answered before the outcome
 * is known); a query is answered with the error at the deadline and its statement cancelled (the
 * CancelToken: a running statement on PostgreSQL; on PGlite the statement finishes in the
 * background).
 */
export const timeLimitHook: RequestHook = {
  name: 'time-limit',
  execute(call, next) {
    const { ctx: reqCtx, fail } = call;
    const timeMs = reqCtx.cache.metadata.api_limits === undefined ? undefined : roleLimits(reqCtx.cache, reqCtx.session.role)?.timeMs;
    if (timeMs === undefined) return next(call);
    const timedOut = (e: unknown) => fail(e instanceof SvcError && /statement timeout/.test(e.message) ? timeLimitExceeded(timeMs) : e);
    if (call.plan.opType === 'mutation') return next({ ...call, ctx: { ...reqCtx, timeLimitMs: timeMs }, fail: timedOut });
    const token = new CancelToken();
    reqCtx.signal?.onCancel(() => token.cancel());
    const ctx = { ...reqCtx, signal: token };
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        token.cancel();
        resolve(fail(timeLimitExceeded(timeMs)));
      }, timeMs);
      const done = () => {
        clearTimeout(timer);
        reqCtx.signal?.clear();
      };
      next({ ...call, ctx }).then(
        (out) => {
          done();
          resolve(out);
        },
        (e: unknown) => {
          done();
          reject(e);
        },
      );
    });
  },
};
