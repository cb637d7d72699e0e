/**
 * The bounds of every time and count the delivery subsystem takes from configuration or from a
 * response. The API refuses values outside them (400 naming the key); values read back from the
 * catalog or from a webhook's response are clamped to them before use, so that no stored row or
 * answer can overflow a timer, a Date or a PostgreSQL timestamp.
 */

/** The largest signed 32-bit integer (PostgreSQL `int`). */
export const MAX_INT32 = 2_147_483_647;

/**
 * The longest request timeout, in seconds: Node's timers hold at most 2^31-1 ms (24.8 days); a
 * longer one fires after 1 ms. Longer timeouts are refused by the API (README, "Event triggers").
 */
export const MAX_TIMEOUT_SEC = Math.floor(MAX_INT32 / 1000);

/** The longest delay (retry interval, Retry-After, scheduled tolerance), in seconds: 10 years. */
export const MAX_DELAY_SEC = 10 * 365 * 24 * 3600;

/** `n` clamped to [min, max]; `fallback` when it is not a finite number. */
export function clampNumber(n: unknown, min: number, max: number, fallback: number): number {
  const x = typeof n === 'number' ? n : typeof n === 'string' && n.trim() !== '' ? Number(n) : NaN;
  if (!Number.isFinite(x)) return fallback;
  return Math.min(max, Math.max(min, x));
}

/** A request timeout in ms that a Node timer can hold (1 ms … MAX_TIMEOUT_SEC s). */
export const timerMs = (timeoutSec: unknown, fallbackSec = 60): number => Math.round(clampNumber(timeoutSec, 0.001, MAX_TIMEOUT_SEC, fallbackSec) * 1000);
