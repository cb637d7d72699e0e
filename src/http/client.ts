/**
 * Outbound HTTP, one transport for every caller (event, scheduled and action webhooks, remote
 * schemas, the auth webhook, the JWK set): `node:http`/`node:https` with keep-alive agents (about
 * half the CPU of `fetch` per request; README, "Outbound HTTP"), a deadline that covers connection,
 * headers and body (and every redirect followed), a body size cap, no redirects unless asked, the
 * outbound policy (src/http/outbound.ts) checked for the host and each resolved address, and
 * log-safe descriptions of failures and URLs. `fetchLimited` and `postLimited` are the two ways
 * callers call it, each call through an engine's `OutboundClient` (its policy, agents and histogram).
 */

import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { checkOutboundHost, guardedLookup, outboundPolicy, type OutboundPolicy } from './outbound.js';
import { tracing, type Span } from '../core/tracing.js';
import { withEntry } from '../core/objects.js';
import type { FastHistogram } from '../core/histogram.js';

/**
 * One engine's outbound HTTP (src/engine.ts builds it from its configuration): its outbound policy
 * (src/http/outbound.ts), its keep-alive agents and its svc_outbound_request_duration_seconds. Every
 * call says which client it goes through, so engines of one process share none of it.
 */
export class OutboundClient {
  readonly policy: Readonly<OutboundPolicy>;
  readonly agents = { http: new HttpAgent({ keepAlive: true, maxSockets: 256 }), https: new HttpsAgent({ keepAlive: true, maxSockets: 256 }) };

  /** `policy`: none allows every host; `duration`: unset, calls are not observed (tests, tools) */
  constructor(
    policy: Partial<OutboundPolicy> = {},
    readonly duration?: FastHistogram,
  ) {
    this.policy = outboundPolicy(policy);
  }

