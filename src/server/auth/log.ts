/** Where authentication reports what it skipped or refreshed (JWKS, webhook): the server's logger. */
export interface AuthLogger {
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
}
