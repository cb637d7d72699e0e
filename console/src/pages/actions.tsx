/**
 * Actions: the list; an SDL editor to create or edit one (the action as a field of
 * `type Mutation`/`type Query`, its custom types as SDL, parsed with graphql-js in the browser),
 * with handler, kind, headers and timeout; per action its permissions, a Node.js/Express handler
 * sample ("Codegen") and the recent asynchronous runs.
 * /console/actions, /console/actions/<name>[/<tab>]
 *
 * Definitions and custom types come from export_metadata; the log from svc_catalog.hdb_action_log
 * (read-only run_sql); changes go through set_custom_types with create_action or update_action in
 * one bulk, drop_action, create_action_permission and drop_action_permission.
 */
import { useId, useState, type FormEvent } from 'react';
import { bulk, query, runSql, sqlRows } from '../api';
import {
  actionToSdl, customTypesToSdl, expressHandler, mergeCustomTypes, parseActionSdl, parseTypesSdl, typesUsed, type ActionArgument, type CustomTypes,
} from '../actions/sdl';
import { loadMetadata } from '../data/load';
import { sqlLiteral } from '../data/model';
import type { PageMeta, PageProps } from '../pages';
import { Link, navigate, useTitle } from '../router';
import { ConfirmButton, ErrorBox, flash, headerRowsOf, headersOf, HeaderRows, JsonBlock, Loading, PageHeader, ResultTable, Status, useAction, useAsync, type HeaderRow } from '../ui';

export const meta: PageMeta = {
  path: 'actions',
  title: 'Actions',
  order: 60,
  description: 'Custom queries and mutations served by HTTP handlers',
};

type Header = { name: string; value?: string; value_from_env?: string };

interface ActionDef {
  name: string;
  definition: {
    kind?: string;
    type?: string;
    handler: string;
    output_type: string;
    arguments?: ActionArgument[];
    forward_client_headers?: boolean;
    headers?: Header[];
    timeout?: number;
  };
  permissions?: Array<{ role: string }>;
  comment?: string | null;
}

const TEMPLATE_ACTION = `type Mutation {
  actionName(arg1: SampleInput!): SampleOutput
}
`;
const TEMPLATE_TYPES = `type SampleOutput {
  accessToken: String!
}

input SampleInput {
  username: String!
  password: String!
}
`;

export default function ActionsPage({ path }: PageProps) {
  const [name, tab = 'definition'] = path;
  useTitle(name ? `Actions · ${name}` : 'Actions');
  const state = useAsync(async () => {
    const md = await loadMetadata();
    return { actions: (md.actions ?? []) as ActionDef[], types: (md.custom_types ?? {}) as CustomTypes };
  }, []);
  if (!state.data) return state.error ? <ErrorBox error={state.error} title="Could not load" /> : <Loading what="actions" />;
  const actions = [...state.data.actions].sort((a, b) => a.name.localeCompare(b.name));
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
            <section aria-labelledby="create-action">
              <h2 id="create-action">Create an action</h2>
              <ActionForm types={state.data.types} onSaved={(n) => {
                state.reload();
                flash(`Created action ${n}`);
                navigate(`actions/${encodeURIComponent(n)}`);
              }} />
            </section>
          </>
        ) : !current ? (
          <><PageHeader title="Action" /><p>There is no action named {name}.</p></>
        ) : <ActionDetail key={current.name} action={current} types={state.data.types} tab={tab} onChanged={state.reload} />}
      </div>
    </div>
  );
}

interface FormState {
  actionSdl: string;
  typesSdl: string;
  handler: string;
  kind: 'synchronous' | 'asynchronous';
  forward: boolean;
  timeout: string;
  headers: HeaderRow[];
}

function formOf(a: ActionDef | undefined, types: CustomTypes): FormState {
  if (!a) return { actionSdl: TEMPLATE_ACTION, typesSdl: TEMPLATE_TYPES, handler: '', kind: 'synchronous', forward: false, timeout: '', headers: [] };
  const d = a.definition;
  return {
    actionSdl: actionToSdl(a.name, d, a.comment),
    typesSdl: customTypesToSdl(types, typesUsed({ arguments: d.arguments ?? [], output_type: d.output_type }, types)),
    handler: d.handler,
    kind: d.kind === 'asynchronous' ? 'asynchronous' : 'synchronous',
    forward: !!d.forward_client_headers,
    timeout: d.timeout ? String(d.timeout) : '',
    headers: headerRowsOf(d.headers),
  };
}

