/**
 * GraphQL input values (literals and variables) checked against the role's
 * input types with Hasura's messages, into a small tree (`InVal`) that the
 * schema's parsers turn into IR. A variable standing at a scalar or enum
 * position stays a reference (it becomes a statement parameter); a variable
 * anywhere else is used "structurally": its value shapes the plan, so the
 * plan is cached per value of that variable.
 */
import { jsonKind, JsonNumber, jsonText } from '../json.js';
import { GraphQLEnumType, GraphQLInputObjectType, GraphQLList, GraphQLNonNull, GraphQLScalarType, Kind, type GraphQLInputType, type ValueNode } from 'graphql';
import * as M from './messages.js';
import { scientificShow } from '../sql/numbers.js';
import { checkGeoJson } from './geojson.js';

export type InVal =
  | { kind: 'null' }
  /** `variable` (+ `path` inside it): the value is that variable's, bound per request */
  | { kind: 'scalar'; type: GraphQLScalarType; value: unknown; variable?: string; path?: (string | number)[] }
  | { kind: 'enum'; type: GraphQLEnumType; value: string; variable?: string }
  /** `variable`: the whole list is a variable (usable as one array parameter; reading `items` makes it structural) */
  | { kind: 'list'; items: InVal[]; variable?: string; itemType?: GraphQLScalarType | GraphQLEnumType }
  | { kind: 'object'; type: GraphQLInputObjectType; fields: Array<[string, InVal]> };

export { validationError, parseError } from './messages.js';
const { parseError } = M;

export interface VariableScope {
  /** coerced variable values */
  values: Record<string, unknown>;
  /** declared type of each variable */
  types: Map<string, GraphQLInputType>;
  /** a variable's value shapes the plan */
  markStructural(name: string): void;
  /** only a variable's shape (keys, list lengths, nulls, enum values) shapes the plan */
  markShape(name: string): void;
}

export function typeString(t: GraphQLInputType): string {
  return String(t);
}

function namedOf(t: GraphQLInputType): GraphQLInputType {
  let x = t;
  while (x instanceof GraphQLNonNull || x instanceof GraphQLList) x = x.ofType as GraphQLInputType;
  return x;
}

const nullable = (t: GraphQLInputType): GraphQLInputType => (t instanceof GraphQLNonNull ? (t.ofType as GraphQLInputType) : t);

/** A literal (possibly holding variables) as a JSON value; nested variables are structural. */
export function astToJson(node: ValueNode, scope: VariableScope): unknown {
  switch (node.kind) {
    case Kind.NULL:
      return null;
    case Kind.INT:
    case Kind.FLOAT: {
      // a numeral a double would change (digits past its precision, or a spelling such as 1.50
      // or 1e3 that json/jsonb keep) stays as written: a JsonNumber, its text given to the database
      const n = Number(node.value);
      return String(n) === node.value ? n : new JsonNumber(node.value);
    }
    case Kind.STRING:
      return node.value;
    case Kind.BOOLEAN:
      return node.value;
    case Kind.ENUM:
      return node.value;
    case Kind.LIST:
      return node.values.map((v) => astToJson(v, scope));
    case Kind.OBJECT: {
      const o: Record<string, unknown> = {};
      for (const f of node.fields) o[f.name.value] = astToJson(f.value, scope);
      return o;
    }
    case Kind.VARIABLE: {
      const name = node.name.value;
      if (!scope.types.has(name)) throw M.noSuchVariable(name, '$');
      scope.markStructural(name);
      return scope.values[name] ?? null;
    }
  }
}

/**
 * Checks a literal against a type. Returns undefined when `node` is absent.
 */
