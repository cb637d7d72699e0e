/**
 * POST /v1alpha1/pg_dump: runs the `pg_dump` binary against the engine's
 * database with the given options (admin only). `clean_output` strips the
 * front matter, comments, the public schema boilerplate and Svc's own
 * event-trigger objects. The embedded default has no pg_dump binary to run
 * against: it answers `not-supported`.
 */
import { spawn } from 'node:child_process';
import { SvcError } from '../errors.js';

const FORBIDDEN = /^(-f|--file|-d|--dbname|-h|--host|-p|--port|-U|--username|-W|--password|--role)(=|$)/;

export function parsePgDumpArgs(body: unknown): { opts: string[]; clean: boolean } {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new SvcError(400, 'parse-failed', 'expected an object', '$');
  const b = body as { opts?: unknown; clean_output?: unknown };
  if (!Array.isArray(b.opts) || b.opts.some((o) => typeof o !== 'string')) throw new SvcError(400, 'parse-failed', 'expected an array of strings', '$.opts');
  for (const o of b.opts as string[]) {
    if (FORBIDDEN.test(o)) throw new SvcError(400, 'invalid-params', `pg_dump option ${JSON.stringify(o)} is not allowed`, '$.opts');
  }
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
    .filter((s) => !/notify_svc_/.test(s))
    .map((s) => `${s}\n`)
    .join('');
}
