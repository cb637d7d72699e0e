/**
 * Session resolution (SPEC §5; Hasura v1.3 `getUserInfoWithExpTime`).
 *
 * Modes, decided once from the configuration:
 * - no admin secret: everyone is admin-capable; role = `x-svc-role` or admin
 * - admin secret: a correct `x-svc-admin-secret` (or legacy `x-svc-access-key`)
 *   grants admin credentials; a wrong one is rejected; without one the
 *   webhook or JWT decides, else the unauthorized role, else 401
 * Webhook or JWT without an admin secret, both together, or an unauthorized
 * role without an admin secret / with a webhook are configuration errors
 * (thrown by the constructor; the server exits with them).
 */
import { timingSafeEqual } from 'node:crypto';
import type { Span } from '../../core/tracing.js';
import { sha256Bytes as sha256 } from '../../core/hash.js';
import type { Config, JwtConfigRaw } from '../../config/config.js';
import { err400, err401, err500, SvcError } from '../../errors.js';
import {
  ACCESS_KEY_HEADER,
  ADMIN_SECRET_HEADER,
  BACKEND_ONLY_HEADER,
  headerSpellings,
  normalizeHeaders,
  ROLE_HEADER,
  roleFrom,
  sessionVarsFromHeaders,
} from './headers.js';
import { JwtVerifier, parseJwtConfig } from './jwt.js';
import { ADMIN_ROLE, type RequestHeaders, type Session } from './session.js';
import { SESSION_BOOL_VALUES, parseSessionBool, useBackendOnlyPermissions } from '../../core/session.js';
import { WebhookClient } from './webhook.js';
import { OutboundClient } from '../../http/client.js';
import type { AuthLogger } from './log.js';
import { withEntry } from '../../core/objects.js';

export interface AuthOptions {
  adminSecret?: string;
  authHook?: string;
  authHookMode: 'GET' | 'POST';
  jwtSecret?: JwtConfigRaw;
  unauthorizedRole?: string;
  /** deadline of one auth-webhook call, body included (default 10 000 ms) */
  hookTimeoutMs?: number;
  /** deadline of one JWK set fetch (default 10 000 ms) */
  jwksTimeoutMs?: number;
  /** minimum time between two JWK set fetches triggered by an unknown `kid` (default 10 000 ms) */
  jwksMinRefetchMs?: number;
  /** maximum number of cached webhook answers (default 10 000; 0 disables the cache) */
  webhookCacheSize?: number;
  /** clock in ms since epoch (tests inject one; default Date.now) */
  now?: () => number;
  /** the engine's outbound client (policy, connections, histogram); default one of its own without a policy (tests) */
  outbound?: OutboundClient;
}

export interface AuthDescription {
  is_admin_secret_set: boolean;
  is_auth_hook_set: boolean;
  is_jwt_set: boolean;
  /** `{claims_namespace | claims_namespace_path, claims_format}` in JWT mode, else null (as Hasura) */
  jwt: Record<string, unknown> | null;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MIN_REFETCH_MS = 10_000;
const DEFAULT_CACHE_SIZE = 10_000;
const MAX_BODY_BYTES = 1024 * 1024;

const REQUIRES_SECRET = ' requires --admin-secret (SVC_GRAPHQL_ADMIN_SECRET) to be set';

const { true: TRUE_VALUES, false: FALSE_VALUES } = SESSION_BOOL_VALUES;

export { parseSessionBool, useBackendOnlyPermissions };

/** AuthOptions from the server configuration. */
export function authOptionsFromConfig(cfg: Config): AuthOptions {
  return {
    adminSecret: cfg.adminSecret,
    authHook: cfg.authHook,
    authHookMode: cfg.authHookMode,
    jwtSecret: cfg.jwtSecret,
    unauthorizedRole: cfg.unauthorizedRole,
  };
}

export class Authenticator {
  private readonly secretHash: Buffer | undefined;
  private readonly webhook: WebhookClient | undefined;
  private readonly jwt: JwtVerifier | undefined;
  private readonly unauthorizedRole: string | undefined;

