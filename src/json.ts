import { SvcError } from './errors.js';
/** aeson's name for the kind of a JSON value, as Hasura's error messages spell it. */
export function jsonKind(v: unknown): string {
  // undefined: a value that is not there (never "Object")
  if (v === null || v === undefined) return 'Null';
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
