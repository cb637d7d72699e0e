/**
 * The strict mode's fence (`--query-cache-strict`): before a lookup, every change notification
 * committed before the request arrived has been received.
 *
 * How: a NOTIFY on `svc_cache_fence` with this process's id, sent after the request arrived, on the
 * pool. The pool's one LISTEN connection (db.ts) listens to it and to the table-change channel;
 * PostgreSQL delivers the notifications of one listening connection in commit order, so when the
 * fence comes back, the notification of every write committed before the fence was sent has been
 * received — and the change tracker bumps its versions synchronously on receipt.
 *
 * One fence is in flight at a time: requests arriving while one is in flight wait for the next,
 * which is sent when the current one returns (a fence sent before a request arrived proves nothing
 * for it). A fence that does not come back within `timeoutMs` fails its waiters (they miss).
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/db.js';

export const FENCE_CHANNEL = 'svc_cache_fence';

interface Waiters {
  promise: Promise<void>;
  resolve: () => void;
  reject: (e: Error) => void;
}

function waiters(): Waiters {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

export class NotifyFence {
  private readonly id = randomUUID();
  private seq = 0;
  private inflight?: { seq: number; w: Waiters; timer: NodeJS.Timeout };
  private next?: Waiters;
  private unlisten?: () => Promise<void>;
  /** fences sent (for tests and metrics) */
  sent = 0;

  constructor(
    private readonly db: Db,
    private readonly timeoutMs = 1_000,
  ) {}

  async start(): Promise<void> {
    this.unlisten = await this.db.listen(FENCE_CHANNEL, (payload) => this.received(payload));
  }

  async stop(): Promise<void> {
    const u = this.unlisten;
    this.unlisten = undefined;
    if (u) await u();
    this.fail(new Error('the fence stopped'));
  }

  /** Resolves once every notification committed before this call has been received. */
  wait(): Promise<void> {
    if (!this.unlisten) return Promise.reject(new Error('the fence is not listening'));
    if (!this.inflight) return this.send(waiters());
    this.next ??= waiters();
    return this.next.promise;
  }

  private send(w: Waiters): Promise<void> {
    const seq = ++this.seq;
    const timer = setTimeout(() => {
      if (this.inflight?.seq !== seq) return;
      this.inflight = undefined;
      w.reject(new Error('the fence did not come back in time'));
      this.sendNext();
    }, this.timeoutMs);
    timer.unref();
    this.inflight = { seq, w, timer };
    this.sent++;
    this.db.notify(FENCE_CHANNEL, `${this.id}:${seq}`).catch((e: unknown) => {
      if (this.inflight?.seq !== seq) return;
      clearTimeout(timer);
      this.inflight = undefined;
      w.reject(e instanceof Error ? e : new Error(String(e)));
      this.sendNext();
    });
    return w.promise;
  }

  private received(payload: string): void {
    const f = this.inflight;
    if (!f || payload !== `${this.id}:${f.seq}`) return;
    clearTimeout(f.timer);
    this.inflight = undefined;
    f.w.resolve();
    this.sendNext();
  }

  private sendNext(): void {
    const n = this.next;
    this.next = undefined;
    if (n) void this.send(n);
  }

  private fail(e: Error): void {
    if (this.inflight) {
      clearTimeout(this.inflight.timer);
      this.inflight.w.reject(e);
      this.inflight = undefined;
    }
    this.next?.reject(e);
    this.next = undefined;
  }
}
