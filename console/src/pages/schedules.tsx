/**
 * Scheduled triggers: cron triggers (with their upcoming and past events) and one-off scheduled
 * events, each event's invocation logs; forms to create a cron trigger and a one-off event.
 * /console/schedules, /console/schedules/cron/<name>, /console/schedules/one-off
 *
 * Read from the catalog tables of reference/catalog-tables.md (hdb_cron_triggers, hdb_cron_events,
 * hdb_scheduled_events and their invocation logs) with read-only run_sql; changes go through the
 * metadata API (create_cron_trigger, with replace: true to edit one; delete_cron_trigger,
 * create_scheduled_event).
 */
import { useId, useState, type FormEvent } from 'react';
import { query, runSql, sqlRows } from '../api';
import { sqlLiteral } from '../data/model';
import type { PageMeta, PageProps } from '../pages';
import { Link, navigate, useTitle } from '../router';
import { ConfirmButton, ErrorBox, headerRowsOf, headersOf, HeaderRows, InvocationLogs, Loading, PageHeader, ResultTable, Status, useAction, useAsync, type HeaderRow } from '../ui';

export const meta: PageMeta = {
  path: 'schedules',
  title: 'Schedules',
  order: 50,
  description: 'Cron triggers and one-off scheduled events',
};

async function loadCronTriggers() {
  return sqlRows(await runSql(
    `select t.name, t.cron_schedule, t.webhook_conf::text as webhook_conf, t.include_in_metadata, t.comment,
            t.payload::text as payload, t.retry_conf::text as retry_conf, t.header_conf::text as header_conf,
            count(e.*) filter (where e.status = 'scheduled') as scheduled,
            count(e.*) filter (where e.status = 'delivered') as delivered,
            count(e.*) filter (where e.status in ('error', 'dead')) as failed
       from svc_catalog.hdb_cron_triggers t left join svc_catalog.hdb_cron_events e on e.trigger_name = t.name
      group by t.name order by t.name`,
    { readOnly: true },
  ));
}

/** a webhook_conf column as stored: a JSON string (the URL or template) or {from_env} */
function webhookLabel(conf: string | null): string {
  try {
    const v = JSON.parse(conf ?? 'null') as unknown;
    if (typeof v === 'string') return v;
    if (v && typeof v === 'object' && 'from_env' in v) return `from env ${(v as { from_env: string }).from_env}`;
    return JSON.stringify(v);
  } catch {
    return String(conf);
  }
}

export default function SchedulesPage({ path }: PageProps) {
  const [kind, name] = path;
  useTitle(kind === 'cron' && name ? `Schedules · ${name}` : kind === 'one-off' ? 'Schedules · one-off events' : 'Schedules');
  const state = useAsync(loadCronTriggers, []);
  if (!state.data) return state.error ? <ErrorBox error={state.error} title="Could not load" /> : <Loading what="cron triggers" />;
  const triggers = state.data;
  return (
    <div className="layout-2">
      <aside className="sidebar" aria-label="Scheduled triggers">
        <h2 id="sched-nav">Scheduled triggers</h2>
        <ul aria-labelledby="sched-nav">
          <li><Link to="schedules" aria-current={!kind ? 'page' : undefined}>Cron triggers</Link></li>
          {triggers.map((t) => (
            <li key={t.name}><Link to={`schedules/cron/${encodeURIComponent(t.name!)}`} aria-current={kind === 'cron' && t.name === name ? 'page' : undefined}>{t.name}</Link></li>
          ))}
          <li><Link to="schedules/one-off" aria-current={kind === 'one-off' ? 'page' : undefined}>One-off events</Link></li>
        </ul>
      </aside>
      <div>
        {kind === 'one-off' ? <OneOffEvents /> : kind === 'cron' && name ? (
          <CronDetail name={name} row={triggers.find((t) => t.name === name)} onChanged={state.reload} />
        ) : (
          <>
            <PageHeader title="Cron triggers" />
            <ResultTable caption={`${triggers.length} cron trigger${triggers.length === 1 ? '' : 's'}`}
              columns={['name', 'schedule', 'webhook', 'in metadata', 'scheduled', 'delivered', 'failed or dead', 'comment']}
              rows={triggers.map((t) => [t.name, t.cron_schedule, webhookLabel(t.webhook_conf), t.include_in_metadata, t.scheduled, t.delivered, t.failed, t.comment])} />
            <section aria-labelledby="create-cron">
              <h2 id="create-cron">Create a cron trigger</h2>
              <CronForm onSaved={state.reload} />
            </section>
          </>
        )}
      </div>
    </div>
  );
}

function RetryFields({ id, value, onChange }: { id: string; value: RetryConf; onChange: (v: RetryConf) => void }) {
  const num = (k: keyof RetryConf, label: string, min: number) => (
    <div className="field"><label htmlFor={`${id}-${k}`}>{label}</label><input id={`${id}-${k}`} type="number" min={min} value={value[k]} onChange={(e) => onChange({ ...value, [k]: e.target.value })} /></div>
  );
  return <div className="inline">{num('num_retries', 'Retries', 0)}{num('retry_interval_seconds', 'Retry interval (s)', 0)}{num('timeout_seconds', 'Timeout (s)', 1)}{num('tolerance_seconds', 'Tolerance (s)', 0)}</div>;
}

