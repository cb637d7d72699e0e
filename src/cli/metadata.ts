/**
 * `svc metadata export | apply | diff | clear | reload` and `svc metadata inconsistency list |
 * status | drop` (reference: cli/svc_metadata_*.rst), on the metadata directory of
 * ./metadataFiles.ts.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { CommandSpec, Context } from './context.js';
import type { QueryClient } from './client.js';
import { EXIT, QueryFailure } from './errors.js';
import { objectName, rejected } from './messages.js';
import {
  METADATA_FILES,
  OPTIONAL_METADATA_FILES,
  parseMetadataFiles,
  readMetadataDir,
  readMetadataSource,
  renderMetadata,
  roundTripLoss,
  type MetadataDoc,
} from './metadataFiles.js';
import { stripColour, table, type Paint } from './output.js';
import { unifiedDiff } from './textdiff.js';

async function serverMetadata(client: QueryClient): Promise<MetadataDoc> {
  try {
    return (await client.query({ type: 'export_metadata', args: {} })) as MetadataDoc;
  } catch (e) {
    if (e instanceof QueryFailure) throw rejected('export_metadata failed', e);
    throw e;
  }
}

export interface FileDiff {
  file: string;
  diff: string;
}

/** The files of `a` and `b` (canonical renderings) that differ, with their diffs from a to b. */
export function diffMetadata(a: MetadataDoc, b: MetadataDoc, aName: string, bName: string, paint: Paint): FileDiff[] {
  const fa = renderMetadata(a);
  const fb = renderMetadata(b);
  const out: FileDiff[] = [];
  for (const f of [...METADATA_FILES, ...OPTIONAL_METADATA_FILES]) {
    const d = unifiedDiff(fa.get(f) ?? '', fb.get(f) ?? '', `${aName}/${f}`, `${bName}/${f}`, paint);
    if (d) out.push({ file: f, diff: d });
  }
  return out;
}

/** Writes `md` as a metadata directory (every file of the format, replaced). */
export function writeMetadataDir(dir: string, md: MetadataDoc): string[] {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const [f, text] of renderMetadata(md)) {
    writeFileSync(join(dir, f), text);
    written.push(join(dir, f));
  }
  // an optional file whose part is no longer set goes (api_limits.yaml after remove_api_limits)
  for (const f of OPTIONAL_METADATA_FILES) if (!written.includes(join(dir, f))) rmSync(join(dir, f), { force: true });
  return written;
}

const SERVER_EXITS = [EXIT.PROJECT, EXIT.SERVER, EXIT.REJECTED];

const exportCmd: CommandSpec = {
  path: ['metadata', 'export'],
  summary: 'Export Svc metadata and save it in the metadata directory',
  usage: 'svc metadata export [flags]',
  description: [
    "Writes the metadata of the server (export_metadata) as the files of the project's metadata directory",
    '(metadata_directory of config.yaml, default metadata/): version.yaml, tables.yaml, functions.yaml,',
    'remote_schemas.yaml, query_collections.yaml, allow_list.yaml, actions.yaml, actions.graphql, cron_triggers.yaml,',
    'rest_endpoints.yaml, inherited_roles.yaml.',
  ].join('\n'),
  examples: [
    '# Export metadata and save it in the metadata directory:',
    'svc metadata export',
    '',
    '# Use with admin secret:',
    'svc metadata export --admin-secret "<admin-secret>"',
    '',
    '# Export metadata from another instance specified by the flag:',
    'svc metadata export --endpoint "<endpoint>"',
  ],
  flags: [],
  args: { min: 0, max: 0 },
  server: true,
  exits: SERVER_EXITS,
  async run(ctx) {
    const p = ctx.project();
    const md = await serverMetadata(ctx.client());
    const files = writeMetadataDir(p.metadataDir, md);
    const loss = roundTripLoss(md);
    if (loss)
      ctx.out.warn(
        `the metadata files cannot carry ${loss} exactly as the server holds it (e.g. an explicit null description in actions.graphql): applying them back gives an equivalent value`,
      );
    ctx.out.line(`exported the metadata to ${relative(ctx.cwd, p.metadataDir) || '.'}/ (${files.length} files)`);
    ctx.out.result({ directory: p.metadataDir, files, ...(loss ? { not_exact_at: loss } : {}) });
    return EXIT.OK;
  },
};

