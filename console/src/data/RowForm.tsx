/**
 * One input per column for inserting or editing a row. Empty inputs are left out on insert (the
 * column's default applies) and "null" sets NULL. Values are typed by column (see valueForColumn).
 */
import { useId, useState, type FormEvent } from 'react';
import { textOfValue, valueForColumn, type ColumnInfo } from './model';

interface Cell {
  text: string;
  isNull: boolean;
}

export function RowForm({ columns, initial, submitLabel, busy, onSubmit, onCancel }: {
  columns: ColumnInfo[];
  /** the row being edited (undefined: a new row) */
  initial?: Record<string, unknown>;
  submitLabel: string;
  busy: boolean;
  /** the changed (edit) or filled-in (insert) values */
  onSubmit: (values: Record<string, unknown>) => void;
  onCancel?: () => void;
}) {
  const id = useId();
  const start = (c: ColumnInfo): Cell => ({ text: textOfValue(initial?.[c.name]), isNull: initial !== undefined && initial[c.name] === null });
  const [cells, setCells] = useState<Record<string, Cell>>(() => Object.fromEntries(columns.map((c) => [c.name, start(c)])));
  const [problems, setProblems] = useState<Record<string, string>>({});

  const set = (name: string, patch: Partial<Cell>) => setCells((s) => ({ ...s, [name]: { ...s[name]!, ...patch } }));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const values: Record<string, unknown> = {};
    const bad: Record<string, string> = {};
    for (const c of columns) {
      const cell = cells[c.name]!;
      const before = start(c);
      if (initial && cell.isNull === before.isNull && cell.text === before.text) continue; // unchanged
      if (cell.isNull) values[c.name] = null;
      else if (cell.text === '' && !initial) continue; // default
      else {
        try {
          values[c.name] = valueForColumn(c.type, cell.text);
        } catch (err) {
          bad[c.name] = (err as Error).message;
        }
      }
    }
    setProblems(bad);
    if (Object.keys(bad).length === 0) onSubmit(values);
  };

  return (
    <form onSubmit={submit} className="row-form">
      {columns.map((c) => {
        const cell = cells[c.name]!;
        const inputId = `${id}-${c.name}`;
        const hintId = `${inputId}-hint`;
        return (
          <div className="field" key={c.name}>
            <label htmlFor={inputId}>
              {c.name} <span className="hint" id={hintId}>{c.type}{c.nullable ? '' : ', not null'}{c.default ? `, default ${c.default}` : ''}</span>
            </label>
            <div className="inline">
              <input id={inputId} name={c.name} value={cell.text} disabled={cell.isNull} onChange={(e) => set(c.name, { text: e.target.value })}
                placeholder={!initial && c.default ? 'default' : ''} aria-describedby={problems[c.name] ? `${hintId} ${inputId}-err` : hintId}
                aria-invalid={problems[c.name] ? true : undefined} size={40} />
              {c.nullable && (
                <label><input type="checkbox" checked={cell.isNull} onChange={(e) => set(c.name, { isNull: e.target.checked })} /> null</label>
              )}
            </div>
            {problems[c.name] && <span className="error" id={`${inputId}-err`}>{problems[c.name]}</span>}
          </div>
        );
      })}
      <div className="inline">
        <button type="submit" className="primary" disabled={busy}>{submitLabel}</button>
        {onCancel && <button type="button" onClick={onCancel}>Cancel</button>}
      </div>
    </form>
  );
}
