/**
 * Bounds on what a remote schema sends (issue 30 item 1): an introspection is read only when it is
 * within a size, a type count, a member count and a nesting depth, and every type reference in it is
 * checked iteratively (a wrapper chain of bounded length, ending in a type the remote defines) before
 * any recursive walker (graphql-js, the role schema builder, the conflict checks) sees it. A remote
 * that breaks a bound is refused at add time and is an inconsistent object at reload or restart; it
 * never reaches the schema every request is built from. Responses of remotes are bounded the same
 * way (bytes, nesting depth) before they are copied into an answer.
 */
import type { IntrospectionQuery } from 'graphql';
import { jsonDeeperThan } from '../json.js';

export const REMOTE_LIMITS = {
  /** bytes of an introspection response */
  introspectionBytes: 16 * 1024 * 1024,
  /** bytes of a response to a query or mutation */
  responseBytes: 64 * 1024 * 1024,
  /** types of one remote (the introspection types included) */
  types: 10_000,
  /** fields, input fields or enum values of one type */
  membersPerType: 5_000,
  /** fields, arguments, input fields, enum values, interfaces and union members of one remote */
  members: 200_000,
  /** LIST/NON_NULL wrappers around one type reference (graphql-js's own introspection query asks for 9) */
  typeWrappers: 32,
  /** nesting of the introspection's JSON (objects and arrays) */
  introspectionDepth: 64,
  /** nesting of a response's JSON (objects and arrays) */
  responseDepth: 256,
} as const;

const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;
const NAMED_KINDS = new Set(['SCALAR', 'OBJECT', 'INTERFACE', 'UNION', 'ENUM', 'INPUT_OBJECT']);

export class RemoteBoundError extends Error {}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/**
 * Checks an introspection's `__schema` against REMOTE_LIMITS and the structural rules every later
 * walker relies on; throws RemoteBoundError with a message naming the first offending place.
 * `bytes`: the size of the response it was parsed from.
 */
export function checkIntrospectionBounds(s: IntrospectionQuery['__schema'], bytes: number): void {
  const L = REMOTE_LIMITS;
  const fail = (m: string): never => {
    throw new RemoteBoundError(m);
  };
  if (bytes > L.introspectionBytes) fail(`the remote's introspection is larger than ${L.introspectionBytes} bytes`);
  if (jsonDeeperThan(s, L.introspectionDepth)) fail(`the remote's introspection is nested deeper than ${L.introspectionDepth} levels`);
  const types = list((s as unknown as Json).types);
  if (types.length > L.types) fail(`the remote schema has ${types.length} types; at most ${L.types} are accepted`);
  const names = new Set<string>();
  for (const t of types) {
    const name = (t as Json).name as string;
    if (!NAME.test(name)) fail(`type name ${JSON.stringify(name)} is not a valid GraphQL name`);
    if (names.has(name)) fail(`type ${JSON.stringify(name)} is defined more than once`);
    names.add(name);
  }
  let members = 0;
  const count = (where: string, n: number) => {
    if (n > L.membersPerType) fail(`${where} has ${n} members; at most ${L.membersPerType} are accepted`);
    members += n;
    if (members > L.members) fail(`the remote schema has more than ${L.members} fields, arguments and values`);
  };
  /** a type reference: a bounded chain of wrappers around a type the remote defines */
  const ref = (r: unknown, where: string, mustExist = true) => {
    let x = r;
    for (let depth = 0; ; depth++) {
      if (depth > L.typeWrappers) fail(`the type of ${where} has more than ${L.typeWrappers} list/non-null wrappers`);
      if (!isObj(x)) fail(`the type of ${where} is not a type reference`);
      const o = x as Json;
      if (o.kind === 'LIST' || o.kind === 'NON_NULL') {
        const inner = o.ofType;
        if (o.kind === 'NON_NULL' && isObj(inner) && inner.kind === 'NON_NULL') fail(`the type of ${where} is a non-null of a non-null type`);
        x = inner;
        continue;
      }
      if (typeof o.kind !== 'string' || !NAMED_KINDS.has(o.kind)) fail(`the type of ${where} has an unknown kind ${JSON.stringify(o.kind)}`);
      if (typeof o.name !== 'string' || (mustExist && !names.has(o.name)))
        fail(`the type of ${where} refers to ${JSON.stringify(o.name)}, which the remote schema does not define`);
      return;
    }
  };
  const member = (v: unknown, where: string): Json => {
    if (!isObj(v)) return fail(`${where} is not an object`);
    if (typeof v.name !== 'string' || !NAME.test(v.name)) fail(`${where}: name ${JSON.stringify(v.name)} is not a valid GraphQL name`);
    return v;
  };
  for (const raw of types) {
    const t = raw as Json;
    const tn = t.name as string;
    if (typeof t.kind !== 'string' || !NAMED_KINDS.has(t.kind)) fail(`type ${JSON.stringify(tn)} has an unknown kind ${JSON.stringify(t.kind)}`);
    const fields = list(t.fields);
    const inputs = list(t.inputFields);
    const enums = list(t.enumValues);
    count(`type ${JSON.stringify(tn)}`, Math.max(fields.length, inputs.length, enums.length));
    count(`type ${JSON.stringify(tn)}`, list(t.interfaces).length + list(t.possibleTypes).length);
    for (const f of fields) {
      const fm = member(f, `a field of ${tn}`);
      const where = `${tn}.${fm.name as string}`;
      ref(fm.type, where);
      const args = list(fm.args);
      count(where, args.length);
      for (const a of args) {
        const am = member(a, `an argument of ${where}`);
        ref(am.type, `${where}(${am.name as string}:)`);
      }
    }
    for (const f of inputs) {
      const fm = member(f, `an input field of ${tn}`);
      ref(fm.type, `${tn}.${fm.name as string}`);
    }
    for (const e of enums) {
      const em = member(e, `an enum value of ${tn}`);
      if (em.name === 'true' || em.name === 'false' || em.name === 'null') fail(`enum value ${tn}.${em.name} is not a valid enum value name`);
    }
    // unknown interfaces and union members are reported with upstream's messages (introspect.ts)
    for (const i of [...list(t.interfaces), ...list(t.possibleTypes)]) ref(i, `a member or interface of ${tn}`, false);
  }
}

/** Checks a remote's parsed response against the nesting bound (the byte bound is the read's). */
export function responseTooDeep(v: unknown): boolean {
  return jsonDeeperThan(v, REMOTE_LIMITS.responseDepth);
}
