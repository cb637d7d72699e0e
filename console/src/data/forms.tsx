/** Form parts shared by the create-table form and the Modify tab: a column's fields, a foreign key's. */
import { useId } from 'react';
import { COMMON_TYPES, FK_ACTIONS, suggestedDefaults, type ColumnSpec, type FkAction, type ForeignKeySpec } from './ddl';
import { tableLabel, type TableInfo } from './model';

/** The datalist of common column types (rendered once per form). */
export function TypeList({ id }: { id: string }) {
  return <datalist id={id}>{COMMON_TYPES.map((t) => <option key={t} value={t} />)}</datalist>;
}

/** Name, type, default, nullable and unique of one column, in a group named `legend`. */
export function ColumnFields({ legend, value, onChange, typeListId, onRemove, primaryKey }: {
  legend: string;
  value: ColumnSpec;
  onChange: (c: ColumnSpec) => void;
  typeListId: string;
  onRemove?: () => void;
  /** the "primary key" checkbox (create-table form only) */
  primaryKey?: { checked: boolean; onChange: (v: boolean) => void };
}) {
  const id = useId();
  const set = (patch: Partial<ColumnSpec>) => onChange({ ...value, ...patch });
  const defaults = suggestedDefaults(value.type);
  return (
    <fieldset className="column-fields">
      <legend>{legend}</legend>
      <div className="inline">
        <div className="field"><label htmlFor={`${id}-name`}>Name</label><input id={`${id}-name`} value={value.name} onChange={(e) => set({ name: e.target.value })} required size={16} /></div>
        <div className="field"><label htmlFor={`${id}-type`}>Type</label><input id={`${id}-type`} list={typeListId} value={value.type} onChange={(e) => set({ type: e.target.value })} required size={14} /></div>
        <div className="field">
          <label htmlFor={`${id}-default`}>Default <span className="hint">(SQL)</span></label>
          <input id={`${id}-default`} list={`${id}-defaults`} value={value.default} onChange={(e) => set({ default: e.target.value })} size={14} placeholder="none" />
          <datalist id={`${id}-defaults`}>{defaults.map((d) => <option key={d} value={d} />)}</datalist>
        </div>
        <div className="checks">
          <label><input type="checkbox" checked={value.nullable} onChange={(e) => set({ nullable: e.target.checked })} /> Nullable</label>
          <label><input type="checkbox" checked={value.unique} onChange={(e) => set({ unique: e.target.checked })} /> Unique</label>
          {primaryKey && <label><input type="checkbox" checked={primaryKey.checked} onChange={(e) => primaryKey.onChange(e.target.checked)} /> Primary key</label>}
        </div>
        {onRemove && <button type="button" onClick={onRemove} aria-label={`Remove ${legend.toLowerCase()}`}>Remove</button>}
      </div>
    </fieldset>
  );
}

export const newColumn = (): ColumnSpec => ({ name: '', type: '', default: '', nullable: true, unique: false });
export const newForeignKey = (): ForeignKeySpec => ({ columns: [''], refSchema: '', refTable: '', refColumns: [''], onUpdate: 'no action', onDelete: 'no action' });

/** A foreign key: the referenced table, pairs of (column → referenced column), on update / on delete. */
export function ForeignKeyFields({ legend, value, onChange, columns, tables, onRemove }: {
  legend: string;
  value: ForeignKeySpec;
  onChange: (fk: ForeignKeySpec) => void;
  /** the columns of the referencing table */
  columns: string[];
  /** every table that may be referenced */
  tables: TableInfo[];
  onRemove?: () => void;
}) {
  const id = useId();
  const set = (patch: Partial<ForeignKeySpec>) => onChange({ ...value, ...patch });
  const refKey = value.refTable ? `${value.refSchema}.${value.refTable}` : '';
  const ref = tables.find((t) => `${t.schema}.${t.name}` === refKey);
  const setPair = (i: number, col: string, refCol: string) => set({
    columns: value.columns.map((c, j) => (j === i ? col : c)),
    refColumns: value.refColumns.map((c, j) => (j === i ? refCol : c)),
  });
  const action = (k: 'onUpdate' | 'onDelete', label: string) => (
    <div className="field">
      <label htmlFor={`${id}-${k}`}>{label}</label>
      <select id={`${id}-${k}`} value={value[k]} onChange={(e) => set({ [k]: e.target.value as FkAction })}>
        {FK_ACTIONS.map((a) => <option key={a}>{a}</option>)}
      </select>
    </div>
  );
  return (
    <fieldset>
      <legend>{legend}</legend>
      <div className="field">
        <label htmlFor={`${id}-table`}>References table</label>
        <select id={`${id}-table`} value={refKey} onChange={(e) => {
          const t = tables.find((x) => `${x.schema}.${x.name}` === e.target.value);
          set({ refSchema: t?.schema ?? '', refTable: t?.name ?? '', refColumns: value.refColumns.map((c, i) => (i === 0 && t ? t.primary_key[0] ?? '' : '')) });
        }}>
          <option value="">choose a table</option>
          {tables.map((t) => <option key={`${t.schema}.${t.name}`} value={`${t.schema}.${t.name}`}>{tableLabel(t)}</option>)}
        </select>
      </div>
      {value.columns.map((c, i) => (
        <div className="inline" key={i} role="group" aria-label={`${legend}, column pair ${i + 1}`}>
          <div className="field">
            <label htmlFor={`${id}-c${i}`}>Column</label>
            <select id={`${id}-c${i}`} value={c} onChange={(e) => setPair(i, e.target.value, value.refColumns[i] ?? '')}>
              <option value="">choose</option>
              {columns.filter((x) => x).map((x) => <option key={x}>{x}</option>)}
            </select>
          </div>
          <span aria-hidden="true">→</span>
          <div className="field">
            <label htmlFor={`${id}-r${i}`}>Referenced column</label>
            <select id={`${id}-r${i}`} value={value.refColumns[i] ?? ''} onChange={(e) => setPair(i, c, e.target.value)}>
              <option value="">choose</option>
              {(ref?.columns ?? []).map((x) => <option key={x.name}>{x.name}</option>)}
            </select>
          </div>
          {value.columns.length > 1 && (
            <button type="button" aria-label={`Remove column pair ${i + 1}`} onClick={() => set({ columns: value.columns.filter((_, j) => j !== i), refColumns: value.refColumns.filter((_, j) => j !== i) })}>Remove</button>
          )}
        </div>
      ))}
      <div className="inline">
        <button type="button" onClick={() => set({ columns: [...value.columns, ''], refColumns: [...value.refColumns, ''] })}>Add column pair</button>
        {action('onUpdate', 'On update')}
        {action('onDelete', 'On delete')}
        {onRemove && <button type="button" onClick={onRemove} aria-label={`Remove ${legend.toLowerCase()}`}>Remove</button>}
      </div>
    </fieldset>
  );
}
