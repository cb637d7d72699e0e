/** The tables of one schema, tracked or not; track/untrack; relationships suggested by foreign keys. */
import { bulk, query } from '../api';
import { Link } from '../router';
import { ConfirmButton, ErrorBox, PageHeader, Status, useAction } from '../ui';
import { trackTable, untrackTable } from './load';
import { KIND_LABEL, qualified, sameTable, suggestRelationships, tableLabel, type FunctionInfo, type Metadata, type QualifiedName, type TableInfo } from './model';

export function tableLink(t: { schema: string; name: string }, tab = 'browse'): string {
  return `data/schema/${encodeURIComponent(t.schema)}/tables/${encodeURIComponent(t.name)}/${tab}`;
}

export function SchemaView({ schema, tables, allTables, functions, metadata, onChanged }: {
  schema: string;
  tables: TableInfo[];
  /** the functions of this schema */
  functions: FunctionInfo[];
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
        <Link className="button" to={`data/schema/${encodeURIComponent(schema)}/create`}>Create table</Link>
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

      <Functions functions={functions} metadata={metadata} busy={action.busy} act={act} />

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

/** The functions of the schema: tracked ones are root fields; a function returning rows of a table can be tracked. */
function Functions({ functions, metadata, busy, act }: {
  functions: FunctionInfo[];
  metadata: Metadata;
  busy: boolean;
  act: (fn: () => Promise<unknown>, done: string) => Promise<unknown>;
}) {
  const trackedFns = ((metadata.functions ?? []) as Array<{ function: string | QualifiedName }>).map((f) => qualified(f.function));
  const isTracked = (f: FunctionInfo) => trackedFns.some((t) => sameTable(t, f));
  const label = (f: FunctionInfo) => `${f.name}(${f.args.map((a) => `${a.name} ${a.type}`.trim()).join(', ')})`;
  return (
    <>
      <h2 id="functions">Functions</h2>
      {functions.length === 0 ? <p className="muted">No functions in this schema.</p> : (
        <div className="table-wrap">
          <table className="grid">
            <caption>Functions of the schema</caption>
            <thead><tr><th scope="col">Function</th><th scope="col">Returns</th><th scope="col">Volatility</th><th scope="col">Tracked</th><th scope="col">Action</th></tr></thead>
            <tbody>
              {functions.map((f) => {
                const tracked = isTracked(f);
                const trackable = !!f.returns_table;
                return (
                  <tr key={label(f)}>
                    <th scope="row">{label(f)}</th>
                    <td>{f.returns_set ? 'setof ' : ''}{f.return_type}</td>
                    <td>{f.volatility === 'v' ? 'volatile' : f.volatility === 's' ? 'stable' : 'immutable'}</td>
                    <td>{tracked ? <span className="badge on">tracked</span> : <span className="badge">not tracked</span>}</td>
                    <td>
                      {tracked ? (
                        <ConfirmButton text="Untrack" label={`Untrack function ${f.name}`} danger disabled={busy} question={<>Untrack the function <strong>{f.name}</strong>? Its root field goes away; the function stays.</>}
                          onConfirm={() => void act(() => query('untrack_function', { schema: f.schema, name: f.name }), `Untracked function ${f.name}`)} />
                      ) : trackable ? (
                        <button type="button" disabled={busy} aria-label={`Track function ${f.name}`} onClick={() => act(() => query('track_function', { schema: f.schema, name: f.name }), `Tracked function ${f.name}`)}>Track</button>
                      ) : (
                        <span className="muted">{f.first_arg_table ? 'a computed field candidate (Modify tab of its table)' : 'returns no table rows'}</span>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
