/**
 * Permissions: the roles × tables × operations overview, then per table its role × operation
 * matrix and the form of one cell. /console/permissions and /console/permissions/<schema>/<table>
 * (?role=<role>&op=<op> opens that cell's form).
 */
import { loadMetadata, loadTables } from '../data/load';
import { sameTable, tableLabel, type Metadata, type TableMetadata } from '../data/model';
import type { PageMeta, PageProps } from '../pages';
import { PermissionEditor, rolesOf } from '../permissions/PermissionEditor';
import { accessLevel, PERM_OPS } from '../permissions/validate';
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
          <Overview metadata={metadata} columnsOf={(t) => tables.find((x) => sameTable(x, t))?.columns.map((c) => c.name) ?? []} />
        ) : !table || !isTracked ? (
          <p>{schema}.{name} is not a tracked table.</p>
        ) : (
          <PermissionEditor table={table} tables={tables} metadata={metadata} onChanged={state.reload} />
        )}
      </div>
    </div>
  );
}

const SYMBOL = { full: '✔', partial: '◐', none: '✕' } as const;

/** Every role's access to every tracked table, per operation; each cell opens that permission's form. */
function Overview({ metadata, columnsOf }: { metadata: Metadata; columnsOf: (t: TableMetadata['table']) => string[] }) {
  const roles = rolesOf(metadata);
  const tables = [...metadata.tables].sort((a, b) => tableLabel(a.table).localeCompare(tableLabel(b.table)));
  if (tables.length === 0) return <p>No tracked tables yet: track tables on the Data page.</p>;
  return (
    <>
      <p>Each cell is one role's permission for one operation (i insert, s select, u update, d delete): ✔ every row and column, ◐ some, ✕ none. Choose a cell or a table to edit; admin may always do everything.</p>
      {roles.length === 0 ? <p className="muted">No role has a permission yet: choose a table to add one.</p> : (
        <div className="table-wrap">
          <table className="grid matrix overview">
            <caption>Permissions by role, table and operation</caption>
            <thead>
              <tr>
                <th scope="col" rowSpan={2}>Table</th>
                {roles.map((r) => <th scope="colgroup" colSpan={4} key={r}>{r}</th>)}
              </tr>
              <tr>{roles.map((r) => PERM_OPS.map((op) => <th scope="col" key={`${r}-${op}`} title={op}>{op[0]}</th>))}</tr>
            </thead>
            <tbody>
              {tables.map((t) => {
                const label = tableLabel(t.table);
                const base = `permissions/${encodeURIComponent(t.table.schema)}/${encodeURIComponent(t.table.name)}`;
                return (
                  <tr key={label}>
                    <th scope="row"><Link to={base}>{label}</Link></th>
                    {roles.map((r) => PERM_OPS.map((op) => {
                      const perm = ((t[`${op}_permissions` as const] ?? []) as Array<{ role: string; permission: Record<string, any> }>).find((p) => p.role === r)?.permission;
                      const level = accessLevel(op, perm, columnsOf(t.table));
                      return (
                        <td key={`${r}-${op}`} className={`perm-${level}`}>
                          <Link to={`${base}?role=${encodeURIComponent(r)}&op=${op}`} aria-label={`${op} permission of ${r} on ${label}: ${level}`}>{SYMBOL[level]}</Link>
                        </td>
                      );
                    }))}
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
