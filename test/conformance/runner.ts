/**
 * The project's conformance runner: a TypeScript port of the semantics of the reference runner
 * (/work/shared/conformance/run.mjs), which reproduces the upstream python harness
 * (hasura/graphql-engine v1.3.0 server/tests-py: conftest.py fixtures, validate.py check_query_f /
 * check_query). Self-contained: reads ./manifest.json and ./cases next to this file.
 *
 * - per test module, `module_setup` (clear_db.json) first;
 * - class `state`: per_class / per_method / mutations / custom (custom.scope class|method|none);
 *   setup and teardown files are POSTed to /v1/query and must answer 200; teardown runs after
 *   failures too (a failing class teardown fails the last passing test of the class);
 * - a test is a list of steps (case files); a case posts `query` to `url`, checks `status` and, if
 *   non-empty, `response` (python equality: lists ordered; objects of the GraphQL selection set
 *   ordered, everything else unordered; 1 == 1.0 == true) and `response_headers`;
 * - `X-Svc-Role: admin` on half of the header-less cases, deterministic by seed (FNV-1a);
 * - transports http, websocket (graphql-ws sub-protocol via the `ws` package) and subscription.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

const HERE = dirname(fileURLToPath(import.meta.url));
export const DEFAULT_MANIFEST = join(HERE, 'manifest.json');
export const DEFAULT_CASES = join(HERE, 'cases');

/**
 * The suites the project runs: the copy of the public suite, and the upstream v1.3 cases the public
 * suite lacks (taken from hasura/graphql-engine directly, see upstream/NOTICE.md). Item ids of the
 * upstream suite carry the prefix `upstream/`, so both share one passing list.
 */
export interface Suite {
  name: string;
  manifest: string;
  cases: string;
}
export const SUITES: readonly Suite[] = [
  { name: 'public', manifest: DEFAULT_MANIFEST, cases: DEFAULT_CASES },
  { name: 'upstream', manifest: join(HERE, 'upstream', 'manifest.json'), cases: join(HERE, 'upstream', 'cases') },
];
const REQUEST_TIMEOUT_MS = 10_000;
const ROLE_HEADER = 'X-Svc-Role';
const ADMIN_SECRET_HEADER = 'X-Svc-Admin-Secret';

// ------------------------------------------------------------------------------------------------
// manifest
// ------------------------------------------------------------------------------------------------

export type Transport = 'http' | 'websocket' | 'subscription';

export interface ManifestStep {
  file: string;
  transport: 'param' | Transport;
  add_auth?: boolean;
  via?: string;
  admin_secret_header?: string;
}

export interface ManifestTest {
  name: string;
  id: string;
  kind: 'yaml' | 'python' | string;
  transports?: string[];
  parametrized?: boolean;
  steps: ManifestStep[];
  needs?: string[];
  skip?: string;
  xfail?: string;
}

export interface ManifestClass {
  id: string;
  module: string;
  class: string;
  area: string;
  state: 'per_class' | 'per_method' | 'mutations' | 'custom';
  setup?: string[];
  teardown?: string[];
  values_setup?: string[];
  values_teardown?: string[];
  needs?: string[];
  skip?: string;
  custom?: { scope?: 'class' | 'method' | 'none'; runnable?: boolean };
  tests: ManifestTest[];
}

export interface Manifest {
  module_setup?: string[];
  classes: ManifestClass[];
}

export function loadManifest(path = DEFAULT_MANIFEST): Manifest {
  return JSON.parse(readFileSync(path, 'utf8')) as Manifest;
}

// ------------------------------------------------------------------------------------------------
// JSON with python semantics: exact numbers (int vs float), ordered objects
// ------------------------------------------------------------------------------------------------

export class JNum {
  readonly isInt: boolean;
  constructor(readonly raw: string) {
    this.isInt = /^-?\d+$/.test(raw);
  }
  toString(): string {
    return this.raw;
  }
}

/** A JSON object; `unordered` objects compare as python dicts, the others as CommentedMaps. */
export class JMap extends Map<string, JValue> {
  unordered = false;
}

export type JValue = null | boolean | string | JNum | JValue[] | JMap;

export function parseJSON(text: string): JValue {
  let i = 0;
  const n = text.length;
  const err = (m: string): never => {
    throw new SyntaxError(`${m} at offset ${i}`);
  };
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else break;
    }
  };
  function str(): string {
    let j = i + 1;
    let out = '';
    for (;;) {
      const k = text.indexOf('"', j);
      if (k < 0) err('unterminated string');
      let bs = 0;
      let p = k - 1;
      while (p >= j && text[p] === '\\') {
        bs++;
        p--;
      }
      if (bs % 2 === 0) {
        out = text.slice(i, k + 1);
        i = k + 1;
        break;
      }
      j = k + 1;
    }
    return JSON.parse(out) as string;
  }
  function value(): JValue {
    ws();
    if (i >= n) err('unexpected end of JSON');
    const c = text[i];
    if (c === '{') {
      i++;
      const m = new JMap();
      ws();
      if (text[i] === '}') {
        i++;
        return m;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') err('expected string key');
        const k = str();
        ws();
        if (text[i] !== ':') err("expected ':'");
        i++;
        m.set(k, value());
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return m;
        }
        err("expected ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const a: JValue[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return a;
      }
      for (;;) {
        a.push(value());
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return a;
        }
        err("expected ',' or ']'");
      }
    }
    if (c === '"') return str();
    if (text.startsWith('true', i)) {
      i += 4;
      return true;
    }
    if (text.startsWith('false', i)) {
      i += 5;
      return false;
    }
    if (text.startsWith('null', i)) {
      i += 4;
      return null;
    }
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m || m[0] === '' || m[0] === '-') err('unexpected character');
    i += m![0].length;
    return new JNum(m![0]);
  }
  const v = value();
  ws();
  if (i !== n) err('trailing data');
  return v;
}

