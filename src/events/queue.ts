/**
 * Event triggers on the delivery subsystem: `svc_catalog.event_log` as a DeliveryQueue. The body is
 * upstream's payload (event-triggers/payload.rst): `{event: {session_variables, op, data: {old,
 * new}}, created_at, id, delivery_info: {max_retries, current_retry}, trigger: {name}, table:
 * {schema, name}}`; every try writes one `event_invocation_logs` row.
 */
import type { Db } from '../db/db.js';
import { triedColumns, type DeliveryJob, type DeliveryQueue, type FinishedTry } from '../delivery/worker.js';
import { redactUrl, resolveHeaders, resolveUrlTemplate } from '../delivery/http.js';
import type { EventTriggerDef, QualifiedTable } from '../model/metadata.js';
import { clampNumber, MAX_DELAY_SEC, timerMs } from '../core/limits.js';
import { fromEnv } from '../env.js';

export interface DeliverableTrigger {
  def: EventTriggerDef;
  table: QualifiedTable;
}

/** The webhook URL of a trigger (webhook with `{{ENV}}` templates, or webhook_from_env); throws when unset. */
export function triggerWebhook(def: EventTriggerDef, env: NodeJS.ProcessEnv = process.env): string {
  return def.webhook_from_env !== undefined ? fromEnv(def.webhook_from_env, env) : resolveUrlTemplate(def.webhook ?? '', env);
}

const CLAIM = `
with due as (
  select id from svc_catalog.event_log
  where not delivered and not error and not archived
    and (next_retry_at is null or next_retry_at <= now())
    and (not locked or locked_until is null or locked_until < now())
    and trigger_name = any($3::text[])
  order by created_at
  limit $2
  for update skip locked
)
update svc_catalog.event_log l
   set locked = true, locked_by = $1, locked_until = now() + make_interval(secs => $4)
  from due
 where l.id = due.id
returning l.id, l.schema_name, l.table_name, l.trigger_name, l.payload::text as payload, l.tries,
  to_char(l.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created_at_text,
  (extract(epoch from l.created_at) * 1000)::float8 as created_ms, l.trace_context`;

const FINISH = `
with o as (
  select * from unnest($2::text[], $3::boolean[], $4::boolean[], $5::timestamptz[], $6::int[], $7::text[], $8::text[])
    as o(id, delivered, error, next_retry_at, status, request, response)
), upd as (
  update svc_catalog.event_log e
     set tries = e.tries + 1, delivered = o.delivered, error = o.error, next_retry_at = o.next_retry_at,
         locked = false, locked_by = null, locked_until = null
    from o
   where e.id = o.id and e.locked_by = $1
  returning e.id
)
insert into svc_catalog.event_invocation_logs (event_id, status, request, response)
select o.id, o.status, o.request::json, o.response::json from o
 where exists (select 1 from svc_catalog.event_log e where e.id = o.id)`;

export class EventTriggerQueue implements DeliveryQueue {
  readonly kind = 'event-trigger';

  /** `triggers()`: the consistent event triggers of the current schema cache, by name */
  constructor(private readonly triggers: () => Map<string, DeliverableTrigger>) {}

  async claim(db: Db, owner: string, limit: number, leaseSec: number): Promise<DeliveryJob[]> {
    const known = this.triggers();
    if (!known.size) return [];
    const r = await db.query(CLAIM, [owner, limit, [...known.keys()], leaseSec]);
    const jobs: DeliveryJob[] = [];
    const unusable: string[] = [];
    for (const row of r.rows as Array<Record<string, unknown>>) {
      const id = String(row.id);
      const t = known.get(String(row.trigger_name));
      let url: string;
      let headers: Array<{ name: string; value: string }>;
      try {
        if (!t) throw new Error('trigger not found');
        url = triggerWebhook(t.def);
        headers = resolveHeaders(t.def.headers);
      } catch {
        unusable.push(id);
        continue;
      }
      const tries = Number(row.tries);
      const rc = t.def.retry_conf;
      const createdAt = String(row.created_at_text);
      const body = `{"event":${String(row.payload)},"created_at":${JSON.stringify(createdAt)},"id":${JSON.stringify(id)},"delivery_info":{"max_retries":${rc.num_retries},"current_retry":${tries}},"trigger":{"name":${JSON.stringify(t.def.name)}},"table":{"schema":${JSON.stringify(String(row.schema_name))},"name":${JSON.stringify(String(row.table_name))}}}`;
      jobs.push({
        id,
        url,
        headers,
        body,
        // clamped: a stored configuration (replace_metadata does not range-check it) never overflows a timer or a date
        timeoutMs: timerMs(rc.timeout_sec),
        logUrl: redactUrl(url),
        tries,
        maxRetries: clampNumber(rc.num_retries, 0, 1_000_000, 0),
        retryIntervalSec: clampNumber(rc.interval_sec, 0, MAX_DELAY_SEC, 10),
        createdAt: new Date(Number(row.created_ms)),
        trigger: t.def.name,
        ...(row.trace_context ? { traceparent: String(row.trace_context) } : {}),
        context: undefined,
      });
    }
    // a trigger whose webhook or header variables are unset right now: leave its rows for later
    if (unusable.length) await this.release(db, owner, unusable);
    return jobs;
  }

  async finish(db: Db, owner: string, done: FinishedTry[]): Promise<void> {
    const c = triedColumns(done);
    await db.query(FINISH, [
      owner,
      c.ids,
      done.map((d) => d.next.kind === 'delivered'),
      done.map((d) => d.next.kind === 'error'),
      c.retryAt,
      c.statuses,
      c.requests,
      c.responses,
    ]);
  }

  async renew(db: Db, owner: string, ids: string[], leaseSec: number): Promise<void> {
    await db.query('update svc_catalog.event_log set locked_until = now() + make_interval(secs => $3) where id = any($2::text[]) and locked_by = $1', [
      owner,
      ids,
      leaseSec,
    ]);
  }

  async release(db: Db, owner: string, ids: string[]): Promise<void> {
    await db.query('update svc_catalog.event_log set locked = false, locked_by = null, locked_until = null where id = any($2::text[]) and locked_by = $1', [
      owner,
      ids,
    ]);
  }

  async depth(db: Db): Promise<number> {
    const r = await db.query('select count(*)::int as n from svc_catalog.event_log where not delivered and not error and not archived');
    return Number((r.rows[0] as { n: unknown }).n);
  }
}
