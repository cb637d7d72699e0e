/**
 * Auth webhook (SPEC §5.2–5.8, reference authentication/webhook.rst).
 *
 * GET mode forwards the client headers minus the ignored list; POST mode sends
 * `{"headers": {...}}`. A 200 answer is a JSON object of string values whose
 * `x-svc-*` members are the session variables; `Cache-Control: max-age=N` or
 * `Expires` (in the JSON body, else in the response headers) bound the
 * session. Answers with an expiry are cached per distinct forwarded request
 * until that expiry, never past it; answers without one are never cached.
 */
import { sha256Bytes } from '../../core/hash.js';
import { err400, err401, err500 } from '../../errors.js';
import { parseExpires, parseMaxAge } from './expiry.js';
import { isSafeHeaderValue, isSessionVariable, ROLE_HEADER, roleFrom } from './headers.js';
import {
  BodyTooLargeError,
  describeFetchError,
  fetchLimited,
  jsonPathKey,
  jsonTypeName,
  redactUrl,
  USER_AGENT,
  type OutboundClient,
} from '../../http/client.js';
import type { Span } from '../../core/tracing.js';
import type { AuthLogger } from './log.js';
import { IGNORED_CLIENT_HEADERS, isForwardableHeader, isSendableHeader } from '../../http/forwarded.js';

/** Client headers never forwarded in GET mode (SPEC §5.4), lower-cased: upstream's list (src/http/forwarded.ts). */
export const WEBHOOK_IGNORED_HEADERS: ReadonlySet<string> = IGNORED_CLIENT_HEADERS;

export interface WebhookResult {
  role: string;
  vars: Record<string, string>;
  expiresAt?: number;
}

export interface WebhookOptions {
  /** the engine's outbound client */
  outbound: OutboundClient;
  url: string;
  mode: 'GET' | 'POST';
  timeoutMs: number;
  maxBodyBytes: number;
  cacheSize: number;
  now: () => number;
  log?: AuthLogger;
}

interface CacheEntry {
  result: WebhookResult;
  expiresAt: number;
}

export class WebhookClient {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly closer = new AbortController();
  /** number of HTTP calls made (for tests and metrics) */
  calls = 0;

  constructor(private readonly opts: WebhookOptions) {}

  close(): void {
    this.closer.abort();
    this.cache.clear();
  }

  /** `headers`: lower-cased name → value; `spelling`: lower-cased name → the client's spelling (forwarded as is). */
  /** `span`: the request's auth span (tracing on), parent of the call's */
  async resolve(headers: Map<string, string>, spelling?: Map<string, string>, span?: Span): Promise<WebhookResult> {
    const sent: [string, string][] = [];
    for (const [name, value] of headers) {
      // the admin secret is Svc's own credential: never sent to a third party (src/http/credentials.ts)
      // hop-by-hop headers and the admin secret never; in GET mode, as headers, nor upstream's ignored ones
      if (!isSafeHeaderValue(value) || !(this.opts.mode === 'GET' ? isForwardableHeader(name) : isSendableHeader(name))) continue;
      sent.push([spelling?.get(name) ?? name, value]);
    }
    sent.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const key = sha256Bytes(`${this.opts.mode}\0${JSON.stringify(sent)}`).toString('base64');

    const now = this.opts.now();
    const hit = this.cache.get(key);
    if (hit) {
      if (now < hit.expiresAt) return { ...hit.result, vars: { ...hit.result.vars } };
      this.cache.delete(key);
    }

    const result = await this.call(sent, span);
    if (result.expiresAt !== undefined && result.expiresAt > this.opts.now()) this.store(key, result);
    return result;
  }

  private store(key: string, result: WebhookResult): void {
    if (this.opts.cacheSize <= 0) return;
    if (this.cache.size >= this.opts.cacheSize) {
      const now = this.opts.now();
      for (const [k, e] of this.cache) if (e.expiresAt <= now) this.cache.delete(k);
      while (this.cache.size >= this.opts.cacheSize) {
        const oldest = this.cache.keys().next().value;
        if (oldest === undefined) break;
        this.cache.delete(oldest);
      }
    }
    this.cache.set(key, { result: { ...result, vars: { ...result.vars } }, expiresAt: result.expiresAt! });
  }

  private logFailure(status: number | undefined, message: string): void {
    this.opts.log?.warn(
      { type: 'webhook-log', detail: { url: redactUrl(this.opts.url), method: this.opts.mode, status: status ?? null, message } },
      'auth webhook failed',
    );
  }

