/**
 * The Modify tab of a table: rename or drop it; add, edit (rename, retype, default, nullability,
 * uniqueness) and drop columns; add and drop constraints and indexes (DDL through run_sql, which
 * carries renames into the metadata). For a tracked table also: computed fields, the enum-table
 * switch, and custom root field and column names (metadata API).
 */
import { useId, useState, type FormEvent } from 'react';
import { query } from '../api';
import { navigate } from '../router';
import { ConfirmButton, ErrorBox, flash, ResultTable, Status, useAction } from '../ui';
import {
  addColumnSql, addConstraintSql, commentTableSql, alterColumnDownSql, alterColumnSql, checkTypeName, createIndexSql, defaultConstraintName, defaultIndexName, dropColumnDownSql,
  dropColumnSql, dropConstraintSql, dropIndexSql, dropTableSql, ident, INDEX_METHODS, migrationName, qualifiedIdent, recreateTableSql, renameTableSql,
  type ColumnSpec, type ConstraintSpec, type IndexSpec,
} from './ddl';
import { ColumnFields, ForeignKeyFields, newColumn, newForeignKey, TypeList } from './forms';
import { runDdl } from './load';
import { KIND_LABEL, qualified, sameTable, tableLabel, type FunctionInfo, type Metadata, type TableInfo, type TableMetadata } from './model';
import { tableLink } from './SchemaView';

type Run = (fn: () => Promise<unknown>, done: string) => Promise<boolean>;

const CONSTRAINT_KIND: Record<string, string> = { p: 'primary key', u: 'unique', c: 'check', f: 'foreign key', x: 'exclusion' };

/** A column as the column form edits it (unique: a one-column unique constraint exists). */
function specOf(table: TableInfo, name: string): ColumnSpec & { uniqueConstraint?: string } {
  const c = table.columns.find((x) => x.name === name)!;
  const u = (table.constraints ?? []).find((k) => k.type === 'u' && k.columns.length === 1 && k.columns[0] === name);
  return { name: c.name, type: c.type, default: c.default ?? '', nullable: c.nullable, unique: !!u, uniqueConstraint: u?.name };
}

export function ModifyTable({ table, tables, functions, metadata, onChanged }: {
  table: TableInfo;
  tables: TableInfo[];
  functions: FunctionInfo[];
  metadata: Metadata;
  onChanged: () => void;
}) {
  const action = useAction();
  const md = metadata.tables.find((m) => sameTable(m.table, table));
  const isTable = table.kind === 'r' || table.kind === 'p';
  const run: Run = (fn, done) => action.run(fn, done).then((ok) => {
    if (ok) onChanged();
    return ok;
  });
  return (
    <>
      <ErrorBox error={action.error} title="Not changed" />
      <Status message={action.done} />
      {isTable ? (
        <>
          <TableSection table={table} run={run} busy={action.busy} />
          <ColumnsSection table={table} run={run} busy={action.busy} />
          <ConstraintsSection table={table} tables={tables} run={run} busy={action.busy} />
          <IndexesSection table={table} run={run} busy={action.busy} />
        </>
      ) : (
        <>
          <p>This is a {KIND_LABEL[table.kind] ?? table.kind}: change its definition with SQL (SQL runner).</p>
          <ResultTable caption={`Columns of ${tableLabel(table)}`} columns={['name', 'type', 'nullable']}
            rows={table.columns.map((c) => [c.name, c.type, c.nullable ? 'yes' : 'no'])} />
        </>
      )}
      {md && (
        <>
          <ComputedFields table={table} md={md} functions={functions} run={run} busy={action.busy} />
          <TableSettings table={table} md={md} run={run} busy={action.busy} />
        </>
      )}
    </>
  );
}

