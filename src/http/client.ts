/**
 * Outbound HTTP, one module for every caller (the auth webhook and the JWK set today; event,
 * scheduled and action webhooks and remote schemas next): a deadline that covers the body, a body
 * size cap, no redirects unless asked, a fixed User-Agent, and log-safe descriptions of failures
 * and URLs. Connections are reused by the global fetch's keep-alive agent.
 */

export interface LimitedResponse {
  status: number;
  headers: Headers;
  body: Buffer;
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
  opts: { timeoutMs: number; maxBytes: number; signal?: AbortSignal; readBody?: (status: number) => boolean },
): Promise<LimitedResponse> {
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
  const res = await fetch(url, { ...init, signal });
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
