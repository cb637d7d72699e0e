/**
 * One webhook try: POST the JSON body with the configured headers, under a deadline, and describe
 * what happened the way the invocation logs keep it (upstream's "version 2" request/response
 * objects: `{payload, headers, version}` and `{type: webhook_response | client_error, data, version}`).
 */
import { describeFetchError, postLimited, redactUrl, USER_AGENT, type OutboundClient } from '../http/client.js';
import { SvcError } from '../errors.js';
import type { Span } from '../core/tracing.js';
import { clampNumber, MAX_TIMEOUT_SEC } from '../core/limits.js';
import type { HostGates } from './hosts.js';

export interface DeliveryRequest {
  url: string;
  /** configured headers, resolved (value or value_from_env) */
  headers: Array<{ name: string; value: string }>;
  /** the JSON body */
  body: string;
  timeoutMs: number;
  /** the URL as logs show it (no credentials or query string) */
  logUrl: string;
  /** keep the whole response body in the outcome (async actions store it), not only what logs keep */
  fullBody?: boolean;
}

export interface DeliveryOutcome {
  ok: boolean;
  /** HTTP status, or null for a client error (timeout, refused connection) */
  status: number | null;
  /** response body (cut to RESPONSE_BODY_MAX characters) */
  body?: string;
  responseHeaders?: Array<{ name: string; value: string }>;
  /** client error description */
  error?: string;
  /** seconds from a Retry-After header of a non-2xx response */
  retryAfterSec?: number;
  latencyMs: number;
}

/** Invocation logs keep at most this much of a response body. */
export const RESPONSE_BODY_MAX = 64 * 1024;
/** A response body is read up to this size (more is a client error, not kept). */
const RESPONSE_READ_MAX = 1024 * 1024;
/** The status invocation logs record for a client error (upstream's convention). */
export const CLIENT_ERROR_STATUS = 1000;

/** The longest Retry-After honoured, in seconds (a week); longer ones are cut to it. */
export const MAX_RETRY_AFTER_SEC = 7 * 24 * 3600;

/**
 * Retry-After as delay-seconds or an HTTP date, clamped to [0, MAX_RETRY_AFTER_SEC] whatever the
 * response says (a date in the year 275760, a 400-digit number); undefined when absent or unparseable.
 */
export function parseRetryAfter(v: string | null, now = Date.now()): number | undefined {
  if (v === null) return undefined;
  const t = v.trim().slice(0, 200);
  if (/^\d+$/.test(t)) return clampNumber(Number(t), 0, MAX_RETRY_AFTER_SEC, MAX_RETRY_AFTER_SEC);
  const d = Date.parse(t);
  if (Number.isNaN(d)) return undefined;
  return clampNumber(Math.ceil((d - now) / 1000), 0, MAX_RETRY_AFTER_SEC, MAX_RETRY_AFTER_SEC);
}

/**
 * One try. With `hosts`, it first waits for a slot of the webhook's host (that wait is not part of
 * the timeout, nor is connecting: the deadline counts from when the request is sent) and reports
 * back how the host did. `parent`: the try's span (tracing on), parent of the call's.
 */
export async function deliver(client: OutboundClient, req: DeliveryRequest, hosts?: HostGates, target = 'event', parent?: Span): Promise<DeliveryOutcome> {
  // a timeout a Node timer can hold (a longer one would fire after 1 ms)
  const timeoutMs = clampNumber(req.timeoutMs, 1, MAX_TIMEOUT_SEC * 1000, 60_000);
  const release = hosts ? await hosts.acquire(req.url) : undefined;
  const t0 = Date.now();
  let sentAt = t0;
  const report = (responded: boolean) => release?.({ responded, latencyMs: Date.now() - sentAt, timeoutMs });
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': USER_AGENT };
  for (const h of req.headers) headers[h.name] = h.value;
  try {
    const res = await postLimited(req.url, headers, req.body, {
      client,
      timeoutMs,
      maxBytes: RESPONSE_READ_MAX,
      timeoutFromConnect: true,
      onSent: () => (sentAt = Date.now()),
      target,
      parent,
    });
    report(true);
    const ok = res.status >= 200 && res.status < 300;
    const responseHeaders: Array<{ name: string; value: string }> = [];
    res.headers.forEach((value, name) => responseHeaders.push({ name, value }));
    const text = res.body.toString('utf8');
    return {
      ok,
      status: res.status,
      body: text.length > RESPONSE_BODY_MAX && !req.fullBody ? text.slice(0, RESPONSE_BODY_MAX) : text,
      responseHeaders,
      retryAfterSec: ok ? undefined : parseRetryAfter(res.headers.get('retry-after')),
      latencyMs: Date.now() - t0,
    };
  } catch (e) {
    report(false);
    return { ok: false, status: null, error: describeFetchError(e), latencyMs: Date.now() - t0 };
  }
}

/** The invocation log's `request` column (JSON text; the body is spliced, not re-encoded). */
export function invocationRequest(req: DeliveryRequest): string {
  return `{"payload":${req.body},"headers":${JSON.stringify(req.headers)},"version":"2"}`;
}

/** The invocation log's `response` column. */
export function invocationResponse(o: DeliveryOutcome): unknown {
  if (o.status === null) return { type: 'client_error', data: { message: o.error ?? 'unknown error' }, version: '2' };
  return { type: 'webhook_response', data: { status: o.status, body: o.body ?? '', headers: o.responseHeaders ?? [] }, version: '2' };
}

/** A webhook URL (after templates) must be an absolute http(s) URL. */
export function checkWebhookUrl(url: string, path: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new SvcError(400, 'invalid-params', `not a valid URL: ${JSON.stringify(url)}`, path);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new SvcError(400, 'invalid-params', `webhook URL must use http or https: ${JSON.stringify(url)}`, path);
}

// environment values (templates, value_from_env) have one home: src/env.ts
export { resolveHeaders, resolveUrlTemplate } from '../env.js';
export { redactUrl };
