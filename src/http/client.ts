/**
 * Outbound HTTP, one transport for every caller (event, scheduled and action webhooks, remote
 * schemas, the auth webhook, the JWK set): undici's dispatcher (keep-alive connections per origin;
 * about half the CPU of a `node:http` agent per call and a quarter of `fetch`'s; README, "Outbound
 * HTTP"), a deadline that covers connection, headers and body (and every redirect followed), a
 * body size cap, no redirects unless asked, the outbound policy (src/http/outbound.ts) checked for
 * the host and each resolved address, and log-safe descriptions of failures and URLs.
 * `fetchLimited` and `postLimited` are the two ways callers call it, each call through an engine's
 * `OutboundClient` (its policy, connections and histogram).
 */

import { Agent, type Dispatcher } from 'undici';
import { checkOutboundHost, guardedLookup, outboundPolicy, type OutboundPolicy } from './outbound.js';
import { tracing, type Span } from '../core/tracing.js';
import type { FastHistogram } from '../core/histogram.js';
import { performance } from 'node:perf_hooks';

/** connections kept per origin (a webhook's, a remote schema's), as node:http's maxSockets was */
const CONNECTIONS_PER_ORIGIN = 256;

/**
 * One engine's outbound HTTP (src/engine.ts builds it from its configuration): its outbound policy
 * (src/http/outbound.ts), its keep-alive connections (two undici dispatchers: one whose connections
 * check the addresses a name resolves to, for deny-private, one that does not) and its
 * svc_outbound_request_duration_seconds. Every call says which client it goes through, so engines
 * of one process share none of it.
 */
export class OutboundClient {
  readonly policy: Readonly<OutboundPolicy>;
  private readonly plain = new Dispatchers(false);
  private readonly guarded = new Dispatchers(true);

  /** `policy`: none allows every host; `duration`: unset, calls are not observed (tests, tools) */
  constructor(
    policy: Partial<OutboundPolicy> = {},
    readonly duration?: FastHistogram,
  ) {
    this.policy = outboundPolicy(policy);
  }

  /** The dispatcher of a call to `origin`, one whose connections check the resolved addresses when `guarded`. */
  dispatcher(guarded: boolean, origin: string): Agent {
    return (guarded ? this.guarded : this.plain).for(origin);
  }

  /** Closes the keep-alive connections (the engine is closing); calls in flight fail. */
  close(): void {
    this.plain.destroy();
    this.guarded.destroy();
  }
}

/** origins a dispatcher keeps pools for before a fresh one replaces it */
const MAX_ORIGINS = 1000;

/**
 * An undici dispatcher keeping CONNECTIONS_PER_ORIGIN keep-alive connections per origin; `guarded`:
 * its connections resolve names through guardedLookup (deny-private). The call's own deadline bounds
 * headers and body (undici's timeouts off); connecting is bounded by it too, and by undici's connect
 * timeout for a connection nobody waits for any more. undici never forgets an origin's pool, so past
 * MAX_ORIGINS origins (redirects followed choose theirs: an auth webhook could name a new port each
 * time) a fresh dispatcher takes the calls and the old one closes once its calls are answered.
 */
class Dispatchers {
  private agent: Agent;
  private readonly origins = new Set<string>();

  constructor(private readonly guarded: boolean) {
    this.agent = this.create();
  }

  for(origin: string): Agent {
    if (!this.origins.has(origin)) {
      if (this.origins.size >= MAX_ORIGINS) {
        this.origins.clear();
        const old = this.agent;
        this.agent = this.create();
        void old.close().catch(() => undefined);
      }
      this.origins.add(origin);
    }
    return this.agent;
  }

  destroy(): void {
    void this.agent.destroy().catch(() => undefined);
  }

  private create(): Agent {
    return new Agent({
      connections: CONNECTIONS_PER_ORIGIN,
      pipelining: 1,
      headersTimeout: 0,
      bodyTimeout: 0,
      connect: this.guarded ? { timeout: 60_000, lookup: guardedLookup } : { timeout: 60_000 },
    });
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
  /** the engine's outbound client: its policy, connections and histogram */
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
    host = requestTarget(url).hostname;
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
  /** `http://host:port` (the dispatcher's key: connections are kept per origin) */
  origin: string;
  /** the host name or address (an IPv6 one without brackets) */
  hostname: string;
  /** path and query */
  path: string;
  /** `Basic …` from the URL's userinfo, as node:http sent it (unless the request has its own) */
  authorization?: string;
}
/** parsed webhook URLs (a handful per deployment; the parse costs a tenth of an exchange) */
const targets = new Map<string, RequestTarget>();

function requestTarget(url: string): RequestTarget {
  let t = targets.get(url);
  if (!t) {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TypeError(`unsupported protocol ${JSON.stringify(u.protocol)}`);
    const hostname = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
    const auth = u.username || u.password ? `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}` : undefined;
    t = { origin: `${u.protocol}//${u.host}`, hostname, path: `${u.pathname}${u.search}` };
    if (auth !== undefined) t.authorization = `Basic ${Buffer.from(auth).toString('base64')}`;
    if (targets.size >= 1000) targets.clear();
    targets.set(url, t);
  }
  return t;
}

const timeoutError = (message: string) => Object.assign(new Error(message), { name: 'TimeoutError' });

/**
 * Request headers as undici takes them: the connection's own (`connection`, `keep-alive`,
 * `transfer-encoding`, `upgrade`, `expect`; undici refuses them) and `content-length` (undici sets
 * it from the body) are left out, a configured header naming them being no business of the call;
 * the URL's userinfo becomes `authorization` unless the request has one. The caller's object is
 * passed as it is when nothing is to change (the usual case).
 */
function requestHeaders(h: Record<string, string>, authorization: string | undefined): Record<string, string> {
  let out: Record<string, string> | undefined;
  let hasAuth = false;
  for (const k in h) {
    const lower = k.toLowerCase();
    if (DROPPED_HEADERS.has(lower)) out ??= { ...h };
    else if (lower === 'authorization') hasAuth = true;
  }
  if (out) for (const k in out) if (DROPPED_HEADERS.has(k.toLowerCase())) delete out[k];
  if (authorization !== undefined && !hasAuth) return Object.assign({}, out ?? h, { authorization });
  return out ?? h;
}
const DROPPED_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'expect', 'content-length']);