function TableSection({ table, run, busy }: { table: TableInfo; run: Run; busy: boolean }) {
  const id = useId();
  const [name, setName] = useState(table.name);
  const [comment, setComment] = useState(table.comment ?? '');
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Table</h2>
      <form className="inline" onSubmit={(e) => {
        e.preventDefault();
        void run(() => runDdl(renameTableSql(table, name), false, { name: migrationName('rename_table', table.schema, table.name), down: renameTableSql({ schema: table.schema, name }, table.name) }), '').then((ok) => {
          if (!ok) return;
          flash(`Renamed ${table.name} to ${name}`);
          navigate(tableLink({ schema: table.schema, name }, 'modify'));
        });
      }}>
        <label htmlFor={`${id}-name`}>Table name</label>
        <input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} required />
        <button type="submit" disabled={busy || name === table.name || !name}>Rename table</button>
        <ConfirmButton label="Drop table" danger disabled={busy}
          question={<>Drop the table <strong>{tableLabel(table)}</strong> and all its rows? Its relationships and permissions go too. This cannot be undone.</>}
          onConfirm={() => void run(() => runDdl(dropTableSql(table), true, { name: migrationName('drop_table', table.schema, table.name), down: recreateTableSql(table) }), '').then((ok) => {
            if (!ok) return;
            flash(`Dropped ${tableLabel(table)}`);
            navigate(`data/schema/${encodeURIComponent(table.schema)}`);
          })} />
      </form>
      <form className="inline" aria-label="Table comment" onSubmit={(e) => {
        e.preventDefault();
        void run(() => runDdl(commentTableSql(table, comment), false, {
          name: migrationName('comment_on_table', table.schema, table.name),
          down: commentTableSql(table, table.comment ?? ''),
        }), comment.trim() ? 'Saved the comment' : 'Removed the comment');
      }}>
        <label htmlFor={`${id}-comment`}>Table comment</label>
        <input id={`${id}-comment`} className="grow" value={comment} onChange={(e) => setComment(e.target.value)} />
        <button type="submit" disabled={busy || comment.trim() === (table.comment ?? '').trim()}>Save comment</button>
      </form>
    </section>
  );
}

function ColumnsSection({ table, run, busy }: { table: TableInfo; run: Run; busy: boolean }) {
  const id = useId();
  const [editing, setEditing] = useState<string>();
  const [draft, setDraft] = useState<ColumnSpec>(newColumn);
  const [adding, setAdding] = useState<ColumnSpec>(newColumn);
  const [problem, setProblem] = useState<string>();

  const save = (e: FormEvent) => {
    e.preventDefault();
    if (editing === undefined) return;
    const before = specOf(table, editing);
    const bad = !draft.name.trim() ? 'the column needs a name' : checkTypeName(draft.type);
    setProblem(bad);
    if (bad) return;
    const stmts = alterColumnSql(table, before, draft);
    if (before.unique && !draft.unique && before.uniqueConstraint) stmts.push(dropConstraintSql(table, before.uniqueConstraint));
    if (stmts.length === 0) return setEditing(undefined);
    const down = alterColumnDownSql(table, before, draft);
    void run(() => runDdl(stmts.join('\n'), false, { name: migrationName('alter_table', table.schema, table.name, 'alter_column', before.name), down: down.join('\n') }), `Saved column ${draft.name}`).then((ok) => ok && setEditing(undefined));
  };
  const add = (e: FormEvent) => {
    e.preventDefault();
    const bad = !adding.name.trim() ? 'the new column needs a name' : checkTypeName(adding.type);
    setProblem(bad);
    if (bad) return;
    void run(() => runDdl(addColumnSql(table, adding), false, { name: migrationName('alter_table', table.schema, table.name, 'add_column', adding.name), down: dropColumnSql(table, adding.name) }), `Added column ${adding.name}`).then((ok) => ok && setAdding(newColumn()));
  };

  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Columns</h2>
      <TypeList id={`${id}-types`} />
      <ResultTable caption={`Columns of ${tableLabel(table)}`} columns={['name', 'type', 'nullable', 'default', 'primary key', 'unique']}
        rows={table.columns.map((c) => [c.name, c.type, c.nullable ? 'yes' : 'no', c.default, table.primary_key.includes(c.name) ? 'yes' : '', specOf(table, c.name).unique ? 'yes' : ''])}
        actions={(i) => {
          const c = table.columns[i]!;
          return (
            <>
              <button type="button" aria-label={`Edit column ${c.name}`} disabled={busy} onClick={() => {
                setEditing(c.name);
                setDraft(specOf(table, c.name));
                setProblem(undefined);
              }}>Edit</button>
              <ConfirmButton text="Drop" label={`Drop column ${c.name}`} danger disabled={busy}
                question={<>Drop the column <strong>{c.name}</strong> and its data? Permissions and relationships that use it are removed too.</>}
                onConfirm={() => void run(() => runDdl(dropColumnSql(table, c.name), true, { name: migrationName('alter_table', table.schema, table.name, 'drop_column', c.name), down: dropColumnDownSql(table, specOf(table, c.name)) }), `Dropped column ${c.name}`)} />
            </>
          );
        }} />
      {editing !== undefined && (
        <form onSubmit={save} aria-label={`Edit column ${editing}`}>
          <ColumnFields legend={`Column ${editing}`} value={draft} onChange={setDraft} typeListId={`${id}-types`} />
          <div className="inline">
            <button type="submit" className="primary" disabled={busy}>Save column</button>
            <button type="button" onClick={() => setEditing(undefined)}>Cancel</button>
          </div>
        </form>
      )}
      <form onSubmit={add} aria-label="Add a column">
        <ColumnFields legend="New column" value={adding} onChange={setAdding} typeListId={`${id}-types`} />
        <p><button type="submit" disabled={busy}>Add column</button></p>
      </form>
      {problem && <p className="error" role="alert">{problem}</p>}
    </section>
  );
}

