/**
 * A resolved caller: the role a request runs as and its session variables.
 * Session-variable names are lower-cased (`x-svc-role`, `x-svc-user-id`);
 * values are strings as they arrived (header, webhook or JWT claims; JWT
 * array/object claims are JSON-encoded strings, e.g. allowed roles).
 *
 * Lives in core/: the executor, permissions, DML and metadata layers use it; the HTTP edge
 * (server/auth) builds it.
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

export const BACKEND_ONLY_HEADER = 'x-svc-use-backend-only-permissions';

const TRUE_VALUES = ['true', 't', 'yes', 'y'];
const FALSE_VALUES = ['false', 'f', 'no', 'n'];

export const SESSION_BOOL_VALUES = { true: TRUE_VALUES, false: FALSE_VALUES } as const;

/** Parse a Hasura boolean session value (`true`, `t`, `yes`, `y` / `false`, `f`, `no`, `n`; any case). */
export function parseSessionBool(v: string): boolean | undefined {
  const l = v.toLowerCase();
  if (TRUE_VALUES.includes(l)) return true;
  if (FALSE_VALUES.includes(l)) return false;
  return undefined;
}

/** Whether backend-only permissions apply: admin credentials and `x-svc-use-backend-only-permissions: true`. */
export function useBackendOnlyPermissions(s: Session): boolean {
  const v = s.vars[BACKEND_ONLY_HEADER];
  return s.hasAdminCredentials && v !== undefined && parseSessionBool(v) === true;
}
