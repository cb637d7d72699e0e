/**
 * The delivery subsystem: one machinery for every kind of outgoing webhook that is queued in
 * `svc_catalog` (event triggers today; cron and one-off scheduled events and async actions plug in
 * as further queues).
 *
 * A queue's rows are claimed with `FOR UPDATE SKIP LOCKED` and marked with a lease (`locked_by` =
 * this process, `locked_until` = now + lease), so that
 * - two processes never claim the same row (the claim is one UPDATE over a SKIP LOCKED sub-select);
 * - a process that dies (kill -9) loses nothing: its rows are claimable again once their lease runs
 *   out, while a live process renews the leases of what it has in flight (every lease/3), so a slow
 *   webhook is never handed to a second process;
 * - on shutdown the worker stops claiming, waits for in-flight deliveries up to the grace period,
 *   and releases (unlocks) the rest.
 * Each try is written back with its invocation log row in one statement, conditional on the lease
 * still being ours.
 * - Every time and count taken from a row or a response is clamped (src/core/limits.ts) before
 *   use, so the next retry time can always be computed and stored;
 * - one row never fails the others: when a batch's write-back fails, its tries are written one by
 *   one, and a try that still cannot be written is recorded as a failed try with the reason, the
 *   row marked `error` (it is never left leased to be sent again and again without a log).
 */
import type { Db } from '../db/db.js';
import type { Logger } from '../core/logger.js';
import type { Worker } from '../background.js';
import { clampNumber, MAX_DELAY_SEC } from '../core/limits.js';
import type { HostGates } from './hosts.js';
import { tracing } from '../core/tracing.js';
import type { FastHistogram } from '../core/histogram.js';
import type { OutboundClient } from '../http/client.js';
import { CLIENT_ERROR_STATUS, deliver, invocationRequest, invocationResponse, type DeliveryOutcome, type DeliveryRequest } from './http.js';

/** the outbound-call label of a queue's webhooks (svc_outbound_request_duration_seconds{target}) */
const OUTBOUND_TARGET: Record<string, string> = { 'event-trigger': 'event', action: 'async_action' };

/** One claimed row, ready to send; `C`: what its queue needs back in `finish` (none by default). */
export interface DeliveryJob<C = undefined> extends DeliveryRequest {
  id: string;
  /** tries made before this one */
  tries: number;
  maxRetries: number;
  retryIntervalSec: number;
  /** when the row was created (for the commit-to-delivery latency) */
  createdAt?: Date;
  /** what the queue needs back in `finish` */
  context: C;
  /** set when the job cannot be sent (e.g. its webhook's variable is unset): a failed try, no request */
  failure?: string;
  /** the trigger (event and cron triggers), for the delivery-lag histogram and the span */
  trigger?: string;
  /** W3C traceparent of the request that created the row (tracing on): the try's span is its child and linked to it */
  traceparent?: string;
}

export interface FinishedTry<C = undefined> {
  job: DeliveryJob<C>;
  outcome: DeliveryOutcome;
  next: NextStep;
}

/** What happens to a row after a try. */
export type NextStep = { kind: 'delivered' } | { kind: 'retry'; at: Date } | { kind: 'error' };

export interface DeliveryQueue<C = undefined> {
  /** for logs and metrics: `event-trigger`, `cron`, `scheduled`, `action` */
  readonly kind: string;
  /** claims up to `limit` due rows, leasing them to `owner` for `leaseSec` */
  claim(db: Db, owner: string, limit: number, leaseSec: number): Promise<DeliveryJob<C>[]>;
  /**
   * records tries (an invocation log row each + the rows' new state, where the lease is still
   * `owner`'s), in one statement
   */
  finish(db: Db, owner: string, done: FinishedTry<C>[]): Promise<void>;
  renew(db: Db, owner: string, ids: string[], leaseSec: number): Promise<void>;
  release(db: Db, owner: string, ids: string[]): Promise<void>;
  /** ms until the queue expects a row to fall due, when it knows (polled then if sooner than the fetch interval) */
  nextPollInMs?(): number | undefined;
  /** rows waiting (due or not), for the queue-depth metric */
  depth(db: Db): Promise<number>;
}

