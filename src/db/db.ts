/**
 * One pool interface over a PostgreSQL server (`pg.Pool`) and the embedded
 * PGlite (through its node-postgres adapter, a single backend). Every value
 * comes back as PostgreSQL's text: the engine builds its JSON in SQL and
 * passes the text through, and `run_sql` reports text as Hasura does.
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { Batch, type BatchError } from './batch.js';
import { PreparedQuery } from './prepared.js';
import { Lanes, type PipelineStats } from './pipeline.js';
import { clientWentAway, type QueryResultLike, type Statement } from './statement.js';
import type { CancelToken } from '../core/cancel.js';
import { tracing, type Span, type Tracing } from '../core/tracing.js';
import type { Attributes } from '@opentelemetry/api';
import type { HistogramChild } from '../core/histogram.js';
import { performance } from 'node:perf_hooks';

export interface Queryable {
  query(text: string, values?: unknown[]): Promise<QueryResultLike>;
}

/** A checked-out connection. */
export interface Conn extends Queryable {
  /** run a named prepared statement (the name must identify the text) */
  prepared(name: string, text: string, values: unknown[]): Promise<QueryResultLike>;
  /** simple-protocol query returning one result per statement, rows as arrays */
  multi(text: string): Promise<Array<{ command: string; fields: string[]; rows: (string | null)[][] }>>;
  /**
   * Sends the statements back to back without waiting for each answer (on a
   * server: one round trip) and settles each. Every statement runs even when
   * an earlier one failed (inside a transaction block it then fails with
   * "current transaction is aborted", and `commit` rolls back).
   */
  pipeline(statements: readonly Statement[]): Promise<Array<PromiseSettledResult<QueryResultLike>>>;
  /**
   * Runs the statements as one transaction, in one round trip on a server
   * (see batch.ts). Rejects with the first error, its `batchIndex` telling
   * which statement failed; nothing of the batch is then kept.
   */
  batch(statements: readonly Statement[]): Promise<QueryResultLike[]>;
}

export interface TxOptions {
  isolation?: 'read-committed' | 'repeatable-read' | 'serializable';
  readOnly?: boolean;
}

/**
 * A database. The optional `span` of the statement methods is the parent of their spans (tracing on;
 * none: not traced); callers bind it once with `withSpan` rather than passing it.
 */
export interface Db extends Queryable {
  readonly kind: 'pg' | 'pglite';
  readonly usePrepared: boolean;
  query(text: string, values?: unknown[], span?: Span): Promise<QueryResultLike>;
  /** `cancel`: cancelling it cancels the statement in PostgreSQL (the client went away) */
  prepared(name: string, text: string, values: unknown[], cancel?: CancelToken, span?: Span): Promise<QueryResultLike>;
  withConn<T>(fn: (c: Conn) => Promise<T>, span?: Span): Promise<T>;
  tx<T>(fn: (c: Conn) => Promise<T>, opts?: TxOptions, span?: Span): Promise<T>;
  /**
   * LISTEN on a channel with a dedicated connection, re-opened when it breaks (then `onReconnect`
   * runs: notifications sent meanwhile are lost); returns an unlisten function
   */
  listen(channel: string, onPayload: (payload: string) => void, onReconnect?: () => void, onLost?: () => void): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
  /**
   * This Db with `span` as the parent of its statements' spans (tracing on: a request's statements
   * run through `ctx.db`, bound to the request's span; a Db that is not bound traces nothing, and
   * neither does binding a span that records nothing: this Db itself is returned)
   */
  withSpan(span: Span): Db;
  /** statements executed so far (for tests and metrics) */
  readonly statementCount: number;
  /** waits for the database so far: a pipeline of statements is one (for tests and metrics) */
  readonly roundTrips: number;
  /** the pool's connections now (metrics): open, idle, requests waiting for one, and the maximum */
  poolStats?(): { total: number; idle: number; waiting: number; max: number };
  /** pipelined reads (pipeline.ts): lanes open (and stuck), statements answered on lanes, statements run again elsewhere */
  pipelineStats?(): PipelineStats;
  /**
   * Cancels whatever the pool's connections in use are running (a CancelRequest each: a statement
   * fails with 57014, its transaction rolls back; an idle backend ignores it), so that `close` does
   * not wait for them: a shutdown whose grace period is over. Returns how many were asked.
   */
  cancelRunning?(): number;
  close(): Promise<void>;
}

/** db.statement of a span: the text (parameters stay `$n`, their values are never recorded), capped */
const STATEMENT_ATTR_MAX = 8192;

/**
 * A statement (or a batch of them, one round trip) as a span: `svc.sql`, child of `parent`
 * (only under one: a statement outside any request or delivery is not traced),
 * with db.system, db.statement (without parameter values), db.operation and the rows. With
 * --tracing-sql-comment, a sampled span's statements carry sqlcommenter's
 * `/*traceparent='00-<trace>-<span>-01'*\/`, so pg_stat_activity and PostgreSQL's logs name the
 * trace; such statements are sent unnamed (a per-request text cannot reuse a prepared statement).
 */