const applyCmd: CommandSpec = {
  path: ['metadata', 'apply'],
  summary: 'Apply the metadata directory on the server',
  usage: 'svc metadata apply [flags]',
  description: [
    "Replaces the server's metadata by the project's metadata directory (replace_metadata: all or nothing).",
    'The database objects it refers to (tables, functions) must exist: apply the migrations first.',
    'When the server already holds the same metadata nothing is sent.',
  ].join('\n'),
  examples: [
    '# Apply the metadata directory:',
    'svc metadata apply',
    '',
    '# Use with admin secret:',
    'svc metadata apply --admin-secret "<admin-secret>"',
    '',
    '# Apply metadata to an instance specified by the flag:',
    'svc metadata apply --endpoint "<endpoint>"',
    '',
    '# Show what would change, without applying:',
    'svc metadata apply --dry-run',
  ],
  flags: [{ name: 'dry-run', type: 'bool', description: 'show a diff (server → files) instead of applying the metadata' }],
  args: { min: 0, max: 0 },
  server: true,
  exits: SERVER_EXITS,
  async run(ctx) {
    const p = ctx.project();
    const local = parseMetadataFiles(readMetadataDir(p.metadataDir));
    const client = ctx.client();
    const server = await serverMetadata(client);
    const diffs = diffMetadata(server, local, 'server', relative(ctx.cwd, p.metadataDir) || '.', ctx.out.paint);
    if (ctx.bool('dry-run')) {
      printDiffs(ctx, diffs);
      ctx.out.result({ dry_run: true, identical: diffs.length === 0, files: diffs.map((d) => ({ file: d.file, diff: stripColour(d.diff) })) });
      return EXIT.OK;
    }
    if (!diffs.length) {
      ctx.out.line('the server already has this metadata: nothing to apply');
      ctx.out.result({ applied: false, changed_files: [] });
      return EXIT.OK;
    }
    try {
      await client.query({ type: 'replace_metadata', args: local });
    } catch (e) {
      if (e instanceof QueryFailure) throw rejected('the server refused the metadata (nothing was changed)', e);
      throw e;
    }
    ctx.out.line(`metadata applied (changed: ${diffs.map((d) => d.file).join(', ')})`);
    ctx.out.result({ applied: true, changed_files: diffs.map((d) => d.file) });
    return EXIT.OK;
  },
};

function printDiffs(ctx: Context, diffs: FileDiff[]): void {
  for (const d of diffs) ctx.out.line(d.diff.replace(/\n$/, ''));
  if (!diffs.length) ctx.out.line('no differences');
  else
    ctx.out.line(
      ctx.out.paint.bold(`${diffs.length} file${diffs.length === 1 ? '' : 's'} differ${diffs.length === 1 ? 's' : ''}: ${diffs.map((d) => d.file).join(', ')}`),
    );
}

