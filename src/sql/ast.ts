/**
 * An immutable SQL fragment: a frozen list of trusted text chunks and
 * parameter references. Identifiers are quoted when the fragment is built;
 * values never enter the text except through `compileSql(…, {inline})`
 * (used by explain, which shows the statement with its values).
 *
 * Parameters:
 * - `session`: the whole session JSON; always `$1` when present,
 * - `sessionVar`: `($1::json->>'x-svc-…')` (inline: the value as a literal),
 * - `const`: a fixed text value (from the query text): rendered as a quoted
 *   literal, since the statement text is cached per query text anyway,
 * - `var`: a GraphQL variable bound per request through `encode`.
 */
import { quoteIdent, quoteLiteral } from './ident.js';

export type Param =
  | { readonly kind: 'session' }
  | { readonly kind: 'sessionVar'; readonly name: string }
  | { readonly kind: 'const'; readonly value: string | null }
  | { readonly kind: 'var'; readonly name: string; readonly path: readonly (string | number)[]; readonly encode: (v: unknown) => string | null };

type Chunk = string | Param;

export interface Sql {
  readonly chunks: readonly Chunk[];
}

const mk = (chunks: Chunk[]): Sql => Object.freeze({ chunks: Object.freeze(chunks) });

export const EMPTY: Sql = mk([]);

export function isSql(x: unknown): x is Sql {
  return typeof x === 'object' && x !== null && Array.isArray((x as Sql).chunks);
}

/** Trusted SQL text. */
export function raw(text: string): Sql {
  return mk([text]);
}

// quoting has one home (src/sql/ident.ts)
export { quoteIdent, quoteLiteral };

export function ident(...names: string[]): Sql {
  return mk([names.map(quoteIdent).join('.')]);
}

export function param(p: Param): Sql {
  return mk([p]);
}

export const SESSION: Param = Object.freeze({ kind: 'session' });

export function constParam(value: string | null): Sql {
  return param({ kind: 'const', value });
}

/** Tagged template: interpolations are Sql fragments (text is trusted). */
export function sql(strings: TemplateStringsArray, ...values: Sql[]): Sql {
  const out: Chunk[] = [];
  strings.forEach((s, i) => {
    if (s) out.push(s);
    if (i < values.length) out.push(...values[i]!.chunks);
  });
  return mk(merge(out));
}

export function join(items: readonly Sql[], sep: string): Sql {
  const out: Chunk[] = [];
  items.forEach((it, i) => {
    if (i > 0 && sep) out.push(sep);
    out.push(...it.chunks);
  });
  return mk(merge(out));
}

function merge(chunks: Chunk[]): Chunk[] {
  const out: Chunk[] = [];
  for (const c of chunks) {
    const last = out[out.length - 1];
    if (typeof c === 'string' && typeof last === 'string') out[out.length - 1] = last + c;
    else out.push(c);
  }
  return out;
}

export interface CompiledSql {
  text: string;
  /** parameter sources in `$n` order ($1 is the session when `usesSession`) */
  params: Param[];
  usesSession: boolean;
  /** session variables read by the statement */
  sessionVars: string[];
}

export interface InlineValues {
  session: Record<string, string>;
  variables: Record<string, unknown>;
}

/**
 * Renders the fragment. With `inline`, parameters are replaced by literals
 * (explain); otherwise each distinct parameter becomes `$n`, or `ref(n)` when given (the
 * multiplexed live-query statement reads parameter n of each subscriber from a batch row; the
 * numbering is the same, so `bindParams` gives each subscriber's values).
 */
export function compileSql(s: Sql, inline?: InlineValues, ref: (n: number) => string = (n) => `$${n}`): CompiledSql {
  const usesSession = s.chunks.some((c) => typeof c !== 'string' && (c.kind === 'session' || c.kind === 'sessionVar'));
  const params: Param[] = usesSession ? [SESSION] : [];
  const numbers = new Map<Param, number>();
  const sessionVars = new Set<string>();
  let text = '';
  for (const c of s.chunks) {
    if (typeof c === 'string') {
      text += c;
      continue;
    }
    if (c.kind === 'sessionVar') sessionVars.add(c.name);
    if (inline) {
      text += inlineParam(c, inline);
      continue;
    }
    switch (c.kind) {
      case 'session':
        text += ref(1);
        break;
      case 'sessionVar':
        text += `(${ref(1)}::json->>${quoteLiteral(c.name)})`;
        break;
      case 'const':
        // values written in the query text are part of the plan's key: inline them, so the
        // planner sees constants even in generic plans of prepared statements
        text += c.value === null ? 'NULL' : quoteLiteral(c.value);
        break;
      case 'var': {
        let n = numbers.get(c);
        if (n === undefined) {
          params.push(c);
          n = params.length;
          numbers.set(c, n);
        }
        text += ref(n);
        break;
      }
    }
  }
  return { text, params, usesSession, sessionVars: [...sessionVars] };
}

function inlineParam(p: Param, v: InlineValues): string {
  switch (p.kind) {
    case 'session':
      return `${quoteLiteral(JSON.stringify(v.session))}`;
    case 'sessionVar': {
      const val = v.session[p.name];
      return val === undefined ? 'NULL' : quoteLiteral(val);
    }
    case 'const':
      return p.value === null ? 'NULL' : quoteLiteral(p.value);
    case 'var': {
      const val = p.encode(valueAtPath(v.variables[p.name], p.path));
      return val === null ? 'NULL' : quoteLiteral(val);
    }
  }
}

export function valueAtPath(v: unknown, path: readonly (string | number)[]): unknown {
  let cur = v;
  for (const k of path) {
    if (cur === null || cur === undefined) return undefined;
    cur = (cur as Record<string | number, unknown>)[k];
  }
  return cur;
}

/** Values for `$n` of a compiled statement. */
export function bindParams(c: CompiledSql, session: Record<string, string>, variables: Record<string, unknown>): (string | null)[] {
  return c.params.map((p) => {
    switch (p.kind) {
      case 'session':
        return JSON.stringify(session);
      case 'sessionVar':
        return session[p.name] ?? null;
      case 'const':
        return p.value;
      case 'var':
        return p.encode(valueAtPath(variables[p.name], p.path));
    }
  });
}
