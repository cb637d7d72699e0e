/** Test helpers: real HTTP servers on 127.0.0.1 (ephemeral ports) and error assertions. */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { SvcError } from '../../src/errors.js';

export interface Recorded {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export type Handler = (req: Recorded, res: ServerResponse) => void;

export interface TestServer {
  url: string;
  requests: Recorded[];
  handler: Handler;
  /** resolves when the next request has arrived (its body read) */
  nextRequest(): Promise<Recorded>;
  close(): Promise<void>;
}

export async function startServer(handler: Handler, opts: { https?: boolean } = {}): Promise<TestServer> {
  const waiters: ((r: Recorded) => void)[] = [];
  const state: TestServer = {
    url: '',
    requests: [],
    handler,
    nextRequest: () => new Promise((resolve) => waiters.push(resolve)),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec: Recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      state.requests.push(rec);
      for (const w of waiters.splice(0)) w(rec);
      state.handler(rec, res);
    });
  };
  const server: Server = opts.https
    ? createHttpsServer({ key: readFileSync(fixture('key.pem')), cert: readFileSync(fixture('cert.pem')) }, listener)
    : createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  state.url = `${opts.https ? 'https' : 'http'}://127.0.0.1:${port}/`;
  return state;
}

export function fixture(name: string): string {
  return new URL(`./fixtures/${name}`, import.meta.url).pathname;
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** A port that nothing listens on (bound, then released). */
export async function closedPortUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return `http://127.0.0.1:${port}/`;
}

/** Asserts that the promise rejects with a SvcError of exactly this status/code/message. */
export async function rejectsWith(p: Promise<unknown>, status: number, code: string, message: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof SvcError, `expected SvcError, got ${String(e)}`);
    assert.deepEqual({ status: e.status, code: e.code, message: e.message, path: e.path }, { status, code, message, path: '$' });
    return true;
  });
}

/** A controllable clock. */
export function fakeClock(start = Date.UTC(2030, 0, 1)): { now: () => number; advance(ms: number): void; set(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms), set: (ms) => (t = ms) };
}

/** Collects log lines. */
export function memLog(): { lines: object[]; warn(o: object): void; info(o: object): void } {
  const lines: object[] = [];
  return { lines, warn: (o) => lines.push(o), info: (o) => lines.push(o) };
}
