/** Small accessible building blocks shared by the pages. */
import { useCallback, useEffect, useRef, useState, useSyncExternalStore, type ReactNode } from 'react';
import { errorMessage } from './api';
import { usePath } from './router';

export interface Async<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `fn` on mount and whenever `deps` change; `reload()` runs it again. Stale results are dropped. */
export function useAsync<T>(fn: () => Promise<T>, deps: unknown[]): Async<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    fn().then(
      (data) => live && setState({ data, loading: false }),
      (error) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** Runs an action, tracking busy state and its error or success message. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const run = useCallback(async (fn: () => Promise<unknown>, success?: string): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    setDone(undefined);
    try {
      await fn();
      if (success) setDone(success);
      return true;
    } catch (e) {
      setError(e);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  const clear = useCallback(() => {
    setError(undefined);
    setDone(undefined);
  }, []);
  return { busy, error, done, run, clear };
}

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <header className="page-header">
      <h1 id="page-title" tabIndex={-1}>{title}</h1>
      {children && <div className="page-actions">{children}</div>}
    </header>
  );
}

export function ErrorBox({ error, title }: { error: unknown; title?: string }) {
  if (error === undefined || error === null) return null;
  return (
    <div className="error" role="alert">
      {title && <strong>{title}: </strong>}
      {errorMessage(error)}
    </div>
  );
}