export function coerceLiteral(node: ValueNode | undefined, type: GraphQLInputType, path: string, scope: VariableScope): InVal | undefined {
  if (node === undefined) return undefined;
  if (node.kind === Kind.VARIABLE) return coerceVariableUse(node.name.value, type, path, scope);
  if (node.kind === Kind.NULL) {
    if (type instanceof GraphQLNonNull) throw M.nullForNonNullable(typeString(type), path);
    return { kind: 'null' };
  }
  const t = nullable(type);
  if (t instanceof GraphQLList) {
    const inner = t.ofType as GraphQLInputType;
    if (node.kind === Kind.LIST) {
      // an absent variable in a list is null
      return { kind: 'list', items: node.values.map((v, i) => coerceLiteral(v, inner, `${path}[${i}]`, scope) ?? { kind: 'null' as const }) };
    }
    return { kind: 'list', items: [coerceLiteral(node, inner, path, scope)!] };
  }
  if (t instanceof GraphQLInputObjectType) {
    if (node.kind !== Kind.OBJECT) throw M.expectingObject(path);
    const defs = t.getFields();
    const fields: Array<[string, InVal]> = [];
    checkDuplicates(
      t,
      node.fields.map((f) => f.name.value),
      path,
    );
    checkRequired(
      t,
      node.fields.map((f) => f.name.value),
      path,
    );
    for (const f of node.fields) {
      const name = f.name.value;
      const def = defs[name];
      if (!def) throw M.fieldNotFound(name, t.name, `${path}.${name}`);
      // a field given by an absent variable is absent
      const v = coerceLiteral(f.value, def.type, `${path}.${name}`, scope);
      if (v !== undefined) fields.push([name, v]);
    }
    return { kind: 'object', type: t, fields };
  }
  if (t instanceof GraphQLEnumType) {
    if (node.kind !== Kind.ENUM) throw M.expectingEnum(path);
    if (!t.getValue(node.value)) throw M.unexpectedEnumValue(node.value, t.name, path);
    return { kind: 'enum', type: t, value: node.value };
  }
  const s = t as GraphQLScalarType;
  if (node.kind === Kind.ENUM) throw M.unexpectedEnumForScalar(path);
  const value = astToJson(node, scope);
  if (!acceptsAnyJson(s)) checkScalar(s.name, value, path);
  return { kind: 'scalar', type: s, value };
}

/** Upstream checks an input object's required fields before its given ones (InputValue.hs validateObject). */
function checkRequired(t: GraphQLInputObjectType, given: string[], path: string): void {
  for (const def of Object.values(t.getFields())) {
    if (def.type instanceof GraphQLNonNull && def.defaultValue === undefined && !given.includes(def.name)) {
      throw M.requiredInputField(def.name, String(def.type), path);
    }
  }
}

function checkDuplicates(t: GraphQLInputObjectType, given: string[], path: string): void {
  const dups = given.filter((n, i) => given.indexOf(n) !== i);
  if (dups.length) throw M.duplicatedInputFields(t.name, [...new Set(dups)], path);
}

/**
 * May a variable of type `declared` stand at a position of type `position`?
 * Upstream's rule (InputValue.hs `isTypeAllowed`): the same named type and
 * list structure, and a non-null position needs a non-null variable.
 */
function typeAllowed(declared: GraphQLInputType, position: GraphQLInputType): boolean {
  if (position instanceof GraphQLNonNull && !(declared instanceof GraphQLNonNull)) return false;
  const d = nullable(declared);
  const p = nullable(position);
  if (p instanceof GraphQLList || d instanceof GraphQLList) {
    return p instanceof GraphQLList && d instanceof GraphQLList && typeAllowed(d.ofType as GraphQLInputType, p.ofType as GraphQLInputType);
  }
  return (d as { name: string }).name === (p as { name: string }).name;
}

