/**
 * create_event_trigger, delete_event_trigger, redeliver_event, invoke_event_trigger (delivery
 * lives in src/events/queue.ts on the subsystem of src/delivery).
 */
import { SvcError, notExists } from '../../errors.js';
import { checkWebhookUrl, resolveUrlTemplate } from '../../delivery/http.js';
import { fromEnv, unsetVariables } from '../../env.js';

import { ArgReader, expectArray, parseColumnList, reader } from '../../document/args.js';
import { SUCCESS, defineOp, type OpContext } from '../registry.js';
import type { EventTriggerDef } from '../../model/metadata.js';
import { findTable } from './tables.js';
import { checkStorable, unstorable } from '../storable.js';
import { MAX_TRIGGER_NAME_LENGTH, TRIGGER_NAME_RE } from '../../events/triggers.js';
import { MAX_DELAY_SEC, MAX_INT32, MAX_TIMEOUT_SEC } from '../../core/limits.js';

function parseSpec(v: unknown, path: string) {
  if (v === undefined || v === null) return undefined;
  const a = new ArgReader(v, path);
  const columns = parseColumnList(a.required('columns'), a.sub('columns'));
  const payload = a.has('payload') ? parseColumnList(a.raw('payload'), a.sub('payload')) : undefined;
  a.done();
  return payload !== undefined ? { columns, payload } : { columns };
}

/**
 * A retry configuration: the integer members of `defaults` (each optional), each within its range
 * of RETRY_CONF_RANGES (the timeout at least 1 s and at most MAX_TIMEOUT_SEC); anything else is a
 * 400 naming the member.
 */
export function parseRetryConf<T extends Record<string, number>>(v: unknown, path: string, defaults: T, timeoutKey: keyof T & string): T {
  const out: Record<string, number> = { ...defaults };
  if (v === undefined || v === null) return out as T;
  const r = new ArgReader(v, path);
  for (const k of Object.keys(defaults)) out[k] = r.int(k) ?? defaults[k]!;
  r.done();
  for (const [k, n] of Object.entries(out)) {
    const [min, max] = k === timeoutKey ? [1, MAX_TIMEOUT_SEC] : (RETRY_CONF_RANGES[k] ?? [0, MAX_INT32]);
    if (n < min || n > max) throw new SvcError(400, 'parse-failed', `${k} must be an integer from ${min} to ${max}`, `${path}.${k}`);
  }
  return out as T;
}

/** The ranges of retry configuration members (seconds, or a count). */
export const RETRY_CONF_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  num_retries: [0, 1_000_000],
  interval_sec: [0, MAX_DELAY_SEC],
  retry_interval_seconds: [0, MAX_DELAY_SEC],
  tolerance_seconds: [0, MAX_DELAY_SEC],
};

/** A header name is an HTTP token; a value has no control characters but tab (no CR/LF: no header injection). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE_BAD = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/** Configured headers: each `{name, value}` or `{name, value_from_env}`. */
export function parseHeaders(v: unknown, path: string): EventTriggerDef['headers'] {
  if (v === undefined || v === null) return undefined;
  return expectArray(v, path).map((h, i) => {
    const a = new ArgReader(h, `${path}[${i}]`);
    const name = a.name('name');
    const value = a.string('value', true);
    const fromEnv = a.string('value_from_env', true);
    a.done();
    if (!HEADER_NAME.test(name)) throw new SvcError(400, 'parse-failed', `invalid header name ${JSON.stringify(name)}`, `${path}[${i}].name`);
    if (value !== undefined && (HEADER_VALUE_BAD.test(value) || unstorable(value))) {
      throw new SvcError(400, 'parse-failed', 'a header value must not contain control characters (CR, LF, NUL …) or lone surrogates', `${path}[${i}].value`);
    }
    if ((value === undefined) === (fromEnv === undefined))
      throw new SvcError(400, 'parse-failed', 'expecting exactly one of "value" or "value_from_env"', `${path}[${i}]`);
    return value !== undefined ? { name, value } : { name, value_from_env: fromEnv! };
  });
}

/** upstream's rule for event trigger names (its messages; aeson parse failures of the args, at `$`) */
export function checkTriggerName(name: string): void {
  if (!TRIGGER_NAME_RE.test(name)) throw new SvcError(400, 'parse-failed', 'only alphanumeric and underscore and hyphens allowed for name', '$');
  if (name.length > MAX_TRIGGER_NAME_LENGTH)
    throw new SvcError(400, 'parse-failed', `event trigger name can be at most ${MAX_TRIGGER_NAME_LENGTH} characters`, '$');
}

