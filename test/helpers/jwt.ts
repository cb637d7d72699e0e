/** HS256 JWTs for tests: a `user` role session with `x-svc-user-id`, signed with TEST_HS_KEY. */
import { SignJWT } from 'jose';

export const TEST_HS_KEY = 'a-very-long-hmac-secret-of-at-least-32-bytes!!';
export const CLAIMS_NAMESPACE = 'https://svc.io/jwt/claims';

/** A token for role `user` and `userId`, expiring in `expSeconds` (negative: already expired). */
export function userJwt(userId: string, expSeconds = 3600, key = TEST_HS_KEY): Promise<string> {
  return new SignJWT({ [CLAIMS_NAMESPACE]: { 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': 'user', 'x-svc-user-id': userId } })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + expSeconds)
    .sign(new TextEncoder().encode(key));
}