function coerceVariableUse(name: string, type: GraphQLInputType, path: string, scope: VariableScope): InVal | undefined {
  const declared = scope.types.get(name);
  if (!declared) throw M.noSuchVariable(name, path);
  if (!typeAllowed(declared, type)) throw M.variableTypeMismatch(name, String(declared), String(type), path);
  const value = scope.values[name];
  const t = nullable(type);
  const sameLeaf =
    (t instanceof GraphQLScalarType || t instanceof GraphQLEnumType) &&
    namedOf(declared) === t &&
    !(declared instanceof GraphQLList || (declared instanceof GraphQLNonNull && declared.ofType instanceof GraphQLList)) &&
    (!(type instanceof GraphQLNonNull) || declared instanceof GraphQLNonNull);
  if (sameLeaf) {
    // an absent or null value leaves the argument out of the plan (a comparison with null is
    // dropped, a null limit is none): a plan is for null or for a value, never reused for the
    // other, so a variable that may be null keys the plan by which it is (no key for a non-null type)
    if (value === undefined || value === null || !(declared instanceof GraphQLNonNull)) scope.markShape(name);
    if (value === undefined) return undefined;
    if (value === null) return { kind: 'null' };
    if (t instanceof GraphQLEnumType) return { kind: 'enum', type: t, value: value as string, variable: name };
    return { kind: 'scalar', type: t as GraphQLScalarType, value, variable: name };
  }
  // a list of scalars given whole by a variable of the same type can be one array parameter
  const declaredList = nullable(declared);
  if (t instanceof GraphQLList && declaredList instanceof GraphQLList && value !== undefined && value !== null && Array.isArray(value)) {
    const item = t.ofType as GraphQLInputType;
    const itemNamed = nullable(item);
    if ((itemNamed instanceof GraphQLScalarType || itemNamed instanceof GraphQLEnumType) && namedOf(declaredList) === itemNamed) {
      const coerced = coerceJson(value, type, path);
      const items = coerced.kind === 'list' ? coerced.items : [];
      const lazy: InVal = {
        kind: 'list',
        variable: name,
        itemType: itemNamed,
        get items() {
          scope.markStructural(name);
          return items;
        },
      };
      return lazy;
    }
  }
  // an object or list given by a variable: its shape is part of the plan; its scalar leaves
  // are parameters (reading a leaf's value at compile time makes the whole value structural)
  if (value === undefined) {
    scope.markStructural(name);
    return undefined;
  }
  const coerced = coerceJson(value, type, path);
  scope.markShape(name);
  return leavesAsVariable(coerced, name, [], value, scope);
}

/**
 * The scalar leaves of a variable's coerced value as references to the
 * variable at their JSON path. `value` is a getter that marks the variable
 * structural: a parser that needs the value itself gets a plan keyed by it.
 */
function leavesAsVariable(v: InVal, name: string, path: (string | number)[], json: unknown, scope: VariableScope): InVal {
  switch (v.kind) {
    case 'scalar': {
      const { type } = v;
      const value = v.value;
      return {
        kind: 'scalar',
        type,
        variable: name,
        path,
        get value() {
          scope.markStructural(name);
          return value;
        },
      };
    }
    case 'list': {
      // a non-list value coerced to a one-item list keeps the item's path
      const items = Array.isArray(json)
        ? v.items.map((x, i) => leavesAsVariable(x, name, [...path, i], json[i], scope))
        : v.items.map((x) => leavesAsVariable(x, name, path, json, scope));
      return { kind: 'list', items };
    }
    case 'object':
      return {
        kind: 'object',
        type: v.type,
        fields: v.fields.map(([k, x]) => [k, leavesAsVariable(x, name, [...path, k], (json as Record<string, unknown>)[k], scope)]),
      };
    default:
      return v;
  }
}

/** The shape of a variable's value under its declared type: what a plan built for it depends on. */
export function shapeOf(value: unknown, type: GraphQLInputType): string {
  if (value === null || value === undefined) return 'n';
  const t = nullable(type);
  if (t instanceof GraphQLList) {
    const inner = t.ofType as GraphQLInputType;
    return Array.isArray(value) ? `[${value.map((x) => shapeOf(x, inner)).join(',')}]` : `1${shapeOf(value, inner)}`;
  }
  if (t instanceof GraphQLInputObjectType) {
    if (typeof value !== 'object' || Array.isArray(value) || value instanceof JsonNumber) return jsonText(value);
    const defs = t.getFields();
    const parts: string[] = [];
    for (const [k, x] of Object.entries(value as Record<string, unknown>)) {
      const def = defs[k];
      parts.push(`${JSON.stringify(k)}:${def ? shapeOf(x, def.type) : '?'}`);
    }
    return `{${parts.join(',')}}`;
  }
  if (t instanceof GraphQLEnumType) return jsonText(value);
  return 's';
}

