/**
 * The console's only way to the server: the public API (`/v1/query`, `/v1/graphql`,
 * `/v1/graphql/explain`, `/v1alpha1/config`, `/healthz`). The admin secret the person typed is
 * kept in sessionStorage (this tab only, gone when it closes) and sent as a header, never in a URL.
 */

const SECRET_KEY = 'svc-console-admin-secret';
export const ADMIN_SECRET_HEADER = 'X-Svc-Admin-Secret';

/** PostgreSQL's error as run_sql reports it to admin in `internal.error`. */
export interface PgErrorDetail {
  message: string;
  status_code?: string;
  description?: string | null;
  hint?: string | null;
  /** 1-based character offset in the SQL sent */
  position?: number;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
    readonly path?: string,
    readonly internal?: unknown,
  ) {
    super(message);
  }

  /** PostgreSQL's own error, when the server passed it on (postgres-error for admin) */
  get pgError(): PgErrorDetail | undefined {
    const e = (this.internal as { error?: PgErrorDetail } | undefined)?.error;
    return e && typeof e === 'object' && typeof e.message === 'string' ? e : undefined;
  }
}

export function getSecret(): string | null {
  try {
    return sessionStorage.getItem(SECRET_KEY);
  } catch {
    return null;
  }
}

export function setSecret(secret: string | null): void {
  try {
    if (secret === null) sessionStorage.removeItem(SECRET_KEY);
    else sessionStorage.setItem(SECRET_KEY, secret);
  } catch {
    /* storage disabled: the secret lives only as long as the page */
  }
  memorySecret = secret;
}

let memorySecret: string | null = null;
const currentSecret = (): string | null => getSecret() ?? memorySecret;

/** Headers of an admin request: the admin secret, when one was given. */
export function adminHeaders(): Record<string, string> {
  const s = currentSecret();
  return s ? { [ADMIN_SECRET_HEADER]: s } : {};
}

async function send(method: 'GET' | 'POST', path: string, body: unknown, headers: Record<string, string>): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch (e) {
    throw new ApiError(0, 'network', `the server did not answer (${(e as Error).message})`);
  }
  const text = await res.text();
  let json: unknown = text;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    /* not JSON */
  }
  if (!res.ok) {
    const e = (json && typeof json === 'object' ? json : {}) as { error?: string; code?: string; path?: string; internal?: unknown };
    throw new ApiError(res.status, e.code, e.error ?? (typeof json === 'string' && json ? json : `HTTP ${res.status}`), e.path, e.internal);
  }
  return json;
}

/**
 * How a change made through the console is recorded when the console runs for a project
 * directory (`svc console`): the migration's name, its down SQL (when one can be derived), and
 * `migration: false` for SQL that is not a migration (the SQL runner with the box unticked).
 */
export interface MigrationHint {
  name?: string;
  down?: string;
  migration?: boolean;
}

/** The project the console records into (`svc console`), from GET /apis/project; null: none. */
export interface ProjectInfo {
  directory: string;
  migrations_directory: string;
  metadata_directory: string;
  endpoint?: string;
}

/** What the project API wrote for the last change. */
export interface Recording {
  /** the migration written, if the change had SQL */
  migration: { version: string; name: string; id: string; directory: string; files: string[] } | null;
  /** metadata files that changed */
  metadata_files: string[];
  /** a sequence number (the list's key) */
  at: number;
}

let projectPromise: Promise<ProjectInfo | null> | undefined;

/** The project of `svc console` (asked once; a server without the project API: null). */
export function project(): Promise<ProjectInfo | null> {
  projectPromise ??= fetch('/apis/project', { credentials: 'same-origin', headers: adminHeaders() }).then(
    async (r) => {
      if (!r.ok) return null;
      const j = (await r.json().catch(() => null)) as ProjectInfo | null;
      return j && typeof j.directory === 'string' ? j : null;
    },
    () => null,
  );
  return projectPromise;
}

/** the last changes recorded (newest first, at most 4) */
let recordings: Recording[] = [];
let recordingSeq = 0;
const recordingListeners = new Set<() => void>();
export function subscribeRecording(l: () => void): () => void {
  recordingListeners.add(l);
  return () => recordingListeners.delete(l);
}
export const lastRecordings = (): Recording[] => recordings;

/** /v1/query operations that change nothing of the schema or the metadata (never recorded). */
const NOT_CHANGES = new Set([
  'export_metadata', 'get_inconsistent_metadata', 'select', 'count', 'insert', 'update', 'delete', 'reload_metadata', 'reload_remote_schema',
  'invoke_event_trigger', 'redeliver_event', 'create_scheduled_event', 'delete_scheduled_event', 'get_event_invocations', 'get_scheduled_events',
]);

