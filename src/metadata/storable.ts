/**
 * Values that go into the catalog as text or jsonb must be storable there: PostgreSQL refuses a NUL
 * character in text and in jsonb (`\u0000`), and a lone UTF-16 surrogate cannot be encoded as UTF-8
 * (jsonb refuses the escape; text would silently get U+FFFD). Checked at the API, so that such input
 * is a 400 naming the key's path, never a database error.
 */
import { SvcError, pathKey } from '../errors.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why the string cannot be stored, or undefined when it can. */
export function unstorable(s: string): string | undefined {
  if (s.includes('\0')) return 'the NUL character (\\u0000) is not allowed';
  if (LONE_SURROGATE.test(s)) return 'lone surrogates are not allowed (the text is not valid Unicode)';
  return undefined;
}

/** Throws a 400 `parse-failed` at the path of the first string (or object key) that cannot be stored. */
export function checkStorable(value: unknown, path: string): void {
  // iterative: a deeply nested value never exhausts the stack
  const stack: Array<[unknown, string]> = [[value, path]];
  while (stack.length) {
    const [v, p] = stack.pop()!;
    if (typeof v === 'string') {
      const why = unstorable(v);
      if (why) throw new SvcError(400, 'parse-failed', why, p);
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${p}[${i}]`]);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v).reverse()) {
        const why = unstorable(k);
        if (why) throw new SvcError(400, 'parse-failed', why, p);
        stack.push([x, p + pathKey(k)]);
      }
    }
  }
}
