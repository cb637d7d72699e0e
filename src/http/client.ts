/**
 * Outbound HTTP, one module for every caller (the auth webhook and the JWK set today; event,
 * scheduled and action webhooks and remote schemas next): a deadline that covers the body, a body
 * size cap, no redirects unless asked, a fixed User-Agent, and log-safe descriptions of failures
 * and URLs. Connections are reused by the global fetch's keep-alive agent.
 */

import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { checkOutboundHost, checkOutboundUrl, guardedLookup, outboundPolicy } from './outbound.js';
import { tracing, type Span } from '../core/tracing.js';
import { outboundDuration } from '../core/histogram.js';

/**
 * An outbound call as a span (tracing on; a client span named after its target, child of the
 * active span, whose traceparent/tracestate the request carries) and as an observation of
 * svc_outbound_request_duration_seconds by target kind, host and outcome.
 */
function startCall(target: string, method: string, host: string, url: string, headers: Record<string, string>): { span: Span | undefined; t0: number } {
  const t = tracing;
  let span: Span | undefined;
  if (t) {
    span = t.start(`${target} ${method}`, { 'http.request.method': method, 'server.address': host, 'url.full': redactUrl(url), 'svc.outbound.target': target }, { kind: 'client' });
    t.run(span, () => t.inject(headers));
  }
  return { span, t0: performance.now() };
}

function endCall(call: { span: Span | undefined; t0: number }, target: string, host: string, status: number | undefined, e?: unknown): void {
  const outcome = status === undefined ? 'error' : `${Math.floor(status / 100)}xx`;
  outboundDuration.observe((performance.now() - call.t0) / 1000, target, host, outcome);
  const span = call.span;
  if (!span) return;
  if (status !== undefined) span.setAttribute('http.response.status_code', status);
  if (e !== undefined) tracing?.fail(span, 'client_error', describeFetchError(e));
  else if (status !== undefined && status >= 500) tracing?.fail(span, `http_${status}`, `answered ${status}`);
  span.end();
}

const policyActive = () => outboundPolicy().denyPrivate || outboundPolicy().allowHosts.length > 0;

export interface LimitedResponse {
  status: number;
  headers: Headers;
  body: Buffer;
  /** the headers as received (names in their case, in order; postLimited only) */
  rawHeaders?: Array<{ name: string; value: string }>;
}

