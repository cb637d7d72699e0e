/**
 * Read replicas (`--read-replica-urls`): a pool per PostgreSQL streaming replica, health-checked in
 * the background, handed out round-robin to read-only GraphQL/Relay queries and live queries.
 * A replica is used only while its last check succeeded, it is in recovery (a standby) and its
 * replay lag is at most `--read-replica-max-lag`; otherwise it is skipped until a later check
 * passes, and with no healthy replica reads go to the primary.
 *
 * Lag: 0 when everything received has been replayed (an idle primary does not make a standby
 * "lag"), else the age of the last replayed transaction (`now() - pg_last_xact_replay_timestamp()`).
 */
import { openDb, spanBound, type Db, type DbOptions } from './db.js';

export interface ReplicaStatus {
  url: string;
  healthy: boolean;
  /** seconds, as of the last successful check */
  lagSeconds: number | null;
  error?: string;
  /** reads served so far */
  reads: number;
}

const LAG_SQL = `select pg_is_in_recovery() as standby,
  case when pg_last_wal_receive_lsn() is not distinct from pg_last_wal_replay_lsn() then 0
       else coalesce(extract(epoch from now() - pg_last_xact_replay_timestamp()), 0) end::float8 as lag`;

interface Member {
  url: string;
  db?: Db;
  healthy: boolean;
  lag: number | null;
  error?: string;
  reads: number;
  checking: boolean;
}

export interface ReplicaSetOptions {
  urls: readonly string[];
  /** pool settings of each replica (its own `connections`) */
  pool: Omit<DbOptions, 'databaseUrl' | 'dataDir'>;
  maxLagSeconds: number;
  /** ms between health checks (default 1000) */
  checkIntervalMs?: number;
  onChange?: (url: string, healthy: boolean, why: string) => void;
}