/** A polite live region for results of actions. */
export function Status({ message }: { message?: string }) {
  return (
    <p className="status" role="status" aria-live="polite">
      {message ?? ''}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

/** A table of values; cells show null as a dimmed NULL and objects as JSON. */
export function ResultTable({ columns, rows, caption, actions }: {
  columns: string[];
  rows: unknown[][];
  caption?: string;
  actions?: (rowIndex: number) => ReactNode;
}) {
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label={caption ?? 'results'}>
      <table className="grid">
        {caption && <caption>{caption}</caption>}
        <thead>
          <tr>
            {actions && <th scope="col">Actions</th>}
            {columns.map((c, i) => (
              <th key={i} scope="col">{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i}>
              {actions && <td className="row-actions">{actions(i)}</td>}
              {r.map((v, j) => (
                <td key={j}>{cell(v)}</td>
              ))}
            </tr>
          ))}
          {rows.length === 0 && (
            <tr>
              <td colSpan={columns.length + (actions ? 1 : 0)} className="empty">no rows</td>
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}

function cell(v: unknown): ReactNode {
  if (v === null || v === undefined) return <span className="null">NULL</span>;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/**
 * A modal confirmation (native <dialog>: focus moves into it and Escape cancels). `onConfirm`
 * runs when the person confirms; the dialog closes either way.
 */
export function ConfirmButton({ label, text, question, confirmLabel, onConfirm, danger, disabled }: {
  /** the button's accessible name (and the dialog's) */
  label: string;
  /** shorter visible text where rows repeat the button (e.g. "Drop"; the label names the row) */
  text?: string;
  question: ReactNode;
  confirmLabel?: string;
  onConfirm: () => void;
  danger?: boolean;
  disabled?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLButtonElement>(null);
  const close = () => {
    ref.current?.close();
    opener.current?.focus();
  };
  return (
    <>
      <button ref={opener} type="button" className={danger ? 'danger' : undefined} disabled={disabled} onClick={() => ref.current?.showModal()}
        aria-label={text ? label : undefined}>
        {text ?? label}
      </button>
      <dialog ref={ref} className="confirm" aria-label={label} onCancel={() => opener.current?.focus()}>
        <p>{question}</p>
        <div className="dialog-actions">
          <button type="button" onClick={close} autoFocus>Cancel</button>
          <button
            type="button"
            className={danger ? 'danger' : 'primary'}
            onClick={() => {
              close();
              onConfirm();
            }}
          >
            {confirmLabel ?? label}
          </button>
        </div>
      </dialog>
    </>
  );
}

/** Pretty JSON in a scrollable, focusable block. */
export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  return (
    <pre className="json" tabIndex={0} aria-label={label}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

/** One delivery try as the invocation-log tables store it (request and response are JSON texts). */
export interface InvocationLog {
  status: string | null;
  created_at: string | null;
  request: string | null;
  response: string | null;
}

/** The invocation logs of one event, newest first: the first one open, each with request and response. */
export function InvocationLogs({ logs }: { logs: Array<Partial<InvocationLog>> | undefined }) {
  return (
    <>
      {(logs ?? []).map((l, i) => (
        <details key={i} open={i === 0}>
          <summary>{l.created_at}: HTTP {l.status}</summary>
          <JsonBlock label="request" value={JSON.parse(l.request ?? 'null')} />
          <JsonBlock label="response" value={JSON.parse(l.response ?? 'null')} />
        </details>
      ))}
      {logs?.length === 0 && <p className="muted">No invocations yet.</p>}
    </>
  );
}

/** One row of a headers editor: a header's name and its value or the environment variable holding it. */
export interface HeaderRow {
  name: string;
  value: string;
  fromEnv: boolean;
}

/** Headers as the metadata stores them ({name, value} or {name, value_from_env}) → editor rows. */
export function headerRowsOf(headers: unknown): HeaderRow[] {
  return ((Array.isArray(headers) ? headers : []) as Array<{ name: string; value?: string; value_from_env?: string }>)
    .map((h) => ({ name: h.name, value: h.value ?? h.value_from_env ?? '', fromEnv: h.value_from_env !== undefined }));
}

/** Editor rows → headers as the metadata API takes them (rows without a name are left out). */
export function headersOf(rows: HeaderRow[]): Array<{ name: string; value?: string; value_from_env?: string }> {
  return rows.filter((h) => h.name.trim()).map((h) => (h.fromEnv ? { name: h.name.trim(), value_from_env: h.value } : { name: h.name.trim(), value: h.value }));
}

/** Rows of headers: name, value or environment variable. */
export function HeaderRows({ id, headers, onChange }: {
  id: string;
  headers: HeaderRow[];
  onChange: (h: HeaderRow[]) => void;
}) {
  const setAt = (i: number, patch: Partial<HeaderRow>) => onChange(headers.map((x, j) => (j === i ? { ...x, ...patch } : x)));
  return (
    <fieldset>
      <legend>Headers</legend>
      {headers.map((h, i) => (
        <div className="inline" key={i} role="group" aria-label={`Header ${i + 1}`}>
          <label htmlFor={`${id}-hn${i}`}>Name</label>
          <input id={`${id}-hn${i}`} value={h.name} size={14} onChange={(e) => setAt(i, { name: e.target.value })} />
          <label htmlFor={`${id}-hv${i}`}>{h.fromEnv ? 'Environment variable' : 'Value'}</label>
          <input id={`${id}-hv${i}`} value={h.value} size={16} onChange={(e) => setAt(i, { value: e.target.value })} />
          <label><input type="checkbox" checked={h.fromEnv} onChange={(e) => setAt(i, { fromEnv: e.target.checked })} /> from env</label>
          <button type="button" aria-label={`Remove header ${i + 1}`} onClick={() => onChange(headers.filter((_, j) => j !== i))}>Remove</button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...headers, { name: '', value: '', fromEnv: false }])}>Add header</button>
    </fieldset>
  );
}


/*
 * A success message that outlives the page that said it: an action that ends by opening another
 * page (creating a table opens it) says what it did with flash(); the message shows on the next
 * page and goes at the navigation after that.
 */
let flashed: { message: string; armed: boolean } | undefined;
const flashListeners = new Set<() => void>();
const flashNotify = () => flashListeners.forEach((l) => l());

export function flash(message: string): void {
  flashed = { message, armed: true };
  flashNotify();
}

export function FlashMessage() {
  const path = usePath();
  const state = useSyncExternalStore((l) => {
    flashListeners.add(l);
    return () => flashListeners.delete(l);
  }, () => flashed);
  useEffect(() => {
    if (!flashed) return;
    if (flashed.armed) flashed = { ...flashed, armed: false };
    else {
      flashed = undefined;
      flashNotify();
    }
  }, [path]);
  return (
    <p className="status flash" role="status" aria-live="polite">
      {state?.message ?? ''}
    </p>
  );
}
