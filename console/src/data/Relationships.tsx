/**
 * The Relationships tab of a tracked table: its object and array relationships (rename, drop), the
 * ones its foreign keys suggest, a form for a manual relationship (any tracked table, any column
 * mapping), and its remote relationships (to a field of a remote schema, joined on columns).
 */
import { useId, useState, type FormEvent } from 'react';
import { graphql, query } from '../api';
import { ConfirmButton, ErrorBox, JsonBlock, ResultTable, Status, useAction, useAsync } from '../ui';
import {
  qualified, remoteFieldOf, remoteJoinColumns, sameTable, suggestRelationships, tableLabel, type Metadata, type RelationshipEntry, type TableInfo,
} from './model';

type Run = (fn: () => Promise<unknown>, done: string) => Promise<boolean>;

function describeUsing(r: RelationshipEntry): string {
  const f = r.using.foreign_key_constraint_on;
  if (typeof f === 'string' || Array.isArray(f)) return `foreign key on ${[f].flat().join(', ')}`;
  if (f) return `foreign key ${tableLabel(qualified(f.table))}.${[f.column].flat().join(', ')}`;
  const m = r.using.manual_configuration;
  if (m) return `${tableLabel(qualified(m.remote_table))}: ${Object.entries(m.column_mapping).map(([a, b]) => `${a} → ${b}`).join(', ')}`;
  return JSON.stringify(r.using);
}

export function Relationships({ table, tables, metadata, onChanged }: { table: TableInfo; tables: TableInfo[]; metadata: Metadata; onChanged: () => void }) {
  const id = useId();
  const action = useAction();
  const md = metadata.tables.find((m) => sameTable(m.table, table));
  const run: Run = (fn, done) => action.run(fn, done).then((ok) => {
    if (ok) onChanged();
    return ok;
  });
  const tableArg = { schema: table.schema, name: table.name };
  const rels = [...(md?.object_relationships ?? []).map((r) => ({ kind: 'object', r })), ...(md?.array_relationships ?? []).map((r) => ({ kind: 'array', r }))];
  const suggestions = suggestRelationships(tables, metadata).filter((s) => sameTable(s.table, table));
  const [renaming, setRenaming] = useState<{ from: string; to: string }>();

  return (
    <>
      <ErrorBox error={action.error} title="Not changed" />
      <Status message={action.done} />
      <section aria-labelledby={`${id}-h`}>
        <h2 id={`${id}-h`}>Relationships</h2>
        <ResultTable caption={`${rels.length} relationship${rels.length === 1 ? '' : 's'} of ${tableLabel(table)}`} columns={['name', 'kind', 'using']}
          rows={rels.map(({ kind, r }) => [r.name, kind, describeUsing(r)])}
          actions={(i) => {
            const { r } = rels[i]!;
            return (
              <>
                <button type="button" aria-label={`Rename relationship ${r.name}`} disabled={action.busy} onClick={() => setRenaming({ from: r.name, to: r.name })}>Rename</button>
                <ConfirmButton text="Drop" label={`Drop relationship ${r.name}`} danger disabled={action.busy}
                  question={<>Drop the relationship <strong>{r.name}</strong>? Permissions that use it are removed too.</>}
                  onConfirm={() => void run(() => query('drop_relationship', { table: tableArg, relationship: r.name, cascade: true }), `Dropped relationship ${r.name}`)} />
              </>
            );
          }} />
        {renaming && (
          <form className="inline" aria-label={`Rename relationship ${renaming.from}`} onSubmit={(e) => {
            e.preventDefault();
            void run(() => query('rename_relationship', { table: tableArg, name: renaming.from, new_name: renaming.to }), `Renamed ${renaming.from} to ${renaming.to}`).then((ok) => ok && setRenaming(undefined));
          }}>
            <label htmlFor={`${id}-rename`}>New name of {renaming.from}</label>
            <input id={`${id}-rename`} value={renaming.to} onChange={(e) => setRenaming({ ...renaming, to: e.target.value })} required />
            <button type="submit" disabled={action.busy}>Save name</button>
            <button type="button" onClick={() => setRenaming(undefined)}>Cancel</button>
          </form>
        )}
        {suggestions.length > 0 && (
          <>
            <h3 id={`${id}-sugg`}>Suggested by foreign keys</h3>
            <ul aria-labelledby={`${id}-sugg`}>
              {suggestions.map((s) => (
                <li key={`${s.kind}:${s.name}`}>
                  <span className="badge">{s.kind}</span> <strong>{s.name}</strong> <span className="muted">via {s.via}</span>{' '}
                  <button type="button" className="link" disabled={action.busy} aria-label={`Add ${s.kind} relationship ${s.name}`}
                    onClick={() => void run(() => query(s.op.type, s.op.args), `Added relationship ${s.name}`)}>Add</button>
                </li>
              ))}
            </ul>
          </>
        )}
      </section>
      <ManualRelationship table={table} tables={tables} metadata={metadata} run={run} busy={action.busy} />
      <RemoteRelationships table={table} metadata={metadata} run={run} busy={action.busy} />
    </>
  );
}

