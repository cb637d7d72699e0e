/** The two HTTP error bodies, built by the one envelope builder (src/execute/errors.ts). */
import type { SvcError } from '../errors.js';
import { asSvcError, errorObject } from '../execute/errors.js';

/** the one converter of anything thrown (src/execute/errors.ts) */
export const toSvcError = asSvcError;

/** `/v1/query` body: `{path, error, code}` (+ `internal` for admins when allowed). */
export function queryErrorBody(e: SvcError, showInternal: boolean): Record<string, unknown> {
  return errorObject(e, { legacy: true, includeInternal: showInternal });
}

/** GraphQL body: `{errors: [{extensions: {path, code}, message}]}`. */
export function graphqlErrorBody(e: SvcError, showInternal: boolean): Record<string, unknown> {
  return { errors: [errorObject(e, { includeInternal: showInternal })] };
}
