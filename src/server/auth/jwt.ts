/**
 * JWT mode (reference authentication/jwt.rst; Hasura v1.3 Auth/JWT.hs
 * semantics and messages). Config parsing/validation happens once, at
 * construction (a bad config is an Error the server reports at startup);
 * per request the token is read from the configured header, its signature
 * verified with `jose` restricted to the configured algorithm (or, for a
 * JWK set, to asymmetric algorithms matching the key), then the registered
 * claims (exp, iat, nbf, iss, aud) and the `x-svc-*` claims are checked.
 */
import { createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';
import { compactVerify } from 'jose';
import type { JwtConfigRaw } from '../../config/config.js';
import { err400 } from '../../errors.js';
import { isSessionVariable, ROLE_HEADER, roleFrom, sessionVarsFromHeaders } from './headers.js';
import { jsonTypeName, type OutboundClient } from '../../http/client.js';
import { getJsonPath, parseJsonPath, type JsonPath } from './jsonpath.js';
import { JwksStore, JWKS_ALGORITHMS, keyFitsAlg } from './jwks.js';
import type { Session } from './session.js';
import type { AuthLogger } from './log.js';
import { withEntry } from '../../core/objects.js';

export const DEFAULT_CLAIMS_NAMESPACE = 'https://svc.io/jwt/claims';
export const ALLOWED_ROLES_CLAIM = 'x-svc-allowed-roles';
export const DEFAULT_ROLE_CLAIM = 'x-svc-default-role';

/** Longest token accepted (a JWT travels in a header; Node's own header limit is 16 KiB). */
export const MAX_TOKEN_LENGTH = 64 * 1024;

const REGISTERED_CLAIMS = new Set(['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti']);
const B64URL_RE = /^[A-Za-z0-9_-]+$/;

export type JwtHeaderSource = { type: 'Authorization' } | { type: 'Cookie'; name: string } | { type: 'CustomHeader'; name: string };

type ClaimsMapValue<T> = { kind: 'static'; value: T } | { kind: 'path'; path: JsonPath; default?: T };

export interface JwtSettings {
  /** `type` + `key`: the key and the only algorithms accepted */
  staticKey?: { key: KeyObject; algorithms: string[] };
  jwkUrl?: string;
  namespace: { kind: 'key'; key: string } | { kind: 'path'; path: JsonPath; text: string };
  claimsFormat: 'json' | 'stringified_json';
  claimsMap?: {
    raw: Record<string, unknown>;
    allowedRoles: ClaimsMapValue<string[]>;
    defaultRole: ClaimsMapValue<string>;
    others: Map<string, ClaimsMapValue<string>>;
  };
  audience?: string[];
  issuer?: string;
  allowedSkewSec: number;
  header: JwtHeaderSource;
}

class JwtConfigError extends Error {}
const bad = (msg: string): never => {
  throw new JwtConfigError(msg);
};
const invalidJwk = (msg: string): never => bad(`Invalid JWK: ${msg}`);

const HMAC_BITS: Record<string, number> = { HS256: 256, HS384: 384, HS512: 512 };
const ASYM_TYPES: Record<string, string[]> = {
  RS256: ['RS256'],
  RS384: ['RS384'],
  RS512: ['RS512'],
  PS256: ['PS256'],
  PS384: ['PS384'],
  PS512: ['PS512'],
  ES256: ['ES256'],
  ES384: ['ES384'],
  ES512: ['ES512'],
  Ed25519: ['EdDSA', 'Ed25519'],
  EdDSA: ['EdDSA', 'Ed25519'],
};

function parsePublicKeyPem(type: string, pem: string, algorithms: string[]): KeyObject {
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem)) {
    invalidJwk('Could not decode PEM: expected a public key or an X509 certificate, not a private key');
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch (e) {
    return invalidJwk(`Could not decode PEM: ${(e as Error).message}`);
  }
  if (!keyFitsAlg(key, algorithms[0]!)) {
    const d = key.asymmetricKeyDetails ?? {};
    const what = `${key.asymmetricKeyType ?? 'unknown'}${d.modulusLength ? ` ${d.modulusLength}-bit` : ''}${d.namedCurve ? ` ${d.namedCurve}` : ''}`;
    const need =
      type.startsWith('RS') || type.startsWith('PS')
        ? 'an RSA key of at least 2048 bits'
        : type.startsWith('ES')
          ? `an EC key on the curve of ${type}`
          : 'an Ed25519 key';
    invalidJwk(`key type ${type} needs ${need}, got ${what}`);
  }
  return key;
}

