/**
 * The shared store (`--redis-url`): one Redis connection per engine for state that several Svc
 * processes must agree on (rate-limit counters, persisted queries, the response cache).
 *
 * Guarantees:
 * - Bounded: every command has a deadline (`commandTimeoutMs`); a Redis that is down or slow fails
 *   the command, never hangs a request. Callers decide what a failed command means for them
 *   (a cache miss, a rate limit that fails open or closed) and say so where they call.
 * - The client reconnects on its own with a capped backoff; errors are logged once per outage,
 *   never thrown from an event handler.
 * - Keys are prefixed (`svc:` by default) so one Redis can serve several deployments.
 */
import { createClient } from 'redis';
import type { Logger } from '../core/logger.js';

export type RedisClient = ReturnType<typeof createClient>;

export interface SharedStore {
  readonly client: RedisClient;
  /** the key prefix every caller puts before its keys */
  readonly prefix: string;
  /** true while the connection is up */
  ready(): boolean;
  close(): Promise<void>;
}

export interface SharedStoreOptions {
  url: string;
  prefix?: string;
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
  log: Logger;
}

export async function openSharedStore(opts: SharedStoreOptions): Promise<SharedStore> {
  const connectTimeout = opts.connectTimeoutMs ?? 5_000;
  const client: RedisClient = createClient({
    url: opts.url,
    socket: {
      connectTimeout,
      reconnectStrategy: (retries: number) => Math.min(100 * 2 ** Math.min(retries, 6), 5_000),
    },
    commandOptions: { timeout: opts.commandTimeoutMs ?? 1_000 },
    disableOfflineQueue: true,
  } as Parameters<typeof createClient>[0]);
  let down = false;
  client.on('error', (e: Error) => {
    if (down) return;
    down = true;
    opts.log.warn({ type: 'redis', detail: { error: e.message } }, `redis: ${e.message}`);
  });
  client.on('ready', () => {
    if (down) opts.log.info({ type: 'redis', detail: { reconnected: true } }, 'redis: connected again');
    down = false;
  });
  const timer = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`redis: no connection to ${redactUrl(opts.url)} within ${connectTimeout} ms`)), connectTimeout).unref(),
  );
  try {
    await Promise.race([client.connect(), timer]);
  } catch (e) {
    client.destroy();
    throw e;
  }
  return {
    client,
    prefix: opts.prefix ?? 'svc:',
    ready: () => client.isReady,
    close: async () => {
      if (client.isOpen) await client.close().catch(() => client.destroy());
    },
  };
}

export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}
