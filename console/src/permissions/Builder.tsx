/**
 * The visual row-permission builder: a boolean expression as nested groups of conditions. Each
 * condition picks a column (then an operator and a value, a session variable or another column),
 * a relationship (then conditions on the related table), or _and / _or / _not / _exists. The tree
 * model and its JSON are in ./boolexp.ts.
 */
import { useId } from 'react';
import { qualified, tableLabel, type QualifiedName } from '../data/model';
import { emptyGroup, isColumnOperator, operatorsFor, updateAt, type Cond, type Operand } from './boolexp';
import type { TableContext, TableLookup } from './validate';

export const SESSION_VARIABLES = ['X-Svc-User-Id', 'X-Svc-Role', 'X-Svc-Org-Id'];

interface Shared {
  root: Cond;
  onChange: (c: Cond) => void;
  lookup: TableLookup;
  /** tables _exists may look into */
  tables: QualifiedName[];
  /** the id of the session variables datalist */
  sessionList: string;
}

const NO_TABLE: TableContext = { columns: [], relationships: {} };

export function BoolExpBuilder({ label, tree, onChange, table, lookup, tables }: {
  /** what the expression is, e.g. "Row filter" (names the groups and controls) */
  label: string;
  tree: Cond;
  onChange: (c: Cond) => void;
  table: TableContext;
  lookup: TableLookup;
  tables: QualifiedName[];
}) {
  const id = useId();
  const shared: Shared = { root: tree, onChange, lookup, tables, sessionList: `${id}-session` };
  return (
    <div className="bx" role="group" aria-label={`${label} builder`}>
      <datalist id={`${id}-session`}>{SESSION_VARIABLES.map((v) => <option key={v} value={v} />)}</datalist>
      <GroupView node={tree} path={[]} label="" table={table} shared={shared} />
    </div>
  );
}

function GroupView({ node, path, label, table, shared, showOp = true }: { node: Cond; path: number[]; label: string; table: TableContext; shared: Shared; showOp?: boolean }) {
  if (node.kind !== 'group') return null;
  const name = label ? `group ${label}` : 'top group';
  const set = (f: (c: Cond) => Cond | null) => shared.onChange(updateAt(shared.root, path, f));
  const add = (c: Cond) => set((g) => (g.kind === 'group' ? { ...g, children: [...g.children, c] } : g));
  const firstColumn = table.columns[0]?.name ?? '';
  return (
    <div className="bx-group">
      <div className="inline">
        {showOp && (
          <>
            <label className="sr-only" htmlFor={`bx-${shared.sessionList}-${path.join('-')}-op`}>How the conditions of the {name} combine</label>
            <select id={`bx-${shared.sessionList}-${path.join('-')}-op`} value={node.op} onChange={(e) => set((g) => (g.kind === 'group' ? { ...g, op: e.target.value as '_and' | '_or' } : g))}>
              <option value="_and">all of (_and)</option>
              <option value="_or">any of (_or)</option>
            </select>
          </>
        )}
        {node.children.length === 0 && <span className="muted">no conditions: {path.length === 0 ? 'every row' : 'true'}</span>}
      </div>
      <ol className="bx-list">
        {node.children.map((c, i) => (
          <li key={i}>
            <CondView node={c} path={[...path, i]} label={label ? `${label}.${i + 1}` : `${i + 1}`} table={table} shared={shared} />
          </li>
        ))}
      </ol>
      <div className="inline">
        <button type="button" aria-label={`Add a condition to the ${name}`} onClick={() => add({ kind: 'column', column: firstColumn, op: '_eq', operand: { kind: 'value', text: '' } })}>+ Condition</button>
        <button type="button" aria-label={`Add a group to the ${name}`} onClick={() => add({ kind: 'group', op: node.op === '_and' ? '_or' : '_and', children: [] })}>+ Group</button>
      </div>
    </div>
  );
}

/** The value of the "field" select for a condition. */
function fieldOf(c: Cond): string {
  switch (c.kind) {
    case 'column': return `col:${c.column}`;
    case 'rel': return `rel:${c.name}`;
    case 'group': return c.op;
    case 'not': return '_not';
    case 'exists': return '_exists';
    case 'json': return 'json';
  }
}

