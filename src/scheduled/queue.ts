/**
 * Scheduled events on the delivery subsystem: `svc_catalog.hdb_cron_events` (with the configuration
 * of their trigger in `hdb_cron_triggers`) and `svc_catalog.hdb_scheduled_events` (one-off events,
 * each with its own configuration) as DeliveryQueues, next to the event-trigger queue.
 *
 * An event is due when its time (`next_retry_at` for a retry, else `scheduled_time`) has come on the
 * scheduler's clock. Status moves `scheduled` → `locked` (claimed with FOR UPDATE SKIP LOCKED and a
 * lease) → `delivered`, back to `scheduled` with a `next_retry_at`, or `error` once `num_retries`
 * retries failed. An event found more than `tolerance_seconds` past its time is marked `dead` and
 * not delivered (each poll marks them, in one statement, so it happens once). Every try writes one
 * invocation log row. The body is catalog-tables.md's `{id, name (cron only), scheduled_time,
 * payload, comment (left out when null), created_at}`.
 */
import type { Db } from '../db/db.js';
import { triedColumns, type DeliveryJob, type DeliveryQueue, type FinishedTry } from '../delivery/worker.js';
import { redactUrl, resolveHeaders, resolveUrlTemplate } from '../delivery/http.js';
import { clampNumber, MAX_DELAY_SEC, timerMs } from '../core/limits.js';
import type { Clock } from '../core/clock.js';
import { fromEnv } from '../env.js';

/** RetryConfST (SPEC §2.9). */
export interface STRetryConf {
  num_retries: number;
  retry_interval_seconds: number;
  timeout_seconds: number;
  tolerance_seconds: number;
}

export const DEFAULT_ST_RETRY_CONF: Readonly<STRetryConf> = { num_retries: 0, retry_interval_seconds: 10, timeout_seconds: 60, tolerance_seconds: 21600 };

/** A webhook as configured: a URL with `{{ENV}}` templates, or `{from_env: NAME}` (UrlFromEnv). */
export type WebhookConf = string | { from_env: string };

/** The URL of a webhook configuration; an unset variable is a 400 naming it. */
export function resolveWebhookConf(conf: WebhookConf, env: NodeJS.ProcessEnv = process.env): string {
  return typeof conf === 'string' ? resolveUrlTemplate(conf, env) : fromEnv(conf.from_env, env);
}

/** A timestamp column as upstream's JSON shows it: ISO 8601 in UTC, fraction without trailing zeros. */
const isoText = (local: string) => `${local.replace(/\.?0+$/, '')}Z`;
const TEXT = (col: string) => `to_char(${col}, 'YYYY-MM-DD"T"HH24:MI:SS.US')`;

interface Source {
  kind: 'cron' | 'scheduled';
  table: string;
  logs: string;
  /** joins the event `e` with where its configuration lives, as `c` */
  join: string;
  /** the trigger name column, or null */
  name: string;
  /** the creating request's traceparent column (issue 35), or null */
  trace: string;
}

const CRON: Source = {
  kind: 'cron',
  table: 'svc_catalog.hdb_cron_events',
  logs: 'svc_catalog.hdb_cron_event_invocation_logs',
  join: 'join svc_catalog.hdb_cron_triggers c on c.name = e.trigger_name',
  name: 'e.trigger_name',
  trace: 'null::text',
};

const ONE_OFF: Source = {
  kind: 'scheduled',
  table: 'svc_catalog.hdb_scheduled_events',
  logs: 'svc_catalog.hdb_scheduled_event_invocation_logs',
  join: 'cross join lateral (select e.webhook_conf, e.payload, e.header_conf, e.retry_conf, e.comment) c',
  name: 'null::text',
  trace: 'e.trace_context',
};

// an event waiting: scheduled, or locked by a process whose lease ran out (it died)
const WAITING = `(e.status = 'scheduled' or (e.status = 'locked' and e.locked_until < now()))`;
const DUE_AT = 'coalesce(e.next_retry_at, e.scheduled_time)';
// read defensively: a row's tolerance that is not a number, or out of range, never fails the claim
const TOLERANCE = `make_interval(secs => least(greatest(coalesce(case when json_typeof(c.retry_conf->'tolerance_seconds') = 'number' then (c.retry_conf->>'tolerance_seconds')::numeric end, ${DEFAULT_ST_RETRY_CONF.tolerance_seconds}), 0), ${MAX_DELAY_SEC})::float8)`;

