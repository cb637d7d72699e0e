/**
 * Event triggers: the list with pending / delivered / failed counts, a form to create one, and per
 * trigger its recent events, each event's invocation logs, redeliver and (with enable_manual) a
 * manual invocation. /console/events and /console/events/<trigger name>
 *
 * Counts, events and logs are read from svc_catalog.event_log and event_invocation_logs (the
 * tables of reference/catalog-tables.md) with read-only run_sql; changes go through the metadata
 * API (create_event_trigger, with replace: true to edit one; delete_event_trigger, redeliver_event,
 * invoke_event_trigger).
 */
import { useId, useState, type FormEvent } from 'react';
import { query, runSql, sqlRows } from '../api';
import { loadMetadata, loadTables } from '../data/load';
import { qualified, sqlLiteral, tableLabel, type QualifiedName } from '../data/model';
import type { PageMeta, PageProps } from '../pages';
import { Link, navigate, useTitle } from '../router';
import { ConfirmButton, ErrorBox, headerRowsOf, headersOf, HeaderRows, InvocationLogs, Loading, PageHeader, ResultTable, Status, useAction, useAsync, type HeaderRow } from '../ui';

export const meta: PageMeta = {
  path: 'events',
  title: 'Events',
  order: 40,
  description: 'Event triggers: pending, delivered and failed events, invocation logs, redeliver',
};

interface TriggerDef {
  name: string;
  definition: { enable_manual?: boolean; insert?: unknown; update?: unknown; delete?: unknown };
  webhook?: string;
  webhook_from_env?: string;
  retry_conf?: { num_retries?: number; interval_sec?: number; timeout_sec?: number };
  headers?: unknown[];
}

interface Trigger extends TriggerDef {
  table: QualifiedName;
  pending: number;
  delivered: number;
  failed: number;
}

async function loadTriggers(): Promise<{ triggers: Trigger[]; tables: QualifiedName[] }> {
  const [md, counts] = await Promise.all([
    loadMetadata(),
    runSql(
      `select trigger_name,
              count(*) filter (where not delivered and not error and not archived) as pending,
              count(*) filter (where delivered) as delivered,
              count(*) filter (where error) as failed
         from svc_catalog.event_log group by trigger_name`,
      { readOnly: true },
    ),
  ]);
  const byName = new Map(sqlRows(counts).map((r) => [r.trigger_name, r]));
  const triggers: Trigger[] = [];
  for (const t of md.tables) {
    for (const et of (t.event_triggers ?? []) as TriggerDef[]) {
      const c = byName.get(et.name);
      triggers.push({ ...et, table: qualified(t.table), pending: Number(c?.pending ?? 0), delivered: Number(c?.delivered ?? 0), failed: Number(c?.failed ?? 0) });
    }
  }
  return { triggers: triggers.sort((a, b) => a.name.localeCompare(b.name)), tables: md.tables.map((t) => qualified(t.table)) };
}

const ops = (d: TriggerDef['definition']) => [...(['insert', 'update', 'delete'] as const).filter((o) => d[o]), ...(d.enable_manual ? ['manual'] : [])].join(', ');

export default function EventsPage({ path }: PageProps) {
  const [name] = path;
  useTitle(name ? `Events · ${name}` : 'Events');
  const state = useAsync(loadTriggers, []);
  if (!state.data) return state.error ? <ErrorBox error={state.error} title="Could not load" /> : <Loading what="event triggers" />;
  const { triggers, tables } = state.data;
  const current = name ? triggers.find((t) => t.name === name) : undefined;
  return (
    <div className="layout-2">
      <aside className="sidebar" aria-label="Event triggers">
        <h2 id="event-triggers">Event triggers</h2>
        <ul aria-labelledby="event-triggers">
          <li><Link to="events" aria-current={!name ? 'page' : undefined}>All triggers</Link></li>
          {triggers.map((t) => (
            <li key={t.name}><Link to={`events/${encodeURIComponent(t.name)}`} aria-current={t.name === name ? 'page' : undefined}>{t.name}</Link></li>
          ))}
        </ul>
      </aside>
      <div>
        {!name ? (
          <TriggerList triggers={triggers} tables={tables} onChanged={state.reload} />
        ) : !current ? (
          <><PageHeader title="Event trigger" /><p>There is no event trigger named {name}.</p></>
        ) : (
          <TriggerDetail trigger={current} onChanged={state.reload} />
        )}
      </div>
    </div>
  );
}

