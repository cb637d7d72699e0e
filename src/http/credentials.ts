/**
 * Credential headers, one list for every outbound forward and for everything stored or logged
 * (issue 30 item 4).
 *
 * - The admin secret, under both of its names (`X-Svc-Admin-Secret` and the legacy
 *   `X-Svc-Access-Key`), is Svc's own credential: it is never forwarded to a third party (action
 *   handlers, remote schemas, the auth webhook), never stored (`hdb_action_log.request_headers`) and
 *   never logged.
 * - The client's own credentials (`Authorization`, `Cookie`) are forwarded where upstream forwards
 *   them (`forward_client_headers` of actions and remote schemas, the auth webhook:
 *   reference/remote-schemas/schema-auth.rst; `Proxy-Authorization` is hop-by-hop and never
 *   forwarded, src/http/forwarded.ts), stored where a later forward needs them (an
 *   asynchronous action's handler is called with the stored headers), and redacted wherever headers
 *   are logged or shown as debugging info.
 */

export const ADMIN_SECRET_HEADERS: ReadonlySet<string> = new Set(['x-svc-admin-secret', 'x-svc-access-key']);

export const CLIENT_CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'cookie']);

export const REDACTED = '<redacted>';

/** The admin secret under one of its names (case-insensitive). */
export function isAdminSecretHeader(name: string): boolean {
  return ADMIN_SECRET_HEADERS.has(name.toLowerCase());
}

/** Any credential header (admin secret or the client's own), case-insensitive. */
export function isCredentialHeader(name: string): boolean {
  const n = name.toLowerCase();
  return ADMIN_SECRET_HEADERS.has(n) || CLIENT_CREDENTIAL_HEADERS.has(n);
}

/** A header list as it may be logged or shown: credential values replaced, admin secrets left out. */
export function redactHeaderList<T extends { name: string; value: string }>(headers: readonly T[]): T[] {
  return headers.filter((h) => !isAdminSecretHeader(h.name)).map((h) => (isCredentialHeader(h.name) ? { ...h, value: REDACTED } : h));
}

/** The same for a header record. */
export function redactHeaderRecord(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (isAdminSecretHeader(k)) continue;
    out[k] = isCredentialHeader(k) ? REDACTED : v;
  }
  return out;
}
