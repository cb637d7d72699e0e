/**
 * Calling an action's handler and reading its answer, as upstream v1.3 does (reference/actions/
 * action-handlers.rst, debugging.rst): POST `{action: {name}, input, session_variables}` with the
 * configured headers (and the client's, when `forward_client_headers`, minus those never forwarded:
 * src/http/forwarded.ts); a 2xx body must be an object (or an array of objects for a list output
 * type) with the output type's fields; a 4xx body `{message, code}` is the error; anything else is
 * an internal error. Errors carry the request and response in `internal`, which only admin (or
 * --dev-mode) sees.
 */
import { SvcError, foreignCode, type ErrorCode, type ForeignCode } from '../errors.js';
import { describeFetchError, postLimited, USER_AGENT, type OutboundClient } from '../http/client.js';
import type { Span } from '../core/tracing.js';
import { resolveHeaders, resolveUrlTemplate } from '../delivery/http.js';
import { isAdminSecretHeader, redactHeaderList } from '../http/credentials.js';
import { isForwardableHeader } from '../http/forwarded.js';
import { Kind, type TypeNode } from 'graphql';
import { isJsonObject, jsonDeeperThan, JsonNumber, jsonText, parseJsonExact } from '../json.js';
import { parseTypeExpr } from '../schema/actions.js';
import type { ActionModel } from '../model/actions.js';

/** A handler's response body is read up to this size. */
export const ACTION_RESPONSE_MAX = 10 * 1024 * 1024;
/** …and up to this nesting of objects and arrays. */
export const ACTION_RESPONSE_MAX_DEPTH = 256;

export type HeaderList = Array<{ name: string; value: string }>;

export function forwardedClientHeaders(headers: Record<string, string | string[] | undefined>): HeaderList {
  const out: HeaderList = [];
  for (const [name, v] of Object.entries(headers)) {
    // the one list of headers never forwarded (src/http/forwarded.ts)
    if (v === undefined || !isForwardableHeader(name)) continue;
    out.push({ name, value: Array.isArray(v) ? v.join(', ') : v });
  }
  return out;
}

export interface ActionRequest {
  url: string;
  /** configured and forwarded headers (what debugging info shows) */
  headers: HeaderList;
  body: { action: { name: string }; input: unknown; session_variables: Record<string, string> };
}

/** The request for a call (throws when the handler URL or a header names an unset variable). */
export function actionRequest(a: ActionModel, input: unknown, session: Record<string, string>, clientHeaders: HeaderList): ActionRequest {
  const url = resolveUrlTemplate(a.handler);
  if (!a.headers?.length && !clientHeaders.length) return { url, headers: [], body: { action: { name: a.name }, input, session_variables: session } };
  const conf = resolveHeaders(a.headers);
  // configured headers win over forwarded ones of the same name
  const names = new Set(conf.map((h) => h.name.toLowerCase()));
  // stored client headers are filtered again: a row written before the rule never forwards the secret
  const headers = [...conf, ...clientHeaders.filter((h) => !names.has(h.name.toLowerCase()) && !isAdminSecretHeader(h.name))];
  return { url, headers, body: { action: { name: a.name }, input, session_variables: session } };
}

export interface ActionResponse {
  status: number;
  headers: HeaderList;
  /** the body as text */
  text: string;
}

/** POSTs the request (its span under `parent`, tracing on); a network failure or timeout is an internal error. */
export function callHandler(client: OutboundClient, req: ActionRequest, timeoutMs: number, parent?: Span): Promise<ActionResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': USER_AGENT };
  for (const h of req.headers) headers[h.name] = h.value;
  return postLimited(req.url, headers, jsonText(req.body), { client, timeoutMs, maxBytes: ACTION_RESPONSE_MAX, target: 'action', parent }).then(
    (res) => ({ status: res.status, headers: res.rawHeaders ?? [], text: res.body.toString('utf8') }),
    (e: unknown) => {
      throw new SvcError(500, 'unexpected', 'http exception when calling webhook', '$', { error: describeFetchError(e), request: shown(req) });
    },
  );
}

/** The request as debugging info (and so logs) show it: credential values redacted. */
const shown = (req: ActionRequest): ActionRequest => ({ ...req, headers: redactHeaderList(req.headers) });

/** The call as debugging info shows it. */
function internal(req: ActionRequest, res: ActionResponse, body: unknown) {
  return { error: 'unexpected response', response: { status: res.status, headers: res.headers, body }, request: shown(req) };
}

const objectKind = isJsonObject;

/**
 * The handler's answer as the output value (checked against the output type; `text` is its JSON),
 * or the error it stands for.
 */