function ConstraintsSection({ table, tables, run, busy }: { table: TableInfo; tables: TableInfo[]; run: Run; busy: boolean }) {
  const id = useId();
  const [kind, setKind] = useState<ConstraintSpec['kind']>('unique');
  const [name, setName] = useState('');
  const [columns, setColumns] = useState<string[]>([]);
  const [expression, setExpression] = useState('');
  const [fk, setFk] = useState(newForeignKey);
  const constraints = table.constraints ?? [];
  const spec: ConstraintSpec = kind === 'check' ? { kind, name, expression } : kind === 'foreign key' ? { kind, name, fk } : { kind, name, columns };
  const ready = kind === 'check' ? !!expression.trim() : kind === 'foreign key' ? !!fk.refTable && fk.columns.every((c) => c) && fk.refColumns.every((c) => c) : columns.length > 0;

  const add = (e: FormEvent) => {
    e.preventDefault();
    // named (PostgreSQL's default name when none is given) so that the down migration can drop it
    const named = { ...spec, name: spec.name.trim() || defaultConstraintName(table, spec, constraints.map((k) => k.name)) } as ConstraintSpec;
    void run(() => runDdl(addConstraintSql(table, named), false, { name: migrationName('alter_table', table.schema, table.name, 'add_constraint', named.name), down: dropConstraintSql(table, named.name) }), `Added the ${kind} constraint`).then((ok) => {
      if (!ok) return;
      setName('');
      setColumns([]);
      setExpression('');
      setFk(newForeignKey());
    });
  };
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Constraints</h2>
      <ResultTable caption={`Constraints of ${tableLabel(table)}`} columns={['name', 'kind', 'definition']}
        rows={constraints.map((k) => [k.name, CONSTRAINT_KIND[k.type] ?? k.type, k.definition])}
        actions={(i) => (
          <ConfirmButton text="Drop" label={`Drop constraint ${constraints[i]!.name}`} danger disabled={busy}
            question={<>Drop the constraint <strong>{constraints[i]!.name}</strong>? Relationships using a foreign key it is are removed too.</>}
            onConfirm={() => void run(() => runDdl(dropConstraintSql(table, constraints[i]!.name), true, {
              name: migrationName('alter_table', table.schema, table.name, 'drop_constraint', constraints[i]!.name),
              down: `alter table ${qualifiedIdent(table)} add constraint ${ident(constraints[i]!.name)} ${constraints[i]!.definition};`,
            }), `Dropped constraint ${constraints[i]!.name}`)} />
        )} />
      <form onSubmit={add} aria-label="Add a constraint">
        <h3>Add a constraint</h3>
        <div className="inline">
          <div className="field">
            <label htmlFor={`${id}-kind`}>Kind</label>
            <select id={`${id}-kind`} value={kind} onChange={(e) => setKind(e.target.value as ConstraintSpec['kind'])}>
              <option>unique</option><option>check</option><option>foreign key</option><option>primary key</option>
            </select>
          </div>
          <div className="field"><label htmlFor={`${id}-name`}>Constraint name <span className="hint">(optional)</span></label><input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} /></div>
        </div>
        {(kind === 'unique' || kind === 'primary key') && (
          <fieldset className="checks">
            <legend>Columns</legend>
            {table.columns.map((c) => (
              <label key={c.name}><input type="checkbox" checked={columns.includes(c.name)} onChange={(e) => setColumns(e.target.checked ? [...columns, c.name] : columns.filter((x) => x !== c.name))} /> {c.name}</label>
            ))}
          </fieldset>
        )}
        {kind === 'check' && (
          <div className="field"><label htmlFor={`${id}-expr`}>Condition <span className="hint">(SQL, e.g. price &gt; 0)</span></label><input id={`${id}-expr`} className="mono" value={expression} onChange={(e) => setExpression(e.target.value)} /></div>
        )}
        {kind === 'foreign key' && <ForeignKeyFields legend="Foreign key" value={fk} onChange={setFk} columns={table.columns.map((c) => c.name)} tables={tables} />}
        <p><button type="submit" disabled={busy || !ready}>Add constraint</button></p>
      </form>
    </section>
  );
}