/** Whether a /v1/query body changes the schema or the metadata (a bulk: any of its operations). */
export function isChange(body: { type: string; args: unknown }): boolean {
  if (body.type === 'bulk') return Array.isArray(body.args) && (body.args as Array<{ type: string; args: unknown }>).some(isChange);
  if (body.type === 'run_sql') return (body.args as { read_only?: boolean } | undefined)?.read_only !== true;
  return !NOT_CHANGES.has(body.type);
}

async function sendQuery(body: { type: string; args: unknown }, hint?: MigrationHint): Promise<unknown> {
  if (isChange(body) && (await project())) {
    const r = (await send('POST', '/apis/migrate', {
      request: body,
      ...(hint?.name ? { name: hint.name } : {}),
      ...(hint?.down ? { down_sql: hint.down } : {}),
      ...(hint?.migration === false ? { migration: false } : {}),
    }, adminHeaders())) as Omit<Recording, 'at'> & { result: unknown };
    recordings = [{ migration: r.migration, metadata_files: r.metadata_files, at: ++recordingSeq }, ...recordings].slice(0, 4);
    recordingListeners.forEach((l) => l());
    return r.result;
  }
  return send('POST', '/v1/query', body, adminHeaders());
}

/** POST /v1/query with the admin secret (through the project API when it is a change and there is a project). */
export function query<T = unknown>(type: string, args: unknown, hint?: MigrationHint): Promise<T> {
  return sendQuery({ type, args }, hint) as Promise<T>;
}

/** Several /v1/query operations in one transaction. */
export function bulk<T = unknown[]>(ops: Array<{ type: string; args: unknown }>, hint?: MigrationHint): Promise<T> {
  return sendQuery({ type: 'bulk', args: ops }, hint) as Promise<T>;
}

export interface SqlResult {
  result_type: 'TuplesOk' | 'CommandOk';
  /** header row first, then the rows; every value is text or null */
  result: Array<Array<string | null>> | null;
}

export function runSql(sql: string, opts: { readOnly?: boolean; cascade?: boolean } & MigrationHint = {}): Promise<SqlResult> {
  return query<SqlResult>('run_sql', { sql, cascade: opts.cascade ?? false, read_only: opts.readOnly ?? false }, opts);
}

/** The rows of a run_sql result as objects keyed by the header row. */
export function sqlRows(r: SqlResult): Array<Record<string, string | null>> {
  if (!r.result || r.result.length === 0) return [];
  const [head, ...rows] = r.result;
  return rows.map((row) => Object.fromEntries(head!.map((h, i) => [h, row[i] ?? null])));
}

export interface GraphQLResponse {
  data?: unknown;
  errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
}

/** POST /v1/graphql with the given headers (the admin secret is added unless `headers` say otherwise). */
export function graphql(body: { query: string; variables?: unknown; operationName?: string | null }, headers: Record<string, string> = {}): Promise<GraphQLResponse> {
  return send('POST', '/v1/graphql', body, { ...adminHeaders(), ...headers }) as Promise<GraphQLResponse>;
}

export interface ExplainPlan {
  field: string;
  sql: string;
  plan: string[];
}

export function explain(q: { query: string; variables?: unknown; operationName?: string | null }, user: Record<string, string>): Promise<ExplainPlan[] | ExplainPlan> {
  return send('POST', '/v1/graphql/explain', { query: q, user }, adminHeaders()) as Promise<ExplainPlan[] | ExplainPlan>;
}

export interface ServerConfig {
  version: string;
  is_admin_secret_set: boolean;
  is_auth_hook_set: boolean;
  is_jwt_set: boolean;
  is_allow_list_enabled: boolean;
}

export function serverConfig(): Promise<ServerConfig> {
  return send('GET', '/v1alpha1/config', undefined, adminHeaders()) as Promise<ServerConfig>;
}

/** Checks `secret` (or no secret) against an admin-only operation; resolves when accepted. */
export async function checkSecret(secret: string | null): Promise<void> {
  await send('POST', '/v1/query', { type: 'get_inconsistent_metadata', args: {} }, secret ? { [ADMIN_SECRET_HEADER]: secret } : {});
}

export async function health(): Promise<string> {
  const res = await fetch('/healthz');
  return `${res.status} ${await res.text()}`;
}

/** A human-readable message for any error thrown by these functions. */
export function errorMessage(e: unknown): string {
  if (e instanceof ApiError) {
    const pg = e.pgError;
    const where = e.code ? ` (${e.code}${e.path && e.path !== '$' ? ` at ${e.path}` : ''})` : '';
    if (pg) return `${pg.message}${pg.description ? `\n${pg.description}` : ''}${pg.hint ? `\nHint: ${pg.hint}` : ''}\n${e.message}${where}`;
    return `${e.message}${where}`;
  }
  return e instanceof Error ? e.message : String(e);
}