function TriggerList({ triggers, tables, onChanged }: { triggers: Trigger[]; tables: QualifiedName[]; onChanged: () => void }) {
  return (
    <>
      <PageHeader title="Event triggers" />
      <ResultTable
        caption={`${triggers.length} event trigger${triggers.length === 1 ? '' : 's'}`}
        columns={['name', 'table', 'operations', 'webhook', 'pending', 'delivered', 'failed']}
        rows={triggers.map((t) => [t.name, tableLabel(t.table), ops(t.definition), t.webhook ?? `from env ${t.webhook_from_env}`, t.pending, t.delivered, t.failed])}
      />
      <section aria-labelledby="create-trigger">
        <h2 id="create-trigger">Create an event trigger</h2>
        <TriggerForm tables={tables} onSaved={onChanged} />
      </section>
    </>
  );
}

type OpSpec = { columns?: unknown; payload?: unknown };

/**
 * The form of a trigger: name and table when creating; webhook, operations, retries and headers
 * always. Editing sends create_event_trigger with replace: true (same name and table); an
 * operation that stays on keeps its column and payload spec.
 */
function TriggerForm({ tables, trigger, onSaved }: { tables: QualifiedName[]; trigger?: Trigger; onSaved: (name: string) => void }) {
  const id = useId();
  const action = useAction();
  const d = trigger?.definition;
  const [name, setName] = useState(trigger?.name ?? '');
  const [table, setTable] = useState(trigger ? tableLabel(trigger.table) : '');
  const [webhook, setWebhook] = useState(trigger?.webhook ?? '');
  const [opsOn, setOpsOn] = useState(d
    ? { insert: !!d.insert, update: !!d.update, delete: !!d.delete, manual: !!d.enable_manual }
    : { insert: true, update: false, delete: false, manual: false });
  const [retries, setRetries] = useState(String(trigger?.retry_conf?.num_retries ?? 0));
  const [interval, setRetryInterval] = useState(String(trigger?.retry_conf?.interval_sec ?? 10));
  const [timeout, setTimeoutSec] = useState(String(trigger?.retry_conf?.timeout_sec ?? 60));
  const [headers, setHeaders] = useState<HeaderRow[]>(() => headerRowsOf(trigger?.headers));
  // the columns whose change fires an update event ('*': any column)
  const [updateCols, setUpdateCols] = useState<string[] | '*'>(() => {
    const c = (d?.update as OpSpec | undefined)?.columns;
    return Array.isArray(c) ? c.map(String) : '*';
  });
  const chosen = trigger ? trigger.table : tables.find((x) => tableLabel(x) === table);
  const columns = useAsync(async () => {
    if (!chosen || !opsOn.update) return [];
    const t = (await loadTables(chosen.schema)).find((x) => x.name === chosen.name);
    return t ? t.columns.map((c) => c.name) : [];
  }, [chosen?.schema, chosen?.name, opsOn.update]);

  const spec = (op: 'insert' | 'update' | 'delete') => {
    if (!opsOn[op]) return {};
    const before = (d?.[op] as OpSpec | undefined) ?? { columns: '*' };
    return { [op]: op === 'update' ? { ...before, columns: updateCols } : before };
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const t = trigger ? trigger.table : tables.find((x) => tableLabel(x) === table);
    void action.run(async () => {
      await query('create_event_trigger', {
        name,
        table: t,
        ...(trigger?.webhook_from_env && !webhook ? { webhook_from_env: trigger.webhook_from_env } : { webhook }),
        ...spec('insert'), ...spec('update'), ...spec('delete'),
        enable_manual: opsOn.manual,
        retry_conf: { num_retries: Number(retries), interval_sec: Number(interval), timeout_sec: Number(timeout) },
        headers: headersOf(headers),
        ...(trigger ? { replace: true } : {}),
      });
      onSaved(name);
    }, trigger ? `Saved event trigger ${name}` : `Created event trigger ${name}`);
  };
  const check = (k: keyof typeof opsOn, label: string) => (
    <label><input type="checkbox" checked={opsOn[k]} onChange={(e) => setOpsOn({ ...opsOn, [k]: e.target.checked })} /> {label}</label>
  );
  return (
    <>
      <form onSubmit={submit} aria-label={trigger ? `Edit event trigger ${trigger.name}` : 'Create an event trigger'}>
        {!trigger && (
          <>
            <div className="field"><label htmlFor={`${id}-name`}>Name</label><input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} required pattern="[A-Za-z0-9_\-]+" /></div>
            <div className="field">
              <label htmlFor={`${id}-table`}>Table</label>
              <select id={`${id}-table`} value={table} onChange={(e) => setTable(e.target.value)} required>
                <option value="">choose a tracked table</option>
                {tables.map((t) => <option key={tableLabel(t)} value={tableLabel(t)}>{tableLabel(t)}</option>)}
              </select>
            </div>
          </>
        )}
        <div className="field">
          <label htmlFor={`${id}-webhook`}>Webhook URL <span className="hint">({'{{ENV_VAR}}'} templates allowed{trigger?.webhook_from_env ? `; empty keeps the URL from env ${trigger.webhook_from_env}` : ''})</span></label>
          <input id={`${id}-webhook`} value={webhook} onChange={(e) => setWebhook(e.target.value)} required={!trigger?.webhook_from_env} />
        </div>
        <fieldset className="checks"><legend>Operations</legend>{check('insert', 'Insert')}{check('update', 'Update')}{check('delete', 'Delete')}{check('manual', 'Manual (invoke from the console)')}</fieldset>
        {opsOn.update && (
          <fieldset className="checks">
            <legend>Columns whose update fires the trigger</legend>
            <label><input type="checkbox" checked={updateCols === '*'} onChange={(e) => setUpdateCols(e.target.checked ? '*' : [])} /> Any column</label>
            {updateCols !== '*' && (columns.data ?? []).map((c) => (
              <label key={c}><input type="checkbox" checked={updateCols.includes(c)} onChange={(e) => setUpdateCols(e.target.checked ? [...updateCols, c] : updateCols.filter((x) => x !== c))} /> {c}</label>
            ))}
          </fieldset>
        )}
        <div className="inline">
          <div className="field"><label htmlFor={`${id}-retries`}>Retries</label><input id={`${id}-retries`} type="number" min={0} value={retries} onChange={(e) => setRetries(e.target.value)} /></div>
          <div className="field"><label htmlFor={`${id}-interval`}>Retry interval (s)</label><input id={`${id}-interval`} type="number" min={0} value={interval} onChange={(e) => setRetryInterval(e.target.value)} /></div>
          <div className="field"><label htmlFor={`${id}-timeout`}>Timeout (s)</label><input id={`${id}-timeout`} type="number" min={1} value={timeout} onChange={(e) => setTimeoutSec(e.target.value)} /></div>
        </div>
        <HeaderRows id={id} headers={headers} onChange={setHeaders} />
        <p><button type="submit" className="primary" disabled={action.busy}>{trigger ? 'Save event trigger' : 'Create event trigger'}</button></p>
      </form>
      <ErrorBox error={action.error} title={trigger ? 'Not saved' : 'Not created'} />
      <Status message={action.done} />
    </>
  );
}

