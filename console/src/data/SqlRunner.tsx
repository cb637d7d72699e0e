/** Runs SQL with run_sql and shows the rows as a table. Ctrl+Enter runs. */
import { useId, useState, type FormEvent, type KeyboardEvent } from 'react';
import { ApiError, bulk, runSql, type SqlResult } from '../api';
import { useProject } from '../ProjectBar';
import { ErrorBox, PageHeader, ResultTable, Status, useAction } from '../ui';
import { migrationName } from './ddl';
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
  // with a project (svc console): the SQL is written as a migration unless this is unticked
  const project = useProject();
  const [isMigration, setIsMigration] = useState(true);
  const [migName, setMigName] = useState('');

  const [ranSql, setRanSql] = useState('');
  const run = () =>
    action.run(async () => {
      setRanSql(sql);
      setResult(undefined);
      setTracked([]);
      const before = trackNew ? new Set((await loadTables()).map((t) => `${t.schema}.${t.name}`)) : undefined;
      const r = await runSql(sql, { cascade, readOnly, migration: isMigration, ...(migName.trim() ? { name: migrationName(migName.trim()) } : {}) });
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
          {project && !readOnly && <label><input type="checkbox" checked={isMigration} onChange={(e) => setIsMigration(e.target.checked)} /> This is a migration</label>}
        </div>
        {project && !readOnly && isMigration && (
          <div className="field">
            <label htmlFor={`${id}-mig`}>Migration name <span className="hint">(optional; the down.sql asks to be written by hand)</span></label>
            <input id={`${id}-mig`} value={migName} onChange={(e) => setMigName(e.target.value)} placeholder="add_orders" />
          </div>
        )}
        <p>
          <button type="submit" className="primary" disabled={action.busy || !sql.trim()}>{action.busy ? 'Running…' : 'Run'}</button>
        </p>
      </form>
      {action.error instanceof ApiError && action.error.pgError ? <SqlError error={action.error} sql={ranSql} /> : <ErrorBox error={action.error} title="SQL failed" />}
      <Status
        message={action.done && result
          ? `${result.result_type === 'TuplesOk' ? `${rows.length} row${rows.length === 1 ? '' : 's'}` : 'Command completed'}${tracked.length ? `; tracked ${tracked.join(', ')}` : ''}`
          : undefined}
      />
      {result?.result_type === 'TuplesOk' && head && <ResultTable caption="Result" columns={head as string[]} rows={rows} />}
    </>
  );
}

/** Line and column (1-based) of a 1-based character position in `text`, and that line. */
export function locate(text: string, position: number): { line: number; column: number; lineText: string } {
  const before = text.slice(0, Math.max(0, position - 1));
  const line = before.split('\n').length;
  const start = before.lastIndexOf('\n') + 1;
  const end = text.indexOf('\n', start);
  return { line, column: position - start, lineText: text.slice(start, end < 0 ? undefined : end) };
}

/** PostgreSQL's error as it reported it: message, SQLSTATE, detail, hint, and where in the SQL. */
function SqlError({ error, sql }: { error: ApiError; sql: string }) {
  const pg = error.pgError!;
  const at = pg.position ? locate(sql, pg.position) : undefined;
  return (
    <div className="error sql-error" role="alert">
      <strong>SQL failed: </strong>{pg.message}
      <dl>
        {pg.status_code && <><dt>SQLSTATE</dt><dd>{pg.status_code}</dd></>}
        {pg.description && <><dt>Detail</dt><dd>{pg.description}</dd></>}
        {pg.hint && <><dt>Hint</dt><dd>{pg.hint}</dd></>}
        {at && <><dt>Position</dt><dd>line {at.line}, column {at.column} (character {pg.position})</dd></>}
      </dl>
      {at && <pre className="caret" aria-label="where the error is">{`${at.lineText}\n${' '.repeat(Math.max(0, at.column - 1))}^`}</pre>}
    </div>
  );
}
