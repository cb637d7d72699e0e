/**
 * The `svc` CLI as a child process (`node --import tsx src/main.ts …` in a project directory),
 * and throw-away project directories. Every run is bounded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, ROOT, runToExit } from '../helpers/process.js';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed (for --output json) */
  json(): any;
}

export async function svc(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}, timeoutMs = 120_000): Promise<CliRun> {
  const r = await runToExit(args, cleanEnv(opts.env ?? {}), timeoutMs, opts.cwd ?? ROOT);
  return {
    ...r,
    json: () => {
      try {
        return JSON.parse(r.stdout);
      } catch {
        throw new Error(`svc ${args.join(' ')}: stdout is not JSON:\n${r.stdout}\nstderr:\n${r.stderr}`);
      }
    },
  };
}

/** Runs and asserts the exit code (the output is in the error otherwise). */
export async function svcOk(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}, expected = 0): Promise<CliRun> {
  const r = await svc(args, opts);
  if (r.code !== expected) throw new Error(`svc ${args.join(' ')} exited ${r.code}, expected ${expected}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  return r;
}

/** A temporary directory, removed by the returned function. */
export function tempDir(prefix = 'svc-cli-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export { ROOT };
