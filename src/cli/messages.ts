/**
 * Every message the `svc` CLI prints for a failure, built here and nowhere else. Each is a
 * CliError with its exit code (./errors.ts), a machine-readable code for `--output json`, and
 * hint lines where the way out is not obvious.
 */
import { CliError, EXIT, type QueryFailure } from './errors.js';

interface HasPath {
  path: string[];
}

// ---- command line ----------------------------------------------------------------------------

export const usageError = (message: string, spec?: HasPath) =>
  new CliError(EXIT.USAGE, 'usage', message, spec ? [`see: svc ${spec.path.join(' ')} --help`] : ['see: svc --help']);

export const unknownCommand = (words: string[], expected: string[]) =>
  new CliError(EXIT.USAGE, 'usage', `unknown command "svc ${words.join(' ')}" (expected: ${expected.join(', ')})`, ['see: svc --help']);

export const conflictingFlags = (a: string, b: string, spec: HasPath) => usageError(`flags ${a} and ${b} cannot be used together`, spec);

export const badCount = (flag: string, value: string, spec: HasPath) =>
  usageError(`${flag} expects a positive number or "all", got ${JSON.stringify(value)}`, spec);

export const badVersion = (flag: string, value: string, spec: HasPath) =>
  usageError(`${flag} expects a migration version (digits), got ${JSON.stringify(value)}`, spec);

export const badOutput = (value: string) => usageError(`--output expects text or json, got ${JSON.stringify(value)}`);

export const badName = (what: string, name: string) => usageError(`${what} name ${JSON.stringify(name)} is not valid: use letters, digits, "_", "-" and "."`);

// ---- project files --------------------------------------------------------------------------

export const noProject = (dir: string, explicit: boolean) =>
  new CliError(
    EXIT.PROJECT,
    'no-project',
    explicit ? `${dir} is not a Svc project: it has no config.yaml` : `not in a Svc project: no config.yaml in ${dir} or any parent directory`,
    ['create one with: svc init <directory>', 'or point to one with: --project <directory>'],
  );

export const configError = (file: string, why: string) => new CliError(EXIT.PROJECT, 'invalid-config', `${file}: ${why}`);

export const fileError = (file: string, why: string) => new CliError(EXIT.PROJECT, 'invalid-file', `${file}: ${why}`);

export const projectExists = (dir: string) => new CliError(EXIT.PROJECT, 'project-exists', `${dir} already has a config.yaml: it is a Svc project already`);

export const dirNotEmpty = (dir: string) =>
  new CliError(EXIT.PROJECT, 'directory-not-empty', `${dir} exists and is not empty`, ['choose a new directory name, or run svc init in it after emptying it']);

export const missingDir = (what: string, dir: string) =>
  new CliError(
    EXIT.PROJECT,
    'no-directory',
    `the ${what} directory ${dir} does not exist`,
    what === 'metadata' ? ['export the metadata first: svc metadata export'] : [],
  );

export const duplicateVersion = (version: string, a: string, b: string) =>
  new CliError(EXIT.PROJECT, 'invalid-migrations', `two migrations have version ${version}: ${a} and ${b}`);

export const emptyMigration = (dir: string) => new CliError(EXIT.PROJECT, 'invalid-migrations', `${dir} has none of up.sql, up.yaml, down.sql, down.yaml`);

export const badStepFile = (file: string, why: string) => fileError(file, why);

export const notLocal = (version: string, dir: string) =>
  new CliError(EXIT.PROJECT, 'migration-not-found', `migration ${version} is not in ${dir}`, [
    'svc migrate status lists the migrations of the project and of the server',
  ]);

export const appliedNotLocal = (versions: string[], dir: string) =>
  new CliError(EXIT.PROJECT, 'migration-not-found', `cannot roll back ${versions.join(', ')}: applied on the server but not in ${dir}`, [
    'pull the missing migration files, or unmark them with: svc migrate apply --version <version> --type down --skip-execution',
  ]);

export const noDownStep = (version: string, dir: string) =>
  new CliError(EXIT.PROJECT, 'no-down-migration', `migration ${version} has no down.sql or down.yaml in ${dir}: it cannot be rolled back`, [
    `write one, or only unmark it: svc migrate apply --version ${version} --type down --skip-execution`,
  ]);

