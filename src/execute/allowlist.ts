/**
 * The allow-list: with --enable-allowlist, non-admin roles may only run
 * operations of the allow-listed collections, compared as normalised query
 * documents (`__typename` fields removed, printed canonically; field order
 * matters). A collection's scope (Hasura v2) is global, or a list of roles that may run its
 * queries; admin is never checked.
 */
import { parse, print, visit, type DocumentNode } from 'graphql';
import { SvcError } from '../errors.js';
import type { SchemaCache } from '../schema/model.js';

export function normalizeDocument(doc: DocumentNode): string {
  const stripped = visit(doc, {
    Field(node) {
      if (node.name.value === '__typename') return null;
      return undefined;
    },
  });
  return print(stripped);
}

interface Allowed {
  /** queries of the collections with a global scope (or none: v1.3's entries) */
  global: Set<string>;
  /** queries of the collections scoped to each role (v2's role-based allow-list) */
  perRole: Map<string, Set<string>>;
}

const memo = new WeakMap<SchemaCache, Allowed>();

function allowed(cache: SchemaCache): Allowed {
  let s = memo.get(cache);
  if (s) return s;
  s = { global: new Set(), perRole: new Map() };
  const collections = new Map(cache.metadata.query_collections.map((c) => [c.name, c]));
  for (const entry of cache.metadata.allowlist) {
    const c = collections.get(entry.collection);
    if (!c) continue;
    const targets: Set<string>[] = [];
    if (!entry.scope || entry.scope.global) targets.push(s.global);
    else {
      for (const role of entry.scope.roles) {
        let r = s.perRole.get(role);
        if (!r) s.perRole.set(role, (r = new Set()));
        targets.push(r);
      }
    }
    for (const q of c.definition.queries) {
      try {
        const n = normalizeDocument(parse(q.query));
        for (const t of targets) t.add(n);
      } catch {
        /* collections are validated on creation */
      }
    }
  }
  memo.set(cache, s);
  return s;
}

/**
 * Throws `validation-failed` "query is not allowed" when the document is in no collection of the
 * allow-list whose scope is global or lists `role` (no role: the global collections only).
 */
export function checkAllowlist(cache: SchemaCache, query: string, role?: string): void {
  let normalized: string;
  try {
    normalized = normalizeDocument(parse(query));
  } catch {
    return; // a query that does not parse fails validation later with its own error
  }
  const a = allowed(cache);
  if (a.global.has(normalized)) return;
  if (role !== undefined && a.perRole.get(role)?.has(normalized)) return;
  throw new SvcError(400, 'validation-failed', 'query is not allowed', '$');
}
