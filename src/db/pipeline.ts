/**
 * Pipelined reads: a few pool connections ("lanes") carry many fast read statements at once, each
 * statement written as soon as it is asked for (Bind, Execute, Sync: its own implicit transaction
 * and its own error), the answers read back in order. Measured on the bench (2 cores, 32 clients,
 * pool of 16): a primary-key lookup costs PostgreSQL ~35 % less CPU than one statement per
 * connection at a time, because a backend with statements queued keeps running instead of being
 * woken for each one (issue 32; README "Performance").
 *
 * What is pipelined: only `Db.prepared` statements (the request path's single-statement reads,
 * autocommit, never inside a transaction) with a statement name, once the statement has run and
 * was fast (its running time's floor, as measured here, under FAST_MS): the first runs of a
 * statement, slow statements and everything else take a connection of their own as before.
 *
 * Guarantees:
 * - bounded: at most `lanes` connections (taken from, and counted in, the pool's maximum) and
 *   `depth` statements in flight on each; when no lane can take a statement it runs as before
 *   (on a connection of its own);
 * - a stuck lane holds only its first statement: a lane that has made no progress for STUCK_MS
 *   takes no more statements until it moves; one that has made none for RESCUE_MS while
 *   statements were answered elsewhere (its first statement waits on a lock, say) has those
 *   written behind that one run again on connections of their own (they are reads: running one
 *   twice is harmless; what the lane answers for them later is dropped). Not when nothing else
 *   moved either: an overloaded machine is slow everywhere, and running statements twice would
 *   only add to its load. It is looked at whenever a statement is asked for, and every second;
 * - isolated: each statement has its own Sync, so an error (or a statement timeout) fails that
 *   statement alone; a broken connection fails the statements on it, as it fails a statement on a
 *   connection of its own, and the lane is dropped;
 * - cancellation: a pipelined statement is never cancelled in PostgreSQL (a cancel request hits
 *   whatever the backend runs, which may be a statement behind it); a request that goes away is
 *   answered at once and its statement's result dropped. Pipelined statements are known fast, and
 *   the statement timeout still bounds them;
 * - an idle lane goes back to the pool after a second or two unused; closing returns every lane
 *   once its statements are answered.
 */
import type pg from 'pg';
import type { CancelToken } from '../core/cancel.js';
import { clientWentAway, type QueryResultLike } from './statement.js';
import { performance } from 'node:perf_hooks';

/**
 * statements whose running time's floor is under this are pipelined (ms). What a lane saves is a
 * backend's wake-up and a round trip per statement (tens of µs): it matters for sub-millisecond
 * reads, while a lane runs its statements one after another on one backend and each waits for
 * those ahead of it. At 5 ms a 1,000-row read (the bench's f_large: ~3 ms of PostgreSQL, a 194 KB
 * answer) went onto the lanes, up to 32 deep, two backends doing what sixteen could; 32 statements
 * of 3 ms at once (pg_sleep: waiting, as on I/O or a lock) took 66 ms pipelined against 13 ms on
 * the pool's connections (2026-11-30).
 */
export const FAST_MS = 1;
/** a lane with statements in flight and no answer for this long takes no more (ms) */
export const STUCK_MS = 20;
/** a lane with no progress for this long, while statements were answered elsewhere, has those behind its first run again (ms) */
export const RESCUE_MS = 100;

/** a pg client with the internals pipelining uses (pg ≥ 8.20's pipeline mode) */
interface PipelineClient {
  pipeline: boolean;
  _queryable: boolean;
  _ending: boolean;
  _queryQueue: unknown[];
  _pulseQueryQueue(): void;
  on(event: 'error', fn: (e: Error) => void): void;
  removeListener(event: 'error', fn: (e: Error) => void): void;
}

interface Lane {
  client: pg.PoolClient;
  release: (err?: Error | boolean) => void;
  onError: (e: Error) => void;
  /** the statements in flight, in the order they are answered */
  inFlight: Entry[];
  /** when the lane last made progress (an answer, or a statement sent to an empty lane) */
  progressAt: number;
  /** the sweep tick it was last used in */
  usedTick: number;
}