  constructor(
    opts: AuthOptions,
    private readonly log?: AuthLogger,
  ) {
    const secret = opts.adminSecret === '' ? undefined : opts.adminSecret;
    const hook = opts.authHook === '' ? undefined : opts.authHook;
    const jwtRaw = opts.jwtSecret ?? undefined;
    const unauth = opts.unauthorizedRole === '' ? undefined : opts.unauthorizedRole;

    if (hook !== undefined && jwtRaw !== undefined) throw new Error('Fatal Error: Both webhook and JWT mode cannot be enabled at the same time');
    if (unauth !== undefined && (secret === undefined || hook !== undefined)) {
      throw new Error(
        `Fatal Error: --unauthorized-role (SVC_GRAPHQL_UNAUTHORIZED_ROLE)${REQUIRES_SECRET} and is not allowed when --auth-hook (SVC_GRAPHQL_AUTH_HOOK) is set`,
      );
    }
    if (hook !== undefined && secret === undefined) throw new Error(`Fatal Error : --auth-hook (SVC_GRAPHQL_AUTH_HOOK)${REQUIRES_SECRET}`);
    if (jwtRaw !== undefined && secret === undefined) throw new Error(`Fatal Error : --jwt-secret (SVC_GRAPHQL_JWT_SECRET)${REQUIRES_SECRET}`);

    const now = opts.now ?? Date.now;
    const outbound = opts.outbound ?? new OutboundClient();
    this.secretHash = secret === undefined ? undefined : sha256(secret);
    this.unauthorizedRole = unauth;

    if (hook !== undefined) {
      let u: URL;
      try {
        u = new URL(hook);
      } catch {
        throw new Error(`Fatal Error: --auth-hook (SVC_GRAPHQL_AUTH_HOOK): not a URL: ${hook}`);
      }
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('Fatal Error: --auth-hook (SVC_GRAPHQL_AUTH_HOOK): expected an http(s) URL');
      if (opts.authHookMode !== 'GET' && opts.authHookMode !== 'POST') {
        throw new Error(`Fatal Error: --auth-hook-mode (SVC_GRAPHQL_AUTH_HOOK_MODE): expected GET or POST, got ${String(opts.authHookMode)}`);
      }
      this.webhook = new WebhookClient({
        outbound,
        url: hook,
        mode: opts.authHookMode,
        timeoutMs: opts.hookTimeoutMs ?? DEFAULT_TIMEOUT_MS,
        maxBodyBytes: MAX_BODY_BYTES,
        cacheSize: opts.webhookCacheSize ?? DEFAULT_CACHE_SIZE,
        now,
        log,
      });
    }
    if (jwtRaw !== undefined) {
      this.jwt = new JwtVerifier(parseJwtConfig(jwtRaw), {
        outbound,
        now,
        log,
        fetchTimeoutMs: opts.jwksTimeoutMs ?? DEFAULT_TIMEOUT_MS,
        jwksMinRefetchMs: opts.jwksMinRefetchMs ?? DEFAULT_MIN_REFETCH_MS,
        maxBodyBytes: MAX_BODY_BYTES,
      });
    }
  }

  /**
   * Resolves when the authenticator can serve requests: with `jwk_url`, after
   * the first JWK set fetch; rejects when that fetch failed (Hasura treats it
   * as fatal at startup).
   */
  ready(): Promise<void> {
    return this.jwt ? this.jwt.ready() : Promise.resolve();
  }

  /** Resolves the caller of one request; throws SvcError with Hasura's status/code/message. */
  async resolve(headers: RequestHeaders, rawHeaders?: readonly string[], span?: Span): Promise<Session> {
    try {
      return await this.resolveInner(headers, rawHeaders, span);
    } catch (e) {
      if (e instanceof SvcError) throw e;
      this.log?.warn({ type: 'auth', detail: { message: (e as Error)?.message ?? String(e) } }, 'session resolution failed');
      throw err500('unexpected', 'internal error while resolving the session', '$', e);
    }
  }