export function stringify(v: JValue | undefined, indent: number | null = null, level = 0): string {
  const nl = indent === null ? '' : '\n' + ' '.repeat(indent * (level + 1));
  const nlEnd = indent === null ? '' : '\n' + ' '.repeat(indent * level);
  const sep = indent === null ? ':' : ': ';
  if (v === null || v === undefined) return 'null';
  if (v instanceof JNum) return v.raw;
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    return '[' + v.map((x) => nl + stringify(x, indent, level + 1)).join(',') + nlEnd + ']';
  }
  if (v instanceof Map) {
    if (v.size === 0) return '{}';
    return '{' + [...v].map(([k, x]) => nl + JSON.stringify(k) + sep + stringify(x, indent, level + 1)).join(',') + nlEnd + '}';
  }
  return JSON.stringify(v);
}

const isMap = (x: unknown): x is JMap => x instanceof JMap;

function pyTruthy(x: JValue | undefined): boolean {
  if (x === null || x === undefined || x === false) return false;
  if (x instanceof JNum) return Number(x.raw) !== 0;
  if (typeof x === 'string' || Array.isArray(x)) return x.length > 0;
  if (isMap(x)) return x.size > 0;
  return true;
}

/** python json.loads(json.dumps(x)): a deep copy whose objects are plain (unordered) dicts */
export function collapse(x: JValue): JValue {
  if (Array.isArray(x)) return x.map(collapse);
  if (isMap(x)) {
    const m = new JMap();
    for (const [k, v] of x) m.set(k, collapse(v));
    m.unordered = true;
    return m;
  }
  return x;
}

function deepcopy(x: JValue): JValue {
  if (Array.isArray(x)) return x.map(deepcopy);
  if (isMap(x)) {
    const m = new JMap();
    for (const [k, v] of x) m.set(k, deepcopy(v));
    m.unordered = x.unordered;
    return m;
  }
  return x;
}

/** python == between JSON numbers: exact int/float comparison */
function numEq(a: JNum, b: JNum): boolean {
  if (a.isInt && b.isInt) return BigInt(a.raw) === BigInt(b.raw);
  if (!a.isInt && !b.isInt) return Number(a.raw) === Number(b.raw);
  const f = Number(a.isInt ? b.raw : a.raw);
  const iv = BigInt(a.isInt ? a.raw : b.raw);
  return Number.isFinite(f) && Number.isInteger(f) && BigInt(f) === iv;
}

/** python == between JSON scalars (bool is an int) */
export function scalarEq(a: JValue | undefined, b: JValue | undefined): boolean {
  const asNum = (x: JValue | undefined) => (typeof x === 'boolean' ? new JNum(x ? '1' : '0') : x);
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b;
  const na = asNum(a);
  const nb = asNum(b);
  if (na instanceof JNum && nb instanceof JNum) return numEq(na, nb);
  if (typeof a === 'string' && typeof b === 'string') return a === b;
  if (a === null && b === null) return true;
  return false;
}

/** validate.equal_CommentedMap */
export function equalCM(m1: JValue | undefined, m2: JValue | undefined): boolean {
  if (Array.isArray(m1) && Array.isArray(m2)) {
    return m1.length === m2.length && m1.every((x, i) => equalCM(x, m2[i]));
  }
  if (isMap(m1) && isMap(m2)) {
    if (m1.size !== m2.size) return false;
    if (!m1.unordered && !m2.unordered) {
      const a = [...m1];
      const b = [...m2];
      return a.every(([k, v], i) => k === b[i]![0] && equalCM(v, b[i]![1]));
    }
    for (const [k, v] of m1) if (!m2.has(k) || !equalCM(v, m2.get(k))) return false;
    return true;
  }
  if (Array.isArray(m1) || Array.isArray(m2) || isMap(m1) || isMap(m2)) return false;
  return scalarEq(m1, m2);
}

// ------------------------------------------------------------------------------------------------
// minimal GraphQL parser (executable documents) with the grammar of graphql-core 2.x, which the
// python harness uses (no `null` literal, no block strings): enough for collapse_order_not_selset
// ------------------------------------------------------------------------------------------------

interface GqlField {
  kind: 'Field';
  alias: string | null;
  name: string;
  selectionSet: GqlSelectionSet | null;
}
interface GqlSpread {
  kind: 'FragmentSpread' | 'InlineFragment';
}
interface GqlSelectionSet {
  selections: Array<GqlField | GqlSpread>;
}
interface GqlDocument {
  definitions: Array<{ kind: 'OperationDefinition' | 'FragmentDefinition'; selectionSet: GqlSelectionSet }>;
}

