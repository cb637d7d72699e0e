/**
 * The `path` argument of json/jsonb columns: a simple JSONPath
 * (`$.a.b[0]`, `a`, `['key with spaces']`, `["你好"]`); `$.` is optional.
 */
export function parseJsonPath(s: string): (string | number)[] | string {
  const out: (string | number)[] = [];
  let i = 0;
  if (s.startsWith('$')) i = 1;
  const readKey = (): string | undefined => {
    let j = i;
    while (j < s.length && s[j] !== '.' && s[j] !== '[') j++;
    const k = s.slice(i, j);
    i = j;
    return k.length ? k : undefined;
  };
  let first = true;
  while (i < s.length) {
    const c = s[i];
    if (c === '.') {
      i++;
      if (s[i] === '[') continue;
      const k = readKey();
      if (k === undefined) return `invalid property name at ${i}`;
      out.push(k);
    } else if (c === '[') {
      i++;
      const q = s[i];
      if (q === "'" || q === '"') {
        const end = s.indexOf(q, i + 1);
        if (end < 0 || s[end + 1] !== ']') return 'unterminated string in brackets';
        out.push(s.slice(i + 1, end));
        i = end + 2;
      } else {
        const end = s.indexOf(']', i);
        if (end < 0) return 'missing ]';
        const n = s.slice(i, end);
        if (!/^\d+$/.test(n)) return `invalid array index: ${n}`;
        out.push(Number(n));
        i = end + 1;
      }
    } else if (first) {
      const k = readKey();
      if (k === undefined) return `unexpected character at ${i}`;
      out.push(k);
    } else {
      return `unexpected character ${JSON.stringify(c)} at ${i}`;
    }
    first = false;
  }
  return out;
}