function parseClaimsMapValue<T>(name: string, v: unknown, check: (x: unknown) => T | undefined, expected: string): ClaimsMapValue<T> {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    if (typeof o.path !== 'string') bad(`claims_map.${name}: key "path" not found`);
    let path: JsonPath;
    try {
      path = parseJsonPath(o.path as string);
    } catch (e) {
      return bad(`claims_map.${name}: invalid JSON path: ${(e as Error).message}`);
    }
    if (o.default === undefined || o.default === null) return { kind: 'path', path };
    const d = check(o.default);
    if (d === undefined) bad(`claims_map.${name}.default: expected ${expected}`);
    return { kind: 'path', path, default: d };
  }
  const s = check(v);
  if (s === undefined) bad(`claims_map.${name}: expected ${expected} or an object with "path"`);
  return { kind: 'static', value: s as T };
}

const asRole = (x: unknown): string | undefined => (typeof x === 'string' && x !== '' ? x : undefined);
const asRoles = (x: unknown): string[] | undefined => (Array.isArray(x) && x.every((r) => typeof r === 'string' && r !== '') ? (x as string[]) : undefined);
const asText = (x: unknown): string | undefined => (typeof x === 'string' ? x : undefined);

/** Parse and validate `--jwt-secret`. Throws an Error whose message says what is wrong. */
export function parseJwtConfig(raw: JwtConfigRaw | unknown): JwtSettings {
  try {
    return parseJwtConfigInner(raw);
  } catch (e) {
    if (e instanceof JwtConfigError) throw new Error(`Fatal Error: --jwt-secret (SVC_GRAPHQL_JWT_SECRET): ${e.message}`);
    throw e;
  }
}