export interface DeliveryStats {
  claimed: number;
  delivered: number;
  failed: number;
  retried: number;
  errored: number;
  inFlight: number;
  /** recent commit-to-2xx latencies in ms (a ring of the last 2048) */
  latencies: number[];
}

export const newStats = (): DeliveryStats => ({ claimed: 0, delivered: 0, failed: 0, retried: 0, errored: 0, inFlight: 0, latencies: [] });

export interface DeliveryWorkerOptions<C = undefined> {
  db: Db;
  log: Logger;
  queue: DeliveryQueue<C>;
  /** this process's id, written to `locked_by` */
  owner: string;
  /** ms between polls when a poll found nothing to do */
  fetchIntervalMs: number;
  /** deliveries in flight at once (the HTTP pool) */
  concurrency: number;
  leaseSec: number;
  /** `webhook-log` lines enabled */
  logTries: boolean;
  stats?: DeliveryStats;
  /** ms since the epoch for retry times and latencies (default Date.now; tests inject a simulated clock) */
  clock?: () => number;
  /** connections per webhook host, opened gradually (shared by the workers of a process) */
  hosts?: HostGates;
  /** the engine's outbound client: the webhook calls go through it */
  outbound: OutboundClient;
  /** the engine's svc_delivery_lag_seconds (by queue and trigger); unset: not observed */
  lag?: FastHistogram;
}

/**
 * The columns every queue's `finish` statement takes, one array element per try: the row id, the
 * next retry time (null unless retried), the HTTP status (CLIENT_ERROR_STATUS for a client error) and
 * the invocation log's request and response (JSON text).
 */
export function triedColumns<C>(done: FinishedTry<C>[]): {
  ids: string[];
  retryAt: Array<string | null>;
  statuses: number[];
  requests: string[];
  responses: string[];
} {
  return {
    ids: done.map((d) => d.job.id),
    retryAt: done.map((d) => (d.next.kind === 'retry' ? d.next.at.toISOString() : null)),
    statuses: done.map((d) => d.outcome.status ?? CLIENT_ERROR_STATUS),
    requests: done.map((d) => invocationRequest(d.job)),
    responses: done.map((d) => JSON.stringify(invocationResponse(d.outcome))),
  };
}

/**
 * The next step after a try, as upstream decides it (Retry-After honoured once past the retries).
 * The delay is clamped to [0, MAX_DELAY_SEC] (a non-number is the default 10 s): the retry time is
 * always a valid date PostgreSQL can store.
 */
export function nextStep<C>(job: DeliveryJob<C>, outcome: DeliveryOutcome, now = Date.now()): NextStep {
  if (outcome.ok) return { kind: 'delivered' };
  const exhausted = job.tries >= job.maxRetries;
  const after = outcome.retryAfterSec;
  if (exhausted && (after === undefined || job.tries > job.maxRetries)) return { kind: 'error' };
  const delaySec = clampNumber(after ?? job.retryIntervalSec, 0, MAX_DELAY_SEC, 10);
  return { kind: 'retry', at: new Date(now + delaySec * 1000) };
}

/** A try whose write-back failed, as a failed try that says why (and ends the row: `error`). */
export function unrecordable<C>(t: FinishedTry<C>, e: unknown): FinishedTry<C> {
  const why = e instanceof Error ? e.message : String(e);
  return {
    job: { ...t.job, body: 'null' },
    outcome: { ok: false, status: null, error: `the try could not be recorded (${why}); the event is not tried again`, latencyMs: t.outcome.latencyMs },
    next: { kind: 'error' },
  };
}

export class DeliveryWorker<C = undefined> implements Worker {
  readonly name: string;
  readonly stats: DeliveryStats;
  private stopping = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  private readonly inFlight = new Map<string, Promise<void>>();
  private renewTimer?: NodeJS.Timeout;
  private slotFreed?: () => void;
  /** tries done and waiting to be written (one statement for all of them) */
  private toFinish: Array<FinishedTry<C> & { resolve: () => void }> = [];
  private flushing = false;

  constructor(private readonly o: DeliveryWorkerOptions<C>) {
    this.name = `delivery:${o.queue.kind}`;
    this.stats = o.stats ?? newStats();
  }