// One statement per poll: marks the events past their tolerance `dead`, claims the due ones (FOR
// UPDATE SKIP LOCKED, a lease), and says when the next waiting event falls due. It always returns
// one row at least (nulls when nothing was claimed). $1 owner, $2 limit, $3 lease seconds, $4 the
// scheduler's now.
const claimSql = (s: Source) => `
with overdue as (
  select e.id from ${s.table} e ${s.join}
  where ${WAITING} and ${DUE_AT} < $4::timestamptz - ${TOLERANCE}
  limit 10000
  for update of e skip locked
), dead as (
  update ${s.table} e set status = 'dead', locked_by = null, locked_until = null
    from overdue
   where e.id = overdue.id
  returning e.id
), due as (
  select e.id from ${s.table} e ${s.join}
  where ${WAITING} and ${DUE_AT} <= $4::timestamptz and ${DUE_AT} >= $4::timestamptz - ${TOLERANCE}
  order by ${DUE_AT}
  limit $2
  for update of e skip locked
), claimed as (
  update ${s.table} e
     set status = 'locked', locked_by = $1, locked_until = now() + make_interval(secs => $3)
    from due
   where e.id = due.id
  returning e.*
)
select d.dead_n, d.next_due_ms, j.* from (
  select (select count(*)::int from dead) as dead_n,
         (select (extract(epoch from min(${DUE_AT})) * 1000)::float8 from ${s.table} e where e.status = 'scheduled' and ${DUE_AT} > $4::timestamptz) as next_due_ms
) d left join lateral (
  select e.id, ${s.name} as trigger_name, e.tries, c.webhook_conf::text as webhook_conf, c.payload::text as payload,
    c.header_conf::text as header_conf, c.retry_conf::text as retry_conf, c.comment,
    ${TEXT("e.scheduled_time at time zone 'UTC'")} as scheduled_time, ${TEXT('e.created_at')} as created_at,
    (extract(epoch from ${DUE_AT}) * 1000)::float8 as due_ms, ${s.trace} as trace_context
  from claimed e ${s.join}
) j on true`;

const finishSql = (s: Source) => `
with o as (
  select * from unnest($2::text[], $3::text[], $4::timestamptz[], $5::int[], $6::text[], $7::text[])
    as o(id, status, next_retry_at, http_status, request, response)
), upd as (
  update ${s.table} e
     set tries = e.tries + 1, status = o.status, next_retry_at = o.next_retry_at, locked_by = null, locked_until = null
    from o
   where e.id = o.id and e.locked_by = $1
  returning e.id
)
insert into ${s.logs} (event_id, status, request, response)
select o.id, o.http_status, o.request::json, o.response::json from o
 where exists (select 1 from ${s.table} e where e.id = o.id)`;

export interface ScheduledStats {
  /** events found past their tolerance and marked dead by this process */
  dead: number;
}

export class ScheduledEventQueue implements DeliveryQueue {
  readonly kind: 'cron' | 'scheduled';
  readonly stats: ScheduledStats = { dead: 0 };
  /** when (on the scheduler's clock) the next waiting event falls due, as of the last poll */
  private nextDueMs?: number;
  private readonly claimText: string;
  private readonly finishText: string;

  constructor(
    private readonly source: Source,
    private readonly clock: Clock,
    private readonly onDead: (n: number) => void = () => undefined,
  ) {
    this.kind = source.kind;
    this.claimText = claimSql(source);
    this.finishText = finishSql(source);
  }

  static cron(clock: Clock, onDead?: (n: number) => void): ScheduledEventQueue {
    return new ScheduledEventQueue(CRON, clock, onDead);
  }

  static oneOff(clock: Clock, onDead?: (n: number) => void): ScheduledEventQueue {
    return new ScheduledEventQueue(ONE_OFF, clock, onDead);
  }

  private now(): string {
    return new Date(this.clock()).toISOString();
  }

  async claim(db: Db, owner: string, limit: number, leaseSec: number): Promise<DeliveryJob[]> {
    const r = await db.query(this.claimText, [owner, limit, leaseSec, this.now()]);
    const rows = r.rows as Array<Record<string, unknown>>;
    const first = rows[0];
    const dead = Number(first?.dead_n ?? 0);
    if (dead) {
      this.stats.dead += dead;
      this.onDead(dead);
    }
    this.nextDueMs = first?.next_due_ms === null || first?.next_due_ms === undefined ? undefined : Number(first.next_due_ms);
    return rows.filter((row) => row.id !== null).map((row) => this.job(row));
  }