/** Checks a JSON value (a variable's) against a type. */
export function coerceJson(value: unknown, type: GraphQLInputType, path: string): InVal {
  if (value === null || value === undefined) {
    if (type instanceof GraphQLNonNull) throw M.nullForNonNullable(typeString(type), path);
    return { kind: 'null' };
  }
  const t = nullable(type);
  if (t instanceof GraphQLList) {
    const inner = t.ofType as GraphQLInputType;
    if (Array.isArray(value)) return { kind: 'list', items: value.map((v, i) => coerceJson(v, inner, `${path}[${i}]`)) };
    return { kind: 'list', items: [coerceJson(value, inner, path)] };
  }
  if (t instanceof GraphQLInputObjectType) {
    if (typeof value !== 'object' || Array.isArray(value) || value instanceof JsonNumber) throw M.expectingJsonObject(path);
    const defs = t.getFields();
    const fields: Array<[string, InVal]> = [];
    checkRequired(t, Object.keys(value as object), path);
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const def = defs[k];
      if (!def) throw M.fieldNotFound(k, t.name, `${path}.${k}`);
      fields.push([k, coerceJson(v, def.type, `${path}.${k}`)]);
    }
    return { kind: 'object', type: t, fields };
  }
  if (t instanceof GraphQLEnumType) {
    if (typeof value !== 'string') throw M.expectingJsonEnum(path);
    if (!t.getValue(value)) throw M.unexpectedEnumValue(value, t.name, path);
    return { kind: 'enum', type: t, value };
  }
  const s = t as GraphQLScalarType;
  if (!acceptsAnyJson(s)) checkScalar(s.name, value, path);
  return { kind: 'scalar', type: s, value };
}

/** A custom scalar of the custom types (actions): any JSON value, passed to the handler as is. */
export const ANY_JSON_SCALAR = { svcAnyJson: true } as const;
const acceptsAnyJson = (s: GraphQLScalarType) => (s.extensions as { svcAnyJson?: boolean } | undefined)?.svcAnyJson === true;

const INT_NAMES: Record<string, string> = { Int: 'Int32', smallint: 'Int16', bigint: 'Int64' };
const INT_BOUNDS: Record<string, [bigint, bigint]> = {
  Int: [-(2n ** 31n), 2n ** 31n - 1n],
  smallint: [-(2n ** 15n), 2n ** 15n - 1n],
  bigint: [-(2n ** 63n), 2n ** 63n - 1n],
};
/** the same bounds as numbers (exact for Int and smallint; only compared with safe integers) */
const INT_BOUNDS_NUMBERS: Record<string, readonly [number, number]> = Object.fromEntries(
  Object.entries(INT_BOUNDS).map(([k, [lo, hi]]) => [k, [Number(lo), Number(hi)] as const]),
);

const FLOAT_NAMES: Record<string, string> = { Float: 'Float', float8: 'Double', numeric: 'Scientific', money: 'Scientific' };
const TEXT_NAMES = new Set(['String', 'citext', 'bpchar', 'ID']);
const ANY_JSON = new Set(['json', 'jsonb']);
const GEO = new Set(['geometry', 'geography']);

/**
 * Strings the database would accept for a type, checked before any SQL runs (PostgreSQL's input
 * syntax: ints and floats with surrounding blanks and a sign, NaN/Infinity for floats; uuids as
 * 32 hex digits with hyphens after any group of four and optional braces). Dates and times accept
 * PostgreSQL's many input styles, so only what cannot be one is refused (no digit and no special
 * word such as `now` or `infinity`).
 */
const INT_TEXT = /^\s*[+-]?\d+\s*$/;
const FLOAT_TEXT = /^\s*(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:nan|infinity|inf))\s*$/i;
const UUID_TEXT = /^\s*(?:\{(?:[0-9a-f]{4}-?){7}[0-9a-f]{4}\}|(?:[0-9a-f]{4}-?){7}[0-9a-f]{4})\s*$/i;
const DATETIME_WORDS = /^\s*(?:now|today|tomorrow|yesterday|epoch|[+-]?infinity|allballs)\s*$/i;
const DATETIME_TEXT = /^[\s0-9A-Za-z:.+\-/,_]*\d[\s0-9A-Za-z:.+\-/,_]*$/;
const DATETIME_NAMES: Record<string, string> = { timestamptz: 'UTCTime', timestamp: 'LocalTime', date: 'Day', time: 'TimeOfDay', timetz: 'ZonedTimeOfDay' };

