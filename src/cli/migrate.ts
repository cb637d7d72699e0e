/** `svc migrate create | apply | status | squash` (reference: cli/svc_migrate_*.rst). */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { CommandSpec, Context } from './context.js';
import { CliError, EXIT, QueryFailure } from './errors.js';
import {
  badCount,
  badName,
  badVersion,
  conflictingFlags,
  appliedNotLocal,
  fileError,
  noDownStep,
  noUpStep,
  notLocal,
  nothingToSquash,
  pgDumpNotSupported,
  rejected,
  squashPartlyApplied,
} from './messages.js';
import {
  MIGRATION_LOCK_KEY,
  MIGRATIONS_TABLE,
  appliedVersions,
  applyOne,
  ensureMigrationsTable,
  readMigrations,
  refuseDirty,
  type AppliedRow,
  type Direction,
  type Migration,
  type StepResult,
} from './migrations.js';
import type { QueryClient } from './client.js';
import { table } from './output.js';
import { toYaml } from './yamlio.js';

export const NAME_RE = /^[A-Za-z0-9_.-]+$/;

/** A version after every existing one: the time in ms (upstream's), or the last + 1 when that is not later. */
export function nextVersion(existing: bigint[], now = Date.now()): bigint {
  const max = existing.reduce((a, b) => (b > a ? b : a), 0n);
  const t = BigInt(now);
  return t > max ? t : max + 1n;
}

// ---- planning --------------------------------------------------------------------------------

export interface ApplyRequest {
  up?: number | 'all';
  down?: number | 'all';
  goto?: bigint;
  version?: bigint;
  type: Direction;
  skipExecution: boolean;
}

export interface PlannedStep {
  migration: Migration;
  direction: Direction;
}

/** A stand-in for a version applied on the server whose files are gone (only for --skip-execution). */
const ghost = (version: bigint): Migration => ({ version, name: '', id: String(version), location: '', up: [], down: [], files: [] });

/** Which migrations to run, in order, for the flags of `migrate apply` (pure). */
export function planApply(local: Migration[], applied: AppliedRow[], r: ApplyRequest, dir: string): PlannedStep[] {
  const done = new Set(applied.map((a) => a.version));
  const byVersion = new Map(local.map((m) => [m.version, m]));
  const pending = local.filter((m) => !done.has(m.version));
  const appliedDesc = [...applied].sort((a, b) => (a.version > b.version ? -1 : a.version < b.version ? 1 : 0));
  const downsOf = (rows: AppliedRow[]): PlannedStep[] => {
    const missing = rows.filter((a) => !byVersion.has(a.version)).map((a) => String(a.version));
    if (missing.length && !r.skipExecution) throw appliedNotLocal(missing, dir);
    return rows.map((a) => ({ migration: byVersion.get(a.version) ?? ghost(a.version), direction: 'down' as const }));
  };
  const checkSteps = (steps: PlannedStep[]) => {
    if (r.skipExecution) return steps;
    for (const s of steps) {
      if (s.direction === 'down' && s.migration.down.length === 0)
        throw noDownStep(s.migration.id, relative(process.cwd(), s.migration.location) || s.migration.location);
      if (s.direction === 'up' && s.migration.up.length === 0)
        throw noUpStep(s.migration.id, relative(process.cwd(), s.migration.location) || s.migration.location);
    }
    return steps;
  };
  if (r.version !== undefined) {
    const m = byVersion.get(r.version);
    if (!m && !(r.skipExecution && r.type === 'down')) throw notLocal(String(r.version), dir);
    if (r.type === 'up')
      return done.has(r.version) && !applied.find((a) => a.version === r.version)?.dirty ? [] : checkSteps([{ migration: m!, direction: 'up' }]);
    return done.has(r.version) ? checkSteps([{ migration: m ?? ghost(r.version), direction: 'down' }]) : [];
  }
  if (r.goto !== undefined) {
    if (!byVersion.has(r.goto)) throw notLocal(String(r.goto), dir);
    const downs = downsOf(appliedDesc.filter((a) => a.version > r.goto!));
    const ups = pending.filter((m) => m.version <= r.goto!).map((m) => ({ migration: m, direction: 'up' as const }));
    return checkSteps([...downs, ...ups]);
  }
  if (r.down !== undefined) return checkSteps(downsOf(r.down === 'all' ? appliedDesc : appliedDesc.slice(0, r.down)));
  const ups = pending.map((m) => ({ migration: m, direction: 'up' as const }));
  return checkSteps(r.up === undefined || r.up === 'all' ? ups : ups.slice(0, r.up));
}

