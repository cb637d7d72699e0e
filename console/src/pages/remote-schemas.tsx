/**
 * Remote schemas: the list, a form to add one, edit, reload and remove. /console/remote-schemas
 *
 * Definitions come from export_metadata; changes go through add_remote_schema,
 * reload_remote_schema and remove_remote_schema (an edit is remove + add in one bulk: the server
 * has no update_remote_schema).
 */
import { useId, useState, type FormEvent } from 'react';
import { bulk, query } from '../api';
import { loadMetadata } from '../data/load';
import type { PageMeta } from '../pages';
import { useTitle } from '../router';
import { ConfirmButton, ErrorBox, headerRowsOf, headersOf, HeaderRows, Loading, PageHeader, ResultTable, Status, useAction, useAsync, type HeaderRow } from '../ui';

export const meta: PageMeta = {
  path: 'remote-schemas',
  title: 'Remote schemas',
  order: 70,
  description: 'Other GraphQL servers merged into the API',
};

interface RemoteSchema {
  name: string;
  definition: { url?: string; url_from_env?: string; forward_client_headers?: boolean; timeout_seconds?: number; headers?: unknown[] };
  comment?: string | null;
}

export default function RemoteSchemasPage() {
  useTitle(meta.title);
  const id = useId();
  const action = useAction();
  const state = useAsync(async () => ((await loadMetadata()).remote_schemas ?? []) as RemoteSchema[], []);
  const [editing, setEditing] = useState<string>();
  const act = (fn: () => Promise<unknown>, done: string) => action.run(fn, done).then(state.reload);
  const remotes = state.data ?? [];
  const current = remotes.find((r) => r.name === editing);
  return (
    <>
      <PageHeader title="Remote schemas" />
      <ErrorBox error={action.error} />
      <Status message={action.done} />
      <ErrorBox error={state.error} title="Could not load" />
      {!state.data && state.loading ? <Loading what="remote schemas" /> : (
        <ResultTable caption={`${remotes.length} remote schema${remotes.length === 1 ? '' : 's'}`}
          columns={['name', 'url', 'forwards client headers', 'timeout (s)', 'comment']}
          rows={remotes.map((r) => [r.name, r.definition.url ?? `from env ${r.definition.url_from_env}`, r.definition.forward_client_headers ?? false, r.definition.timeout_seconds ?? 60, r.comment ?? null])}
          actions={(i) => (
            <>
              <button type="button" aria-label={`Edit ${remotes[i]!.name}`} disabled={action.busy} onClick={() => setEditing(remotes[i]!.name)}>Edit</button>
              <button type="button" aria-label={`Reload ${remotes[i]!.name}`} disabled={action.busy} onClick={() => act(() => query('reload_remote_schema', { name: remotes[i]!.name }), `Reloaded ${remotes[i]!.name}`)}>Reload</button>
              <ConfirmButton label={`Remove ${remotes[i]!.name}`} danger disabled={action.busy} question={<>Remove the remote schema <strong>{remotes[i]!.name}</strong>?</>}
                onConfirm={() => void act(() => query('remove_remote_schema', { name: remotes[i]!.name }), `Removed ${remotes[i]!.name}`)} />
            </>
          )} />
      )}
      {current && (
        <section aria-labelledby={`${id}-edit`}>
          <h2 id={`${id}-edit`}>Edit remote schema {current.name}</h2>
          <p className="hint">Saved as remove and add in one transaction: a remote relationship that uses this schema must be dropped first.</p>
          <RemoteForm key={current.name} existing={current} busy={action.busy} onCancel={() => setEditing(undefined)}
            onSubmit={(r) => act(() => bulk([
              { type: 'remove_remote_schema', args: { name: current.name } },
              { type: 'add_remote_schema', args: r },
            ]), `Saved remote schema ${r.name}`).then(() => setEditing(undefined))} />
        </section>
      )}
      <section aria-labelledby={`${id}-h`}>
        <h2 id={`${id}-h`}>Add a remote schema</h2>
        <RemoteForm busy={action.busy} onSubmit={(r) => act(() => query('add_remote_schema', r), `Added remote schema ${r.name}`)} />
      </section>
    </>
  );
}

/** add_remote_schema's arguments from a form: name, URL (or its environment variable), headers, forwarding, timeout, comment. */
function RemoteForm({ existing, busy, onSubmit, onCancel }: {
  existing?: RemoteSchema;
  busy: boolean;
  onSubmit: (args: { name: string; definition: Record<string, unknown>; comment?: string }) => void;
  onCancel?: () => void;
}) {
  const id = useId();
  const d = existing?.definition;
  const [name, setName] = useState(existing?.name ?? '');
  const [url, setUrl] = useState(d?.url ?? d?.url_from_env ?? '');
  const [fromEnv, setFromEnv] = useState(!!d?.url_from_env);
  const [forward, setForward] = useState(!!d?.forward_client_headers);
  const [timeout, setTimeoutSec] = useState(String(d?.timeout_seconds ?? 60));
  const [headers, setHeaders] = useState<HeaderRow[]>(() => headerRowsOf(d?.headers));
  const [comment, setComment] = useState(existing?.comment ?? '');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onSubmit({
      name,
      definition: { ...(fromEnv ? { url_from_env: url } : { url }), forward_client_headers: forward, timeout_seconds: Number(timeout), headers: headersOf(headers) },
      ...(comment ? { comment } : {}),
    });
  };
  return (
    <form onSubmit={submit} aria-label={existing ? `Edit remote schema ${existing.name}` : 'Add a remote schema'}>
      <div className="field"><label htmlFor={`${id}-name`}>Name</label><input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} required /></div>
      <div className="field">
        <label htmlFor={`${id}-url`}>{fromEnv ? 'Environment variable with the URL' : 'GraphQL server URL'}</label>
        <input id={`${id}-url`} type={fromEnv ? 'text' : 'url'} value={url} onChange={(e) => setUrl(e.target.value)} required />
      </div>
      <div className="checks">
        <label><input type="checkbox" checked={fromEnv} onChange={(e) => setFromEnv(e.target.checked)} /> The URL is in an environment variable</label>
        <label><input type="checkbox" checked={forward} onChange={(e) => setForward(e.target.checked)} /> Forward the client's headers</label>
      </div>
      <div className="field"><label htmlFor={`${id}-timeout`}>Timeout (s)</label><input id={`${id}-timeout`} type="number" min={1} value={timeout} onChange={(e) => setTimeoutSec(e.target.value)} /></div>
      <HeaderRows id={id} headers={headers} onChange={setHeaders} />
      <div className="field"><label htmlFor={`${id}-comment`}>Comment</label><input id={`${id}-comment`} value={comment} onChange={(e) => setComment(e.target.value)} /></div>
      <div className="inline">
        <button type="submit" className="primary" disabled={busy}>{existing ? 'Save remote schema' : 'Add remote schema'}</button>
        {onCancel && <button type="button" onClick={onCancel}>Cancel</button>}
      </div>
    </form>
  );
}
