/**
 * How commands talk to Svc: `/v1/query` requests (`run_sql`, `bulk`, the metadata API) and
 * `/v1alpha1/pg_dump`. Over HTTP for the CLI (this file); in-process for `svc serve
 * --migrations-dir` (./startup.ts), through the same interface, so both apply migrations the same way.
 * Every request is bounded: 10 s to connect, 10 min to answer, 256 MiB of response.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { QueryFailure } from './errors.js';
import { badEndpoint, caUnreadable, notSvc, responseTooLarge, serverTimeout, unauthorized, unreachable } from './messages.js';

export interface QueryClient {
  /** POST /v1/query; resolves with the JSON answer, rejects with QueryFailure when the server answers an error */
  query(body: unknown): Promise<unknown>;
  /** POST /v1alpha1/pg_dump with `clean_output`; resolves with the SQL */
  pgDump(opts: string[]): Promise<string>;
  /** for messages: where the requests go */
  readonly target: string;
}

export interface HttpClientOptions {
  endpoint: string;
  adminSecret?: string;
  queryPath: string;
  pgDumpPath: string;
  insecureSkipTlsVerify?: boolean;
  certificateAuthority?: string;
  connectTimeoutMs?: number;
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** more request headers (the console's proxy passes on the browser's credentials: authorization, x-svc-*) */
  headers?: Record<string, string>;
}

const join = (base: URL, path: string) => new URL(path.replace(/^\/+/, ''), base.href.endsWith('/') ? base : new URL(`${base.href}/`));

export class HttpClient implements QueryClient {
  readonly target: string;
  private readonly base: URL;
  private readonly ca?: Buffer;

  constructor(private readonly opts: HttpClientOptions) {
    let u: URL;
    try {
      u = new URL(opts.endpoint);
    } catch {
      throw badEndpoint(opts.endpoint);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw badEndpoint(opts.endpoint);
    this.base = u;
    this.target = u.href.replace(/\/$/, '');
    if (opts.certificateAuthority) {
      try {
        this.ca = readFileSync(opts.certificateAuthority);
      } catch (e) {
        throw caUnreadable(opts.certificateAuthority, (e as Error).message);
      }
    }
  }

  async query(body: unknown): Promise<unknown> {
    const { status, text } = await this.post(this.opts.queryPath, body);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw notSvc(this.target, status, text);
    }
    if (status === 200) return json;
    const e = json as { code?: unknown; error?: unknown; path?: unknown; internal?: unknown };
    if (!e || typeof e !== 'object' || typeof e.code !== 'string') throw notSvc(this.target, status, text);
    if (status === 401 || (e.code === 'access-denied' && /admin.?secret|access.?key|admin only/i.test(String(e.error))))
      throw unauthorized(this.target, String(e.error), !!this.opts.adminSecret);
    throw new QueryFailure(status, e.code, String(e.error ?? ''), typeof e.path === 'string' ? e.path : '$', e.internal);
  }

  async pgDump(opts: string[]): Promise<string> {
    const { status, text } = await this.post(this.opts.pgDumpPath, { opts, clean_output: true });
    if (status === 200) return text;
    let e: { code?: unknown; error?: unknown; path?: unknown; internal?: unknown } | undefined;
    try {
      e = JSON.parse(text);
    } catch {
      throw notSvc(this.target, status, text);
    }
    if (!e || typeof e.code !== 'string') throw notSvc(this.target, status, text);
    if (status === 401) throw unauthorized(this.target, String(e.error), !!this.opts.adminSecret);
    throw new QueryFailure(status, e.code, String(e.error ?? ''), typeof e.path === 'string' ? e.path : '$', e.internal);
  }

  private post(path: string, body: unknown): Promise<{ status: number; text: string }> {
    const url = join(this.base, path);
    const payload = Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'content-length': String(payload.length),
      accept: 'application/json',
      connection: 'close',
    };
    if (this.opts.adminSecret) headers['x-svc-admin-secret'] = this.opts.adminSecret;
    for (const [k, v] of Object.entries(this.opts.headers ?? {})) if (!(k.toLowerCase() in headers)) headers[k.toLowerCase()] = v;
    const connectMs = this.opts.connectTimeoutMs ?? 10_000;
    const totalMs = this.opts.timeoutMs ?? 600_000;
    const maxBytes = this.opts.maxResponseBytes ?? 256 * 1024 * 1024;
    const https = url.protocol === 'https:';
    return new Promise((resolve, reject) => {
      let settled = false;
      const done = (f: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(connectTimer);
        clearTimeout(totalTimer);
        f();
      };
      const onResponse = (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > maxBytes) {
            req.destroy();
            done(() => reject(responseTooLarge(this.target, maxBytes)));
          } else chunks.push(c);
        });
        res.on('end', () => done(() => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') })));
        res.on('error', (e) => done(() => reject(unreachable(this.target, e))));
      };
      // a connection per request (`agent: false`): nothing keeps the CLI's process alive afterwards
      const options = {
        method: 'POST',
        headers,
        agent: false,
        ...(https ? { rejectUnauthorized: !this.opts.insecureSkipTlsVerify, ...(this.ca ? { ca: this.ca } : {}) } : {}),
      };
      const req = https ? httpsRequest(url, options, onResponse) : httpRequest(url, options, onResponse);
      const connectTimer = setTimeout(() => {
        req.destroy();
        done(() => reject(unreachable(this.target, Object.assign(new Error(`no connection within ${connectMs / 1000} s`), { code: 'ETIMEDOUT' }))));
      }, connectMs);
      const totalTimer = setTimeout(() => {
        req.destroy();
        done(() => reject(serverTimeout(this.target, totalMs)));
      }, totalMs);
      req.on('socket', (s) => {
        if (!s.connecting) clearTimeout(connectTimer);
        else s.once(https ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
      });
      req.on('error', (e) => done(() => reject(unreachable(this.target, e))));
      req.end(payload);
    });
  }
}