function traced<R extends QueryResultLike | QueryResultLike[] | unknown[]>(
  t: Tracing,
  parent: Span | undefined,
  texts: string | readonly Statement[],
  run: (comment: string, clock?: Clock) => Promise<R>,
  key?: string,
): Promise<R> {
  // statements outside any span (the background workers' polls, metadata sync) make no root spans
  if (parent === undefined) return run('');
  let attrs: Attributes;
  if (typeof texts === 'string')
    attrs = t.constant(texts, statementAttrs); // the same few texts every request: encoded once
  else {
    attrs = statementAttrs(texts.map((st) => st.text).join(';\n'));
    attrs['db.statement.count'] = texts.length;
  }
  const span = t.start('svc.sql', attrs, { kind: 'client', parent });
  const comment = t.sqlComment(span, key);
  // `auto` comments: how long the statement ran (from when it had a connection: not the pool's queue)
  const clock = key !== undefined && t.timesStatements ? { at: performance.now() } : undefined;
  return run(comment, clock).then(
    (r) => {
      if (clock) t.statementTook(key!, performance.now() - clock.at);
      const rows = Array.isArray(r)
        ? r.reduce((n: number, x) => n + (((x as { value?: QueryResultLike }).value ?? (x as QueryResultLike))?.rowCount ?? 0), 0)
        : (r.rowCount ?? r.rows.length);
      span.setAttribute('db.response.returned_rows', rows);
      span.end();
      return r;
    },
    (e: unknown) => {
      if (clock) t.statementTook(key!, performance.now() - clock.at);
      const pgErr = asPgError(e);
      t.fail(span, pgErr?.code ?? 'error', e instanceof Error ? e.message : String(e));
      span.end();
      throw e;
    },
  );
}

function statementAttrs(text: string): Attributes {
  return {
    'db.system': 'postgresql',
    'db.operation': operationOf(text),
    'db.statement': text.length > STATEMENT_ATTR_MAX ? `${text.slice(0, STATEMENT_ATTR_MAX)}…` : text,
  };
}

/** when a traced statement started running (set again once it has a connection) */
interface Clock {
  at: number;
}

/** db.operation: the statement's first keyword, upper-cased (SELECT, INSERT, WITH…) */
function operationOf(text: string): string {
  let i = 0;
  while (i < text.length && text.charCodeAt(i) <= 32) i++;
  let j = i;
  for (; j < text.length; j++) {
    const c = text.charCodeAt(j) | 0x20;
    if (c < 0x61 || c > 0x7a) break;
  }
  return j > i ? text.slice(i, j).toUpperCase() : 'SQL';
}

/** the key of a pipeline or batch for sqlComment's `auto`: its statements' names, when all are prepared */
function keyOf(statements: readonly Statement[]): string | undefined {
  let key = '';
  for (const st of statements) {
    if (!st.name) return undefined;
    key += key ? `\u0000${st.name}` : st.name;
  }
  return key || undefined;
}

/** statements with the trace comment appended (and unnamed: the text differs per request) */
const withComment = (statements: readonly Statement[], comment: string): readonly Statement[] =>
  comment ? statements.map((st) => ({ text: st.text + comment, values: st.values })) : statements;

/**
 * PostgreSQL's protocol carries text as NUL-terminated strings: a NUL byte in a statement or a
 * parameter breaks the connection (08P01) instead of failing the statement. Every statement and
 * parameter is checked before it is sent (a string scan, no copy) and refused the way PostgreSQL
 * refuses a NUL in text: SQLSTATE 22021, which the error mapping turns into a 400
 * `data-exception`, with the connection left intact.
 */
export function checkNoNul(text: string, values?: readonly unknown[]): void {
  if (text.includes('\0')) throw nulError();
  if (values) for (const v of values) if (hasNul(v)) throw nulError();
}

const hasNul = (v: unknown): boolean => (typeof v === 'string' ? v.includes('\0') : Array.isArray(v) ? v.some(hasNul) : false);

function nulError(): Error {
  return Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021', severity: 'ERROR' });
}

/** The same check, as a rejected promise (callers of the query methods await them). */
function nulCheck(text: string, values?: readonly unknown[]): Promise<never> | undefined {
  try {
    checkNoNul(text, values);
    return undefined;
  } catch (e) {
    return Promise.reject(e);
  }
}

/** lanes of pipelined reads by default: min(2, a quarter of the pool) (none for a pool under 4) */
export const defaultPipelineLanes = (connections: number): number => Math.min(2, Math.floor(connections / 4));

/** statements in flight on one lane at most */
const PIPELINE_DEPTH = 32;

const textTypes = { getTypeParser: () => (v: string) => v } as unknown as pg.CustomTypesConfig;