/** Applies the planned steps in order; stops at the first failure (earlier ones stay applied). */
export async function runPlan(client: QueryClient, plan: PlannedStep[], skipExecution: boolean, onStep?: (r: StepResult) => void): Promise<StepResult[]> {
  const results: StepResult[] = [];
  for (const s of plan) {
    const r = await applyOne(client, s.migration, s.direction, skipExecution, results.filter((x) => !x.concurrent).length);
    results.push(r);
    onStep?.(r);
  }
  return results;
}

// ---- commands --------------------------------------------------------------------------------

function parseCount(ctx: Context, flag: string): number | 'all' | undefined {
  const v = ctx.flag(flag);
  if (v === undefined) return undefined;
  if (v === 'all') return 'all';
  if (!/^\d+$/.test(v) || Number(v) < 1) throw badCount(`--${flag}`, v, ctx.spec);
  return Number(v);
}

function parseVersion(ctx: Context, flag: string): bigint | undefined {
  const v = ctx.flag(flag);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw badVersion(`--${flag}`, v, ctx.spec);
  return BigInt(v);
}

const stepJson = (r: StepResult) => ({
  version: String(r.migration.version),
  name: r.migration.name,
  direction: r.direction,
  executed: r.executed,
  ...(r.concurrent ? { applied_concurrently: true } : {}),
  ms: r.ms,
});