export const noUpStep = (version: string, dir: string) =>
  new CliError(EXIT.PROJECT, 'no-up-migration', `migration ${version} has no up.sql or up.yaml in ${dir}`);

export const nothingToSquash = (from: string) =>
  new CliError(EXIT.PROJECT, 'nothing-to-squash', `no migration from version ${from} on: nothing to squash`, ['svc migrate status lists the versions']);

export const metadataShape = (file: string, expected: string, got: unknown) =>
  fileError(
    file,
    `expected ${expected}, got ${got === null ? 'null' : Array.isArray(got) ? 'a list' : typeof got === 'object' ? 'a mapping' : JSON.stringify(got)}`,
  );

export const sdlError = (file: string, why: string) => fileError(file, why);

export const actionWithoutSdl = (name: string) =>
  fileError('actions.yaml', `action ${JSON.stringify(name)} is not defined in actions.graphql (as a field of type Query or type Mutation)`);

export const actionWithoutYaml = (name: string) =>
  fileError('actions.graphql', `action ${JSON.stringify(name)} has no entry in actions.yaml (its handler and the rest of its definition)`);

export const typeWithoutSdl = (kind: string, name: string) =>
  fileError('actions.yaml', `custom type ${JSON.stringify(name)} (${kind}) is not defined in actions.graphql`);

// ---- the server ------------------------------------------------------------------------------

export const badEndpoint = (endpoint: string) =>
  new CliError(EXIT.USAGE, 'invalid-endpoint', `endpoint ${JSON.stringify(endpoint)} is not an http(s) URL`, [
    'e.g. --endpoint http://localhost:8080 (without /v1/query)',
  ]);

export const caUnreadable = (file: string, why: string) => new CliError(EXIT.PROJECT, 'invalid-file', `certificate authority ${file}: ${why}`);

export const unreachable = (target: string, e: Error & { code?: string }) =>
  new CliError(EXIT.SERVER, 'server-unreachable', `cannot reach Svc at ${target}: ${e.code ? `${e.code} ` : ''}${e.message.replace(/^connect /, '')}`.trim(), [
    'is the server running? set its address with --endpoint, SVC_GRAPHQL_ENDPOINT or "endpoint" in config.yaml',
  ]);

export const serverTimeout = (target: string, ms: number) =>
  new CliError(EXIT.SERVER, 'server-timeout', `Svc at ${target} did not answer within ${Math.round(ms / 1000)} s`);

export const responseTooLarge = (target: string, bytes: number) =>
  new CliError(EXIT.SERVER, 'response-too-large', `the answer of ${target} is larger than ${bytes} bytes`);

export const notSvc = (target: string, status: number, text: string) =>
  new CliError(EXIT.SERVER, 'not-svc', `${target} did not answer like Svc (HTTP ${status}: ${JSON.stringify(text.slice(0, 120))})`, [
    'the endpoint is the server root, without /v1/query: e.g. http://localhost:8080',
  ]);

export const unauthorized = (target: string, error: string, hadSecret: boolean) =>
  new CliError(EXIT.SERVER, 'unauthorized', `${target} refused the admin credentials: ${error}`, [
    hadSecret
      ? "the admin secret is not the server's: check --admin-secret / SVC_GRAPHQL_ADMIN_SECRET / admin_secret in config.yaml"
      : 'the server has an admin secret: give it with --admin-secret, SVC_GRAPHQL_ADMIN_SECRET or admin_secret in config.yaml',
  ]);

/** The server refused a request that was not a migration step. */
export function rejected(what: string, f: QueryFailure): CliError {
  const pg = f.postgres();
  const details: string[] = [];
  if (pg?.hint) details.push(`hint: ${pg.hint}`);
  if (pg?.description) details.push(`detail: ${pg.description}`);
  const inconsistent = Array.isArray(f.internal) ? (f.internal as Array<{ type?: string; reason?: string; definition?: unknown }>) : [];
  for (const o of inconsistent.slice(0, 20)) details.push(`inconsistent ${o.type ?? 'object'} ${objectName(o.definition)}: ${o.reason ?? ''}`);
  return new CliError(
    EXIT.REJECTED,
    'rejected',
    `${what}: ${pg ? `${pg.message}${pg.status_code ? ` (${pg.status_code})` : ''}` : `${f.error} (${f.code} at ${f.path})`}`,
    details,
    {
      server_error: { code: f.code, error: f.error, path: f.path, ...(f.internal !== undefined ? { internal: f.internal } : {}) },
    },
  );
}

