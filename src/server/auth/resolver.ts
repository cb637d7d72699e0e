/**
 * Chooses the session resolver for the configuration.
 * TEMPORARY minimal resolver until the full authenticator lands.
 */
import type { Config } from '../../config/config.js';
import type { Logger } from '../../execute/interface.js';
import { SvcError } from '../../errors.js';
import type { Session, RequestHeaders } from './session.js';

export interface SessionResolverImpl {
  resolve(headers: RequestHeaders): Promise<Session>;
  describe(): Record<string, unknown>;
  close?(): void;
}

export function createSessionResolver(config: Config, _log: Logger): SessionResolverImpl {
  return {
    async resolve(headers) {
      const vars: Record<string, string> = {};
      for (const [k, v] of Object.entries(headers)) {
        if (k.startsWith('x-svc-') && v !== undefined) vars[k] = Array.isArray(v) ? v[0]! : v;
      }
      if (config.adminSecret && vars['x-svc-admin-secret'] !== config.adminSecret) {
        throw new SvcError(401, 'access-denied', 'invalid x-svc-admin-secret/x-svc-access-key');
      }
      delete vars['x-svc-admin-secret'];
      const role = vars['x-svc-role'] ?? 'admin';
      vars['x-svc-role'] = role;
      return { role, vars, hasAdminCredentials: true };
    },
    describe() {
      return { is_admin_secret_set: !!config.adminSecret, is_auth_hook_set: false, is_jwt_set: false, jwt: {} };
    },
  };
}