const apply: CommandSpec = {
  path: ['migrate', 'apply'],
  summary: 'Apply migrations on the database',
  usage: 'svc migrate apply [flags]',
  description: [
    'Without flags, applies every migration of the project not yet applied on the server, oldest first.',
    'Each migration runs in one transaction with its row in svc_catalog.schema_migrations: a failing',
    'migration leaves the database and the bookkeeping as they were, and applying stops there',
    '(the migrations before it stay applied). Up runs up.sql then up.yaml; down runs down.yaml then down.sql.',
    'Concurrent applies (other CLIs, svc serve --migrations-dir) never run one migration twice.',
  ].join('\n'),
  examples: [
    '# Apply all migrations',
    'svc migrate apply',
    '',
    '# Use with admin secret:',
    'svc migrate apply --admin-secret "<admin-secret>"',
    '',
    '# Apply migrations on another Svc instance:',
    'svc migrate apply --endpoint "<endpoint>"',
    '',
    '# Mark migration as applied on the server and skip execution:',
    'svc migrate apply --version "<version>" --skip-execution',
    '',
    '# Apply only 2 up migrations, roll back the last 2, roll back everything:',
    'svc migrate apply --up 2',
    'svc migrate apply --down 2',
    'svc migrate apply --down all',
    '',
    '# Apply or roll back a particular version only:',
    'svc migrate apply --version "<version>" --type up',
    'svc migrate apply --version "<version>" --type down',
    '',
    '# Apply or roll back everything up to (and including) version 125:',
    'svc migrate apply --goto 125',
  ],
  flags: [
    { name: 'up', type: 'string', value: 'string', description: 'apply all or N up migration steps' },
    { name: 'down', type: 'string', value: 'string', description: 'apply all or N down migration steps (the last applied first)' },
    { name: 'goto', type: 'string', value: 'string', description: 'apply up or down migrations until the database is at this version' },
    { name: 'version', type: 'string', value: 'string', description: 'only apply this particular migration' },
    { name: 'type', type: 'string', value: 'string', description: 'type of migration (up, down) to be used with --version (default "up")' },
    { name: 'skip-execution', type: 'bool', description: 'do not run the migrations, only mark them as applied (up) or not applied (down)' },
  ],
  args: { min: 0, max: 0 },
  server: true,
  exits: [EXIT.PROJECT, EXIT.SERVER, EXIT.REJECTED],
  async run(ctx) {
    const given = ['up', 'down', 'goto', 'version'].filter((f) => ctx.has(f));
    if (given.length > 1) throw conflictingFlags(`--${given[0]}`, `--${given[1]}`, ctx.spec);
    const type = ctx.flag('type') ?? 'up';
    if (type !== 'up' && type !== 'down') throw ctx.usage(`--type expects up or down, got ${JSON.stringify(type)}`);
    if (ctx.has('type') && !ctx.has('version')) throw ctx.usage('--type is used with --version');
    const req: ApplyRequest = { type, skipExecution: ctx.bool('skip-execution') };
    const up = parseCount(ctx, 'up');
    const down = parseCount(ctx, 'down');
    const goto = parseVersion(ctx, 'goto');
    const version = parseVersion(ctx, 'version');
    if (up !== undefined) req.up = up;
    if (down !== undefined) req.down = down;
    if (goto !== undefined) req.goto = goto;
    if (version !== undefined) req.version = version;

    const p = ctx.project();
    const local = readMigrations(p.migrationsDir, p.dir);
    const client = ctx.client();
    await ensureMigrationsTable(client);
    const applied = await appliedVersions(client);
    refuseDirty(applied, req.skipExecution ? req.version : undefined);
    const plan = planApply(local, applied, req, relative(ctx.cwd, p.migrationsDir) || '.');
    if (!plan.length) {
      ctx.out.line('nothing to apply: the database is up to date');
      ctx.out.result({ applied: [] });
      return EXIT.OK;
    }
    const { paint } = ctx.out;
    const results: StepResult[] = [];
    try {
      await runPlan(client, plan, req.skipExecution, (r) => {
        results.push(r);
        const what = r.concurrent ? paint.dim('already done by another process') : r.executed ? `${r.ms} ms` : 'marked only (--skip-execution)';
        ctx.out.line(`${paint.green(r.direction === 'up' ? 'applied' : 'rolled back')} ${r.migration.id} ${paint.dim(`(${r.direction})`)}: ${what}`);
        const steps = r.direction === 'up' ? r.migration.up : r.migration.down;
        if (r.executed) for (const s of steps) if (s.empty) ctx.out.warn(`${s.file} is empty: only the bookkeeping row changed`);
      });
    } catch (e) {
      if (e instanceof CliError) e.result = { applied: results.map(stepJson) };
      throw e;
    }
    const n = results.filter((r) => !r.concurrent).length;
    ctx.out.line(
      `${n} migration${n === 1 ? '' : 's'} ${plan[0]!.direction === 'down' && plan.every((s) => s.direction === 'down') ? 'rolled back' : 'applied'}`,
    );
    ctx.out.result({ applied: results.map(stepJson) });
    return EXIT.OK;
  },
};

