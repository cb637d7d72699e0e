/**
 * The create-table form: columns (type, default, nullable, unique, primary key), foreign keys,
 * check constraints and a comment; the SQL it runs is shown as it is built. Runs it with run_sql
 * and tracks the table in the same bulk (one transaction), then opens the table.
 */
import { useId, useState, type FormEvent } from 'react';
import { bulk } from '../api';
import { navigate } from '../router';
import { ErrorBox, flash, PageHeader, useAction } from '../ui';
import { checkTableSpec, createTableSql, dropTableSql, migrationName, type TableSpec } from './ddl';
import { ColumnFields, ForeignKeyFields, newColumn, newForeignKey, TypeList } from './forms';
import { tableLink } from './SchemaView';
import type { TableInfo } from './model';

export function CreateTable({ schema, tables, onCreated }: { schema: string; tables: TableInfo[]; onCreated: () => void }) {
  const id = useId();
  const action = useAction();
  const [spec, setSpec] = useState<TableSpec>(() => ({
    schema, name: '', comment: '', primaryKey: ['id'], foreignKeys: [], uniqueKeys: [], checks: [],
    columns: [{ name: 'id', type: 'serial', default: '', nullable: false, unique: false }],
  }));
  const [track, setTrack] = useState(true);
  const [submitted, setSubmitted] = useState(false);
  const set = (patch: Partial<TableSpec>) => setSpec((s) => ({ ...s, ...patch }));
  const problems = checkTableSpec(spec);
  const sql = createTableSql(spec);
  const columnNames = spec.columns.map((c) => c.name);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSubmitted(true);
    if (problems.length) return;
    const table = { schema: spec.schema, name: spec.name };
    void action.run(async () => {
      await bulk([
        { type: 'run_sql', args: { sql } },
        ...(track ? [{ type: 'track_table', args: { table } }] : []),
      ], { name: migrationName('create_table', spec.schema, spec.name), down: dropTableSql(table) });
      onCreated();
      flash(`Created ${spec.name}`);
      navigate(tableLink(table, 'modify'));
    });
  };

  return (
    <>
      <PageHeader title={`Create a table in ${schema}`} />
      <form onSubmit={submit} aria-label="Create a table" noValidate>
        <TypeList id={`${id}-types`} />
        <div className="inline">
          <div className="field"><label htmlFor={`${id}-name`}>Table name</label><input id={`${id}-name`} value={spec.name} onChange={(e) => set({ name: e.target.value })} required /></div>
          <div className="field grow"><label htmlFor={`${id}-comment`}>Comment</label><input id={`${id}-comment`} value={spec.comment} onChange={(e) => set({ comment: e.target.value })} /></div>
        </div>
        <h2>Columns</h2>
        {spec.columns.map((c, i) => (
          <ColumnFields key={i} legend={`Column ${i + 1}`} value={c} typeListId={`${id}-types`}
            onChange={(next) => set({
              columns: spec.columns.map((x, j) => (j === i ? next : x)),
              // a renamed column stays in the primary key
              primaryKey: spec.primaryKey.map((k) => (k === c.name ? next.name : k)),
            })}
            onRemove={spec.columns.length > 1 ? () => set({ columns: spec.columns.filter((_, j) => j !== i), primaryKey: spec.primaryKey.filter((k) => k !== c.name) }) : undefined}
            primaryKey={{
              checked: !!c.name && spec.primaryKey.includes(c.name),
              onChange: (v) => set({ primaryKey: v ? [...spec.primaryKey, c.name] : spec.primaryKey.filter((k) => k !== c.name) }),
            }} />
        ))}
        <p><button type="button" onClick={() => set({ columns: [...spec.columns, newColumn()] })}>Add column</button></p>
        <h2>Foreign keys</h2>
        {spec.foreignKeys.map((fk, i) => (
          <ForeignKeyFields key={i} legend={`Foreign key ${i + 1}`} value={fk} columns={columnNames} tables={tables}
            onChange={(next) => set({ foreignKeys: spec.foreignKeys.map((x, j) => (j === i ? next : x)) })}
            onRemove={() => set({ foreignKeys: spec.foreignKeys.filter((_, j) => j !== i) })} />
        ))}
        <p><button type="button" onClick={() => set({ foreignKeys: [...spec.foreignKeys, newForeignKey()] })}>Add foreign key</button></p>
        <h2>Check constraints</h2>
        {spec.checks.map((c, i) => (
          <div className="inline" key={i}>
            <label htmlFor={`${id}-check${i}`}>Check {i + 1}</label>
            <input id={`${id}-check${i}`} className="mono grow" value={c} placeholder="price > 0" onChange={(e) => set({ checks: spec.checks.map((x, j) => (j === i ? e.target.value : x)) })} />
            <button type="button" aria-label={`Remove check ${i + 1}`} onClick={() => set({ checks: spec.checks.filter((_, j) => j !== i) })}>Remove</button>
          </div>
        ))}
        <p><button type="button" onClick={() => set({ checks: [...spec.checks, ''] })}>Add check constraint</button></p>
        <div className="checks"><label><input type="checkbox" checked={track} onChange={(e) => setTrack(e.target.checked)} /> Track the table (add it to the GraphQL API)</label></div>
        <details>
          <summary>SQL</summary>
          <pre className="json" tabIndex={0} aria-label="SQL of the new table">{sql}</pre>
        </details>
        {submitted && problems.length > 0 && (
          <ul className="error" role="alert">{problems.map((p) => <li key={p}>{p}</li>)}</ul>
        )}
        <p><button type="submit" className="primary" disabled={action.busy}>Create table</button></p>
      </form>
      <ErrorBox error={action.error} title="Not created" />
    </>
  );
}