/** undici's raw response headers (name, value, … as bytes) as a list, bytes read as latin1 as node:http did */
function rawHeaderList(raw: Buffer[]): Array<{ name: string; value: string }> {
  const out: Array<{ name: string; value: string }> = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push({ name: raw[i]!.toString('latin1'), value: raw[i + 1]!.toString('latin1') });
  return out;
}

/** The response's `content-length` (NaN when absent). */
function declaredLength(list: ReadonlyArray<{ name: string; value: string }>): number {
  for (const h of list) if (h.name.length === 14 && h.name.toLowerCase() === 'content-length') return Number(h.value);
  return NaN;
}

const abortError = () => Object.assign(new Error('aborted'), { name: 'AbortError' });

/**
 * One request and its response on the client's undici dispatcher. Settled once: by the response,
 * an error, the deadline or the signal; the last two (and a refused body) end the request in undici
 * too, whose connection is then closed (as node:http's `req.destroy()` did).
 */
function exchange(url: string, r: OutboundRequest, opts: OutboundOptions, timeoutMs: number): Promise<LimitedResponse> {
  return new Promise((resolve, reject) => {
    let u: RequestTarget;
    let guarded: boolean;
    try {
      if (opts.signal?.aborted) throw abortError();
      u = requestTarget(url);
      // the outbound policy (src/http/outbound.ts): the host now, its resolved addresses at connect
      guarded = checkOutboundHost(opts.client.policy, u.hostname);
    } catch (e) {
      reject(e);
      return;
    }
    let settled = false;
    /** undici's abort of this request, once it is on a connection */
    let abortRequest: ((e?: Error) => void) | undefined;
    const settle = (e: unknown, res?: LimitedResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (res) resolve(res);
      else reject(e);
    };
    /** settles with `e` and ends the request (now, or when it reaches a connection) */
    const stop = (e: Error) => {
      settle(e);
      abortRequest?.(e);
    };
    const onAbort = () => stop(abortError());
    const timedOut = (what: string) => () => stop(timeoutError(what));
    let timer = setTimeout(timedOut(opts.timeoutFromConnect ? 'timed out connecting' : 'timed out'), timeoutMs);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    let status = 0;
    let headers: Array<{ name: string; value: string }> = [];
    const chunks: Buffer[] = [];
    let size = 0;
    const handler: Dispatcher.DispatchHandlers = {
      // the request is about to be written on a connected socket
      onConnect(abort) {
        if (settled) {
          abort(); // timed out or aborted while waiting for a connection: never sent
          return;
        }
        abortRequest = abort;
        opts.onSent?.();
        if (opts.timeoutFromConnect) {
          clearTimeout(timer);
          timer = setTimeout(timedOut('timed out'), timeoutMs);
        }
      },
      onHeaders(statusCode, rawHeaders) {
        if (settled) return false;
        status = statusCode;
        headers = rawHeaderList(rawHeaders as unknown as Buffer[]);
        const wanted = opts.readBody ? opts.readBody(status) : true;
        if (!wanted) {
          // an unread body is discarded with its connection
          settle(undefined, new TransportResponse(status, Buffer.alloc(0), headers));
          abortRequest?.();
          return false;
        }
        const declared = declaredLength(headers);
        if (Number.isFinite(declared) && declared > opts.maxBytes) {
          stop(new BodyTooLargeError(opts.maxBytes));
          return false;
        }
        return true;
      },
      onData(chunk) {
        if (settled) return false;
        size += chunk.length;
        if (size > opts.maxBytes) {
          stop(new BodyTooLargeError(opts.maxBytes));
          return false;
        }
        chunks.push(chunk);
        return true;
      },
      onComplete() {
        settle(undefined, new TransportResponse(status, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), headers));
      },
      onError(e) {
        settle(e);
      },
    };
    try {
      opts.client
        .dispatcher(guarded, u.origin)
        .dispatch({ origin: u.origin, path: u.path, method: r.method, headers: requestHeaders(r.headers, u.authorization), body: r.body ?? null }, handler);
    } catch (e) {
      settle(e);
    }
  });
}
