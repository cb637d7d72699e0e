/**
 * Multiplexed live queries (../shared/reference/live-queries-architecture.md): subscribers of the
 * same (role, query text, operation name, variable shape) form a cohort sharing one compiled plan
 * (subscriptions/liveQueryPlan.ts). A cohort runs its subscribers in batches of up to
 * `--live-queries-multiplexed-batch-size` rows, ONE statement per batch; subscribers whose
 * parameter values are equal share a row. A subscriber is pushed a result only when the hash of
 * its response text differs from the last one it got.
 *
 * When it runs (change-driven refetch, changes/tracker.ts): a cohort whose statement reads only
 * tables that give a change signal (changes/reads.ts: the tables named in its SQL, through views
 * and function bodies) runs only when one of them may have changed since its last run started —
 * at once, or when `--live-queries-change-refetch-gap` (default 50 ms) has passed since that start
 * (a ceiling on frequency, not a clock: writes at any rate cost at most one run per gap and
 * cohort). A change that arrives while it runs makes it run again. Subscribers that joined since the last run have their rows run on their own (their
 * first result may predate a change the cohort has already seen), once. Every other cohort (a read
 * set that cannot be known, an unwatched table, mode `poll`, the LISTEN connection down) is polled
 * every interval as before. With read replicas a change-driven run first waits until the healthy
 * replicas have replayed the primary's WAL position (`fence`), else runs on the primary.
 *
 * Subscribers join and leave without stopping their cohort; an empty cohort is dropped. When the
 * schema cache changes (metadata), the subscribers of older cohorts are planned again against the
 * new one (their role may have lost the permission: they then get the error, once). A cohort
 * whose previous run has not finished skips a tick (never two runs of one cohort at once); at most
 * half of the pool's connections (`--connections`) run batches at once, so requests keep the rest;
 * on the embedded database (one connection) the batches simply queue.
 */
import { tracing } from '../core/tracing.js';
import type { Histograms } from '../core/histogram.js';
import { createHash } from 'node:crypto';
import type { Db } from '../db/db.js';
import type { Logger } from '../core/logger.js';
import type { SchemaCache } from '../schema/model.js';
import type { LiveQueryPlan } from './liveQueryPlan.js';
import { batchParams } from '../execute/multiplex.js';
import { Semaphore } from '../core/semaphore.js';
import type { ChangedTables } from '../changes/tracker.js';
import { joinRow, leaveRow, replanned, RowIds, type CohortRows } from './cohort.js';
import { performance } from 'node:perf_hooks';

/** What the manager needs of the change tracker (changes/tracker.ts). */
export interface ChangeSource {
  listening(): boolean;
  watched(table: string): boolean;
  version(table: string): number;
  tablesRead(sql: string): string[] | null;
  readonly catalogVersion: number;
  subscribe(fn: (tables: ChangedTables) => void): () => void;
}

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

interface Cohort extends CohortRows<Row> {
  key: string;
  plan: LiveQueryPlan;
  running: boolean;
  /** the tables its statement reads (null: unknown), as of the tracker's catalogVersion `readsAt` */
  reads: string[] | null;
  readsAt: number;
  /** versions of `reads` when the last full run started (undefined: never ran) */
  seen: number[] | undefined;
  /** performance.now() at the start of the last run */
  lastStart: number;
  /** a change-driven run is scheduled */
  due: NodeJS.Timeout | undefined;
  /** a change arrived while it ran */
  again: boolean;
  /** rows whose subscribers joined since the last run */
  fresh: Set<Row>;
  kickSoon: boolean;
}

/** Counters for /v1/metrics: one set per engine (src/engine.ts), kept by its manager and its websocket server. */
export function newLiveQueryStats() {
  return {
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
    /** cohort runs caused by a table change (the rest are polls and runs of new subscribers' rows) */
    changeRuns: 0,
    /** cohorts run on table changes, and polled, at the last interval */
    drivenCohorts: 0,
    polledCohorts: 0,
    /** change-driven runs that waited for the replicas, and those that went to the primary instead */
    fenced: 0,
    fencedToPrimary: 0,
  };
}
export type LiveQueryStats = ReturnType<typeof newLiveQueryStats>;

