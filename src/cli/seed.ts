/**
 * `svc seed create | apply` (upstream v1.3's seeds): SQL files in the project's seeds directory
 * (seeds_directory of config.yaml, default seeds/), named `<version>_<name>.sql`. `apply` runs the
 * chosen files, in name order, as one bulk: all of them or nothing.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import type { CommandSpec } from './context.js';
import { EXIT, QueryFailure } from './errors.js';
import { badName, conflictingFlags, fileError, missingDir, pgDumpNotSupported, rejected } from './messages.js';
import { NAME_RE, nextVersion } from './migrate.js';
import { sqlIsEmpty } from './migrations.js';

const create: CommandSpec = {
  path: ['seed', 'create'],
  summary: 'Create a seed data file',
  usage: 'svc seed create <seed-name> [flags]',
  description:
    'Creates seeds/<version>_<name>.sql: empty (write INSERT statements into it), from a file, or with the\ndata of tables dumped from the server (pg_dump --data-only).',
  examples: [
    '# An empty seed file to fill in:',
    'svc seed create authors',
    '',
    '# The current rows of tables, from the server:',
    'svc seed create authors --from-table author --from-table public.article',
    '',
    '# From an SQL file:',
    'svc seed create authors --sql-from-file ./authors.sql',
  ],
  flags: [
    {
      name: 'from-table',
      type: 'list',
      value: 'strings',
      description: 'tables whose rows to dump from the server (pg_dump --data-only --table), comma separated or repeated',
    },
    { name: 'sql-from-file', type: 'string', value: 'string', description: 'path to an SQL file with the seed data' },
  ],
  args: { min: 1, max: 1 },
  server: true,
  exits: [EXIT.PROJECT, EXIT.SERVER, EXIT.REJECTED],
  async run(ctx) {
    const name = ctx.args[0]!;
    if (!NAME_RE.test(name)) throw badName('seed', name);
    if (ctx.has('from-table') && ctx.has('sql-from-file')) throw conflictingFlags('--from-table', '--sql-from-file', ctx.spec);
    const p = ctx.project();
    let sql = '';
    const file = ctx.flag('sql-from-file');
    if (file !== undefined) {
      try {
        sql = readFileSync(ctx.path(file), 'utf8');
      } catch (e) {
        throw fileError(file, (e as Error).message);
      }
    }
    const tables = ctx.list('from-table');
    if (tables.length) {
      try {
        sql = await ctx.client().pgDump(['--data-only', '--column-inserts', ...tables.flatMap((t) => ['--table', t])]);
      } catch (e) {
        if (e instanceof QueryFailure) throw pgDumpNotSupported(e);
        throw e;
      }
    }
    mkdirSync(p.seedsDir, { recursive: true });
    const existing = readdirSync(p.seedsDir)
      .map((f) => /^(\d+)_/.exec(f)?.[1])
      .filter((x): x is string => !!x)
      .map((x) => BigInt(x));
    const path = join(p.seedsDir, `${String(nextVersion(existing))}_${name}.sql`);
    writeFileSync(path, sql === '' || sql.endsWith('\n') ? sql : `${sql}\n`);
    ctx.out.line(`created seed file ${relative(ctx.cwd, path)}`);
    ctx.out.result({ file: path });
    return EXIT.OK;
  },
};

const apply: CommandSpec = {
  path: ['seed', 'apply'],
  summary: 'Apply seed data',
  usage: 'svc seed apply [flags]',
  description:
    'Runs every .sql file of the seeds directory (or the --file ones), in name order, in one transaction:\nif one fails, none is applied. Seeds are not recorded: applying twice inserts twice.',
  examples: [
    '# Apply all seed files:',
    'svc seed apply',
    '',
    '# Apply only some:',
    'svc seed apply --file 1600000000000_authors.sql --file 1600000000001_articles.sql',
  ],
  flags: [{ name: 'file', short: 'f', type: 'list', value: 'strings', description: 'seed files to apply (names in the seeds directory, or paths)' }],
  args: { min: 0, max: 0 },
  server: true,
  exits: [EXIT.PROJECT, EXIT.SERVER, EXIT.REJECTED],
  async run(ctx) {
    const p = ctx.project();
    let files: string[];
    if (ctx.list('file').length) {
      files = ctx.list('file').map((f) => (existsSync(join(p.seedsDir, f)) ? join(p.seedsDir, f) : ctx.path(f)));
    } else {
      if (!existsSync(p.seedsDir)) throw missingDir('seeds', p.seedsDir);
      files = readdirSync(p.seedsDir)
        .filter((f) => f.endsWith('.sql'))
        .sort()
        .map((f) => join(p.seedsDir, f));
    }
    const steps = files
      .map((f) => {
        let sql: string;
        try {
          sql = readFileSync(f, 'utf8');
        } catch (e) {
          throw fileError(relative(ctx.cwd, f), (e as Error).message);
        }
        return { file: relative(ctx.cwd, f), sql };
      })
      .filter((s) => !sqlIsEmpty(s.sql));
    if (!steps.length) {
      ctx.out.line('no seed data to apply');
      ctx.out.result({ applied: [] });
      return EXIT.OK;
    }
    try {
      await ctx.client().query({ type: 'bulk', args: steps.map((s) => ({ type: 'run_sql', args: { sql: s.sql } })) });
    } catch (e) {
      if (e instanceof QueryFailure) {
        const i = e.bulkIndex();
        throw rejected(`seed ${i !== undefined && steps[i] ? steps[i]!.file : ''} failed (no seed file was applied)`, e);
      }
      throw e;
    }
    for (const s of steps) ctx.out.line(`applied ${basename(s.file)}`);
    ctx.out.result({ applied: steps.map((s) => s.file) });
    return EXIT.OK;
  },
};

export const SEED_COMMANDS: CommandSpec[] = [create, apply];
