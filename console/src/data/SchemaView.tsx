/** The tables of one schema, tracked or not; track/untrack; relationships suggested by foreign keys. */
import { bulk, query } from '../api';
import { Link } from '../router';
import { ConfirmButton, ErrorBox, PageHeader, Status, useAction } from '../ui';
import { trackTable, untrackTable } from './load';
import { KIND_LABEL, sameTable, suggestRelationships, tableLabel, type Metadata, type TableInfo } from './model';

export function tableLink(t: { schema: string; name: string }, tab = 'browse'): string {
  return `data/schema/${encodeURIComponent(t.schema)}/tables/${encodeURIComponent(t.name)}/${tab}`;
}

export function SchemaView({ schema, tables, allTables, metadata, onChanged }: {
  schema: string;
  tables: TableInfo[];
  /** tables of every schema (relationships may cross schemas) */
  allTables: TableInfo[];
  metadata: Metadata;
  onChanged: () => void;
}) {
  const action = useAction();
  const isTracked = (t: TableInfo) => metadata.tables.some((m) => sameTable(m.table, t));
  const untracked = tables.filter((t) => !isTracked(t));
  const suggestions = suggestRelationships(allTables, metadata).filter((s) => s.table.schema === schema || allTables.some((t) => t.schema === schema && sameTable(t, s.table)));
  const act = (fn: () => Promise<unknown>, done: string) => action.run(fn, done).then((ok) => ok && onChanged());

  return (
    <>
      <PageHeader title={`Schema ${schema}`}>
        <button type="button" disabled={action.busy || untracked.length === 0}
          onClick={() => act(() => bulk(untracked.map((t) => ({ type: 'track_table', args: { table: { schema: t.schema, name: t.name } } }))), `Tracked ${untracked.length === 1 ? '1 table or view' : `${untracked.length} tables and views`}`)}>
          Track all ({untracked.length})
        </button>
      </PageHeader>
      <ErrorBox error={action.error} />
      <Status message={action.done} />
      <div className="table-wrap">
        <table className="grid">
          <caption>Tables and views of {schema}</caption>
          <thead>
            <tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Columns</th><th scope="col">Tracked</th><th scope="col">Action</th></tr>
          </thead>
          <tbody>
            {tables.map((t) => {
              const tracked = isTracked(t);
              return (
                <tr key={t.name}>
                  <th scope="row">{tracked ? <Link to={tableLink(t)}>{t.name}</Link> : t.name}</th>
                  <td>{KIND_LABEL[t.kind] ?? t.kind}</td>
                  <td>{t.columns.length}</td>
                  <td>{tracked ? <span className="badge on">tracked</span> : <span className="badge">not tracked</span>}</td>
                  <td>
                    {tracked ? (
                      <ConfirmButton label="Untrack" danger disabled={action.busy}
                        question={<>Untrack <strong>{tableLabel(t)}</strong>? Its relationships and permissions are removed from the metadata; the data stays.</>}
                        onConfirm={() => act(() => untrackTable(t), `Untracked ${tableLabel(t)}`)} />
                    ) : (
                      <button type="button" disabled={action.busy} aria-label={`Track ${tableLabel(t)}`}
                        onClick={() => act(() => trackTable(t), `Tracked ${tableLabel(t)}`)}>Track</button>
                    )}
                  </td>
                </tr>
              );
            })}
            {tables.length === 0 && <tr><td colSpan={5} className="empty">no tables or views in this schema</td></tr>}
          </tbody>
        </table>
      </div>

      <h2 id="suggested">Suggested relationships</h2>
      {suggestions.length === 0 ? (
        <p className="muted">None: every foreign key between tracked tables already has its relationships.</p>
      ) : (
        <>
          <p>
            <button type="button" disabled={action.busy} onClick={() => act(() => bulk(suggestions.map((s) => s.op)), `Added ${suggestions.length} relationship${suggestions.length === 1 ? '' : 's'}`)}>
              Add all suggested relationships ({suggestions.length})
            </button>
          </p>
          <ul aria-labelledby="suggested">
            {suggestions.map((s) => (
              <li key={`${s.kind}:${tableLabel(s.table)}.${s.name}`}>
                <span className="badge">{s.kind}</span> <strong>{tableLabel(s.table)}.{s.name}</strong> <span className="muted">via {s.via}</span>{' '}
                <button type="button" className="link" disabled={action.busy} aria-label={`Add ${s.kind} relationship ${s.name} on ${tableLabel(s.table)}`}
                  onClick={() => act(() => query(s.op.type, s.op.args), `Added ${tableLabel(s.table)}.${s.name}`)}>Add</button>
              </li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}
