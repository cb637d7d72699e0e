/** Metadata: export, import (replace), reload, clear; the inconsistent objects, dropped one by one or all. */
import { useId, useState, type ChangeEvent } from 'react';
import { query } from '../api';
import { describeObject, dropOperation, type InconsistentObject } from '../metadata/inconsistency';
import type { PageMeta } from '../pages';
import { useTitle } from '../router';
import { ConfirmButton, ErrorBox, JsonBlock, Loading, PageHeader, Status, useAction, useAsync } from '../ui';

export const meta: PageMeta = {
  path: 'metadata',
  title: 'Metadata',
  order: 90,
  description: 'Export, import, reload and clear the metadata; inconsistent objects',
};

interface Inconsistency {
  is_consistent: boolean;
  inconsistent_objects: InconsistentObject[];
}

export default function MetadataPage() {
  useTitle(meta.title);
  const id = useId();
  const action = useAction();
  const report = useAsync(() => query<Inconsistency>('get_inconsistent_metadata', {}), []);
  const [exported, setExported] = useState<unknown>();
  const [pending, setPending] = useState<{ name: string; metadata: unknown }>();
  const [fileError, setFileError] = useState<string>();
  const [reloadRemote, setReloadRemote] = useState(false);

  const act = (fn: () => Promise<unknown>, done: string) => action.run(fn, done).then((ok) => {
    report.reload();
    return ok;
  });

  const exportMetadata = () => act(async () => {
    const md = await query('export_metadata', {});
    setExported(md);
    const url = URL.createObjectURL(new Blob([JSON.stringify(md, null, 2)], { type: 'application/json' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = 'metadata.json';
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }, 'Metadata exported (metadata.json)');

  const chooseFile = async (e: ChangeEvent<HTMLInputElement>) => {
    setFileError(undefined);
    setPending(undefined);
    const file = e.target.files?.[0];
    if (!file) return;
    try {
      const md = JSON.parse(await file.text());
      if (!md || typeof md !== 'object' || Array.isArray(md)) throw new Error('the file is not a JSON object');
      setPending({ name: file.name, metadata: md });
    } catch (err) {
      setFileError(`${file.name}: ${(err as Error).message}`);
    }
  };

  const objects = report.data?.inconsistent_objects ?? [];
  return (
    <>
      <PageHeader title="Metadata" />
      <ErrorBox error={action.error} />
      <Status message={action.done} />

      <section aria-labelledby={`${id}-manage`}>
        <h2 id={`${id}-manage`}>Manage</h2>
        <div className="inline">
          <button type="button" onClick={exportMetadata} disabled={action.busy}>Export metadata</button>
          <label><input type="checkbox" checked={reloadRemote} onChange={(e) => setReloadRemote(e.target.checked)} /> reload remote schemas too</label>
          <button type="button" disabled={action.busy} onClick={() => act(() => query('reload_metadata', { reload_remote_schemas: reloadRemote }), 'Metadata reloaded')}>Reload metadata</button>
          <ConfirmButton label="Clear metadata" danger disabled={action.busy}
            question="Clear all metadata? Every table is untracked and every relationship, permission and trigger is removed. The data in the database stays."
            onConfirm={() => act(() => query('clear_metadata', {}), 'Metadata cleared')} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-file`}>Import metadata <span className="hint">(a file exported before; it replaces the current metadata)</span></label>
          <input id={`${id}-file`} type="file" accept="application/json,.json" onChange={chooseFile} aria-describedby={fileError ? `${id}-file-error` : undefined} />
          {fileError && <p id={`${id}-file-error`} className="error" role="alert">{fileError}</p>}
          {pending && (
            <div className="inline">
              <ConfirmButton label={`Import ${pending.name}`} disabled={action.busy}
                question={<>Replace the current metadata with <strong>{pending.name}</strong>?</>} confirmLabel="Replace metadata"
                onConfirm={() => act(() => query('replace_metadata', pending.metadata), `Imported ${pending.name}`).then((ok) => ok && setPending(undefined))} />
            </div>
          )}
        </div>
        {exported !== undefined && (
          <details>
            <summary>Exported metadata</summary>
            <JsonBlock value={exported} label="exported metadata" />
          </details>
        )}
      </section>

      <section aria-labelledby={`${id}-inconsistent`}>
        <h2 id={`${id}-inconsistent`}>Inconsistent objects</h2>
        <ErrorBox error={report.error} />
        {!report.data && report.loading ? <Loading what="the consistency report" /> : report.data?.is_consistent ? (
          <p className="status">The metadata is consistent with the database.</p>
        ) : report.data && (
          <>
            <p>These objects of the metadata no longer match the database and are left out of the GraphQL schema.</p>
            <div className="table-wrap">
              <table className="grid">
                <caption>{objects.length} inconsistent object{objects.length === 1 ? '' : 's'}</caption>
                <thead><tr><th scope="col">Type</th><th scope="col">Object</th><th scope="col">Reason</th><th scope="col">Action</th></tr></thead>
                <tbody>
                  {objects.map((o, i) => {
                    const op = dropOperation(o);
                    return (
                      <tr key={i}>
                        <td>{o.type}</td>
                        <td>{describeObject(o)}</td>
                        <td>{o.reason}</td>
                        <td>
                          {op ? (
                            <ConfirmButton label="Drop" danger disabled={action.busy} question={`Drop the ${o.type} ${describeObject(o)} from the metadata?`}
                              onConfirm={() => act(() => query(op.type, op.args), `Dropped ${o.type} ${describeObject(o)}`)} />
                          ) : <span className="muted">use Drop all</span>}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
            <p>
              <ConfirmButton label="Drop all inconsistent objects" danger disabled={action.busy}
                question="Drop every inconsistent object from the metadata?"
                onConfirm={() => act(() => query('drop_inconsistent_metadata', {}), 'Dropped all inconsistent objects')} />
            </p>
          </>
        )}
      </section>
    </>
  );
}
