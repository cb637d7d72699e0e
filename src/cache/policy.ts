/**
 * What the response cache needs to know of a plan, computed once per cached plan: the tables its
 * statement reads (permission filters, relationships, `_exists` included), the session variables
 * it reads (those of the role's permissions on the fields asked for), the constant part of its key,
 * or why it cannot be cached.
 *
 * Not cacheable (answered as without the directive, with `X-Svc-Query-Cache: bypass`): plans that
 * call SQL functions (function root fields, computed fields) or read views, materialized views or
 * foreign tables — a write to what those read raises no change signal on the table Svc knows —,
 * actions and remote schemas (their data has no change signal at all).
 */
import { createHash } from 'node:crypto';
import { print } from 'graphql';
import type { Operation } from '../ir/document.js';
import type { RootField } from '../ir/types.js';
import type { TableModel } from '../schema/model.js';

export interface CachePolicy {
  /** why the plan is answered uncached; undefined = cacheable */
  bypass?: string;
  /** `schema.table` of every table read, sorted */
  tables: string[];
  /** session variables whose values are part of the key; null = the whole session */
  sessionVars: string[] | null;
  /** hash of what every request of the plan shares: database, role, variant, operation name, normalised query */
  base: string;
}

/** The normalised text of an operation: graphql-js's printing of it and its fragments (comments, spacing, commas gone). */
export function normalisedQuery(op: Operation): string {
  let out = print(op.def);
  for (const name of [...op.fragments.keys()].sort()) out += `\n${print(op.fragments.get(name)!)}`;
  return out;
}

const isTable = (v: unknown): v is TableModel => typeof v === 'object' && v !== null && 'columnsByName' in v && 'info' in v && 'key' in v;

/** model objects the walk never enters (they lead to the whole schema, not to what the query reads) */
const SKIP = new Set(['rel', 'column', 'columns', 'distinctOn', 'type', 'encode', 'decode', 'join', 'cursorItems', 'numberText', 'to']);

/** Tables read by root fields, or the reason they cannot be known. */
export function tablesRead(fields: readonly RootField[]): { tables: string[]; bypass?: string } {
  const tables = new Set<string>();
  let bypass: string | undefined;
  const seen = new Set<object>();
  const walk = (x: unknown): void => {
    if (bypass || typeof x !== 'object' || x === null || seen.has(x)) return;
    seen.add(x);
    if (Array.isArray(x)) {
      for (const y of x) walk(y);
      return;
    }
    const o = x as Record<string, unknown>;
    const kind = o.kind;
    if (kind === 'function' || kind === 'computed_scalar' || kind === 'computed_table' || kind === 'computed' || kind === 'sql') {
      bypass = 'the query calls an SQL function';
      return;
    }
    if (kind === 'action' || kind === 'remote' || kind === 'remote_join') {
      bypass = 'the query uses an action or a remote schema';
      return;
    }
    for (const [k, v] of Object.entries(o)) {
      if (isTable(v)) {
        const t = v.info.kind;
        if (t !== 'r' && t !== 'p') {
          bypass = `the query reads ${t === 'v' ? 'a view' : t === 'm' ? 'a materialized view' : 'a foreign table'} (${v.key})`;
          return;
        }
        tables.add(`${v.info.schema}.${v.info.name}`);
        continue;
      }
      if (SKIP.has(k) || k === 'field' || k === 'ir') continue;
      walk(v);
    }
  };
  walk(fields as unknown);
  return { tables: [...tables].sort(), ...(bypass ? { bypass } : {}) };
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