/** A readable name of an inconsistent object's definition. */
export function objectName(def: unknown): string {
  if (!def || typeof def !== 'object') return JSON.stringify(def);
  const d = def as Record<string, unknown>;
  const q = (v: unknown) => (v && typeof v === 'object' ? `${(v as { schema?: string }).schema ?? 'public'}.${(v as { name?: string }).name}` : String(v));
  // an event trigger's definition is {table, configuration} (the trigger as stored)
  const name = d.name ?? d.role ?? (d.configuration as { name?: unknown } | undefined)?.name;
  if (d.table && name) return `${q(d.table)}.${String(name)}`;
  if (d.table) return q(d.table);
  // a table or a function: its {schema, name}
  if (typeof d.schema === 'string' && typeof d.name === 'string') return q(d);
  if (d.function) return q(d.function);
  if (typeof d.name === 'string') return d.name;
  return JSON.stringify(def).slice(0, 80);
}

export const pgDumpNotSupported = (f: QueryFailure) =>
  new CliError(EXIT.REJECTED, 'pg-dump-failed', `the server could not dump the database: ${f.error}`, [
    'pg_dump needs a PostgreSQL server (--database-url); the embedded database has none',
  ]);

// ---- migrations ------------------------------------------------------------------------------

export function migrationFailed(id: string, direction: string, file: string, f: QueryFailure, applied: number): CliError {
  const pg = f.postgres();
  const details = [`file: ${file}`, pg ? `error: ${pg.message}${pg.status_code ? ` (SQLSTATE ${pg.status_code})` : ''}` : `error: ${f.error} (${f.code})`];
  if (pg?.description) details.push(`detail: ${pg.description}`);
  if (pg?.hint) details.push(`hint: ${pg.hint}`);
  const inconsistent = Array.isArray(f.internal) ? (f.internal as Array<{ type?: string; reason?: string; definition?: unknown }>) : [];
  for (const o of inconsistent.slice(0, 20)) details.push(`inconsistent ${o.type ?? 'object'} ${objectName(o.definition)}: ${o.reason ?? ''}`);
  details.push(
    `nothing of ${id} was applied (its SQL and its schema_migrations row were rolled back)${applied ? `; the ${applied} migration${applied === 1 ? '' : 's'} before it stay${applied === 1 ? 's' : ''} applied` : ''}`,
  );
  return new CliError(EXIT.REJECTED, 'migration-failed', `migration ${id} (${direction}) failed`, details, {
    migration: id,
    direction,
    file,
    ...(pg ? { postgres: pg } : {}),
    server_error: { code: f.code, error: f.error, path: f.path },
  });
}

export const dirtyDatabase = (versions: string[]) =>
  new CliError(EXIT.REJECTED, 'dirty', `the database is dirty at version ${versions.join(', ')}: a migration there did not finish`, [
    'repair the database by hand, then mark the version: svc migrate apply --version <version> --type up|down --skip-execution',
  ]);

export const squashPartlyApplied = (applied: string[], pending: string[]) =>
  new CliError(
    EXIT.REJECTED,
    'squash-partly-applied',
    `cannot delete the squashed sources: ${applied.join(', ')} ${applied.length === 1 ? 'is' : 'are'} applied on the server and ${pending.join(', ')} ${pending.length === 1 ? 'is' : 'are'} not`,
    ['apply them (svc migrate apply) or roll them back first, or squash without --delete-source'],
  );

export const startupFailed = (what: string, e: Error) =>
  new Error(`${what}: ${e.message}${e instanceof CliError && e.details.length ? `\n  ${e.details.join('\n  ')}` : ''}`);
