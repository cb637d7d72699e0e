/**
 * Remote schemas: the list, a form to add one, reload and remove. /console/remote-schemas
 *
 * Definitions come from export_metadata; changes go through add_remote_schema,
 * reload_remote_schema and remove_remote_schema.
 */
import { useId, useState, type FormEvent } from 'react';
import { query } from '../api';
import { loadMetadata } from '../data/load';
import type { PageMeta } from '../pages';
import { useTitle } from '../router';
import { ConfirmButton, ErrorBox, Loading, PageHeader, ResultTable, Status, useAction, useAsync } from '../ui';

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
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [forward, setForward] = useState(false);
  const [timeout, setTimeoutSec] = useState('60');
  const act = (fn: () => Promise<unknown>, done: string) => action.run(fn, done).then(state.reload);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void act(() => query('add_remote_schema', { name, definition: { url, forward_client_headers: forward, timeout_seconds: Number(timeout) } }), `Added remote schema ${name}`);
  };
  const remotes = state.data ?? [];
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
              <button type="button" aria-label={`Reload ${remotes[i]!.name}`} disabled={action.busy} onClick={() => act(() => query('reload_remote_schema', { name: remotes[i]!.name }), `Reloaded ${remotes[i]!.name}`)}>Reload</button>
              <ConfirmButton label={`Remove ${remotes[i]!.name}`} danger disabled={action.busy} question={<>Remove the remote schema <strong>{remotes[i]!.name}</strong>?</>}
                onConfirm={() => void act(() => query('remove_remote_schema', { name: remotes[i]!.name }), `Removed ${remotes[i]!.name}`)} />
            </>
          )} />
      )}
      <section aria-labelledby={`${id}-h`}>
        <h2 id={`${id}-h`}>Add a remote schema</h2>
        <form onSubmit={submit}>
          <div className="field"><label htmlFor={`${id}-name`}>Name</label><input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} required /></div>
          <div className="field"><label htmlFor={`${id}-url`}>GraphQL server URL</label><input id={`${id}-url`} type="url" value={url} onChange={(e) => setUrl(e.target.value)} required /></div>
          <div className="field"><label htmlFor={`${id}-timeout`}>Timeout (s)</label><input id={`${id}-timeout`} type="number" min={1} value={timeout} onChange={(e) => setTimeoutSec(e.target.value)} /></div>
          <div className="checks"><label><input type="checkbox" checked={forward} onChange={(e) => setForward(e.target.checked)} /> Forward the client's headers</label></div>
          <p><button type="submit" className="primary" disabled={action.busy}>Add remote schema</button></p>
        </form>
      </section>
    </>
  );
}
