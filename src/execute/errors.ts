/**
 * Errors at the edge, one module for every endpoint and protocol: PostgreSQL errors mapped to
 * Hasura's codes (`fromPgError`), the one converter of anything thrown into an SvcError
 * (`asSvcError`), the one rule for who sees `internal` details (`showInternalErrors`), and the one
 * envelope builder (`errorObject`): `/v1/graphql` `{errors: [{extensions: {path, code}, message}]}`
 * (on `/v1alpha1/graphql` with HTTP 400), `/v1/query` and the legacy websocket protocol
 * `{path, error, code}` (src/server/errors.ts names the two HTTP bodies).
 */
import { asPgError, isAcquireTimeout } from '../db/db.js';
import { ADMIN_ROLE } from '../core/session.js';
import { SvcError, type ErrorCode } from '../errors.js';

/** A database error as an SvcError (Hasura's mkTxErrorHandler). */
export function fromPgError(e: unknown, statement?: { text: string; params: unknown[]; prepared: boolean }): SvcError {
  if (e instanceof SvcError) return e;
  const pg = asPgError(e);
  const internal = pg
    ? {
        statement: statement?.text,
        prepared: statement?.prepared ?? false,
        error: { exec_status: 'FatalError', hint: pg.hint ?? null, message: pg.message, status_code: pg.code, description: pg.detail ?? null },
        arguments: statement?.params,
      }
    : { message: e instanceof Error ? e.message : String(e) };
  // the pool or the connection, not the statement: 503, details (addresses) only in `internal`,
  // which only admins see
  if (isAcquireTimeout(e))
    return new SvcError(503, 'unexpected', 'could not acquire a database connection in time: the server is busy, try again', '$', internal);
  if (!pg) {
    const code = (e as { code?: unknown })?.code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return new SvcError(503, 'unexpected', 'database connection error', '$', internal);
    return new SvcError(500, 'unexpected', 'database query error', '$', internal);
  }
  if (pg.code.startsWith('08') || pg.code === '57P01' || pg.code === '57P03')
    return new SvcError(503, 'unexpected', 'database connection error', '$', internal);
  // --statement-timeout, or the client went away (the statement was cancelled)
  if (pg.code === '57014') return new SvcError(500, 'unexpected', normalizeMessage(pg.message), '$', internal);
  // expected errors (the caller's data) carry no internal details, as in Hasura's mkTxErrorHandler
  const message = normalizeMessage(pg.message);
  const cls = pg.code.slice(0, 2);
  if (cls === '22') {
    return new SvcError(400, pg.code === '22025' ? 'bad-request' : 'data-exception', message, '$');
  }
  if (cls === '23') {
    const prefix: Record<string, [ErrorCode, string]> = {
      '23001': ['constraint-violation', 'Can not delete or update due to data being referenced. '],
      '23502': ['constraint-violation', 'Not-NULL violation. '],
      '23503': ['constraint-violation', 'Foreign key violation. '],
      '23505': ['constraint-violation', 'Uniqueness violation. '],
      '23514': ['permission-error', 'Check constraint violation. '],
      '23P01': ['constraint-violation', 'Exclusion violation. '],
    };
    const [code, p] = prefix[pg.code] ?? ['constraint-violation', ''];
    return new SvcError(400, code, p + message, '$');
  }
  if (pg.code === '42P10') return new SvcError(400, 'constraint-error', 'there is no unique or exclusion constraint on target column(s)', '$');
  if (pg.code === '42704') return new SvcError(400, 'constraint-error', message, '$');
  if (pg.code === 'P0001') return new SvcError(400, 'unexpected', message, '$', internal);
  return new SvcError(500, 'unexpected', 'database query error', '$', internal);
}

/**
 * PostgreSQL 13+ names the relation in not-null violations
 * (`null value in column "x" of relation "t" violates …`); Hasura's messages
 * (PostgreSQL 12) do not.
 */
function normalizeMessage(m: string): string {
  return m.replace(/^(null value in column "(?:[^"]|"")*") of relation "(?:[^"]|"")*"( violates not-null constraint)$/, '$1$2');
}

export interface ErrorFormat {
  /** `/v1alpha1/graphql` envelope */
  v1alpha1?: boolean;
  /** include `internal` details (admin with admin-internal-errors, or dev mode) */
  includeInternal?: boolean;
  /**
   * upstream's legacy error object `{path, error, code}` (its `encodeQErr`), which
   * `/v1alpha1/graphql` uses over websockets; otherwise `{extensions: {path, code}, message}`
   */
  legacy?: boolean;
}

/** The same envelope on both endpoints; `/v1alpha1/graphql` signals errors with HTTP 400 instead (see server/app.ts). */
export function errorObject(e: SvcError, fmt: ErrorFormat): Record<string, unknown> {
  if (fmt.legacy) {
    const o: Record<string, unknown> = { path: e.path, error: e.message, code: e.code };
    if (fmt.includeInternal && e.internal !== undefined) o.internal = e.internal;
    return o;
  }
  const ext: Record<string, unknown> = { path: e.path, code: e.code };
  if (fmt.includeInternal && e.internal !== undefined) ext.internal = e.internal;
  return { extensions: ext, message: e.message };
}

export function errorResponse(e: unknown, fmt: ErrorFormat): string {
  return JSON.stringify({ errors: [errorObject(asSvcError(e), fmt)] });
}

/**
 * Anything thrown as an SvcError, the one converter. An error of the database, the driver or the
 * pool is mapped by `fromPgError` (the pool or the connection: 503); anything else is a 500
 * `unexpected`. Never the error's own message, which may name internal hosts: `internal` carries
 * it for those who may see it.
 */
export function asSvcError(e: unknown): SvcError {
  if (e instanceof SvcError) return e;
  const code = (e as { code?: unknown } | null)?.code;
  if (asPgError(e) || isAcquireTimeout(e) || (typeof code === 'string' && /^E[A-Z]+$/.test(code))) return fromPgError(e);
  return new SvcError(500, 'unexpected', 'an unexpected error occurred', '$', { message: e instanceof Error ? e.message : String(e) });
}

/**
 * Who sees `internal` details: everyone with --dev-mode, admin unless --admin-internal-errors is
 * off, nobody else.
 */
export function showInternalErrors(config: { devMode: boolean; adminInternalErrors: boolean }, session: { role: string } | undefined): boolean {
  return config.devMode || (session?.role === ADMIN_ROLE && config.adminInternalErrors);
}
