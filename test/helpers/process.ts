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

/**
 * Environment without any SVC_GRAPHQL_* variable of the test runner's own environment. Spawned
 * servers run as one process (`SVC_GRAPHQL_WORKERS=1`): the tests reason about that process (its
 * pid, its leases, a SIGKILL of it); test/e2e/workers.test.ts asks for workers with `--workers`.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVC_GRAPHQL_') && !k.startsWith('NODE_TEST')) env[k] = v;
  return { ...env, SVC_GRAPHQL_WORKERS: '1', ...extra };
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
        const port = j && j.type === 'startup' ? findPort(j) : undefined;
        if (port !== undefined) {
          clearTimeout(timer);
          onStartup?.({ ...j, port });
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

/** The listening port of a startup log line: `port` at the top or nested (e.g. detail.info.port). */
function findPort(v: unknown, depth = 0): number | undefined {
  if (!v || typeof v !== 'object' || depth > 4) return undefined;
  const o = v as Record<string, unknown>;
  if (typeof o.port === 'number') return o.port;
  for (const x of Object.values(o)) {
    const p = findPort(x, depth + 1);
    if (p !== undefined) return p;
  }
  return undefined;
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

/** Polls GET url/healthz until it answers 200 (bounded; fails at once when `proc` exits). */
export async function waitHealthy(url: string, timeoutMs = 30_000, proc?: SvcProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (proc && (proc.child.exitCode !== null || proc.child.signalCode !== null)) {
      throw new Error(`svc exited (code ${proc.child.exitCode}, signal ${proc.child.signalCode}) before ${url}/healthz answered:\n${proc.output()}`);
    }
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

/**
 * Starts `svc serve` on a free port of 127.0.0.1 and waits (bounded) until /healthz answers.
 * The startup log line is checked separately (`expectStartupLine`).
 */
export async function startSvcProcess(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<{ proc: SvcProcess; url: string; port: number }> {
  const port = await freePort();
  const proc = spawnSvc(['serve', ...args, '--server-port', String(port), '--server-host', '127.0.0.1'], env, timeoutMs);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitHealthy(url, timeoutMs, proc);
  } catch (e) {
    await proc.stop(2_000);
    throw e;
  }
  return { proc, url, port };
}

/** Once svc answers /healthz its JSON startup log line (with the port) must have been written. */
export async function expectStartupLine(proc: SvcProcess, port: number, graceMs = 2_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, rej) => {
    timer = setTimeout(
      () =>
        rej(
          new Error(
            `svc answers /healthz on port ${port} but wrote no JSON startup log line with the port within ${graceMs} ms (is stdout logging buffered?); output so far:\n${proc.output() || '(nothing)'}`,
          ),
        ),
      graceMs,
    );
  });
  try {
    const line = await Promise.race([proc.startup, timeout]);
    if (line.port !== port) throw new Error(`startup log line reports port ${line.port}, svc listens on ${port}`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs a process to completion (bounded) and returns its exit code and output. `cwd`: where it runs
 * (tsx is loaded by its absolute URL, so any directory works).
 */
export function runToExit(
  args: string[],
  env: NodeJS.ProcessEnv = cleanEnv(),
  timeoutMs = 30_000,
  cwd = ROOT,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), MAIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
