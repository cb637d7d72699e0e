/** Runs SQL with run_sql and shows the rows as a table. Ctrl+Enter runs. */
import { useId, useState, type FormEvent, type KeyboardEvent } from 'react';
import { bulk, runSql, type SqlResult } from '../api';
import { ErrorBox, PageHeader, ResultTable, Status, useAction } from '../ui';
import { loadTables } from './load';
import { tableLabel } from './model';

export function SqlRunner({ onChanged }: { onChanged: () => void }) {
  const [sql, setSql] = useState('');
  const [cascade, setCascade] = useState(false);
  const [readOnly, setReadOnly] = useState(false);
  const [trackNew, setTrackNew] = useState(false);
  const [result, setResult] = useState<SqlResult>();
  const [tracked, setTracked] = useState<string[]>([]);
  const action = useAction();
  const id = useId();

  const run = () =>
    action.run(async () => {
      setResult(undefined);
      setTracked([]);
      const before = trackNew ? new Set((await loadTables()).map((t) => `${t.schema}.${t.name}`)) : undefined;
      const r = await runSql(sql, { cascade, readOnly });
      setResult(r);
      if (before) {
        const created = (await loadTables()).filter((t) => !before.has(`${t.schema}.${t.name}`));
        if (created.length) await bulk(created.map((t) => ({ type: 'track_table', args: { table: { schema: t.schema, name: t.name } } })));
        setTracked(created.map(tableLabel));
      }
      if (!readOnly) onChanged();
    }, 'SQL executed');

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run();
  };
  const key = (e: KeyboardEvent) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      void run();
    }
  };

  const [head, ...rows] = result?.result ?? [];
  return (
    <>
      <PageHeader title="SQL" />
      <form onSubmit={submit}>
        <div className="field">
          <label htmlFor={`${id}-sql`}>
            SQL <span className="hint">(run with run_sql as the server's database user; Ctrl+Enter runs)</span>
          </label>
          <textarea id={`${id}-sql`} className="code" rows={10} value={sql} onChange={(e) => setSql(e.target.value)} onKeyDown={key} spellCheck={false} required />
        </div>
        <div className="checks">
          <label><input type="checkbox" checked={trackNew} onChange={(e) => setTrackNew(e.target.checked)} /> Track tables and views this creates</label>
          <label><input type="checkbox" checked={cascade} onChange={(e) => setCascade(e.target.checked)} /> Cascade metadata (drop dependent relationships and permissions)</label>
          <label><input type="checkbox" checked={readOnly} onChange={(e) => setReadOnly(e.target.checked)} /> Read only</label>
        </div>
        <p>
          <button type="submit" className="primary" disabled={action.busy || !sql.trim()}>{action.busy ? 'Running…' : 'Run'}</button>
        </p>
      </form>
      <ErrorBox error={action.error} title="SQL failed" />
      <Status
        message={action.done && result
          ? `${result.result_type === 'TuplesOk' ? `${rows.length} row${rows.length === 1 ? '' : 's'}` : 'Command completed'}${tracked.length ? `; tracked ${tracked.join(', ')}` : ''}`
          : undefined}
      />
      {result?.result_type === 'TuplesOk' && head && <ResultTable caption="Result" columns={head as string[]} rows={rows} />}
    </>
  );
}
