/**
 * Expiry parsing shared by the auth webhook (session expiry) and the JWK set
 * fetcher (refresh schedule): the `max-age` / `s-maxage` directive of a
 * Cache-Control value and the strict `%a, %d %b %Y %T GMT` Expires format.
 */

/** Seconds from a Cache-Control value (`max-age`, else `s-maxage`); undefined when neither parses. */
export function parseMaxAge(value: string): number | undefined {
  const directives = new Map<string, string>();
  for (const part of value.split(',')) {
    const p = part.trim();
    if (!p) continue;
    const eq = p.indexOf('=');
    const name = (eq < 0 ? p : p.slice(0, eq)).trim().toLowerCase();
    let v = eq < 0 ? '' : p.slice(eq + 1).trim();
    if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
    if (!directives.has(name)) directives.set(name, v);
  }
  for (const name of ['max-age', 's-maxage']) {
    const v = directives.get(name);
    if (v !== undefined && /^\d{1,12}$/.test(v)) return Number(v);
  }
  return undefined;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const EXPIRES_RE = /^(mon|tue|wed|thu|fri|sat|sun), (\d{1,2}) ([a-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/i;

/** Milliseconds since epoch from `Mon, 30 Mar 2020 13:25:18 GMT`; undefined for anything else. */
export function parseExpires(value: string): number | undefined {
  const m = EXPIRES_RE.exec(value.trim());
  if (!m) return undefined;
  const month = MONTHS.indexOf(m[3]!.toLowerCase());
  if (month < 0) return undefined;
  const [day, year, hh, mm, ss] = [m[2], m[4], m[5], m[6], m[7]].map(Number) as [number, number, number, number, number];
  if (hh > 23 || mm > 59 || ss > 60) return undefined;
  const t = Date.UTC(year, month, day, hh, mm, Math.min(ss, 59));
  const d = new Date(t);
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month || d.getUTCDate() !== day) return undefined;
  return t;
}
