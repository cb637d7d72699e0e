/**
 * CORS as the reference describes: `--cors-domain` (CSV with wildcards, `*`
 * default) echoes the allowed origin with credentials; `--disable-cors`
 * sends no CORS headers. A request without an `Origin` header is not a
 * cross-origin request and gets none either (as Hasura's middleware does).
 */
import type { Config } from '../config/config.js';

export function corsMatcher(config: Config): (origin: string | undefined) => string | undefined {
  if (config.disableCors) return () => undefined;
  if (config.corsDomain === '*') return (origin) => origin;
  // `*` stands for exactly one DNS label (`https://*.foo.com` allows `https://a.foo.com`, not
  // `https://a.b.foo.com`) or one port (`http://localhost:*`), as upstream's wildcard domains
  const patterns = config.corsDomain.map((d) => new RegExp(`^${d.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^./:]+')}$`, 'i'));
  return (origin) => (origin && patterns.some((p) => p.test(origin)) ? origin : undefined);
}

export function corsHeaders(allowed: string | undefined, requestHeaders?: string): Record<string, string> {
  if (!allowed) return {};
  return {
    'access-control-allow-origin': allowed,
    'access-control-allow-credentials': 'true',
    'access-control-allow-methods': 'GET,POST,PUT,PATCH,DELETE,OPTIONS',
    ...(requestHeaders ? { 'access-control-allow-headers': requestHeaders } : {}),
    'access-control-max-age': '1728000',
  };
}