export function gqlParse(source: unknown): GqlDocument {
  if (typeof source !== 'string') throw new TypeError('query is not a string');
  type Tok = { k: 'P' | 'N' | 'I' | 'F' | 'S'; v: string };
  const toks: Tok[] = [];
  let i = 0;
  const n = source.length;
  const isNameStart = (c: string) => /[_A-Za-z]/.test(c);
  const isNameCont = (c: string) => /[_0-9A-Za-z]/.test(c);
  while (i < n) {
    const c = source[i]!;
    if (c === '\uFEFF' || c === ' ' || c === '\t' || c === ',' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === '#') {
      while (i < n && source[i] !== '\n' && source[i] !== '\r') i++;
      continue;
    }
    if ('!$&():=@[]{}|'.includes(c)) {
      toks.push({ k: 'P', v: c });
      i++;
      continue;
    }
    if (c === '.') {
      if (source.startsWith('...', i)) {
        toks.push({ k: 'P', v: '...' });
        i += 3;
        continue;
      }
      throw new SyntaxError(`unexpected '.' at ${i}`);
    }
    if (isNameStart(c)) {
      let j = i + 1;
      while (j < n && isNameCont(source[j]!)) j++;
      toks.push({ k: 'N', v: source.slice(i, j) });
      i = j;
      continue;
    }
    if (c === '-' || /[0-9]/.test(c)) {
      const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(source.slice(i));
      if (!m || m[0] === '-' || m[0] === '') throw new SyntaxError(`invalid number at ${i}`);
      const next = source[i + m[0].length];
      if (next !== undefined && (next === '.' || isNameStart(next))) throw new SyntaxError(`invalid number at ${i}`);
      toks.push({ k: m[2] || m[3] ? 'F' : 'I', v: m[0] });
      i += m[0].length;
      continue;
    }
    if (c === '"') {
      // graphql-core 2 (used by the python harness) has no block strings
      if (source.startsWith('"""', i)) throw new SyntaxError(`block strings are not supported (at ${i})`);
      let j = i + 1;
      let out = '';
      for (;;) {
        if (j >= n) throw new SyntaxError('unterminated string');
        const d = source[j]!;
        if (d === '\n' || d === '\r') throw new SyntaxError('unterminated string');
        if (d === '"') break;
        if (d === '\\') {
          const e = source[j + 1]!;
          if (e === 'u') {
            const h = source.slice(j + 2, j + 6);
            if (!/^[0-9A-Fa-f]{4}$/.test(h)) throw new SyntaxError('bad unicode escape');
            out += String.fromCharCode(parseInt(h, 16));
            j += 6;
            continue;
          }
          const map: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
          if (!(e in map)) throw new SyntaxError('bad escape');
          out += map[e];
          j += 2;
          continue;
        }
        if (d < ' ' && d !== '\t') throw new SyntaxError('invalid character in string');
        out += d;
        j++;
      }
      toks.push({ k: 'S', v: out });
      i = j + 1;
      continue;
    }
    throw new SyntaxError(`unexpected character ${JSON.stringify(c)} at ${i}`);
  }
  let p = 0;
  const peek = (k: Tok['k'], v?: string) => p < toks.length && toks[p]!.k === k && (v === undefined || toks[p]!.v === v);
  const expect = (k: Tok['k'], v?: string): Tok => {
    if (!peek(k, v)) throw new SyntaxError(`expected ${v || k} at token ${p}`);
    return toks[p++]!;
  };
  const name = () => expect('N').v;
  function valueLit(isConst: boolean): void {
    if (peek('P', '$')) {
      if (isConst) throw new SyntaxError('variable in const');
      p++;
      name();
      return;
    }
    if (peek('I') || peek('F') || peek('S')) {
      p++;
      return;
    }
    // graphql-core 2 (used by the python harness) has no null literal: `null` is a syntax error
    if (peek('N')) {
      if (toks[p]!.v === 'null') throw new SyntaxError(`unexpected null at token ${p}`);
      p++;
      return;
    }
    if (peek('P', '[')) {
      p++;
      while (!peek('P', ']')) valueLit(isConst);
      p++;
      return;
    }
    if (peek('P', '{')) {
      p++;
      while (!peek('P', '}')) {
        name();
        expect('P', ':');
        valueLit(isConst);
      }
      p++;
      return;
    }
    throw new SyntaxError(`unexpected token at ${p}`);
  }
  function args(isConst: boolean): void {
    if (peek('P', '(')) {
      p++;
      do {
        name();
        expect('P', ':');
        valueLit(isConst);
      } while (!peek('P', ')'));
      p++;
    }
  }
  function directives(isConst: boolean): void {
    while (peek('P', '@')) {
      p++;
      name();
      args(isConst);
    }
  }
  function type(): void {
    if (peek('P', '[')) {
      p++;
      type();
      expect('P', ']');
    } else name();
    if (peek('P', '!')) p++;
  }
  function selectionSet(): GqlSelectionSet {
    expect('P', '{');
    const selections: GqlSelectionSet['selections'] = [];
    do {
      if (peek('P', '...')) {
        p++;
        if (peek('N') && toks[p]!.v !== 'on') {
          name();
          selections.push({ kind: 'FragmentSpread' });
          directives(false);
        } else {
          if (peek('N', 'on')) {
            p++;
            name();
          }
          directives(false);
          selectionSet();
          selections.push({ kind: 'InlineFragment' });
        }
      } else {
        let fname = name();
        let alias: string | null = null;
        if (peek('P', ':')) {
          p++;
          alias = fname;
          fname = name();
        }
        args(false);
        directives(false);
        selections.push({ kind: 'Field', alias, name: fname, selectionSet: peek('P', '{') ? selectionSet() : null });
      }
    } while (!peek('P', '}'));
    p++;
    return { selections };
  }
  const definitions: GqlDocument['definitions'] = [];
  if (toks.length === 0) throw new SyntaxError('empty document');
  while (p < toks.length) {
    if (peek('P', '{')) {
      definitions.push({ kind: 'OperationDefinition', selectionSet: selectionSet() });
      continue;
    }
    const t = expect('N').v;
    if (t === 'query' || t === 'mutation' || t === 'subscription') {
      if (peek('N')) name();
      if (peek('P', '(')) {
        p++;
        do {
          expect('P', '$');
          name();
          expect('P', ':');
          type();
          if (peek('P', '=')) {
            p++;
            valueLit(true);
          }
        } while (!peek('P', ')'));
        p++;
      }
      directives(false);
      definitions.push({ kind: 'OperationDefinition', selectionSet: selectionSet() });
    } else if (t === 'fragment') {
      const fn = name();
      if (fn === 'on') throw new SyntaxError('fragment named on');
      expect('N', 'on');
      name();
      directives(false);
      definitions.push({ kind: 'FragmentDefinition', selectionSet: selectionSet() });
    } else {
      throw new SyntaxError(`unsupported definition ${t}`); // type system definitions have no selection set
    }
  }
  return { definitions };
}

/** validate.collapse_order_not_selset */
export function collapseOrderNotSelset(resultInp: JValue, query: JValue | undefined): JValue {
  const result = deepcopy(resultInp);
  try {
    if (isMap(query) && query.has('query')) {
      const selset0 = gqlParse(query.get('query')).definitions[0]!.selectionSet;
      const go = (node: JValue | undefined, selset: GqlSelectionSet): void => {
        for (const field of selset.selections) {
          if (field.kind !== 'Field') throw new Error('fragment in selection set'); // python: AttributeError / KeyError
          const f = field as GqlField;
          if (!isMap(node) || !node.has(f.name)) throw new Error('field not in result');
          const v = node.get(f.name)!;
          if (f.selectionSet === null || !(isMap(v) || Array.isArray(v))) node.set(f.name, collapse(v));
          else if (Array.isArray(v)) for (const x of v) go(x, f.selectionSet);
          else go(v, f.selectionSet);
        }
      };
      if (!isMap(result)) throw new Error('result is not an object');
      if (result.has('data')) go(result.get('data'), selset0);
      if (result.has('errors')) result.set('errors', collapse(result.get('errors')!));
      const top = new JMap(result); // dict(result)
      top.unordered = true;
      return top;
    }
    return collapse(resultInp);
  } catch {
    return collapse(result);
  }
}