/** Strips the password from a URL for logs and /v1/metrics. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<invalid url>';
  }
}

export class ReplicaSet {
  private readonly members: Member[];
  private next = 0;
  private timer?: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly o: ReplicaSetOptions) {
    this.members = o.urls.map((url) => ({ url, healthy: false, lag: null, reads: 0, checking: false }));
  }

  /** Opens the pools lazily (a replica that is down at start-up is retried by the checks) and checks every replica once. */
  async start(): Promise<void> {
    await this.checkAll();
    this.timer = setInterval(() => void this.checkAll(), this.o.checkIntervalMs ?? 1000);
    this.timer.unref();
  }

  /** A healthy replica's pool, round-robin; undefined when none is healthy. */
  pick(): Db | undefined {
    const n = this.members.length;
    for (let i = 0; i < n; i++) {
      const m = this.members[(this.next + i) % n]!;
      if (m.healthy && m.db) {
        this.next = (this.next + i + 1) % n;
        m.reads++;
        return m.db;
      }
    }
    return undefined;
  }

  /**
   * Change-driven live queries (subscriptions/liveQueryManager.ts): a table-change notification comes
   * from the primary after the commit, but a replica may not have replayed it yet. Reads the
   * primary's WAL position (`pg_current_wal_lsn()`, past the commit record of every transaction
   * whose notification was received) and waits until every healthy replica's
   * `pg_last_wal_replay_lsn()` has passed it: true, or false when one has not within `timeoutMs`
   * (the caller then reads the primary). Polls every 5 ms: one statement per healthy replica.
   */
  async caughtUp(primary: Db, timeoutMs = 1_000): Promise<boolean> {
    const live = this.members.filter((m) => m.healthy && m.db);
    if (!live.length) return true;
    const lsn = String((await primary.query('select pg_current_wal_lsn()::text as lsn')).rows[0].lsn);
    const deadline = Date.now() + timeoutMs;
    let pending = live;
    for (;;) {
      const done = await Promise.all(
        pending.map((m) =>
          m.db!.query('select coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, true) as ok', [lsn]).then(
            (r) => r.rows[0].ok === 't' || r.rows[0].ok === true,
            () => false,
          ),
        ),
      );
      pending = pending.filter((_, i) => !done[i]);
      if (!pending.length) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  status(): ReplicaStatus[] {
    return this.members.map((m) => ({ url: redactUrl(m.url), healthy: m.healthy, lagSeconds: m.lag, reads: m.reads, ...(m.error ? { error: m.error } : {}) }));
  }

  /** Runs one round of checks now (also used by tests to avoid waiting for the interval). */
  checkAll(): Promise<void> {
    return Promise.all(this.members.map((m) => this.check(m))).then(() => undefined);
  }

  private async check(m: Member): Promise<void> {
    if (m.checking || this.closed) return;
    m.checking = true;
    try {
      m.db ??= await openDb({ ...this.o.pool, databaseUrl: m.url, dataDir: '', connectRetryTimeoutMs: 0 });
      const r = await m.db.query(LAG_SQL);
      const row = r.rows[0] as { standby: string; lag: string };
      const standby = row.standby === 't' || (row.standby as unknown) === true;
      m.lag = Number(row.lag);
      if (!standby) this.set(m, false, 'not a standby (pg_is_in_recovery() is false)');
      else if (m.lag > this.o.maxLagSeconds) this.set(m, false, `replication lag ${m.lag.toFixed(1)} s exceeds ${this.o.maxLagSeconds} s`);
      else this.set(m, true, 'healthy');
    } catch (e) {
      this.set(m, false, `unreachable: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      m.checking = false;
    }
  }

  private set(m: Member, healthy: boolean, why: string): void {
    m.error = healthy ? undefined : why;
    if (m.healthy !== healthy) {
      m.healthy = healthy;
      this.o.onChange?.(redactUrl(m.url), healthy, why);
    }
  }

  /** cancels what the replicas' connections in use are running (Db.cancelRunning) */
  cancelRunning(): number {
    let n = 0;
    for (const m of this.members) n += m.db?.cancelRunning?.() ?? 0;
    return n;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.all(this.members.map((m) => m.db?.close()));
  }
}

/** Errors after which a read is retried on the primary: the replica went away or cancelled it for recovery. */
function replicaFailure(e: unknown): boolean {
  const code = (e as { code?: string })?.code;
  if (!code) return e instanceof Error && /connection|terminated|ECONN|timeout exceeded/i.test(e.message);
  return code.startsWith('08') || code.startsWith('57P') || code === '40001' || code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EPIPE';
}

/**
 * The database of one read: statements go to a healthy replica (round-robin), or to the primary when
 * none is healthy; a statement that fails because its replica went away is retried once on the
 * primary (and the replica re-checked). Everything that is not a single read statement —
 * connections, transactions, LISTEN/NOTIFY — is the primary's.
 */
export function readRouted(primary: Db, replicas: ReplicaSet): Db {
  const viaReplica = <T>(fn: (db: Db) => Promise<T>): Promise<T> => {
    const r = replicas.pick();
    if (!r) return fn(primary);
    return fn(r).catch((e: unknown) => {
      if (!replicaFailure(e)) throw e;
      void replicas.checkAll();
      return fn(primary);
    });
  };
  const routed: Db = {
    kind: primary.kind,
    get usePrepared() {
      return primary.usePrepared;
    },
    query: (text, values, span) => viaReplica((db) => db.query(text, values, span)),
    prepared: (name, text, values, cancel, span) => viaReplica((db) => db.prepared(name, text, values, cancel, span)),
    withConn: (fn, span) => primary.withConn(fn, span),
    tx: (fn, opts, span) => primary.tx(fn, opts, span),
    withSpan: (span) => spanBound(routed, span),
    listen: (channel, onPayload, onReconnect, onLost) => primary.listen(channel, onPayload, onReconnect, onLost),
    notify: (channel, payload) => primary.notify(channel, payload),
    get statementCount() {
      return primary.statementCount;
    },
    get roundTrips() {
      return primary.roundTrips;
    },
    close: async () => undefined,
  };
  return routed;
}