export interface DbOptions {
  databaseUrl?: string;
  dataDir: string;
  connections: number;
  /** pool connections that carry pipelined fast reads (pipeline.ts); default min(2, connections / 4) */
  pipelineLanes?: number;
  /**
   * statements whose running time's floor is under this are pipelined (ms; default pipeline.ts's
   * FAST_MS): --pipeline-fast-ms; tests raise it, so that a loaded machine's timings do not decide
   * whether the statements they send go onto a lane
   */
  pipelineFastMs?: number;
  idleTimeoutSeconds?: number;
  usePreparedStatements: boolean;
  /** URL of LISTEN connections (a direct one when databaseUrl is a transaction-mode pooler); default databaseUrl */
  listenUrl?: string;
  /** ms a request waits for a pool connection (0: for ever); past it the request fails with 503 */
  acquireTimeoutMs?: number;
  /** ms a statement may run on a pool connection (0: no limit); a transaction may `SET LOCAL` another */
  statementTimeoutMs?: number;
  /** ms start-up keeps retrying a database that does not answer (0: one try) */
  connectRetryTimeoutMs?: number;
  /** each failed start-up try is reported here */
  onConnectRetry?: (attempt: number, delayMs: number, error: Error) => void;
  /** waits for a pool connection are observed here (the engine's svc_db_pool_wait_seconds) */
  poolWait?: HistogramChild;
}

/** A pool connection could not be had in time (pg's "timeout exceeded when trying to connect"). */
export function isAcquireTimeout(e: unknown): boolean {
  return e instanceof Error && /timeout exceeded when trying to connect/i.test(e.message);
}

/**
 * The embedded database's data directory is one process's: `svc.lock` holds the owner's pid,
 * created exclusively; a lock whose pid is gone is stale and taken over. A second process on the
 * same directory would lose acknowledged writes (two PGlite instances on one directory).
 */
export function lockDataDir(dir: string): () => void {
  const file = path.join(dir, 'svc.lock');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      return () => {
        try {
          if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.unlinkSync(file);
        } catch {
          /* already gone */
        }
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const owner = Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10);
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && pidAlive(owner)) {
        throw new Error(`the data directory ${path.resolve(dir)} is in use by another svc process (pid ${owner}); stop it or use another --data-dir`);
      }
      fs.rmSync(file, { force: true }); // stale: its process is gone
    }
  }
  throw new Error(`could not lock the data directory ${path.resolve(dir)}`);
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Waits for the database at start-up: retries with backoff (250 ms doubling to 5 s) until the deadline. */
async function firstContact(db: Db, opts: DbOptions): Promise<void> {
  const deadline = Date.now() + (opts.connectRetryTimeoutMs ?? 0);
  let delay = 250;
  for (let attempt = 1; ; attempt++) {
    try {
      await db.query('select 1');
      return;
    } catch (e) {
      const pgErr = asPgError(e);
      // a database that answers with an error (bad password, no such database) will not get better
      const retryable = !pgErr || pgErr.code.startsWith('08') || pgErr.code === '57P03';
      if (!retryable || Date.now() + delay > deadline) throw e;
      opts.onConnectRetry?.(attempt, delay, e as Error);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 5_000);
    }
  }
}

export async function openDb(opts: DbOptions): Promise<Db> {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: opts.connections,
      idleTimeoutMillis: (opts.idleTimeoutSeconds ?? 180) * 1000,
      connectionTimeoutMillis: opts.acquireTimeoutMs ?? 0,
      statement_timeout: opts.statementTimeoutMs || undefined,
      types: textTypes,
      application_name: 'svc',
    });
    pool.on('error', () => {
      /* idle client errors are reported on the next checkout */
    });
    const connect = (url: string) => async () => {
      const c = new pg.Client({ connectionString: url, types: textTypes, application_name: 'svc' });
      await c.connect();
      return c;
    };
    const db = new PoolDb('pg', pool, opts.usePreparedStatements, connect(opts.databaseUrl), undefined, undefined, connect(opts.listenUrl ?? opts.databaseUrl));
    db.pipeline(opts.pipelineLanes ?? defaultPipelineLanes(opts.connections), opts.pipelineFastMs);
    if (opts.poolWait) db.timePoolWaits(opts.poolWait);
    try {
      await firstContact(db, opts);
    } catch (e) {
      await db.close();
      throw e;
    }
    return db;
  }
  fs.mkdirSync(opts.dataDir, { recursive: true });
  const unlock = lockDataDir(opts.dataDir);
  try {
    return await openEmbedded(opts, unlock);
  } catch (e) {
    unlock();
    throw e;
  }
}

async function openEmbedded(opts: DbOptions, unlock: () => void): Promise<Db> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { createPgConfig } = await import('@electric-sql/pglite/node-postgres');
  const exts = await loadPgliteExtensions();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pglite's extension map type differs between its bundles
  const pglite = await PGlite.create(path.resolve(opts.dataDir), { extensions: exts as any });
  const pool = new pg.Pool({ ...(createPgConfig(pglite) as object), max: 1, types: textTypes } as pg.PoolConfig);
  const db = new PoolDb('pglite', pool, opts.usePreparedStatements, undefined, pglite, unlock);
  await db.query('select 1');
  return db;
}

async function loadPgliteExtensions(): Promise<Record<string, unknown>> {
  const exts: Record<string, unknown> = {};
  for (const [name, mod] of [
    ['citext', '@electric-sql/pglite/contrib/citext'],
    ['pgcrypto', '@electric-sql/pglite/contrib/pgcrypto'],
  ] as const) {
    try {
      exts[name] = (await import(mod))[name];
    } catch {
      /* extension bundle not shipped in this PGlite build */
    }
  }
  return exts;
}