const diffCmd: CommandSpec = {
  path: ['metadata', 'diff'],
  summary: 'Show changes between two different sets of Svc metadata',
  usage: 'svc metadata diff [file1] [file2] [flags]',
  description: [
    "By default shows what applying the project's metadata directory would change on the server (server → files).",
    'A file argument is a metadata directory or one JSON/YAML metadata document (e.g. an export_metadata answer).',
    'Both sides are compared as the canonical metadata files, so formatting and comments do not count.',
    'Exits 1 when they differ: use it in CI to check that the server matches what is in git.',
  ].join('\n'),
  examples: [
    '# Show changes between server metadata and the metadata directory:',
    'svc metadata diff',
    '',
    '# Show changes between server metadata and that in local_metadata.yaml:',
    'svc metadata diff local_metadata.yaml',
    '',
    '# Show changes between two directories or files:',
    'svc metadata diff metadata_old/ metadata/',
    '',
    '# Diff metadata on a different Svc instance:',
    'svc metadata diff --endpoint "<endpoint>"',
  ],
  flags: [],
  args: { min: 0, max: 2 },
  server: true,
  exits: [EXIT.CHECK_FAILED, ...SERVER_EXITS],
  exitNotes: { [EXIT.OK]: 'no differences', [EXIT.CHECK_FAILED]: 'the two sides differ (the diff is printed)' },
  async run(ctx) {
    let a: MetadataDoc;
    let b: MetadataDoc;
    let aName: string;
    let bName: string;
    if (ctx.args.length === 2) {
      [aName, bName] = [ctx.args[0]!, ctx.args[1]!].map((x) => x.replace(/\/+$/, '')) as [string, string];
      a = readMetadataSource(ctx.path(ctx.args[0]!), ctx.args[0]!);
      b = readMetadataSource(ctx.path(ctx.args[1]!), ctx.args[1]!);
    } else {
      aName = 'server';
      if (ctx.args.length === 1) {
        bName = ctx.args[0]!.replace(/\/+$/, '');
        b = readMetadataSource(ctx.path(ctx.args[0]!), ctx.args[0]!);
      } else {
        const p = ctx.project();
        bName = relative(ctx.cwd, p.metadataDir) || '.';
        b = parseMetadataFiles(readMetadataDir(p.metadataDir));
      }
      a = await serverMetadata(ctx.client());
    }
    const diffs = diffMetadata(a, b, aName, bName, ctx.out.paint);
    printDiffs(ctx, diffs);
    ctx.out.result({ identical: diffs.length === 0, files: diffs.map((d) => ({ file: d.file, diff: stripColour(d.diff) })) });
    return diffs.length ? EXIT.CHECK_FAILED : EXIT.OK;
  },
};

async function simple(ctx: Context, body: unknown, what: string): Promise<unknown> {
  try {
    return await ctx.client().query(body);
  } catch (e) {
    if (e instanceof QueryFailure) throw rejected(`${what} failed`, e);
    throw e;
  }
}

interface Inconsistent {
  type?: string;
  reason?: string;
  definition?: unknown;
}

async function inconsistencies(ctx: Context): Promise<Inconsistent[]> {
  const r = (await simple(ctx, { type: 'get_inconsistent_metadata', args: {} }, 'get_inconsistent_metadata')) as { inconsistent_objects?: Inconsistent[] };
  return r.inconsistent_objects ?? [];
}

function printInconsistent(ctx: Context, objs: Inconsistent[]): void {
  for (const l of table([['TYPE', 'NAME', 'REASON'], ...objs.map((o) => [o.type ?? '', objectName(o.definition), o.reason ?? ''])], ctx.out.paint))
    ctx.out.line(l);
}

const clearCmd: CommandSpec = {
  path: ['metadata', 'clear'],
  aliases: ['reset'],
  summary: 'Clear Svc GraphQL engine metadata on the database',
  usage: 'svc metadata clear [flags]',
  description:
    'Removes every tracked table, relationship, permission, function, action, remote schema, … from the metadata\n(clear_metadata). The database itself is not touched.',
  examples: [
    '# Clear all the metadata information from database:',
    'svc metadata clear',
    '',
    '# Clear metadata on a different Svc instance:',
    'svc metadata clear --endpoint "<endpoint>"',
  ],
  flags: [],
  args: { min: 0, max: 0 },
  server: true,
  exits: [EXIT.SERVER, EXIT.REJECTED],
  async run(ctx) {
    await simple(ctx, { type: 'clear_metadata', args: {} }, 'clear_metadata');
    ctx.out.line('metadata cleared');
    ctx.out.result({ cleared: true });
    return EXIT.OK;
  },
};