const outOfBounds = (shown: string, path: string) =>
  parseError(`The value ${shown} lies outside the bounds or is not an integer.  Maybe it is a float, or is there integer overflow?`, path);

/**
 * Coerces a scalar's JSON value (a variable's, or a literal's) against its type before any SQL
 * runs, as GraphQL's CoerceVariableValues asks; every refusal is M.scalarMismatch (validation-failed
 * at the variable's or argument's path) or, for an integer out of range, upstream's parse-failed.
 * json/jsonb take any JSON; other database types not named here take a string (the database
 * parses it).
 */
export function checkScalar(name: string, value: unknown, path: string): void {
  if (value === null || ANY_JSON.has(name)) return;
  const kind = jsonKind(value);
  const fail = (expected: string, shown?: string): never => {
    throw M.scalarMismatch(expected, kind, path, shown);
  };
  if (name === 'Boolean') {
    if (kind !== 'Boolean') fail('Bool');
    return;
  }
  if (INT_NAMES[name]) {
    const [lo, hi] = INT_BOUNDS[name]!;
    if (value instanceof JsonNumber) {
      // a numeral kept as written: an integer compared exactly, anything else is not one
      const text = value.text;
      if (!INT_TEXT.test(text)) throw outOfBounds(scientificShow(text) ?? text, path);
      // past 20 digits no integer type holds it: no BigInt of a numeral a megabyte long
      if (text.length > 21 || BigInt(text) < lo || BigInt(text) > hi) throw outOfBounds(text, path);
      return;
    }
    if (kind === 'String') {
      const text = value as string;
      if (!INT_TEXT.test(text)) fail(INT_NAMES[name]!, text);
      const n = BigInt(text.trim());
      if (n < lo || n > hi) throw outOfBounds(text.trim(), path);
      return;
    }
    if (kind !== 'Number') fail(INT_NAMES[name]!);
    const n = value as number;
    // a safe integer compares exactly with the bounds as numbers (Int and smallint's are exact,
    // bigint's lie beyond 2^53): no BigInt per variable; others are compared as BigInts
    const [loN, hiN] = INT_BOUNDS_NUMBERS[name]!;
    if (Number.isSafeInteger(n) && n >= loN && n <= hiN) return;
    if (!Number.isInteger(n) || BigInt(n) < lo || BigInt(n) > hi) throw outOfBounds(scientificShow(String(n)) ?? String(n), path);
    return;
  }
  if (FLOAT_NAMES[name]) {
    if (kind === 'String') {
      // money also takes a currency format ("$1,000.00"): the database parses it
      if (name !== 'money' && !FLOAT_TEXT.test(value as string)) fail(FLOAT_NAMES[name]!, value as string);
      return;
    }
    if (kind !== 'Number') fail(FLOAT_NAMES[name]!);
    return;
  }
  if (name === 'uuid') {
    if (kind !== 'String') fail('UUID');
    if (!UUID_TEXT.test(value as string)) fail('UUID', value as string);
    return;
  }
  if (DATETIME_NAMES[name]) {
    if (kind !== 'String') fail(DATETIME_NAMES[name]!);
    const text = value as string;
    if (!DATETIME_WORDS.test(text) && !DATETIME_TEXT.test(text)) fail(DATETIME_NAMES[name]!, text);
    return;
  }
  if (kind === 'String') return;
  if (GEO.has(name)) {
    if (kind !== 'Object') fail('Object');
    checkGeoJson(value, path);
    return;
  }
  if (TEXT_NAMES.has(name)) fail('Text');
  // other database types are given as strings (the database parses them)
  if (kind === 'Object' || kind === 'Array') fail('Text');
}
