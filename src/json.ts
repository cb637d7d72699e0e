/** aeson's name for the kind of a JSON value, as Hasura's error messages spell it. */
export function jsonKind(v: unknown): string {
  if (v === null) return 'Null';
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