function IndexesSection({ table, run, busy }: { table: TableInfo; run: Run; busy: boolean }) {
  const id = useId();
  const [ix, setIx] = useState<IndexSpec>({ name: '', columns: [], unique: false, method: 'btree' });
  const indexes = table.indexes ?? [];
  const add = (e: FormEvent) => {
    e.preventDefault();
    const named = { ...ix, name: ix.name.trim() || defaultIndexName(table, ix.columns, indexes.map((x) => x.name)) };
    void run(() => runDdl(createIndexSql(table, named), false, { name: migrationName('create_index', table.schema, named.name), down: dropIndexSql(table.schema, named.name) }), 'Created the index').then((ok) => ok && setIx({ name: '', columns: [], unique: false, method: 'btree' }));
  };
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Indexes</h2>
      <ResultTable caption={`Indexes of ${tableLabel(table)}`} columns={['name', 'definition', 'unique']}
        rows={indexes.map((x) => [x.name, x.definition, x.unique ? 'yes' : ''])}
        actions={(i) => {
          const x = indexes[i]!;
          return x.constraint ? <span className="muted">constraint {x.constraint}</span> : (
            <ConfirmButton text="Drop" label={`Drop index ${x.name}`} danger disabled={busy} question={<>Drop the index <strong>{x.name}</strong>?</>}
              onConfirm={() => void run(() => runDdl(dropIndexSql(table.schema, x.name), false, { name: migrationName('drop_index', table.schema, x.name), down: `${x.definition};` }), `Dropped index ${x.name}`)} />
          );
        }} />
      <form onSubmit={add} aria-label="Create an index">
        <h3>Create an index</h3>
        <div className="inline">
          <div className="field"><label htmlFor={`${id}-name`}>Index name <span className="hint">(optional)</span></label><input id={`${id}-name`} value={ix.name} onChange={(e) => setIx({ ...ix, name: e.target.value })} /></div>
          <div className="field">
            <label htmlFor={`${id}-method`}>Method</label>
            <select id={`${id}-method`} value={ix.method} onChange={(e) => setIx({ ...ix, method: e.target.value as IndexSpec['method'] })}>
              {INDEX_METHODS.map((m) => <option key={m}>{m}</option>)}
            </select>
          </div>
          <label><input type="checkbox" checked={ix.unique} onChange={(e) => setIx({ ...ix, unique: e.target.checked })} /> Unique</label>
        </div>
        <fieldset className="checks">
          <legend>Columns <span className="hint">(in the order checked{ix.columns.length ? `: ${ix.columns.join(', ')}` : ''})</span></legend>
          {table.columns.map((c) => (
            <label key={c.name}><input type="checkbox" checked={ix.columns.includes(c.name)} onChange={(e) => setIx({ ...ix, columns: e.target.checked ? [...ix.columns, c.name] : ix.columns.filter((x) => x !== c.name) })} /> {c.name}</label>
          ))}
        </fieldset>
        <p><button type="submit" disabled={busy || ix.columns.length === 0}>Create index</button></p>
      </form>
    </section>
  );
}

