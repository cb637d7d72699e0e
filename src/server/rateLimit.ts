/**
 * API limits' `rate_limit` (issue 36): requests per minute per (role, unique parameters), as a
 * sliding window (v2's approach): the count of the current minute plus the previous minute's
 * count weighted by the part of it still inside the last 60 seconds. A request over the limit is
 * refused and not counted.
 *
 * - With `--redis-url` the counters are in Redis, shared by every worker and instance: one
 *   round trip per request (a Lua script: read both windows, compare, INCR + EXPIRE), with
 *   Redis's clock (`TIME`), so instances whose clocks differ still agree on the window.
 * - Without Redis, or while Redis is unreachable (a failed command), each process counts alone
 *   with the limit divided among this instance's worker processes (`--workers`): with one
 *   instance the deployment admits at most the limit; N instances without Redis admit up to N
 *   times it (they cannot see each other). A Redis outage therefore degrades to per-process
 *   counting (logged once per outage) rather than refusing every request or admitting all.
 */
import { createHash } from 'node:crypto';
import type { SharedStore } from '../db/redis.js';
import type { Logger } from '../core/logger.js';

const WINDOW_MS = 60_000;
/** bound of the per-process table (keys are per role and client): past it, stale keys go */
const MAX_LOCAL_KEYS = 100_000;

// KEYS[1]: the counter's base key; ARGV[1]: the limit. Returns {1|0, estimate}.
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local win = math.floor(now / 60)
local cur = KEYS[1] .. ':' .. win
local prev = KEYS[1] .. ':' .. (win - 1)
local c = tonumber(redis.call('GET', cur) or '0')
local p = tonumber(redis.call('GET', prev) or '0')
local est = p * (1 - (now - win * 60) / 60) + c
if est + 1 > tonumber(ARGV[1]) then return {0, math.floor(est)} end
redis.call('INCR', cur)
redis.call('EXPIRE', cur, 130)
return {1, math.floor(est) + 1}
`;
const SCRIPT_SHA = createHash('sha1').update(SCRIPT).digest('hex');

interface Window {
  win: number;
  cur: number;
  prev: number;
}

export class RateLimiter {
  private readonly local = new Map<string, Window>();
  private redisDown = false;

  constructor(
    private readonly store: SharedStore | undefined,
    /** worker processes of this instance: the per-process share of a limit without Redis */
    private readonly processes: number,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** The key of a client: its role and the values of the unique parameters. */
  static key(role: string, params: readonly string[]): string {
    return createHash('sha1')
      .update(JSON.stringify([role, ...params]))
      .digest('base64url');
  }

  /** Counts one request; false when it is over `max` per minute (then it is not counted). */
  take(key: string, max: number): boolean | Promise<boolean> {
    const store = this.store;
    if (store && store.ready()) return this.takeShared(store, key, max);
    return this.takeLocal(key, max);
  }

  private async takeShared(store: SharedStore, key: string, max: number): Promise<boolean> {
    const k = `${store.prefix}rl:${key}`;
    try {
      let r: unknown;
      try {
        r = await store.client.sendCommand(['EVALSHA', SCRIPT_SHA, '1', k, String(max)]);
      } catch (e) {
        if (!/NOSCRIPT/.test((e as Error).message)) throw e;
        r = await store.client.sendCommand(['EVAL', SCRIPT, '1', k, String(max)]);
      }
      if (this.redisDown) {
        this.redisDown = false;
        this.log.info({ type: 'rate-limit', detail: { redis: 'up' } }, 'rate limits: counting in Redis again');
      }
      return Array.isArray(r) && Number(r[0]) === 1;
    } catch (e) {
      if (!this.redisDown) {
        this.redisDown = true;
        this.log.warn(
          { type: 'rate-limit', detail: { redis: 'down', error: (e as Error).message } },
          'rate limits: Redis failed, counting per process until it is back',
        );
      }
      return this.takeLocal(key, max);
    }
  }

  /** This process's share of the limit: at least 1 of a positive limit. */
  localShare(max: number): number {
    if (max <= 0) return 0;
    return Math.max(1, Math.floor(max / this.processes));
  }

  private takeLocal(key: string, max: number): boolean {
    const limit = this.localShare(max);
    const t = this.now();
    const win = Math.floor(t / WINDOW_MS);
    let w = this.local.get(key);
    if (!w) {
      if (this.local.size >= MAX_LOCAL_KEYS) this.prune(win);
      w = { win, cur: 0, prev: 0 };
      this.local.set(key, w);
    } else if (w.win !== win) {
      w.prev = w.win === win - 1 ? w.cur : 0;
      w.cur = 0;
      w.win = win;
    }
    const est = w.prev * (1 - (t - win * WINDOW_MS) / WINDOW_MS) + w.cur;
    if (est + 1 > limit) return false;
    w.cur++;
    return true;
  }

  private prune(win: number): void {
    for (const [k, w] of this.local) if (w.win < win - 1) this.local.delete(k);
    // still full (that many clients within two minutes): start over rather than grow
    if (this.local.size >= MAX_LOCAL_KEYS) this.local.clear();
  }
}