export function readResponse(a: ActionModel, req: ActionRequest, res: ActionResponse): { text: string; value: unknown } {
  let json: unknown;
  try {
    // numbers exact (a bigint id past 2^53 in a custom scalar or an ID reaches the client as sent)
    json = parseJsonExact(res.text);
  } catch (e) {
    throw new SvcError(500, 'unexpected', `not a valid json response from webhook : ${(e as Error).message}`, '$', internal(req, res, res.text));
  }
  const fail = (code: ErrorCode, message: string) => new SvcError(400, code, message, '$', internal(req, res, json));
  // a bounded answer only (its values are copied into the response and the action log)
  if (jsonDeeperThan(json, ACTION_RESPONSE_MAX_DEPTH))
    throw fail('unexpected', `the action webhook response is nested deeper than ${ACTION_RESPONSE_MAX_DEPTH} levels`);
  if (res.status >= 200 && res.status < 300) {
    if (json === null) {
      if (a.outputRequired) throw fail('unexpected', 'got null for the action webhook response');
      return { text: 'null', value: null };
    }
    if (Array.isArray(json)) {
      if (!json.every(objectKind)) throw fail('parse-failed', 'expecting object or array of objects for action webhook response');
      if (!a.outputList) throw fail('unexpected', 'expecting object for action webhook response but got array');
      for (const o of json) checkObject(a, o as Record<string, unknown>, fail);
    } else if (objectKind(json)) {
      if (a.outputList) throw fail('unexpected', 'expecting array for action webhook response but got object');
      checkObject(a, json as Record<string, unknown>, fail);
    } else {
      throw fail('parse-failed', 'expecting object or array of objects for action webhook response');
    }
    return { text: res.text, value: json };
  }
  if (res.status >= 400 && res.status < 500) {
    const o = json as { message?: unknown; code?: unknown };
    if (!objectKind(json) || typeof o.message !== 'string')
      throw fail('parse-failed', 'expecting an error object {"message": …, "code": …} in the action webhook\'s 4xx response');
    return throwHandlerError(res.status, o.message, typeof o.code === 'string' ? foreignCode(o.code) : 'unexpected');
  }
  throw new SvcError(500, 'unexpected', 'internal error', '$', internal(req, res, json));
}

function throwHandlerError(status: number, message: string, code: ErrorCode | ForeignCode): never {
  throw new SvcError(status, code, message, '$');
}

function checkObject(a: ActionModel, o: Record<string, unknown>, fail: (code: ErrorCode, message: string) => SvcError): void {
  const fields = a.output.fields;
  const extra = Object.keys(o).filter((k) => !fields.some((f) => f.name === k));
  if (extra.length) throw fail('unexpected', `unexpected fields in webhook response: ${extra.join(', ')}`);
  for (const f of fields) {
    if (f.required) {
      if (!(f.name in o)) throw fail('unexpected', `field ${JSON.stringify(f.name)} expected in webhook response, but not found`);
      if (o[f.name] === null) throw fail('unexpected', `expecting not null value for field ${JSON.stringify(f.name)}`);
    }
    const t = f.typeNode ?? parseTypeExpr(f.type);
    const v = o[f.name];
    if (t && v !== undefined && v !== null && !valueFits(v, t, a.outputEnums)) {
      throw fail(
        'unexpected',
        `expecting a value of type ${f.type} for field ${JSON.stringify(f.name)} in webhook response, but got ${JSON.stringify(v).slice(0, 200)}`,
      );
    }
  }
}

const INT32 = 2 ** 31;

/**
 * Does a (non-null) value of the handler's answer fit the field's GraphQL type? The built-in scalars
 * by their JSON kind (Int: a 32-bit integer, Float: a number, String: a string, Boolean: a boolean,
 * ID: a string or an integer), enums by their values, lists element by element; custom and
 * PostgreSQL scalars take any JSON value (they are opaque to GraphQL).
 */
function valueFits(v: unknown, t: TypeNode, enums: Map<string, Set<string>>): boolean {
  if (t.kind === Kind.NON_NULL_TYPE) return v !== null && valueFits(v, t.type, enums);
  if (v === null) return true;
  if (t.kind === Kind.LIST_TYPE) return Array.isArray(v) && v.every((x) => valueFits(x, t.type, enums));
  switch (t.name.value) {
    case 'Int':
      return typeof v === 'number' && Number.isInteger(v) && v >= -INT32 && v < INT32;
    case 'Float':
      return typeof v === 'number' || v instanceof JsonNumber;
    case 'String':
      return typeof v === 'string';
    case 'Boolean':
      return typeof v === 'boolean';
    case 'ID':
      return typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v)) || (v instanceof JsonNumber && /^-?\d+$/.test(v.text));
    default: {
      const e = enums.get(t.name.value);
      return e ? typeof v === 'string' && e.has(v) : true;
    }
  }
}
