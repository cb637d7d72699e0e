/**
 * create_cron_trigger, delete_cron_trigger, create_scheduled_event (SPEC §4.9; delivery lives in
 * src/scheduled on the subsystem of src/delivery).
 */
import { traceparentOf } from '../../core/tracing.js';
import { SvcError } from '../../errors.js';
import { checkWebhookUrl, resolveHeaders } from '../../delivery/http.js';
import { parseCron } from '../../scheduled/cron.js';
import { DEFAULT_ST_RETRY_CONF, resolveWebhookConf, type STRetryConf, type WebhookConf } from '../../scheduled/queue.js';
import { ArgReader, jsonKind, reader } from '../../document/args.js';
import { SUCCESS, defineOp } from '../registry.js';
import type { CronTriggerMetadata } from '../../model/metadata.js';
import { parseHeaders, parseRetryConf } from './eventTriggers.js';
import { checkStorable } from '../storable.js';

/** `webhook`: a URL (with `{{ENV}}` templates) or `{from_env}`; it must resolve, now, to an http(s) URL. */
function parseWebhook(a: ArgReader): WebhookConf {
  const path = a.sub('webhook');
  const v = a.required('webhook');
  let conf: WebhookConf;
  if (typeof v === 'string') conf = v;
  else if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const r = new ArgReader(v, path, 'UrlFromEnv');
    conf = { from_env: r.name('from_env') };
    r.done();
  } else throw new SvcError(400, 'parse-failed', `parsing WebhookURL failed, expected String or Object, but encountered ${jsonKind(v)}`, path);
  let url: string;
  try {
    url = resolveWebhookConf(conf);
  } catch (e) {
    throw e instanceof SvcError ? e.withPath(path) : e;
  }
  checkWebhookUrl(url, path);
  return conf;
}

function checkHeaders(headers: CronTriggerMetadata['headers'], path: string): void {
  try {
    resolveHeaders(headers);
  } catch (e) {
    throw e instanceof SvcError ? e.withPath(path) : e;
  }
}

const readRetryConf = (a: ArgReader): STRetryConf => parseRetryConf(a.raw('retry_conf'), a.sub('retry_conf'), { ...DEFAULT_ST_RETRY_CONF }, 'timeout_seconds');

const sameRetryConf = (x: STRetryConf, y: STRetryConf) => (Object.keys(y) as Array<keyof STRetryConf>).every((k) => x[k] === y[k]);

/**
 * A cron trigger's definition (create_cron_trigger's args but `replace`, or an entry of an imported
 * metadata document), validated and in export order: name, webhook, schedule, include_in_metadata,
 * payload, retry_conf (left out when it is the default), headers, comment.
 */
export function parseCronTrigger(a: ArgReader): CronTriggerMetadata {
  const name = a.name('name');
  const webhook = parseWebhook(a);
  const schedule = a.string('schedule');
  try {
    parseCron(schedule);
  } catch (e) {
    throw new SvcError(
      400,
      'parse-failed',
      `invalid cron expression ${JSON.stringify(schedule)}: ${e instanceof Error ? e.message : String(e)}`,
      a.sub('schedule'),
    );
  }
  const include = a.required('include_in_metadata');
  if (typeof include !== 'boolean')
    throw new SvcError(400, 'parse-failed', `parsing Bool failed, expected Boolean, but encountered ${jsonKind(include)}`, a.sub('include_in_metadata'));
  const payload = a.raw('payload');
  const retryConf = readRetryConf(a);
  const headers = parseHeaders(a.raw('headers'), a.sub('headers'));
  checkHeaders(headers, a.sub('headers'));
  const comment = a.string('comment', true);
  const out: CronTriggerMetadata = { name, webhook, schedule, include_in_metadata: include };
  if (payload !== undefined && payload !== null) out.payload = payload;
  if (!sameRetryConf(retryConf, DEFAULT_ST_RETRY_CONF)) out.retry_conf = { ...retryConf };
  if (headers?.length) out.headers = headers;
  if (comment !== undefined) out.comment = comment;
  return out;
}

