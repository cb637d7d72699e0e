/**
 * The allow-list: with --enable-allowlist, non-admin roles may only run
 * operations of the allow-listed collections, compared as normalised query
 * documents (`__typename` fields removed, printed canonically; field order
 * matters).
 */
import { parse, print, visit, type DocumentNode } from 'graphql';
import { SvcError } from '../errors.js';
import type { SchemaCache } from '../schema/model.js';

const memo = new WeakMap<SchemaCache, Set<string>>();

export function normalizeDocument(doc: DocumentNode): string {
  const stripped = visit(doc, {
    Field(node) {
      if (node.name.value === '__typename') return null;
      return undefined;
    },
  });
  return print(stripped);
}

function allowedSet(cache: SchemaCache): Set<string> {
  let s = memo.get(cache);
  if (s) return s;
  s = new Set();
  const listed = new Set(cache.metadata.allowlist.map((a) => a.collection));
  for (const c of cache.metadata.query_collections) {
    if (!listed.has(c.name)) continue;
    for (const q of c.definition.queries) {
      try {
        s.add(normalizeDocument(parse(q.query)));
      } catch {
        /* collections are validated on creation */
      }
    }
  }
  memo.set(cache, s);
  return s;
}

/** Throws `validation-failed` "query is not allowed" when the document is not allow-listed. */
export function checkAllowlist(cache: SchemaCache, query: string): void {
  let normalized: string;
  try {
    normalized = normalizeDocument(parse(query));
  } catch {
    return; // a query that does not parse fails validation later with its own error
  }
  if (!allowedSet(cache).has(normalized)) throw new SvcError(400, 'validation-failed', 'query is not allowed', '$');
}

