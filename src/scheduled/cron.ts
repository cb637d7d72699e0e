/**
 * Cron triggers' events: every trigger keeps a window of CRON_WINDOW future rows in
 * `svc_catalog.hdb_cron_events` (upstream keeps about 100). Generating is idempotent across
 * processes: the rows are inserted with `on conflict (trigger_name, scheduled_time) do nothing`, so
 * two processes topping up the same trigger at once never create an event twice. A generator worker
 * in every `svc serve` process tops the windows up; metadata changes (create, replace, import) top
 * up the triggers they touch in their own transaction.
 */
import { Cron } from 'croner';
import type { Queryable } from '../db/db.js';
import type { Logger } from '../core/logger.js';
import type { Worker } from '../background.js';
import type { Clock } from '../core/clock.js';

/** future events kept per cron trigger */
export const CRON_WINDOW = 100;

/** A 5-field UTC cron expression, or an Error saying why not. */
export function parseCron(expr: string): Cron {
  const fields = expr.trim().split(/\s+/);
  if (fields.length !== 5) throw new Error(`expected 5 fields (minute hour day-of-month month day-of-week), found ${fields.length}`);
  return new Cron(expr, { mode: '5-part', timezone: 'UTC', paused: true });
}

/** The next `n` times of `expr` strictly after `after`. */
export function cronTimes(expr: string, after: Date, n: number): Date[] {
  return n > 0 ? parseCron(expr).nextRuns(n, after) : [];
}

const WINDOWS = `
select t.name, t.cron_schedule,
  (select count(*)::int from svc_catalog.hdb_cron_events e where e.trigger_name = t.name and e.scheduled_time > $1::timestamptz) as upcoming,
  (select (extract(epoch from max(e.scheduled_time)) * 1000)::float8 from svc_catalog.hdb_cron_events e where e.trigger_name = t.name) as last_ms
from svc_catalog.hdb_cron_triggers t
where $2::text[] is null or t.name = any($2::text[])`;

const INSERT = `
insert into svc_catalog.hdb_cron_events (trigger_name, scheduled_time, created_at)
select o.name, o.at, now() at time zone 'UTC'
  from unnest($1::text[], $2::timestamptz[]) as o(name, at)
 where exists (select 1 from svc_catalog.hdb_cron_triggers t where t.name = o.name)
on conflict (trigger_name, scheduled_time) do nothing`;

/**
 * Tops up the window of future events of the cron triggers named (all when undefined) as of `now`;
 * returns how many rows this call inserted.
 */
export async function topUpCronEvents(q: Queryable, now: number, names?: string[]): Promise<number> {
  const r = await q.query(WINDOWS, [new Date(now).toISOString(), names ?? null]);
  const triggers: string[] = [];
  const times: string[] = [];
  for (const row of r.rows as Array<{ name: string; cron_schedule: string; upcoming: unknown; last_ms: unknown }>) {
    const missing = CRON_WINDOW - Number(row.upcoming);
    if (missing <= 0) continue;
    const from = Math.max(now, row.last_ms === null ? 0 : Number(row.last_ms));
    let next: Date[];
    try {
      next = cronTimes(row.cron_schedule, new Date(from), missing);
    } catch {
      continue; // checked when stored; a row edited by hand gets no events
    }
    for (const t of next) {
      triggers.push(row.name);
      times.push(t.toISOString());
    }
  }
  if (!triggers.length) return 0;
  const ins = await q.query(INSERT, [triggers, times]);
  return Number(ins.rowCount ?? 0);
}

export interface GeneratorStats {
  generated: number;
}

/** The worker that keeps every cron trigger's window full (each `intervalMs`, and at start). */
export class CronGenerator implements Worker {
  readonly name = 'cron-generator';
  readonly stats: GeneratorStats = { generated: 0 };
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(private readonly o: { db: Queryable; log: Logger; clock: Clock; intervalMs: number }) {}

  async start(): Promise<void> {
    await this.tick();
    this.timer = setInterval(() => void this.tick(), this.o.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One top-up of every trigger (also called after start-up and by tests). */
  tick(): Promise<void> {
    this.running ??= (async () => {
      try {
        const n = await topUpCronEvents(this.o.db, this.o.clock());
        this.stats.generated += n;
        if (n) this.o.log.debug({ type: 'scheduled-trigger', detail: { generated: n } }, `generated ${n} cron events`);
      } catch (e) {
        this.o.log.warn({ type: 'scheduled-trigger', detail: { error: e instanceof Error ? e.message : String(e) } }, 'generating cron events failed');
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }
}
