/**
 * JWK set from `jwk_url` (reference authentication/jwt.rst "Rotating JWKs").
 *
 * Fetched at start; when the response carries `Cache-Control: max-age` /
 * `s-maxage` or `Expires`, the set is refreshed at that time (then every
 * minute when a refresh yields no usable expiry or fails; a failed refresh
 * keeps the previous keys; never sooner than `minRefetchMs` after a fetch).
 * A token whose `kid` is unknown triggers a refetch unless the last fetch was
 * less than `minRefetchMs` ago. Refreshes are single-flight.
 * Only public keys usable for signatures are kept (RSA, EC, OKP); symmetric
 * (`oct`) keys are never accepted from a URL.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { parseExpires, parseMaxAge } from './expiry.js';
import { describeFetchError, fetchLimited, redactUrl, USER_AGENT, type OutboundClient } from '../../http/client.js';
import type { AuthLogger } from './log.js';

export interface JwkEntry {
  kid?: string;
  alg?: string;
  use?: string;
  key: KeyObject;
}

/** Whether a key can verify a token signed with `alg` (also enforces jose's 2048-bit RSA minimum). */
export function keyFitsAlg(key: KeyObject, alg: string): boolean {
  if (/^HS(256|384|512)$/.test(alg)) return key.type === 'secret';
  if (key.type !== 'public') return false;
  const t = key.asymmetricKeyType;
  const d = key.asymmetricKeyDetails ?? {};
  switch (alg) {
    case 'RS256':
    case 'RS384':
    case 'RS512':
      return t === 'rsa' && (d.modulusLength ?? 0) >= 2048;
    case 'PS256':
    case 'PS384':
    case 'PS512':
      return (t === 'rsa' || t === 'rsa-pss') && (d.modulusLength ?? 0) >= 2048;
    case 'ES256':
      return t === 'ec' && d.namedCurve === 'prime256v1';
    case 'ES384':
      return t === 'ec' && d.namedCurve === 'secp384r1';
    case 'ES512':
      return t === 'ec' && d.namedCurve === 'secp521r1';
    case 'EdDSA':
    case 'Ed25519':
      return t === 'ed25519';
    default:
      return false;
  }
}