  /** Closes the idle keep-alive connections (the engine is closing). */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

/**
 * An outbound call as a span (tracing on; a client span named after its target, child of
 * `parent` (else a root), whose traceparent/tracestate the request carries) and as an observation
 * of svc_outbound_request_duration_seconds by target kind, host and outcome.
 */
/** what an outbound call is observed by: its target kind (`action`, `event`, …), method, host and URL */
interface CallTarget {
  target: string;
  method: string;
  host: string;
  url: string;
}

function startCall(
  { target, method, host, url }: CallTarget,
  headers: Record<string, string>,
  parent: Span | undefined,
): { span: Span | undefined; t0: number } {
  const t = tracing;
  let span: Span | undefined;
  if (t) {
    span = t.start(
      `${target} ${method}`,
      { 'http.request.method': method, 'server.address': host, 'url.full': redactUrl(url), 'svc.outbound.target': target },
      { kind: 'client', parent },
    );
    t.inject(span, headers);
  }
  return { span, t0: performance.now() };
}

function endCall(
  client: OutboundClient,
  call: { span: Span | undefined; t0: number },
  { target, host }: CallTarget,
  status: number | undefined,
  e?: unknown,
): void {
  const outcome = status === undefined ? 'error' : `${Math.floor(status / 100)}xx`;
  client.duration?.observe((performance.now() - call.t0) / 1000, target, host, outcome);
  const span = call.span;
  if (!span) return;
  if (status !== undefined) span.setAttribute('http.response.status_code', status);
  if (e !== undefined) tracing?.fail(span, 'client_error', describeFetchError(e));
  else if (status !== undefined && status >= 500) tracing?.fail(span, `http_${status}`, `answered ${status}`);
  span.end();
}

/** The call traced and measured (startCall/endCall), `headers` carrying the trace context. */
function traced(
  client: OutboundClient,
  c: CallTarget,
  headers: Record<string, string>,
  parent: Span | undefined,
  run: (headers: Record<string, string>) => Promise<LimitedResponse>,
): Promise<LimitedResponse> {
  const sent = tracing ? { ...headers } : headers;
  const call = startCall(c, sent, parent);
  let p: Promise<LimitedResponse>;
  try {
    p = run(sent);
  } catch (e) {
    endCall(client, call, c, undefined, e);
    return Promise.reject(e);
  }
  return p.then(
    (res) => {
      endCall(client, call, c, res.status);
      return res;
    },
    (e: unknown) => {
      endCall(client, call, c, undefined, e);
      throw e;
    },
  );
}

export interface LimitedResponse {
  status: number;
  headers: Headers;
  body: Buffer;
  /** the headers as received (names in their case, in order) */
  rawHeaders: Array<{ name: string; value: string }>;
}

export class BodyTooLargeError extends Error {
  constructor(limit: number) {
    super(`response body larger than ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

export const USER_AGENT = 'svc-graphql-engine';

export interface OutboundRequest {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** 'follow': redirects are followed (GET), each target checked against the outbound policy */
  redirect?: 'manual' | 'follow';
}

export interface OutboundOptions {
  /** the engine's outbound client: its policy, agents and histogram */
  client: OutboundClient;
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal;
  /** whether the body of a response of this status is read at all (an unread one is discarded) */
  readBody?: (status: number) => boolean;
  /**
   * the deadline counts from when the request is sent on a connected socket; waiting for a socket
   * of the agent and connecting are bounded separately (by the same time)
   */
  timeoutFromConnect?: boolean;
  /** called when the request is sent on a connected socket */
  onSent?: () => void;
}

/** fetch's limit */
const MAX_REDIRECTS = 20;

/** One request (and the redirects it is told to follow), the one outbound transport. */
export function outboundRequest(url: string, req: OutboundRequest, opts: OutboundOptions): Promise<LimitedResponse> {
  // no redirects to follow: the exchange is the answer (no promise around it)
  if (req.redirect !== 'follow') return exchange(url, req, opts, opts.timeoutMs);
  return followRedirects(url, req, opts);
}

async function followRedirects(url: string, req: OutboundRequest, opts: OutboundOptions): Promise<LimitedResponse> {
  const deadline = Date.now() + opts.timeoutMs;
  // a redirect's own body is never read
  const read = opts.readBody;
  if (req.redirect === 'follow') opts = { ...opts, readBody: (s) => (s >= 300 && s < 400 ? false : (read?.(s) ?? true)) };
  let res = await exchange(url, req, opts, opts.timeoutMs);
  for (let hops = 0; req.redirect === 'follow' && res.status >= 300 && res.status < 400 && res.headers.get('location'); hops++) {
    if (hops >= MAX_REDIRECTS) throw new Error('too many redirects');
    url = new URL(res.headers.get('location')!, url).href;
    const left = deadline - Date.now();
    if (left <= 0) throw timeoutError('timed out');
    res = await exchange(url, { method: 'GET', headers: req.headers }, opts, left);
  }
  return res;
}

/**
 * `fetch`-shaped: a deadline (connection, headers and body), a body size cap; `readBody(status)`
 * decides whether the body is read at all.
 */
export function fetchLimited(
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string; redirect: 'manual' | 'follow' },
  opts: {
    client: OutboundClient;
    timeoutMs: number;
    maxBytes: number;
    signal?: AbortSignal;
    readBody?: (status: number) => boolean;
    target?: string;
    /** tracing on: the span the call's span is a child of (none: a root) */
    parent?: Span;
  },
): Promise<LimitedResponse> {
  let host = '';
  try {
    host = new URL(url).host;
  } catch {
    /* the transport reports the bad URL */
  }
  return traced(opts.client, { target: opts.target ?? 'http', method: init.method, host, url }, init.headers, opts.parent, (headers) =>
    outboundRequest(url, { ...init, headers }, opts),
  );
}

/** A POST, no redirects followed (webhook deliveries, actions, remote schemas). */
export function postLimited(
  url: string,
  headers: Record<string, string>,
  body: string,
  opts: {
    client: OutboundClient;
    timeoutMs: number;
    maxBytes: number;
    timeoutFromConnect?: boolean;
    onSent?: () => void;
    target?: string;
    /** tracing on: the span the call's span is a child of (none: a root) */
    parent?: Span;
  },
): Promise<LimitedResponse> {
  let host = '';
  try {
    host = requestTarget(url).options.hostname;
  } catch {
    /* the transport reports it */
  }
  return traced(opts.client, { target: opts.target ?? 'http', method: 'POST', host, url }, headers, opts.parent, (sent) =>
    outboundRequest(url, { method: 'POST', headers: sent, body, redirect: 'manual' }, opts),
  );
}

/** Short description of a fetch failure for logs (never includes headers or bodies). */
export function describeFetchError(e: unknown): string {
  if (e instanceof Error) {
    if (e.name === 'TimeoutError') return 'timed out';
    if (e.name === 'AbortError') return 'aborted';
    const cause = (e as { cause?: unknown }).cause;
    if (cause instanceof Error) return `${e.message}: ${(cause as { code?: string }).code ?? cause.message}`;
    return e.message;
  }
  return String(e);
}

/** The URL without credentials or query string, for logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '<invalid url>';
  }
}

/** aeson-style JSON type name of a value, used in Hasura-compatible error messages. */
export { jsonKind as jsonTypeName } from '../json.js';

/** aeson-style path element: `.key` for identifiers, `['key']` otherwise. */
export function jsonPathKey(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `['${key.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`;
}

/**
 * The transport's answer. A fetch Headers object costs more than the rest of the exchange, so it is
 * built when read (a getter of the class: an object literal with a getter per response made V8
 * move every response to the old generation, a mark-compact per ~3,000 calls).
 */
class TransportResponse implements LimitedResponse {
  #headers: Headers | undefined;
  constructor(
    readonly status: number,
    readonly body: Buffer,
    readonly rawHeaders: Array<{ name: string; value: string }>,
  ) {}

  get headers(): Headers {
    if (!this.#headers) {
      const h = new Headers();
      for (const x of this.rawHeaders) h.append(x.name, x.value);
      this.#headers = h;
    }
    return this.#headers;
  }
}

interface RequestTarget {
  https: boolean;
  options: { protocol: string; hostname: string; port?: string; path: string; auth?: string };
}
/** parsed webhook URLs (a handful per deployment; the parse costs a tenth of an exchange) */
const targets = new Map<string, RequestTarget>();

function requestTarget(url: string): RequestTarget {
  let t = targets.get(url);
  if (!t) {
    const u = new URL(url);
    const hostname = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
    const auth = u.username || u.password ? `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}` : undefined;
    t = {
      https: u.protocol === 'https:',
      options: { protocol: u.protocol, hostname, ...(u.port ? { port: u.port } : {}), path: `${u.pathname}${u.search}`, ...(auth ? { auth } : {}) },
    };
    if (targets.size >= 1000) targets.clear();
    targets.set(url, t);
  }
  return t;
}

const timeoutError = (message: string) => Object.assign(new Error(message), { name: 'TimeoutError' });

const rawHeaderList = (res: IncomingMessage) => {
  const raw = res.rawHeaders;
  const out: Array<{ name: string; value: string }> = [];
  for (let i = 0; i < raw.length; i += 2) out.push({ name: raw[i]!, value: raw[i + 1]! });
  return out;
};

/**
 * The response's `content-length` (NaN when absent), read from the raw header list: `res.headers`
 * would build the whole parsed headers object (the raw list is what the response keeps anyway).
 */
function declaredLength(raw: readonly string[]): number {
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 14 && name.toLowerCase() === 'content-length') return Number(raw[i + 1]);
  }
  return NaN;
}

/** One request and its response on `node:http(s)`. */
function exchange(url: string, r: OutboundRequest, opts: OutboundOptions, timeoutMs: number): Promise<LimitedResponse> {
  return new Promise((resolve, reject) => {
    let u: RequestTarget;
    let resolveChecked: boolean;
    try {
      if (opts.signal?.aborted) throw Object.assign(new Error('aborted'), { name: 'AbortError' });
      u = requestTarget(url);
      // the outbound policy (src/http/outbound.ts): the host now, its resolved addresses at connect
      resolveChecked = checkOutboundHost(opts.client.policy, u.options.hostname);
    } catch (e) {
      reject(e);
      return;
    }
    const payload = r.body;
    const onAbort = () => {
      clearTimeout(timer);
      reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
      req.destroy();
    };
    const settled = () => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
    };
    // a literal of the few properties node:http reads (its agent copies the options per request):
    // spreading the target's options and adding properties after the spread took V8's slow path
    // (a map transition per property, ~15 µs of CPU per call measured)
    const o = u.options;
    const options: RequestOptions = {
      hostname: o.hostname,
      path: o.path,
      method: r.method,
      agent: u.https ? opts.client.agents.https : opts.client.agents.http,
      headers: payload !== undefined ? withEntry(r.headers, 'content-length', String(Buffer.byteLength(payload))) : r.headers,
    };
    if (o.port !== undefined) options.port = o.port;
    if (o.auth !== undefined) options.auth = o.auth;
    if (resolveChecked) options.lookup = guardedLookup as never;
    const req = (u.https ? httpsRequest : httpRequest)(options, (res) => {
      const status = res.statusCode ?? 0;
      const declared = declaredLength(res.rawHeaders);
      const wanted = opts.readBody ? opts.readBody(status) : true;
      if (!wanted || (Number.isFinite(declared) && declared > opts.maxBytes)) {
        // an unread body is discarded with its connection; the exchange torn down without an error event
        settled();
        if (wanted) reject(new BodyTooLargeError(opts.maxBytes));
        else resolve(new TransportResponse(status, Buffer.alloc(0), rawHeaderList(res)));
        res.on('error', () => undefined);
        req.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > opts.maxBytes) {
          // rejected here, the exchange torn down without an error event (destroying with an
          // error re-emitted it where no listener was left: an uncaught exception)
          settled();
          reject(new BodyTooLargeError(opts.maxBytes));
          res.removeAllListeners('data');
          req.destroy();
          return;
        }
        chunks.push(c);
      });
      res.on('end', () => {
        settled();
        resolve(new TransportResponse(status, Buffer.concat(chunks), rawHeaderList(res)));
      });
      res.on('error', (e) => {
        settled();
        reject(e);
      });
    });
    const timedOut = (what: string) => () => {
      settled();
      reject(timeoutError(what));
      req.destroy();
    };
    let timer = setTimeout(timedOut(opts.timeoutFromConnect ? 'timed out connecting' : 'timed out'), timeoutMs);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.timeoutFromConnect || opts.onSent) {
      req.once('socket', (sock) => {
        const sent = () => {
          opts.onSent?.();
          if (!opts.timeoutFromConnect) return;
          clearTimeout(timer);
          timer = setTimeout(timedOut('timed out'), timeoutMs);
        };
        if (sock.connecting) sock.once('connect', sent);
        else sent();
      });
    }
    req.on('error', (e) => {
      settled();
      reject(e);
    });
    req.end(payload);
  });
}
