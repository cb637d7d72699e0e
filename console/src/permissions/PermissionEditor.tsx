/** The role × operation matrix of one table and the form that edits one cell. */
import { useEffect, useId, useMemo, useState, type FormEvent } from 'react';
import { bulk, query } from '../api';
import { useSearch } from '../router';
import { qualified, sameTable, tableLabel, type Metadata, type TableInfo, type TableMetadata } from '../data/model';
import { ConfirmButton, ErrorBox, Status, useAction } from '../ui';
import { fromJson, toJson, type Cond } from './boolexp';
import { BoolExpBuilder } from './Builder';
import { accessLevel, buildPermission, checkBoolExpText, formOf, PERM_OPS, type PermissionFormState, type PermOp, type Problem, type TableContext, type TableLookup } from './validate';

type Perms = Record<string, any> | undefined;

const permissionsOf = (md: TableMetadata | undefined, op: PermOp) =>
  ((md?.[`${op}_permissions` as const] ?? []) as Array<{ role: string; permission: Record<string, any> }>);

/** Every role named in any permission of the metadata. */
export function rolesOf(metadata: Metadata): string[] {
  const roles = new Set<string>();
  for (const t of metadata.tables) for (const op of PERM_OPS) for (const p of permissionsOf(t, op)) roles.add(p.role);
  return [...roles].sort();
}

/** The boolean-expression context of a tracked table: its columns and relationships. */
export function contextFor(tables: TableInfo[], metadata: Metadata): TableLookup {
  return (t) => {
    const info = tables.find((x) => sameTable(x, t));
    const md = metadata.tables.find((m) => sameTable(m.table, t));
    if (!info || !md) return undefined;
    const relationships: TableContext['relationships'] = {};
    for (const r of md.object_relationships ?? []) {
      const f = r.using.foreign_key_constraint_on;
      if (typeof f === 'string' || Array.isArray(f)) {
        const col = [f].flat()[0];
        const fk = info.foreign_keys.find((k) => k.columns[0] === col);
        if (fk) relationships[r.name] = { schema: fk.ref_schema, name: fk.ref_table };
      } else if (r.using.manual_configuration) relationships[r.name] = qualified(r.using.manual_configuration.remote_table);
    }
    for (const r of md.array_relationships ?? []) {
      const f = r.using.foreign_key_constraint_on;
      if (f && typeof f === 'object' && !Array.isArray(f)) relationships[r.name] = qualified(f.table);
      else if (r.using.manual_configuration) relationships[r.name] = qualified(r.using.manual_configuration.remote_table);
    }
    return { columns: info.columns, relationships, computedFields: (md.computed_fields ?? []).map((c) => c.name) };
  };
}

