/**
 * Streaming subscriptions (`<table>_stream`), multiplexed like live queries: subscribers of the same
 * statement (subscriptions/streamPlan.ts: same role permissions, selection, `where` shape, cursor column and
 * batch size) form a cohort; every `--streaming-queries-multiplexed-refetch-interval` ms each
 * cohort runs ONE statement per batch of up to `--streaming-queries-multiplexed-batch-size`
 * subscriber rows, each row carrying its own cursor and parameter values. A row's next rows are
 * pushed to its subscribers and its cursor advances to the last of them; a row with nothing new
 * gets nothing. Subscribers whose values (cursor included) are equal share a row, so subscribers
 * that have caught up with each other are answered once.
 *
 * - Woken by writes: with a table-change signal (changes/tracker.ts: a NOTIFY per written table and
 *   transaction), a cohort also runs as soon as its table may have changed; the interval stays as
 *   the fallback (unwatched tables, rows held back behind a transaction that wrote elsewhere).
 * - Catching up: a cohort in which some row got a full batch runs again at once (not one batch per
 *   interval), so a subscriber far behind is streamed at the database's pace.
 * - Slow clients: a row is left out of a run while any of its subscribers' sockets holds more than
 *   the high-water mark; nothing is dropped (unlike live queries, every batch matters), the cursor
 *   simply waits.
 * - An error running a row's statement (a bad cursor value: a failed cast) ends its subscribers
 *   with that error; a batch that fails is re-run row by row so the others are unaffected.
 * - After a metadata change the subscribers are planned again against the new schema, keeping their
 *   cursors; one that lost its permission gets the error and ends.
 */
import type { Db } from '../db/db.js';
import type { Logger } from '../core/logger.js';
import type { SchemaCache } from '../schema/model.js';
import type { StreamPlan } from './streamPlan.js';
import { batchParams } from '../execute/multiplex.js';
import { Semaphore } from '../core/semaphore.js';
import { joinRow, leaveRow, replanned, RowIds, type CohortRows } from './cohort.js';
import { performance } from 'node:perf_hooks';

export interface StreamSubscriber {
  /** a batch of rows (a response text) */
  push(text: string): void;
  /** the subscription ends with this error response text */
  fail(text: string): void;
  /** false while the client's socket is too full to take another batch */
  ready(): boolean;
  /** the subscription planned again (a newer schema cache): its plan, or an error response text */
  replan(): StreamPlan | string;
  /** the response text of an error met running its statement */
  errorText(e: unknown): string;
}

export interface StreamHandle {
  stop(): void;
}

interface Row {
  id: number;
  values: Array<string | null>;
  key: string;
  subs: Set<Sub>;
}

interface Sub {
  s: StreamSubscriber;
  cohort?: Cohort;
  row?: Row;
  stopped: boolean;
}

interface Cohort extends CohortRows<Row> {
  key: string;
  plan: StreamPlan;
  running: boolean;
  /** run again as soon as the current run ends */
  again: boolean;
}

/** Counters for /v1/metrics and the benchmark: one set per engine (src/engine.ts). */
export function newStreamStats() {
  return {
    cohorts: 0,
    subscribers: 0,
    /** cohort runs (each runs all of its batches once) */
    runs: 0,
    /** statements run */
    batches: 0,
    batchErrors: 0,
    batchMs: 0,
    /** batches pushed to subscribers, and the rows in them */
    messages: 0,
    rows: 0,
    /** subscriber rows left out of a run because a client was slow */
    deferred: 0,
    /** cohort runs started by a table-change notification */
    woken: 0,
  };
}
export type StreamStats = ReturnType<typeof newStreamStats>;

export interface StreamManagerOptions {
  /** the engine's counters (/v1/metrics) */
  stats: StreamStats;
  db: () => Db;
  log: Logger;
  intervalMs: number;
  batchSize: number;
  currentCache: () => SchemaCache;
  /** statements running at once (all cohorts) */
  concurrency: number;
  /** the table-change signal (changes/tracker.ts), when there is one */
  changes?: { subscribe(fn: (tables: ReadonlySet<string> | 'all') => void): () => void };
}

