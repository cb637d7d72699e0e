/**
 * Boolean expressions (permission filters/checks and `where` arguments) share
 * one syntax: `{col: {_op: value}}`, `{col: value}` (equality), `{rel: {...}}`,
 * `_and`/`_or`/`_not`, `_exists`. Operators may be written `_eq` or `$eq`.
 * A string value starting with `x-svc-` (any case) is a session variable.
 */
import { SvcError } from '../errors.js';
import type { QualifiedTable } from '../model/metadata.js';

export function isSessionVariable(v: unknown): v is string {
  return typeof v === 'string' && /^x-svc-/i.test(v);
}

export function operatorName(key: string): string | undefined {
  if (key.startsWith('_') || key.startsWith('$')) return key.slice(1);
  return undefined;
}

export function normalizeTableName(t: unknown): QualifiedTable {
  if (typeof t === 'string') return { schema: 'public', name: t };
  if (t && typeof t === 'object' && typeof (t as QualifiedTable).name === 'string') {
    return { schema: (t as QualifiedTable).schema ?? 'public', name: (t as QualifiedTable).name };
  }
  throw new SvcError(400, 'parse-failed', 'expecting a table name');
}