/** Algorithms a token verified against a JWK set may use: asymmetric only. */
export const JWKS_ALGORITHMS: readonly string[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

const RETRY_MS = 60_000;
const MAX_TIMER_MS = 2 ** 31 - 1;
const MAX_CANDIDATES = 8;

export interface JwksOptions {
  /** the engine's outbound client */
  outbound: OutboundClient;
  url: string;
  timeoutMs: number;
  minRefetchMs: number;
  maxBodyBytes: number;
  now: () => number;
  log?: AuthLogger;
}

export class JwksStore {
  private keys: JwkEntry[] = [];
  private loaded = false;
  /** clock time of the next scheduled refresh; undefined = never (provider does not rotate) */
  private nextRefreshAt: number | undefined;
  /** once a response carried an expiry, failures and expiry-less answers retry every minute */
  private rotating = false;
  private lastAttemptAt = -Infinity;
  private inflight: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly closer = new AbortController();
  private readonly initial: Promise<void>;
  /** number of HTTP fetches made (for tests and metrics) */
  fetches = 0;

  constructor(private readonly opts: JwksOptions) {
    this.initial = this.refresh();
    this.initial.catch(() => undefined);
  }

  /** Resolves after the first fetch; rejects (with the reason) when it failed. */
  ready(): Promise<void> {
    return this.initial;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.closer.abort();
  }

  /** Keys that may have signed a token with this `kid` / `alg` (refreshing first when due). */
  async candidates(kid: string | undefined, alg: string): Promise<KeyObject[]> {
    await this.initial.catch(() => undefined);
    if (this.closed) return [];
    const now = this.opts.now();
    if (!this.loaded) {
      if (now - this.lastAttemptAt >= this.opts.minRefetchMs) await this.refresh().catch(() => undefined);
    } else if (this.nextRefreshAt !== undefined && now >= this.nextRefreshAt) {
      await this.refresh().catch(() => undefined);
    }
    let found = this.select(kid, alg);
    if (found.length === 0 && kid !== undefined && !this.known(kid)) {
      if (this.inflight) {
        // join the fetch already under way (single-flight)
        await this.inflight.catch(() => undefined);
      } else if (this.opts.now() - this.lastAttemptAt >= this.opts.minRefetchMs) {
        await this.refresh().catch(() => undefined);
      }
      found = this.select(kid, alg);
    }
    return found;
  }

  private known(kid: string): boolean {
    return this.keys.some((k) => k.kid === kid);
  }

  private select(kid: string | undefined, alg: string): KeyObject[] {
    const out: KeyObject[] = [];
    for (const k of this.keys) {
      if (kid !== undefined && k.kid !== kid) continue;
      if (k.use !== undefined && k.use !== 'sig') continue;
      if (k.alg !== undefined && k.alg !== alg) continue;
      if (!keyFitsAlg(k.key, alg)) continue;
      out.push(k.key);
      if (out.length >= MAX_CANDIDATES) break;
    }
    return out;
  }

  private refresh(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('authenticator closed'));
    if (!this.inflight) {
      this.inflight = this.fetchOnce().finally(() => {
        this.inflight = undefined;
      });
    }
    return this.inflight;
  }

  private async fetchOnce(): Promise<void> {
    this.lastAttemptAt = this.opts.now();
    this.fetches++;
    const url = this.opts.url;
    this.opts.log?.info({ type: 'jwk-refresh-log', detail: { message: `refreshing JWK from endpoint: ${redactUrl(url)}` } });
    try {
      const { keys, expiresAt } = await this.download();
      this.keys = keys;
      this.loaded = true;
      if (expiresAt !== undefined) {
        this.rotating = true;
        // an expiry in the past (or max-age=0) must not turn into a fetch loop
        this.nextRefreshAt = Math.max(expiresAt, this.opts.now() + this.opts.minRefetchMs);
      } else {
        this.nextRefreshAt = this.rotating ? this.opts.now() + RETRY_MS : undefined;
      }
    } catch (e) {
      const message = (e as Error).message;
      this.opts.log?.warn({ type: 'jwk-refresh-log', detail: { message, url: redactUrl(url) } }, 'JWK fetch failed');
      if (this.rotating) this.nextRefreshAt = this.opts.now() + RETRY_MS;
      throw e;
    } finally {
      this.schedule();
    }
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.closed || this.nextRefreshAt === undefined) return;
    const delay = Math.min(Math.max(0, this.nextRefreshAt - this.opts.now()), MAX_TIMER_MS);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.refresh().catch(() => undefined);
    }, delay);
    this.timer.unref();
  }

  private async download(): Promise<{ keys: JwkEntry[]; expiresAt?: number }> {
    const url = this.opts.url;
    let res;
    try {
      res = await fetchLimited(
        url,
        { method: 'GET', headers: { 'user-agent': USER_AGENT, accept: 'application/json' }, redirect: 'follow' },
        { client: this.opts.outbound, timeoutMs: this.opts.timeoutMs, maxBytes: this.opts.maxBodyBytes, signal: this.closer.signal, target: 'jwks' },
      );
    } catch (e) {
      throw new Error(`Error fetching JWK: ${describeFetchError(e)}`);
    }
    if (res.status < 200 || res.status >= 300) throw new Error(`Non-2xx response on fetching JWK from: ${redactUrl(url)}`);
    let doc: unknown;
    try {
      doc = JSON.parse(res.body.toString('utf8'));
    } catch {
      throw new Error(`Error parsing JWK from url: ${redactUrl(url)}`);
    }
    const rawKeys = (doc as { keys?: unknown } | null)?.keys;
    if (doc === null || typeof doc !== 'object' || !Array.isArray(rawKeys)) {
      throw new Error(`Error parsing JWK from url: ${redactUrl(url)}: expected an object with a "keys" array`);
    }
    const keys: JwkEntry[] = [];
    for (const jwk of rawKeys) {
      try {
        keys.push(importPublicJwk(jwk));
      } catch (e) {
        this.opts.log?.warn({ type: 'jwk-refresh-log', detail: { message: `ignoring JWK: ${(e as Error).message}` } });
      }
    }

    let expiresAt: number | undefined;
    const cc = res.headers.get('cache-control');
    const ex = res.headers.get('expires');
    if (cc !== null) {
      const secs = parseMaxAge(cc);
      if (secs !== undefined) expiresAt = this.opts.now() + secs * 1000;
      else
        this.opts.log?.info({
          type: 'jwk-refresh-log',
          detail: { message: 'Failed parsing Cache-Control header from JWK response. Could not find max-age or s-maxage' },
        });
    }
    if (expiresAt === undefined && ex !== null) {
      expiresAt = parseExpires(ex);
      if (expiresAt === undefined) {
        this.opts.log?.info({
          type: 'jwk-refresh-log',
          detail: { message: 'Failed parsing Expires header from JWK response. Value of header is not a valid timestamp' },
        });
      }
    }
    return { keys, expiresAt };
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** A JWK as a public KeyObject, built from the public members only. */
export function importPublicJwk(jwk: unknown): JwkEntry {
  if (jwk === null || typeof jwk !== 'object' || Array.isArray(jwk)) throw new Error('not an object');
  const j = jwk as Record<string, unknown>;
  let pub: Record<string, string>;
  switch (j.kty) {
    case 'RSA':
      pub = { kty: 'RSA', n: str(j.n) ?? '', e: str(j.e) ?? '' };
      break;
    case 'EC':
      pub = { kty: 'EC', crv: str(j.crv) ?? '', x: str(j.x) ?? '', y: str(j.y) ?? '' };
      break;
    case 'OKP':
      if (j.crv !== 'Ed25519') throw new Error(`unsupported OKP curve ${String(j.crv)}`);
      pub = { kty: 'OKP', crv: 'Ed25519', x: str(j.x) ?? '' };
      break;
    default:
      throw new Error(`unsupported key type ${JSON.stringify(j.kty)}`);
  }
  const key = createPublicKey({ key: pub, format: 'jwk' });
  return { kid: str(j.kid), alg: str(j.alg), use: str(j.use), key };
}
