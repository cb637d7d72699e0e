/**
 * Errors are values with an HTTP status, a machine code and a JSON path until
 * the HTTP edge turns them into a response (`{path, error, code}` for
 * /v1/query, GraphQL `errors[]` with `extensions` for /v1/graphql).
 */
/**
 * The error codes: upstream v1.3's (Hasura/RQL/Types/Error.hs `Code`), then Svc's own (HTTP-level
 * refusals, pg_dump, Apollo's persisted queries). A code that comes from a third party (an action
 * handler's 4xx `code`, a remote's `extensions.code`) is passed through as a `ForeignCode`.
 */
export type ErrorCode =
  | 'permission-denied'
  | 'not-null-violation'
  | 'not-exists'
  | 'already-exists'
  | 'postgres-error'
  | 'not-supported'
  | 'dependency-error'
  | 'invalid-headers'
  | 'invalid-json'
  | 'access-denied'
  | 'parse-failed'
  | 'constraint-error'
  | 'permission-error'
  | 'not-found'
  | 'unexpected'
  | 'unexpected-payload'
  | 'no-update'
  | 'already-tracked'
  | 'already-untracked'
  | 'invalid-params'
  | 'already-initialised'
  | 'constraint-violation'
  | 'data-exception'
  | 'bad-request'
  | 'no-tables'
  | 'validation-failed'
  | 'busy'
  | 'jwt-missing-role-claims'
  | 'jwt-invalid-claims'
  | 'invalid-jwt'
  | 'invalid-jwt-key'
  | 'remote-schema-error'
  | 'remote-schema-conflicts'
  | 'coercion-error'
  | 'start-failed'
  | 'invalid-custom-types'
  // Svc's own
  | 'method-not-allowed'
  | 'payload-too-large'
  | 'not-acceptable'
  | 'pg-dump-error'
  | 'PERSISTED_QUERY_NOT_FOUND'
  | 'PERSISTED_QUERY_HASH_MISMATCH'
  // Hasura v2's, for the features taken from it (API limits, inherited roles)
  | 'time-limit-exceeded'
  | 'rate-limit-exceeded'
  | 'cyclic-dependency';

/** A code passed through from a third party (see ErrorCode). */
export type ForeignCode = string & { readonly foreign: unique symbol };
export const foreignCode = (code: string): ForeignCode => code as ForeignCode;

export class SvcError extends Error {
  constructor(
    public readonly status: number,
    public readonly code: ErrorCode | ForeignCode,
    message: string,
    public path: string = '$',
    public readonly internal?: unknown,
  ) {
    // no stack trace: a SvcError is an answer, not a bug (its cause, when there is one, is in
    // `internal`); capturing one cost 3-20 µs per error response, a cheap way to load the server
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'SvcError';
  }

  withPath(path: string): SvcError {
    this.path = path;
    return this;
  }
}

/**
 * One key of a JSON path as upstream prints it (Hasura/RQL/Types/Error.hs `encodeJSONPath`):
 * `.key` when the key starts with a letter or `_` and goes on with letters, digits, `_` or `-`;
 * `['key']` otherwise (`$.args['$set']`).
 */
export function pathKey(k: string): string {
  return /^[A-Za-z_][A-Za-z0-9_-]*$/.test(k) ? `.${k}` : `['${k}']`;
}

export const err400 = (code: ErrorCode, message: string, path = '$') => new SvcError(400, code, message, path);
export const err401 = (code: ErrorCode, message: string, path = '$') => new SvcError(401, code, message, path);
export const err500 = (code: ErrorCode, message: string, path = '$', internal?: unknown) => new SvcError(500, code, message, path, internal);

export const notExists = (message: string, path = '$') => err400('not-exists', message, path);
export const alreadyExists = (message: string, path = '$') => err400('already-exists', message, path);
export const notSupported = (message: string, path = '$') => err400('not-supported', message, path);
export const invalidParams = (message: string, path = '$') => err400('invalid-params', message, path);
export const parseFailed = (message: string, path = '$') => err400('parse-failed', message, path);
export const accessDenied = (message: string, path = '$') => err400('access-denied', message, path);
