/**
 * The client headers never forwarded, one list for every outbound forward (action handlers with
 * `forward_client_headers`, remote schemas with `forward_client_headers`, the auth webhook):
 *
 * - upstream's `commonClientHeadersIgnored` (Hasura/Server/Utils.hs): the headers that describe the
 *   client's own request, not the forwarded one — `IGNORED_CLIENT_HEADERS`;
 * - hop-by-hop and body-framing headers (RFC 9110 §7.6.1, §8.4), which cannot be carried over to
 *   a new request — `HOP_BY_HOP_HEADERS`;
 * - the admin secret under both its names (src/http/credentials.ts), Svc's own credential.
 *
 * The auth webhook's POST mode sends the client's headers as data (`{"headers": {…}}`): there only
 * the hop-by-hop ones and the admin secret are left out, as upstream sends them all.
 */
import { isAdminSecretHeader } from './credentials.js';

/** upstream's commonClientHeadersIgnored, lower-cased */
export const IGNORED_CLIENT_HEADERS: ReadonlySet<string> = new Set([
  'content-length',
  'content-md5',
  'user-agent',
  'host',
  'origin',
  'referer',
  'accept',
  'accept-encoding',
  'accept-language',
  'accept-datetime',
  'cache-control',
  'connection',
  'dnt',
  'content-type',
]);

/** hop-by-hop (RFC 9110 §7.6.1, and the non-standard ones clients send) and body-framing headers, lower-cased */
export const HOP_BY_HOP_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'trailers',
  'transfer-encoding',
  'upgrade',
  'expect',
  'http2-settings',
  'content-length',
  'content-encoding',
]);

/** May a client header (any case) be forwarded as a header of another request? */
export function isForwardableHeader(name: string): boolean {
  const n = name.toLowerCase();
  return !IGNORED_CLIENT_HEADERS.has(n) && !HOP_BY_HOP_HEADERS.has(n) && !isAdminSecretHeader(n);
}

/** May a client header (any case) be sent as data (the auth webhook's POST body)? */
export function isSendableHeader(name: string): boolean {
  const n = name.toLowerCase();
  return !HOP_BY_HOP_HEADERS.has(n) && !isAdminSecretHeader(n);
}
