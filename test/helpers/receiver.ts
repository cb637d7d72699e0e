/**
 * A real webhook receiver on 127.0.0.1 (random port) for delivery tests: keeps every request and
 * answers as `respond` decides (a status with headers and body, a sleep, or a closed socket).
 * `waitFor(n)` awaits the n-th request without sleeping.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  raw: string;
  at: number;
}

export type Reply = { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | 'close';

const OK: (r: Received) => Reply = () => ({ status: 200, body: '{"ok":true}' });

export class Receiver {
  readonly requests: Received[] = [];
  respond: (r: Received) => Reply = OK;
  private server!: Server;
  private waiters: Array<() => void> = [];
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {
          body = undefined;
        }
        const r: Received = { path: req.url ?? '/', headers: req.headers, body, raw, at: Date.now() };
        this.requests.push(r);
        this.waiters.splice(0).forEach((w) => w());
        const reply = this.respond(r);
        if (reply === 'close') {
          req.socket.destroy();
          return;
        }
        const send = () => {
          if (res.destroyed) return;
          res.writeHead(reply.status, { 'content-type': 'application/json', ...(reply.headers ?? {}) });
          res.end(reply.body ?? '{}');
        };
        if (reply.delayMs) setTimeout(send, reply.delayMs).unref();
        else send();
      });
    });
    this.server.keepAliveTimeout = 1000;
    await new Promise<void>((res) => this.server.listen(0, '127.0.0.1', res));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Resolves once `n` requests (in all) matching `pred` have arrived; rejects after `timeoutMs`. */
  async waitFor(n: number, pred: (r: Received) => boolean = () => true, timeoutMs = 15_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const got = this.requests.filter(pred);
      if (got.length >= n) return got;
      if (Date.now() > deadline) throw new Error(`receiver: ${got.length} of ${n} requests within ${timeoutMs} ms`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 250).unref();
      });
    }
  }

  /** Forgets the requests received so far and answers with `respond` (default: 200 `{"ok":true}`). */
  reset(respond: (r: Received) => Reply = OK): void {
    this.requests.length = 0;
    this.respond = respond;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((res) => this.server.close(() => res()));
  }
}
