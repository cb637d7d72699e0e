/**
 * Migrations: the files of a project and their bookkeeping on the server.
 *
 * Files (config v2, as upstream): `migrations/<version>_<name>/up.sql`, `down.sql`, and/or
 * `up.yaml`, `down.yaml` (a list of /v1/query requests such as `{type: track_table, args: …}`);
 * the flat form `<version>_<name>.up.sql` (…) is read too. Up runs up.sql then up.yaml; down runs
 * down.yaml then down.sql.
 *
 * Bookkeeping: `svc_catalog.schema_migrations (version bigint primary key, dirty boolean)`, as
 * upstream's `hdb_catalog.schema_migrations`, created by the CLI when first needed.
 *
 * One migration = one `bulk` request, which the server runs in one transaction (run.ts: every op
 * of a bulk on one connection, rolled back on any error):
 *   [0] run_sql: take the migrations' advisory lock, then insert (up) / delete (down) the version's
 *       row — first, so that a concurrent apply of the same version fails here (unique violation,
 *       or no row) and is reported as done by the other party, before any of its SQL runs;
 *   [1…] the steps: run_sql of each .sql file, the requests of each .yaml file.
 * A failed step rolls back the step's SQL and the bookkeeping row together: nothing is
 * half-applied. `--skip-execution` sends only [0].
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { QueryFailure } from './errors.js';
import type { QueryClient } from './client.js';
import { badStepFile, dirtyDatabase, duplicateVersion, emptyMigration, migrationFailed, missingDir } from './messages.js';
import { parseYaml } from './yamlio.js';

export const MIGRATIONS_TABLE = 'svc_catalog.schema_migrations';
/** pg_advisory_xact_lock key of migration bookkeeping (a different key from startup's session lock) */
export const MIGRATION_LOCK_KEY = 8_271_000_101;

export type Direction = 'up' | 'down';

export interface Step {
  /** the file the step comes from (for messages), relative to the project where possible */
  file: string;
  /** /v1/query requests of the step (one run_sql for a .sql file; a .yaml file's list) */
  requests: unknown[];
  /** the file is empty (or only comments): nothing runs */
  empty: boolean;
}

export interface Migration {
  version: bigint;
  name: string;
  /** `<version>_<name>` */
  id: string;
  /** the migration's directory (or the migrations directory for flat files) */
  location: string;
  up: Step[];
  down: Step[];
  /** absolute paths of its files */
  files: string[];
}

export interface AppliedRow {
  version: bigint;
  dirty: boolean;
}

const DIR_RE = /^(\d+)_(.+)$/;
const FLAT_RE = /^(\d+)_(.+)\.(up|down)\.(sql|yaml)$/;

/** SQL with comments and whitespace removed is empty. */
export function sqlIsEmpty(sql: string): boolean {
  return (
    sql
      .replace(/--[^\n]*/g, '')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .trim() === ''
  );
}

function readStep(path: string, label: string): Step {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw badStepFile(label, (e as Error).message);
  }
  if (path.endsWith('.sql')) {
    return { file: label, requests: sqlIsEmpty(text) ? [] : [{ type: 'run_sql', args: { sql: text } }], empty: sqlIsEmpty(text) };
  }
  const doc = parseYaml(text, label);
  if (doc === null || doc === undefined) return { file: label, requests: [], empty: true };
  const items = Array.isArray(doc) ? doc : [doc];
  items.forEach((q, i) => {
    if (!q || typeof q !== 'object' || Array.isArray(q) || typeof (q as { type?: unknown }).type !== 'string') {
      throw badStepFile(label, `item ${i + 1} is not a /v1/query request (a mapping with "type" and "args")`);
    }
  });
  return { file: label, requests: items, empty: items.length === 0 };
}

/** The migrations of a directory, by version. `base`: paths in messages are relative to it. */
export function readMigrations(dir: string, base: string): Migration[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw missingDir('migrations', dir);
  const byVersion = new Map<bigint, { name: string; location: string; parts: Map<string, string> }>();
  const note = (version: bigint, name: string, location: string, part: string, path: string) => {
    const prev = byVersion.get(version);
    if (prev && prev.name !== name) throw duplicateVersion(String(version), `${String(version)}_${prev.name}`, `${String(version)}_${name}`);
    if (prev && prev.parts.has(part)) throw duplicateVersion(String(version), relative(base, prev.parts.get(part)!), relative(base, path));
    const entry = prev ?? { name, location, parts: new Map() };
    entry.parts.set(part, path);
    byVersion.set(version, entry);
  };
  for (const entry of readdirSync(dir).sort()) {
    if (entry.startsWith('.')) continue;
    const full = join(dir, entry);
    const st = statSync(full);
    if (st.isDirectory()) {
      const m = DIR_RE.exec(entry);
      if (!m) continue;
      const version = BigInt(m[1]!);
      let any = false;
      for (const f of ['up.sql', 'up.yaml', 'down.sql', 'down.yaml']) {
        if (existsSync(join(full, f))) {
          note(version, m[2]!, full, f, join(full, f));
          any = true;
        }
      }
      if (!any) throw emptyMigration(relative(base, full) || full);
    } else {
      const m = FLAT_RE.exec(entry);
      if (m) note(BigInt(m[1]!), m[2]!, dir, `${m[3]}.${m[4]}`, full);
    }
  }
  return [...byVersion.entries()]
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([version, e]) => {
      const step = (part: string) => {
        const p = e.parts.get(part);
        return p ? [readStep(p, relative(base, p) || p)] : [];
      };
      return {
        version,
        name: e.name,
        id: `${String(version)}_${e.name}`,
        location: e.location,
        up: [...step('up.sql'), ...step('up.yaml')],
        down: [...step('down.yaml'), ...step('down.sql')],
        files: [...e.parts.values()],
      };
    });
}

