/**
 * A REST call's variables (Hasura v2's Server/Rest.hs `resolveVar`): the URL template's variables
 * and the query string's parameters are text, read by the type the query declares for them; a JSON
 * body's keys are JSON values, passed as they are. A parameter the query does not declare is refused
 * ("Unexpected variable x", upstream's message), and so is one given twice. The values are then
 * coerced by the GraphQL pipeline exactly as a /v1/graphql request's variables are.
 *
 * Text is read as: Boolean — `true`/`false`, or a bare key (`?flag`) for true; Int, smallint, Float,
 * float8 — a JSON number when it is one (else the text, so GraphQL reports the mismatch); json, jsonb,
 * geometry, geography and lists — JSON; every other type (String, ID, uuid, bigint, numeric, dates,
 * enums, …) — the text itself (bigint and numeric keep their precision: the pipeline accepts them as
 * strings). An empty value of a nullable variable is null, as upstream.
 */
import { Kind, type OperationDefinitionNode, type TypeNode } from 'graphql';
import { SvcError } from '../errors.js';
import { jsonDeeperThan, parseJsonExact } from '../json.js';

const badRequest = (message: string) => new SvcError(400, 'bad-request', message, '$');

const INT = new Set(['Int', 'smallint']);
const FLOAT = new Set(['Float', 'float8']);
const JSON_TYPES = new Set(['json', 'jsonb', 'geometry', 'geography']);
const INT_TEXT = /^-?\d+$/;
const NUMBER_TEXT = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

export interface RestSources {
  /** the URL template's variables (decoded path segments) */
  path: Record<string, string>;
  /** the query string's parameters, in order */
  query: Array<[string, string]>;
  /** the JSON body's keys (an object), if any */
  body?: Record<string, unknown>;
}

/** The text of a URL or query-string parameter as the value of a variable of type `type`. */
export function textValue(name: string, text: string, type: TypeNode, maxDepth: number): unknown {
  const nullable = type.kind !== Kind.NON_NULL_TYPE;
  const t = type.kind === Kind.NON_NULL_TYPE ? type.type : type;
  const json = (what: string) => {
    let v: unknown;
    try {
      v = parseJsonExact(text);
    } catch {
      throw badRequest(`the value of variable ${name} is not ${what} JSON`);
    }
    if (jsonDeeperThan(v, maxDepth)) throw badRequest(`the value of variable ${name} is nested deeper than ${maxDepth} levels`);
    return v;
  };
  if (t.kind === Kind.LIST_TYPE) {
    if (nullable && text === '') return null;
    return json('a list in');
  }
  const named = t.name.value;
  if (named === 'Boolean') {
    if (text === '' || text === 'true') return true;
    if (text === 'false') return false;
    return text;
  }
  if (nullable && text === '') return null;
  if (INT.has(named)) return INT_TEXT.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : text;
  if (FLOAT.has(named)) return NUMBER_TEXT.test(text) ? Number(text) : text;
  if (JSON_TYPES.has(named)) return json('valid');
  return text;
}

/** The variables of a call: every declared variable that one of the sources gives. */
export function restVariables(op: OperationDefinitionNode, sources: RestSources, maxDepth: number): Record<string, unknown> {
  const types = new Map((op.variableDefinitions ?? []).map((d) => [d.variable.name.value, d.type]));
  const out: Record<string, unknown> = {};
  const given = new Set<string>();
  const put = (name: string, value: () => unknown) => {
    const type = types.get(name);
    if (!type) throw badRequest(`Unexpected variable ${name}`);
    if (given.has(name)) throw badRequest(`variable ${name} is given more than once`);
    given.add(name);
    out[name] = value();
  };
  for (const [k, v] of Object.entries(sources.path)) put(k, () => textValue(k, v, types.get(k)!, maxDepth));
  for (const [k, v] of sources.query) put(k, () => textValue(k, v, types.get(k)!, maxDepth));
  if (sources.body) for (const [k, v] of Object.entries(sources.body)) put(k, () => v);
  return out;
}
