/**
 * Strict argument readers for /v1/query operations. Messages follow the
 * aeson wording Hasura answers with ("key \"x\" not found", "parsing Object
 * failed, expected Object, but encountered String"), each with a JSON path.
 */
import { SvcError } from '../errors.js';
import { jsonKind } from '../json.js';
import type { QualifiedName } from './types.js';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type Obj = Record<string, unknown>;

const parseFailed = (message: string, path: string) => new SvcError(400, 'parse-failed', message, path);

export { jsonKind };

export function expectObject(v: unknown, path: string, what = 'Object'): Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw parseFailed(`parsing ${what} failed, expected Object, but encountered ${jsonKind(v)}`, path);
  }
  return v as Obj;
}

export function expectArray(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) throw parseFailed(`parsing [] failed, expected Array, but encountered ${jsonKind(v)}`, path);
  return v;
}

/** Reads keys of an args object; `done()` rejects unknown keys. */
export class ArgReader {
  private readonly seen = new Set<string>();
  readonly o: Obj;
  constructor(v: unknown, readonly path: string, what = 'Object', private readonly strict = true) {
    this.o = expectObject(v, path, what);
  }

  sub(key: string): string {
    return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${this.path}.${key}` : `${this.path}[${JSON.stringify(key)}]`;
  }

  has(key: string): boolean {
    return this.o[key] !== undefined;
  }

  raw(key: string): unknown {
    this.seen.add(key);
    return this.o[key];
  }

  required(key: string): unknown {
    this.seen.add(key);
    if (!(key in this.o)) throw parseFailed(`key ${JSON.stringify(key)} not found`, this.path);
    return this.o[key];
  }

  string(key: string): string;
  string(key: string, optional: true): string | undefined;
  string(key: string, optional = false): string | undefined {
    const v = optional ? this.raw(key) : this.required(key);
    if (optional && (v === undefined || v === null)) return undefined;
    if (typeof v !== 'string') throw parseFailed(`parsing Text failed, expected String, but encountered ${jsonKind(v)}`, this.sub(key));
    return v;
  }

  /** a non-empty name (roles, relationship names, collection names …) */
  name(key: string): string;
  name(key: string, optional: true): string | undefined;
  name(key: string, optional = false): string | undefined {
    const v = optional ? this.string(key, true) : this.string(key);
    if (v === '') throw parseFailed('empty string not allowed', this.sub(key));
    return v;
  }

  bool(key: string, dflt: boolean): boolean {
    const v = this.raw(key);
    if (v === undefined || v === null) return dflt;
    if (typeof v !== 'boolean') throw parseFailed(`parsing Bool failed, expected Boolean, but encountered ${jsonKind(v)}`, this.sub(key));
    return v;
  }

  int(key: string): number | undefined {
    const v = this.raw(key);
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v)) throw parseFailed(`parsing Int failed, expected Number, but encountered ${jsonKind(v)}`, this.sub(key));
    return v;
  }

  object(key: string): Obj;
  object(key: string, optional: true): Obj | undefined;
  object(key: string, optional = false): Obj | undefined {
    const v = optional ? this.raw(key) : this.required(key);
    if (optional && (v === undefined || v === null)) return undefined;
    return expectObject(v, this.sub(key));
  }

  table(key = 'table'): QualifiedName {
    return parseQualified(this.required(key), this.sub(key), 'QualifiedTable');
  }

  done(): void {
    if (!this.strict) return;
    for (const k of Object.keys(this.o)) {
      if (!this.seen.has(k)) throw parseFailed(`unexpected key ${JSON.stringify(k)}`, this.path);
    }
  }
}

export function parseQualified(v: unknown, path: string, what = 'QualifiedTable'): QualifiedName {
  if (typeof v === 'string') {
    if (v === '') throw parseFailed('empty string not allowed', path);
    return { schema: 'public', name: v };
  }
  const o = expectObject(v, path, what);
  const name = o.name;
  if (name === undefined) throw parseFailed('key "name" not found', path);
  if (typeof name !== 'string') throw parseFailed(`parsing Text failed, expected String, but encountered ${jsonKind(name)}`, `${path}.name`);
  const schema = o.schema ?? 'public';
  if (typeof schema !== 'string') throw parseFailed(`parsing Text failed, expected String, but encountered ${jsonKind(schema)}`, `${path}.schema`);
  return { schema, name };
}

export function parseColumnList(v: unknown, path: string): string[] | '*' {
  if (v === '*') return '*';
  const a = expectArray(v, path);
  return a.map((c, i) => {
    if (typeof c !== 'string') throw parseFailed(`parsing Text failed, expected String, but encountered ${jsonKind(c)}`, `${path}[${i}]`);
    return c;
  });
}

export function deepClone<T>(x: T): T {
  return structuredClone(x);
}

/**
 * For ops: read args with strict keys. Parse errors carry paths relative to
 * the operation's args (`$.role`), as Hasura reports them; semantic errors
 * use the op's request path (`$.args`).
 */
export const reader = (args: unknown, what?: string) => new ArgReader(args, '$', what);
