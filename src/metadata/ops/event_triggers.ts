/** create_event_trigger, delete_event_trigger (delivery lives in src/events). */
import { SvcError, notExists } from '../../errors.js';
import { ArgReader, expectArray, parseColumnList } from '../args.js';
import { SUCCESS, defineOp } from '../registry.js';
import { reader } from '../args.js';
import type { EventTriggerDef } from '../types.js';
import { findTable } from './tables.js';

function parseSpec(v: unknown, path: string) {
  if (v === undefined || v === null) return undefined;
  const a = new ArgReader(v, path);
  const columns = parseColumnList(a.required('columns'), a.sub('columns'));
  const payload = a.has('payload') ? parseColumnList(a.raw('payload'), a.sub('payload')) : undefined;
  a.done();
  return payload !== undefined ? { columns, payload } : { columns };
}

function parseHeaders(v: unknown, path: string): EventTriggerDef['headers'] {
  if (v === undefined || v === null) return undefined;
  return expectArray(v, path).map((h, i) => {
    const a = new ArgReader(h, `${path}[${i}]`);
    const name = a.name('name');
    const value = a.string('value', true);
    const fromEnv = a.string('value_from_env', true);
    a.done();
    if ((value === undefined) === (fromEnv === undefined)) throw new SvcError(400, 'parse-failed', 'expecting exactly one of "value" or "value_from_env"', `${path}[${i}]`);
    return value !== undefined ? { name, value } : { name, value_from_env: fromEnv! };
  });
}

defineOp('create_event_trigger', {
  kind: 'metadata',
  async run(ctx, args) {
    const a = reader(args);
    const name = a.name('name');
    const table = a.table();
    const webhook = a.string('webhook', true);
    const webhookFromEnv = a.string('webhook_from_env', true);
    const insert = parseSpec(a.raw('insert'), a.sub('insert'));
    const update = parseSpec(a.raw('update'), a.sub('update'));
    const del = parseSpec(a.raw('delete'), a.sub('delete'));
    const enableManual = a.bool('enable_manual', false);
    const headers = parseHeaders(a.raw('headers'), a.sub('headers'));
    const replace = a.bool('replace', false);
    const rc = a.raw('retry_conf');
    let retry_conf = { num_retries: 0, interval_sec: 10, timeout_sec: 60 };
    if (rc !== undefined && rc !== null) {
      const r = new ArgReader(rc, a.sub('retry_conf'));
      retry_conf = { num_retries: r.int('num_retries') ?? 0, interval_sec: r.int('interval_sec') ?? 10, timeout_sec: r.int('timeout_sec') ?? 60 };
      r.done();
    }
    a.done();
    if (!insert && !update && !del && !enableManual) {
      throw new SvcError(400, 'parse-failed', 'atleast one amongst insert/update/delete/enable_manual spec must be provided', '$');
    }
    if ((webhook === undefined) === (webhookFromEnv === undefined)) {
      throw new SvcError(400, 'parse-failed', 'must provide webhook or webhook_from_env', '$');
    }
    if (webhookFromEnv !== undefined && process.env[webhookFromEnv] === undefined) {
      throw new SvcError(400, 'not-exists', `environment variable ${JSON.stringify(webhookFromEnv)} not set`, ctx.path);
    }
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