export function PermissionEditor({ table, tables, metadata, onChanged }: { table: TableInfo; tables: TableInfo[]; metadata: Metadata; onChanged: () => void }) {
  const id = useId();
  const md = metadata.tables.find((m) => sameTable(m.table, table));
  const [extraRoles, setExtraRoles] = useState<string[]>([]);
  const [newRole, setNewRole] = useState('');
  const search = useSearch();
  const [open, setOpen] = useState<{ role: string; op: PermOp }>();
  const askedRole = search.get('role');
  const askedOp = search.get('op') as PermOp | null;
  useEffect(() => {
    if (askedRole && askedOp && PERM_OPS.includes(askedOp)) {
      if (askedRole !== 'admin') setExtraRoles((x) => (x.includes(askedRole) ? x : [...x, askedRole]));
      setOpen({ role: askedRole, op: askedOp });
    }
  }, [askedRole, askedOp]);
  const roles = [...new Set([...rolesOf(metadata), ...extraRoles])].filter((r) => r !== 'admin').sort();
  const allColumns = table.columns.map((c) => c.name);
  const permOf = (role: string, op: PermOp): Perms => permissionsOf(md, op).find((p) => p.role === role)?.permission;

  const addRole = (e: FormEvent) => {
    e.preventDefault();
    const r = newRole.trim();
    if (!r || r === 'admin') return;
    setExtraRoles((x) => [...x, r]);
    setNewRole('');
    setOpen({ role: r, op: 'select' });
  };

  return (
    <>
      <div className="scroll-x">
      <table className="matrix">
        <caption className="sr-only">Permissions of {tableLabel(table)} by role and operation</caption>
        <thead>
          <tr><th scope="col">Role</th>{PERM_OPS.map((op) => <th scope="col" key={op}>{op}</th>)}</tr>
        </thead>
        <tbody>
          <tr>
            <th scope="row">admin</th>
            {PERM_OPS.map((op) => <td key={op} className="perm-full">full (always)</td>)}
          </tr>
          {roles.map((role) => (
            <tr key={role}>
              <th scope="row">{role}</th>
              {PERM_OPS.map((op) => {
                const level = accessLevel(op, permOf(role, op), allColumns);
                const pressed = open?.role === role && open.op === op;
                return (
                  <td key={op}>
                    <button type="button" className={`perm-${level}`} aria-pressed={pressed} aria-label={`${op} permission of ${role}: ${level}. Edit`}
                      onClick={() => setOpen(pressed ? undefined : { role, op })}>
                      {level === 'full' ? '✔ full' : level === 'partial' ? '◐ partial' : '✕ none'}
                    </button>
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
      </div>
      <form onSubmit={addRole} className="inline" aria-label="Add a role">
        <label htmlFor={`${id}-role`}>New role</label>
        <input id={`${id}-role`} value={newRole} onChange={(e) => setNewRole(e.target.value)} placeholder="e.g. user" pattern="[^\s]+" title="a role name without spaces" />
        <button type="submit">Add role</button>
      </form>
      {open && (
        <PermissionForm key={`${open.role}:${open.op}`}
          table={table} tables={tables} metadata={metadata} role={open.role} op={open.op} existing={permOf(open.role, open.op)}
          roles={roles} hasPermission={(r) => !!permOf(r, open.op)}
          onClose={() => setOpen(undefined)} onChanged={onChanged} />
      )}
    </>
  );
}

function ProblemList({ id, problems }: { id: string; problems: Problem[] }) {
  if (problems.length === 0) return null;
  return (
    <ul id={id} className="error" role="alert">
      {problems.map((p, i) => <li key={i}><code>{p.path}</code>: {p.message}</li>)}
    </ul>
  );
}

function PermissionForm({ table, tables, metadata, role, op, existing, roles, hasPermission, onClose, onChanged }: {
  table: TableInfo;
  tables: TableInfo[];
  metadata: Metadata;
  role: string;
  op: PermOp;
  existing: Perms;
  /** every role but admin (for "copy to") */
  roles: string[];
  hasPermission: (role: string) => boolean;
  onClose: () => void;
  onChanged: () => void;
}) {
  const id = useId();
  const allColumns = table.columns.map((c) => c.name);
  const [form, setForm] = useState<PermissionFormState>(() => formOf(op, existing, allColumns));
  // problems are shown once the person changed something or tried to save, not on a fresh form
  const [touched, setTouched] = useState(false);
  const set = (patch: Partial<PermissionFormState>) => {
    setTouched(true);
    setForm((f) => ({ ...f, ...patch }));
  };
  const lookup = useMemo(() => contextFor(tables, metadata), [tables, metadata]);
  const ctx = lookup(table) ?? { columns: table.columns, relationships: {} };
  const trackedTables = useMemo(() => metadata.tables.map((m) => qualified(m.table)), [metadata]);
  const [tree, setTree] = useState<Cond>(() => fromJson(checkBoolExpText(form.filter, ctx, lookup).value ?? {}, ctx, lookup));
  const setFromBuilder = (t: Cond) => {
    setTree(t);
    set({ filter: JSON.stringify(toJson(t, ctx, lookup), null, 2) });
  };
  const setFromJson = (text: string) => {
    set({ filter: text });
    try {
      setTree(fromJson(text.trim() ? JSON.parse(text) : {}, ctx, lookup));
    } catch {
      /* not JSON yet: the builder keeps the last expression that was */
    }
  };
  const action = useAction();

  const filterProblems = touched ? checkBoolExpText(form.filter, ctx, lookup).problems : [];
  const checkProblems = op === 'update' && form.check.trim() ? checkBoolExpText(form.check, ctx, lookup).problems : [];
  const built = buildPermission(op, form, ctx, lookup);
  const otherProblems = built.problems.filter((p) => !p.path.startsWith('$.filter') && !p.path.startsWith('$.check'));
  const tableArg = { schema: table.schema, name: table.name };
  const computed = ctx.computedFields ?? [];

  const replaceOps = (r: string, permission: Record<string, unknown>, exists: boolean) => [
    ...(exists ? [{ type: `drop_${op}_permission`, args: { table: tableArg, role: r } }] : []),
    { type: `create_${op}_permission`, args: { table: tableArg, role: r, permission } },
  ];
  const save = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (!built.permission) return;
    void action.run(() => bulk(replaceOps(role, built.permission!, !!existing)), `Saved the ${op} permission of ${role}`).then((ok) => ok && onChanged());
  };
  const [copyTo, setCopyTo] = useState<string[]>([]);
  const [copyNew, setCopyNew] = useState('');
  const targets = [...new Set([...copyTo, ...copyNew.split(',').map((r) => r.trim()).filter((r) => r && r !== 'admin')])].filter((r) => r !== role);
  const copy = () => {
    setTouched(true);
    if (!built.permission || targets.length === 0) return;
    void action.run(() => bulk(targets.flatMap((r) => replaceOps(r, built.permission!, hasPermission(r)))),
      `Copied the ${op} permission of ${role} to ${targets.join(', ')}`).then((ok) => {
      if (!ok) return;
      setCopyTo([]);
      setCopyNew('');
      onChanged();
    });
  };
  const showProblems = touched;
  const remove = () =>
    void action.run(() => query(`drop_${op}_permission`, { table: tableArg, role }), `Removed the ${op} permission of ${role}`).then((ok) => ok && onChanged());

  const rowLabel = op === 'insert' ? 'Row check' : 'Row filter';
  const rowHint = op === 'insert'
    ? 'every inserted row must satisfy this boolean expression'
    : op === 'update' ? 'only rows matching this can be updated' : op === 'delete' ? 'only rows matching this can be deleted' : 'only rows matching this can be read';
  const columnsFor = op === 'select' ? 'readable' : op === 'insert' ? 'insertable' : 'updatable';

  return (
    <form onSubmit={save} className="perm-form" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{op} permission of role <em>{role}</em> on {tableLabel(table)}</h2>
      <fieldset>
        <legend>{rowLabel} <span className="hint">({rowHint}; no conditions allows every row)</span></legend>
        <div className="inline">
          <button type="button" onClick={() => setFromJson('{}')}>Without any checks</button>
        </div>
        <div className="perm-row">
          <BoolExpBuilder label={rowLabel} tree={tree} onChange={setFromBuilder} table={ctx} lookup={lookup} tables={trackedTables} />
          <div className="field">
            <label htmlFor={`${id}-filter`}>{rowLabel} (JSON) <span className="hint">kept in step with the builder; session variables such as "X-Svc-User-Id" may be values</span></label>
            <textarea id={`${id}-filter`} className="code" rows={12} value={form.filter} spellCheck={false}
              onChange={(e) => setFromJson(e.target.value)} aria-invalid={filterProblems.length > 0} aria-describedby={filterProblems.length ? `${id}-filter-problems` : undefined} />
            <ProblemList id={`${id}-filter-problems`} problems={filterProblems} />
          </div>
        </div>
      </fieldset>
      {op === 'update' && (
        <div className="field">
          <label htmlFor={`${id}-check`}>Post-update check <span className="hint">(JSON, optional: updated rows must satisfy it)</span></label>
          <textarea id={`${id}-check`} className="code" rows={3} value={form.check} spellCheck={false}
            onChange={(e) => set({ check: e.target.value })} aria-invalid={checkProblems.length > 0} aria-describedby={checkProblems.length ? `${id}-check-problems` : undefined} />
          <ProblemList id={`${id}-check-problems`} problems={checkProblems} />
        </div>
      )}
      {op !== 'delete' && (
        <fieldset>
          <legend>Columns ({columnsFor})</legend>
          <div className="inline">
            <button type="button" onClick={() => set({ columns: form.columns.length === allColumns.length ? [] : allColumns })}>
              {form.columns.length === allColumns.length ? 'Select none' : 'Select all'}
            </button>
          </div>
          <div className="checks">
            {allColumns.map((c) => (
              <label key={c}>
                <input type="checkbox" checked={form.columns.includes(c)}
                  onChange={(e) => set({ columns: e.target.checked ? [...form.columns, c] : form.columns.filter((x) => x !== c) })} />
                {c}
              </label>
            ))}
          </div>
          {op === 'select' && computed.length > 0 && (
            <div className="checks" role="group" aria-label="Computed fields">
              {computed.map((c) => (
                <label key={c}>
                  <input type="checkbox" checked={form.computedFields.includes(c)}
                    onChange={(e) => set({ computedFields: e.target.checked ? [...form.computedFields, c] : form.computedFields.filter((x) => x !== c) })} />
                  {c} (computed)
                </label>
              ))}
            </div>
          )}
        </fieldset>
      )}
      {(op === 'insert' || op === 'update') && (
        <fieldset>
          <legend>Column presets</legend>
          <p className="hint">Values set by the server, whatever the request says: a static value or a session variable such as X-Svc-User-Id.</p>
          {form.presets.map((p, i) => (
            <div className="inline" key={i} role="group" aria-label={`Preset ${i + 1}`}>
              <label htmlFor={`${id}-pc${i}`} className="sr-only">Column</label>
              <select id={`${id}-pc${i}`} value={p.column} onChange={(e) => set({ presets: form.presets.map((x, j) => (j === i ? { ...x, column: e.target.value } : x)) })}>
                <option value="">(column)</option>
                {allColumns.map((c) => <option key={c}>{c}</option>)}
              </select>
              <label htmlFor={`${id}-pv${i}`} className="sr-only">Value</label>
              <input id={`${id}-pv${i}`} value={p.value} placeholder="value or X-Svc-…"
                onChange={(e) => set({ presets: form.presets.map((x, j) => (j === i ? { ...x, value: e.target.value } : x)) })} />
              <button type="button" aria-label={`Remove preset ${i + 1}`} onClick={() => set({ presets: form.presets.filter((_, j) => j !== i) })}>✕</button>
            </div>
          ))}
          <button type="button" onClick={() => set({ presets: [...form.presets, { column: '', value: '' }] })}>Add preset</button>
        </fieldset>
      )}
      {op === 'select' && (
        <fieldset>
          <legend>Rows and aggregations</legend>
          <div className="inline">
            <label htmlFor={`${id}-limit`}>Row limit</label>
            <input id={`${id}-limit`} inputMode="numeric" size={8} value={form.limit} onChange={(e) => set({ limit: e.target.value })} placeholder="none" />
            <label><input type="checkbox" checked={form.allowAggregations} onChange={(e) => set({ allowAggregations: e.target.checked })} /> Allow aggregation queries</label>
          </div>
        </fieldset>
      )}
      {op === 'insert' && (
        <label><input type="checkbox" checked={form.backendOnly} onChange={(e) => set({ backendOnly: e.target.checked })} /> Backend only (only with X-Svc-Use-Backend-Only-Permissions and the admin secret)</label>
      )}
      <ProblemList id={`${id}-problems`} problems={showProblems ? otherProblems : []} />
      <ErrorBox error={action.error} title="The server refused" />
      <Status message={action.done} />
      <div className="inline">
        <button type="submit" className="primary" disabled={action.busy || (showProblems && !built.permission)}>Save permission</button>
        {existing && <ConfirmButton label="Delete permission" danger question={`Remove the ${op} permission of ${role}?`} onConfirm={remove} />}
        <button type="button" onClick={onClose}>Close</button>
      </div>
      <fieldset>
        <legend>Copy this {op} permission to other roles <span className="hint">(replaces theirs)</span></legend>
        <div className="checks">
          {roles.filter((r) => r !== role).map((r) => (
            <label key={r}><input type="checkbox" checked={copyTo.includes(r)} onChange={(e) => setCopyTo(e.target.checked ? [...copyTo, r] : copyTo.filter((x) => x !== r))} /> {r}{hasPermission(r) ? ' (has one)' : ''}</label>
          ))}
        </div>
        <div className="inline">
          <label htmlFor={`${id}-copy-new`}>Other roles <span className="hint">(comma-separated)</span></label>
          <input id={`${id}-copy-new`} value={copyNew} onChange={(e) => setCopyNew(e.target.value)} placeholder="e.g. editor, manager" />
          <button type="button" disabled={action.busy || targets.length === 0} onClick={copy}>{targets.length === 0 ? 'Copy' : `Copy to ${targets.length === 1 ? targets[0] : `${targets.length} roles`}`}</button>
        </div>
      </fieldset>
    </form>
  );
}