interface RetryConf { num_retries: string; retry_interval_seconds: string; timeout_seconds: string; tolerance_seconds: string }
const DEFAULT_RETRY: RetryConf = { num_retries: '0', retry_interval_seconds: '10', timeout_seconds: '60', tolerance_seconds: '21600' };
const retryConf = (r: RetryConf) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Number(v)]));

function parsePayload(text: string): unknown {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`the payload is not JSON: ${(e as Error).message}`);
  }
}

type CronRow = Awaited<ReturnType<typeof loadCronTriggers>>[number];

const jsonOr = <T,>(text: string | null | undefined, fallback: T): T => {
  try {
    return text ? (JSON.parse(text) as T) : fallback;
  } catch {
    return fallback;
  }
};

/** The webhook of a stored webhook_conf as the form edits it ({from_env: X} → {{X}}). */
function webhookText(conf: string | null | undefined): string {
  const v = jsonOr<unknown>(conf, '');
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && 'from_env' in v) return `{{${(v as { from_env: string }).from_env}}}`;
  return '';
}

/**
 * A cron trigger's form: creates one, or (with `existing`) edits it with create_cron_trigger
 * replace: true (the name stays).
 */
function CronForm({ existing, onSaved }: { existing?: CronRow; onSaved: () => void }) {
  const id = useId();
  const action = useAction();
  const [name, setName] = useState(existing?.name ?? '');
  const [webhook, setWebhook] = useState(webhookText(existing?.webhook_conf));
  const [schedule, setSchedule] = useState(existing?.cron_schedule ?? '* * * * *');
  const [payload, setPayload] = useState(existing?.payload && existing.payload !== 'null' ? JSON.stringify(JSON.parse(existing.payload), null, 2) : '');
  const [inMetadata, setInMetadata] = useState(existing ? existing.include_in_metadata === 'true' || existing.include_in_metadata === 't' : true);
  const [comment, setComment] = useState(existing?.comment ?? '');
  const [retry, setRetry] = useState<RetryConf>(() => {
    const r = jsonOr<Record<string, unknown>>(existing?.retry_conf, {});
    return Object.fromEntries(Object.entries(DEFAULT_RETRY).map(([k, v]) => [k, r[k] === undefined || r[k] === null ? v : String(r[k])])) as unknown as RetryConf;
  });
  const [headers, setHeaders] = useState<HeaderRow[]>(() => headerRowsOf(jsonOr(existing?.header_conf, [])));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      await query('create_cron_trigger', {
        name, webhook, schedule, payload: parsePayload(payload), include_in_metadata: inMetadata, retry_conf: retryConf(retry),
        headers: headersOf(headers), ...(comment ? { comment } : {}), ...(existing ? { replace: true } : {}),
      });
      onSaved();
    }, existing ? `Saved cron trigger ${name}` : `Created cron trigger ${name}`);
  };
  return (
    <>
      <form onSubmit={submit} aria-label={existing ? `Edit cron trigger ${existing.name}` : 'Create a cron trigger'}>
        {!existing && <div className="field"><label htmlFor={`${id}-name`}>Name</label><input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} required /></div>}
        <div className="field"><label htmlFor={`${id}-webhook`}>Webhook URL</label><input id={`${id}-webhook`} value={webhook} onChange={(e) => setWebhook(e.target.value)} required /></div>
        <div className="field"><label htmlFor={`${id}-schedule`}>Cron schedule <span className="hint">(UTC; minute hour day month weekday)</span></label><input id={`${id}-schedule`} value={schedule} onChange={(e) => setSchedule(e.target.value)} required /></div>
        <div className="field"><label htmlFor={`${id}-payload`}>Payload (JSON, optional)</label><textarea id={`${id}-payload`} className="code" rows={3} value={payload} onChange={(e) => setPayload(e.target.value)} /></div>
        <div className="field"><label htmlFor={`${id}-comment`}>Comment</label><input id={`${id}-comment`} value={comment} onChange={(e) => setComment(e.target.value)} /></div>
        <div className="checks"><label><input type="checkbox" checked={inMetadata} onChange={(e) => setInMetadata(e.target.checked)} /> Include in the exported metadata</label></div>
        <RetryFields id={id} value={retry} onChange={setRetry} />
        <HeaderRows id={id} headers={headers} onChange={setHeaders} />
        <p><button type="submit" className="primary" disabled={action.busy}>{existing ? 'Save cron trigger' : 'Create cron trigger'}</button></p>
      </form>
      <ErrorBox error={action.error} title={existing ? 'Not saved' : 'Not created'} />
      <Status message={action.done} />
    </>
  );
}