/** The definition and types of the form, or the problem that stops them. */
function parseForm(f: FormState): { name: string; definition: Record<string, unknown>; types: CustomTypes; comment?: string } | { error: string } {
  try {
    const action = parseActionSdl(f.actionSdl);
    const types = parseTypesSdl(f.typesSdl);
    if (!f.handler.trim()) return { error: 'the handler URL is empty' };
    if (f.timeout.trim() && !/^[1-9]\d*$/.test(f.timeout.trim())) return { error: 'the timeout is a whole number of seconds' };
    const definition: Record<string, unknown> = {
      type: action.type,
      arguments: action.arguments,
      output_type: action.output_type,
      handler: f.handler.trim(),
      forward_client_headers: f.forward,
      headers: headersOf(f.headers),
      ...(action.type === 'mutation' ? { kind: f.kind } : {}),
      ...(f.timeout.trim() ? { timeout: Number(f.timeout) } : {}),
    };
    return { name: action.name, definition, types, ...(action.description ? { comment: action.description } : {}) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

function ActionForm({ action: existing, types, onSaved }: { action?: ActionDef; types: CustomTypes; onSaved: (name: string) => void }) {
  const id = useId();
  const act = useAction();
  const [form, setForm] = useState<FormState>(() => formOf(existing, types));
  const [touched, setTouched] = useState(false);
  const set = (patch: Partial<FormState>) => {
    setTouched(true);
    setForm((f) => ({ ...f, ...patch }));
  };
  const parsed = parseForm(form);
  const problem = 'error' in parsed ? parsed.error : existing && parsed.name !== existing.name
    ? `the action is named ${existing.name}: renaming is not possible (create a new action and drop this one)` : undefined;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (problem || 'error' in parsed) return;
    void act.run(async () => {
      await bulk([
        { type: 'set_custom_types', args: mergeCustomTypes(types, parsed.types) },
        existing
          ? { type: 'update_action', args: { name: parsed.name, definition: parsed.definition } }
          : { type: 'create_action', args: { name: parsed.name, definition: parsed.definition, ...(parsed.comment ? { comment: parsed.comment } : {}) } },
      ]);
      onSaved(parsed.name);
    }, existing ? `Saved action ${parsed.name}` : `Created action ${parsed.name}`);
  };
  const isQuery = !('error' in parsed) && parsed.definition.type === 'query';
  return (
    <form onSubmit={submit} aria-label={existing ? `Edit action ${existing.name}` : 'Create an action'}>
      <div className="sdl-row">
        <div className="field">
          <label htmlFor={`${id}-action`}>Action definition <span className="hint">(GraphQL SDL: one field of type Mutation or Query)</span></label>
          <textarea id={`${id}-action`} className="code" rows={7} value={form.actionSdl} spellCheck={false} onChange={(e) => set({ actionSdl: e.target.value })} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-types`}>Type definitions <span className="hint">(object, input, enum and scalar types; added to the custom types)</span></label>
          <textarea id={`${id}-types`} className="code" rows={7} value={form.typesSdl} spellCheck={false} onChange={(e) => set({ typesSdl: e.target.value })} />
        </div>
      </div>
      {touched && problem && <p className="error" role="alert">{problem}</p>}
      <div className="field"><label htmlFor={`${id}-handler`}>Handler URL <span className="hint">({'{{ENV_VAR}}'} templates allowed)</span></label><input id={`${id}-handler`} type="text" value={form.handler} onChange={(e) => set({ handler: e.target.value })} placeholder="http://127.0.0.1:3000/handler" /></div>
      <div className="inline">
        <fieldset className="checks" disabled={isQuery}>
          <legend>Kind {isQuery && <span className="hint">(queries are synchronous)</span>}</legend>
          <label><input type="radio" name={`${id}-kind`} checked={form.kind === 'synchronous'} onChange={() => set({ kind: 'synchronous' })} /> Synchronous</label>
          <label><input type="radio" name={`${id}-kind`} checked={form.kind === 'asynchronous'} onChange={() => set({ kind: 'asynchronous' })} /> Asynchronous</label>
        </fieldset>
        <div className="field"><label htmlFor={`${id}-timeout`}>Timeout (s) <span className="hint">(optional)</span></label><input id={`${id}-timeout`} inputMode="numeric" size={6} value={form.timeout} onChange={(e) => set({ timeout: e.target.value })} /></div>
        <label><input type="checkbox" checked={form.forward} onChange={(e) => set({ forward: e.target.checked })} /> Forward the client's headers</label>
      </div>
      <HeaderRows id={id} headers={form.headers} onChange={(headers) => set({ headers })} />
      {!('error' in parsed) && (
        <details>
          <summary>What is sent</summary>
          <JsonBlock label="action definition sent" value={{ name: parsed.name, definition: parsed.definition }} />
        </details>
      )}
      <p><button type="submit" className="primary" disabled={act.busy}>{existing ? 'Save action' : 'Create action'}</button></p>
      <ErrorBox error={act.error} title={existing ? 'Not saved' : 'Not created'} />
      <Status message={act.done} />
    </form>
  );
}

const TABS = [
  { tab: 'definition', label: 'Definition' },
  { tab: 'codegen', label: 'Codegen' },
  { tab: 'permissions', label: 'Permissions' },
  { tab: 'runs', label: 'Runs' },
];

function ActionDetail({ action: a, types, tab, onChanged }: { action: ActionDef; types: CustomTypes; tab: string; onChanged: () => void }) {
  const action = useAction();
  const base = `actions/${encodeURIComponent(a.name)}`;
  return (
    <>
      <PageHeader title={`Action ${a.name}`}>
        <ConfirmButton label="Drop action" danger disabled={action.busy} question={<>Drop the action <strong>{a.name}</strong> and its logs?</>}
          onConfirm={() => void action.run(async () => { await query('drop_action', { name: a.name, clear_data: true }); onChanged(); navigate('actions'); })} />
      </PageHeader>
      <ErrorBox error={action.error} />
      <nav aria-label="Action" className="tabs">
        {TABS.map((t) => <Link key={t.tab} to={`${base}/${t.tab}`} aria-current={t.tab === tab ? 'page' : undefined}>{t.label}</Link>)}
      </nav>
      {tab === 'codegen' ? <Codegen action={a} types={types} />
        : tab === 'permissions' ? <ActionPermissions action={a} onChanged={onChanged} />
          : tab === 'runs' ? <Runs action={a} />
            : <ActionForm action={a} types={types} onSaved={onChanged} />}
    </>
  );
}

function Codegen({ action: a, types }: { action: ActionDef; types: CustomTypes }) {
  const code = expressHandler(a.name, a.definition, types);
  return (
    <section aria-labelledby="codegen-h">
      <h2 id="codegen-h">Handler for Node.js (Express)</h2>
      <p>A starting point for the handler at <code>{a.definition.handler}</code>: Svc POSTs the action's input and the caller's session variables to it and expects the output type as JSON (or a 4xx with {'{"message": …}'}).</p>
      <pre className="json code-sample" tabIndex={0} aria-label="handler code">{code}</pre>
    </section>
  );
}

function ActionPermissions({ action: a, onChanged }: { action: ActionDef; onChanged: () => void }) {
  const id = useId();
  const action = useAction();
  const [role, setRole] = useState('');
  const act = (fn: () => Promise<unknown>, done: string) => action.run(fn, done).then(onChanged);
  return (
    <section aria-labelledby={`${id}-perm`}>
      <h2 id={`${id}-perm`}>Permissions</h2>
      <ErrorBox error={action.error} />
      <Status message={action.done} />
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
  );
}

function Runs({ action: a }: { action: ActionDef }) {
  const log = useAsync(async () => sqlRows(await runSql(
    `select id, status, created_at, response_received_at, errors::text as errors from svc_catalog.hdb_action_log where action_name = ${sqlLiteral(a.name)} order by created_at desc limit 50`,
    { readOnly: true },
  )), [a.name]);
  const rows = log.data ?? [];
  return (
    <section aria-labelledby="runs-h">
      <h2 id="runs-h">Recent asynchronous runs</h2>
      {a.definition.kind !== 'asynchronous' && <p className="muted">A synchronous action answers at once; only asynchronous runs are logged.</p>}
      <ErrorBox error={log.error} />
      <ResultTable caption={`${rows.length} run${rows.length === 1 ? '' : 's'} (newest first, at most 50)`}
        columns={['id', 'status', 'created_at', 'response_received_at', 'errors']}
        rows={rows.map((r) => [r.id, r.status, r.created_at, r.response_received_at, r.errors])} />
    </section>
  );
}