  async start(): Promise<void> {
    this.stopping = false;
    this.loop = this.run();
    this.renewTimer = setInterval(() => void this.renew(), Math.max(1000, (this.o.leaseSec * 1000) / 3));
    this.renewTimer.unref();
  }

  get queue(): DeliveryQueue<C> {
    return this.o.queue;
  }

  /** rows waiting in this worker's queue */
  readonly queueDepth = (): Promise<number> => this.o.queue.depth(this.o.db);

  /** Polls now (after a row was queued here, e.g. by invoke_event_trigger or redeliver_event). */
  poke(): void {
    this.wake?.();
  }

  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.wake?.();
    this.slotFreed?.();
    await this.loop;
    const pending = [...this.inFlight.values()];
    if (pending.length) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled(pending), new Promise((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
    }
    if (this.renewTimer) clearInterval(this.renewTimer);
    const left = [...this.inFlight.keys()];
    if (left.length) {
      await this.o.queue
        .release(this.o.db, this.o.owner, left)
        .catch((e) => this.o.log.warn({ type: 'delivery', detail: { queue: this.o.queue.kind, error: String(e) } }, 'could not release claimed rows'));
      this.o.log.info({ type: 'delivery', detail: { queue: this.o.queue.kind, released: left.length } }, `released ${left.length} unfinished deliveries`);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((res) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        res();
      }
      this.wake = done;
    }).finally(() => (this.wake = undefined));
  }

  private async run(): Promise<void> {
    let failures = 0;
    // claim in batches: with deliveries in flight, wait until half of the pool is free
    const batchMin = Math.max(1, Math.floor(this.o.concurrency / 2));
    while (!this.stopping) {
      const free = this.o.concurrency - this.inFlight.size;
      if (free <= 0 || (free < batchMin && this.inFlight.size > 0)) {
        await new Promise<void>((r) => (this.slotFreed = r));
        this.slotFreed = undefined;
        continue;
      }
      let jobs: DeliveryJob<C>[];
      try {
        jobs = await this.o.queue.claim(this.o.db, this.o.owner, free, this.o.leaseSec);
        failures = 0;
      } catch (e) {
        failures++;
        this.o.log.warn(
          { type: 'delivery', detail: { queue: this.o.queue.kind, error: e instanceof Error ? e.message : String(e) } },
          'claiming deliveries failed',
        );
        await this.sleep(Math.min(30_000, this.o.fetchIntervalMs * 2 ** Math.min(failures, 5)));
        continue;
      }
      if (this.stopping) {
        // claimed while stopping: give them back at once
        if (jobs.length)
          await this.o.queue
            .release(
              this.o.db,
              this.o.owner,
              jobs.map((j) => j.id),
            )
            .catch(() => undefined);
        break;
      }
      this.stats.claimed += jobs.length;
      for (const job of jobs) {
        const p = this.attempt(job).finally(() => {
          this.inFlight.delete(job.id);
          this.stats.inFlight = this.inFlight.size;
          this.slotFreed?.();
        });
        this.inFlight.set(job.id, p);
      }
      this.stats.inFlight = this.inFlight.size;
      // a full batch: more may be waiting, poll again at once
      if (jobs.length < free) await this.sleep(Math.min(this.o.fetchIntervalMs, this.o.queue.nextPollInMs?.() ?? Infinity));
    }
  }

  /** One try, as a span (tracing on): `svc.delivery`, child of (and linked to) the request that created the row. */
  private tryOnce(job: DeliveryJob<C>): Promise<DeliveryOutcome> {
    const t = tracing;
    if (!t) return deliver(this.o.outbound, job, this.o.hosts, OUTBOUND_TARGET[this.o.queue.kind] ?? this.o.queue.kind);
    const span = t.start(
      'svc.delivery',
      {
        'svc.delivery.queue': this.o.queue.kind,
        'svc.delivery.id': job.id,
        'svc.delivery.try': job.tries + 1,
        ...(job.trigger ? { 'svc.trigger.name': job.trigger } : {}),
        'url.full': job.logUrl,
      },
      { kind: 'consumer', traceparent: job.traceparent ?? null },
    );
    return deliver(this.o.outbound, job, this.o.hosts, OUTBOUND_TARGET[this.o.queue.kind] ?? this.o.queue.kind, span).then((o) => {
      if (o.status !== null) span.setAttribute('http.response.status_code', o.status);
      if (!o.ok) t.fail(span, o.status === null ? 'client_error' : `http_${o.status}`, o.error ?? `webhook answered ${o.status}`);
      span.end();
      return o;
    });
  }

  private async attempt(job: DeliveryJob<C>): Promise<void> {
    const outcome: DeliveryOutcome = job.failure !== undefined ? { ok: false, status: null, error: job.failure, latencyMs: 0 } : await this.tryOnce(job);
    const now = this.o.clock?.() ?? Date.now();
    const next = nextStep(job, outcome, now);
    if (next.kind === 'delivered') {
      this.stats.delivered++;
      if (job.createdAt) {
        const l = this.stats.latencies;
        if (l.length >= 2048) l.shift();
        l.push(now - job.createdAt.getTime());
        this.o.lag?.observe(Math.max(0, now - job.createdAt.getTime()) / 1000, this.o.queue.kind, job.trigger ?? '');
      }
    } else {
      this.stats.failed++;
      if (next.kind === 'retry') this.stats.retried++;
      else this.stats.errored++;
    }
    if (this.o.logTries) {
      const detail = {
        queue: this.o.queue.kind,
        event_id: job.id,
        url: job.logUrl,
        status: outcome.status,
        latency_ms: outcome.latencyMs,
        try: job.tries + 1,
        next: next.kind,
        ...(outcome.error ? { error: outcome.error } : {}),
      };
      if (outcome.ok) this.o.log.info({ type: 'webhook-log', detail }, 'webhook delivered');
      else this.o.log.info({ type: 'webhook-log', detail }, 'webhook try failed');
    }
    await new Promise<void>((resolve) => {
      this.toFinish.push({ job, outcome, next, resolve });
      void this.flush();
    });
  }

  /** Writes the finished tries, one statement per batch; tries that finish meanwhile form the next batch. */
  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.toFinish.length) {
        const batch = this.toFinish.splice(0, 500);
        try {
          await this.o.queue.finish(this.o.db, this.o.owner, batch);
        } catch (e) {
          this.o.log.warn(
            { type: 'delivery', detail: { queue: this.o.queue.kind, events: batch.length, error: e instanceof Error ? e.message : String(e) } },
            'could not record deliveries in one statement; recording them one by one',
          );
          await this.finishOneByOne(batch);
        }
        for (const b of batch) b.resolve();
      }
    } finally {
      this.flushing = false;
    }
  }

  /** The tries of a batch that failed, each alone: one bad row fails only itself. */
  private async finishOneByOne(batch: FinishedTry<C>[]): Promise<void> {
    for (const t of batch) {
      try {
        await this.o.queue.finish(this.o.db, this.o.owner, [t]);
      } catch (e) {
        try {
          await this.o.queue.finish(this.o.db, this.o.owner, [unrecordable(t, e)]);
          this.o.log.error(
            { type: 'delivery', detail: { queue: this.o.queue.kind, event_id: t.job.id, error: e instanceof Error ? e.message : String(e) } },
            'could not record a try; the event is marked error',
          );
        } catch (e2) {
          // the database is unreachable: the row stays leased and is tried again when the lease runs out
          this.o.log.error(
            { type: 'delivery', detail: { queue: this.o.queue.kind, event_id: t.job.id, error: e2 instanceof Error ? e2.message : String(e2) } },
            'could not record a try',
          );
        }
      }
    }
  }

  private async renew(): Promise<void> {
    const ids = [...this.inFlight.keys()];
    if (!ids.length || this.stopping) return;
    await this.o.queue
      .renew(this.o.db, this.o.owner, ids, this.o.leaseSec)
      .catch((e) => this.o.log.warn({ type: 'delivery', detail: { queue: this.o.queue.kind, error: String(e) } }, 'could not renew leases'));
  }
}

/** p-th percentile (0-100) of a sample, 0 when empty. */
export function percentile(sample: number[], p: number): number {
  if (!sample.length) return 0;
  const s = [...sample].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