const status: CommandSpec = {
  path: ['migrate', 'status'],
  summary: 'Display current status of migrations on a database',
  usage: 'svc migrate status [flags]',
  description:
    'Lists every migration of the project and of the server: SOURCE STATUS says whether its files are in\nthe project, DATABASE STATUS whether it is applied on the server.',
  examples: [
    '# Use with admin secret:',
    'svc migrate status --admin-secret "<your-admin-secret>"',
    '',
    '# Check status on a different server:',
    'svc migrate status --endpoint "<endpoint>"',
    '',
    '# For scripts:',
    'svc migrate status --output json',
  ],
  flags: [],
  args: { min: 0, max: 0 },
  server: true,
  exits: [EXIT.PROJECT, EXIT.SERVER],
  async run(ctx) {
    const p = ctx.project();
    const local = readMigrations(p.migrationsDir, p.dir);
    const applied = await appliedVersions(ctx.client());
    const versions = [...new Set([...local.map((m) => m.version), ...applied.map((a) => a.version)])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const rows = versions.map((v) => {
      const m = local.find((x) => x.version === v);
      const a = applied.find((x) => x.version === v);
      return {
        version: String(v),
        name: m?.name ?? '',
        source_status: m ? 'present' : 'not present',
        database_status: a ? 'present' : 'not present',
        dirty: a?.dirty ?? false,
      };
    });
    const { paint } = ctx.out;
    const show = (s: string) => (s === 'present' ? 'Present' : paint.yellow('Not Present'));
    if (rows.length) {
      const dirty = rows.some((r) => r.dirty);
      for (const l of table(
        [
          ['VERSION', 'NAME', 'SOURCE STATUS', 'DATABASE STATUS', ...(dirty ? ['DIRTY'] : [])],
          ...rows.map((r) => [r.version, r.name, show(r.source_status), show(r.database_status), ...(dirty ? [r.dirty ? paint.red('dirty') : ''] : [])]),
        ],
        paint,
      ))
        ctx.out.line(l);
    } else ctx.out.line('no migrations in the project or on the server');
    ctx.out.result({ migrations: rows });
    return EXIT.OK;
  },
};

const create: CommandSpec = {
  path: ['migrate', 'create'],
  summary: 'Create files required for a migration',
  usage: 'svc migrate create <migration-name> [flags]',
  description: [
    'Creates migrations/<version>_<name>/up.sql and down.sql; the version is the time in milliseconds',
    '(or the last version + 1 when that is later). Without flags both files are empty: write the SQL into them.',
  ].join('\n'),
  examples: [
    '# Empty up.sql and down.sql to write by hand:',
    'svc migrate create create_author',
    '',
    '# With the SQL given on the command line:',
    'svc migrate create create_author --up-sql "create table author (id serial primary key, name text)" --down-sql "drop table author"',
    '',
    '# The up migration from a file:',
    'svc migrate create create_author --sql-from-file ./author.sql',
    '',
    '# Set up migrations for an existing database: pg_dump of its schema (public by default), then mark it applied:',
    'svc migrate create init --from-server',
    'svc migrate apply --version "<version>" --skip-execution',
    '',
    '# Take pg_dump from server while specifying the schemas to include:',
    'svc migrate create init --from-server --schema myschema1,myschema2',
  ],
  flags: [
    { name: 'sql-from-file', type: 'string', value: 'string', description: 'path to an SQL file which contains the SQL statements (the up migration)' },
    { name: 'from-server', type: 'bool', description: 'take pg_dump of the schema from the server and save it as the up migration' },
    { name: 'sql-from-server', type: 'bool', description: 'same as --from-server' },
    { name: 'schema', type: 'list', value: 'strings', description: 'schemas to dump with --from-server, comma separated or repeated (default [public])' },
    { name: 'up-sql', type: 'string', value: 'string', description: 'SQL of the up migration' },
    { name: 'down-sql', type: 'string', value: 'string', description: 'SQL of the down migration' },
  ],
  args: { min: 1, max: 1 },
  server: true,
  exits: [EXIT.PROJECT, EXIT.SERVER, EXIT.REJECTED],
  async run(ctx) {
    const name = ctx.args[0]!;
    if (!NAME_RE.test(name)) throw badName('migration', name);
    const fromServer = ctx.bool('from-server') || ctx.bool('sql-from-server');
    const sources = [ctx.has('sql-from-file') && '--sql-from-file', fromServer && '--from-server', ctx.has('up-sql') && '--up-sql'].filter(Boolean) as string[];
    if (sources.length > 1) throw conflictingFlags(sources[0]!, sources[1]!, ctx.spec);
    if (ctx.has('schema') && !fromServer) throw ctx.usage('--schema is used with --from-server');
    const p = ctx.project();
    mkdirSync(p.migrationsDir, { recursive: true });
    let up = ctx.flag('up-sql') ?? '';
    const file = ctx.flag('sql-from-file');
    if (file !== undefined) {
      try {
        up = readFileSync(ctx.path(file), 'utf8');
      } catch (e) {
        throw fileError(file, (e as Error).message);
      }
    }
    if (fromServer) {
      const schemas = ctx.list('schema').length ? ctx.list('schema') : ['public'];
      try {
        up = await ctx.client().pgDump(['-O', '-x', '--schema-only', ...schemas.flatMap((s) => ['--schema', s])]);
      } catch (e) {
        if (e instanceof QueryFailure) throw pgDumpNotSupported(e);
        throw e;
      }
    }
    const existing = readMigrations(p.migrationsDir, p.dir).map((m) => m.version);
    const version = nextVersion(existing);
    const id = `${String(version)}_${name}`;
    const dir = join(p.migrationsDir, id);
    mkdirSync(dir);
    const withNl = (s: string) => (s === '' || s.endsWith('\n') ? s : `${s}\n`);
    writeFileSync(join(dir, 'up.sql'), withNl(up));
    writeFileSync(join(dir, 'down.sql'), withNl(ctx.flag('down-sql') ?? ''));
    const rel = relative(ctx.cwd, dir) || dir;
    ctx.out.line(`created migration ${id}: ${join(rel, 'up.sql')}, ${join(rel, 'down.sql')}`);
    if (fromServer) ctx.out.line(`mark it applied on this server: svc migrate apply --version ${String(version)} --skip-execution`);
    ctx.out.result({ version: String(version), name, directory: dir, files: [join(dir, 'up.sql'), join(dir, 'down.sql')] });
    return EXIT.OK;
  },
};

/** The squashed steps: SQL when every source is SQL, else /v1/query requests (run_sql for SQL files). */
function squashSteps(ms: Migration[], direction: Direction): { sql?: string; yaml?: unknown[]; missing: string[] } {
  const ordered = direction === 'up' ? ms : [...ms].reverse();
  const missing = ordered.filter((m) => (direction === 'up' ? m.up : m.down).length === 0).map((m) => m.id);
  const steps = ordered.flatMap((m) => (direction === 'up' ? m.up : m.down).map((s) => ({ m, s })));
  const allSql = steps.every(({ s }) => s.file.endsWith('.sql'));
  if (allSql) {
    const parts = steps
      .filter(({ s }) => !s.empty)
      .map(({ m, s }) => `-- ${m.id}/${s.file.split(/[\\/]/).pop()}\n${(s.requests[0] as { args: { sql: string } }).args.sql.replace(/\s*$/, '')}\n`);
    for (const id of missing) parts.push(`-- ${id}: no ${direction} migration\n`);
    return { sql: parts.join('\n'), missing };
  }
  return { yaml: steps.flatMap(({ s }) => s.requests), missing };
}

const squash: CommandSpec = {
  path: ['migrate', 'squash'],
  summary: 'Squash multiple migrations into a single one',
  usage: 'svc migrate squash --from <version> [flags]',
  description: [
    'Writes one new migration whose up is the ups of every migration from --from to the latest, in order,',
    'and whose down is their downs in reverse order (SQL; up.yaml/down.yaml when a source has YAML steps).',
    'With --delete-source the sources are deleted and, when they are all applied on the server, their',
    'schema_migrations rows are replaced by the squashed version in one transaction (so the server',
    'stays in step with the files); when none is applied only the files change.',
  ].join('\n'),
  examples: [
    '# squash all migrations from version 123 to the latest one:',
    'svc migrate squash --from 123',
    '',
    '# Add a name for the new squashed migration, replace the sources by it (files and server):',
    'svc migrate squash --name "<name>" --from 123 --delete-source',
  ],
  flags: [
    { name: 'from', type: 'string', value: 'uint', description: 'start squashing from this version' },
    { name: 'name', type: 'string', value: 'string', description: 'name for the new squashed migration (default "squashed")' },
    { name: 'delete-source', type: 'bool', description: 'delete the source migrations after squashing (and replace their rows on the server, see above)' },
  ],
  args: { min: 0, max: 0 },
  server: true,
  exits: [EXIT.PROJECT, EXIT.SERVER, EXIT.REJECTED],
  async run(ctx) {
    const from = parseVersion(ctx, 'from');
    if (from === undefined) throw ctx.usage('--from is required');
    const name = ctx.flag('name') ?? 'squashed';
    if (!NAME_RE.test(name)) throw badName('migration', name);
    const p = ctx.project();
    const local = readMigrations(p.migrationsDir, p.dir);
    const sources = local.filter((m) => m.version >= from);
    if (!sources.length) throw nothingToSquash(String(from));
    const deleteSource = ctx.bool('delete-source');
    let client: QueryClient | undefined;
    let appliedSources: bigint[] = [];
    if (deleteSource) {
      client = ctx.client();
      const applied = new Set((await appliedVersions(client)).map((a) => a.version));
      appliedSources = sources.filter((m) => applied.has(m.version)).map((m) => m.version);
      if (appliedSources.length && appliedSources.length !== sources.length) {
        throw squashPartlyApplied(
          appliedSources.map(String),
          sources.filter((m) => !applied.has(m.version)).map((m) => m.id),
        );
      }
    }
    const version = nextVersion(local.map((m) => m.version));
    const id = `${String(version)}_${name}`;
    const dir = join(p.migrationsDir, id);
    const up = squashSteps(sources, 'up');
    const down = squashSteps(sources, 'down');
    mkdirSync(dir);
    const files: string[] = [];
    const write = (direction: Direction, s: ReturnType<typeof squashSteps>) => {
      const f = join(dir, s.sql !== undefined ? `${direction}.sql` : `${direction}.yaml`);
      writeFileSync(f, s.sql !== undefined ? s.sql : toYaml(s.yaml));
      files.push(f);
    };
    write('up', up);
    write('down', down);
    let marked = false;
    if (deleteSource && appliedSources.length) {
      const list = appliedSources.map(String).join(', ');
      const sql = `select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY});\ndelete from ${MIGRATIONS_TABLE} where version in (${list});\ninsert into ${MIGRATIONS_TABLE} (version, dirty) values (${String(version)}, false);`;
      try {
        await client!.query({ type: 'bulk', args: [{ type: 'run_sql', args: { sql, check_metadata_consistency: false } }] });
      } catch (e) {
        rmSync(dir, { recursive: true, force: true });
        if (e instanceof QueryFailure) throw rejected('could not replace the squashed versions on the server (nothing changed)', e);
        throw e;
      }
      marked = true;
    }
    if (deleteSource) {
      for (const m of sources) {
        if (m.location === p.migrationsDir)
          for (const f of m.files) rmSync(f, { force: true }); // flat files
        else rmSync(m.location, { recursive: true, force: true });
      }
    }
    const rel = relative(ctx.cwd, dir) || dir;
    ctx.out.line(`squashed ${sources.length} migration${sources.length === 1 ? '' : 's'} (${sources[0]!.id} … ${sources[sources.length - 1]!.id}) into ${rel}`);
    for (const id of down.missing) ctx.out.warn(`${id} has no down migration: the squashed down.sql does not undo it`);
    if (deleteSource) ctx.out.line(`deleted the ${sources.length} source migration${sources.length === 1 ? '' : 's'}`);
    if (marked)
      ctx.out.line(
        `the server now lists ${String(version)} as applied in place of ${appliedSources.length} squashed version${appliedSources.length === 1 ? '' : 's'}`,
      );
    else if (!deleteSource)
      ctx.out.line(`mark it applied on a server that has the sources applied: svc migrate apply --version ${String(version)} --skip-execution`);
    ctx.out.result({
      version: String(version),
      name,
      directory: dir,
      files,
      squashed: sources.map((m) => String(m.version)),
      deleted_source: deleteSource,
      marked_applied: marked,
    });
    return EXIT.OK;
  },
};

export const MIGRATE_COMMANDS: CommandSpec[] = [create, apply, status, squash];
