/**
 * The `svc` CLI for metadata and migrations as code (issue 34; reference: upstream v1.3's CLI,
 * shared/reference/cli/): finds the command, parses its flags, runs it, and turns failures into
 * messages and exit codes (./errors.ts) — never a stack trace for a user error.
 */
import { checkArgCount, commandHelp, parseArgs } from './args.js';
import { type CommandSpec, Context } from './context.js';
import { CONSOLE_COMMANDS } from './console.js';
import { CliError, EXIT } from './errors.js';
import { INIT_COMMANDS } from './init.js';
import { badOutput, unknownCommand } from './messages.js';
import { METADATA_COMMANDS } from './metadata.js';
import { MIGRATE_COMMANDS } from './migrate.js';
import { Output, type Streams } from './output.js';
import { SEED_COMMANDS } from './seed.js';

export const COMMANDS: CommandSpec[] = [...INIT_COMMANDS, ...CONSOLE_COMMANDS, ...METADATA_COMMANDS, ...MIGRATE_COMMANDS, ...SEED_COMMANDS];

/** Aliases of command words, as upstream (metadata → md, inconsistency → ic, …), by position. */
const WORD_ALIASES: Record<string, string> = {
  md: 'metadata',
  seeds: 'seed',
  sd: 'seed',
  inconsistencies: 'inconsistency',
  ic: 'inconsistency',
  reset: 'clear',
  ls: 'list',
};

const GROUPS: Record<string, string> = {
  metadata: 'Manage Svc GraphQL engine metadata saved in the database',
  'metadata inconsistency': 'Manage inconsistent objects in Svc metadata',
  migrate: 'Manage migrations on the database',
  seed: 'Manage seed data',
};

export interface CliIo extends Streams {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

function groupHelp(group: string): string {
  const subs = COMMANDS.filter((c) => c.path.slice(0, -1).join(' ') === group);
  const nested = Object.keys(GROUPS).filter((g) => g.startsWith(`${group} `));
  const rows = [...subs.map((c) => [c.path[c.path.length - 1]!, c.summary]), ...nested.map((g) => [g.split(' ').pop()!, GROUPS[g]!])];
  const w = Math.max(...rows.map((r) => r[0]!.length)) + 3;
  return [
    GROUPS[group],
    '',
    'Usage:',
    `  svc ${group} <command> [flags]`,
    '',
    'Commands:',
    ...rows.map((r) => `  ${r[0]!.padEnd(w)}${r[1]}`),
    '',
    `Run "svc ${group} <command> --help" for the flags and examples of each.`,
  ].join('\n');
}

export async function runCli(
  argv: readonly string[],
  io: CliIo = { stdout: process.stdout, stderr: process.stderr, cwd: process.cwd(), env: process.env },
): Promise<number> {
  const wantsJson = argv.some((a, i) => (a === '--output' || a === '-o' ? argv[i + 1] === 'json' : a === '--output=json' || a === '-ojson'));
  const color = !argv.includes('--no-color') && !io.env.NO_COLOR;
  let out = new Output(wantsJson, color, io);
  try {
    // the command: the longest run of leading words that names one
    const words: string[] = [];
    for (const a of argv) {
      if (a.startsWith('-') || words.length === 3) break;
      words.push(WORD_ALIASES[a] ?? a);
    }
    let spec: CommandSpec | undefined;
    for (let k = words.length; k > 0 && !spec; k--) spec = COMMANDS.find((c) => c.path.length === k && c.path.every((w, i) => w === words[i]));
    if (!spec) {
      const group = [3, 2, 1].map((k) => words.slice(0, k).join(' ')).find((g) => GROUPS[g]);
      const rest = group ? argv.slice(group.split(' ').length) : [];
      if (group && rest.every((a) => a === '--help' || a === '-h')) {
        io.stdout.write(`${groupHelp(group)}\n`);
        return EXIT.OK;
      }
      const expected = group
        ? [
            ...COMMANDS.filter((c) => c.path.slice(0, -1).join(' ') === group).map((c) => c.path.join(' ')),
            ...Object.keys(GROUPS).filter((g) => g.startsWith(`${group} `)),
          ]
        : COMMANDS.map((c) => c.path.join(' '));
      throw unknownCommand(
        words,
        expected.map((e) => `svc ${e}`),
      );
    }
    const parsed = parseArgs(spec, argv.slice(spec.path.length));
    if (parsed.flags.get('help') === true) {
      io.stdout.write(`${commandHelp(spec)}\n`);
      return EXIT.OK;
    }
    const output = parsed.flags.get('output');
    if (output !== undefined && output !== 'text' && output !== 'json') throw badOutput(String(output));
    out = new Output(output === 'json', parsed.flags.get('no-color') !== true && !io.env.NO_COLOR, io);
    checkArgCount(spec, parsed.args);
    const ctx = new Context(spec, parsed, out, io.cwd, io.env);
    return await spec.run(ctx);
  } catch (e) {
    if (e instanceof CliError) {
      out.error(e.message, e.details, { code: e.code, message: e.message, ...(e.details.length ? { details: e.details } : {}), ...e.data }, e.result);
      return e.exitCode;
    }
    const err = e as Error;
    out.error(`internal error (a bug in svc, please report it): ${err?.message ?? String(e)}`, (err?.stack ?? '').split('\n').slice(1), {
      code: 'internal',
      message: err?.message ?? String(e),
    });
    return EXIT.INTERNAL;
  }
}