/** The events of one table (cron or one-off), newest first, with each event's invocation logs. */
function EventTable({ table, logTable, where, caption }: { table: string; logTable: string; where: string; caption: string }) {
  const id = useId();
  const [selected, setSelected] = useState<string>();
  const events = useAsync(async () => sqlRows(await runSql(
    `select id, scheduled_time, status, tries, next_retry_at, created_at from svc_catalog.${table} where ${where} order by scheduled_time desc limit 100`,
    { readOnly: true },
  )), [table, where]);
  const logs = useAsync(async () => selected === undefined ? [] : sqlRows(await runSql(
    `select status, created_at, request::text as request, response::text as response from svc_catalog.${logTable} where event_id = ${sqlLiteral(selected)} order by created_at desc limit 50`,
    { readOnly: true },
  )), [selected]);
  const rows = events.data ?? [];
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>{caption}</h2>
      <button type="button" onClick={events.reload}>Refresh</button>
      <ErrorBox error={events.error} />
      {events.loading && !events.data ? <Loading what="events" /> : (
        <ResultTable caption={`${rows.length} event${rows.length === 1 ? '' : 's'} (latest scheduled first, at most 100)`}
          columns={['id', 'scheduled_time', 'status', 'tries', 'next_retry_at', 'created_at']}
          rows={rows.map((r) => [r.id, r.scheduled_time, r.status, r.tries, r.next_retry_at, r.created_at])}
          actions={(i) => <button type="button" aria-label={`Invocations of event ${rows[i]!.id}`} onClick={() => setSelected(rows[i]!.id!)}>Logs</button>} />
      )}
      {selected !== undefined && (
        <>
          <h3>Invocations of event {selected}</h3>
          <ErrorBox error={logs.error} />
          <InvocationLogs logs={logs.data} />
        </>
      )}
    </section>
  );
}

function CronDetail({ name, row, onChanged }: { name: string; row: CronRow | undefined; onChanged: () => void }) {
  const action = useAction();
  if (!row) return <><PageHeader title="Cron trigger" /><p>There is no cron trigger named {name}.</p></>;
  return (
    <>
      <PageHeader title={`Cron trigger ${name}`}>
        <ConfirmButton label="Delete trigger" danger disabled={action.busy} question={<>Delete the cron trigger <strong>{name}</strong> and its events?</>}
          onConfirm={() => void action.run(async () => { await query('delete_cron_trigger', { name }); onChanged(); navigate('schedules'); })} />
      </PageHeader>
      <ErrorBox error={action.error} />
      <p>{row.cron_schedule} → {webhookLabel(row.webhook_conf)}{row.comment ? ` (${row.comment})` : ''}</p>
      <details className="edit">
        <summary>Edit trigger</summary>
        <CronForm key={row.name} existing={row} onSaved={onChanged} />
      </details>
      <EventTable table="hdb_cron_events" logTable="hdb_cron_event_invocation_logs" where={`trigger_name = ${sqlLiteral(name)}`} caption="Events" />
    </>
  );
}

function OneOffEvents() {
  const id = useId();
  const action = useAction();
  const [webhook, setWebhook] = useState('');
  const [at, setAt] = useState('');
  const [payload, setPayload] = useState('');
  const [comment, setComment] = useState('');
  const [retry, setRetry] = useState(DEFAULT_RETRY);
  const [tick, setTick] = useState(0);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      await query('create_scheduled_event', { webhook, schedule_at: new Date(at).toISOString(), payload: parsePayload(payload), retry_conf: retryConf(retry), ...(comment ? { comment } : {}) });
      setTick((t) => t + 1);
    }, 'Scheduled the event');
  };
  return (
    <>
      <PageHeader title="One-off scheduled events" />
      <section aria-labelledby={`${id}-h`}>
        <h2 id={`${id}-h`}>Schedule an event</h2>
        <form onSubmit={submit}>
          <div className="field"><label htmlFor={`${id}-webhook`}>Webhook URL</label><input id={`${id}-webhook`} value={webhook} onChange={(e) => setWebhook(e.target.value)} required /></div>
          <div className="field"><label htmlFor={`${id}-at`}>At <span className="hint">(your local time; stored in UTC)</span></label><input id={`${id}-at`} type="datetime-local" value={at} onChange={(e) => setAt(e.target.value)} required /></div>
          <div className="field"><label htmlFor={`${id}-payload`}>Payload (JSON, optional)</label><textarea id={`${id}-payload`} className="code" rows={3} value={payload} onChange={(e) => setPayload(e.target.value)} /></div>
          <div className="field"><label htmlFor={`${id}-comment`}>Comment</label><input id={`${id}-comment`} value={comment} onChange={(e) => setComment(e.target.value)} /></div>
          <RetryFields id={id} value={retry} onChange={setRetry} />
          <p><button type="submit" className="primary" disabled={action.busy}>Schedule event</button></p>
        </form>
        <ErrorBox error={action.error} title="Not scheduled" />
        <Status message={action.done} />
      </section>
      <EventTable key={tick} table="hdb_scheduled_events" logTable="hdb_scheduled_event_invocation_logs" where="true" caption="Events" />
    </>
  );
}
