/**
 * Relay global ids and connection cursors (reference: schema/relay-schema.rst,
 * upstream's Note [Relay Node Id]). A node id is the base64 of the JSON array
 * `[1, "<schema>", "<table>", <pk value>…]`; a cursor is the base64 of a JSON
 * object holding the row's order-by values (`{"id" : 4}`). Both are built in
 * PostgreSQL; this module reads them back with upstream's (aeson's) messages.
 *
 * Numbers are kept as their text (a bigint key must survive the round trip),
 * so the JSON is read by a small lossless parser instead of JSON.parse.
 */
import { scientificShow } from '../sql/numbers.js';

/** A JSON value with numbers as written. */
export type JVal =
  | { t: 'null' }
  | { t: 'bool'; v: boolean }
  | { t: 'num'; text: string }
  | { t: 'str'; v: string }
  | { t: 'arr'; items: JVal[] }
  | { t: 'obj'; entries: Array<[string, JVal]> };

class JsonSyntaxError extends Error {}

const NUM = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WS = /[ \t\n\r]*/y;

/**
 * Parses `s` (one character per byte, as aeson reads bytes) into a JVal, or
 * throws aeson's message (`Failed reading: not a valid json value at '…'`).
 */
export function parseJsonBytes(s: string): JVal {
  let i = 0;
  const ws = () => {
    WS.lastIndex = i;
    WS.exec(s);
    i = WS.lastIndex;
  };
  const fail = (): never => {
    throw new JsonSyntaxError(`Failed reading: not a valid json value at '${s.slice(i)}'`);
  };
  const str = (): string => {
    const start = ++i;
    while (i < s.length && s[i] !== '"') i += s[i] === '\\' ? 2 : 1;
    if (i >= s.length) fail();
    const raw = Buffer.from(s.slice(start, i), 'latin1').toString('utf8');
    i++;
    try {
      return JSON.parse(`"${raw}"`) as string;
    } catch {
      return fail();
    }
  };
  const value = (depth: number): JVal => {
    if (depth > 64) fail();
    ws();
    const c = s[i];
    if (c === '{') {
      i++;
      const entries: Array<[string, JVal]> = [];
      ws();
      if (s[i] === '}') {
        i++;
        return { t: 'obj', entries };
      }
      for (;;) {
        ws();
        if (s[i] !== '"') fail();
        const k = str();
        ws();
        if (s[i] !== ':') fail();
        i++;
        entries.push([k, value(depth + 1)]);
        ws();
        if (s[i] === ',') i++;
        else if (s[i] === '}') {
          i++;
          return { t: 'obj', entries };
        } else fail();
      }
    }
    if (c === '[') {
      i++;
      const items: JVal[] = [];
      ws();
      if (s[i] === ']') {
        i++;
        return { t: 'arr', items };
      }
      for (;;) {
        items.push(value(depth + 1));
        ws();
        if (s[i] === ',') i++;
        else if (s[i] === ']') {
          i++;
          return { t: 'arr', items };
        } else fail();
      }
    }
    if (c === '"') return { t: 'str', v: str() };
    if (s.startsWith('true', i)) {
      i += 4;
      return { t: 'bool', v: true };
    }
    if (s.startsWith('false', i)) {
      i += 5;
      return { t: 'bool', v: false };
    }
    if (s.startsWith('null', i)) {
      i += 4;
      return { t: 'null' };
    }
    NUM.lastIndex = i;
    const m = NUM.exec(s);
    if (!m) return fail();
    i = NUM.lastIndex;
    return { t: 'num', text: m[0] };
  };
  const v = value(0);
  ws();
  if (i < s.length) throw new JsonSyntaxError('endOfInput');
  return v;
}

/** base64 (leniently, as upstream's decodeLenient) → JSON, or aeson's `Error in $: …`. */
export function decodeBase64Json(text: string): JVal | { error: string } {
  try {
    return parseJsonBytes(Buffer.from(text, 'base64').toString('latin1'));
  } catch (e) {
    if (e instanceof JsonSyntaxError) return { error: `Error in $: ${e.message}` };
    throw e;
  }
}

export function kindOf(v: JVal): string {
  switch (v.t) {
    case 'null':
      return 'Null';
    case 'bool':
      return 'Boolean';
    case 'num':
      return 'Number';
    case 'str':
      return 'String';
    case 'arr':
      return 'Array';
    case 'obj':
      return 'Object';
  }
}

