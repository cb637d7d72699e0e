/** A table: browse (filter, sort, pages, edit, delete), insert a row, modify (columns, constraints, indexes, settings), relationships. */
import { useId, useState, type FormEvent } from 'react';
import { bulk, query } from '../api';
import { Link } from '../router';
import { ConfirmButton, ErrorBox, Loading, PageHeader, ResultTable, Status, useAction, useAsync } from '../ui';
import { RowForm } from './RowForm';
import { tableLink } from './SchemaView';
import { FILTER_OPS, filtersWhere, KIND_LABEL, rowIdentity, sameTable, tableLabel, type FunctionInfo, type Metadata, type RowFilter, type TableInfo } from './model';
import { ModifyTable } from './ModifyTable';
import { Relationships } from './Relationships';

const TABS = [
  { tab: 'browse', label: 'Browse rows', tracked: true },
  { tab: 'insert', label: 'Insert row', tracked: true },
  { tab: 'modify', label: 'Modify', tracked: false },
  { tab: 'relationships', label: 'Relationships', tracked: true },
];

export function TableView({ table, tables, functions, tab, metadata, onChanged }: {
  table: TableInfo;
  tables: TableInfo[];
  functions: FunctionInfo[];
  tab: string;
  metadata: Metadata;
  onChanged: () => void;
}) {
  const tracked = metadata.tables.find((m) => sameTable(m.table, table));
  const current = tab === 'structure' ? 'modify' : tab;
  return (
    <>
      <PageHeader title={tableLabel(table)}>
        {tracked && <Link to={`permissions/${encodeURIComponent(table.schema)}/${encodeURIComponent(table.name)}`}>Permissions</Link>}
      </PageHeader>
      <nav aria-label="Table" className="tabs">
        {TABS.filter((t) => tracked || !t.tracked).map((t) => (
          <Link key={t.tab} to={tableLink(table, t.tab)} aria-current={t.tab === current ? 'page' : undefined}>{t.label}</Link>
        ))}
      </nav>
      {!tracked && current !== 'modify' ? (
        <p>This {KIND_LABEL[table.kind] ?? 'table'} is not tracked: track it on the <Link to={`data/schema/${encodeURIComponent(table.schema)}`}>schema page</Link> to browse and edit its rows.</p>
      ) : current === 'insert' ? (
        <InsertRow table={table} />
      ) : current === 'modify' ? (
        <ModifyTable key={`${table.schema}.${table.name}`} table={table} tables={tables} functions={functions} metadata={metadata} onChanged={onChanged} />
      ) : current === 'relationships' ? (
        <Relationships key={`${table.schema}.${table.name}`} table={table} tables={tables} metadata={metadata} onChanged={onChanged} />
      ) : (
        <Browse table={table} onChanged={onChanged} />
      )}
    </>
  );
}

const tableArg = (t: TableInfo) => ({ schema: t.schema, name: t.name });

function InsertRow({ table }: { table: TableInfo }) {
  const action = useAction();
  const [key, setKey] = useState(0);
  const insert = (values: Record<string, unknown>) =>
    action.run(() => query('insert', { table: tableArg(table), objects: [values], returning: table.columns.map((c) => c.name) }), 'Row inserted')
      .then((ok) => ok && setKey((k) => k + 1));
  return (
    <section aria-labelledby="insert-title">
      <h2 id="insert-title">Insert a row</h2>
      <ErrorBox error={action.error} title="Insert failed" />
      <Status message={action.done} />
      <RowForm key={key} columns={table.columns} submitLabel="Insert" busy={action.busy} onSubmit={insert} />
    </section>
  );
}

const PAGE_SIZES = [10, 25, 50, 100];

