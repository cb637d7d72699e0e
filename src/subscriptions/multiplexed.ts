/**
 * Multiplexed live queries (../shared/reference/live-queries-architecture.md): subscribers of the
 * same (role, query text, operation name, variable shape) form a cohort sharing one compiled plan
 * (execute/subscription.ts). Every refetch interval each cohort runs its subscribers in batches of
 * up to `--live-queries-multiplexed-batch-size` rows, ONE statement per batch; subscribers whose
 * parameter values are equal share a row. A subscriber is pushed a result only when the hash of
 * its response text differs from the last one it got.
 *
 * Subscribers join and leave without stopping their cohort; an empty cohort is dropped. When the
 * schema cache changes (metadata), the subscribers of older cohorts are planned again against the
 * new one (their role may have lost the permission: they then get the error, once). A cohort
 * whose previous run has not finished skips a tick (never two runs of one cohort at once); at most
 * half of the pool's connections (`--connections`) run batches at once, so requests keep the rest;
 * on the embedded database (one connection) the batches simply queue.
 */
import { tracing } from '../core/tracing.js';
import { liveQueryCohortSubscribers, liveQueryPollDuration } from '../core/histogram.js';
import { createHash } from 'node:crypto';
import type { Db } from '../db/db.js';
import type { Logger } from '../core/logger.js';
import type { SchemaCache } from '../schema/model.js';
import type { LiveQueryPlan } from '../execute/subscription.js';
import { batchParams } from '../execute/multiplex.js';
import { Semaphore } from '../core/semaphore.js';

export interface LiveSubscriber {
  /** a new response text for this subscriber */
  push(text: string): void;
  /** the subscription planned again (a newer schema cache): its live plan, or an error response text */
  replan(): LiveQueryPlan | string;
  /** the response text of an error met running its batch */
  errorText(e: unknown): string;
}

export interface LiveQueryHandle {
  stop(): void;
}

interface Row {
  id: number;
  values: string;
  subs: Set<Sub>;
}

interface Sub {
  s: LiveSubscriber;
  hash: string;
  cohort?: Cohort;
  row?: Row;
  stopped: boolean;
}

interface Cohort {
  key: string;
  plan: LiveQueryPlan;
  rows: Map<string, Row>;
  byId: Map<number, Row>;
  subscribers: number;
  running: boolean;
}

/** Counters for /v1/metrics (all managers of the process). */
export const liveQueryStats = {
  cohorts: 0,
  subscribers: 0,
  /** batch statements run */
  batches: 0,
  batchErrors: 0,
  /** total run time of the batch statements, ms */
  batchMs: 0,
  /** recent batch run times, ms (for percentiles) */
  recentBatchMs: [] as number[],
  /** results pushed to subscribers */
  messages: 0,
  /** results replaced by a newer one before a slow client could take them */
  dropped: 0,
  /** ticks where a cohort was still running from the previous one */
  overruns: 0,
  /** refetch intervals elapsed with at least one cohort */
  ticks: 0,
  /** cohort runs (each runs all of its batches once) */
  runs: 0,
  /** cohort runs in progress */
  running: 0,
};

const RECENT = 1024;

export function hashText(text: string): string {
  return createHash('sha1').update(text).digest('base64');
}

export interface LiveQueryManagerOptions {
  /** the database (read at each batch) */
  db: () => Db;
  log: Logger;
  intervalMs: number;
  batchSize: number;
  /** the current schema cache */
  currentCache: () => SchemaCache;
  /** batch statements running at once (all cohorts): leaves the rest of the pool to requests */
  concurrency: number;
}

export class LiveQueryManager {
  private readonly cohorts = new Map<string, Cohort>();
  /** subscribers whose re-planning failed: retried when the schema cache changes again */
  private readonly parked = new Set<Sub>();
  private timer: NodeJS.Timeout | undefined;
  private nextRowId = 0;
  private lastCache: SchemaCache | undefined;
  private stopped = false;
  private readonly running = new Set<Promise<void>>();
  private readonly slots: Semaphore;

  constructor(private readonly opts: LiveQueryManagerOptions) {
    this.slots = new Semaphore(Math.max(1, opts.concurrency));
  }

  get cohortCount(): number {
    return this.cohorts.size;
  }

  /**
   * Adds a subscriber to the cohort of its plan. `first` is the response it was already sent (the
   * first result, answered at once by the caller): only a different result is pushed.
   */
  add(plan: LiveQueryPlan, s: LiveSubscriber, first: string): LiveQueryHandle {
    const sub: Sub = { s, hash: hashText(first), stopped: false };
    this.join(sub, plan);
    liveQueryStats.subscribers++;
    this.ensureTimer();
    return {
      stop: () => {
        if (sub.stopped) return;
        sub.stopped = true;
        liveQueryStats.subscribers--;
        this.leave(sub);
        this.parked.delete(sub);
      },
    };
  }

  private join(sub: Sub, plan: LiveQueryPlan): void {
    let c = this.cohorts.get(plan.key);
    if (!c) {
      c = { key: plan.key, plan, rows: new Map(), byId: new Map(), subscribers: 0, running: false };
      this.cohorts.set(plan.key, c);
      liveQueryStats.cohorts++;
    }
    let row = c.rows.get(plan.values);
    if (!row) {
      row = { id: ++this.nextRowId, values: plan.values, subs: new Set() };
      if (this.nextRowId >= 2 ** 31 - 1) this.nextRowId = 0; // ids are int4; old rows are long gone
      c.rows.set(plan.values, row);
      c.byId.set(row.id, row);
    }
    row.subs.add(sub);
    c.subscribers++;
    sub.cohort = c;
    sub.row = row;
  }

