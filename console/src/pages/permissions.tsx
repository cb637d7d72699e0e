/** Permissions: pick a tracked table, then edit its role × operation matrix. /console/permissions/<schema>/<table> */
import { loadMetadata, loadTables } from '../data/load';
import { sameTable, tableLabel } from '../data/model';
import type { PageMeta, PageProps } from '../pages';
import { PermissionEditor } from '../permissions/PermissionEditor';
import { Link, useTitle } from '../router';
import { ErrorBox, Loading, PageHeader, useAsync } from '../ui';

export const meta: PageMeta = {
  path: 'permissions',
  title: 'Permissions',
  order: 30,
  description: 'Who may insert, select, update and delete which rows and columns',
};

export default function PermissionsPage({ path }: PageProps) {
  const [schema, name] = path;
  useTitle(name ? `Permissions · ${schema}.${name}` : 'Permissions');
  const state = useAsync(async () => {
    const [tables, metadata] = await Promise.all([loadTables(), loadMetadata()]);
    return { tables, metadata };
  }, []);
  if (!state.data) return state.error ? <ErrorBox error={state.error} title="Could not load" /> : <Loading what="tables" />;
  const { tables, metadata } = state.data;
  const trackedTables = metadata.tables.map((m) => m.table).sort((a, b) => tableLabel(a).localeCompare(tableLabel(b)));
  const table = schema && name ? tables.find((t) => sameTable(t, { schema, name })) : undefined;
  const isTracked = table && metadata.tables.some((m) => sameTable(m.table, table));

  return (
    <div className="layout-2">
      <aside className="sidebar" aria-label="Tracked tables">
        <h2 id="perm-tables">Tracked tables</h2>
        <ul aria-labelledby="perm-tables">
          {trackedTables.map((t) => (
            <li key={tableLabel(t)}>
              <Link to={`permissions/${encodeURIComponent(t.schema)}/${encodeURIComponent(t.name)}`} aria-current={table && sameTable(t, table) ? 'page' : undefined}>{tableLabel(t)}</Link>
            </li>
          ))}
          {trackedTables.length === 0 && <li className="muted">none: track tables on the Data page</li>}
        </ul>
      </aside>
      <div>
        <PageHeader title={table ? `Permissions of ${tableLabel(table)}` : 'Permissions'} />
        {!schema ? (
          <p>Choose a table. Each cell of its matrix is the permission of a role for one operation; admin may always do everything.</p>
        ) : !table || !isTracked ? (
          <p>{schema}.{name} is not a tracked table.</p>
        ) : (
          <PermissionEditor table={table} tables={tables} metadata={metadata} onChanged={state.reload} />
        )}
      </div>
    </div>
  );
}