const RECENT = 1024;

export function hashText(text: string): string {
  return createHash('sha1').update(text).digest('base64');
}

export interface LiveQueryManagerOptions {
  /** the engine's counters (/v1/metrics) */
  stats: LiveQueryStats;
  /** the engine's histograms (/v1/metrics) */
  histograms: Pick<Histograms, 'liveQueryPollDuration' | 'liveQueryCohortSubscribers'>;
  /** the database (read at each batch) */
  db: () => Db;
  log: Logger;
  /** polled cohorts run every interval */
  intervalMs: number;
  /**
   * change-driven cohorts: the least time between the starts of two runs of one cohort (default:
   * the interval). A change runs the cohort at once when this much has passed since its last start.
   */
  changeGapMs?: number;
  batchSize: number;
  /** the current schema cache */
  currentCache: () => SchemaCache;
  /** batch statements running at once (all cohorts): leaves the rest of the pool to requests */
  concurrency: number;
  /** table changes: without it (or while it has no signal) every cohort is polled */
  changes?: ChangeSource;
  /**
   * read replicas: resolves true once every healthy replica has replayed the primary's current
   * WAL position (bounded), false when one has not (the run then goes to `primary`)
   */
  fence?: () => Promise<boolean>;
  primary?: () => Db;
}

export class LiveQueryManager {
  private readonly cohorts = new Map<string, Cohort>();
  /** subscribers whose re-planning failed: retried when the schema cache changes again */
  private readonly parked = new Set<Sub>();
  private timer: NodeJS.Timeout | undefined;
  private readonly rowIds = new RowIds();
  private lastCache: SchemaCache | undefined;
  private stopped = false;
  private readonly running = new Set<Promise<void>>();
  private readonly slots: Semaphore;

  private unsubscribe: (() => void) | undefined;
  private fencing: Promise<boolean> | undefined;

  private readonly stats: LiveQueryStats;

  constructor(private readonly opts: LiveQueryManagerOptions) {
    this.stats = opts.stats;
    this.slots = new Semaphore(Math.max(1, opts.concurrency));
    this.unsubscribe = opts.changes?.subscribe((tables) => this.onChanges(tables));
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
    this.stats.subscribers++;
    this.ensureTimer();
    return {
      stop: () => {
        if (sub.stopped) return;
        sub.stopped = true;
        this.stats.subscribers--;
        this.leave(sub);
        this.parked.delete(sub);
      },
    };
  }

  private join(sub: Sub, plan: LiveQueryPlan): void {
    let c = this.cohorts.get(plan.key);
    if (!c) {
      c = {
        key: plan.key,
        plan,
        rows: new Map(),
        byId: new Map(),
        subscribers: 0,
        running: false,
        reads: null,
        readsAt: -1,
        seen: undefined,
        lastStart: -Infinity,
        due: undefined,
        again: false,
        fresh: new Set(),
        kickSoon: false,
      };
      this.cohorts.set(plan.key, c);
      this.stats.cohorts++;
    }
    const row = joinRow(c, plan.values, sub, this.rowIds, (id) => ({ id, values: plan.values, subs: new Set<Sub>() }));
    sub.cohort = c;
    sub.row = row;
    c.fresh.add(row);
    if (!c.kickSoon) {
      // subscribers arriving together (one message, a re-plan) share the run
      c.kickSoon = true;
      setImmediate(() => {
        c.kickSoon = false;
        if (this.cohorts.get(c.key) === c && this.driven(c)) this.kick(c);
      });
    }
  }

  private leave(sub: Sub): void {
    const c = sub.cohort;
    const row = sub.row;
    sub.cohort = undefined;
    sub.row = undefined;
    if (!c || !row) return;
    if (leaveRow(c, row, row.values, sub)) c.fresh.delete(row);
    if (c.subscribers === 0 && this.cohorts.get(c.key) === c) {
      this.cohorts.delete(c.key);
      this.stats.cohorts--;
      if (c.due) clearTimeout(c.due);
      c.due = undefined;
    }
  }

