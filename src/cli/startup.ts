/**
 * `svc serve --migrations-dir D --metadata-dir M` (upstream's cli-migrations image): before the
 * server listens, apply the pending migrations of D and then the metadata directory M, in this
 * process, through the same /v1/query requests the CLI sends (./migrations.ts). A failure is
 * thrown and the server does not start.
 *
 * Several instances starting at once: each takes a session advisory lock for the whole apply
 * (the others wait, then find nothing left to do). The bookkeeping of ./migrations.ts already
 * makes each migration run once even without it (embedded database, or a one-connection pool,
 * where the lock is not taken).
 */
import type { Engine } from '../engine.js';
import type { Logger } from '../core/logger.js';
import { ADMIN_ROLE, type Session } from '../core/session.js';
import { SvcError } from '../errors.js';
import { runQueryRequest } from '../metadata/run.js';
import type { QueryClient } from './client.js';
import { CliError, QueryFailure } from './errors.js';
import { rejected, startupFailed } from './messages.js';
import { METADATA_FILES, OPTIONAL_METADATA_FILES, parseMetadataFiles, readMetadataDir, renderMetadata, type MetadataDoc } from './metadataFiles.js';
import { appliedVersions, ensureMigrationsTable, readMigrations, refuseDirty, type Migration } from './migrations.js';
import { planApply, runPlan } from './migrate.js';

/** pg_advisory_lock key held by a starting instance while it applies (not the bookkeeping's key) */
export const STARTUP_LOCK_KEY = 8_271_000_102;

const ADMIN: Session = { role: ADMIN_ROLE, vars: { 'x-svc-role': ADMIN_ROLE }, hasAdminCredentials: true };

/** The /v1/query API of this process, as an admin. */
export class InProcessClient implements QueryClient {
  readonly target = 'this server';
  constructor(private readonly engine: Engine) {}

  async query(body: unknown): Promise<unknown> {
    try {
      return await runQueryRequest(this.engine, ADMIN, body, {});
    } catch (e) {
      if (e instanceof SvcError) throw new QueryFailure(e.status, e.code, e.message, e.path, e.internal);
      throw e;
    }
  }

  async pgDump(): Promise<string> {
    throw new Error('pg_dump is not used at start-up');
  }
}

export interface StartupDirs {
  migrationsDir?: string;
  metadataDir?: string;
}

export async function applyAtStartup(engine: Engine, dirs: StartupDirs, log: Logger): Promise<void> {
  // the files first: a bad file stops the start before anything is locked or changed
  let migrations: Migration[] | undefined;
  let metadata: MetadataDoc | undefined;
  try {
    if (dirs.migrationsDir !== undefined) migrations = readMigrations(dirs.migrationsDir, process.cwd());
    if (dirs.metadataDir !== undefined) metadata = parseMetadataFiles(readMetadataDir(dirs.metadataDir));
  } catch (e) {
    throw e instanceof CliError ? startupFailed('cannot read the project files', e) : e;
  }
  const client = new InProcessClient(engine);
  const work = async () => {
    if (migrations) await applyMigrations(client, migrations, log);
    if (metadata) await applyMetadata(client, metadata, log);
  };
  // the session lock needs a connection of its own beside the one the requests use
  if (engine.db.kind !== 'pg' || engine.config.pgConnections < 2) return work();
  await engine.db.withConn(async (c) => {
    let waited = 0;
    for (;;) {
      const r = await c.query('select pg_try_advisory_lock($1) as ok', [STARTUP_LOCK_KEY]);
      const ok = (r.rows[0] as { ok: unknown }).ok;
      if (ok === true || ok === 't') break;
      if (waited % 50 === 0)
        log.info({ type: 'startup', detail: { kind: 'migrations_wait' } }, 'another instance is applying migrations and metadata: waiting for it');
      waited++;
      await new Promise((res) => setTimeout(res, 200));
    }
    try {
      await work();
    } finally {
      await c.query('select pg_advisory_unlock($1)', [STARTUP_LOCK_KEY]).catch(() => undefined);
    }
  });
}

async function applyMigrations(client: QueryClient, local: Migration[], log: Logger): Promise<void> {
  try {
    await ensureMigrationsTable(client);
    const applied = await appliedVersions(client);
    refuseDirty(applied);
    const plan = planApply(local, applied, { type: 'up', skipExecution: false }, 'the migrations directory');
    const results = await runPlan(client, plan, false, (r) =>
      log.info(
        {
          type: 'startup',
          detail: { kind: 'migration_applied', version: String(r.migration.version), name: r.migration.name, ms: r.ms, concurrent: r.concurrent },
        },
        r.concurrent ? `migration ${r.migration.id} was applied by another instance` : `applied migration ${r.migration.id} (${r.ms} ms)`,
      ),
    );
    const n = results.filter((r) => !r.concurrent).length;
    log.info(
      { type: 'startup', detail: { kind: 'migrations_applied', applied: n, total: local.length } },
      n ? `applied ${n} migration${n === 1 ? '' : 's'}` : 'migrations: the database is up to date',
    );
  } catch (e) {
    throw e instanceof CliError ? startupFailed('applying the migrations failed', e) : e;
  }
}

async function applyMetadata(client: QueryClient, local: MetadataDoc, log: Logger): Promise<void> {
  try {
    const server = (await client.query({ type: 'export_metadata', args: {} })) as MetadataDoc;
    const a = renderMetadata(server);
    const b = renderMetadata(local);
    const changed = [...METADATA_FILES, ...OPTIONAL_METADATA_FILES].filter((f) => a.get(f) !== b.get(f));
    if (!changed.length) {
      log.info({ type: 'startup', detail: { kind: 'metadata_applied', changed: [] } }, 'metadata: the server already has it');
      return;
    }
    await client.query({ type: 'replace_metadata', args: local });
    log.info({ type: 'startup', detail: { kind: 'metadata_applied', changed } }, `metadata applied (changed: ${changed.join(', ')})`);
  } catch (e) {
    const err = e instanceof QueryFailure ? rejected('the server refused the metadata', e) : e;
    throw err instanceof CliError ? startupFailed('applying the metadata failed', err) : err;
  }
}
