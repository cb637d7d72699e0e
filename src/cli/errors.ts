/**
 * The CLI's exit codes and its error type. A CliError is a user-facing failure: it is printed as
 * its message (and as `{"error": …}` with `--output json`), never with a stack trace. Messages are
 * built in ./messages.ts.
 */

/** Exit codes of every `svc` CLI command (documented in `svc <command> --help` and the README). */
export const EXIT = {
  /** done */
  OK: 0,
  /** the command ran and its check failed: `metadata diff` found differences, `metadata inconsistency status` found inconsistent objects */
  CHECK_FAILED: 1,
  /** bad command line: unknown command or flag, missing or extra argument, conflicting flags */
  USAGE: 2,
  /** the project on disk: no config.yaml, unreadable or invalid config, migration, metadata or seed files */
  PROJECT: 3,
  /** the server could not be used: unreachable, not a Svc server, admin secret refused, response too large or too slow */
  SERVER: 4,
  /** the server refused the request: a migration or seed failed (rolled back), metadata rejected */
  REJECTED: 5,
  /** a bug in svc itself (printed with its stack trace) */
  INTERNAL: 70,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    /** a short machine-readable kind, `code` of the JSON error */
    readonly code: string,
    message: string,
    /** extra lines printed under the message (hints, details) */
    readonly details: string[] = [],
    /** extra members of the JSON error */
    readonly data: Record<string, unknown> = {},
    /** members of the JSON document beside `error` (what was done before the failure) */
    public result: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** A /v1/query request the server answered with an error (`{path, error, code, internal?}`). */
export class QueryFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly error: string,
    readonly path: string,
    readonly internal: unknown,
  ) {
    super(error);
    this.name = 'QueryFailure';
  }

  /** The index of the failing operation of a `bulk` request (`$.args[3]…`), if any. */
  bulkIndex(): number | undefined {
    const m = /^\$\.args\[(\d+)\]/.exec(this.path);
    return m ? Number(m[1]) : undefined;
  }

  /** PostgreSQL's error of a `postgres-error` (from `internal`, which admins see by default). */
  postgres(): { message: string; status_code?: string; hint?: string | null; description?: string | null } | undefined {
    const i = this.internal as { error?: { message?: unknown; status_code?: unknown; hint?: unknown; description?: unknown } } | undefined;
    const e = i && typeof i === 'object' ? i.error : undefined;
    if (!e || typeof e.message !== 'string') return undefined;
    return {
      message: e.message,
      ...(typeof e.status_code === 'string' ? { status_code: e.status_code } : {}),
      hint: typeof e.hint === 'string' ? e.hint : null,
      description: typeof e.description === 'string' ? e.description : null,
    };
  }
}
