/**
 * Connections per webhook host, opened gradually (issue 30 item 10). A flood of deliveries to one
 * modest webhook must not open the whole pool's worth of connections at once: a receiver that accepts
 * slowly (a small listen backlog, a thread per connection, a one-slot queue behind it) would leave
 * most of them waiting — and time them out — while it works through the first few.
 *
 * Guarantees:
 * - at most `limit(origin)` requests to one origin (scheme://host:port) are in flight; the others
 *   wait here, in order, and that wait is not part of their timeout (it starts when the request is
 *   sent, see postLimited's `timeoutFromConnect`);
 * - the limit starts at INITIAL_PER_HOST and follows what the host shows (`nextLimit`, a pure step
 *   function): +1 after a response that came back within an eighth of its timeout; halved after a
 *   timeout or a connection error (down to 1) or after a response slower than half its timeout (down
 *   to INITIAL_PER_HOST: a webhook may simply be slow); never above the configured maximum
 *   (`--events-http-max-connections-per-host`);
 * - a host not used for IDLE_FORGET_MS is forgotten (the map stays small).
 */

/** requests a new host gets at once */
export const INITIAL_PER_HOST = 4;
const IDLE_FORGET_MS = 5 * 60_000;

/** What one request to a host showed. */
export interface HostSignal {
  /** a response arrived (any status) */
  responded: boolean;
  /** ms from sending to the response (or to the failure) */
  latencyMs: number;
  timeoutMs: number;
}

/** The host's next limit after a request (AIMD on latency: grow while fast, halve when slow or failing). */
export function nextLimit(limit: number, s: HostSignal, max: number): number {
  if (!s.responded) return Math.max(1, Math.floor(limit / 2));
  // a slow answer: fewer at once, but not below the start (a webhook may simply be slow)
  if (s.latencyMs > s.timeoutMs / 2) return Math.max(Math.min(limit, INITIAL_PER_HOST), Math.floor(limit / 2));
  if (s.latencyMs <= s.timeoutMs / 8) return Math.min(max, limit + 1);
  return limit;
}

interface Host {
  limit: number;
  active: number;
  waiters: Array<() => void>;
  lastUsed: number;
}

export class HostGates {
  private readonly hosts = new Map<string, Host>();

  constructor(private readonly max: number) {}

  /** Waits for a slot of `url`'s origin; the returned function gives it back with what the request showed. */
  async acquire(url: string): Promise<(s: HostSignal) => void> {
    const key = originOf(url);
    const h = this.host(key);
    // a waiter is woken with its slot already counted in `active`
    if (h.active < h.limit) h.active++;
    else await new Promise<void>((r) => h.waiters.push(r));
    let released = false;
    return (s) => {
      if (released) return;
      released = true;
      h.active--;
      h.limit = nextLimit(h.limit, s, this.max);
      h.lastUsed = Date.now();
      while (h.active < h.limit && h.waiters.length) {
        h.active++;
        h.waiters.shift()!();
      }
    };
  }

  /** the current limit of a URL's origin (tests, metrics) */
  limitOf(url: string): number {
    return this.hosts.get(originOf(url))?.limit ?? Math.min(INITIAL_PER_HOST, this.max);
  }

  private host(key: string): Host {
    let h = this.hosts.get(key);
    if (!h) {
      if (this.hosts.size >= 1000) this.forgetIdle();
      h = { limit: Math.min(INITIAL_PER_HOST, this.max), active: 0, waiters: [], lastUsed: Date.now() };
      this.hosts.set(key, h);
    }
    return h;
  }

  private forgetIdle(): void {
    const before = Date.now() - IDLE_FORGET_MS;
    for (const [k, h] of this.hosts) if (h.active === 0 && !h.waiters.length && h.lastUsed < before) this.hosts.delete(k);
  }
}

function originOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return url;
  }
}
