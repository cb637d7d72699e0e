/**
 * Errors are values with an HTTP status, a machine code and a JSON path until
 * the HTTP edge turns them into a response (`{path, error, code}` for
 * /v1/query, GraphQL `errors[]` with `extensions` for /v1/graphql).
 */
export class SvcError extends Error {
  constructor(
    public readonly status: number,
    public readonly code: string,
    message: string,
    public path: string = '$',
    public readonly internal?: unknown,
  ) {
    super(message);
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

export const err400 = (code: string, message: string, path = '$') => new SvcError(400, code, message, path);
export const err401 = (code: string, message: string, path = '$') => new SvcError(401, code, message, path);
export const err500 = (code: string, message: string, path = '$', internal?: unknown) =>
  new SvcError(500, code, message, path, internal);

export const notExists = (message: string, path = '$') => err400('not-exists', message, path);
export const alreadyExists = (message: string, path = '$') => err400('already-exists', message, path);
export const notSupported = (message: string, path = '$') => err400('not-supported', message, path);
export const invalidParams = (message: string, path = '$') => err400('invalid-params', message, path);
export const parseFailed = (message: string, path = '$') => err400('parse-failed', message, path);
export const accessDenied = (message: string, path = '$') => err400('access-denied', message, path);