class PoolDb implements Db {
  statementCount = 0;
  roundTrips = 0;
  private listenHub?: ListenHub;
  constructor(
    readonly kind: 'pg' | 'pglite',
    private readonly pool: pg.Pool,
    readonly usePrepared: boolean,
    private readonly dedicated?: () => Promise<pg.Client>,
    private readonly pglite?: { listen(ch: string, cb: (p: string) => void): Promise<() => Promise<void>>; close(): Promise<void> },
    private readonly unlock?: () => void,
    /** LISTEN connections (--listen-database-url): LISTEN does not survive a transaction-mode pooler */
    private readonly listenConn?: () => Promise<pg.Client>,
  ) {}

  query(text: string, values?: unknown[], span?: Span): Promise<QueryResultLike> {
    const bad = nulCheck(text, values);
    if (bad) return bad;
    this.statementCount++;
    this.roundTrips++;
    const t = tracing;
    if (t && span) return traced(t, span, text, (c) => this.queryNow(text + c, values));
    return this.queryNow(text, values);
  }

  withSpan(span: Span): Db {
    return spanBound(this, span);
  }

  /**
   * pool.query's behaviour on this Db's checkout (acquire/giveBack), also in that a client whose
   * statement failed is not reused (a simple-protocol text may have left its session in a failed
   * transaction block).
   */
  private queryNow(text: string, values?: unknown[]): Promise<QueryResultLike> {
    return this.onClient(
      (client, done) => {
        // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's values parameter is typed any[]
        client.query(text, values as any[], (e: Error | null, r: pg.QueryResult) => done(e, r));
      },
      undefined,
      true,
    );
  }

  prepared(name: string, text: string, values: unknown[], cancel?: CancelToken, span?: Span): Promise<QueryResultLike> {
    const bad = nulCheck(text, values);
    if (bad) return bad;
    this.statementCount++;
    this.roundTrips++;
    const t = tracing;
    // a commented text is sent unnamed (parsed every time), its columns still those of `name`
    if (t && span)
      return traced(
        t,
        span,
        text,
        (c, clock) => (c ? this.preparedNow('', text + c, values, cancel, name, clock) : this.preparedNow(name, text, values, cancel, name, clock)),
        // without prepared statements (--use-prepared-statements=false, as behind pgbouncer in
        // transaction mode) every statement is parsed anyway: its comment costs nothing more
        this.usePrepared ? name : undefined,
      );
    return this.preparedNow(name, text, values, cancel);
  }

  /**
   * A statement through PreparedQuery (prepared.ts: no Describe once its columns are known, no
   * driver-side Query/Result objects). `columnsOf`: the name whose columns the statement has (a
   * named statement's own; the name of the text a trace comment was appended to, sent unnamed).
   */
  private preparedNow(name: string, text: string, values: unknown[], cancel?: CancelToken, columnsOf = name, clock?: Clock): Promise<QueryResultLike> {
    const stmt = this.usePrepared ? name : '';
    const known = this.usePrepared ? columnsOf : '';
    const lanes = this.lanes;
    const alone = (): Promise<QueryResultLike> =>
      this.onClient(
        (client, done) => {
          const columns = known ? this.columns.get(known) : undefined;
          const learn = known && columns === undefined ? (c: readonly string[]) => this.learnColumns(known, c) : undefined;
          let answer = done;
          if (lanes && stmt && columns !== undefined) {
            // how long it runs (on a connection of its own) decides whether it is pipelined from now on
            const t0 = performance.now();
            answer = (e, r) => {
              if (!e) lanes.observe(stmt, performance.now() - t0);
              done(e, r);
            };
          }
          void client.query(new PreparedQuery(stmt, text, values, columns, learn, answer) as unknown as pg.QueryConfig);
        },
        cancel,
        false,
        clock,
      );
    if (lanes && stmt) {
      if (cancel?.cancelled) return Promise.reject(clientWentAway());
      const piped = lanes.run(stmt, (done) => new PreparedQuery(stmt, text, values, this.columns.get(stmt), undefined, done), alone, cancel);
      if (piped) {
        if (clock) clock.at = performance.now();
        return piped;
      }
    }
    return alone();
  }

  /**
   * Runs one statement on a checked-out client (acquire/giveBack). The connection breaking while it
   * runs fails it (and keeps the process up); `cancel` cancels its backend (pg_cancel_backend). A
   * client that failed with a connection error (with `dropOnError`, any error), or whose statement
   * was cancelled (it may still carry the cancel request), is not reused.
   */
  private onClient(
    run: (client: pg.PoolClient, done: (e: Error | null, r?: QueryResultLike) => void) => void,
    cancel?: CancelToken,
    dropOnError = false,
    clock?: Clock,
  ): Promise<QueryResultLike> {
    if (cancel?.cancelled) return Promise.reject(clientWentAway());
    return new Promise<QueryResultLike>((resolve, reject) => {
      this.acquire((err, client, release) => {
        if (err || !client || !release) {
          reject(err ?? new Error('no connection'));
          return;
        }
        if (clock) clock.at = performance.now();
        let cancelled = false;
        let settled = false;
        const done = (e: Error | null, r?: QueryResultLike) => {
          if (settled) return;
          settled = true;
          client.removeListener('error', done);
          cancel?.clear();
          this.giveBack(client, release, cancelled || (e !== null && (dropOnError || isConnectionError(e))));
          if (e) reject(e);
          else resolve(r!);
        };
        client.on('error', done);
        if (cancel && this.dedicated) {
          const pid = (client as pg.PoolClient & { processID?: number }).processID;
          cancel.onCancel(() => {
            cancelled = true;
            if (pid) cancelRequest(client);
          });
        }
        try {
          run(client, done);
        } catch (e) {
          done(e instanceof Error ? e : new Error(String(e)));
        }
      });
    });
  }