export class StreamManager {
  private readonly cohorts = new Map<string, Cohort>();
  private timer: NodeJS.Timeout | undefined;
  private readonly rowIds = new RowIds();
  private lastCache: SchemaCache | undefined;
  private stopped = false;
  private readonly running = new Set<Promise<void>>();
  private readonly slots: Semaphore;
  private readonly unsubscribe?: () => void;

  private readonly stats: StreamStats;

  constructor(private readonly opts: StreamManagerOptions) {
    this.stats = opts.stats;
    this.slots = new Semaphore(Math.max(1, opts.concurrency));
    this.unsubscribe = opts.changes?.subscribe((tables) => this.changed(tables));
  }

  /** Tables that may have changed: their cohorts run now (coalesced with a run in progress). */
  private changed(tables: ReadonlySet<string> | 'all'): void {
    for (const c of this.cohorts.values()) {
      if (tables === 'all' || tables.has(c.plan.table)) {
        this.stats.woken++;
        this.start(c);
      }
    }
  }

  get cohortCount(): number {
    return this.cohorts.size;
  }

  /** Adds a subscriber to its cohort; its first batch is looked for at once. */
  add(plan: StreamPlan, s: StreamSubscriber): StreamHandle {
    const sub: Sub = { s, stopped: false };
    this.lastCache ??= plan.cache;
    const c = this.join(sub, plan, plan.values);
    this.stats.subscribers++;
    this.ensureTimer();
    this.start(c);
    return { stop: () => this.remove(sub) };
  }

  private remove(sub: Sub): void {
    if (sub.stopped) return;
    sub.stopped = true;
    this.stats.subscribers--;
    this.leave(sub);
  }

  private join(sub: Sub, plan: StreamPlan, values: Array<string | null>): Cohort {
    let c = this.cohorts.get(plan.key);
    if (!c) {
      c = { key: plan.key, plan, rows: new Map(), byId: new Map(), subscribers: 0, running: false, again: false };
      this.cohorts.set(plan.key, c);
      this.stats.cohorts++;
    }
    const key = JSON.stringify(values);
    const row = joinRow(c, key, sub, this.rowIds, (id) => ({ id, values: [...values], key, subs: new Set<Sub>() }));
    sub.cohort = c;
    sub.row = row;
    return c;
  }

  private leave(sub: Sub): void {
    const c = sub.cohort;
    const row = sub.row;
    sub.cohort = undefined;
    sub.row = undefined;
    if (!c || !row) return;
    leaveRow(c, row, row.key, sub);
    if (c.subscribers === 0 && this.cohorts.get(c.key) === c) {
      this.cohorts.delete(c.key);
      this.stats.cohorts--;
    }
  }

