/**
 * Strict argument readers for /v1/query operations, and the one place that
 * words argument parse errors: upstream parses arguments with aeson (1.4.7,
 * as v1.3 shipped it), whose messages are `key "x" not found` and
 * `parsing <Type> failed, expected <JSON kind>, but encountered <JSON kind>`
 * (`prependContext` + `typeMismatch`), each with a JSON path. The HTTP
 * bodies of /v1/graphql and /v1/query and the /v1/query DML arguments use
 * the same builders.
 */
import { SvcError, pathKey } from '../errors.js';
import { jsonKind, isJsonObject } from '../json.js';
import type { QualifiedName } from '../model/metadata.js';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type Obj = Record<string, unknown>;

export const parseFailed = (message: string, path: string): SvcError => new SvcError(400, 'parse-failed', message, path);

/** aeson's `key "x" not found` (a required key is absent), at the object's path. */
export const keyNotFound = (key: string, path: string): SvcError => parseFailed(`key ${JSON.stringify(key)} not found`, path);

/**
 * aeson's type mismatch: `what` is the Haskell type being parsed (`Text`, `Int`, `Bool`,
 * `Object`, `[]`, `HashMap`, ...), `expected` the JSON kind it wanted.
 */
export const typeMismatch = (what: string, expected: string, v: unknown, path: string): SvcError =>
  parseFailed(`parsing ${what} failed, expected ${expected}, but encountered ${jsonKind(v)}`, path);

export const expectText = (v: unknown, path: string, what = 'Text'): string => {
  if (typeof v !== 'string') throw typeMismatch(what, 'String', v, path);
  return v;
};
export const expectBool = (v: unknown, path: string): boolean => {
  if (typeof v !== 'boolean') throw typeMismatch('Bool', 'Boolean', v, path);
  return v;
};
/** aeson's `Int` (a fractional number is "encountered Number" too, as upstream answers) */
export const expectInt = (v: unknown, path: string): number => {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw typeMismatch('Int', 'Number', v, path);
  return v;
};

export { jsonKind };

export function expectObject(v: unknown, path: string, what = 'Object'): Obj {
  if (!isJsonObject(v)) {
    throw typeMismatch(what, 'Object', v, path);
  }
  return v as Obj;
}

export function expectArray(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) throw typeMismatch('[]', 'Array', v, path);
  return v;
}

/** Reads keys of an args object; `done()` rejects unknown keys. */
export class ArgReader {
  private readonly seen = new Set<string>();
  readonly o: Obj;
  constructor(
    v: unknown,
    readonly path: string,
    what = 'Object',
    private readonly strict = true,
  ) {
    this.o = expectObject(v, path, what);
  }

  sub(key: string): string {
    return this.path + pathKey(key);
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
    if (!(key in this.o)) throw keyNotFound(key, this.path);
    return this.o[key];
  }

  string(key: string): string;
  string(key: string, optional: true): string | undefined;
  string(key: string, optional = false): string | undefined {
    const v = optional ? this.raw(key) : this.required(key);
    if (optional && (v === undefined || v === null)) return undefined;
    return expectText(v, this.sub(key));
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
    return expectBool(v, this.sub(key));
  }

  int(key: string): number | undefined {
    const v = this.raw(key);
    if (v === undefined || v === null) return undefined;
    return expectInt(v, this.sub(key));
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
  if (name === undefined) throw keyNotFound('name', path);
  const n = expectText(name, `${path}.name`);
  return { schema: expectText(o.schema ?? 'public', `${path}.schema`), name: n };
}

export function parseColumnList(v: unknown, path: string): string[] | '*' {
  if (v === '*') return '*';
  const a = expectArray(v, path);
  return a.map((c, i) => {
    return expectText(c, `${path}[${i}]`);
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