const runSql = (sql: string, extra: Record<string, unknown> = {}) => ({ type: 'run_sql', args: { sql, ...extra } });

const ENSURE_TABLE = `select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY});
create table if not exists ${MIGRATIONS_TABLE} (version bigint not null primary key, dirty boolean not null default false);`;

/** Creates the bookkeeping table if it is not there (under the lock: concurrent callers create it once). */
export async function ensureMigrationsTable(client: QueryClient): Promise<void> {
  const exists = await tableExists(client);
  if (!exists) await client.query({ type: 'bulk', args: [runSql(ENSURE_TABLE, { check_metadata_consistency: false })] });
}

async function tableExists(client: QueryClient): Promise<boolean> {
  const r = (await client.query(runSql(`select to_regclass('${MIGRATIONS_TABLE}') is not null`, { read_only: true }))) as { result?: string[][] };
  return r.result?.[1]?.[0] === 't';
}

/** The applied versions (none when the table does not exist yet). */
export async function appliedVersions(client: QueryClient): Promise<AppliedRow[]> {
  if (!(await tableExists(client))) return [];
  const r = (await client.query(runSql(`select version::text, dirty from ${MIGRATIONS_TABLE} order by version`, { read_only: true }))) as {
    result?: string[][];
  };
  return (r.result ?? []).slice(1).map((row) => ({ version: BigInt(row[0]!), dirty: row[1] === 't' }));
}

export function refuseDirty(applied: AppliedRow[], except?: bigint): void {
  const dirty = applied.filter((r) => r.dirty && r.version !== except).map((r) => String(r.version));
  if (dirty.length) throw dirtyDatabase(dirty);
}

export interface StepResult {
  migration: Migration;
  direction: Direction;
  /** executed (false: --skip-execution, only marked) */
  executed: boolean;
  /** another process applied / rolled back this version meanwhile: nothing was done here */
  concurrent: boolean;
  ms: number;
}

/**
 * Applies one migration in one direction as one bulk (see the top of this file). Throws
 * `migrationFailed` (naming the step's file and PostgreSQL's message) when the server refuses it.
 */
export async function applyOne(client: QueryClient, m: Migration, direction: Direction, skipExecution: boolean, appliedBefore: number): Promise<StepResult> {
  const v = String(m.version);
  const mark =
    direction === 'up'
      ? skipExecution
        ? `select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY});\ninsert into ${MIGRATIONS_TABLE} (version, dirty) values (${v}, false) on conflict (version) do update set dirty = false;`
        : `select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY});\ninsert into ${MIGRATIONS_TABLE} (version, dirty) values (${v}, false);`
      : skipExecution
        ? `select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY});\ndelete from ${MIGRATIONS_TABLE} where version = ${v};`
        : `select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY});\ndo $svc$ begin\n  delete from ${MIGRATIONS_TABLE} where version = ${v};\n  if not found then raise exception 'migration ${v} is not applied' using errcode = 'P0002'; end if;\nend $svc$;`;
  const steps = skipExecution ? [] : direction === 'up' ? m.up : m.down;
  const requests: unknown[] = [runSql(mark, { check_metadata_consistency: false })];
  const owner: Array<Step | undefined> = [undefined];
  for (const s of steps) {
    for (const r of s.requests) {
      requests.push(r);
      owner.push(s);
    }
  }
  const started = Date.now();
  try {
    await client.query({ type: 'bulk', args: requests });
  } catch (e) {
    if (!(e instanceof QueryFailure)) throw e;
    const i = e.bulkIndex();
    const code = e.postgres()?.status_code;
    if (i === 0 && ((direction === 'up' && code === '23505') || (direction === 'down' && code === 'P0002'))) {
      return { migration: m, direction, executed: false, concurrent: true, ms: Date.now() - started };
    }
    const file = i !== undefined && owner[i] ? owner[i]!.file : i === 0 ? MIGRATIONS_TABLE : (steps[0]?.file ?? m.id);
    throw migrationFailed(m.id, direction, file, e, appliedBefore);
  }
  return { migration: m, direction, executed: !skipExecution, concurrent: false, ms: Date.now() - started };
}