/** A JVal as compact JSON text (aeson's encoding). */
export function jvalText(v: JVal): string {
  switch (v.t) {
    case 'null':
      return 'null';
    case 'bool':
      return String(v.v);
    case 'num':
      return v.text;
    case 'str':
      return JSON.stringify(v.v);
    case 'arr':
      return `[${v.items.map(jvalText).join(',')}]`;
    case 'obj':
      return `{${v.entries.map(([k, x]) => `${JSON.stringify(k)}:${jvalText(x)}`).join(',')}}`;
  }
}

/** A JVal as a JavaScript value (numbers may lose digits: for json/jsonb parameters only). */
export function jvalToJs(v: JVal): unknown {
  return JSON.parse(jvalText(v));
}

export interface NodeId {
  schema: string;
  table: string;
  values: JVal[];
}

/** A node id, or the message upstream gives (to follow `the node id is invalid: `). */
export function parseNodeId(text: string): NodeId | { error: string } {
  const v = decodeBase64Json(text);
  if ('error' in v) return v;
  if (v.t !== 'arr') return { error: `Error in $: parsing [] failed, expected Array, but encountered ${kindOf(v)}` };
  const [version, schema, table, ...values] = v.items;
  if (!version) return { error: 'Error in $: unexpected GUID format, found empty list' };
  if (version.t !== 'num') return { error: 'Error in $: unexpected GUID format, needs to start with a version number' };
  if (Number(version.text) !== 1) return { error: `Error in $: unsupported GUID version: ${scientificShow(version.text) ?? version.text}` };
  if (!schema || !table || values.length === 0) {
    return { error: 'Error in $: GUID version 1: expecting schema name, table name and at least one column value' };
  }
  for (const x of [schema, table]) {
    if (x.t !== 'str') return { error: `Error in $: parsing Text failed, expected String, but encountered ${kindOf(x)}` };
  }
  return { schema: (schema as { v: string }).v, table: (table as { v: string }).v, values };
}

/** The value at a key path of an object, or undefined. */
export function valueAtKeys(v: JVal, path: readonly string[]): JVal | undefined {
  let cur: JVal | undefined = v;
  for (const k of path) {
    if (!cur || cur.t !== 'obj') return undefined;
    // aeson keeps the last of duplicate keys
    let found: JVal | undefined;
    for (const [ek, ev] of cur.entries) if (ek === k) found = ev;
    cur = found;
  }
  return cur;
}

const NUMERIC_NAMES: Record<string, string> = {
  int2: 'Int16',
  int4: 'Int32',
  int8: 'Int64',
  float4: 'Float',
  float8: 'Double',
  numeric: 'Scientific',
  money: 'Scientific',
};

/**
 * Whether a JSON value can stand for a value of PostgreSQL type `typname`:
 * null when it can, else aeson's `parsing X failed, expected Y, but encountered Z`.
 */
export function scalarKindError(v: JVal, typname: string): string | null {
  if (v.t === 'null' || typname === 'json' || typname === 'jsonb') return null;
  const got = kindOf(v);
  const num = NUMERIC_NAMES[typname];
  if (num) return v.t === 'num' ? null : `parsing ${num} failed, expected Number, but encountered ${got}`;
  if (typname === 'bool') return v.t === 'bool' ? null : `parsing Bool failed, expected Boolean, but encountered ${got}`;
  if (typname === 'geometry' || typname === 'geography') return v.t === 'obj' ? null : `parsing GeoJSON failed, expected Object, but encountered ${got}`;
  return v.t === 'str' ? null : `parsing Text failed, expected String, but encountered ${got}`;
}

/** The text of a JSON scalar as a statement parameter (json/jsonb: the JSON itself). */
export function parameterText(v: JVal, typname: string): unknown {
  if (v.t === 'null') return null;
  if (typname === 'json' || typname === 'jsonb' || typname === 'geometry' || typname === 'geography') return jvalToJs(v);
  if (v.t === 'str') return v.v;
  if (v.t === 'num') return v.text;
  if (v.t === 'bool') return v.v;
  return jvalToJs(v);
}

/** One decoded value per text, for the parameters of one request (they read the same id or cursor). */
const memo = { text: '', value: undefined as JVal | { error: string } | undefined };
export function decodeMemo(text: string): JVal | { error: string } {
  if (memo.value !== undefined && memo.text === text) return memo.value;
  const value = decodeBase64Json(text);
  memo.text = text;
  memo.value = value;
  return value;
}