  /**
   * The caller when no webhook or JWT is involved (no secret, the admin
   * secret sent, or the unauthorized role): answered without a promise, as
   * the GraphQL hot path wants. `undefined` means: call `resolve`.
   */
  resolveNow(raw: RequestHeaders, fromNode = false): Session | undefined {
    const headers = normalizeHeaders(raw, fromNode);
    if (this.secretHash === undefined) return this.fromHeaders(headers, true);
    const sent = headers.get(ADMIN_SECRET_HEADER) ?? headers.get(ACCESS_KEY_HEADER);
    if (sent === undefined && (this.webhook || this.jwt)) return undefined;
    return this.resolveWithoutHooks(headers, sent);
  }

  private resolveWithoutHooks(headers: Map<string, string>, sent: string | undefined): Session {
    if (sent !== undefined) {
      if (!timingSafeEqual(sha256(sent), this.secretHash!)) {
        throw err401('access-denied', `invalid ${ADMIN_SECRET_HEADER}/${ACCESS_KEY_HEADER}`);
      }
      return this.fromHeaders(headers, true);
    }
    if (this.unauthorizedRole !== undefined) {
      const role = this.unauthorizedRole;
      return { role, vars: withEntry(sessionVarsFromHeaders(headers), ROLE_HEADER, role), hasAdminCredentials: false };
    }
    throw err401('access-denied', `${ADMIN_SECRET_HEADER}/${ACCESS_KEY_HEADER} required, but not found`);
  }

  private async resolveInner(raw: RequestHeaders, rawHeaders?: readonly string[], span?: Span): Promise<Session> {
    const headers = normalizeHeaders(raw);
    if (this.secretHash === undefined) return this.fromHeaders(headers, true);
    const sent = headers.get(ADMIN_SECRET_HEADER) ?? headers.get(ACCESS_KEY_HEADER);
    if (sent === undefined && this.webhook) {
      const r = await this.webhook.resolve(headers, headerSpellings(raw, rawHeaders), span);
      const session: Session = { role: r.role, vars: withEntry(r.vars, ROLE_HEADER, r.role), hasAdminCredentials: false };
      if (r.expiresAt !== undefined) session.expiresAt = r.expiresAt;
      return session;
    }
    if (sent === undefined && this.jwt) {
      return this.jwt.resolve(headers, this.unauthorizedRole);
    }
    return this.resolveWithoutHooks(headers, sent);
  }

  /** Admin-capable caller: role from `x-svc-role` (admin when absent), variables from the headers. */
  private fromHeaders(headers: Map<string, string>, hasAdminCredentials: boolean): Session {
    const role = roleFrom(headers.get(ROLE_HEADER)) ?? ADMIN_ROLE;
    // (the role keeps the place of its header among the variables, last without one)
    const vars = sessionVarsFromHeaders(headers);
    vars[ROLE_HEADER] = role;
    const bo = vars[BACKEND_ONLY_HEADER];
    if (bo !== undefined && parseSessionBool(bo) === undefined) {
      throw err400(
        'bad-request',
        `${BACKEND_ONLY_HEADER}:  Not a valid boolean text. True values are ${JSON.stringify(TRUE_VALUES)} and  False values are ${JSON.stringify(FALSE_VALUES)}. All values are case insensitive`,
      );
    }
    return { role, vars, hasAdminCredentials };
  }

  describe(): AuthDescription {
    return {
      is_admin_secret_set: this.secretHash !== undefined,
      is_auth_hook_set: this.webhook !== undefined,
      is_jwt_set: this.jwt !== undefined,
      jwt: this.jwt ? this.jwt.describe() : null,
    };
  }

  /** Counters for tests and metrics. */
  stats(): { webhookCalls: number; jwksFetches: number } {
    return { webhookCalls: this.webhook?.calls ?? 0, jwksFetches: this.jwt?.jwksFetches ?? 0 };
  }

  /** Stops JWK refresh timers and aborts in-flight webhook / JWK requests. */
  close(): void {
    this.webhook?.close();
    this.jwt?.close();
  }
}