  /** column names of named statements (the name identifies the text); bounded: starts over past 10,000 */
  private readonly columns = new Map<string, readonly string[]>();
  /** pipelined reads (pipeline.ts), when on */
  private lanes: Lanes | undefined;

  /** lanes of pipelined reads open now (and stuck ones), statements answered on them so far and statements run again elsewhere */
  pipelineStats(): PipelineStats {
    const l = this.lanes;
    return { lanes: l?.size ?? 0, stuck: l?.stuck ?? 0, pipelined: l?.pipelined ?? 0, rerun: l?.rerun ?? 0 };
  }

  /** pipelines fast named reads on up to `lanes` pool connections (0: off); `fastMs`: DbOptions.pipelineFastMs */
  pipeline(lanes: number, fastMs?: number): void {
    this.lanes?.close();
    this.lanes =
      lanes > 0 && this.kind === 'pg' && this.usePrepared
        ? new Lanes({ lanes, depth: PIPELINE_DEPTH, acquire: (cb) => this.pool.connect(cb), ...(fastMs !== undefined ? { fastMs } : {}) })
        : undefined;
  }
  private learnColumns(name: string, columns: readonly string[]): void {
    if (this.columns.size >= 10_000) this.columns.clear();
    this.columns.set(name, columns);
  }

  poolStats(): { total: number; idle: number; waiting: number; max: number } {
    const p = this.pool as pg.Pool & { options?: { max?: number } };
    return { total: p.totalCount, idle: p.idleCount + this.spare.length, waiting: p.waitingCount, max: p.options?.max ?? 0 };
  }

  /**
   * Connections between statements. pg.Pool's checkout and release cost ~5 µs of CPU per statement
   * (a nextTick, two events, an idle timer set and cleared, error listeners swapped; measured with
   * the lean statement of prepared.ts: 34 → 28 µs per primary-key lookup), so a client a statement
   * gives back is kept here, most recent on top, and the next checkout takes it without the pool.
   * pg.Pool still opens, bounds, reaps and closes connections:
   * - a client is handed back to pg.Pool at once when pg.Pool has waiters, when it is broken, or
   *   while closing; and every second those that stayed unused for a whole second go back, so
   *   pg.Pool's idle timeout and its counts stay right for an idle server;
   * - every checkout of this Db (statements, withConn, tx) goes through `acquire`, so a spare client
   *   is never idle while a checkout of this Db waits for pg.Pool;
   * - an error of a spare client (its backend went away) removes it and gives it back as broken.
   */
  private readonly spare: Array<{ client: pg.PoolClient; release: (err?: Error | boolean) => void; at: number }> = [];
  private readonly spareErrorListeners = new WeakSet<pg.PoolClient>();
  private sweepTick = 0;
  private sweeper: NodeJS.Timeout | undefined;
  private closing = false;

  private acquire(cb: (err: Error | undefined, client?: pg.PoolClient, release?: (err?: Error | boolean) => void) => void): void {
    const s = this.spare.pop();
    if (s) cb(undefined, s.client, s.release);
    else this.pool.connect(cb);
  }

  private giveBack(client: pg.PoolClient, release: (err?: Error | boolean) => void, broken: boolean): void {
    const p = this.pool as pg.Pool & { options?: { max?: number } };
    const dead = !(client as pg.PoolClient & { _queryable?: boolean })._queryable || (client as pg.PoolClient & { _ending?: boolean })._ending === true;
    if (broken || dead || this.closing || p.waitingCount > 0 || this.spare.length >= (p.options?.max ?? 10)) {
      release(broken || dead);
      return;
    }
    if (!this.spareErrorListeners.has(client)) {
      this.spareErrorListeners.add(client);
      client.on('error', () => {
        const i = this.spare.findIndex((x) => x.client === client);
        if (i >= 0) this.spare.splice(i, 1)[0]!.release(true);
      });
    }
    this.spare.push({ client, release, at: this.sweepTick });
    if (!this.sweeper) {
      this.sweeper = setInterval(() => this.sweep(), 1000);
      this.sweeper.unref();
    }
  }

