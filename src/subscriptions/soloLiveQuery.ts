/**
 * A live query of its own: the subscription re-runs its request every refetch interval and sends
 * the result when it changed. Used only for subscriptions that cannot be multiplexed (no database
 * field, e.g. `__typename` alone); every other subscription joins a cohort of
 * subscriptions/liveQueryManager.ts. Transport-independent: server/websocket/operation.ts starts one per
 * subscription and stops it on stop/complete, on close and when the session expires.
 */

export interface LiveQuery {
  stop(): void;
}

export interface LiveQueryOptions {
  /** runs the query; resolves with the response text (never rejects: errors are responses too) */
  run: () => Promise<string>;
  /** called with a new result (the first one, then each one that differs from the previous) */
  send: (result: string) => void;
  intervalMs: number;
  /** a result the caller already has (the next run is one interval later) */
  first?: string;
  /** send `first` at once (default true; false: the caller sent it) */
  sendFirst?: boolean;
}

export function startLiveQuery(opts: LiveQueryOptions): LiveQuery {
  let last: string | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    if (stopped) return;
    let out: string;
    try {
      out = await opts.run();
    } catch (e) {
      out = JSON.stringify({ errors: [{ message: e instanceof Error ? e.message : String(e), extensions: { path: '$', code: 'unexpected' } }] });
    }
    if (stopped) return;
    if (out !== last) {
      last = out;
      opts.send(out);
    }
    timer = setTimeout(() => void tick(), opts.intervalMs);
    timer.unref();
  };
  if (opts.first !== undefined) {
    last = opts.first;
    if (opts.sendFirst !== false) opts.send(opts.first);
    timer = setTimeout(() => void tick(), opts.intervalMs);
    timer.unref();
  } else void tick();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
