/**
 * The small JSON path dialect of `claims_namespace_path` and `claims_map`:
 * `$`, `$.a.b`, `$['a.b']`, `$["a"]`, `$.a[0]` (the leading `$` is optional).
 */
export type JsonPath = (string | number)[];

export function parseJsonPath(input: string): JsonPath {
  const s = input.trim();
  let i = 0;
  const path: JsonPath = [];
  if (s[i] === '$') i++;
  if (i === s.length && s.length > 0) return path;
  if (s.length === 0) throw new Error('empty JSON path');
  while (i < s.length) {
    const c = s[i]!;
    if (c === '.') {
      i++;
      let j = i;
      while (j < s.length && s[j] !== '.' && s[j] !== '[') j++;
      if (j === i) throw new Error(`expected a key after '.' at position ${i}`);
      path.push(s.slice(i, j));
      i = j;
    } else if (c === '[') {
      i++;
      const q = s[i];
      if (q === "'" || q === '"') {
        i++;
        let key = '';
        while (i < s.length && s[i] !== q) {
          if (s[i] === '\\' && i + 1 < s.length) i++;
          key += s[i];
          i++;
        }
        if (s[i] !== q || s[i + 1] !== ']') throw new Error(`unterminated key at position ${i}`);
        i += 2;
        path.push(key);
      } else {
        let j = i;
        while (j < s.length && /[0-9]/.test(s[j]!)) j++;
        if (j === i || s[j] !== ']') throw new Error(`expected an index or a quoted key at position ${i}`);
        path.push(Number(s.slice(i, j)));
        i = j + 1;
      }
    } else if (i === 0) {
      // `a.b` without `$`: first key without a leading dot
      let j = i;
      while (j < s.length && s[j] !== '.' && s[j] !== '[') j++;
      path.push(s.slice(i, j));
      i = j;
    } else {
      throw new Error(`unexpected character ${JSON.stringify(c)} at position ${i}`);
    }
  }
  return path;
}

/** The value at `path`, or undefined when some element is missing. Own properties only. */
export function getJsonPath(root: unknown, path: JsonPath): unknown {
  let cur: unknown = root;
  for (const el of path) {
    if (typeof el === 'number') {
      if (!Array.isArray(cur) || el >= cur.length) return undefined;
      cur = cur[el];
    } else {
      if (cur === null || typeof cur !== 'object' || Array.isArray(cur) || !Object.hasOwn(cur, el)) return undefined;
      cur = (cur as Record<string, unknown>)[el];
    }
  }
  return cur;
}