export class BodyTooLargeError extends Error {
  constructor(limit: number) {
    super(`response body larger than ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

export const USER_AGENT = 'svc-graphql-engine';

/**
 * `fetch` with a deadline (connection, headers and body) and a body size cap.
 * `readBody(status)` decides whether the body is read at all; an unread body is cancelled.
 */
export async function fetchLimited(
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string; redirect: RequestRedirect },
  opts: { timeoutMs: number; maxBytes: number; signal?: AbortSignal; readBody?: (status: number) => boolean; target?: string },
): Promise<LimitedResponse> {
  const target = opts.target ?? 'http';
  let host = '';
  try {
    host = new URL(url).host;
  } catch {
    /* fetch reports the bad URL */
  }
  const headers = tracing ? { ...init.headers } : init.headers;
  const call = startCall(target, init.method, host, url, headers);
  try {
    const res = await fetchLimitedNow(url, { ...init, headers }, opts);
    endCall(call, target, host, res.status);
    return res;
  } catch (e) {
    endCall(call, target, host, undefined, e);
    throw e;
  }
}

async function fetchLimitedNow(
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string; redirect: RequestRedirect },
  opts: { timeoutMs: number; maxBytes: number; signal?: AbortSignal; readBody?: (status: number) => boolean },
): Promise<LimitedResponse> {
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
  // the outbound policy (src/http/outbound.ts): fetch has no lookup hook, so the host is resolved and checked first
  await checkOutboundUrl(url);
  let res = await fetch(url, { ...init, ...(init.redirect === 'follow' && policyActive() ? { redirect: 'manual' as const } : {}), signal });
  // with a policy, redirects are followed here, each target checked like the first
  for (let hops = 0; init.redirect === 'follow' && policyActive() && res.status >= 300 && res.status < 400 && res.headers.get('location'); hops++) {
    await res.body?.cancel().catch(() => undefined);
    if (hops >= 5) throw new Error('too many redirects');
    url = new URL(res.headers.get('location')!, url).href;
    await checkOutboundUrl(url);
    res = await fetch(url, { ...init, redirect: 'manual', signal });
  }
  const wanted = opts.readBody ? opts.readBody(res.status) : true;
  if (!wanted || !res.body) {
    await res.body?.cancel().catch(() => undefined);
    return { status: res.status, headers: res.headers, body: Buffer.alloc(0) };
  }
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > opts.maxBytes) {
    await res.body.cancel().catch(() => undefined);
    throw new BodyTooLargeError(opts.maxBytes);
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > opts.maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new BodyTooLargeError(opts.maxBytes);
    }
    chunks.push(value);
  }
  return { status: res.status, headers: res.headers, body: Buffer.concat(chunks) };
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
 * postLimited's answer. A fetch Headers object costs more than the rest of the exchange, so it is
 * built when read (a getter of the class: an object literal with a getter per response made V8
 * move every response to the old generation, a mark-compact per ~3,000 calls).
 */
class PostResponse implements LimitedResponse {
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
    t = { https: u.protocol === 'https:', options: { protocol: u.protocol, hostname, ...(u.port ? { port: u.port } : {}), path: `${u.pathname}${u.search}`, ...(auth ? { auth } : {}) } };
    if (targets.size >= 1000) targets.clear();
    targets.set(url, t);
  }
  return t;
}

const keepAlive = { http: new HttpAgent({ keepAlive: true, maxSockets: 256 }), https: new HttpsAgent({ keepAlive: true, maxSockets: 256 }) };

/**
 * POST on `node:http(s)` with keep-alive agents: the webhook deliveries' client (it costs about
 * half the CPU of `fetch` per request; see README, "Outbound HTTP"). Same contract as
 * fetchLimited: a deadline over connection, headers and body (or, with `timeoutFromConnect`, from
 * when the request is sent), a body cap, no redirects followed.
 */
export function postLimited(
  url: string,
  headers: Record<string, string>,
  body: string,
  opts: { timeoutMs: number; maxBytes: number; timeoutFromConnect?: boolean; onSent?: () => void; target?: string },
): Promise<LimitedResponse> {
  const target = opts.target ?? 'http';
  const sent: Record<string, string> = tracing ? { ...headers } : headers;
  let host = '';
  try {
    host = requestTarget(url).options.hostname;
  } catch {
    /* reported below */
  }
  const call = startCall(target, 'POST', host, url, sent);
  return postLimitedNow(url, sent, body, opts).then(
    (res) => {
      endCall(call, target, host, res.status);
      return res;
    },
    (e: unknown) => {
      endCall(call, target, host, undefined, e);
      throw e;
    },
  );
}

function postLimitedNow(
  url: string,
  headers: Record<string, string>,
  body: string,
  opts: { timeoutMs: number; maxBytes: number; timeoutFromConnect?: boolean; onSent?: () => void },
): Promise<LimitedResponse> {
  return new Promise((resolve, reject) => {
    let u: RequestTarget;
    let resolveChecked: boolean;
    try {
      u = requestTarget(url);
      // the outbound policy (src/http/outbound.ts): the host now, its resolved addresses at connect
      resolveChecked = checkOutboundHost(u.options.hostname);
    } catch (e) {
      reject(e);
      return;
    }
    const payload = Buffer.from(body);
    const req = (u.https ? httpsRequest : httpRequest)(
      {
        ...u.options,
        method: 'POST',
        agent: u.https ? keepAlive.https : keepAlive.http,
        headers: { ...headers, 'content-length': String(payload.length) },
        ...(resolveChecked ? { lookup: guardedLookup as never } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > opts.maxBytes) {
            // rejected here, the exchange torn down without an error event (destroying with an
            // error re-emitted it where no listener was left: an uncaught exception)
            clearTimeout(timer);
            reject(new BodyTooLargeError(opts.maxBytes));
            res.removeAllListeners('data');
            req.destroy();
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => {
          clearTimeout(timer);
          const raw = res.rawHeaders;
          const rawHeaders: Array<{ name: string; value: string }> = [];
          for (let i = 0; i < raw.length; i += 2) rawHeaders.push({ name: raw[i]!, value: raw[i + 1]! });
          resolve(new PostResponse(res.statusCode ?? 0, Buffer.concat(chunks), rawHeaders));
        });
        res.on('error', (e) => {
          clearTimeout(timer);
          reject(e);
        });
      },
    );
    const timedOut = (what: string) => () => {
      reject(Object.assign(new Error(what), { name: 'TimeoutError' }));
      req.destroy();
    };
    // `timeoutFromConnect`: the deadline counts from when the request is sent on a connected socket;
    // waiting for a socket of the agent and connecting are bounded separately (by the same time)
    let timer = setTimeout(timedOut(opts.timeoutFromConnect ? 'timed out connecting' : 'timed out'), opts.timeoutMs);
    if (opts.timeoutFromConnect || opts.onSent) {
      req.once('socket', (sock) => {
        const sent = () => {
          opts.onSent?.();
          if (!opts.timeoutFromConnect) return;
          clearTimeout(timer);
          timer = setTimeout(timedOut('timed out'), opts.timeoutMs);
        };
        if (sock.connecting) sock.once('connect', sent);
        else sent();
      });
    }
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end(payload);
  });
}
