/**
 * Live queries: a subscription re-runs its query every refetch interval and sends the result when
 * it changed. Transport-independent: a websocket protocol adapter (server/websocket.ts for the
 * legacy `graphql-ws` protocol) starts one per subscription and stops it on `stop`, on close and
 * when the session expires. A multiplexed implementation (one statement per cohort of
 * subscriptions with the same query) replaces this module behind the same interface.
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
  /** a result the caller already has (sent at once; the next run is one interval later) */
  first?: string;
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
    opts.send(opts.first);
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
