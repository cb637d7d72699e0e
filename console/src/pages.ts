/**
 * The console's pages. EXTENSION POINT: a page is one file `src/pages/<name>.tsx` that exports
 *
 *     export const meta: PageMeta = { path: 'events', title: 'Events', order: 40 };
 *     export default function EventsPage({ path }: PageProps) { ... }
 *
 * and nothing else needs to change: the files are found at build time (import.meta.glob), the
 * navigation lists them by `order`, and /console/<path>/... renders the page with the remaining
 * path segments. Built-in pages use orders 10 (API explorer), 20 (Data), 30 (Permissions) and 90
 * (Metadata); 40–80 are kept for the pages of features built elsewhere:
 *   40 event triggers (pending/processed/failed events, invocation logs, redeliver)
 *   50 cron triggers and one-off scheduled events
 *   60 actions
 *   70 remote schemas
 *   80 allow-list and query collections
 * Talk to the server through ./api.ts only (admin secret handling, error shapes); reuse ./ui.tsx.
 * A page whose code is heavy should lazy-load it (see pages/api-explorer.tsx) so that the
 * shared bundle, and with it every page's first paint, stays small.
 */
import type { ComponentType } from 'react';

export interface PageMeta {
  /** first path segment under /console */
  path: string;
  /** label in the navigation and heading of the page */
  title: string;
  /** position in the navigation, lower first */
  order: number;
  /** one line, shown as the navigation link's tooltip */
  description?: string;
}

export interface PageProps {
  /** the decoded path segments after /console/<meta.path> */
  path: string[];
}

interface PageModule {
  meta: PageMeta;
  default: ComponentType<PageProps>;
}

const modules = import.meta.glob<PageModule>('./pages/*.tsx', { eager: true });

export const PAGES: ReadonlyArray<{ meta: PageMeta; Component: ComponentType<PageProps> }> = Object.entries(modules)
  .map(([file, m]) => {
    if (!m.meta || typeof m.default !== 'function') throw new Error(`${file}: a page exports \`meta\` and a default component`);
    return { meta: m.meta, Component: m.default };
  })
  .sort((a, b) => a.meta.order - b.meta.order || a.meta.title.localeCompare(b.meta.title));