/** a short human readable explanation of the first difference */
export function firstDiff(exp: JValue | undefined, act: JValue | undefined, path = '$'): string {
  if (Array.isArray(exp) && Array.isArray(act)) {
    for (let i = 0; i < Math.min(exp.length, act.length); i++) {
      if (!equalCM(exp[i], act[i])) return firstDiff(exp[i], act[i], `${path}[${i}]`);
    }
    return `${path}: expected ${exp.length} elements, got ${act.length}`;
  }
  if (isMap(exp) && isMap(act)) {
    for (const [k, v] of exp) {
      if (!act.has(k)) return `${path}: missing key ${JSON.stringify(k)}`;
      if (!equalCM(v, act.get(k))) return firstDiff(v, act.get(k), `${path}.${k}`);
    }
    for (const k of act.keys()) if (!exp.has(k)) return `${path}: unexpected key ${JSON.stringify(k)}`;
    return `${path}: key order differs (expected ${stringify([...exp.keys()])}, got ${stringify([...act.keys()])})`;
  }
  const s = (x: JValue | undefined) => {
    const t = stringify(x);
    return t.length > 200 ? t.slice(0, 200) + '...' : t;
  };
  return `${path}: expected ${s(exp)}, got ${s(act)}`;
}

// ------------------------------------------------------------------------------------------------
// errors
// ------------------------------------------------------------------------------------------------

interface FailureDetail {
  expected?: JValue;
  actual?: JValue;
}

export class TestFailure extends Error {
  constructor(
    message: string,
    readonly detail: FailureDetail | null = null,
  ) {
    super(message);
  }
}

/** The engine went away: the run is aborted (`results` holds what was recorded so far). */
export class ConnectionLost extends Error {
  results: ConformanceResult[] = [];
}

const fail = (msg: string): never => {
  throw new TestFailure(msg);
};

