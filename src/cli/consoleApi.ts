/**
 * The console's project API (upstream: the CLI's `/apis/migrate` behind `hasura console`): when
 * the console runs for a project directory, it sends every change it makes here instead of to
 * /v1/query, and this module
 *   1. runs the request on the server, in one transaction with the bookkeeping row of a new
 *      migration when the request holds SQL (`run_sql`): `bulk [...the request's ops, insert into
 *      svc_catalog.schema_migrations]` — so `svc migrate status` lists it as applied, and a
 *      refused request leaves neither the change nor the row;
 *   2. writes that migration as `migrations/<version>_<name>/up.sql` (the request's SQL, in
 *      order) and `down.sql` (the down the console derived, or, where none can be derived, a
 *      comment asking for one, as upstream), removed again when the server refuses the request;
 *   3. exports the metadata into the project's metadata directory (metadata changes are kept
 *      there, not in migrations: config v2, as upstream), and reports which files changed.
 * Requests are handled one at a time (versions are taken in order). Everything goes through the
 * same QueryClient and file code as `svc migrate` and `svc metadata` (./migrations.ts,
 * ./metadataFiles.ts).
 *
 * Request: `{ request: <a /v1/query body>, name?: string, down_sql?: string, migration?: boolean }`
 * (`migration: false`: run it and update the metadata files, but write no migration — the SQL
 * runner with "this is a migration" unticked). Answer 200: `{ result, migration: {version, name,
 * directory, files} | null, metadata_files: [changed files] }`; a refused request: the server's
 * status and error body as /v1/query gives them.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { QueryClient } from './client.js';
import { CliError, QueryFailure } from './errors.js';
import { renderMetadata, type MetadataDoc } from './metadataFiles.js';
import { MIGRATION_LOCK_KEY, MIGRATIONS_TABLE, appliedVersions, ensureMigrationsTable, readMigrations } from './migrations.js';
import { NAME_RE, nextVersion } from './migrate.js';
import type { Project } from './project.js';

export interface RecordRequest {
  request?: unknown;
  name?: unknown;
  down_sql?: unknown;
  migration?: unknown;
}

export interface RecordAnswer {
  status: number;
  body: unknown;
}

/** the comment upstream's console writes when it cannot derive a down migration */
export const NO_DOWN = '-- Could not auto-generate a down migration.\n-- Please write an appropriate down migration for the SQL below:\n';

type Op = { type: string; args: Record<string, unknown> };
const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The operations of a /v1/query body (a bulk's, in order; nested bulks flattened). */
export function opsOf(body: unknown): Op[] {
  if (!isObj(body) || typeof body.type !== 'string') return [];
  if (body.type === 'bulk' && Array.isArray(body.args)) return body.args.flatMap(opsOf);
  return [{ type: body.type, args: isObj(body.args) ? body.args : {} }];
}

/** The SQL of a request that changes the database (its run_sql ops that are not read-only), in order. */
export function sqlOf(body: unknown): string[] {
  return opsOf(body)
    .filter((o) => o.type === 'run_sql' && o.args.read_only !== true && typeof o.args.sql === 'string')
    .map((o) => String(o.args.sql));
}

/** A migration name from the first statement of the SQL (`create table "public"."a"` → create_table_public_a). */
export function nameFromSql(sql: string): string {
  const first = (
    sql
      .replace(/--[^\n]*/g, '')
      .trim()
      .split(';')[0] ?? ''
  ).split('(')[0]!;
  const words = first
    .replace(/[^A-Za-z0-9_]+/g, ' ')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 7);
  const name = words.join('_').toLowerCase().slice(0, 80).replace(/_+$/, '');
  return name || 'migration';
}

function commentOut(sql: string): string {
  return sql
    .split('\n')
    .map((l) => `-- ${l}`.trimEnd())
    .join('\n');
}

const withNl = (s: string) => (s === '' || s.endsWith('\n') ? s : `${s}\n`);

const badRequest = (error: string): RecordAnswer => ({ status: 400, body: { path: '$', error, code: 'bad-request' } });

