/**
 * What the response cache needs to know of a plan, computed once per cached plan (and again when
 * the change tracker re-read the catalog): the base tables its statement reads (permission
 * filters, relationships, `_exists`, views and SQL/plpgsql functions resolved by the tracker,
 * src/changes/reads.ts), the session variables it reads (those of the role's permissions on the
 * fields asked for), the constant part of its key, or why it cannot be cached.
 *
 * Not cacheable (answered as without the directive, with `X-Svc-Query-Cache: bypass`): plans whose
 * reads cannot be known (a function with dynamic SQL or in another language, a materialized view,
 * a foreign table), actions and remote schemas (their data has no change signal at all).
 */
import { print } from 'graphql';
import type { Operation } from '../ir/document.js';

export interface CachePolicy {
  /** why the plan is answered uncached; undefined = cacheable */
  bypass?: string;
  /** `schema.table` of every table read, sorted */
  tables: string[];
  /** session variables whose values are part of the key; null = the whole session */
  sessionVars: string[] | null;
  /** hash of what every request of the plan shares: database, role, variant, operation name, normalised query */
  base: string;
  /** the change tracker's catalog version the tables were resolved with */
  catalog: number;
}

/** The normalised text of an operation: graphql-js's printing of it and its fragments (comments, spacing, commas gone). */
export function normalisedQuery(op: Operation): string {
  let out = print(op.def);
  for (const name of [...op.fragments.keys()].sort()) out += `\n${print(op.fragments.get(name)!)}`;
  return out;
}