function CondView({ node, path, label, table, shared }: { node: Cond; path: number[]; label: string; table: TableContext; shared: Shared }) {
  const id = useId();
  const set = (f: (c: Cond) => Cond | null) => shared.onChange(updateAt(shared.root, path, f));
  const what = `condition ${label}`;
  const changeField = (v: string) => set((c) => {
    if (v.startsWith('col:')) {
      const column = v.slice(4);
      return c.kind === 'column' ? { ...c, column } : { kind: 'column', column, op: '_eq', operand: { kind: 'value', text: '' } };
    }
    if (v.startsWith('rel:')) return { kind: 'rel', name: v.slice(4), where: c.kind === 'rel' ? c.where : emptyGroup() };
    if (v === '_and' || v === '_or') return c.kind === 'group' ? { ...c, op: v } : { kind: 'group', op: v, children: [] };
    if (v === '_not') return { kind: 'not', child: emptyGroup() };
    if (v === '_exists') return { kind: 'exists', table: null, where: emptyGroup() };
    return c;
  });
  const rels = Object.keys(table.relationships);
  const fieldSelect = (
    <>
      <label className="sr-only" htmlFor={`${id}-field`}>Field of {what}</label>
      <select id={`${id}-field`} value={fieldOf(node)} onChange={(e) => changeField(e.target.value)}>
        {node.kind === 'column' && !table.columns.some((c) => c.name === node.column) && <option value={`col:${node.column}`}>{node.column}</option>}
        <optgroup label="Columns">
          {table.columns.map((c) => <option key={c.name} value={`col:${c.name}`}>{c.name}</option>)}
          {(table.computedFields ?? []).map((c) => <option key={c} value={`col:${c}`}>{c} (computed)</option>)}
        </optgroup>
        {rels.length > 0 && (
          <optgroup label="Relationships">
            {rels.map((r) => <option key={r} value={`rel:${r}`}>{r} →</option>)}
          </optgroup>
        )}
        <optgroup label="Operators">
          <option value="_and">_and</option>
          <option value="_or">_or</option>
          <option value="_not">_not</option>
          <option value="_exists">_exists</option>
        </optgroup>
        {node.kind === 'json' && <option value="json">(JSON)</option>}
      </select>
    </>
  );
  const remove = <button type="button" aria-label={`Remove ${what}`} onClick={() => set(() => null)}>✕</button>;

  switch (node.kind) {
    case 'column': {
      const type = table.columns.find((c) => c.name === node.column)?.type ?? 'text';
      const ops = operatorsFor(type);
      const setOperand = (operand: Operand) => set((c) => (c.kind === 'column' ? { ...c, operand } : c));
      const columnOp = isColumnOperator(node.op);
      return (
        <div className="inline bx-cond" role="group" aria-label={what}>
          {fieldSelect}
          <label className="sr-only" htmlFor={`${id}-op`}>Operator of {what}</label>
          <select id={`${id}-op`} value={node.op} onChange={(e) => {
            const op = e.target.value;
            set((c) => (c.kind === 'column' ? { ...c, op, operand: isColumnOperator(op) ? { kind: 'column', name: c.operand.kind === 'column' ? c.operand.name : '' } : c.operand.kind === 'column' ? { kind: 'value', text: '' } : c.operand } : c));
          }}>
            {!ops.some((o) => o.op === node.op) && <option value={node.op}>{node.op}</option>}
            {ops.map((o) => <option key={o.op} value={o.op}>{o.label}</option>)}
          </select>
          {columnOp ? (
            <>
              <label className="sr-only" htmlFor={`${id}-col`}>Column compared in {what}</label>
              <select id={`${id}-col`} value={node.operand.kind === 'column' ? node.operand.name : ''} onChange={(e) => setOperand({ kind: 'column', name: e.target.value })}>
                <option value="">choose a column</option>
                {table.columns.map((c) => <option key={c.name}>{c.name}</option>)}
              </select>
            </>
          ) : (
            <>
              <label className="sr-only" htmlFor={`${id}-kind`}>Value kind of {what}</label>
              <select id={`${id}-kind`} value={node.operand.kind} onChange={(e) => setOperand(e.target.value === 'session'
                ? { kind: 'session', name: node.operand.kind === 'session' ? node.operand.name : 'X-Svc-User-Id' }
                : { kind: 'value', text: node.operand.kind === 'value' ? node.operand.text : '' })}>
                <option value="value">value</option>
                <option value="session">session var</option>
              </select>
              {node.operand.kind === 'session' ? (
                <>
                  <label className="sr-only" htmlFor={`${id}-val`}>Session variable of {what}</label>
                  <input id={`${id}-val`} list={shared.sessionList} value={node.operand.name} size={13} pattern="[Xx]-[Ss][Vv][Cc]-.+" title="a session variable: X-Svc-…"
                    onChange={(e) => setOperand({ kind: 'session', name: e.target.value })} />
                </>
              ) : (
                <>
                  <label className="sr-only" htmlFor={`${id}-val`}>Value of {what}</label>
                  <input id={`${id}-val`} value={node.operand.kind === 'value' ? node.operand.text : ''} size={10}
                    placeholder={node.op === '_in' || node.op === '_nin' ? 'a, b, c' : node.op === '_is_null' ? 'true or false' : type}
                    onChange={(e) => setOperand({ kind: 'value', text: e.target.value })} />
                </>
              )}
            </>
          )}
          {remove}
        </div>
      );
    }
    case 'rel': {
      const target = table.relationships[node.name];
      const ctx = (target && shared.lookup(target)) || NO_TABLE;
      return (
        <div className="bx-nested" role="group" aria-label={what}>
          <div className="inline">{fieldSelect}<span className="muted">rows of {target ? tableLabel(target) : '?'} where</span>{remove}</div>
          <GroupView node={node.where} path={[...path, 0]} label={label} table={ctx} shared={shared} />
        </div>
      );
    }
    case 'not':
      return (
        <div className="bx-nested" role="group" aria-label={what}>
          <div className="inline">{fieldSelect}<span className="muted">none of these holds</span>{remove}</div>
          <GroupView node={node.child} path={[...path, 0]} label={label} table={table} shared={shared} />
        </div>
      );
    case 'exists': {
      const ctx = (node.table && shared.lookup(node.table)) || NO_TABLE;
      const key = node.table ? `${node.table.schema}.${node.table.name}` : '';
      return (
        <div className="bx-nested" role="group" aria-label={what}>
          <div className="inline">
            {fieldSelect}
            <label className="sr-only" htmlFor={`${id}-table`}>Table of {what}</label>
            <select id={`${id}-table`} value={key} onChange={(e) => {
              const t = shared.tables.find((x) => `${x.schema}.${x.name}` === e.target.value);
              set((c) => (c.kind === 'exists' ? { ...c, table: t ? qualified(t) : null, where: emptyGroup() } : c));
            }}>
              <option value="">choose a table</option>
              {shared.tables.map((t) => <option key={`${t.schema}.${t.name}`} value={`${t.schema}.${t.name}`}>{tableLabel(t)}</option>)}
            </select>
            <span className="muted">has a row where</span>
            {remove}
          </div>
          <GroupView node={node.where} path={[...path, 0]} label={label} table={ctx} shared={shared} />
        </div>
      );
    }
    case 'group':
      return (
        <div className="bx-nested" role="group" aria-label={what}>
          <div className="inline">{fieldSelect}<span className="muted">{node.op === '_or' ? 'any of these holds' : 'all of these hold'}</span>{remove}</div>
          <GroupView node={node} path={path} label={label} table={table} shared={shared} showOp={false} />
        </div>
      );
    case 'json':
      return (
        <div className="inline bx-cond" role="group" aria-label={what}>
          {fieldSelect}
          <label className="sr-only" htmlFor={`${id}-json`}>JSON of {what}</label>
          <input id={`${id}-json`} className="mono grow" value={node.text} onChange={(e) => set(() => ({ kind: 'json', text: e.target.value }))} />
          {remove}
        </div>
      );
  }
}