  /** gives back to pg.Pool the spare clients unused since the previous tick (the oldest are at the bottom) */
  private sweep(): void {
    this.sweepTick++;
    while (this.spare.length && this.spare[0]!.at < this.sweepTick - 1) this.spare.shift()!.release();
    if (!this.spare.length && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /**
   * Pool waits as a histogram: a checkout that finds an idle connection costs one comparison and
   * is not observed; one that waits (for a busy pool, or for a new connection) is timed.
   */
  timePoolWaits(poolWait: HistogramChild): void {
    const pool = this.pool as pg.Pool & { connect: (cb?: (err: Error | undefined, client?: pg.PoolClient, done?: () => void) => void) => unknown };
    const connect = pool.connect.bind(pool) as typeof pool.connect;
    pool.connect = ((cb?: (err: Error | undefined, client?: pg.PoolClient, done?: () => void) => void) => {
      if (pool.idleCount > 0) return connect(cb);
      const t0 = performance.now();
      const seen = () => poolWait.observe((performance.now() - t0) / 1000);
      if (cb) {
        return connect((err, client, done) => {
          seen();
          cb(err, client, done);
        });
      }
      return (connect() as Promise<pg.PoolClient>).then(
        (c) => {
          seen();
          return c;
        },
        (e: unknown) => {
          seen();
          throw e;
        },
      );
    }) as typeof pool.connect;
  }

  async withConn<T>(fn: (c: Conn) => Promise<T>, span?: Span): Promise<T> {
    const [client, release] = await new Promise<[pg.PoolClient, (err?: Error | boolean) => void]>((resolve, reject) =>
      this.acquire((err, c, r) => (err || !c || !r ? reject(err ?? new Error('no connection')) : resolve([c, r]))),
    );
    let broken = false;
    try {
      return await fn(this.wrap(client, span));
    } catch (e) {
      broken = isConnectionError(e);
      throw e;
    } finally {
      this.giveBack(client, release, broken);
    }
  }

  async tx<T>(fn: (c: Conn) => Promise<T>, opts: TxOptions = {}, span?: Span): Promise<T> {
    return this.withConn(async (c) => {
      const iso = opts.isolation ? ` isolation level ${opts.isolation.replace('-', ' ')}` : '';
      await c.query(`begin${iso}${opts.readOnly ? ' read only' : ''}`);
      try {
        const r = await fn(c);
        await c.query('commit');
        return r;
      } catch (e) {
        await c.query('rollback').catch(() => undefined);
        throw e;
      }
    }, span);
  }

  /** a checked-out client as a Conn; `span`: its statements' parent (tracing on) */
  private wrap(client: pg.PoolClient, span: Span | undefined): Conn {
    // the returned object's methods are not arrow functions (they are called as methods), so they
    // reach the pool's counters through this alias
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const self = this;
    // a named prepared statement when it has a name and prepared statements are on
    const send = (st: Statement) =>
      nulCheck(st.text, st.values) ??
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's values parameter is typed any[]
      client.query(st.name && self.usePrepared ? { name: st.name, text: st.text, values: st.values as any[] } : { text: st.text, values: st.values as any[] });
    return {
      query(text, values) {
        const bad = nulCheck(text, values);
        if (bad) return bad;
        self.statementCount++;
        self.roundTrips++;
        const t = tracing;
        // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's values parameter is typed any[]
        if (t && span) return traced(t, span, text, (c) => client.query(text + c, values as any[]));
        // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's values parameter is typed any[]
        return client.query(text, values as any[]);
      },
      prepared(name, text, values) {
        self.statementCount++;
        self.roundTrips++;
        const t = tracing;
        if (t && span) return traced(t, span, text, (c) => send(c ? { text: text + c, values } : { name, text, values }), self.usePrepared ? name : undefined);
        return send({ name, text, values });
      },
      pipeline(statements) {
        const t = tracing;
        if (t && span) return traced(t, span, statements, (c) => pipeline(withComment(statements, c)), self.usePrepared ? keyOf(statements) : undefined);
        return pipeline(statements);
      },
      batch(statements) {
        const t = tracing;
        if (t && span) return traced(t, span, statements, (c) => batch(withComment(statements, c)), self.usePrepared ? keyOf(statements) : undefined);
        return batch(statements);
      },
      multi(text) {
        const t = tracing;
        if (t && span) return traced(t, span, text, (c) => multi(text + c));
        return multi(text);
      },
    };
    async function pipeline(statements: readonly Statement[]): Promise<Array<PromiseSettledResult<QueryResultLike>>> {
      self.statementCount += statements.length;
      self.roundTrips += self.kind === 'pg' ? 1 : statements.length;
      if (self.kind !== 'pg') {
        // PGlite is in-process: nothing to save by pipelining
        const out: Array<PromiseSettledResult<QueryResultLike>> = [];
        for (const st of statements)
          out.push(
            await send(st).then(
              (value) => ({ status: 'fulfilled' as const, value }),
              (reason) => ({ status: 'rejected' as const, reason }),
            ),
          );
        return out;
      }
      // node-postgres' pipeline mode, for this checkout only: every statement is written at
      // once (each with its own Sync) and answered in order
      const c = client as pg.PoolClient & { pipeline: boolean };
      c.pipeline = true;
      try {
        return await Promise.allSettled(statements.map(send));
      } finally {
        c.pipeline = false;
      }
    }
    async function batch(statements: readonly Statement[]): Promise<QueryResultLike[]> {
      for (const st of statements) checkNoNul(st.text, st.values);
      self.statementCount += statements.length;
      if (self.kind === 'pg') {
        self.roundTrips++;
        return new Promise<QueryResultLike[]>((resolve, reject) => {
          client.query(new Batch(statements, self.usePrepared, (err, results) => (err ? reject(err) : resolve(results!))) as never);
        });
      }
      // PGlite: the same transaction, statement by statement
      self.roundTrips += statements.length + 2;
      await client.query('begin');
      const out: QueryResultLike[] = [];
      try {
        for (let i = 0; i < statements.length; i++) {
          const st = statements[i]!;
          try {
            out.push(await send(st));
          } catch (e) {
            (e as BatchError).batchIndex = i;
            throw e;
          }
        }
        await client.query('commit');
        return out;
      } catch (e) {
        await client.query('rollback').catch(() => undefined);
        throw e;
      }
    }
    async function multi(text: string): Promise<Array<{ command: string; fields: string[]; rows: (string | null)[][] }>> {
      checkNoNul(text);
      self.statementCount++;
      self.roundTrips++;
      const r = (await client.query({ text, rowMode: 'array' } as pg.QueryConfig)) as unknown as pg.QueryResult | pg.QueryResult[];
      const list = Array.isArray(r) ? r : [r];
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rows are whatever the SQL selected
      return list.map((x) => ({ command: x.command, fields: (x.fields ?? []).map((f) => f.name), rows: x.rows as any }));
    }
  }

  /**
   * LISTEN on ONE dedicated connection shared by every channel of this pool (metadata sync, table
   * changes, ...), re-opened when it breaks (a database restart, a terminated backend, a network
   * cut): retried with backoff (100 ms doubling to 5 s) for as long as a listener lives. `onLost`
   * runs when it breaks, `onReconnect` after each re-open (every channel listened again), since
   * notifications sent while the connection was down are lost and the caller must re-read what
   * they would have said.
   */
  async listen(channel: string, onPayload: (payload: string) => void, onReconnect?: () => void, onLost?: () => void): Promise<() => Promise<void>> {
    if (this.pglite) return this.pglite.listen(channel, onPayload);
    this.listenHub ??= new ListenHub(this.listenConn ?? this.dedicated!);
    return this.listenHub.add({ channel, onPayload, onReconnect, onLost });
  }

  async notify(channel: string, payload: string): Promise<void> {
    await this.query('select pg_notify($1, $2)', [channel, payload]);
  }

  cancelRunning(): number {
    // pg.Pool's own lists (not in its typings): every client, and the idle ones
    const p = this.pool as unknown as { _clients?: pg.PoolClient[]; _idle?: Array<{ client: pg.PoolClient }> };
    const idle = new Set<pg.PoolClient>((p._idle ?? []).map((i) => i.client));
    for (const s of this.spare) idle.add(s.client);
    let asked = 0;
    for (const c of p._clients ?? []) {
      if (idle.has(c)) continue;
      cancelRequest(c);
      asked++;
    }
    return asked;
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const s of this.spare.splice(0)) s.release();
    this.lanes?.close();
    await this.pool.end().catch(() => undefined);
    if (this.pglite) await this.pglite.close().catch(() => undefined);
    this.unlock?.();
  }
}

interface ListenSub {
  channel: string;
  onPayload: (payload: string) => void;
  onReconnect?: (() => void) | undefined;
  onLost?: (() => void) | undefined;
}

/** `db` bound to `span` (Db.withSpan); a span that records nothing (not sampled) binds nothing: no statement spans */
export function spanBound(db: Db, span: Span): Db {
  return span.isRecording() ? new SpanDb(db, span) : db;
}

/**
 * A Db whose statements' spans are children of `span` (Db.withSpan): what a traced request's
 * ExecContext holds, so the executors' statements find their parent without it being passed down.
 */
export class SpanDb implements Db {
  constructor(
    private readonly db: Db,
    private readonly span: Span,
  ) {}
  get kind(): 'pg' | 'pglite' {
    return this.db.kind;
  }
  get usePrepared(): boolean {
    return this.db.usePrepared;
  }
  get statementCount(): number {
    return this.db.statementCount;
  }
  get roundTrips(): number {
    return this.db.roundTrips;
  }
  query(text: string, values?: unknown[], span?: Span): Promise<QueryResultLike> {
    return this.db.query(text, values, span ?? this.span);
  }
  prepared(name: string, text: string, values: unknown[], cancel?: CancelToken, span?: Span): Promise<QueryResultLike> {
    return this.db.prepared(name, text, values, cancel, span ?? this.span);
  }
  withConn<T>(fn: (c: Conn) => Promise<T>, span?: Span): Promise<T> {
    return this.db.withConn(fn, span ?? this.span);
  }
  tx<T>(fn: (c: Conn) => Promise<T>, opts?: TxOptions, span?: Span): Promise<T> {
    return this.db.tx(fn, opts, span ?? this.span);
  }
  withSpan(span: Span): Db {
    return this.db.withSpan(span);
  }
  listen(channel: string, onPayload: (payload: string) => void, onReconnect?: () => void, onLost?: () => void): Promise<() => Promise<void>> {
    return this.db.listen(channel, onPayload, onReconnect, onLost);
  }
  notify(channel: string, payload: string): Promise<void> {
    return this.db.notify(channel, payload);
  }
  /** a view: closing it closes nothing */
  async close(): Promise<void> {}
}

/** The LISTEN connection of a pool: one connection, any number of channels and listeners. */
class ListenHub {
  private readonly subs = new Set<ListenSub>();
  private current: pg.Client | undefined;
  private opening: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private delay = 100;
  /** channels LISTENed on `current` */
  private listened = new Set<string>();