function parseJwtConfigInner(raw: unknown): JwtSettings {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) bad('expected a JSON object');
  const o = raw as Record<string, unknown>;

  let namespace: JwtSettings['namespace'];
  const ns = o.claims_namespace;
  const nsPath = o.claims_namespace_path;
  if (ns !== undefined && ns !== null && nsPath !== undefined && nsPath !== null) bad('claims_namespace and claims_namespace_path both cannot be set');
  if (nsPath !== undefined && nsPath !== null) {
    if (typeof nsPath !== 'string') bad('claims_namespace_path: expected a string');
    try {
      namespace = { kind: 'path', path: parseJsonPath(nsPath as string), text: nsPath as string };
    } catch (e) {
      return bad(`invalid JSON path claims_namespace_path error: ${(e as Error).message}`);
    }
  } else if (ns !== undefined && ns !== null) {
    if (typeof ns !== 'string') bad('claims_namespace: expected a string');
    namespace = { kind: 'key', key: ns as string };
  } else {
    namespace = { kind: 'key', key: DEFAULT_CLAIMS_NAMESPACE };
  }

  const fmt = o.claims_format ?? 'json';
  if (fmt !== 'json' && fmt !== 'stringified_json') bad(`claims_format: expected "json" or "stringified_json", got ${JSON.stringify(fmt)}`);

  let audience: string[] | undefined;
  if (o.audience !== undefined && o.audience !== null) {
    if (typeof o.audience === 'string') audience = [o.audience];
    else if (Array.isArray(o.audience) && o.audience.every((a) => typeof a === 'string')) audience = o.audience as string[];
    else bad('audience: expected a string or a list of strings');
  }
  let issuer: string | undefined;
  if (o.issuer !== undefined && o.issuer !== null) {
    if (typeof o.issuer !== 'string') bad('issuer: expected a string');
    issuer = o.issuer as string;
  }
  let allowedSkewSec = 0;
  if (o.allowed_skew !== undefined && o.allowed_skew !== null) {
    if (typeof o.allowed_skew !== 'number' || !Number.isFinite(o.allowed_skew) || o.allowed_skew < 0)
      bad('allowed_skew: expected a non-negative number of seconds');
    allowedSkewSec = o.allowed_skew as number;
  }

  let header: JwtHeaderSource = { type: 'Authorization' };
  if (o.header !== undefined && o.header !== null) {
    const h = o.header as Record<string, unknown>;
    if (typeof h !== 'object' || Array.isArray(h)) bad('header: expected an object');
    const t = typeof h.type === 'string' ? h.type.toLowerCase() : undefined;
    if (t === 'authorization') header = { type: 'Authorization' };
    else if (t === 'cookie' || t === 'customheader') {
      if (typeof h.name !== 'string' || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(h.name)) bad('header: key "name" not found or not a valid header/cookie name');
      header = t === 'cookie' ? { type: 'Cookie', name: h.name as string } : { type: 'CustomHeader', name: h.name as string };
    } else bad("header: expected 'type' is 'Authorization', 'Cookie' or 'CustomHeader'");
  }

  let claimsMap: JwtSettings['claimsMap'];
  if (o.claims_map !== undefined && o.claims_map !== null) {
    const m = o.claims_map as Record<string, unknown>;
    if (typeof m !== 'object' || Array.isArray(m)) bad('claims_map: expected an object');
    const lower = new Map<string, unknown>();
    for (const [k, v] of Object.entries(m)) lower.set(k.toLowerCase(), v);
    for (const req of [ALLOWED_ROLES_CLAIM, DEFAULT_ROLE_CLAIM]) if (!lower.has(req)) bad(`claims_map: ${req} is expected but not found`);
    const others = new Map<string, ClaimsMapValue<string>>();
    for (const [k, v] of lower) {
      if (k === ALLOWED_ROLES_CLAIM || k === DEFAULT_ROLE_CLAIM) continue;
      if (!isSessionVariable(k)) bad(`claims_map: ${k} is not a session variable (x-svc-*)`);
      others.set(k, parseClaimsMapValue(k, v, asText, 'a string'));
    }
    claimsMap = {
      raw: m,
      allowedRoles: parseClaimsMapValue(ALLOWED_ROLES_CLAIM, lower.get(ALLOWED_ROLES_CLAIM), asRoles, 'a list of roles'),
      defaultRole: parseClaimsMapValue(DEFAULT_ROLE_CLAIM, lower.get(DEFAULT_ROLE_CLAIM), asRole, 'a role name'),
      others,
    };
  }

  const key = o.key;
  const jwkUrl = o.jwk_url;
  const hasKey = key !== undefined && key !== null;
  const hasUrl = jwkUrl !== undefined && jwkUrl !== null;
  if (!hasKey && !hasUrl) bad('key and jwk_url both cannot be empty');
  if (hasKey && hasUrl) bad('key, jwk_url both cannot be present');

  const base = { namespace, claimsFormat: fmt as JwtSettings['claimsFormat'], claimsMap, audience, issuer, allowedSkewSec, header };
  if (hasUrl) {
    if (typeof jwkUrl !== 'string') return bad('jwk_url: expected a string');
    let u: URL;
    try {
      u = new URL(jwkUrl);
    } catch {
      return bad(`jwk_url: not a URL: ${jwkUrl}`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') bad('jwk_url: expected an http(s) URL');
    return { ...base, jwkUrl };
  }

  if (typeof key !== 'string') return bad('key: expected a string');
  if (o.type === undefined || o.type === null) bad('key "type" not found');
  if (typeof o.type !== 'string') bad('type: expected a string');
  const type = o.type as string;
  const bits = HMAC_BITS[type];
  if (bits !== undefined) {
    const secret = Buffer.from(key, 'utf8');
    if (secret.length < bits / 8) invalidJwk('Key size too small');
    return { ...base, staticKey: { key: createSecretKey(secret), algorithms: [type] } };
  }
  const algorithms = ASYM_TYPES[type];
  if (!algorithms) return invalidJwk(`Key type: ${type} is not supported`);
  return { ...base, staticKey: { key: parsePublicKeyPem(type, key, algorithms), algorithms } };
}

const invalidJwt = (detail: string) => err400('invalid-jwt', `Could not verify JWT: ${detail}`);
const invalidClaims = (msg: string) => err400('jwt-invalid-claims', msg);

export interface JwtVerifierOptions {
  /** the engine's outbound client (the JWK set's fetches) */
  outbound: OutboundClient;
  now: () => number;
  log?: AuthLogger;
  fetchTimeoutMs: number;
  jwksMinRefetchMs: number;
  maxBodyBytes: number;
}

export class JwtVerifier {
  private readonly jwks: JwksStore | undefined;

  constructor(
    readonly settings: JwtSettings,
    private readonly opts: JwtVerifierOptions,
  ) {
    if (settings.jwkUrl) {
      this.jwks = new JwksStore({
        outbound: opts.outbound,
        url: settings.jwkUrl,
        timeoutMs: opts.fetchTimeoutMs,
        minRefetchMs: opts.jwksMinRefetchMs,
        maxBodyBytes: opts.maxBodyBytes,
        now: opts.now,
        log: opts.log,
      });
    }
  }

  /** Resolves once the JWK set (if any) was fetched; rejects when that first fetch failed. */
  ready(): Promise<void> {
    return this.jwks ? this.jwks.ready() : Promise.resolve();
  }

  /** number of JWK set fetches so far (0 without jwk_url) */
  get jwksFetches(): number {
    return this.jwks?.fetches ?? 0;
  }

  close(): void {
    this.jwks?.close();
  }

  describe(): Record<string, unknown> {
    const s = this.settings;
    if (s.claimsMap) return { claims_map: s.claimsMap.raw };
    const ns = s.namespace.kind === 'path' ? { claims_namespace_path: s.namespace.text } : { claims_namespace: s.namespace.key };
    return { ...ns, claims_format: s.claimsFormat };
  }

  private headerLabel(): { name: string; label: string } {
    const h = this.settings.header;
    if (h.type === 'Authorization') return { name: 'authorization', label: 'Authorization' };
    if (h.type === 'Cookie') return { name: 'cookie', label: 'Cookie' };
    return { name: h.name.toLowerCase(), label: h.name };
  }

  /** Session of a request in JWT mode (admin secret absent). */
  async resolve(headers: Map<string, string>, unauthorizedRole: string | undefined): Promise<Session> {
    const { name, label } = this.headerLabel();
    const raw = headers.get(name);
    if (raw === undefined) {
      if (unauthorizedRole !== undefined) {
        return { role: unauthorizedRole, vars: withEntry(sessionVarsFromHeaders(headers), ROLE_HEADER, unauthorizedRole), hasAdminCredentials: false };
      }
      throw err400('invalid-headers', `Missing ${label} header in JWT authentication mode`);
    }
    const token = this.extractToken(raw);
    const payload = await this.verify(token);
    const claims = this.sessionClaims(payload);

    const allowedRoles = parseRoleClaim(claims, ALLOWED_ROLES_CLAIM, 'should be a list of roles', (v) => {
      if (!Array.isArray(v)) return `parsing [] failed, expected Array, but encountered ${jsonTypeName(v)}`;
      for (const r of v) {
        if (typeof r !== 'string') return `parsing String failed, expected String, but encountered ${jsonTypeName(r)}`;
        if (r === '') return 'empty string not allowed';
      }
      return undefined;
    }) as string[];
    const defaultRole = parseRoleClaim(claims, DEFAULT_ROLE_CLAIM, 'should be a single role name', (v) => {
      if (typeof v !== 'string') return `parsing String failed, expected String, but encountered ${jsonTypeName(v)}`;
      if (v === '') return 'empty string not allowed';
      return undefined;
    }) as string;

    const role = roleFrom(headers.get(ROLE_HEADER)) ?? defaultRole;
    if (!allowedRoles.includes(role)) throw err400('access-denied', 'Your requested role is not in allowed roles');

    const vars: Record<string, string> = {};
    for (const [k, v] of claims) {
      if (k === ALLOWED_ROLES_CLAIM || k === DEFAULT_ROLE_CLAIM) continue;
      if (typeof v !== 'string') throw invalidClaims(`x-svc-* claims: parsing Text failed, expected String, but encountered ${jsonTypeName(v)}`);
      vars[k] = v;
    }
    vars[ROLE_HEADER] = role;
    const exp = payload.exp;
    // no `expiresAt` key without an `exp` claim (deleting a key later turns the object into a slow dictionary)
    const session: Session = { role, vars, hasAdminCredentials: false };
    if (typeof exp === 'number') session.expiresAt = exp * 1000;
    return session;
  }

  private extractToken(raw: string): string {
    const h = this.settings.header;
    if (h.type === 'Authorization') {
      const parts = raw.split(/[ \t\n\r\f\v]+/).filter((p) => p !== '');
      if (parts.length !== 2 || parts[0] !== 'Bearer') throw err400('invalid-headers', 'Malformed Authorization header');
      return parts[1]!;
    }
    if (h.type === 'Cookie') {
      for (const part of raw.split(';')) {
        const eq = part.indexOf('=');
        if (eq < 0) continue;
        if (part.slice(0, eq).trim() === h.name) {
          let v = part.slice(eq + 1).trim();
          if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
          return v;
        }
      }
      throw err400('invalid-headers', `Could not find ${h.name} in Cookie header`);
    }
    return raw.trim();
  }

  /** Signature, then registered claims. Returns the payload object. */
  private async verify(token: string): Promise<Record<string, unknown>> {
    if (token.length > MAX_TOKEN_LENGTH) throw invalidJwt(`JWSError (CompactDecodeError Invalid token: longer than ${MAX_TOKEN_LENGTH} characters)`);
    const parts = token.split('.');
    if (parts.length !== 3) throw invalidJwt(`JWSError (CompactDecodeError Invalid number of parts: Expected 3 parts; got ${parts.length})`);
    if (!B64URL_RE.test(parts[0]!) || !B64URL_RE.test(parts[1]!) || (parts[2] !== '' && !B64URL_RE.test(parts[2]!))) {
      throw invalidJwt('JWSError (CompactDecodeError Invalid base64url encoding)');
    }
    let header: unknown;
    try {
      header = JSON.parse(decodeUtf8(Buffer.from(parts[0]!, 'base64url')));
    } catch {
      throw invalidJwt('JWSError (JSONDecodeError "Error in $: invalid JOSE header")');
    }
    if (header === null || typeof header !== 'object' || Array.isArray(header)) {
      throw invalidJwt(`JWSError (JSONDecodeError "Error in $: expected Object, but encountered ${jsonTypeName(header)}")`);
    }
    const { alg, kid } = header as { alg?: unknown; kid?: unknown };
    if (typeof alg !== 'string') throw invalidJwt('JWSError (JSONDecodeError "Error in $: key \\"alg\\" not found")');
    if (alg.toLowerCase() === 'none') throw invalidJwt('JWSError JWSNoSignatures');

    let keys: KeyObject[];
    if (this.settings.staticKey) {
      if (!this.settings.staticKey.algorithms.includes(alg)) throw invalidJwt('JWSError JWSInvalidSignature');
      keys = [this.settings.staticKey.key];
    } else {
      if (!JWKS_ALGORITHMS.includes(alg)) throw invalidJwt('JWSError JWSInvalidSignature');
      keys = await this.jwks!.candidates(typeof kid === 'string' ? kid : undefined, alg);
    }
    if (keys.length === 0) throw invalidJwt('JWSError NoUsableKeys');

    let payloadBytes: Uint8Array | undefined;
    let lastError: unknown;
    for (const key of keys) {
      try {
        payloadBytes = (await compactVerify(token, key, { algorithms: [alg] })).payload;
        break;
      } catch (e) {
        lastError = e;
      }
    }
    if (!payloadBytes) {
      const code = (lastError as { code?: string } | undefined)?.code;
      if (code === 'ERR_JWS_INVALID' || code === 'ERR_JOSE_NOT_SUPPORTED')
        throw invalidJwt(`JWSError (JSONDecodeError ${JSON.stringify((lastError as Error).message)})`);
      throw invalidJwt('JWSError JWSInvalidSignature');
    }

    let payload: unknown;
    try {
      payload = JSON.parse(decodeUtf8(payloadBytes));
    } catch {
      throw invalidJwt('JWTClaimsSetDecodeError "Error in $: Failed reading: not a valid json value"');
    }
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
      throw invalidJwt(`JWTClaimsSetDecodeError "Error in $: expected Object, but encountered ${jsonTypeName(payload)}"`);
    }
    const p = payload as Record<string, unknown>;
    for (const f of ['exp', 'nbf', 'iat']) {
      if (p[f] !== undefined && (typeof p[f] !== 'number' || !Number.isFinite(p[f]))) {
        throw invalidJwt(`JWTClaimsSetDecodeError "Error in $.${f}: expected NumericDate, encountered ${jsonTypeName(p[f])}"`);
      }
    }
    for (const f of ['iss', 'sub', 'jti']) {
      if (p[f] !== undefined && typeof p[f] !== 'string') {
        throw invalidJwt(`JWTClaimsSetDecodeError "Error in $.${f}: expected String, encountered ${jsonTypeName(p[f])}"`);
      }
    }
    if (p.aud !== undefined && typeof p.aud !== 'string' && !(Array.isArray(p.aud) && p.aud.every((a) => typeof a === 'string'))) {
      throw invalidJwt('JWTClaimsSetDecodeError "Error in $.aud: expected a string or a list of strings"');
    }

    const now = this.opts.now() / 1000;
    const skew = this.settings.allowedSkewSec;
    if (typeof p.exp === 'number' && !(now < p.exp + skew)) throw invalidJwt('JWTExpired');
    if (typeof p.iat === 'number' && p.iat > now + skew) throw invalidJwt('JWTIssuedAtFuture');
    if (typeof p.nbf === 'number' && !(now >= p.nbf - skew)) throw invalidJwt('JWTNotYetValid');
    // as upstream v1.3 (the jose library's validateClaimsSet): `iss` and `aud` are checked against
    // the configuration when the token carries them; a token without the claim is not refused
    if (this.settings.issuer !== undefined && p.iss !== undefined && p.iss !== this.settings.issuer) throw invalidJwt('JWTNotInIssuer');
    if (this.settings.audience !== undefined && p.aud !== undefined) {
      const auds = typeof p.aud === 'string' ? [p.aud] : (p.aud as string[]);
      if (!auds.some((a) => this.settings.audience!.includes(a))) throw invalidJwt('JWTNotInAudience');
    }
    return p;
  }

  /** The `x-svc-*` claims (lower-cased names) from the namespace or the claims_map. */
  private sessionClaims(payload: Record<string, unknown>): Map<string, unknown> {
    const s = this.settings;
    const out = new Map<string, unknown>();
    if (s.claimsMap) {
      const cm = s.claimsMap;
      const resolveValue = <T>(v: ClaimsMapValue<T>): unknown => (v.kind === 'static' ? v.value : (getJsonPath(payload, v.path) ?? v.default));
      const allowed = resolveValue(cm.allowedRoles);
      const def = resolveValue(cm.defaultRole);
      if (allowed !== undefined) out.set(ALLOWED_ROLES_CLAIM, allowed);
      if (def !== undefined) out.set(DEFAULT_ROLE_CLAIM, def);
      for (const [k, v] of cm.others) {
        const val = resolveValue(v);
        if (val === undefined) throw invalidClaims(`JWT claim from claims_map, ${k} not found`);
        out.set(k, val);
      }
      return out;
    }

    const unregistered: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(payload)) if (!REGISTERED_CLAIMS.has(k)) unregistered[k] = v;
    const nsv = s.namespace;
    const value = nsv.kind === 'key' ? (Object.hasOwn(unregistered, nsv.key) ? unregistered[nsv.key] : undefined) : getJsonPath(unregistered, nsv.path);
    if (value === undefined) {
      throw invalidClaims(nsv.kind === 'key' ? `claims key: '${nsv.key}' not found` : `claims not found at claims_namespace_path: '${nsv.text}'`);
    }
    let obj: unknown;
    if (s.claimsFormat === 'stringified_json') {
      if (typeof value !== 'string') throw invalidClaims('expecting a string when claims_format is stringified_json');
      const where = nsv.kind === 'key' ? `claims_namespace ${nsv.key}` : `claims_namespace_path ${nsv.text}`;
      try {
        obj = JSON.parse(value);
      } catch {
        obj = undefined;
      }
      if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
        throw invalidClaims(`expecting stringified json at: '${where}', but found: ${value}`);
      }
    } else {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalidClaims('expecting a json object when claims_format is json');
      obj = value;
    }
    for (const [k, v] of Object.entries(obj as Record<string, unknown>)) {
      const lk = k.toLowerCase();
      if (isSessionVariable(lk)) out.set(lk, v);
    }
    return out;
  }
}

function parseRoleClaim(claims: Map<string, unknown>, claim: string, hint: string, check: (v: unknown) => string | undefined): unknown {
  if (!claims.has(claim)) throw err400('jwt-missing-role-claims', `JWT claim does not contain ${claim}`);
  const v = claims.get(claim);
  const problem = check(v);
  if (problem !== undefined) throw invalidClaims(`invalid ${claim}; ${hint}: ${problem}`);
  return v;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
function decodeUtf8(b: Uint8Array): string {
  return UTF8.decode(b);
}