function truncate(s: string, n: number): string {
  return s.length > n ? s.slice(0, n) + '...' : s;
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

function headerObj(h: JMap | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (h) for (const [k, v] of h) out[k] = v instanceof JNum ? v.raw : typeof v === 'string' ? v : stringify(v);
  return out;
}

// ------------------------------------------------------------------------------------------------
// options and results
// ------------------------------------------------------------------------------------------------

export interface ConformanceOptions {
  /** engine base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  /** which items to run, by item id (`module::Class::test` or `…[transport]` for parametrized tests) */
  filter?: (testId: string, item: { classId: string; area: string; transport: string }) => boolean;
  /** only these areas */
  areas?: string[];
  manifest?: string;
  cases?: string;
  /** the engine runs with this admin secret (sent like the harness's --hge-key) */
  adminSecret?: string | null;
  /** with adminSecret: also check requests without / with a wrong secret (default true) */
  forbiddenChecks?: boolean;
  /** seed of the random "X-Svc-Role: admin" header (default "0") */
  seed?: string;
  /** also run cases that read/write catalog tables directly */
  includeInternal?: boolean;
  /** `needs` met by helper servers the caller started (fixtures.ts: `actions_webhook_server`, `remote_graphql_server`) */
  fixtures?: string[];
  /** http | websocket | all (default all) */
  transport?: 'http' | 'websocket' | 'all';
  wsSubprotocol?: 'graphql-ws' | 'none';
  /** called after every class that ran something */
  onClass?: (cls: ManifestClass, results: ConformanceResult[]) => void;
}

export interface ConformanceResult {
  /** item id: the pytest id (`…::test_x` or `…::test_x[http]`) */
  id: string;
  class: string;
  area: string;
  transport: string;
  status: 'pass' | 'fail' | 'skip';
  /** why it failed or was skipped */
  message: string | null;
  /** a short expected/actual excerpt for response failures */
  diff: string | null;
  ms: number;
}

interface PlanItem {
  cls: ManifestClass;
  test: ManifestTest;
  param: string;
  id: string;
  skip: string | null;
}

const effTransport = (step: ManifestStep, p: string): string => (step.transport === 'param' ? p : step.transport);
const wsFamily = (t: string) => t === 'websocket' || t === 'subscription';

/**
 * Python `transact` fixtures of classes whose `custom.runnable` is false that the project reproduces
 * (from the upstream test file): /v1/query bodies posted around every test of the class.
 */
const REPRODUCED_FIXTURES: Record<string, { setup: unknown[]; teardown: unknown[] }> = {
  // test_schema_stitching.py TestRemoteSchemaBasic: mk_add_remote_q('simple 1', …/hello-graphql); teardown clear_metadata
  'test_schema_stitching.py::TestRemoteSchemaBasic': {
    setup: [
      {
        type: 'add_remote_schema',
        args: { name: 'simple 1', comment: 'testing simple 1', definition: { url: 'http://localhost:5000/hello-graphql', forward_client_headers: false } },
      },
    ],
    teardown: [{ type: 'clear_metadata', args: {} }],
  },
};

/**
 * /v1/query bodies posted after a test (whatever its outcome) to restore the state the upstream suite
 * had after it: the test that followed it upstream, and undid its effect, is not in the same suite.
 */
const FOLLOW_UPS: Record<string, unknown[]> = {
  // upstream's next test, test_replace_metadata_wo_remote_schemas (in upstream/, a later suite), replaced
  // the remote schema "test" away; left in place it shows in TestMetadataOrder's export
  'test_v1_queries.py::TestMetadata::test_replace_metadata': [{ type: 'bulk', args: [{ type: 'remove_remote_schema', args: { name: 'test' } }] }],
};

/** Every (class, test, transport) item of the selection with the reason it is skipped, if it is. */
export function plan(
  manifest: Manifest,
  o: Pick<ConformanceOptions, 'areas' | 'filter' | 'adminSecret' | 'includeInternal' | 'transport' | 'fixtures'> = {},
): Array<{ cls: ManifestClass; items: PlanItem[] }> {
  const satisfiable = new Set<string>(o.adminSecret != null ? ['admin_secret'] : []);
  if (o.includeInternal) satisfiable.add('catalog_internal');
  for (const f of o.fixtures ?? []) satisfiable.add(f);
  const transport = o.transport ?? 'all';
  const out: Array<{ cls: ManifestClass; items: PlanItem[] }> = [];
  for (const cls of manifest.classes) {
    if (o.areas && !o.areas.includes(cls.area)) continue;
    const items: PlanItem[] = [];
    for (const t of cls.tests) {
      if (t.kind !== 'yaml') continue;
      const params = t.transports && t.transports.length ? t.transports : ['http'];
      const parametrized = t.parametrized !== undefined ? t.parametrized : params.length > 1;
      for (const p of params) {
        const effs = t.steps.map((s) => effTransport(s, p));
        if (transport === 'http' && effs.some((x) => x !== 'http')) continue;
        if (transport === 'websocket' && !effs.some(wsFamily)) continue;
        const id = parametrized ? `${t.id}[${p}]` : t.id;
        if (o.filter && !o.filter(id, { classId: cls.id, area: cls.area, transport: p })) continue;
        let skip: string | null = null;
        // a python fixture the project reproduces is a fixture it has
        const missing = [...new Set([...(cls.needs || []), ...(t.needs || [])])].filter(
          (x) => !satisfiable.has(x) && !(x === 'custom_fixture' && REPRODUCED_FIXTURES[cls.id]),
        );
        if (cls.skip) skip = `skip: ${cls.skip}`;
        else if (t.skip) skip = `skip: ${t.skip}`;
        else if (t.xfail) skip = `xfail upstream: ${t.xfail}`;
        else if (missing.length) skip = `needs ${missing.join(', ')}`;
        else if (cls.state === 'custom' && cls.custom && cls.custom.runnable === false && !REPRODUCED_FIXTURES[cls.id]) skip = 'custom python fixture';
        items.push({ cls, test: t, param: p, id, skip });
      }
    }
    if (items.length) out.push({ cls, items });
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// the run
// ------------------------------------------------------------------------------------------------

class Run {
  private readonly caseCache = new Map<string, string>();
  readonly results: ConformanceResult[] = [];
  private readonly adminSecret: string | null;
  private readonly seed: string;
  private readonly forbidden: boolean;
  private readonly url: string;

  constructor(
    private readonly o: ConformanceOptions,
    private readonly casesDir: string,
  ) {
    this.adminSecret = o.adminSecret ?? null;
    this.seed = o.seed ?? '0';
    this.forbidden = o.forbiddenChecks ?? true;
    this.url = o.url.replace(/\/+$/, '');
  }

  async isReachable(): Promise<boolean> {
    try {
      const r = await fetch(this.url + '/', { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      await r.arrayBuffer().catch(() => undefined);
      return true;
    } catch {
      return false;
    }
  }

  private async post(path: string, body: JValue | undefined, headers: JMap | null): Promise<{ status: number; json: JValue; headers: Headers }> {
    let res: Response;
    try {
      res = await fetch(this.url + path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headerObj(headers) },
        body: stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (e) {
      const err = e as Error & { cause?: { code?: string; message?: string } };
      if (err && (err.name === 'TimeoutError' || err.name === 'AbortError')) fail(`POST ${path}: no response within ${REQUEST_TIMEOUT_MS / 1000} s`);
      if (!(await this.isReachable())) throw new ConnectionLost(`POST ${path}: ${err.cause?.code || err.message}`);
      fail(`POST ${path}: ${err.cause?.code || err.cause?.message || err.message}`);
    }
    let text = '';
    try {
      text = await res!.text();
    } catch (e) {
      fail(`POST ${path}: reading body failed: ${(e as Error).message}`);
    }
    let json: JValue = null;
    try {
      json = parseJSON(text);
    } catch {
      fail(`POST ${path}: HTTP ${res!.status}, response body is not JSON: ${JSON.stringify(text.slice(0, 200))}`);
    }
    return { status: res!.status, json, headers: res!.headers };
  }

  private loadCase(rel: string): JValue {
    const p = join(this.casesDir, rel);
    let text = this.caseCache.get(p);
    if (text === undefined) {
      if (!existsSync(p)) throw new TestFailure(`case file missing: ${rel}`);
      text = readFileSync(p, 'utf8');
      this.caseCache.set(p, text);
    }
    return parseJSON(text); // fresh copy: the harness mutates confs
  }

  /** conftest.setup_and_teardown / HGECtx.v1q_f */
  private async v1qFile(rel: string, what: string): Promise<void> {
    const q = this.loadCase(rel);
    const h = new JMap();
    if (this.adminSecret !== null) h.set(ADMIN_SECRET_HEADER, this.adminSecret);
    const r = await this.post('/v1/query', q, h);
    if (r.status !== 200) fail(`${what} ${rel}: expected status 200, got ${r.status}: ${truncate(stringify(r.json), 600)}`);
  }

  async runFiles(files: string[] | undefined, what: string): Promise<void> {
    for (const f of files || []) await this.v1qFile(f, what);
  }

  /** /v1/query bodies a reproduced python fixture posts (each must answer 200) */
  async runQueries(queries: unknown[], what: string): Promise<void> {
    for (const q of queries) {
      const h = new JMap();
      if (this.adminSecret !== null) h.set(ADMIN_SECRET_HEADER, this.adminSecret);
      const r = await this.post('/v1/query', parseJSON(JSON.stringify(q)), h);
      if (r.status !== 200) fail(`${what}: expected status 200, got ${r.status}: ${truncate(stringify(r.json), 600)}`);
    }
  }

  /** validate.test_forbidden_when_admin_secret_reqd */
  private async forbiddenChecks(conf: JMap): Promise<void> {
    const url = conf.get('url') as string;
    const status = url === '/v1/graphql' || url === '/v1beta1/relay' ? (scalarEq(conf.get('status'), new JNum('404')) ? [404] : [200]) : [401, 404];
    const hv = conf.get('headers');
    const headers = conf.has('headers') && isMap(hv) ? hv : new JMap();
    let r = await this.post(url, conf.get('query'), headers);
    if (!status.includes(r.status))
      fail(`admin secret required: request without admin secret to ${url} returned ${r.status} (expected ${status.join(' or ')})`);
    headers.set(ADMIN_SECRET_HEADER, randomBytes(30).toString('base64'));
    r = await this.post(url, conf.get('query'), headers);
    if (!status.includes(r.status))
      fail(`admin secret required: request with a wrong admin secret to ${url} returned ${r.status} (expected ${status.join(' or ')})`);
  }

  private compareResponse(actual: JValue, expected: JValue, query: JValue | undefined, where: string): void {
    const a = collapseOrderNotSelset(actual, query);
    const e = collapseOrderNotSelset(expected, query);
    if (!equalCM(a, e)) throw new TestFailure(`${where}response mismatch: ${firstDiff(e, a)}`, { expected, actual });
  }

  /** validate.check_query */
  private async checkQuery(conf: JValue, transport: string, step: ManifestStep, coinKey: string): Promise<void> {
    if (!isMap(conf)) fail('case is not an object');
    const c = conf as JMap;
    const hv = c.get('headers');
    let headers: JMap = c.has('headers') && isMap(hv) ? hv : new JMap();
    if (step.admin_secret_header && this.adminSecret !== null) {
      // test helpers check_query_admin_secret / check_query_secret (then add_auth=False)
      if (!c.has('headers') || !isMap(c.get('headers'))) {
        if (step.via === 'check_query_admin_secret') fail("case has no 'headers' (KeyError in check_query_admin_secret)");
        headers = new JMap();
        c.set('headers', headers);
      }
      headers.set(step.admin_secret_header, this.adminSecret);
    }
    // "No headers in conf => Admin role. Set the X-Hasura-Role header randomly"
    if (headers.size === 0 && (fnv1a(`${this.seed}|${coinKey}`) & 1) === 1) headers.set(ROLE_HEADER, 'admin');
    for (const k of transport === 'http' ? ['url', 'query', 'status'] : ['url', 'query']) {
      if (!c.has(k)) fail(`case has no '${k}' (KeyError in the python harness)`);
    }
    if (step.add_auth !== false && this.adminSecret !== null) {
      if (this.forbidden) await this.forbiddenChecks(c);
      headers.set(ADMIN_SECRET_HEADER, this.adminSecret);
    }
    if (transport === 'http') {
      const r = await this.post(c.get('url') as string, c.get('query'), headers);
      if (!scalarEq(new JNum(String(r.status)), c.get('status'))) {
        throw new TestFailure(`expected status ${stringify(c.get('status'))}, got ${r.status}`, { expected: c.get('response') ?? null, actual: r.json });
      }
      const exp = c.get('response');
      if (pyTruthy(exp)) this.compareResponse(r.json, exp!, c.get('query'), '');
      const eh = c.get('response_headers') ?? c.get('resp_headers');
      if (isMap(eh)) {
        for (const [k, v] of eh) {
          const got = r.headers.get(k);
          if (got !== (typeof v === 'string' ? v : stringify(v))) fail(`response header ${k}: expected ${stringify(v)}, got ${JSON.stringify(got)}`);
        }
      }
      return;
    }
    await this.wsQuery(c, headers, transport === 'subscription');
  }

  /** validate.validate_gql_ws_q over the subscriptions-transport-ws protocol */
  private async wsQuery(conf: JMap, headers: JMap, viaSubscription: boolean): Promise<void> {
    if (!conf.has('response')) fail("websocket transport needs a 'response' in the case");
    const url = conf.get('url');
    if (typeof url !== 'string' || !(url.endsWith('/graphql') || url.endsWith('/relay'))) fail(`websocket transport on a non-graphql url ${String(url)}`);
    const query = conf.get('query');
    const exp = conf.get('response')!;
    if (viaSubscription) {
      const text = isMap(query) ? query.get('query') : null;
      if (typeof text !== 'string' || !text.startsWith('query '))
        fail(`subscription transport: query does not start with 'query ': ${String(text).slice(0, 60)}`);
      (query as JMap).set('query', 'subscription' + (text as string).slice('query'.length).replace('{', ' @_multiple_top_level_fields {'));
    }
    try {
      gqlParse(isMap(query) ? query.get('query') : null);
    } catch (e) {
      fail(`websocket: query text does not parse as GraphQL: ${(e as Error).message}`);
    }
    const path = url === '/v1alpha1/graphql' || url === '/v1beta1/relay' ? url : '/v1/graphql';
    const wsUrl = this.url.replace(/^http/, 'ws') + path;
    const ws = this.o.wsSubprotocol === 'none' ? new WebSocket(wsUrl) : new WebSocket(wsUrl, ['graphql-ws']);
    const connQueue: JValue[] = [];
    const idQueue: JMap[] = [];
    let waiter: (() => void) | null = null;
    let closed: { code: number; reason: string } | null = null;
    let openErr: Error | null = null;
    let opened = false;
    const wake = () => {
      if (waiter) {
        const w = waiter;
        waiter = null;
        w();
      }
    };
    ws.on('open', () => {
      opened = true;
      wake();
    });
    ws.on('message', (data: WebSocket.RawData) => {
      let m: JValue;
      const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
      try {
        m = parseJSON(text);
      } catch {
        m = new JMap([['type', '<non-json frame>']]);
      }
      if (isMap(m) && m.has('id')) {
        if (m.get('id') === 'hge_test') idQueue.push(m);
      } else if (!isMap(m) || m.get('type') !== 'ka') connQueue.push(m);
      wake();
    });
    ws.on('close', (code: number, reason: Buffer) => {
      closed = { code, reason: reason.toString('utf8') };
      wake();
    });
    ws.on('error', (e: Error) => {
      openErr = e;
      wake();
    });
    const sleep = (ms: number) =>
      new Promise<void>((res) => {
        waiter = res;
        setTimeout(() => {
          if (waiter === res) {
            waiter = null;
            res();
          }
        }, ms);
      });
    const next = async <T extends JValue>(q: T[], what: string): Promise<T> => {
      const deadline = Date.now() + REQUEST_TIMEOUT_MS;
      while (q.length === 0) {
        const cl = closed as { code: number; reason: string } | null;
        if (cl) fail(`websocket closed (code ${cl.code}${cl.reason ? ', ' + cl.reason : ''}) while waiting for ${what}`);
        const left = deadline - Date.now();
        if (left <= 0) fail(`websocket: no ${what} within ${REQUEST_TIMEOUT_MS / 1000} s`);
        await sleep(left);
      }
      return q.shift()!;
    };
    try {
      // open
      const deadline = Date.now() + REQUEST_TIMEOUT_MS;
      while (!opened) {
        if (openErr || closed) break;
        if (Date.now() > deadline) fail('websocket: connection not opened within 10 s');
        await sleep(100);
      }
      if (ws.readyState !== WebSocket.OPEN) {
        if (!(await this.isReachable())) throw new ConnectionLost(`websocket ${wsUrl}: cannot connect`);
        const cl = closed as { code: number } | null;
        const er = openErr as Error | null;
        fail(`websocket: could not open ${wsUrl}${cl ? ` (close code ${cl.code})` : ''}${er ? ` (${er.message})` : ''}`);
      }
      const init = new JMap([
        ['type', 'connection_init'],
        ['payload', new JMap()],
      ]);
      if (headers.size > 0) (init.get('payload') as JMap).set('headers', headers);
      ws.send(stringify(init));
      const ack = await next(connQueue, 'connection_ack');
      if (!isMap(ack) || ack.get('type') !== 'connection_ack') fail(`websocket: expected connection_ack, got ${truncate(stringify(ack), 300)}`);
      ws.send(
        stringify(
          new JMap([
            ['id', 'hge_test'],
            ['type', 'start'],
            ['payload', query ?? null],
          ]),
        ),
      );
      const resp = await next(idQueue, 'response to start');
      const type = resp.get('type');
      if (type === 'complete') fail('websocket: got complete before the query response payload');
      if (isMap(exp) && (exp.has('errors') || exp.has('error'))) {
        if (type !== 'data' && type !== 'error') fail(`websocket: expected a data or error message, got ${truncate(stringify(resp), 300)}`);
      } else if (type !== 'data') {
        throw new TestFailure(`websocket: expected a data message, got type ${JSON.stringify(type)}`, { expected: exp, actual: resp });
      }
      if (!resp.has('payload')) fail(`websocket: message without payload: ${truncate(stringify(resp), 300)}`);
      if (viaSubscription) {
        ws.send(
          stringify(
            new JMap([
              ['id', 'hge_test'],
              ['type', 'stop'],
            ]),
          ),
        );
        if (connQueue.length > 0) fail(`websocket: unexpected message after stop: ${truncate(stringify(connQueue[0]), 300)}`);
      } else {
        const done = await next(idQueue, 'complete');
        if (done.get('type') !== 'complete') fail(`websocket: expected complete, got ${truncate(stringify(done), 300)}`);
      }
      this.compareResponse(resp.get('payload')!, exp, query, 'websocket ');
    } finally {
      try {
        ws.close();
      } catch {
        /* ignore */
      }
      // an unopened socket's close() emits an error: keep it from being unhandled
      ws.on('error', () => undefined);
    }
  }

  /** validate.check_query_f */
  async checkQueryFile(step: ManifestStep, transport: string, itemId: string, stepIdx: number): Promise<void> {
    const conf = this.loadCase(step.file);
    const via = step.via || 'check_query_f';
    if (Array.isArray(conf) && (via === 'check_query' || via === 'check_query_admin_secret')) {
      fail(`${step.file}: ${via} is given a list of queries (TypeError in the python harness)`);
    }
    // check_query_f reads conf['status'] of a single (non-list) case before running it
    if (!Array.isArray(conf) && via === 'check_query_f' && isMap(conf) && !conf.has('status')) {
      fail(`${step.file}: case has no 'status' (KeyError in check_query_f)`);
    }
    const confs = Array.isArray(conf) ? conf : [conf];
    for (let i = 0; i < confs.length; i++) {
      try {
        await this.checkQuery(confs[i]!, transport, step, `${itemId}|${stepIdx}|${i}`);
      } catch (e) {
        if (e instanceof TestFailure) {
          const d = Array.isArray(conf) ? ` #${i}` : '';
          const ci = confs[i];
          const desc = isMap(ci) && typeof ci.get('description') === 'string' ? ` (${ci.get('description') as string})` : '';
          e.message = `${step.file}${d}${desc}: ${e.message}`;
        }
        throw e;
      }
    }
  }
}

function describeFailure(e: unknown): { message: string; diff: string | null } {
  if (e instanceof TestFailure) return { message: e.message, diff: e.detail ? formatDiff(e.detail) : null };
  const err = e as Error | undefined;
  return { message: `internal error: ${err && err.stack ? err.stack.split('\n').slice(0, 3).join(' | ') : String(e)}`, diff: null };
}

function formatDiff(d: FailureDetail): string | null {
  if (d.expected === undefined && d.actual === undefined) return null;
  const e = stringify(d.expected ?? null, 2).split('\n');
  const a = stringify(d.actual ?? null, 2).split('\n');
  const lines = ['--- expected', ...e.slice(0, 16)];
  if (e.length > 16) lines.push(`... (${e.length - 16} more lines)`);
  lines.push('+++ actual', ...a.slice(0, 16));
  if (a.length > 16) lines.push(`... (${a.length - 16} more lines)`);
  return lines.map((l) => (l.length > 200 ? l.slice(0, 200) + '...' : l)).join('\n');
}

/**
 * Runs the selected items against `url` and returns one result per item (skipped ones included).
 * Throws ConnectionLost (with `.results` so far) when the engine stops answering.
 */
export async function runConformance(o: ConformanceOptions): Promise<ConformanceResult[]> {
  const manifest = loadManifest(o.manifest ?? DEFAULT_MANIFEST);
  const run = new Run(o, o.cases ?? DEFAULT_CASES);
  const results = run.results;
  if (!(await run.isReachable())) {
    const e = new ConnectionLost(`cannot connect to ${o.url}`);
    throw e;
  }
  const record = (it: PlanItem, status: ConformanceResult['status'], message: string | null, diff: string | null, ms: number) => {
    const r: ConformanceResult = { id: it.id, class: it.cls.id, area: it.cls.area, transport: it.param, status, message, diff, ms };
    results.push(r);
    return r;
  };
  const selection = plan(manifest, o);
  let currentModule: string | null = null;
  let moduleError: string | null = null;
  try {
    for (const { cls, items } of selection) {
      const runnable = items.filter((it) => !it.skip);
      for (const it of items) if (it.skip) record(it, 'skip', it.skip, null, 0);
      if (!runnable.length) continue;
      if (cls.module !== currentModule) {
        // HGECtx (module scoped fixture) runs queries/clear_db.yaml when a test module starts
        currentModule = cls.module;
        moduleError = null;
        try {
          await run.runFiles(manifest.module_setup || [], 'module setup');
        } catch (e) {
          if (e instanceof ConnectionLost) throw e;
          moduleError = describeFailure(e).message;
        }
      }
      const clsResults = await runClass(run, cls, runnable, moduleError, record);
      o.onClass?.(cls, clsResults);
    }
  } catch (e) {
    if (e instanceof ConnectionLost) e.results = results;
    throw e;
  }
  return results;
}

async function runClass(
  run: Run,
  cls: ManifestClass,
  runnable: PlanItem[],
  moduleError: string | null,
  record: (it: PlanItem, status: ConformanceResult['status'], message: string | null, diff: string | null, ms: number) => ConformanceResult,
): Promise<ConformanceResult[]> {
  const out: ConformanceResult[] = [];
  const note = (it: PlanItem, e: unknown, ms: number) => {
    const d = e ? describeFailure(e) : { message: null, diff: null };
    out.push(record(it, e ? 'fail' : 'pass', d.message, d.diff, ms));
  };
  if (moduleError) {
    for (const it of runnable) note(it, new TestFailure(`module setup failed: ${moduleError}`), 0);
    return out;
  }
  const classScoped = cls.state === 'per_class' || cls.state === 'mutations' || (cls.state === 'custom' && cls.custom?.scope === 'class');
  const methodScoped = cls.state === 'per_method' || (cls.state === 'custom' && cls.custom?.scope === 'method');
  const reproduced = cls.state === 'custom' && cls.custom?.runnable === false ? REPRODUCED_FIXTURES[cls.id] : undefined;
  if (classScoped) {
    let setupError: unknown = null;
    try {
      await run.runFiles(cls.setup, 'class setup');
    } catch (e) {
      if (e instanceof ConnectionLost) throw e;
      setupError = e;
    }
    if (setupError) {
      for (const it of runnable) note(it, new TestFailure(`class setup failed: ${describeFailure(setupError).message}`), 0);
      try {
        await run.runFiles(cls.teardown, 'class teardown');
      } catch (e) {
        if (e instanceof ConnectionLost) throw e;
      }
      return out;
    }
  }
  for (const it of runnable) {
    const t0 = Date.now();
    let err: unknown = null;
    try {
      if (methodScoped) await run.runFiles(cls.setup, 'setup');
      if (reproduced) await run.runQueries(reproduced.setup, 'fixture setup');
      if (cls.state === 'mutations') await run.runFiles(cls.values_setup, 'values setup');
      for (let s = 0; s < it.test.steps.length; s++) {
        const step = it.test.steps[s]!;
        await run.checkQueryFile(step, effTransport(step, it.param), it.id, s);
      }
    } catch (e) {
      if (e instanceof ConnectionLost) throw e;
      err = e;
    }
    // teardown runs even after a failure
    try {
      if (cls.state === 'mutations') await run.runFiles(cls.values_teardown, 'values teardown');
      if (methodScoped) await run.runFiles(cls.teardown, 'teardown');
      if (reproduced) await run.runQueries(reproduced.teardown, 'fixture teardown');
      if (FOLLOW_UPS[it.test.id]) await run.runQueries(FOLLOW_UPS[it.test.id]!, 'follow-up').catch(() => undefined);
    } catch (e) {
      if (e instanceof ConnectionLost) throw e;
      if (!err) err = e;
    }
    note(it, err, Date.now() - t0);
  }
  if (classScoped) {
    try {
      await run.runFiles(cls.teardown, 'class teardown');
    } catch (e) {
      if (e instanceof ConnectionLost) throw e;
      // pytest reports a fixture teardown error against the last test of the class
      const last = out[out.length - 1];
      if (last && last.status === 'pass') {
        last.status = 'fail';
        last.message = `class teardown failed: ${describeFailure(e).message}`;
      }
    }
  }
  return out;
}

/** Every suite of SUITES in turn against the same engine; the results concatenated. */
export async function runSuites(o: Omit<ConformanceOptions, 'manifest' | 'cases'>, suites: readonly Suite[] = SUITES): Promise<ConformanceResult[]> {
  const all: ConformanceResult[] = [];
  for (const s of suites) {
    try {
      all.push(...(await runConformance({ ...o, manifest: s.manifest, cases: s.cases })));
    } catch (e) {
      if (e instanceof ConnectionLost) e.results = [...all, ...e.results];
      throw e;
    }
  }
  return all;
}

/** Per-area totals, sorted by area. */
export function areaTotals(results: ConformanceResult[]): Map<string, { passed: number; failed: number; skipped: number }> {
  const m = new Map<string, { passed: number; failed: number; skipped: number }>();
  for (const r of results) {
    const a = m.get(r.area) ?? { passed: 0, failed: 0, skipped: 0 };
    a[r.status === 'pass' ? 'passed' : r.status === 'fail' ? 'failed' : 'skipped']++;
    m.set(r.area, a);
  }
  return new Map([...m].sort(([a], [b]) => a.localeCompare(b)));
}

export function formatTotals(results: ConformanceResult[]): string {
  const lines: string[] = [];
  const tot = { passed: 0, failed: 0, skipped: 0 };
  for (const [area, t] of areaTotals(results)) {
    lines.push(`  ${area.padEnd(22)} ${t.passed} passed, ${t.failed} failed${t.skipped ? `, ${t.skipped} skipped` : ''}`);
    tot.passed += t.passed;
    tot.failed += t.failed;
    tot.skipped += t.skipped;
  }
  lines.push(`${tot.passed} passed, ${tot.failed} failed${tot.skipped ? `, ${tot.skipped} skipped` : ''}`);
  return lines.join('\n');
}

/** `passing.txt`: one item id per line; blank lines and `#` comments ignored. */
export function readPassingList(path: string): string[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
}
