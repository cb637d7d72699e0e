/**
 * POST /v1alpha1/pg_dump: runs the `pg_dump` binary against the engine's
 * database with the given options (admin only). `clean_output` strips the
 * front matter, comments, the public schema boilerplate and Svc's own
 * event-trigger objects. The embedded default has no pg_dump binary to run
 * against: it answers `not-supported`.
 */
import { spawn } from 'node:child_process';
import { SvcError } from '../errors.js';
import { isJsonObject } from '../json.js';

/**
 * The pg_dump options a request may give: what shapes the SQL written to stdout, nothing that
 * names a file, a directory, a connection, a role or a binary format. Long options must be spelt
 * in full (pg_dump itself accepts abbreviations such as `--fil=`); short ones may not be glued
 * together except for value-less flags (`-Ox`). `true`: takes a value.
 */
const LONG: ReadonlyMap<string, boolean> = new Map([
  ['data-only', false],
  ['schema-only', false],
  ['no-owner', false],
  ['no-privileges', false],
  ['no-acl', false],
  ['clean', false],
  ['if-exists', false],
  ['create', false],
  ['inserts', false],
  ['column-inserts', false],
  ['rows-per-insert', true],
  ['disable-triggers', false],
  ['disable-dollar-quoting', false],
  ['no-comments', false],
  ['no-publications', false],
  ['no-security-labels', false],
  ['no-subscriptions', false],
  ['no-tablespaces', false],
  ['no-table-access-method', false],
  ['no-toast-compression', false],
  ['no-unlogged-table-data', false],
  ['quote-all-identifiers', false],
  ['on-conflict-do-nothing', false],
  ['load-via-partition-root', false],
  ['strict-names', false],
  ['use-set-session-authorization', false],
  ['enable-row-security', false],
  ['schema', true],
  ['exclude-schema', true],
  ['table', true],
  ['exclude-table', true],
  ['exclude-table-data', true],
  ['section', true],
  ['encoding', true],
  ['lock-wait-timeout', true],
  ['extension', true],
]);
const SHORT: ReadonlyMap<string, boolean> = new Map([
  ['a', false],
  ['s', false],
  ['O', false],
  ['x', false],
  ['c', false],
  ['C', false],
  ['n', true],
  ['N', true],
  ['t', true],
  ['T', true],
  ['E', true],
  ['e', true],
]);

/** Checks every option against the allow-list; throws 400 naming the first one that is not allowed. */
export function checkPgDumpOptions(opts: readonly string[]): void {
  const refuse = (o: string, why: string) => new SvcError(400, 'invalid-params', `pg_dump option ${JSON.stringify(o)} is not allowed: ${why}`, '$.opts');
  for (let i = 0; i < opts.length; i++) {
    const o = opts[i]!;
    if (o.startsWith('--')) {
      const eq = o.indexOf('=');
      const name = eq < 0 ? o.slice(2) : o.slice(2, eq);
      const takesValue = LONG.get(name);
      if (takesValue === undefined) throw refuse(o, 'only options that shape the SQL output are accepted, spelt in full');
      if (!takesValue && eq >= 0) throw refuse(o, 'it takes no value');
      if (takesValue && eq < 0) {
        if (i + 1 >= opts.length) throw refuse(o, 'it needs a value');
        i++;
      }
    } else if (o.startsWith('-') && o.length >= 2) {
      const letter = o[1]!;
      const takesValue = SHORT.get(letter);
      if (takesValue === undefined) throw refuse(o, 'only options that shape the SQL output are accepted');
      if (takesValue) {
        if (o.length === 2) {
          if (i + 1 >= opts.length) throw refuse(o, 'it needs a value');
          i++;
        }
      } else {
        for (const c of o.slice(2)) if (SHORT.get(c) !== false) throw refuse(o, 'only value-less flags may be combined');
      }
    } else {
      throw refuse(o, 'positional arguments (a database name) are not accepted');
    }
  }
}

export function parsePgDumpArgs(body: unknown): { opts: string[]; clean: boolean } {
  if (!isJsonObject(body)) throw new SvcError(400, 'parse-failed', 'expected an object', '$');
  const b = body as { opts?: unknown; clean_output?: unknown };
  if (!Array.isArray(b.opts) || b.opts.some((o) => typeof o !== 'string')) throw new SvcError(400, 'parse-failed', 'expected an array of strings', '$.opts');
  checkPgDumpOptions(b.opts as string[]);
  if (b.clean_output !== undefined && typeof b.clean_output !== 'boolean') throw new SvcError(400, 'parse-failed', 'expected a boolean', '$.clean_output');
  return { opts: b.opts as string[], clean: b.clean_output === true };
}

export function runPgDump(databaseUrl: string, opts: string[], timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('pg_dump', [databaseUrl, ...opts], { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    const out: Buffer[] = [];
    const errs: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => errs.push(d));
    child.on('error', (e) => reject(new SvcError(500, 'unexpected', `could not run pg_dump: ${e.message}`)));
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else reject(new SvcError(400, 'pg-dump-error', Buffer.concat(errs).toString('utf8').trim() || `pg_dump exited with ${code}`));
    });
  });
}

export function cleanDump(sql: string): string {
  const statements: string[] = [];
  let current: string[] = [];
  for (const line of sql.split('\n')) {
    // comments, blank lines and psql meta-commands (\restrict … of newer pg_dump)
    if (line.startsWith('--') || line.startsWith('\\') || line.trim() === '') continue;
    current.push(line);
    if (line.trimEnd().endsWith(';')) {
      statements.push(current.join('\n'));
      current = [];
    }
  }
  return statements
    .filter((s) => !/^SET\s/i.test(s) && !/^SELECT pg_catalog\.set_config/i.test(s))
    .filter((s) => s !== 'CREATE SCHEMA public;' && !/^COMMENT ON SCHEMA public IS/i.test(s))
    .filter((s) => !/notify_svc_|svc_table_change/.test(s))
    .map((s) => `${s}\n`)
    .join('');
}