  constructor(private readonly connect: () => Promise<pg.Client>) {}

  async add(sub: ListenSub): Promise<() => Promise<void>> {
    this.subs.add(sub);
    try {
      if (!this.current) await (this.opening ??= this.open().finally(() => (this.opening = undefined)));
      else await this.listenOn(this.current, sub.channel);
    } catch (e) {
      this.subs.delete(sub);
      throw e;
    }
    return () => this.remove(sub);
  }

  private async listenOn(c: pg.Client, channel: string): Promise<void> {
    if (this.listened.has(channel)) return;
    this.listened.add(channel);
    try {
      await c.query(`listen ${pg.escapeIdentifier(channel)}`);
    } catch (e) {
      this.listened.delete(channel);
      throw e;
    }
  }

  private async remove(sub: ListenSub): Promise<void> {
    if (!this.subs.delete(sub)) return;
    const c = this.current;
    if (this.subs.size === 0) {
      if (this.retry) clearTimeout(this.retry);
      this.retry = undefined;
      this.current = undefined;
      this.listened.clear();
      // a connection that is already gone never reports its end: do not wait for it for ever
      if (c) await Promise.race([c.end().catch(() => undefined), new Promise((r) => setTimeout(r, 1_000).unref())]);
      return;
    }
    if (c && ![...this.subs].some((s) => s.channel === sub.channel)) {
      this.listened.delete(sub.channel);
      await c.query(`unlisten ${pg.escapeIdentifier(sub.channel)}`).catch(() => undefined);
    }
  }