function ManualRelationship({ table, tables, metadata, run, busy }: { table: TableInfo; tables: TableInfo[]; metadata: Metadata; run: Run; busy: boolean }) {
  const id = useId();
  const [kind, setKind] = useState<'object' | 'array'>('object');
  const [name, setName] = useState('');
  const [remote, setRemote] = useState('');
  const [mapping, setMapping] = useState<Array<{ from: string; to: string }>>([{ from: '', to: '' }]);
  const tracked = metadata.tables.map((m) => tables.find((t) => sameTable(t, m.table))).filter((t): t is TableInfo => !!t);
  const target = tracked.find((t) => `${t.schema}.${t.name}` === remote);
  const ready = !!name && !!target && mapping.every((m) => m.from && m.to);
  const setPair = (i: number, patch: Partial<{ from: string; to: string }>) => setMapping(mapping.map((m, j) => (j === i ? { ...m, ...patch } : m)));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!target) return;
    void run(() => query(`create_${kind}_relationship`, {
      table: { schema: table.schema, name: table.name }, name,
      using: { manual_configuration: { remote_table: { schema: target.schema, name: target.name }, column_mapping: Object.fromEntries(mapping.map((m) => [m.from, m.to])) } },
    }), `Added ${kind} relationship ${name}`).then((ok) => {
      if (!ok) return;
      setName('');
      setMapping([{ from: '', to: '' }]);
    });
  };
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Add a relationship</h2>
      <p className="hint">A relationship by column mapping: to any tracked table or view, with or without a foreign key.</p>
      <form onSubmit={submit} aria-label="Add a relationship">
        <div className="inline">
          <div className="field">
            <label htmlFor={`${id}-kind`}>Kind</label>
            <select id={`${id}-kind`} value={kind} onChange={(e) => setKind(e.target.value as 'object' | 'array')}>
              <option value="object">object (one row)</option>
              <option value="array">array (many rows)</option>
            </select>
          </div>
          <div className="field"><label htmlFor={`${id}-name`}>Relationship name</label><input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} required /></div>
          <div className="field">
            <label htmlFor={`${id}-remote`}>Remote table</label>
            <select id={`${id}-remote`} value={remote} onChange={(e) => setRemote(e.target.value)} required>
              <option value="">choose a tracked table</option>
              {tracked.map((t) => <option key={`${t.schema}.${t.name}`} value={`${t.schema}.${t.name}`}>{tableLabel(t)}</option>)}
            </select>
          </div>
        </div>
        {mapping.map((m, i) => (
          <div className="inline" key={i} role="group" aria-label={`Column mapping ${i + 1}`}>
            <div className="field">
              <label htmlFor={`${id}-from${i}`}>Column of {tableLabel(table)}</label>
              <select id={`${id}-from${i}`} value={m.from} onChange={(e) => setPair(i, { from: e.target.value })}>
                <option value="">choose</option>
                {table.columns.map((c) => <option key={c.name}>{c.name}</option>)}
              </select>
            </div>
            <span aria-hidden="true">→</span>
            <div className="field">
              <label htmlFor={`${id}-to${i}`}>Remote column</label>
              <select id={`${id}-to${i}`} value={m.to} onChange={(e) => setPair(i, { to: e.target.value })}>
                <option value="">choose</option>
                {(target?.columns ?? []).map((c) => <option key={c.name}>{c.name}</option>)}
              </select>
            </div>
            {mapping.length > 1 && <button type="button" aria-label={`Remove column mapping ${i + 1}`} onClick={() => setMapping(mapping.filter((_, j) => j !== i))}>Remove</button>}
          </div>
        ))}
        <div className="inline">
          <button type="button" onClick={() => setMapping([...mapping, { from: '', to: '' }])}>Add column mapping</button>
          <button type="submit" className="primary" disabled={busy || !ready}>Add relationship</button>
        </div>
      </form>
    </section>
  );
}

interface RootField {
  name: string;
  args: Array<{ name: string }>;
}

