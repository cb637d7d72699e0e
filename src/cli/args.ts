/**
 * The CLI's command table and flag parser: a command is a path of words (`migrate apply`) with
 * its flags, positional arguments, examples and a `run`; `--help` of each is generated from it.
 * Flags: `--name value`, `--name=value`, `-x value`; booleans take no value (`--flag=false` works);
 * list flags repeat or take commas (`--schema a,b --schema c`).
 */
import { EXIT } from './errors.js';
import { usageError } from './messages.js';
import type { CommandSpec, FlagSpec, Parsed } from './context.js';

/** Flags every command takes. */
export const GLOBAL_FLAGS: FlagSpec[] = [
  { name: 'output', short: 'o', type: 'string', value: 'string', description: 'output format: text or json (default "text")' },
  {
    name: 'project',
    type: 'string',
    value: 'string',
    description: 'directory of the project (config.yaml); default: the current directory or the nearest parent with a config.yaml',
  },
  {
    name: 'envfile',
    type: 'string',
    value: 'string',
    description: '.env file of the project to read environment variables from; they do not override set ones (default ".env")',
  },
  { name: 'no-color', type: 'bool', description: 'do not colour the output (also: NO_COLOR set, or output not a terminal)' },
  { name: 'help', short: 'h', type: 'bool', description: 'help for this command' },
];

/** Flags of commands that talk to a server. */
export const SERVER_FLAGS: FlagSpec[] = [
  {
    name: 'endpoint',
    type: 'string',
    value: 'string',
    description: 'http(s) endpoint of Svc, without /v1/query [SVC_GRAPHQL_ENDPOINT, config.yaml endpoint] (default "http://localhost:8080")',
  },
  { name: 'admin-secret', type: 'string', value: 'string', description: 'admin secret of Svc [SVC_GRAPHQL_ADMIN_SECRET, config.yaml admin_secret]' },
  { name: 'insecure-skip-tls-verify', type: 'bool', description: 'skip TLS verification of an https endpoint [SVC_GRAPHQL_INSECURE_SKIP_TLS_VERIFY]' },
  {
    name: 'certificate-authority',
    type: 'string',
    value: 'string',
    description: 'path to a CA certificate (PEM) for an https endpoint [SVC_GRAPHQL_CERTIFICATE_AUTHORITY]',
  },
];

export function flagsOf(spec: CommandSpec): FlagSpec[] {
  return [...spec.flags, ...(spec.server ? SERVER_FLAGS : []), ...GLOBAL_FLAGS];
}

const BOOL_WORDS: Record<string, boolean> = { true: true, t: true, yes: true, '1': true, false: false, f: false, no: false, '0': false };

export function parseArgs(spec: CommandSpec, argv: readonly string[]): Parsed {
  const all = flagsOf(spec);
  const flags = new Map<string, string | boolean | string[]>();
  const args: string[] = [];
  let onlyArgs = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (onlyArgs || !a.startsWith('-') || a === '-') {
      args.push(a);
      continue;
    }
    if (a === '--') {
      onlyArgs = true;
      continue;
    }
    let name: string;
    let value: string | undefined;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      name = eq >= 0 ? a.slice(2, eq) : a.slice(2);
      value = eq >= 0 ? a.slice(eq + 1) : undefined;
    } else {
      name = a.slice(1, 2);
      value = a.length > 2 ? a.slice(2).replace(/^=/, '') : undefined;
    }
    const f = all.find((x) => x.name === name || (a[1] !== '-' && x.short === name));
    if (!f) throw usageError(`unknown flag ${a.startsWith('--') ? `--${name}` : `-${name}`} for "svc ${spec.path.join(' ')}"`, spec);
    if (f.type === 'bool') {
      if (value === undefined) flags.set(f.name, true);
      else {
        const b = BOOL_WORDS[value.toLowerCase()];
        if (b === undefined) throw usageError(`flag --${f.name} expects true or false, got ${JSON.stringify(value)}`, spec);
        flags.set(f.name, b);
      }
      continue;
    }
    if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined) throw usageError(`flag --${f.name} needs a value`, spec);
      value = next;
      i++;
    }
    if (f.type === 'list') {
      const prev = (flags.get(f.name) as string[] | undefined) ?? [];
      flags.set(f.name, [
        ...prev,
        ...value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      ]);
    } else {
      if (flags.has(f.name)) throw usageError(`flag --${f.name} given more than once`, spec);
      flags.set(f.name, value);
    }
  }
  return { flags, args };
}

/** Checks the number of positional arguments (after --help was handled). */
export function checkArgCount(spec: CommandSpec, args: string[]): void {
  if (args.length < spec.args.min)
    throw usageError(`"svc ${spec.path.join(' ')}" needs ${spec.args.min === 1 ? 'an argument' : `${spec.args.min} arguments`}`, spec);
  if (args.length > spec.args.max) {
    throw usageError(
      spec.args.max === 0
        ? `"svc ${spec.path.join(' ')}" takes no arguments, got ${JSON.stringify(args[0])}`
        : `too many arguments for "svc ${spec.path.join(' ')}": ${args
            .slice(spec.args.max)
            .map((x) => JSON.stringify(x))
            .join(' ')}`,
      spec,
    );
  }
}

const EXIT_TEXT: Record<number, string> = {
  [EXIT.OK]: 'done',
  [EXIT.CHECK_FAILED]: 'the check failed (see above)',
  [EXIT.USAGE]: 'bad command line (unknown flag, missing argument, conflicting flags)',
  [EXIT.PROJECT]: 'project files: no config.yaml, or an unreadable or invalid file',
  [EXIT.SERVER]: 'the server could not be used: unreachable, not Svc, admin secret refused',
  [EXIT.REJECTED]: 'the server refused the request (nothing of the failed step was applied)',
};

function flagLines(flags: FlagSpec[]): string[] {
  const left = flags.map((f) => `${f.short ? `-${f.short}, ` : '    '}--${f.name}${f.value ? ` ${f.value}` : ''}`);
  const width = Math.max(...left.map((l) => l.length)) + 3;
  return flags.map((f, i) => `  ${left[i]!.padEnd(width)}${f.description}`);
}

export function commandHelp(spec: CommandSpec): string {
  const exitNotes = spec.exitNotes ?? {};
  const out = [`${spec.summary}`, '', 'Usage:', `  ${spec.usage}`];
  if (spec.aliases?.length) out.push('', `Aliases: ${spec.aliases.join(', ')}`);
  if (spec.description) out.push('', ...spec.description.split('\n'));
  if (spec.examples.length) out.push('', 'Examples:', ...spec.examples.map((e) => (e === '' ? '' : `  ${e}`)));
  if (spec.flags.length) out.push('', 'Flags:', ...flagLines(spec.flags));
  if (spec.server) out.push('', 'Server flags:', ...flagLines(SERVER_FLAGS));
  out.push('', 'Global flags:', ...flagLines(GLOBAL_FLAGS));
  const codes = [EXIT.OK, ...spec.exits, EXIT.USAGE];
  out.push('', 'Exit codes:', ...[...new Set(codes)].sort((a, b) => a - b).map((c) => `  ${c}  ${exitNotes[c] ?? EXIT_TEXT[c]}`));
  return out.join('\n');
}
