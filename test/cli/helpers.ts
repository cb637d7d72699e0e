/**
 * The `svc` CLI as a child process (`node --import tsx src/main.ts …` in a project directory),
 * and throw-away project directories. Every run is bounded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, MAIN, ROOT, runToExit } from '../helpers/process.js';

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

/** `svc console` in `project` on any free port; resolves once it prints its address. */
export function startSvcConsole(project: string, extra: string[] = []): Promise<{ url: string; child: ChildProcess; close(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    ['--import', import.meta.resolve('tsx'), MAIN, 'console', '--console-port', '0', '--address', '127.0.0.1', '--no-browser', ...extra],
    {
      cwd: project,
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  const closed = new Promise<void>((res) => child.on('close', () => res()));
  return new Promise((res, rej) => {
    const t = setTimeout(() => {
      child.kill('SIGKILL');
      rej(new Error(`svc console did not start within 60 s:\n${out}`));
    }, 60_000);
    const onData = (c: Buffer) => {
      out += c.toString('utf8');
      const m = /(http:\/\/127\.0\.0\.1:\d+)\/console/.exec(out);
      if (m) {
        clearTimeout(t);
        res({
          url: m[1]!,
          child,
          close: async () => {
            if (child.exitCode === null) child.kill('SIGTERM');
            const k = setTimeout(() => child.kill('SIGKILL'), 5_000);
            await closed;
            clearTimeout(k);
          },
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('close', (code) => {
      clearTimeout(t);
      rej(new Error(`svc console exited (${code}):\n${out}`));
    });
  });
}

export { ROOT };
