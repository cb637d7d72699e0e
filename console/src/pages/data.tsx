/**
 * Data: schemas and tables (tracked or not), track/untrack, suggested relationships, rows, SQL.
 *   /console/data/sql                                    SQL runner
 *   /console/data/schema/<schema>                        tables of a schema
 *   /console/data/schema/<schema>/create                 create a table
 *   /console/data/schema/<schema>/tables/<table>/<tab>   browse | insert | modify | relationships
 */
import { useEffect, useId } from 'react';
import { CreateTable } from '../data/CreateTable';
import { loadFunctions, loadMetadata, loadTables } from '../data/load';
import { sameTable } from '../data/model';
import { SchemaView, tableLink } from '../data/SchemaView';
import { SqlRunner } from '../data/SqlRunner';
import { TableView } from '../data/TableView';
import type { PageMeta, PageProps } from '../pages';
import { Link, navigate, useTitle } from '../router';
import { ErrorBox, Loading, useAsync } from '../ui';

export const meta: PageMeta = {
  path: 'data',
  title: 'Data',
  order: 20,
  description: 'Schemas and tables, tracking, relationships, rows and SQL',
};

export default function DataPage({ path }: PageProps) {
  const id = useId();
  const state = useAsync(async () => {
    const [tables, metadata, functions] = await Promise.all([loadTables(), loadMetadata(), loadFunctions()]);
    return { tables, metadata, functions };
  }, []);
  const [section, schemaArg, sub, tableName, tab = 'browse'] = path;
  const schemas = [...new Set(['public', ...(state.data?.tables.map((t) => t.schema) ?? [])])].sort((a, b) => (a === 'public' ? -1 : b === 'public' ? 1 : a.localeCompare(b)));
  const schema = section === 'schema' && schemaArg ? schemaArg : 'public';
  const creating = section === 'schema' && sub === 'create';
  useTitle(section === 'sql' ? 'SQL' : creating ? `Create a table in ${schema}` : tableName ? `${schema}.${tableName}` : `Data · ${schema}`);

  useEffect(() => {
    if (section === undefined) navigate('data/schema/public', { replace: true });
  }, [section]);

  const tables = state.data?.tables.filter((t) => t.schema === schema) ?? [];
  const table = tableName ? tables.find((t) => t.name === tableName) : undefined;
  const tracked = (t: { schema: string; name: string }) => !!state.data?.metadata.tables.some((m) => sameTable(m.table, t));

  let content;
  if (section === 'sql') content = <SqlRunner onChanged={state.reload} />;
  else if (!state.data) content = state.error ? <ErrorBox error={state.error} title="Could not read the database" /> : <Loading what="tables" />;
  else if (creating) content = <CreateTable key={schema} schema={schema} tables={state.data.tables} onCreated={state.reload} />;
  else if (tableName && !table) content = <><h1 id="page-title" tabIndex={-1}>Not found</h1><p>There is no table {schema}.{tableName}.</p></>;
  else if (table) content = <TableView table={table} tables={state.data.tables} functions={state.data.functions} tab={tab} metadata={state.data.metadata} onChanged={state.reload} />;
  else content = <SchemaView schema={schema} tables={tables} allTables={state.data.tables} functions={state.data.functions.filter((f) => f.schema === schema)} metadata={state.data.metadata} onChanged={state.reload} />;

  return (
    <div className="layout-2">
      <aside className="sidebar" aria-label="Schemas and tables">
        <p className="sidebar-links">
          <Link to="data/sql" aria-current={section === 'sql' ? 'page' : undefined}>SQL runner</Link>
          <Link to={`data/schema/${encodeURIComponent(schema)}/create`} aria-current={creating ? 'page' : undefined}>Create table</Link>
        </p>
        <label htmlFor={`${id}-schema`}>Schema</label>
        <select id={`${id}-schema`} value={schema} onChange={(e) => navigate(`data/schema/${encodeURIComponent(e.target.value)}`)}>
          {schemas.map((s) => <option key={s}>{s}</option>)}
        </select>
        <h2 id={`${id}-tables`}>Tables</h2>
        <ul aria-labelledby={`${id}-tables`}>
          {tables.map((t) => (
            <li key={t.name}>
              <Link to={tableLink(t, tracked(t) ? 'browse' : 'modify')} aria-current={t.name === tableName ? 'page' : undefined}>
                {t.name}{tracked(t) ? '' : ' (not tracked)'}
              </Link>
            </li>
          ))}
          {state.data && tables.length === 0 && <li className="muted">none</li>}
        </ul>
      </aside>
      <div>{content}</div>
    </div>
  );
}