type EventFilter = 'pending' | 'delivered' | 'failed' | 'all';
const FILTER_SQL: Record<EventFilter, string> = {
  pending: 'not delivered and not error and not archived',
  delivered: 'delivered',
  failed: 'error',
  all: 'true',
};

function TriggerDetail({ trigger, onChanged }: { trigger: Trigger; onChanged: () => void }) {
  const id = useId();
  const action = useAction();
  const [filter, setFilter] = useState<EventFilter>('all');
  const [selected, setSelected] = useState<string>();
  const [manual, setManual] = useState('{}');
  const events = useAsync(async () => sqlRows(await runSql(
    `select id, payload->>'op' as op, case when delivered then 'delivered' when error then 'failed' when archived then 'archived' else 'pending' end as status,
            tries, created_at, next_retry_at
       from svc_catalog.event_log where trigger_name = ${sqlLiteral(trigger.name)} and ${FILTER_SQL[filter]}
      order by created_at desc limit 100`,
    { readOnly: true },
  )), [trigger.name, filter]);
  const logs = useAsync(async () => selected === undefined ? [] : sqlRows(await runSql(
    `select status, created_at, request::text as request, response::text as response
       from svc_catalog.event_invocation_logs where event_id = ${sqlLiteral(selected)} order by created_at desc limit 50`,
    { readOnly: true },
  )), [selected]);
  const act = (fn: () => Promise<unknown>, done: string) => action.run(fn, done).then(() => {
    events.reload();
    logs.reload();
    onChanged();
  });
  const rows = events.data ?? [];

  return (
    <>
      <PageHeader title={`Event trigger ${trigger.name}`}>
        <ConfirmButton label="Delete trigger" danger disabled={action.busy}
          question={<>Delete the event trigger <strong>{trigger.name}</strong>? Its pending events are archived, not delivered.</>}
          onConfirm={() => void action.run(async () => { await query('delete_event_trigger', { name: trigger.name }); onChanged(); navigate('events'); })} />
      </PageHeader>
      <p>On {tableLabel(trigger.table)} ({ops(trigger.definition)}) → {trigger.webhook ?? `webhook from env ${trigger.webhook_from_env}`}; {trigger.pending} pending, {trigger.delivered} delivered, {trigger.failed} failed.</p>
      <ErrorBox error={action.error} />
      <Status message={action.done} />
      <details className="edit">
        <summary>Edit trigger</summary>
        <TriggerForm key={trigger.name} tables={[]} trigger={trigger} onSaved={onChanged} />
      </details>

      {trigger.definition.enable_manual && (
        <section aria-labelledby={`${id}-invoke`}>
          <h2 id={`${id}-invoke`}>Invoke manually</h2>
          <div className="field"><label htmlFor={`${id}-payload`}>Payload (JSON)</label><textarea id={`${id}-payload`} className="code" rows={3} value={manual} onChange={(e) => setManual(e.target.value)} /></div>
          <button type="button" disabled={action.busy} onClick={() => act(() => query('invoke_event_trigger', { name: trigger.name, payload: JSON.parse(manual) }), 'Invoked')}>Invoke</button>
        </section>
      )}

      <section aria-labelledby={`${id}-events`}>
        <h2 id={`${id}-events`}>Events</h2>
        <div className="inline">
          <label htmlFor={`${id}-filter`}>Show</label>
          <select id={`${id}-filter`} value={filter} onChange={(e) => setFilter(e.target.value as EventFilter)}>
            <option value="all">all</option><option value="pending">pending</option><option value="delivered">delivered</option><option value="failed">failed</option>
          </select>
          <button type="button" onClick={events.reload}>Refresh</button>
        </div>
        <ErrorBox error={events.error} />
        {events.loading && !events.data ? <Loading what="events" /> : (
          <ResultTable caption={`${rows.length} event${rows.length === 1 ? '' : 's'} (newest first, at most 100)`}
            columns={['id', 'op', 'status', 'tries', 'created_at', 'next_retry_at']}
            rows={rows.map((r) => [r.id, r.op, r.status, r.tries, r.created_at, r.next_retry_at])}
            actions={(i) => (
              <>
                <button type="button" aria-label={`Invocations of event ${rows[i]!.id}`} onClick={() => setSelected(rows[i]!.id!)}>Logs</button>
                <button type="button" aria-label={`Redeliver event ${rows[i]!.id}`} disabled={action.busy} onClick={() => act(() => query('redeliver_event', { event_id: rows[i]!.id }), `Event ${rows[i]!.id} queued for redelivery`)}>Redeliver</button>
              </>
            )} />
        )}
      </section>

      {selected !== undefined && (
        <section aria-labelledby={`${id}-logs`}>
          <h2 id={`${id}-logs`}>Invocations of event {selected}</h2>
          <ErrorBox error={logs.error} />
          <InvocationLogs logs={logs.data} />
        </section>
      )}
    </>
  );
}