export class ProjectRecorder {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly project: Project) {}

  /** What the console is told about the project (GET /apis/project). */
  describe(): Record<string, string> {
    return { directory: this.project.dir, migrations_directory: this.project.migrationsDir, metadata_directory: this.project.metadataDir };
  }

  /** Handles one request (queued behind the ones before it). */
  handle(client: QueryClient, req: unknown): Promise<RecordAnswer> {
    const run = this.queue.then(() => this.record(client, req));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async record(client: QueryClient, raw: unknown): Promise<RecordAnswer> {
    if (!isObj(raw)) return badRequest('expected {request, name?, down_sql?, migration?}');
    const r = raw as RecordRequest;
    if (!isObj(r.request) || typeof r.request.type !== 'string') return badRequest('"request" must be a /v1/query request ({type, args})');
    if (r.name !== undefined && (typeof r.name !== 'string' || !NAME_RE.test(r.name))) return badRequest('"name" may hold letters, digits, _ . and - only');
    if (r.down_sql !== undefined && typeof r.down_sql !== 'string') return badRequest('"down_sql" must be a string');
    const sql = r.migration === false ? [] : sqlOf(r.request);
    try {
      if (sql.length === 0) {
        const result = await client.query(r.request);
        const files = await this.exportMetadata(client);
        return { status: 200, body: { result, migration: null, metadata_files: files } };
      }
      return await this.withMigration(client, r, sql);
    } catch (e) {
      if (e instanceof QueryFailure)
        return { status: e.status, body: { path: e.path, error: e.error, code: e.code, ...(e.internal !== undefined ? { internal: e.internal } : {}) } };
      if (e instanceof CliError) return { status: e.code === 'unauthorized' ? 401 : 502, body: { path: '$', error: e.message, code: e.code } };
      throw e;
    }
  }

  private async withMigration(client: QueryClient, r: RecordRequest, sql: string[]): Promise<RecordAnswer> {
    const p = this.project;
    // admin-only: an unauthorised caller is refused here, before any file is written
    await ensureMigrationsTable(client);
    mkdirSync(p.migrationsDir, { recursive: true });
    const local = readMigrations(p.migrationsDir, p.dir).map((m) => m.version);
    const applied = (await appliedVersions(client)).map((a) => a.version);
    const version = nextVersion([...local, ...applied]);
    const name = typeof r.name === 'string' && r.name ? r.name : nameFromSql(sql[0]!);
    const id = `${String(version)}_${name}`;
    const dir = join(p.migrationsDir, id);
    const up = sql.map((s) => withNl(s.trim().endsWith(';') ? s.trim() : `${s.trim()};`)).join('\n');
    const down = typeof r.down_sql === 'string' && r.down_sql.trim() ? r.down_sql : `${NO_DOWN}${commentOut(up.trimEnd())}`;
    mkdirSync(dir);
    writeFileSync(join(dir, 'up.sql'), withNl(up));
    writeFileSync(join(dir, 'down.sql'), withNl(down));
    const mark = {
      type: 'run_sql',
      args: {
        sql: `select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY});\ninsert into ${MIGRATIONS_TABLE} (version, dirty) values (${String(version)}, false);`,
        check_metadata_consistency: false,
      },
    };
    const single = (r.request as { type: string }).type !== 'bulk';
    const ops = single ? [r.request] : ((r.request as { args?: unknown }).args as unknown[]);
    let results: unknown[];
    try {
      results = (await client.query({ type: 'bulk', args: [...ops, mark] })) as unknown[];
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      if (e instanceof QueryFailure && single) {
        // the error of the one request, as /v1/query would have given it without the bulk around it
        throw new QueryFailure(e.status, e.code, e.error, e.path.replace(/^\$\.args\[0\]/, '$'), e.internal);
      }
      throw e;
    }
    const result = single ? results[0] : results.slice(0, -1);
    const files = await this.exportMetadata(client);
    return {
      status: 200,
      body: {
        result,
        migration: {
          version: String(version),
          name,
          id,
          directory: relative(p.dir, dir),
          files: ['up.sql', 'down.sql'].map((f) => relative(p.dir, join(dir, f))),
        },
        metadata_files: files,
      },
    };
  }

  /** Writes the server's metadata into the metadata directory; the files that changed (relative to the project). */
  private async exportMetadata(client: QueryClient): Promise<string[]> {
    const md = (await client.query({ type: 'export_metadata', args: {} })) as MetadataDoc;
    const dir = this.project.metadataDir;
    mkdirSync(dir, { recursive: true });
    const changed: string[] = [];
    for (const [f, text] of renderMetadata(md)) {
      const path = join(dir, f);
      const before = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
      if (before === text) continue;
      writeFileSync(path, text);
      changed.push(relative(this.project.dir, path));
    }
    return changed;
  }
}
