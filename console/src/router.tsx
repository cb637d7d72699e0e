/**
 * A small client-side router over the History API. Every console URL lives under /console; the
 * server answers any /console/* path with index.html, so deep links and reloads work.
 */
import { useEffect, useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

export const BASE = '/console';

const listeners = new Set<() => void>();
const notify = () => listeners.forEach((l) => l());
if (typeof window !== 'undefined') window.addEventListener('popstate', notify);

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

/** The path below /console, without leading or trailing slashes ('' for the console's root). */
export function currentPath(): string {
  const p = window.location.pathname;
  const rest = p === BASE || p.startsWith(`${BASE}/`) ? p.slice(BASE.length) : p;
  return rest.replace(/^\/+|\/+$/g, '');
}

export function usePath(): string {
  return useSyncExternalStore(subscribe, currentPath);
}

/** The query string parameters of the current URL (re-rendered on navigation). */
export function useSearch(): URLSearchParams {
  const s = useSyncExternalStore(subscribe, () => window.location.search);
  return new URLSearchParams(s);
}

export function href(path: string): string {
  const clean = path.replace(/^\/+/, '');
  return clean ? `${BASE}/${clean}` : BASE;
}

export function navigate(path: string, opts: { replace?: boolean } = {}): void {
  const url = href(path);
  if (url === window.location.pathname + window.location.search) return;
  if (opts.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  notify();
}

/** Path segments, decoded. */
export function segments(path: string): string[] {
  return path.split('/').filter(Boolean).map((s) => decodeURIComponent(s));
}

export function Link({ to, onClick, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const click = (e: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return <a href={href(to)} onClick={click} {...rest} />;
}

/** Sets document.title while mounted. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Svc console`;
  }, [title]);
}
