/** Turning SvcErrors into the two response envelopes. */
import { SvcError } from '../errors.js';
import { fromPgError } from '../execute/errors.js';

export function toSvcError(e: unknown): SvcError {
  if (e instanceof SvcError) return e;
  // the pool or the database connection (acquire timeout, database down): 503 without addresses
  const db = fromPgError(e);
  if (db.status === 503) return db;
  return new SvcError(500, 'unexpected', 'an unexpected error occurred', '$', e instanceof Error ? e.message : String(e));
}

/** `/v1/query` body: `{path, error, code}` (+ `internal` for admins when allowed). */
export function queryErrorBody(e: SvcError, showInternal: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { path: e.path, error: e.message, code: e.code };
  if (showInternal && e.internal !== undefined) body.internal = e.internal;
  return body;
}

/** GraphQL body: `{errors: [{extensions: {path, code}, message}]}`. */
export function graphqlErrorBody(e: SvcError, showInternal: boolean): Record<string, unknown> {
  const extensions: Record<string, unknown> = { path: e.path, code: e.code };
  if (showInternal && e.internal !== undefined) extensions.internal = e.internal;
  return { errors: [{ extensions, message: e.message }] };
}