  /** The next waiting event falls due sooner than the fetch interval: poll then. */
  nextPollInMs(): number | undefined {
    return this.nextDueMs === undefined ? undefined : Math.max(5, this.nextDueMs - this.clock());
  }

  /**
   * The job of a claimed row. A row whose values cannot be used (not what the API stores: written by
   * hand or by an older version) is not sent: a failed try with the reason, and the row ends `error`.
   */
  private job(row: Record<string, unknown>): DeliveryJob {
    try {
      return this.sendable(row);
    } catch (e) {
      const id = String(row.id);
      return {
        id,
        url: '',
        headers: [],
        body: 'null',
        timeoutMs: 1,
        logUrl: '',
        tries: Number(row.tries) || 0,
        maxRetries: 0,
        retryIntervalSec: 0,
        context: undefined,
        failure: `the event cannot be processed: ${e instanceof Error ? e.message : String(e)}`,
      };
    }
  }

  private sendable(row: Record<string, unknown>): DeliveryJob {
    const id = String(row.id);
    const stored = (row.retry_conf ? JSON.parse(String(row.retry_conf)) : {}) as Record<string, unknown> | null;
    const rc: STRetryConf = { ...DEFAULT_ST_RETRY_CONF, ...(stored && typeof stored === 'object' ? (stored as Partial<STRetryConf>) : {}) };
    const name = row.trigger_name === null ? '' : `,"name":${JSON.stringify(String(row.trigger_name))}`;
    const comment = row.comment === null || row.comment === undefined ? '' : `,"comment":${JSON.stringify(String(row.comment))}`;
    const body = `{"id":${JSON.stringify(id)}${name},"scheduled_time":"${isoText(String(row.scheduled_time))}","payload":${row.payload === null ? 'null' : String(row.payload)}${comment},"created_at":"${isoText(String(row.created_at))}"}`;
    let url = '';
    let headers: Array<{ name: string; value: string }> = [];
    let failure: string | undefined;
    try {
      url = resolveWebhookConf(JSON.parse(String(row.webhook_conf)) as WebhookConf);
      headers = resolveHeaders(row.header_conf ? JSON.parse(String(row.header_conf)) : undefined);
    } catch (e) {
      // a variable unset in this process: a failed try (logged), retried per retry_conf
      failure = e instanceof Error ? e.message : String(e);
    }
    return {
      id,
      url,
      headers,
      body,
      timeoutMs: timerMs(rc.timeout_seconds),
      logUrl: url ? redactUrl(url) : '',
      tries: Number(row.tries),
      maxRetries: clampNumber(rc.num_retries, 0, 1_000_000, 0),
      retryIntervalSec: clampNumber(rc.retry_interval_seconds, 0, MAX_DELAY_SEC, 10),
      // the lag metric: from the time the event was due
      createdAt: new Date(Number(row.due_ms)),
      context: undefined,
      ...(failure !== undefined ? { failure } : {}),
      ...(row.trigger_name ? { trigger: String(row.trigger_name) } : {}),
      ...(row.trace_context ? { traceparent: String(row.trace_context) } : {}),
    };
  }

  async finish(db: Db, owner: string, done: FinishedTry[]): Promise<void> {
    const c = triedColumns(done);
    const status = done.map((d) => (d.next.kind === 'delivered' ? 'delivered' : d.next.kind === 'error' ? 'error' : 'scheduled'));
    await db.query(this.finishText, [owner, c.ids, status, c.retryAt, c.statuses, c.requests, c.responses]);
  }

  async renew(db: Db, owner: string, ids: string[], leaseSec: number): Promise<void> {
    await db.query(`update ${this.source.table} set locked_until = now() + make_interval(secs => $3) where id = any($2::text[]) and locked_by = $1`, [
      owner,
      ids,
      leaseSec,
    ]);
  }

  async release(db: Db, owner: string, ids: string[]): Promise<void> {
    await db.query(
      `update ${this.source.table} set status = 'scheduled', locked_by = null, locked_until = null where id = any($2::text[]) and locked_by = $1 and status = 'locked'`,
      [owner, ids],
    );
  }

  /** events due now (or leased), not yet finished */
  async depth(db: Db): Promise<number> {
    const r = await db.query(
      `select count(*)::int as n from ${this.source.table} where status in ('scheduled', 'locked') and coalesce(next_retry_at, scheduled_time) <= $1::timestamptz`,
      [this.now()],
    );
    return Number((r.rows[0] as { n: unknown }).n);
  }
}
