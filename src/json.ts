import { SvcError } from './errors.js';

/**
 * A JSON number kept as its text, where a double would change it: a GraphQL literal such as
 * `9007199254740993`, `12345678901234567890.5`, or `1.50` and `1e3` (whose value a double holds,
 * but not their spelling, which json/jsonb keep). Parameters take its text (bigint, numeric: exact),
 * json/jsonb values are written with it (`jsonText`); anything else that serialises it
 * (`JSON.stringify`: an action's input, a log line) gets the nearest double, as a number.
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
 * JSON text of a value as JSON.stringify writes it, but a JsonNumber as its own text (json and
 * jsonb parameters: the number the client wrote, digit for digit).
 */
export function jsonText(v: unknown): string {
  if (v instanceof JsonNumber) return v.text;
  if (v === null || typeof v !== 'object' || typeof (v as { toJSON?: unknown }).toJSON === 'function') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      out += (i ? ',' : '') + (x === undefined || typeof x === 'function' || typeof x === 'symbol' ? 'null' : jsonText(x));
    }
    return `${out}]`;
  }
  let out = '{';
  let first = true;
  for (const k of Object.keys(v)) {
    const x: unknown = (v as Record<string, unknown>)[k];
    if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
    out += `${first ? '' : ','}${JSON.stringify(k)}:${jsonText(x)}`;
    first = false;
  }
  return `${out}}`;
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
    for (const c of children) if (c !== null && typeof c === 'object') stack.push([c, d + 1]);
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
      return JSON.parse(text);
    } catch {
      /* the message below */
    }
  }
  throw new SvcError(400, 'invalid-json', jsonSyntaxMessage(text));
}
