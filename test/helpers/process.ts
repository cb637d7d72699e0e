/**
 * `svc` as a child process (`node --import tsx src/main.ts …`): start, read the JSON startup log
 * line, wait for /healthz, stop with a signal. Every wait is bounded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

export interface SvcProcess {
  child: ChildProcess;
  /** stdout and stderr so far */
  output(): string;
  /** resolves with the first JSON log line with type "startup" and a port (rejects on exit/timeout) */
  startup: Promise<{ port: number; [k: string]: unknown }>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Environment without any SVC_GRAPHQL_* variable of the test runner's own environment. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVC_GRAPHQL_') && !k.startsWith('NODE_TEST')) env[k] = v;
  return { ...env, ...extra };
}

export function spawnSvc(args: string[], env: NodeJS.ProcessEnv = cleanEnv(), startupTimeoutMs = 60_000): SvcProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let pending = '';
  let onStartup: ((v: { port: number }) => void) | undefined;
  let onFail: ((e: Error) => void) | undefined;
  const startup = new Promise<{ port: number }>((res, rej) => {
    onStartup = res;
    onFail = rej;
  });
  startup.catch(() => undefined); // callers that never await it must not crash the test
  const timer = setTimeout(() => onFail?.(new Error(`svc did not log its startup line within ${startupTimeoutMs} ms:\n${out}`)), startupTimeoutMs);
  timer.unref();
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    out += chunk;
    pending += chunk;
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      try {
        const j = JSON.parse(line);
        if (j && j.type === 'startup' && typeof j.port === 'number') {
          clearTimeout(timer);
          onStartup?.(j);
        }
      } catch {
        /* not a JSON line */
      }
    }
  });
  child.stderr!.on('data', (chunk: string) => {
    out += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
    // 'close' (not 'exit'): fires after stdout is drained, so a startup line is never missed
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      onFail?.(new Error(`svc exited (code ${code}, signal ${signal}) before its startup line:\n${out}`));
      res({ code, signal });
    });
  });
  return {
    child,
    output: () => out,
    startup,
    exited,
    stop: async (graceMs = 15_000) => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
        const r = await exited;
        clearTimeout(t);
        return r;
      }
      return exited;
    },
  };
}

/** A TCP port that was free a moment ago (svc's --server-port does not accept 0). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((res, rej) => {
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => res());
  });
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((res) => s.close(() => res()));
  return port;
}

/** Polls GET url/healthz until it answers 200 (bounded). */
export async function waitHealthy(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const r = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) });
      if (r.status === 200) return;
      last = `status ${r.status}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url}/healthz not healthy within ${timeoutMs} ms (${last})`);
}

/** Runs a process to completion (bounded) and returns its exit code and output. */
export function runToExit(args: string[], env: NodeJS.ProcessEnv = cleanEnv(), timeoutMs = 30_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const t = setTimeout(() => {
      child.kill('SIGKILL');
      rej(new Error(`svc ${args.join(' ')} did not exit within ${timeoutMs} ms:\n${stdout}${stderr}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(t);
      res({ code, stdout, stderr });
    });
  });
}
