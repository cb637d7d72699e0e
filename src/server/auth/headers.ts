/**
 * Request-header helpers for session resolution. Headers may come from Node
 * (lower-cased names, string values) or from a websocket `connection_init`
 * payload (arbitrary JSON), so everything is normalised defensively.
 */
import type { RequestHeaders } from './session.js';

export const ROLE_HEADER = 'x-svc-role';
export const ADMIN_SECRET_HEADER = 'x-svc-admin-secret';
export const ACCESS_KEY_HEADER = 'x-svc-access-key';
export { BACKEND_ONLY_HEADER } from '../../core/session.js';
export const SESSION_VAR_PREFIX = 'x-svc-';

/** Headers that carry credentials, never turned into session variables. */
const CREDENTIAL_HEADERS = new Set([ADMIN_SECRET_HEADER, ACCESS_KEY_HEADER]);

/** RFC 7230 token. */
const HEADER_NAME_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** CR, LF and NUL can split or truncate a header when forwarded. */
const UNSAFE_VALUE_RE = /[\r\n\0]/;

export function isSessionVariable(name: string): boolean {
  return name.toLowerCase().startsWith(SESSION_VAR_PREFIX);
}

function firstValue(v: unknown): string | undefined {
  if (Array.isArray(v)) return v.length ? firstValue(v[0]) : undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/**
 * Lower-cased name → first value. Names that are not valid header tokens
 * (including HTTP/2 pseudo-headers such as `:authority`) are dropped.
 */
export function normalizeHeaders(headers: RequestHeaders | undefined | null, fromNode = false): Map<string, string> {
  const out = new Map<string, string>();
  if (!headers || typeof headers !== 'object') return out;
  if (fromNode) {
    // Node's IncomingMessage headers: names lower-cased and checked as tokens by its parser (an
    // invalid name is a 400 before any handler runs), one entry per name
    for (const name of Object.keys(headers)) {
      const v = headers[name];
      const value = typeof v === 'string' ? v : firstValue(v);
      if (value !== undefined) out.set(name, value);
    }
    return out;
  }
  for (const [rawName, rawValue] of Object.entries(headers)) {
    if (!HEADER_NAME_RE.test(rawName)) continue;
    const value = firstValue(rawValue);
    if (value === undefined) continue;
    const name = rawName.toLowerCase();
    if (!out.has(name)) out.set(name, value);
  }
  return out;
}

/**
 * Lower-cased name → the client's own spelling of it (first seen), from Node's `rawHeaders`
 * (`[name, value, name, value, …]`) when given, else from the object's keys (a websocket
 * `connection_init` payload keeps the client's spelling). The auth webhook forwards names spelled
 * as the client sent them, as upstream does: webhooks that look headers up case-sensitively work.
 */
export function headerSpellings(headers: RequestHeaders | undefined | null, raw?: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const add = (name: string) => {
    if (!HEADER_NAME_RE.test(name)) return;
    const lower = name.toLowerCase();
    if (!out.has(lower)) out.set(lower, name);
  };
  if (raw) for (let i = 0; i < raw.length; i += 2) add(raw[i]!);
  else if (headers && typeof headers === 'object') for (const name of Object.keys(headers)) add(name);
  return out;
}

/** True when the value can be put on the wire as a header value as is. */
export function isSafeHeaderValue(v: string): boolean {
  return !UNSAFE_VALUE_RE.test(v);
}

/** Every `x-svc-*` request header except the credential headers (`headers`: normalizeHeaders's, lower-cased names). */
export function sessionVarsFromHeaders(headers: Map<string, string>): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const [name, value] of headers) {
    if (name.startsWith(SESSION_VAR_PREFIX) && !CREDENTIAL_HEADERS.has(name)) vars[name] = value;
  }
  return vars;
}

/** A role name from a header or claim: non-empty after nothing (role names are taken verbatim). */
export function roleFrom(value: string | undefined): string | undefined {
  return value !== undefined && value !== '' ? value : undefined;
}