defineOp('create_cron_trigger', {
  kind: 'metadata',
  async run(ctx, args) {
    checkStorable(args, '$');
    const a = reader(args);
    const def = parseCronTrigger(a);
    const replace = a.bool('replace', false);
    a.done();
    const list = ctx.state.metadata.cron_triggers;
    const i = list.findIndex((c) => c.name === def.name);
    if (replace) {
      if (i < 0) throw new SvcError(400, 'not-exists', `cron trigger with name: ${def.name} does not exist`, ctx.path);
      list[i] = def;
    } else {
      if (i >= 0) throw new SvcError(400, 'already-exists', `cron trigger with name: ${def.name} already exists`, ctx.path);
      list.push(def);
    }
    return SUCCESS;
  },
});

defineOp('delete_cron_trigger', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const name = a.name('name');
    a.done();
    const md = ctx.state.metadata;
    if (!md.cron_triggers.some((c) => c.name === name)) throw new SvcError(400, 'not-exists', `cron trigger with name: ${name} does not exist`, ctx.path);
    // its events go with it (hdb_cron_events references the trigger on delete cascade)
    md.cron_triggers = md.cron_triggers.filter((c) => c.name !== name);
    return SUCCESS;
  },
});

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-](\d{2})(?::?(\d{2}))?)?$/i;

/**
 * An ISO 8601 timestamp (a zone-less one is UTC), as PostgreSQL text; undefined when it is not one:
 * every field in its range, a UTC offset of at most ±14:59 (real offsets are within ±14:00) and a
 * year from 0001 to 9999, so that PostgreSQL always accepts it.
 */
export function parseTimestamp(s: string): string | undefined {
  const m = TIMESTAMP.exec(s.trim());
  if (!m) return undefined;
  const [y, mo, d, h, mi, sec, oh, om] = [1, 2, 3, 4, 5, 6, 9, 10].map((i) => Number(m[i] ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth || h > 23 || mi > 59 || sec > 59 || oh > 14 || om > 59) return undefined;
  return m[8] ? s.trim() : `${s.trim()}Z`;
}

defineOp('create_scheduled_event', {
  kind: 'data',
  locksMetadata: () => false,
  async run(ctx, args) {
    checkStorable(args, '$');
    const a = reader(args);
    const webhook = parseWebhook(a);
    const at = a.string('schedule_at');
    const scheduledAt = parseTimestamp(at);
    if (scheduledAt === undefined)
      throw new SvcError(400, 'parse-failed', `schedule_at: not an ISO 8601 timestamp: ${JSON.stringify(at)}`, a.sub('schedule_at'));
    const payload = a.raw('payload');
    const retryConf = readRetryConf(a);
    const headers = parseHeaders(a.raw('headers'), a.sub('headers')) ?? [];
    checkHeaders(headers, a.sub('headers'));
    const comment = a.string('comment', true);
    a.done();
    const r = await ctx.conn.query(
      `insert into svc_catalog.hdb_scheduled_events (webhook_conf, scheduled_time, payload, retry_conf, header_conf, comment, created_at, trace_context)
       values ($1::json, $2::timestamptz, $3::json, $4::json, $5::json, $6, now() at time zone 'UTC', $7) returning id`,
      // trace_context: the request's traceparent (tracing on, sampled), the parent of the delivery tries' spans
      [
        JSON.stringify(webhook),
        scheduledAt,
        payload === undefined ? null : JSON.stringify(payload),
        JSON.stringify(retryConf),
        JSON.stringify(headers),
        comment ?? null,
        traceparentOf(ctx.span) ?? null,
      ],
    );
    ctx.state.queuedDeliveries = true;
    return { ...SUCCESS, event_id: String((r.rows[0] as { id: unknown }).id) };
  },
});

/**
 * delete_scheduled_event (Hasura v2's op): `{type: "one_off" | "cron", event_id}` removes one event
 * with its invocation logs, whatever its state (an event in flight is not retried: its write-back
 * finds no row). Like upstream, an unknown id is not an error.
 */
defineOp('delete_scheduled_event', {
  kind: 'data',
  locksMetadata: () => false,
  async run(ctx, args) {
    checkStorable(args, '$');
    const a = reader(args);
    const type = a.string('type');
    const id = a.string('event_id');
    a.done();
    if (type !== 'one_off' && type !== 'cron')
      throw new SvcError(400, 'parse-failed', `expected "one_off" or "cron", but found ${JSON.stringify(type)}`, a.sub('type'));
    const table = type === 'cron' ? 'svc_catalog.hdb_cron_events' : 'svc_catalog.hdb_scheduled_events';
    await ctx.conn.query(`delete from ${table} where id = $1`, [id]);
    return SUCCESS;
  },
});