  private async call(sent: [string, string][], span: Span | undefined): Promise<WebhookResult> {
    const { mode } = this.opts;
    const reqHeaders: Record<string, string> = {};
    let body: string | undefined;
    if (mode === 'GET') {
      for (const [n, v] of sent) reqHeaders[n] = v;
      reqHeaders['user-agent'] = USER_AGENT;
    } else {
      reqHeaders['content-type'] = 'application/json';
      reqHeaders['user-agent'] = USER_AGENT;
      body = JSON.stringify({ headers: Object.fromEntries(sent) });
    }

    this.calls++;
    let res;
    try {
      res = await fetchLimited(
        this.opts.url,
        { method: mode, headers: reqHeaders, body, redirect: 'manual' },
        {
          client: this.opts.outbound,
          timeoutMs: this.opts.timeoutMs,
          maxBytes: this.opts.maxBodyBytes,
          signal: this.closer.signal,
          readBody: (s) => s === 200,
          target: 'auth_webhook',
          parent: span,
        },
      );
    } catch (e) {
      if (e instanceof BodyTooLargeError) {
        this.logFailure(200, e.message);
        throw err500('unexpected', `Invalid response from authorization hook: ${e.message}`);
      }
      this.logFailure(undefined, describeFetchError(e));
      throw err500('unexpected', 'webhook authentication request failed');
    }

    if (res.status === 401) {
      this.logFailure(401, 'unauthorized');
      throw err401('access-denied', 'Authentication hook unauthorized this request');
    }
    if (res.status !== 200) {
      this.logFailure(res.status, 'unexpected status');
      throw err500('unexpected', 'Invalid response from authorization hook');
    }

    let parsed: Record<string, string>;
    try {
      parsed = parseStringObject(res.body);
    } catch (e) {
      const msg = (e as Error).message;
      this.logFailure(200, msg);
      throw err500('unexpected', `Invalid response from authorization hook: ${msg}`);
    }

    const vars: Record<string, string> = {};
    for (const [k, v] of Object.entries(parsed)) if (isSessionVariable(k)) vars[k.toLowerCase()] = v;
    const role = roleFrom(vars[ROLE_HEADER]);
    if (role === undefined) throw err400('invalid-params', `${ROLE_HEADER} not found in session variables`);

    const expiresAt = this.expiry(parsed, res.headers);
    return { role, vars, expiresAt };
  }

  /** Cache-Control then Expires, from the JSON body first, then from the response headers. */
  private expiry(bodyFields: Record<string, string>, headers: Headers): number | undefined {
    const field = (name: string): string | undefined => {
      if (Object.hasOwn(bodyFields, name)) return bodyFields[name];
      const lower = name.toLowerCase();
      for (const [k, v] of Object.entries(bodyFields)) if (k.toLowerCase() === lower) return v;
      return undefined;
    };
    const sources: [string, string | undefined | null][] = [
      ['Cache-Control', field('Cache-Control')],
      ['Expires', field('Expires')],
      ['Cache-Control', headers.get('cache-control')],
      ['Expires', headers.get('expires')],
    ];
    for (const [name, value] of sources) {
      if (value === undefined || value === null) continue;
      if (name === 'Cache-Control') {
        const secs = parseMaxAge(value);
        if (secs !== undefined) return this.opts.now() + secs * 1000;
        this.opts.log?.warn({ type: 'webhook-log', detail: { url: redactUrl(this.opts.url), message: 'could not find max-age or s-maxage in Cache-Control' } });
      } else {
        const t = parseExpires(value);
        if (t !== undefined) return t;
        this.opts.log?.warn({
          type: 'webhook-log',
          detail: { url: redactUrl(this.opts.url), message: 'Expires is not a valid "%a, %d %b %Y %T GMT" timestamp' },
        });
      }
    }
    return undefined;
  }
}

/** Parse a JSON object whose members are all strings; aeson-like messages on failure. */
function parseStringObject(body: Buffer): Record<string, string> {
  const text = body.toString('utf8');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new Error(text.trim() === '' ? 'Error in $: not enough input' : 'Error in $: Failed reading: not a valid json value');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw new Error(`Error in $: parsing HashMap ~Text failed, expected Object, but encountered ${jsonTypeName(v)}`);
  }
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
    if (typeof val !== 'string') {
      throw new Error(`Error in $${jsonPathKey(k)}: parsing Text failed, expected String, but encountered ${jsonTypeName(val)}`);
    }
    out[k] = val;
  }
  return out;
}
