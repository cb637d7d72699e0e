/** Small accessible building blocks shared by the pages. */
import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { errorMessage } from './api';

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
            {actions && <th scope="col"><span className="sr-only">actions</span></th>}
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
export function ConfirmButton({ label, question, confirmLabel, onConfirm, danger, disabled }: {
  label: string;
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
      <button ref={opener} type="button" className={danger ? 'danger' : undefined} disabled={disabled} onClick={() => ref.current?.showModal()}>
        {label}
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
