/**
 * The scheduler's clock: what "now" is for cron generation, due times, tolerance and retry times of
 * scheduled events. The system clock by default; tests run the scheduler on a simulated clock
 * (`--scheduler-clock`), so that an hour of cron events passes in a minute, identically in every
 * process given the same specification. Leases stay on the database's real clock.
 */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

/**
 * `<start>[@<anchor>][x<rate>]`: the clock reads `start` (an ISO time) at the real instant `anchor`
 * (epoch ms; default: when this is called) and runs `rate` times as fast as real time (default 1).
 */
export function parseClock(spec: string | undefined, now = Date.now()): Clock {
  if (spec === undefined || spec === '') return systemClock;
  const m = /^(.+?)(?:@(\d+))?(?:x(\d+(?:\.\d+)?))?$/.exec(spec.trim());
  const start = m ? Date.parse(m[1]!) : NaN;
  if (!m || Number.isNaN(start)) throw new Error(`expected <ISO time>[@<epoch ms>][x<rate>], got ${JSON.stringify(spec)}`);
  const anchor = m[2] !== undefined ? Number(m[2]) : now;
  const rate = m[3] !== undefined ? Number(m[3]) : 1;
  if (!(rate > 0)) throw new Error('the rate must be positive');
  return () => Math.floor(start + (Date.now() - anchor) * rate);
}
