import { randomBytes } from 'node:crypto';
import { SvcError } from './errors.js';

/**
 * A JSON number kept as its text, where a double would change it: a GraphQL literal such as
 * `9007199254740993`, `12345678901234567890.5`, or `1.50` and `1e3` (whose value a double holds,
 * but not their spelling, which json/jsonb keep); in a request body (`parseJsonExact`), a numeral
 * with more significant digits than a double keeps, or beyond its range. Parameters take its text
 * (bigint, numeric: exact), `jsonText` writes it as written (json/jsonb values, an action's or a
 * remote schema's request, cache keys); `JSON.stringify` elsewhere gets the nearest double.
 */
export class JsonNumber {
  readonly #text: string;
  constructor(text: string) {
    this.#text = text;
  }
  get text(): string {
    return this.#text;
  }
  toJSON(): number {
    return Number(this.#text);
  }
  toString(): string {
    return this.#text;
  }
}

/**
 * Markers: `jsonText` writes a JsonNumber as the string MARK + an index, replaced in its output by
 * the number's text; `parseJsonExact` swaps a numeral for one and its reviver puts a JsonNumber in
 * its place. MARK starts with a NUL and holds a nonce drawn at start, so no string a client sends can
 * pass for one.
 */
const NONCE = randomBytes(12).toString('base64url');
const MARK = `\u0000${NONCE}:`;
/** MARK as JSON source text */
const MARK_SOURCE = `\\u0000${NONCE}:`;
/** a marker as JSON.stringify writes it (NUL escaped as \u0000) */
const MARKED = new RegExp(`"\\\\u0000${NONCE}:(\\d+)"`, 'g');

/**
 * JSON text of a value as JSON.stringify writes it, but a JsonNumber as its own text (json and
 * jsonb parameters, bodies sent on: the number the client wrote, digit for digit).
 */
export function jsonText(v: unknown, replacer?: (key: string, value: unknown) => unknown): string {
  let kept: string[] | undefined;
  // the replacer sees the holder (`this`): a JsonNumber is found there before its toJSON's double
  const s = JSON.stringify(v, function (this: Record<string, unknown>, k: string, x: unknown) {
    const own = this[k];
    if (own instanceof JsonNumber) {
      (kept ??= []).push(own.text);
      return `${MARK}${kept.length - 1}`;
    }
    return replacer ? replacer.call(this, k, x) : x;
  }) as string | undefined;
  if (s === undefined) return 'null';
  return kept ? s.replace(MARKED, (_, i: string) => kept![Number(i)]!) : s;
}

/** a JSON numeral (RFC 8259) at a position (sticky) */
const NUMERAL = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
/** a numeral that might not survive a double: 16 digits (one point among them), or a 3-digit exponent; else JSON.parse is exact */
const MAYBE_INEXACT = /(?:\d\.?){16}|[eE][+-]?\d{3}/;
/** the smallest positive normal double: below it (subnormals) digits are lost */
const MIN_NORMAL = 2.2250738585072014e-308;

/**
 * Whether a double keeps a numeral's value: the shortest text of the double (what JSON.stringify
 * and String write) reads back as the same number. True for at most 15 significant digits within
 * the normal range (DBL_DIG); a numeral with more digits, or beyond the range, is kept as written.
 */
export function doubleKeeps(numeral: string): boolean {
  // the mantissa's significant digits: from its first non-zero digit to its last (one pass: a
  // numeral of a million zeros costs a million steps, not a million squared)
  let first = -1;
  let last = -1;
  let count = 0; // digits from the first non-zero one to the current one
  let sig = 0;
  for (let i = 0; i < numeral.length; i++) {
    const c = numeral.charCodeAt(i);
    if (c === 101 || c === 69) break; // e, E
    if (c < 48 || c > 57) continue; // sign, point
    if (first < 0 && c === 48) continue;
    if (first < 0) first = i;
    count++;
    if (c !== 48) {
      last = i;
      sig = count;
    }
  }
  if (last < 0) return true; // zero
  if (sig > 15) return false;
  const n = Math.abs(Number(numeral));
  return Number.isFinite(n) && n >= MIN_NORMAL;
}

/**
 * JSON.parse, but a numeral a double would change (`doubleKeeps`) is a JsonNumber holding its text,
 * as upstream's aeson keeps every number exact: a bigint or numeric variable such as
 * 9007199254740993 reaches the database digit for digit. Most bodies hold no such numeral (one
 * regular-expression test, then JSON.parse alone); otherwise each is swapped for a marker string
 * outside the strings of the text, and the reviver puts JsonNumbers in their place. Throws as
 * JSON.parse does on malformed text (its messages are not used: jsonSyntaxMessage reads the
 * original).
 */
export function parseJsonExact(text: string): unknown {
  if (!MAYBE_INEXACT.test(text)) return JSON.parse(text);
  const kept: string[] = [];
  let out = '';
  let from = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // a backslash escapes the next character
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) {
      inString = true;
      continue;
    }
    if (c !== 45 && (c < 48 || c > 57)) continue;
    NUMERAL.lastIndex = i;
    const m = NUMERAL.exec(text);
    if (!m) continue; // malformed: JSON.parse says so
    const numeral = m[0];
    if (!doubleKeeps(numeral)) {
      out += `${text.slice(from, i)}"${MARK_SOURCE}${kept.length}"`;
      kept.push(numeral);
      from = i + numeral.length;
    }
    i += numeral.length - 1;
  }
  if (!kept.length) return JSON.parse(text);
  out += text.slice(from);
  return JSON.parse(out, (k: string, v: unknown) => {
    // a numeral where a key belongs (`{1234567890123456789: 1}`): malformed, as JSON.parse says
    if (k.startsWith(MARK)) throw new SyntaxError('Expected property name in JSON');
    return typeof v === 'string' && v.startsWith(MARK) ? new JsonNumber(kept[Number(v.slice(MARK.length))] ?? v) : v;
  });
}
/**
 * A JSON object of a parsed body: not null, not an array, and not a JsonNumber (a numeral kept
 * exact is an object to `typeof`, never a JSON object: every "is this an object" check of a
 * parsed body goes through here).
 */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof JsonNumber);
}