  private async open(): Promise<void> {
    const c = await this.connect();
    let lost = false;
    const onLost = () => {
      if (lost) return;
      lost = true;
      void c.end().catch(() => undefined);
      if (this.current !== c) return;
      this.current = undefined;
      this.listened.clear();
      if (this.subs.size === 0) return;
      for (const s of this.subs) s.onLost?.();
      this.schedule();
    };
    c.on('notification', (m) => {
      for (const s of this.subs) if (s.channel === m.channel) s.onPayload(m.payload ?? '');
    });
    c.on('error', onLost);
    c.on('end', onLost);
    this.current = c;
    this.listened.clear();
    try {
      for (const ch of new Set([...this.subs].map((s) => s.channel))) await this.listenOn(c, ch);
    } catch (e) {
      lost = true;
      this.current = undefined;
      this.listened.clear();
      await c.end().catch(() => undefined);
      throw e;
    }
    this.delay = 100;
  }

  private schedule(): void {
    if (this.retry || this.subs.size === 0) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (this.subs.size === 0 || this.current) return;
      this.open().then(
        () => {
          for (const s of this.subs) s.onReconnect?.();
        },
        () => {
          this.delay = Math.min(this.delay * 2, 5_000);
          this.schedule();
        },
      );
    }, this.delay);
    this.retry.unref();
  }
}

/**
 * Cancels a client's running statement with the protocol's CancelRequest (its process id and secret
 * key, on a short connection of its own that takes no backend slot): unlike `pg_cancel_backend(pid)`
 * it also reaches the right server behind pgbouncer, whose process ids are its own.
 */
function cancelRequest(client: pg.PoolClient): void {
  const c = client as pg.PoolClient & { processID?: number; secretKey?: number; connectionParameters?: { host?: string; port?: number } };
  const host = c.connectionParameters?.host ?? 'localhost';
  const port = c.connectionParameters?.port ?? 5432;
  if (!c.processID || c.secretKey === undefined) return;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg.Connection (the wire protocol) is not in pg's typings
  const con = new (pg as any).Connection();
  con.on('error', () => undefined); // the statement timeout still bounds it
  con.on('connect', () => con.cancel(c.processID, c.secretKey));
  if (host.startsWith('/')) con.connect(`${host}/.s.PGSQL.${port}`);
  else con.connect(port, host);
}

function isConnectionError(e: unknown): boolean {
  const code = (e as { code?: string })?.code;
  return !code || code.startsWith('08') || code === 'ECONNRESET' || code === 'ECONNREFUSED';
}

/** A PostgreSQL error as the driver reports it. */
export interface PgError {
  code: string;
  message: string;
  detail?: string;
  hint?: string;
  /** 1-based character offset of the error in the statement text, as PostgreSQL reports it (a string) */
  position?: string;
  constraint?: string;
  column?: string;
  table?: string;
}

export function asPgError(e: unknown): PgError | undefined {
  const x = e as PgError & { severity?: string };
  if (x && typeof x === 'object' && typeof x.code === 'string' && /^[0-9A-Z]{5}$/.test(x.code)) return x;
  return undefined;
}