/** a statement in flight on a lane */
interface Entry {
  sentAt: number;
  /** settled (answered, cancelled or run again elsewhere): what the lane answers later is dropped */
  settled: boolean;
  settle(e: Error | null, r?: QueryResultLike): void;
  /** runs it again on a connection of its own (it waits behind a stuck statement) */
  again(): void;
}

/** a statement to run: it calls `done` once (error, or its result) */
export type Submittable = { submit(connection: unknown): Error | null };

export interface LanesOptions {
  /** the most lanes (0: no pipelining) */
  lanes: number;
  /** the most statements in flight on one lane */
  depth: number;
  /** statements whose running time's floor is under this are pipelined (ms; default FAST_MS) */
  fastMs?: number;
  /** a connection of the pool, for a new lane */
  acquire(cb: (err: Error | undefined, client?: pg.PoolClient, release?: (err?: Error | boolean) => void) => void): void;
}

const stuck = (l: Lane, now: number): boolean => l.inFlight.length > 0 && now - l.progressAt > STUCK_MS;

/** what the lanes have done (metrics, tests) */
export interface PipelineStats {
  /** lanes open now */
  lanes: number;
  /** lanes with statements in flight and no progress for STUCK_MS */
  stuck: number;
  /** statements answered on lanes so far */
  pipelined: number;
  /** statements run again elsewhere because they waited behind a stuck one */
  rerun: number;
}

export class Lanes {
  private readonly lanes: Lane[] = [];
  private acquiring = false;
  private closing = false;
  private tick = 0;
  private sweeper: NodeJS.Timeout | undefined;
  /** running time floor (ms) by statement name: drops to a faster run at once, rises a tenth of the way per slower run */
  private readonly took = new Map<string, number>();
  /** statements answered on lanes so far */
  pipelined = 0;
  /** statements run again elsewhere because they waited behind a stuck one */
  rerun = 0;

  private readonly fastMs: number;

  constructor(private readonly opts: LanesOptions) {
    this.fastMs = opts.fastMs ?? FAST_MS;
  }

  /** lanes open now */
  get size(): number {
    return this.lanes.length;
  }

  /** lanes with statements in flight and no progress for STUCK_MS */
  get stuck(): number {
    const now = performance.now();
    return this.lanes.filter((l) => stuck(l, now)).length;
  }

  /** when a statement was last answered, on a lane or on a connection of its own (performance.now()) */
  private answeredAt = 0;

  /** whether the lane's statements behind its first should run elsewhere: it is stuck while others move */
  private rescuable(l: Lane, now: number): boolean {
    return l.inFlight.length > 1 && now - l.progressAt > RESCUE_MS && this.answeredAt - l.progressAt > RESCUE_MS;
  }

  /** records a statement's running time (ms) as measured by its caller (its own connection) */
  observe(name: string, ms: number): void {
    this.answeredAt = performance.now();
    const before = this.took.get(name);
    if (before === undefined && this.took.size >= 10_000) this.took.clear();
    this.took.set(name, before === undefined || ms < before ? ms : before + (ms - before) * 0.1);
  }

