/**
 * Cron triggers in the catalog: `svc_catalog.hdb_cron_triggers` mirrors the metadata's
 * `cron_triggers` (all of them; export_metadata shows only those with include_in_metadata). Kept in
 * step at commit time of every metadata change, in its transaction: a trigger that is gone is
 * deleted with its events (on delete cascade); a new one gets its window of events; a changed
 * schedule replaces the future events that were not tried yet.
 */
import type { Conn } from '../db/db.js';
import type { CronTriggerMetadata, Metadata } from '../model/metadata.js';
import { topUpCronEvents } from './cron.js';
import { DEFAULT_ST_RETRY_CONF } from './queue.js';

const UPSERT = `
insert into svc_catalog.hdb_cron_triggers (name, webhook_conf, cron_schedule, payload, retry_conf, header_conf, include_in_metadata, comment)
values ($1, $2::json, $3, $4::json, $5::json, $6::json, $7, $8)
on conflict (name) do update set webhook_conf = excluded.webhook_conf, cron_schedule = excluded.cron_schedule,
  payload = excluded.payload, retry_conf = excluded.retry_conf, header_conf = excluded.header_conf,
  include_in_metadata = excluded.include_in_metadata, comment = excluded.comment`;

const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));

/** Returns how many cron events it generated. */
export async function syncCronTriggers(conn: Conn, prev: Metadata, next: Metadata, now: number): Promise<number> {
  const before = new Map(prev.cron_triggers.map((c) => [c.name, c]));
  const after = new Map(next.cron_triggers.map((c) => [c.name, c]));
  const gone = [...before.keys()].filter((n) => !after.has(n));
  if (gone.length) await conn.query('delete from svc_catalog.hdb_cron_triggers where name = any($1::text[])', [gone]);
  const changed: CronTriggerMetadata[] = [];
  const rescheduled: string[] = [];
  for (const c of after.values()) {
    const b = before.get(c.name);
    if (b && JSON.stringify(b) === JSON.stringify(c)) continue;
    changed.push(c);
    if (b && b.schedule !== c.schedule) rescheduled.push(c.name);
  }
  for (const c of changed) {
    await conn.query(UPSERT, [
      c.name,
      json(c.webhook),
      c.schedule,
      json(c.payload),
      json({ ...DEFAULT_ST_RETRY_CONF, ...c.retry_conf }),
      json(c.headers ?? []),
      c.include_in_metadata,
      c.comment ?? null,
    ]);
  }
  if (rescheduled.length) {
    await conn.query(
      "delete from svc_catalog.hdb_cron_events where trigger_name = any($1::text[]) and status = 'scheduled' and tries = 0 and scheduled_time > $2::timestamptz",
      [rescheduled, new Date(now).toISOString()],
    );
  }
  return changed.length
    ? topUpCronEvents(
        conn,
        now,
        changed.map((c) => c.name),
      )
    : 0;
}