defineOp('create_event_trigger', {
  kind: 'metadata',
  async run(ctx, args) {
    checkStorable(args, '$');
    const a = reader(args);
    const name = a.name('name');
    checkTriggerName(name);
    const table = a.table();
    const webhook = a.string('webhook', true);
    const webhookFromEnv = a.string('webhook_from_env', true);
    const insert = parseSpec(a.raw('insert'), a.sub('insert'));
    const update = parseSpec(a.raw('update'), a.sub('update'));
    const del = parseSpec(a.raw('delete'), a.sub('delete'));
    const enableManual = a.bool('enable_manual', false);
    const headers = parseHeaders(a.raw('headers'), a.sub('headers'));
    const replace = a.bool('replace', false);
    const retry_conf = parseRetryConf(a.raw('retry_conf'), a.sub('retry_conf'), { num_retries: 0, interval_sec: 10, timeout_sec: 60 }, 'timeout_sec');
    a.done();
    if (!insert && !update && !del && !enableManual) {
      throw new SvcError(400, 'parse-failed', 'atleast one amongst insert/update/delete/enable_manual spec must be provided', '$');
    }
    if ((webhook === undefined) === (webhookFromEnv === undefined)) {
      throw new SvcError(400, 'parse-failed', 'must provide webhook or webhook_from_env', '$');
    }
    // the URL (after {{ENV}} templates) must be an http(s) URL; checked now, not at the first delivery.
    // A webhook_from_env or header variable that is not set makes the trigger inconsistent: the
    // schema builder says so when the runner rebuilds (constraint-violation, the trigger in
    // `internal`), as for every object a metadata change makes inconsistent.
    if (webhook !== undefined) checkWebhookUrl(resolveUrlTemplate(webhook), a.sub('webhook'));
    else if (!unsetVariables({ names: [webhookFromEnv] }).length) checkWebhookUrl(fromEnv(webhookFromEnv!), a.sub('webhook_from_env'));
    const t = findTable(ctx, table);
    const md = ctx.state.metadata;
    const existing = md.tables.find((x) => x.event_triggers.some((e) => e.name === name));
    if (existing && !replace) throw new SvcError(400, 'already-exists', `Event trigger with name ${JSON.stringify(name)} already exists`, ctx.path);
    if (existing) existing.event_triggers = existing.event_triggers.filter((e) => e.name !== name);
    const def: EventTriggerDef = {
      name,
      definition: { enable_manual: enableManual, ...(insert ? { insert } : {}), ...(update ? { update } : {}), ...(del ? { delete: del } : {}) },
      retry_conf,
      ...(webhook !== undefined ? { webhook } : { webhook_from_env: webhookFromEnv }),
      ...(headers ? { headers } : {}),
    };
    t.event_triggers.push(def);
    return SUCCESS;
  },
});

defineOp('delete_event_trigger', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const name = a.name('name');
    a.done();
    const t = ctx.state.metadata.tables.find((x) => x.event_triggers.some((e) => e.name === name));
    if (!t) throw notExists(`event trigger ${JSON.stringify(name)} does not exist`, ctx.path);
    t.event_triggers = t.event_triggers.filter((e) => e.name !== name);
    return SUCCESS;
  },
});

/** The trigger named `name` in the request's metadata, or upstream's not-exists error. */
function findTrigger(ctx: OpContext, name: string) {
  for (const t of ctx.state.metadata.tables) {
    const def = t.event_triggers.find((e) => e.name === name);
    if (def) return { table: t.table, def };
  }
  throw notExists(`event trigger ${JSON.stringify(name)} does not exist`, ctx.path);
}

defineOp('redeliver_event', {
  kind: 'data',
  locksMetadata: () => false,
  async run(ctx, args) {
    checkStorable(args, '$');
    const a = reader(args);
    const id = a.string('event_id');
    a.done();
    const r = await ctx.conn.query(
      'select (locked and locked_until is not null and locked_until > now()) as busy from svc_catalog.event_log where id = $1 for update',
      [id],
    );
    if (!r.rows.length) throw notExists('event not found', ctx.path);
    const busy = (r.rows[0] as { busy: unknown }).busy;
    if (busy === true || busy === 't') throw new SvcError(400, 'busy', 'event is already being processed', ctx.path);
    await ctx.conn.query(
      'update svc_catalog.event_log set next_retry_at = null, tries = 0, error = false, delivered = false, archived = false, locked = false, locked_by = null, locked_until = null where id = $1',
      [id],
    );
    ctx.state.queuedDeliveries = true;
    return SUCCESS;
  },
});

defineOp('invoke_event_trigger', {
  kind: 'data',
  locksMetadata: () => false,
  async run(ctx, args) {
    checkStorable(args, '$');
    const a = reader(args);
    const name = a.name('name');
    const payload = a.required('payload');
    a.done();
    const { table, def } = findTrigger(ctx, name);
    if (!def.definition.enable_manual) throw new SvcError(400, 'not-supported', 'manual mode is not enabled for event trigger', ctx.path);
    const event = { op: 'MANUAL', data: { old: null, new: payload }, session_variables: { ...ctx.session.vars } };
    const r = await ctx.conn.query(
      'insert into svc_catalog.event_log (schema_name, table_name, trigger_name, payload) values ($1, $2, $3, $4::jsonb) returning id',
      [table.schema, table.name, name, JSON.stringify(event)],
    );
    ctx.state.queuedDeliveries = true;
    return { event_id: String((r.rows[0] as { id: unknown }).id) };
  },
});
