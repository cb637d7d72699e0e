/**
 * Actions: the list with handler, kind and roles; a JSON definition form to create one (the
 * arguments of create_action); permissions per role; the recent asynchronous action log.
 * /console/actions and /console/actions/<name>
 *
 * Definitions come from export_metadata; the log from svc_catalog.hdb_action_log (read-only
 * run_sql); changes go through create_action, drop_action, create_action_permission and
 * drop_action_permission.
 */
import { useId, useState, type FormEvent } from 'react';
import { query, runSql, sqlRows } from '../api';
import { loadMetadata } from '../data/load';
import { sqlLiteral } from '../data/model';
import type { PageMeta, PageProps } from '../pages';
import { Link, navigate, useTitle } from '../router';
import { ConfirmButton, ErrorBox, JsonBlock, Loading, PageHeader, ResultTable, Status, useAction, useAsync } from '../ui';

export const meta: PageMeta = {
  path: 'actions',
  title: 'Actions',
  order: 60,
  description: 'Custom queries and mutations served by HTTP handlers',
};

interface ActionDef {
  name: string;
  definition: { kind?: string; type?: string; handler: string; output_type: string; arguments?: Array<{ name: string; type: string }>; forward_client_headers?: boolean };
  permissions?: Array<{ role: string }>;
  comment?: string | null;
}

const TEMPLATE = JSON.stringify({
  kind: 'synchronous',
  type: 'mutation',
  arguments: [{ name: 'input', type: 'String!' }],
  output_type: 'SomeOutput',
  handler: 'http://127.0.0.1:3000/handler',
  forward_client_headers: false,
}, null, 2);

export default function ActionsPage({ path }: PageProps) {
  const [name] = path;
  useTitle(name ? `Actions · ${name}` : 'Actions');
  const state = useAsync(async () => ((await loadMetadata()).actions ?? []) as ActionDef[], []);
  if (!state.data) return state.error ? <ErrorBox error={state.error} title="Could not load" /> : <Loading what="actions" />;
  const actions = [...state.data].sort((a, b) => a.name.localeCompare(b.name));
  const current = name ? actions.find((a) => a.name === name) : undefined;
  return (
    <div className="layout-2">
      <aside className="sidebar" aria-label="Actions">
        <h2 id="actions-nav">Actions</h2>
        <ul aria-labelledby="actions-nav">
          <li><Link to="actions" aria-current={!name ? 'page' : undefined}>All actions</Link></li>
          {actions.map((a) => <li key={a.name}><Link to={`actions/${encodeURIComponent(a.name)}`} aria-current={a.name === name ? 'page' : undefined}>{a.name}</Link></li>)}
        </ul>
      </aside>
      <div>
        {!name ? (
          <>
            <PageHeader title="Actions" />
            <ResultTable caption={`${actions.length} action${actions.length === 1 ? '' : 's'}`}
              columns={['name', 'type', 'kind', 'output', 'handler', 'roles']}
              rows={actions.map((a) => [a.name, a.definition.type ?? 'mutation', a.definition.kind ?? 'synchronous', a.definition.output_type, a.definition.handler, (a.permissions ?? []).map((p) => p.role).join(', ')])} />
            <CreateAction onCreated={state.reload} />
          </>
        ) : !current ? (
          <><PageHeader title="Action" /><p>There is no action named {name}.</p></>
        ) : <ActionDetail action={current} onChanged={state.reload} />}
      </div>
    </div>
  );
}

function CreateAction({ onCreated }: { onCreated: () => void }) {
  const id = useId();
  const action = useAction();
  const [name, setName] = useState('');
  const [definition, setDefinition] = useState(TEMPLATE);
  const [invalid, setInvalid] = useState<string>();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    let def: unknown;
    try {
      def = JSON.parse(definition);
      setInvalid(undefined);
    } catch (err) {
      setInvalid(`the definition is not JSON: ${(err as Error).message}`);
      return;
    }
    void action.run(async () => {
      await query('create_action', { name, definition: def });
      onCreated();
    }, `Created action ${name}`);
  };
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Create an action</h2>
      <p>The output and argument types are custom types (set them with set_custom_types, e.g. on the Metadata page by importing metadata).</p>
      <form onSubmit={submit}>
        <div className="field"><label htmlFor={`${id}-name`}>Name</label><input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} required /></div>
        <div className="field">
          <label htmlFor={`${id}-def`}>Definition (JSON)</label>
          <textarea id={`${id}-def`} className="code" rows={10} value={definition} onChange={(e) => setDefinition(e.target.value)} spellCheck={false} aria-invalid={invalid ? true : undefined} aria-describedby={invalid ? `${id}-def-error` : undefined} />
          {invalid && <p id={`${id}-def-error`} className="error" role="alert">{invalid}</p>}
        </div>
        <p><button type="submit" className="primary" disabled={action.busy}>Create action</button></p>
      </form>
      <ErrorBox error={action.error} title="Not created" />
      <Status message={action.done} />
    </section>
  );
}

function ActionDetail({ action: a, onChanged }: { action: ActionDef; onChanged: () => void }) {
  const id = useId();
  const action = useAction();
  const [role, setRole] = useState('');
  const log = useAsync(async () => sqlRows(await runSql(
    `select id, status, created_at, response_received_at, errors::text as errors from svc_catalog.hdb_action_log where action_name = ${sqlLiteral(a.name)} order by created_at desc limit 50`,
    { readOnly: true },
  )), [a.name]);
  const act = (fn: () => Promise<unknown>, done: string) => action.run(fn, done).then(onChanged);
  const rows = log.data ?? [];
  return (
    <>
      <PageHeader title={`Action ${a.name}`}>
        <ConfirmButton label="Drop action" danger disabled={action.busy} question={<>Drop the action <strong>{a.name}</strong> and its logs?</>}
          onConfirm={() => void action.run(async () => { await query('drop_action', { name: a.name, clear_data: true }); onChanged(); navigate('actions'); })} />
      </PageHeader>
      <ErrorBox error={action.error} />
      <Status message={action.done} />
      <JsonBlock label="definition" value={a.definition} />
      <section aria-labelledby={`${id}-perm`}>
        <h2 id={`${id}-perm`}>Permissions</h2>
        <ul>
          {(a.permissions ?? []).map((p) => (
            <li key={p.role}>{p.role} <button type="button" aria-label={`Remove the permission of ${p.role}`} disabled={action.busy}
              onClick={() => act(() => query('drop_action_permission', { action: a.name, role: p.role }), `Removed ${p.role}`)}>Remove</button></li>
          ))}
          {(a.permissions ?? []).length === 0 && <li className="muted">only admin may run it</li>}
        </ul>
        <form className="inline" onSubmit={(e) => { e.preventDefault(); void act(() => query('create_action_permission', { action: a.name, role }), `Allowed ${role}`); }}>
          <label htmlFor={`${id}-role`}>Role</label>
          <input id={`${id}-role`} value={role} onChange={(e) => setRole(e.target.value)} required />
          <button type="submit" disabled={action.busy}>Allow role</button>
        </form>
      </section>
      {a.definition.kind === 'asynchronous' && (
        <section aria-labelledby={`${id}-log`}>
          <h2 id={`${id}-log`}>Recent asynchronous runs</h2>
          <ErrorBox error={log.error} />
          <ResultTable caption={`${rows.length} run${rows.length === 1 ? '' : 's'} (newest first, at most 50)`}
            columns={['id', 'status', 'created_at', 'response_received_at', 'errors']}
            rows={rows.map((r) => [r.id, r.status, r.created_at, r.response_received_at, r.errors])} />
        </section>
      )}
    </>
  );
}