const reloadCmd: CommandSpec = {
  path: ['metadata', 'reload'],
  summary: 'Reload Svc GraphQL engine metadata on the database',
  usage: 'svc metadata reload [flags]',
  description:
    "Rebuilds the server's schema from its metadata and the database (reload_metadata), e.g. after a change\nmade to the database with another tool, and reports the inconsistent objects found.",
  examples: [
    '# Reload all the metadata information from database:',
    'svc metadata reload',
    '',
    '# Also fetch the remote schemas again:',
    'svc metadata reload --reload-remote-schemas',
    '',
    '# Reload metadata on a different instance:',
    'svc metadata reload --endpoint "<endpoint>"',
  ],
  flags: [{ name: 'reload-remote-schemas', type: 'bool', description: 'introspect the remote schemas again' }],
  args: { min: 0, max: 0 },
  server: true,
  exits: [EXIT.SERVER, EXIT.REJECTED],
  async run(ctx) {
    await simple(ctx, { type: 'reload_metadata', args: { reload_remote_schemas: ctx.bool('reload-remote-schemas') } }, 'reload_metadata');
    const objs = await inconsistencies(ctx);
    ctx.out.line('metadata reloaded');
    if (objs.length) {
      ctx.out.warn(`the metadata is inconsistent (${objs.length} object${objs.length === 1 ? '' : 's'}): see svc metadata inconsistency list`);
    }
    ctx.out.result({ reloaded: true, is_consistent: objs.length === 0, inconsistent_objects: objs });
    return EXIT.OK;
  },
};

const icList: CommandSpec = {
  path: ['metadata', 'inconsistency', 'list'],
  aliases: ['ls'],
  summary: 'List all inconsistent objects from the metadata',
  usage: 'svc metadata inconsistency list [flags]',
  examples: ['svc metadata inconsistency list', 'svc metadata ic ls --output json'],
  flags: [],
  args: { min: 0, max: 0 },
  server: true,
  exits: [EXIT.SERVER, EXIT.REJECTED],
  async run(ctx) {
    const objs = await inconsistencies(ctx);
    if (objs.length) printInconsistent(ctx, objs);
    else ctx.out.line('metadata is consistent');
    ctx.out.result({ is_consistent: objs.length === 0, inconsistent_objects: objs });
    return EXIT.OK;
  },
};

const icStatus: CommandSpec = {
  path: ['metadata', 'inconsistency', 'status'],
  summary: 'Check if the metadata is inconsistent or not',
  usage: 'svc metadata inconsistency status [flags]',
  examples: ['# Fails (exit 1) when some metadata object is inconsistent:', 'svc metadata inconsistency status'],
  flags: [],
  args: { min: 0, max: 0 },
  server: true,
  exits: [EXIT.CHECK_FAILED, EXIT.SERVER, EXIT.REJECTED],
  exitNotes: { [EXIT.OK]: 'the metadata is consistent', [EXIT.CHECK_FAILED]: 'some metadata objects are inconsistent' },
  async run(ctx) {
    const objs = await inconsistencies(ctx);
    if (objs.length) ctx.out.line(`metadata is inconsistent (${objs.length} object${objs.length === 1 ? '' : 's'}): see svc metadata inconsistency list`);
    else ctx.out.line('metadata is consistent');
    ctx.out.result({ is_consistent: objs.length === 0, count: objs.length });
    return objs.length ? EXIT.CHECK_FAILED : EXIT.OK;
  },
};

const icDrop: CommandSpec = {
  path: ['metadata', 'inconsistency', 'drop'],
  summary: 'Drop inconsistent objects from the metadata',
  usage: 'svc metadata inconsistency drop [flags]',
  examples: ['svc metadata inconsistency drop'],
  flags: [],
  args: { min: 0, max: 0 },
  server: true,
  exits: [EXIT.SERVER, EXIT.REJECTED],
  async run(ctx) {
    const before = await inconsistencies(ctx);
    await simple(ctx, { type: 'drop_inconsistent_metadata', args: {} }, 'drop_inconsistent_metadata');
    ctx.out.line(before.length ? `dropped ${before.length} inconsistent object${before.length === 1 ? '' : 's'}` : 'metadata was consistent: nothing dropped');
    ctx.out.result({ dropped: before });
    return EXIT.OK;
  },
};

export const METADATA_COMMANDS: CommandSpec[] = [exportCmd, applyCmd, diffCmd, clearCmd, reloadCmd, icList, icStatus, icDrop];