  private leave(sub: Sub): void {
    const c = sub.cohort;
    const row = sub.row;
    sub.cohort = undefined;
    sub.row = undefined;
    if (!c || !row) return;
    if (row.subs.delete(sub)) c.subscribers--;
    if (row.subs.size === 0) {
      c.rows.delete(row.values);
      c.byId.delete(row.id);
    }
    if (c.subscribers === 0 && this.cohorts.get(c.key) === c) {
      this.cohorts.delete(c.key);
      liveQueryStats.cohorts--;
    }
  }

  private ensureTimer(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => this.tick(), this.opts.intervalMs);
    this.timer.unref();
  }

  /** One refetch interval: re-plan after a schema change, then start every idle cohort. */
  private tick(): void {
    if (this.cohorts.size === 0 && this.parked.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    liveQueryStats.ticks++;
    const cache = this.opts.currentCache();
    if (cache !== this.lastCache) {
      this.lastCache = cache;
      this.replanAll(cache);
    }
    for (const c of this.cohorts.values()) {
      if (c.running) {
        liveQueryStats.overruns++;
        continue;
      }
      const p = this.runCohort(c);
      this.running.add(p);
      void p.finally(() => this.running.delete(p));
    }
  }

  private replanAll(cache: SchemaCache): void {
    const moving: Sub[] = [...this.parked];
    this.parked.clear();
    for (const c of [...this.cohorts.values()]) {
      if (c.plan.cache === cache) continue;
      for (const row of c.rows.values()) {
        for (const sub of row.subs) moving.push(sub);
        row.subs.clear(); // a batch of it still running delivers to nobody
      }
      this.cohorts.delete(c.key);
      liveQueryStats.cohorts--;
    }
    for (const sub of moving) {
      sub.cohort = undefined;
      sub.row = undefined;
      let next: LiveQueryPlan | string;
      try {
        next = sub.s.replan();
      } catch (e) {
        next = sub.s.errorText(e);
      }
      if (typeof next === 'string') {
        this.deliver(sub, next, hashText(next));
        this.parked.add(sub);
      } else this.join(sub, next);
    }
  }

  private async runCohort(c: Cohort): Promise<void> {
    c.running = true;
    liveQueryStats.runs++;
    liveQueryStats.running++;
    try {
      const rows = [...c.rows.values()];
      liveQueryCohortSubscribers.observe(rows.reduce((n, r) => n + r.subs.size, 0));
      const size = Math.max(1, this.opts.batchSize);
      const batches: Row[][] = [];
      for (let i = 0; i < rows.length; i += size) batches.push(rows.slice(i, i + size));
      await Promise.all(batches.map((b) => this.runBatch(c, b)));
    } finally {
      c.running = false;
      liveQueryStats.running--;
    }
  }

  private async runBatch(c: Cohort, rows: Row[]): Promise<void> {
    let release: () => void;
    try {
      release = await this.slots.acquire(10 * this.opts.intervalMs + 10_000);
    } catch {
      liveQueryStats.overruns++; // the database is that far behind: this batch waits for the next run
      return;
    }
    try {
      await this.runBatchNow(c, rows);
    } finally {
      release();
    }
  }

  private async runBatchNow(c: Cohort, rows: Row[]): Promise<void> {
    const t0 = performance.now();
    let result: Array<Record<string, string | null>>;
    // tracing on: one span per batch (not per subscriber), a root of its own, its statement under it
    const t = tracing;
    const span = t?.start('svc.live_query.poll', { 'svc.live_query.batch_rows': rows.length, 'svc.live_query.subscribers': rows.reduce((n, r) => n + r.subs.size, 0) }, { root: true });
    try {
      liveQueryStats.batches++;
      const poll = () => this.opts.db().prepared(c.plan.name, c.plan.text, batchParams(rows));
      result = (await (span ? t!.run(span, poll) : poll())).rows as Array<Record<string, string | null>>;
    } catch (e) {
      if (span) t!.fail(span, 'poll_failed', e instanceof Error ? e.message : String(e));
      liveQueryStats.batchErrors++;
      if (rows.length > 1) {
        // one subscriber's values can fail the whole statement (a cast): answer each row alone
        // so the others still get their results
        for (const r of rows) await this.runBatchNow(c, [r]);
        return;
      }
      this.opts.log.debug({ type: 'live-query', detail: { error: e instanceof Error ? e.message : String(e) } });
      for (const sub of rows[0]!.subs) {
        const text = sub.s.errorText(e);
        this.deliver(sub, text, hashText(text));
      }
      return;
    } finally {
      span?.end();
      const ms = performance.now() - t0;
      liveQueryPollDuration.observe(ms / 1000);
      liveQueryStats.batchMs += ms;
      const recent = liveQueryStats.recentBatchMs;
      if (recent.length >= RECENT) recent.shift();
      recent.push(ms);
    }
    for (const r of result) {
      const row = c.byId.get(Number(r.result_id));
      if (!row || row.subs.size === 0) continue; // everyone left while it ran
      const text = c.plan.render(r);
      const hash = hashText(text);
      for (const sub of row.subs) this.deliver(sub, text, hash);
    }
  }

  private deliver(sub: Sub, text: string, hash: string): void {
    if (sub.stopped || sub.hash === hash) return;
    sub.hash = hash;
    liveQueryStats.messages++;
    sub.s.push(text);
  }

  /** Stops polling (shutdown); running batches are awaited. */
  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.running]);
  }
}