function Browse({ table, onChanged }: { table: TableInfo; onChanged: () => void }) {
  const id = useId();
  const firstSort = table.primary_key[0] ?? table.columns[0]?.name ?? '';
  const [draft, setDraft] = useState<RowFilter[]>([]);
  const [filters, setFilters] = useState<RowFilter[]>([]);
  const [filterError, setFilterError] = useState<string>();
  const [sort, setSort] = useState({ column: firstSort, dir: 'asc' as 'asc' | 'desc' });
  const [limit, setLimit] = useState(25);
  const [offset, setOffset] = useState(0);
  const [editing, setEditing] = useState<number>();
  const action = useAction();

  const where = filtersWhere(filters, table.columns);
  const rows = useAsync(async () => {
    const [sel, cnt] = await bulk<[Array<Record<string, unknown>>, { count: number }]>([
      { type: 'select', args: { table: tableArg(table), columns: ['*'], where, ...(sort.column ? { order_by: [{ column: sort.column, type: sort.dir }] } : {}), limit, offset } },
      { type: 'count', args: { table: tableArg(table), where } },
    ]);
    return { rows: sel, count: cnt.count };
  }, [table.schema, table.name, JSON.stringify(where), sort.column, sort.dir, limit, offset]);

  const apply = (e: FormEvent) => {
    e.preventDefault();
    try {
      filtersWhere(draft, table.columns);
      setFilterError(undefined);
      setFilters(draft);
      setOffset(0);
    } catch (err) {
      setFilterError((err as Error).message);
    }
  };
  const setDraftAt = (i: number, patch: Partial<RowFilter>) => setDraft((d) => d.map((f, j) => (j === i ? { ...f, ...patch } : f)));
  const done = (ok: boolean) => {
    if (ok) {
      setEditing(undefined);
      rows.reload();
      onChanged();
    }
  };

  const data = rows.data;
  const colNames = table.columns.map((c) => c.name);
  const editRow = editing !== undefined ? data?.rows[editing] : undefined;
  return (
    <section aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`} className="sr-only">Rows</h2>
      <form onSubmit={apply} aria-label="Filter rows">
        <fieldset>
          <legend>Filter and sort</legend>
          {draft.map((f, i) => (
            <div className="inline" key={i} role="group" aria-label={`Condition ${i + 1}`}>
              <label htmlFor={`${id}-fc${i}`} className="sr-only">Column</label>
              <select id={`${id}-fc${i}`} value={f.column} onChange={(e) => setDraftAt(i, { column: e.target.value })}>
                {colNames.map((c) => <option key={c}>{c}</option>)}
              </select>
              <label htmlFor={`${id}-fo${i}`} className="sr-only">Operator</label>
              <select id={`${id}-fo${i}`} value={f.op} onChange={(e) => setDraftAt(i, { op: e.target.value })}>
                {FILTER_OPS.map((o) => <option key={o.op} value={o.op}>{o.label}</option>)}
              </select>
              <label htmlFor={`${id}-fv${i}`} className="sr-only">Value</label>
              <input id={`${id}-fv${i}`} value={f.value} onChange={(e) => setDraftAt(i, { value: e.target.value })} placeholder="value" />
              <button type="button" aria-label={`Remove condition ${i + 1}`} onClick={() => setDraft((d) => d.filter((_, j) => j !== i))}>✕</button>
            </div>
          ))}
          <div className="inline">
            <button type="button" onClick={() => setDraft((d) => [...d, { column: colNames[0] ?? '', op: '_eq', value: '' }])}>Add condition</button>
            <button type="submit" className="primary">Apply filters</button>
            <label htmlFor={`${id}-sort`}>Sort by</label>
            <select id={`${id}-sort`} value={sort.column} onChange={(e) => setSort((s) => ({ ...s, column: e.target.value }))}>
              {colNames.map((c) => <option key={c}>{c}</option>)}
            </select>
            <label htmlFor={`${id}-dir`} className="sr-only">Direction</label>
            <select id={`${id}-dir`} value={sort.dir} onChange={(e) => setSort((s) => ({ ...s, dir: e.target.value as 'asc' | 'desc' }))}>
              <option value="asc">ascending</option>
              <option value="desc">descending</option>
            </select>
          </div>
          {filterError && <p className="error" role="alert">{filterError}</p>}
        </fieldset>
      </form>
      <ErrorBox error={rows.error} title="Could not load rows" />
      <ErrorBox error={action.error} />
      <Status message={action.done} />
      {!data && rows.loading && <Loading what="rows" />}
      {data && (
        <>
          <ResultTable caption={`${tableLabel(table)}: rows ${data.count === 0 ? 0 : offset + 1}–${offset + data.rows.length} of ${data.count}`}
            columns={colNames} rows={data.rows.map((r) => colNames.map((c) => r[c]))}
            actions={(i) => (
              <>
                <button type="button" aria-label={`Edit row ${offset + i + 1}`} onClick={() => setEditing(i)}>Edit</button>
                <ConfirmButton label="Delete" danger question={`Delete row ${offset + i + 1}? This cannot be undone.`}
                  onConfirm={() => action.run(() => query('delete', { table: tableArg(table), where: rowIdentity(table, data.rows[i]!) }), 'Row deleted').then(done)} />
              </>
            )} />
          <div className="inline" role="group" aria-label="Pages">
            <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - limit))}>Previous</button>
            <button type="button" disabled={offset + limit >= data.count} onClick={() => setOffset(offset + limit)}>Next</button>
            <label htmlFor={`${id}-limit`}>Rows per page</label>
            <select id={`${id}-limit`} value={limit} onChange={(e) => { setLimit(Number(e.target.value)); setOffset(0); }}>
              {PAGE_SIZES.map((n) => <option key={n}>{n}</option>)}
            </select>
          </div>
        </>
      )}
      {editRow && (
        <section aria-labelledby={`${id}-edit`}>
          <h2 id={`${id}-edit`}>Edit row {offset + editing! + 1}</h2>
          <RowForm key={`${offset}-${editing}`} columns={table.columns} initial={editRow} submitLabel="Save" busy={action.busy}
            onCancel={() => setEditing(undefined)}
            onSubmit={(values) => {
              if (Object.keys(values).length === 0) return setEditing(undefined);
              void action.run(() => query('update', { table: tableArg(table), where: rowIdentity(table, editRow), $set: values }), 'Row saved').then(done);
            }} />
        </section>
      )}
    </section>
  );
}