/** aeson's name for the kind of a JSON value, as Hasura's error messages spell it. */
export function jsonKind(v: unknown): string {
  // undefined: a value that is not there (never "Object")
  if (v === null || v === undefined) return 'Null';
  if (v instanceof JsonNumber) return 'Number';
  if (Array.isArray(v)) return 'Array';
  switch (typeof v) {
    case 'string':
      return 'String';
    case 'number':
      return 'Number';
    case 'boolean':
      return 'Boolean';
    default:
      return 'Object';
  }
}

/**
 * Is a parsed JSON value nested deeper than `max` (objects and arrays)? Iterative, so that a
 * hostile body (10,000 nested `_not`, `bulk` in `bulk`) is measured without recursion; every
 * recursive walker behind the HTTP edge (boolean expressions, bulk, variable coercion) is then
 * safe from "Maximum call stack size exceeded".
 */
export function jsonDeeperThan(v: unknown, max: number): boolean {
  if (v === null || typeof v !== 'object') return false;
  const stack: Array<[unknown, number]> = [[v, 1]];
  while (stack.length) {
    const [x, d] = stack.pop()!;
    if (d > max) return true;
    const children = Array.isArray(x) ? x : Object.values(x as Record<string, unknown>);
    for (const c of children) if (c !== null && typeof c === 'object' && !(c instanceof JsonNumber)) stack.push([c, d + 1]);
  }
  return false;
}

/**
 * The `invalid-json` message of a body that does not parse, in the shape of upstream's aeson
 * (`eitherDecode'`): `Error in $: not enough input` for an empty or truncated body, else
 * `Error in $: Failed reading: <what the parser found and where>`. Bounded: the body itself is
 * never echoed (JSON.parse's message quotes it).
 */
export function jsonSyntaxMessage(text: string): string {
  if (text.trim() === '') return 'Error in $: not enough input';
  try {
    JSON.parse(text);
    return 'Error in $: not enough input';
  } catch (e) {
    const m = e instanceof Error ? e.message : String(e);
    const at = /at position (\d+)/.exec(m);
    if (/Unexpected end of JSON input/i.test(m) || (at && Number(at[1]) >= text.trimEnd().length)) return 'Error in $: not enough input';
    const detail = m.replace(/, ".*" is not valid JSON$/s, '').slice(0, 200);
    return `Error in $: Failed reading: ${detail}`;
  }
}

/** A request body as JSON: `invalid-json` (400) with the parser's detail when it is empty or malformed. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() !== '') {
    try {
      return parseJsonExact(text);
    } catch {
      /* the message below */
    }
  }
  throw new SvcError(400, 'invalid-json', jsonSyntaxMessage(text));
}

/** The value with every JsonNumber replaced by its nearest double (where numbers are read as doubles: metadata). */
export function withDoubles(v: unknown): unknown {
  if (v instanceof JsonNumber) return Number(v.text);
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      const y = withDoubles(x);
      if (y !== x) (out ??= v.slice())[i] = y;
    }
    return out ?? v;
  }
  let out: Record<string, unknown> | undefined;
  for (const k of Object.keys(v)) {
    const x = (v as Record<string, unknown>)[k];
    const y = withDoubles(x);
    if (y !== x) (out ??= { ...(v as Record<string, unknown>) })[k] = y;
  }
  return out ?? v;
}