const fnLabel = (f: { schema: string; name: string }) => (f.schema === 'public' ? f.name : `${f.schema}.${f.name}`);

function ComputedFields({ table, md, functions, run, busy }: { table: TableInfo; md: TableMetadata; functions: FunctionInfo[]; run: Run; busy: boolean }) {
  const id = useId();
  const candidates = functions.filter((f) => f.args.some((a) => a.type === table.name || a.type === `${table.schema}.${table.name}`) || (f.first_arg_table && sameTable(f.first_arg_table, table)));
  const [name, setName] = useState('');
  const [fn, setFn] = useState('');
  const [tableArg, setTableArg] = useState('');
  const [sessionArg, setSessionArg] = useState('');
  const [comment, setComment] = useState('');
  const fields = md.computed_fields ?? [];
  const chosen = candidates.find((f) => `${f.schema}.${f.name}` === fn);
  const add = (e: FormEvent) => {
    e.preventDefault();
    if (!chosen) return;
    void run(() => query('add_computed_field', {
      table: { schema: table.schema, name: table.name }, name,
      definition: { function: { schema: chosen.schema, name: chosen.name }, ...(tableArg ? { table_argument: tableArg } : {}), ...(sessionArg ? { session_argument: sessionArg } : {}) },
      ...(comment ? { comment } : {}),
    }), `Added computed field ${name}`).then((ok) => ok && setName(''));
  };
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Computed fields</h2>
      <ResultTable caption={`${fields.length} computed field${fields.length === 1 ? '' : 's'}`} columns={['name', 'function', 'table argument', 'session argument']}
        rows={fields.map((c) => [c.name, c.definition ? fnLabel(qualified(c.definition.function)) : '', c.definition?.table_argument ?? null, c.definition?.session_argument ?? null])}
        actions={(i) => (
          <ConfirmButton text="Drop" label={`Drop computed field ${fields[i]!.name}`} danger disabled={busy} question={<>Drop the computed field <strong>{fields[i]!.name}</strong>? Permissions that use it are removed too.</>}
            onConfirm={() => void run(() => query('drop_computed_field', { table: { schema: table.schema, name: table.name }, name: fields[i]!.name, cascade: true }), `Dropped computed field ${fields[i]!.name}`)} />
        )} />
      {candidates.length === 0 ? (
        <p className="muted">No function takes a row of {tableLabel(table)}: create one (e.g. in the SQL runner) whose first argument has the table's row type to add a computed field.</p>
      ) : (
        <form onSubmit={add} aria-label="Add a computed field">
          <div className="inline">
            <div className="field"><label htmlFor={`${id}-name`}>Field name</label><input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} required /></div>
            <div className="field">
              <label htmlFor={`${id}-fn`}>Function</label>
              <select id={`${id}-fn`} value={fn} onChange={(e) => setFn(e.target.value)} required>
                <option value="">choose a function</option>
                {candidates.map((f) => <option key={`${f.schema}.${f.name}`} value={`${f.schema}.${f.name}`}>{fnLabel(f)}({f.args.map((a) => `${a.name} ${a.type}`.trim()).join(', ')}) → {f.returns_set ? 'setof ' : ''}{f.return_type}</option>)}
              </select>
            </div>
            <div className="field"><label htmlFor={`${id}-targ`}>Table argument <span className="hint">(optional)</span></label><input id={`${id}-targ`} value={tableArg} onChange={(e) => setTableArg(e.target.value)} list={`${id}-args`} size={12} /></div>
            <div className="field"><label htmlFor={`${id}-sarg`}>Session argument <span className="hint">(optional)</span></label><input id={`${id}-sarg`} value={sessionArg} onChange={(e) => setSessionArg(e.target.value)} list={`${id}-args`} size={12} /></div>
            <datalist id={`${id}-args`}>{(chosen?.args ?? []).filter((a) => a.name).map((a) => <option key={a.name} value={a.name} />)}</datalist>
            <div className="field"><label htmlFor={`${id}-comment`}>Table comment</label><input id={`${id}-comment`} value={comment} onChange={(e) => setComment(e.target.value)} /></div>
          </div>
          <p><button type="submit" disabled={busy || !chosen || !name}>Add computed field</button></p>
        </form>
      )}
    </section>
  );
}

