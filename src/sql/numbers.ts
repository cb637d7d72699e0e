/**
 * How a JSON number written into a `numeric` column is spelled, which fixes
 * the scale PostgreSQL stores (`1.1` and `1.1000` are equal but print
 * differently). Hasura sends GraphQL mutation values as text in the format of
 * Haskell's `show` for Scientific (`-1.1`, `-1.0e-30`), and /v1/query values
 * as binary parameters, whose scale is the next multiple of 4 (`12345.6700`).
 * Both are reproduced here from the decimal text of the number.
 */
import type { NumberText } from '../model/values.js';

interface Decimal {
  negative: boolean;
  /** significant digits, no leading zeros ('' for zero) */
  digits: string;
  /** value = 0.digits × 10^point */
  point: number;
  /** the exponent of the coefficient as written (value = coefficient × 10^exp10) */
  exp10: number;
}

const NUMBER = /^\s*([+-]?)(\d+)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/;

function parseDecimal(text: string): Decimal | undefined {
  const m = NUMBER.exec(text);
  if (!m) return undefined;
  const int = m[2]!;
  const frac = m[3] ?? '';
  const e = Number(m[4] ?? '0');
  const all = int + frac;
  const exp10 = e - frac.length;
  // beyond PostgreSQL's numeric (131072 digits before the point, 16383 after): not written out in
  // full (a JSON numeral 1e1000000000 would be a string of a billion characters); the caller
  // passes the text as written and PostgreSQL refuses it
  if (!Number.isFinite(e) || Math.abs(e) > 200_000) return undefined;
  const lead = all.search(/[^0]/);
  if (lead < 0) return { negative: false, digits: '', point: 0, exp10: Math.min(exp10, 0) };
  let end = all.length;
  while (end > lead && all.charCodeAt(end - 1) === 48) end--; // trailing zeros (a loop: /0+$/ backtracks quadratically)
  const digits = all.slice(lead, end);
  // position of the decimal point relative to the first significant digit
  const point = all.length - lead + exp10;
  return { negative: m[1] === '-', digits, point, exp10 };
}

/** Haskell's `show` of a Scientific: fixed notation for 0.1 ≤ |x| < 10^7, else `d.ddde<n>`. */
export function scientificShow(text: string): string | undefined {
  const d = parseDecimal(text);
  if (!d) return undefined;
  if (d.digits === '') return '0.0';
  const sign = d.negative ? '-' : '';
  const { digits, point } = d;
  if (point < 0 || point > 7) return `${sign}${digits[0]}.${digits.length > 1 ? digits.slice(1) : '0'}e${point - 1}`;
  if (point === 0) return `${sign}0.${digits}`;
  const intPart = digits.slice(0, point).padEnd(point, '0');
  const fracPart = digits.slice(point) || '0';
  return `${sign}${intPart}.${fracPart}`;
}

/** The text of a numeric with the scale PostgreSQL's binary input gives it (multiples of 4 decimals). */
export function binaryNumericText(text: string): string | undefined {
  const d = parseDecimal(text);
  if (!d) return undefined;
  const scale = d.exp10 < 0 ? Math.ceil(-d.exp10 / 4) * 4 : 0;
  const sign = d.negative && d.digits !== '' ? '-' : '';
  if (d.digits === '') return scale > 0 ? `0.${'0'.repeat(scale)}` : '0';
  // all digits as an integer scaled by 10^scale
  const shift = d.point - d.digits.length + scale; // zeros to append (≥ 0 since scale covers every decimal)
  const scaled = d.digits + '0'.repeat(Math.max(shift, 0));
  if (scale === 0) return sign + scaled;
  const padded = scaled.padStart(scale + 1, '0');
  return `${sign}${padded.slice(0, padded.length - scale)}.${padded.slice(padded.length - scale)}`;
}

/** The number in positional notation (`-0.02` for `-2E-2`): what `money` input accepts. */
export function plainDecimalText(text: string): string | undefined {
  const d = parseDecimal(text);
  if (!d) return undefined;
  if (d.digits === '') return '0';
  const sign = d.negative ? '-' : '';
  if (d.point <= 0) return `${sign}0.${'0'.repeat(-d.point)}${d.digits}`;
  if (d.point >= d.digits.length) return sign + d.digits + '0'.repeat(d.point - d.digits.length);
  return `${sign}${d.digits.slice(0, d.point)}.${d.digits.slice(d.point)}`;
}

/** A number (or numeric text) in the given spelling; other values unchanged. */
export function numberText(value: unknown, how: NumberText): unknown {
  if (typeof value !== 'number' && typeof value !== 'string') return value;
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof value === 'number' && !Number.isFinite(value)) return value;
  const out = how === 'scientific' ? scientificShow(text) : binaryNumericText(text);
  return out ?? value;
}
