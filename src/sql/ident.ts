/**
 * Quoting, one place for the whole code base (src/sql/ast.ts re-exports it). Identifiers are always
 * quoted; literals only where PostgreSQL forbids parameters.
 */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * A string literal that reads the same whatever `standard_conforming_strings` is: quotes doubled,
 * and a value with a backslash written as an escape string (`E'a\\b'`), whose backslashes are
 * escapes under both settings (a plain `'a\b'` reads as `a\b` with the setting on, as `ab` with
 * it off).
 */
export function quoteLiteral(value: string): string {
  const q = `'${value.replace(/'/g, "''")}'`;
  return value.includes('\\') ? `E${q.replace(/\\/g, '\\\\')}` : q;
}

export function qualified(t: { schema: string; name: string }): string {
  return `${quoteIdent(t.schema)}.${quoteIdent(t.name)}`;
}