  private ensureTimer(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => this.tick(), this.opts.intervalMs);
    this.timer.unref();
  }

  private tick(): void {
    if (this.cohorts.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    const cache = this.opts.currentCache();
    if (cache !== this.lastCache) {
      this.lastCache = cache;
      this.replanAll(cache);
    }
    for (const c of this.cohorts.values()) this.start(c);
  }

  /** Runs the cohort now, or right after its current run. */
  private start(c: Cohort): void {
    if (this.stopped) return;
    if (c.running) {
      c.again = true;
      return;
    }
    const p = this.runCohort(c);
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  }

  private replanAll(cache: SchemaCache): void {
    const moving: Array<[Sub, string | null]> = [];
    for (const c of [...this.cohorts.values()]) {
      if (c.plan.cache === cache) continue;
      for (const row of c.rows.values()) {
        for (const sub of row.subs) moving.push([sub, row.values[c.plan.cursorIndex] ?? null]);
        row.subs.clear();
      }
      c.rows.clear();
      c.byId.clear();
      this.cohorts.delete(c.key);
      this.stats.cohorts--;
    }
    for (const [sub, cursor] of moving) {
      sub.cohort = undefined;
      sub.row = undefined;
      const next = replanned(sub.s);
      if (typeof next === 'string') {
        this.fail(sub, next);
        continue;
      }
      const values = [...next.values];
      values[next.cursorIndex] = cursor; // the subscriber goes on from where it was
      this.join(sub, next, values);
    }
  }

  private fail(sub: Sub, text: string): void {
    if (sub.stopped) return;
    this.remove(sub);
    sub.s.fail(text);
  }

  private async runCohort(c: Cohort): Promise<void> {
    c.running = true;
    c.again = false;
    this.stats.runs++;
    try {
      const rows: Row[] = [];
      for (const r of c.rows.values()) {
        let ready = true;
        for (const sub of r.subs) if (!sub.s.ready()) ready = false;
        if (ready) rows.push(r);
        else this.stats.deferred++;
      }
      const size = Math.max(1, this.opts.batchSize);
      const batches: Row[][] = [];
      for (let i = 0; i < rows.length; i += size) batches.push(rows.slice(i, i + size));
      const full = await Promise.all(batches.map((b) => this.runBatch(c, b)));
      if (full.some(Boolean)) c.again = true;
    } finally {
      c.running = false;
    }
    if (c.again && this.cohorts.get(c.key) === c) setImmediate(() => this.start(c));
  }

  /** Runs one batch; true when some row got a full batch (it may have more waiting). */
  private async runBatch(c: Cohort, rows: Row[]): Promise<boolean> {
    let release: () => void;
    try {
      release = await this.slots.acquire(10 * this.opts.intervalMs + 10_000);
    } catch {
      return false; // the database is that far behind: the next tick tries again
    }
    try {
      return await this.runBatchNow(c, rows);
    } finally {
      release();
    }
  }

  private async runBatchNow(c: Cohort, rows: Row[]): Promise<boolean> {
    if (this.stopped) return false;
    const t0 = performance.now();
    let result: Array<Record<string, string | null>>;
    try {
      this.stats.batches++;
      const params = batchParams(rows.map((r) => ({ id: r.id, values: JSON.stringify(r.values) })));
      result = (await this.opts.db().prepared(c.plan.name, c.plan.text, params)).rows as Array<Record<string, string | null>>;
    } catch (e) {
      this.stats.batchErrors++;
      if (rows.length > 1) {
        let full = false;
        for (const r of rows) if (await this.runBatchNow(c, [r])) full = true;
        return full;
      }
      this.opts.log.debug({ type: 'streaming-subscription', detail: { error: e instanceof Error ? e.message : String(e) } });
      for (const sub of [...rows[0]!.subs]) this.fail(sub, sub.s.errorText(e));
      return false;
    } finally {
      this.stats.batchMs += performance.now() - t0;
    }
    let full = false;
    for (const r of result) {
      const row = c.byId.get(Number(r.result_id));
      if (!row || row.subs.size === 0) continue; // everyone left while it ran
      const n = Number(r.n);
      const text = c.plan.render(r.root ?? '[]');
      for (const sub of row.subs) {
        if (sub.stopped) continue;
        this.stats.messages++;
        this.stats.rows += n;
        sub.s.push(text);
      }
      if (n >= c.plan.batchSize) full = true;
      this.advance(c, row, r.cursor ?? null);
    }
    return full;
  }

  /** Moves a row's cursor; rows that now have equal values merge (their subscribers are in step). */
  private advance(c: Cohort, row: Row, cursor: string | null): void {
    if (cursor === null) return;
    row.values[c.plan.cursorIndex] = cursor;
    const key = JSON.stringify(row.values);
    if (c.rows.get(row.key) === row) c.rows.delete(row.key);
    row.key = key;
    const other = c.rows.get(key);
    if (other && other !== row) {
      for (const sub of row.subs) {
        other.subs.add(sub);
        sub.row = other;
      }
      row.subs.clear();
      c.byId.delete(row.id);
      return;
    }
    c.rows.set(key, row);
  }

  /** Stops polling (shutdown); running statements are awaited. */
  async close(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.running]);
  }
}