export const ROOT_FIELDS = ['select', 'select_by_pk', 'select_aggregate', 'insert', 'insert_one', 'update', 'update_by_pk', 'delete', 'delete_by_pk'] as const;

function TableSettings({ table, md, run, busy }: { table: TableInfo; md: TableMetadata; run: Run; busy: boolean }) {
  const id = useId();
  const cfg = md.configuration ?? {};
  const [roots, setRoots] = useState<Record<string, string>>(() => Object.fromEntries(ROOT_FIELDS.map((k) => [k, cfg.custom_root_fields?.[k] ?? ''])));
  const [names, setNames] = useState<Record<string, string>>(() => Object.fromEntries(table.columns.map((c) => [c.name, cfg.custom_column_names?.[c.name] ?? ''])));
  const tableArg = { schema: table.schema, name: table.name };
  const save = (e: FormEvent) => {
    e.preventDefault();
    const nonEmpty = (o: Record<string, string>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v.trim()).map(([k, v]) => [k, v.trim()]));
    void run(() => query('set_table_custom_fields', { table: tableArg, custom_root_fields: nonEmpty(roots), custom_column_names: nonEmpty(names) }), 'Saved the custom names');
  };
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>GraphQL settings</h2>
      <div className="inline">
        <span>Enum table: <strong>{md.is_enum ? 'yes' : 'no'}</strong> <span className="hint">(its values become a GraphQL enum; a single-column text primary key and an optional comment column)</span></span>
        <button type="button" disabled={busy} onClick={() => void run(() => query('set_table_is_enum', { table: tableArg, is_enum: !md.is_enum }), md.is_enum ? 'No longer an enum table' : 'Set as an enum table')}>
          {md.is_enum ? 'Unset enum table' : 'Set as enum table'}
        </button>
      </div>
      <form onSubmit={save} aria-label="Custom names">
        <fieldset>
          <legend>Custom root fields <span className="hint">(empty: the default name)</span></legend>
          <div className="grid-fields">
            {ROOT_FIELDS.map((k) => (
              <div className="field" key={k}><label htmlFor={`${id}-root-${k}`}>{k}</label><input id={`${id}-root-${k}`} value={roots[k]} onChange={(e) => setRoots({ ...roots, [k]: e.target.value })} /></div>
            ))}
          </div>
        </fieldset>
        <fieldset>
          <legend>Custom column names</legend>
          <div className="grid-fields">
            {table.columns.map((c) => (
              <div className="field" key={c.name}><label htmlFor={`${id}-col-${c.name}`}>{c.name}</label><input id={`${id}-col-${c.name}`} value={names[c.name] ?? ''} onChange={(e) => setNames({ ...names, [c.name]: e.target.value })} /></div>
            ))}
          </div>
        </fieldset>
        <p><button type="submit" disabled={busy}>Save custom names</button></p>
      </form>
    </section>
  );
}
