/**
 * A resolved caller: the role a request runs as and its session variables.
 * Session-variable names are lower-cased (`x-svc-role`, `x-svc-user-id`);
 * values are strings as they arrived (header, webhook or JWT claims; JWT
 * array/object claims are JSON-encoded strings, e.g. allowed roles).
 */
export interface Session {
  role: string;
  /** all x-svc-* session variables, lower-cased names, including x-svc-role */
  vars: Record<string, string>;
  /** ms since epoch after which the session must be re-resolved (JWT exp, webhook cache-control/expires) */
  expiresAt?: number;
  /** request carried valid admin credentials (admin secret, or no secret configured) */
  hasAdminCredentials: boolean;
}

export const ADMIN_ROLE = 'admin';

export function isAdmin(s: Session): boolean {
  return s.role === ADMIN_ROLE;
}

/** Request headers as Node gives them: lower-cased names. */
export type RequestHeaders = Record<string, string | string[] | undefined>;