  private ensureTimer(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => this.tick(), this.opts.intervalMs);
    this.timer.unref();
  }

  /**
   * One refetch interval: re-plan after a schema change, then start every idle polled cohort; a
   * change-driven cohort is started only if a table it reads changed (normally already done by the
   * change itself: this is the safety net) — no statement for an unchanged one.
   */
  private tick(): void {
    if (this.cohorts.size === 0 && this.parked.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    this.stats.ticks++;
    const cache = this.opts.currentCache();
    if (cache !== this.lastCache) {
      this.lastCache = cache;
      this.replanAll(cache);
    }
    let driven = 0;
    for (const c of this.cohorts.values()) {
      if (this.driven(c)) {
        driven++;
        if (!c.running && (c.fresh.size || this.changedSince(c))) this.kick(c);
        continue;
      }
      if (c.running) {
        this.stats.overruns++;
        continue;
      }
      this.start(c, true);
    }
    this.stats.drivenCohorts = driven;
    this.stats.polledCohorts = this.cohorts.size - driven;
  }

  /** Whether `c` runs on table changes (else it is polled): every table it reads gives a signal. */
  private driven(c: Cohort): boolean {
    const ch = this.opts.changes;
    if (!ch || !ch.listening()) return false;
    if (c.readsAt !== ch.catalogVersion) {
      c.readsAt = ch.catalogVersion;
      c.reads = ch.tablesRead(c.plan.text);
      c.seen = undefined; // another read set: its versions were never seen
    }
    return c.reads !== null && c.reads.every((t) => ch.watched(t));
  }

  /** A table `c` reads may have changed since its last full run started. */
  private changedSince(c: Cohort): boolean {
    const ch = this.opts.changes!;
    if (!c.seen || !c.reads) return true;
    for (let i = 0; i < c.reads.length; i++) if (ch.version(c.reads[i]!) !== c.seen[i]) return true;
    return false;
  }

  private onChanges(tables: ChangedTables): void {
    // a schema-cache change ends with 'all' (the tracker re-read the catalog): re-plan now, not at the next tick
    const cache = this.opts.currentCache();
    if (tables === 'all' && cache !== this.lastCache && (this.cohorts.size || this.parked.size)) {
      this.lastCache = cache;
      this.replanAll(cache);
    }
    for (const c of this.cohorts.values()) {
      if (!this.driven(c)) continue;
      if (tables === 'all' || c.reads!.some((t) => tables.has(t))) this.kick(c);
    }
  }

  /** Runs a change-driven cohort now, or when the change gap since its last start has passed. */
  private kick(c: Cohort): void {
    if (this.stopped) return;
    if (c.running) {
      c.again = true;
      return;
    }
    if (c.due) return;
    const wait = c.lastStart + (this.opts.changeGapMs ?? this.opts.intervalMs) - performance.now();
    if (wait <= 0) {
      this.start(c, false);
      return;
    }
    c.due = setTimeout(() => {
      c.due = undefined;
      if (this.cohorts.get(c.key) === c) this.start(c, false);
    }, Math.ceil(wait));
    c.due.unref();
  }

  private start(c: Cohort, polled: boolean): void {
    if (c.running || this.stopped) return;
    const p = this.runCohort(c, polled);
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  }

  private replanAll(cache: SchemaCache): void {
    const moving: Sub[] = [...this.parked];
    this.parked.clear();
    for (const c of [...this.cohorts.values()]) {
      if (c.plan.cache === cache) continue;
      if (c.due) clearTimeout(c.due);
      c.due = undefined;
      for (const row of c.rows.values()) {
        for (const sub of row.subs) moving.push(sub);
        row.subs.clear(); // a batch of it still running delivers to nobody
      }
      this.cohorts.delete(c.key);
      this.stats.cohorts--;
    }
    for (const sub of moving) {
      sub.cohort = undefined;
      sub.row = undefined;
      const next = replanned(sub.s);
      if (typeof next === 'string') {
        this.deliver(sub, next, hashText(next));
        this.parked.add(sub);
      } else this.join(sub, next);
    }
  }

  /**
   * One run of a cohort: every row when polled or when a table it reads changed, else (a
   * change-driven cohort with nothing changed) only the rows of subscribers that joined since.
   */
  private async runCohort(c: Cohort, polled: boolean): Promise<void> {
    const ch = this.opts.changes;
    const full = polled || this.changedSince(c);
    if (!full && c.fresh.size === 0) return;
    c.running = true;
    c.again = false;
    // the change gap bounds runs for changes; a run of new subscribers' rows alone (all of a new
    // cohort's) does not delay the next change
    if (full && c.fresh.size < c.rows.size) c.lastStart = performance.now();
    this.stats.runs++;
    this.stats.running++;
    let db: Db | undefined;
    try {
      // the versions before the statement: a change committed after its snapshot bumps them again
      if (polled) c.seen = undefined;
      else if (full && ch && c.reads) c.seen = c.reads.map((t) => ch.version(t));
      const rows = full ? [...c.rows.values()] : [...c.fresh];
      this.opts.histograms.liveQueryCohortSubscribers.observe(rows.reduce((n, r) => n + r.subs.size, 0));
      c.fresh.clear();
      if (!polled && full) this.stats.changeRuns++;
      if (!polled && this.opts.fence) db = await this.fence();
      const size = Math.max(1, this.opts.batchSize);
      const batches: Row[][] = [];
      for (let i = 0; i < rows.length; i += size) batches.push(rows.slice(i, i + size));
      await Promise.all(batches.map((b) => this.runBatch(c, b, db)));
    } finally {
      c.running = false;
      this.stats.running--;
    }
    if (this.cohorts.get(c.key) === c && this.driven(c) && (c.again || c.fresh.size || this.changedSince(c))) this.kick(c);
  }

  /** Waits for the replicas (one wait shared by the cohorts starting together): undefined = the read db, else the primary. */
  private async fence(): Promise<Db | undefined> {
    this.stats.fenced++;
    const f = (this.fencing ??= this.opts.fence!().finally(() => (this.fencing = undefined)));
    const ok = await f.catch(() => false);
    if (ok || !this.opts.primary) return undefined;
    this.stats.fencedToPrimary++;
    return this.opts.primary();
  }

  private async runBatch(c: Cohort, rows: Row[], db?: Db): Promise<void> {
    let release: () => void;
    try {
      release = await this.slots.acquire(10 * this.opts.intervalMs + 10_000);
    } catch {
      this.stats.overruns++; // the database is that far behind: this batch waits for the next run
      return;
    }
    try {
      await this.runBatchNow(c, rows, db);
    } finally {
      release();
    }
  }

  private async runBatchNow(c: Cohort, rows: Row[], db?: Db): Promise<void> {
    const t0 = performance.now();
    let result: Array<Record<string, string | null>>;
    // tracing on: one span per batch (not per subscriber), a root of its own, its statement under it
    const t = tracing;
    const span = t?.start('svc.live_query.poll', {
      'svc.live_query.batch_rows': rows.length,
      'svc.live_query.subscribers': rows.reduce((n, r) => n + r.subs.size, 0),
    });
    try {
      this.stats.batches++;
      result = (await (db ?? this.opts.db()).prepared(c.plan.name, c.plan.text, batchParams(rows), undefined, span)).rows as Array<
        Record<string, string | null>
      >;
    } catch (e) {
      if (span) t!.fail(span, 'poll_failed', e instanceof Error ? e.message : String(e));
      this.stats.batchErrors++;
      if (rows.length > 1) {
        // one subscriber's values can fail the whole statement (a cast): answer each row alone
        // so the others still get their results
        for (const r of rows) await this.runBatchNow(c, [r], db);
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
      this.opts.histograms.liveQueryPollDuration.observe(ms / 1000);
      this.stats.batchMs += ms;
      const recent = this.stats.recentBatchMs;
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
    this.stats.messages++;
    sub.s.push(text);
  }

  /** Stops polling (shutdown); running batches are awaited. */
  async close(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const c of this.cohorts.values()) if (c.due) clearTimeout(c.due);
    await Promise.allSettled([...this.running]);
  }
}