function RemoteRelationships({ table, metadata, run, busy }: { table: TableInfo; metadata: Metadata; run: Run; busy: boolean }) {
  const id = useId();
  const md = metadata.tables.find((m) => sameTable(m.table, table));
  const remoteSchemas = ((metadata.remote_schemas ?? []) as Array<{ name: string }>).map((r) => r.name);
  const existing = md?.remote_relationships ?? [];
  const [name, setName] = useState('');
  const [schema, setSchema] = useState('');
  const [columns, setColumns] = useState<string[]>([]);
  const [path, setPath] = useState('');
  const [args, setArgs] = useState<Array<{ name: string; value: string }>>([{ name: '', value: '' }]);
  // the root fields of the admin's schema (remote fields are merged into it): suggestions only
  const fields = useAsync(async () => {
    if (remoteSchemas.length === 0) return [];
    const r = await graphql({ query: '{ __schema { queryType { fields { name args { name } } } } }' });
    return ((r.data as { __schema?: { queryType?: { fields?: RootField[] } } } | undefined)?.__schema?.queryType?.fields ?? []);
  }, [remoteSchemas.join()]);
  const top = fields.data?.find((f) => f.name === path.split('.')[0]?.trim());
  const remoteField = remoteFieldOf(path, args);
  const tableArg = { schema: table.schema, name: table.name };
  const ready = !!name && !!schema && !!path.trim() && columns.length > 0;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(() => query('create_remote_relationship', { name, table: tableArg, svc_fields: columns, remote_schema: schema, remote_field: remoteField }), `Added remote relationship ${name}`)
      .then((ok) => ok && setName(''));
  };
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Remote relationships</h2>
      <ResultTable caption={`${existing.length} remote relationship${existing.length === 1 ? '' : 's'}`} columns={['name', 'remote schema', 'join columns', 'remote field']}
        rows={existing.map((r) => [r.name, r.definition.remote_schema, remoteJoinColumns(r).join(', '), JSON.stringify(r.definition.remote_field)])}
        actions={(i) => (
          <ConfirmButton text="Drop" label={`Drop remote relationship ${existing[i]!.name}`} danger disabled={busy} question={<>Drop the remote relationship <strong>{existing[i]!.name}</strong>?</>}
            onConfirm={() => void run(() => query('delete_remote_relationship', { table: tableArg, name: existing[i]!.name }), `Dropped remote relationship ${existing[i]!.name}`)} />
        )} />
      {remoteSchemas.length === 0 ? <p className="muted">Add a remote schema first (Remote schemas page).</p> : (
        <form onSubmit={submit} aria-label="Add a remote relationship">
          <div className="inline">
            <div className="field"><label htmlFor={`${id}-name`}>Name</label><input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} required /></div>
            <div className="field">
              <label htmlFor={`${id}-schema`}>Remote schema</label>
              <select id={`${id}-schema`} value={schema} onChange={(e) => setSchema(e.target.value)} required>
                <option value="">choose</option>
                {remoteSchemas.map((r) => <option key={r}>{r}</option>)}
              </select>
            </div>
            <div className="field">
              <label htmlFor={`${id}-path`}>Remote field <span className="hint">(a.b for a nested field)</span></label>
              <input id={`${id}-path`} list={`${id}-fields`} value={path} onChange={(e) => setPath(e.target.value)} required />
              <datalist id={`${id}-fields`}>{(fields.data ?? []).map((f) => <option key={f.name} value={f.name} />)}</datalist>
            </div>
          </div>
          <fieldset className="checks">
            <legend>Join columns <span className="hint">(the columns the arguments may use as $column)</span></legend>
            {table.columns.map((c) => (
              <label key={c.name}><input type="checkbox" checked={columns.includes(c.name)} onChange={(e) => setColumns(e.target.checked ? [...columns, c.name] : columns.filter((x) => x !== c.name))} /> {c.name}</label>
            ))}
          </fieldset>
          <fieldset>
            <legend>Arguments of the remote field</legend>
            <datalist id={`${id}-argnames`}>{(top?.args ?? []).map((a) => <option key={a.name} value={a.name} />)}</datalist>
            {args.map((a, i) => (
              <div className="inline" key={i} role="group" aria-label={`Argument ${i + 1}`}>
                <label htmlFor={`${id}-an${i}`}>Argument</label>
                <input id={`${id}-an${i}`} list={`${id}-argnames`} value={a.name} size={12} onChange={(e) => setArgs(args.map((x, j) => (j === i ? { ...x, name: e.target.value } : x)))} />
                <label htmlFor={`${id}-av${i}`}>Value</label>
                <input id={`${id}-av${i}`} value={a.value} size={14} placeholder="$column or a value" onChange={(e) => setArgs(args.map((x, j) => (j === i ? { ...x, value: e.target.value } : x)))} />
                {args.length > 1 && <button type="button" aria-label={`Remove argument ${i + 1}`} onClick={() => setArgs(args.filter((_, j) => j !== i))}>Remove</button>}
              </div>
            ))}
            <button type="button" onClick={() => setArgs([...args, { name: '', value: '' }])}>Add argument</button>
          </fieldset>
          <JsonBlock label="remote_field" value={remoteField} />
          <p><button type="submit" className="primary" disabled={busy || !ready}>Add remote relationship</button></p>
        </form>
      )}
    </section>
  );
}