  /**
   * Runs the statement on a lane when it may be pipelined and a lane can take it: `make` builds it
   * with the callback that settles the returned promise; `alone` runs it on a connection of its own
   * (when it waits behind a stuck statement). Undefined: run it the usual way.
   */
  run(
    name: string,
    make: (done: (e: Error | null, r?: QueryResultLike) => void) => Submittable,
    alone: () => Promise<QueryResultLike>,
    cancel: CancelToken | undefined,
  ): Promise<QueryResultLike> | undefined {
    if (this.closing || !name) return undefined;
    const t = this.took.get(name);
    if (t === undefined || t >= this.fastMs) return undefined;
    const now = performance.now();
    let lane: Lane | undefined;
    for (const l of this.lanes) {
      if (stuck(l, now)) {
        if (this.rescuable(l, now)) this.rescue(l);
        continue;
      }
      if (l.inFlight.length >= this.opts.depth) continue;
      if (!lane || l.inFlight.length < lane.inFlight.length) lane = l;
    }
    if (!lane || lane.inFlight.length > 0) this.grow();
    if (!lane) return undefined;
    const client = lane.client as unknown as PipelineClient;
    if (!client._queryable || client._ending) {
      this.drop(lane, new Error('connection not queryable'));
      return undefined;
    }
    const l = lane;
    return new Promise<QueryResultLike>((resolve, reject) => {
      const entry: Entry = {
        sentAt: now,
        settled: false,
        settle(e, r) {
          if (entry.settled) return;
          entry.settled = true;
          cancel?.clear();
          if (e) reject(e);
          else resolve(r!);
        },
        again() {
          if (entry.settled) return;
          entry.settled = true;
          alone().then(resolve, reject);
        },
      };
      const q = make((e, r) => {
        // answers come in order: this is the lane's oldest statement
        const at = performance.now();
        const first = l.inFlight.shift();
        this.observe(name, at - Math.max(first?.sentAt ?? at, l.progressAt));
        l.progressAt = at;
        this.pipelined++;
        if (l.inFlight.length === 0 && this.closing) this.giveBack(l);
        entry.settle(e, r);
      });
      if (l.inFlight.length === 0) l.progressAt = now;
      l.inFlight.push(entry);
      l.usedTick = this.tick;
      client._queryQueue.push(q);
      client._pulseQueryQueue();
      if (cancel) cancel.onCancel(() => entry.settle(clientWentAway()));
    });
  }

  /** the statements waiting behind a stuck lane's first run again on connections of their own (reads: running one twice is harmless) */
  private rescue(l: Lane): void {
    for (let i = 1; i < l.inFlight.length; i++) {
      const e = l.inFlight[i]!;
      if (e.settled) continue;
      this.rerun++;
      e.again();
    }
  }

  /** takes another connection for a lane (one at a time, up to the maximum) */
  private grow(): void {
    if (this.acquiring || this.closing || this.lanes.length >= this.opts.lanes) return;
    this.acquiring = true;
    this.opts.acquire((err, client, release) => {
      this.acquiring = false;
      if (err || !client || !release) return;
      if (this.closing) {
        release();
        return;
      }
      const c = client as unknown as PipelineClient;
      if (typeof c._pulseQueryQueue !== 'function' || !Array.isArray(c._queryQueue) || typeof c.pipeline !== 'boolean') {
        // a driver without the pipeline mode this is written against: no lanes, ever
        release();
        this.closing = true;
        return;
      }
      const lane: Lane = { client, release, onError: () => undefined, inFlight: [], progressAt: performance.now(), usedTick: this.tick };
      lane.onError = (e) => this.drop(lane, e);
      c.on('error', lane.onError);
      c.pipeline = true;
      this.lanes.push(lane);
      if (!this.sweeper) {
        this.sweeper = setInterval(() => this.sweep(), 1000);
        this.sweeper.unref();
      }
    });
  }

  /** a lane whose connection broke: out of use, its connection destroyed (pg fails its statements) */
  private drop(lane: Lane, e: Error): void {
    const i = this.lanes.indexOf(lane);
    if (i < 0) return;
    this.lanes.splice(i, 1);
    (lane.client as unknown as PipelineClient).removeListener('error', lane.onError);
    lane.release(e);
  }

  /** an idle lane back to the pool */
  private giveBack(lane: Lane): void {
    const i = this.lanes.indexOf(lane);
    if (i < 0) return;
    this.lanes.splice(i, 1);
    const c = lane.client as unknown as PipelineClient;
    c.removeListener('error', lane.onError);
    c.pipeline = false;
    lane.release();
  }

  /** lanes unused for a whole tick go back */
  private sweep(): void {
    this.tick++;
    const now = performance.now();
    for (const l of [...this.lanes]) {
      if (stuck(l, now)) {
        if (this.rescuable(l, now)) this.rescue(l);
      } else if (l.inFlight.length === 0 && l.usedTick < this.tick - 1) this.giveBack(l);
    }
    if (!this.lanes.length && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /** no more statements; idle lanes go back now, busy ones when answered */
  close(): void {
    this.closing = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const l of [...this.lanes]) if (l.inFlight.length === 0) this.giveBack(l);
  }
}
