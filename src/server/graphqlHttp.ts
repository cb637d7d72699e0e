/**
 * POST /v1/graphql, /v1alpha1/graphql and /v1beta1/relay (and GET /v1/graphql and /v1beta1/relay,
 * GraphQL over HTTP, queries only; automatic persisted queries) on plain `node:http`, in front of
 * Fastify (which serves every other route). This is the hot path: a request
 * costs body read → JSON.parse → authenticate → plan-cache lookup → one
 * prepared statement → the response text PostgreSQL built, with no framework
 * hooks, reply objects or promise chains in between. Measured on the bench
 * (issue 7): Fastify's routing and hooks cost ~25 % of the CPU of a
 * primary-key lookup.
 *
 * Behaviour is the Fastify routes' one: CORS headers, body limit (413),
 * malformed JSON (invalid-json: HTTP 200 on /v1/graphql and /v1beta1/relay as every error there, 400 on
 * /v1alpha1/graphql), batched requests, gzip when accepted,
 * the http-log line, 503 while closing.
 */
import { takeResponseHeaders, takeSetCookies } from '../http/responseHeaders.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Engine } from '../engine.js';
import { SvcError, foreignCode } from '../errors.js';
import { keyNotFound, typeMismatch } from '../document/args.js';
import { CancelToken } from '../core/cancel.js';
import { jsonDeeperThan, parseJsonBody, parseJsonExact, isJsonObject } from '../json.js';
import type { GraphQLRequest } from '../execute/interface.js';
import type { GraphQLHandlers, SessionResolver } from './handlers.js';
import { type RequestHeaders, type Session } from './auth/session.js';
import { acceptsGzip, commonHeaders, compress, sendBytes } from './response.js';
import { graphqlErrorBody, toSvcError } from './errors.js';
import { showInternalErrors } from '../execute/errors.js';
import { httpLogWriter, requestIds } from './httpLog.js';
import { checkAllowlist } from '../execute/allowlist.js';
import { batchLimitExceeded, roleLimits } from '../execute/apiLimits.js';
import { getOperationAST, parse, type OperationTypeNode } from 'graphql';
import { PersistedQueryStore, persistedQueryHash, persistedQueryMismatch, persistedQueryNotFound } from './persistedQueries.js';
import { sha256Hex } from '../core/hash.js';
import type { Attributes } from '@opentelemetry/api';
import { tracing, type Span } from '../core/tracing.js';
import { readBoundedBody } from './body.js';

/** What the executor reports back about a request (for the latency histogram and the span). */
export interface RequestInfo {
  /** query, mutation, subscription; `unknown` when the request failed before planning */
  opType: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';
/** the GraphQL-over-HTTP media type, answered when the client accepts it and not application/json */
const GRAPHQL_RESPONSE_TYPE = 'application/graphql-response+json; charset=utf-8';
/** code of the error a mutation (or subscription) sent with GET gets, answered with HTTP 405 */
const METHOD_NOT_ALLOWED = 'method-not-allowed';

/**
 * The response media type the `Accept` header asks for (GraphQL over HTTP): application/json when
 * acceptable (also without the header, for any-type and application-any ranges), else
 * application/graphql-response+json when acceptable, else undefined (nothing we can answer).
 */
export function negotiateResponseType(accept: string | undefined): string | undefined {
  if (accept === undefined || accept.trim() === '') return JSON_TYPE;
  // per type: the q of the most specific matching range
  const best = { json: { spec: 0, q: 0 }, gr: { spec: 0, q: 0 } };
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';');
    const t = type.trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    if (!Number.isFinite(q)) continue;
    const spec = (name: string) => (t === name ? 3 : t === 'application/*' ? 2 : t === '*/*' ? 1 : 0);
    for (const [k, name] of [
      ['json', 'application/json'],
      ['gr', 'application/graphql-response+json'],
    ] as const) {
      const sp = spec(name);
      if (sp > best[k].spec) best[k] = { spec: sp, q };
    }
  }
  if (best.json.q > 0) return JSON_TYPE;
  if (best.gr.q > 0) return GRAPHQL_RESPONSE_TYPE;
  return undefined;
}

/** `?query=…&variables=…&operationName=…&extensions=…` of a GET → the request object a POST body would hold */
function requestFromSearch(search: string): Record<string, unknown> {
  const p = new URLSearchParams(search);
  const one: Record<string, unknown> = {};
  const query = p.get('query');
  if (query !== null) one.query = query;
  const op = p.get('operationName');
  if (op !== null && op !== '') one.operationName = op;
  for (const key of ['variables', 'extensions'] as const) {
    const text = p.get(key);
    if (text === null || text === '') continue;
    try {
      one[key] = parseJsonExact(text);
    } catch {
      throw new SvcError(400, 'invalid-json', `the ${key} parameter is not JSON`, `$.${key}`);
    }
  }
  return one;
}

interface Answer {
  status: number;
  body: string;
  error?: SvcError;
  /** the response's media type (default application/json) */
  type?: string;
  /** for the http-log line */
  session?: Session;
  query?: unknown;
  rawQuery?: string;
}

/** `variables` and `operationName` of a request object, checked as upstream's aeson parser does. */
function requestShapeError(one: Record<string, unknown>, maxDepth: number): SvcError | undefined {
  const v = one.variables;
  if (v !== undefined && v !== null && !isJsonObject(v)) {
    return typeMismatch('HashMap', 'Object', v, '$.variables');
  }
  const o = one.operationName;
  if (o !== undefined && o !== null && typeof o !== 'string') {
    return typeMismatch('Text', 'String', o, '$.operationName');
  }
  if (v && jsonDeeperThan(v, maxDepth)) return new SvcError(400, 'parse-failed', `variables are nested deeper than ${maxDepth} levels`, '$.variables');
  return undefined;
}

/** The first error of a GraphQL error response text, for the http-log line (errors are rare: parsed only then). */
function firstError(out: string): SvcError | undefined {
  if (!out.startsWith('{"errors"')) return undefined;
  try {
    const e = (JSON.parse(out) as { errors: { message?: string; extensions?: { path?: string; code?: string } }[] }).errors[0];
    return new SvcError(200, e?.extensions?.code ? foreignCode(e.extensions.code) : 'unexpected', e?.message ?? '', e?.extensions?.path ?? '$');
  } catch {
    return undefined;
  }
}
/** The GraphQL endpoints: `v1alpha1` (its error envelope and statuses), `relay` (the Relay schema). */
export interface GraphQLEndpoint {
  v1alpha1: boolean;
  relay: boolean;
  /** the names of its requests' spans (`POST /v1/graphql`): made once, not per request */
  spanNames: { readonly POST: string; readonly GET: string };
}
const endpointOf = (path: string, v1alpha1: boolean, relay: boolean): [string, GraphQLEndpoint] => [
  path,
  { v1alpha1, relay, spanNames: { POST: `POST ${path}`, GET: `GET ${path}` } },
];
export const GRAPHQL_ENDPOINTS = new Map<string, GraphQLEndpoint>([
  endpointOf('/v1/graphql', false, false),
  endpointOf('/v1alpha1/graphql', true, false),
  endpointOf('/v1beta1/relay', false, true),
]);

export interface GraphQLHttp {
  /** handles the request when it is a GraphQL POST; false = not ours */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** new requests get 503 from now on (server closing) */
  close(): void;
}

export function graphqlHttp(
  engine: Engine,
  auth: SessionResolver,
  gql: GraphQLHandlers,
  allowOrigin: (origin: string | undefined) => string | undefined,
): GraphQLHttp {
  const config = engine.config;
  const logRequest = config.enabledLogTypes.includes('http-log') ? httpLogWriter(engine.log) : undefined;
  const requestIdOf = requestIds();
  const showInternal = (s?: Session) => showInternalErrors(config, s);
  let closing = false;
  const persisted = new PersistedQueryStore(config.persistedQueriesMaxBytes, engine.redis);
  /** the media type answered per `Accept` header text (bounded memo: clients send the same few) */
  const acceptMemo = new Map<string, string | undefined>();
  const responseType = (accept: string | undefined): string | undefined => {
    if (accept === undefined) return JSON_TYPE;
    if (acceptMemo.has(accept)) return acceptMemo.get(accept);
    const t = negotiateResponseType(accept);
    if (accept.length <= 512) {
      if (acceptMemo.size >= 256) acceptMemo.clear();
      acceptMemo.set(accept, t);
    }
    return t;
  };
  /** operation type of a GET's query text (bounded memo: clients repeat the same few queries) */
  const opTypes = new Map<string, OperationTypeNode | null>();
  let opTypesChars = 0;
  const operationType = (query: string, operationName: unknown): OperationTypeNode | null => {
    const key = `${typeof operationName === 'string' ? operationName : ''}\u0000${query}`;
    let t = opTypes.get(key);
    if (t === undefined) {
      try {
        const doc = parse(query, { noLocation: true, maxTokens: config.maxQueryTokens });
        t = getOperationAST(doc, typeof operationName === 'string' ? operationName : undefined)?.operation ?? null;
      } catch {
        t = null; // the pipeline answers the query's own error
      }
      // bounded: at most ~1 M characters of keys, then it starts over
      if (opTypesChars + key.length > 1024 * 1024) {
        opTypes.clear();
        opTypesChars = 0;
      }
      if (key.length <= 64 * 1024) {
        opTypes.set(key, t);
        opTypesChars += key.length;
      }
    }
    return t;
  };

  /** one request object of the body → its response text */
  const runOne = (
    one: unknown,
    session: Session,
    headers: RequestHeaders,
    endpoint: GraphQLEndpoint,
    requestId: string,
    signal?: CancelToken,
    get = false,
    ip?: string,
    info?: RequestInfo,
    span?: Span,
  ): string | Promise<string> => {
    // automatic persisted queries: the text by its hash, or the text checked against its hash and registered
    let register: string | undefined;
    if (isJsonObject(one) && one.extensions !== undefined) {
      let hash: string | undefined;
      try {
        hash = persistedQueryHash((one as { extensions?: unknown }).extensions);
      } catch (e) {
        return JSON.stringify(graphqlErrorBody(toSvcError(e), showInternal(session)));
      }
      if (hash !== undefined) {
        const query = (one as { query?: unknown }).query;
        if (query === undefined || query === null) {
          const found = persisted.lookup(hash);
          const withText = (text: string | undefined): string | Promise<string> =>
            text === undefined
              ? JSON.stringify(graphqlErrorBody(persistedQueryNotFound(), false))
              : runOne({ ...(one as object), query: text, extensions: undefined }, session, headers, endpoint, requestId, signal, get, ip, info, span);
          return found instanceof Promise ? found.then(withText) : withText(found);
        } else if (typeof query === 'string') {
          if (sha256Hex(query) !== hash) return JSON.stringify(graphqlErrorBody(persistedQueryMismatch(), false));
          register = hash;
        }
      }
    }
    if (!isJsonObject(one) || typeof (one as unknown as GraphQLRequest).query !== 'string') {
      // upstream's GQLQueryText is a newtype over Text (its aeson parser is Text's)
      const e =
        isJsonObject(one) && !('query' in one) ? keyNotFound('query', '$') : typeMismatch('Text', 'String', (one as { query?: unknown })?.query, '$.query');
      return JSON.stringify(graphqlErrorBody(e, showInternal(session)));
    }
    const bad = requestShapeError(one as Record<string, unknown>, config.maxNestingDepth);
    if (bad) return JSON.stringify(graphqlErrorBody(bad, showInternal(session)));
    const req = one as unknown as GraphQLRequest;
    if (get) {
      // GraphQL over HTTP: GET is for queries only (a mutation must not run on a GET)
      const op = operationType(req.query, req.operationName);
      if (op !== null && op !== 'query') {
        return JSON.stringify(graphqlErrorBody(new SvcError(405, METHOD_NOT_ALLOWED, `${op}s cannot be sent with GET; use POST`, '$'), false));
      }
    }
    try {
      const out = gql.run(engine, session, req, headers, { v1alpha1: endpoint.v1alpha1, relay: endpoint.relay, requestId, signal, client: { ip }, info, span });
      // registered once the allow-list (checked by run for non-admins) lets it through; with the
      // allow-list on, an admin's query is registered only when it is allow-listed too
      if (register !== undefined) {
        let allowed = true;
        if (config.enableAllowlist) {
          try {
            checkAllowlist(engine.cache, req.query, session.role);
          } catch {
            allowed = false;
          }
        }
        if (allowed) persisted.set(register, req.query);
      }
      return out;
    } catch (e) {
      return JSON.stringify(graphqlErrorBody(toSvcError(e), showInternal(session)));
    }
  };

  const failed = (e: unknown, session: Session | undefined, v1alpha1: boolean, query?: unknown): Answer => {
    const err = toSvcError(e);
    if (err.status >= 500) engine.log.error({ type: 'http-log', err: String(err.internal ?? err.message) }, 'graphql request failed');
    const status = v1alpha1 ? Math.max(err.status, 400) : 200;
    return { status, body: JSON.stringify(graphqlErrorBody(err, showInternal(session))), error: err, session, query };
  };

  // /v1alpha1/graphql answers errors with HTTP 400 (v1 always answers 200)
  const single =
    (v1alpha1: boolean, session: Session, query: unknown) =>
    (out: string): Answer => {
      const error = firstError(out);
      if (error?.code === METHOD_NOT_ALLOWED) return { status: 405, body: out, error, session, query };
      return error ? { status: v1alpha1 ? 400 : 200, body: out, error, session, query } : { status: 200, body: out, session };
    };

  const withSession = (
    body: unknown,
    session: Session,
    headers: RequestHeaders,
    endpoint: GraphQLEndpoint,
    requestId: string,
    signal?: CancelToken,
    get = false,
    ip?: string,
    info?: RequestInfo,
    span?: Span,
  ): Answer | Promise<Answer> => {
    const v1alpha1 = endpoint.v1alpha1;
    if (Array.isArray(body)) {
      // API limits' batch limit (issue 36)
      const batch = engine.cache.metadata.api_limits === undefined ? undefined : roleLimits(engine.cache, session.role)?.batch;
      if (batch !== undefined && body.length > batch) return failed(batchLimitExceeded(body.length, batch), session, v1alpha1, body);
      return (async () => {
        const parts: string[] = [];
        for (const one of body) parts.push(await runOne(one, session, headers, endpoint, requestId, signal, false, ip, info, span));
        const error = parts.map(firstError).find((x) => x !== undefined);
        return { status: 200, body: `[${parts.join(',')}]`, session, ...(error ? { error, query: body } : {}) };
      })();
    }
    const out = runOne(body, session, headers, endpoint, requestId, signal, get, ip, info, span);
    return typeof out === 'string' ? single(v1alpha1, session, body)(out) : out.then(single(v1alpha1, session, body));
  };

  /**
   * The response to a body. Without a webhook or JWT to consult and with a
   * cached plan, the only promise on the way is the statement's.
   */
  const answer = (
    text: string,
    headers: RequestHeaders,
    endpoint: GraphQLEndpoint,
    requestId: string,
    rawHeaders?: readonly string[],
    signal?: CancelToken,
    search?: string,
    ip?: string,
    info?: RequestInfo,
    span?: Span,
  ): Answer | Promise<Answer> => {
    const v1alpha1 = endpoint.v1alpha1;
    const get = search !== undefined;
    // upstream authenticates first, then parses the body (Server/App.hs mkSpockAction); a GET's
    // request is its query string
    const parsed = (session: Session): Answer | Promise<Answer> => {
      let body: unknown;
      try {
        body = get ? requestFromSearch(search) : parseJsonBody(text);
      } catch (e) {
        const raw = get ? search : text;
        return { ...failed(e, session, v1alpha1), rawQuery: raw.length > 4096 ? `${raw.slice(0, 4096)}…` : raw };
      }
      try {
        return withSession(body, session, headers, endpoint, requestId, signal, get, ip, info, span);
      } catch (e) {
        return failed(e, session, v1alpha1, body);
      }
    };
    const t = tracing;
    if (t && span) return authTraced(t, span, headers, rawHeaders, v1alpha1, parsed);
    let session: Session | undefined;
    try {
      session = auth.resolveNow?.(headers, true);
    } catch (e) {
      return authFailed(e, v1alpha1, undefined);
    }
    if (session) return parsed(session);
    return auth.resolve(headers, rawHeaders).then(parsed, (e) => authFailed(e, v1alpha1, undefined));
  };

  /** authentication as a span `svc.auth` under the request's (tracing on), with the webhook call under it */
  const authTraced = (
    t: NonNullable<typeof tracing>,
    parent: Span,
    headers: RequestHeaders,
    rawHeaders: readonly string[] | undefined,
    v1alpha1: boolean,
    parsed: (s: Session) => Answer | Promise<Answer>,
  ): Answer | Promise<Answer> => {
    const span = t.start('svc.auth', undefined, { parent });
    // headers, the admin secret or a JWT whose key is at hand: answered at once (no closures)
    let session: Session | undefined;
    try {
      session = auth.resolveNow?.(headers, true);
    } catch (e) {
      return authRejected(t, span, e, v1alpha1);
    }
    if (session) return authAccepted(span, session, parsed);
    const ok = (s: Session) => authAccepted(span, s, parsed);
    const bad = (e: unknown) => authRejected(t, span, e, v1alpha1);
    return auth.resolve(headers, rawHeaders, span).then(ok, bad);
  };

  const authAccepted = (span: Span, s: Session, parsed: (s: Session) => Answer | Promise<Answer>): Answer | Promise<Answer> => {
    span.setAttribute('svc.role', s.role);
    span.end();
    return parsed(s);
  };
  const authRejected = (t: NonNullable<typeof tracing>, span: Span, e: unknown, v1alpha1: boolean): Answer => {
    const err = toSvcError(e);
    t.fail(span, err.code, err.message);
    span.end();
    return authFailed(e, v1alpha1, undefined);
  };

  /**
   * Authentication failed: on /v1/graphql and /v1beta1/relay HTTP 200 like every other error
   * (upstream's `allMod200` modifier in Server/App.hs); /v1alpha1/graphql keeps the error's own
   * status (401, 400 of a bad JWT, 500 of a failing webhook).
   */
  const authFailed = (e: unknown, v1alpha1: boolean, body: unknown): Answer => {
    const a = failed(e, undefined, v1alpha1, body);
    return v1alpha1 && a.error ? { ...a, status: a.error.status } : a;
  };

  const send = (
    req: IncomingMessage,
    res: ServerResponse,
    started: bigint,
    requestId: string,
    answer: Answer,
    endpoint?: string,
    info?: RequestInfo,
    span?: Span,
  ) => {
    const { status, body } = answer;
    const headers: Record<string, string | number | string[]> = commonHeaders(req, allowOrigin, requestId);
    headers['content-type'] = answer.type ?? JSON_TYPE;
    if (span) endRequestSpan(span, headers, status, answer, info);
    if (status === 405) headers.allow = 'POST';
    // Set-Cookie of action handlers and remote schemas (src/http/responseHeaders.ts)
    const cookies = takeSetCookies(req.headers);
    if (cookies) headers['set-cookie'] = cookies;
    // the response cache's headers (Cache-Control, X-Svc-Query-Cache-Key, X-Svc-Query-Cache)
    const extra = takeResponseHeaders(req.headers);
    if (extra) Object.assign(headers, extra);
    const finish = (payload: string | Buffer) => {
      const length = sendBytes(res, status, headers, payload);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (endpoint) engine.histograms.requestDuration.observe3(ms / 1000, endpoint, info?.opType ?? 'unknown', answer.error ? 'error' : 'success');
      logRequest?.({
        req,
        status,
        ms,
        requestId,
        failure: answer.error,
        session: answer.session,
        responseSize: payload === body ? length : Buffer.byteLength(body), // before compression
        query: answer.query,
        rawQuery: answer.rawQuery,
      });
    };
    if (acceptsGzip(req)) {
      void compress(body).then((c) => {
        if (c.gzipped) headers['content-encoding'] = 'gzip';
        finish(c.body);
      });
    } else finish(body);
  };

  return {
    handle(req, res) {
      const isGet = req.method === 'GET';
      if (req.method !== 'POST' && !isGet) return false;
      const url = req.url ?? '';
      const q = url.indexOf('?');
      const endpoint = GRAPHQL_ENDPOINTS.get(q < 0 ? url : url.slice(0, q));
      if (endpoint === undefined || !config.enabledApis.has('graphql')) return false;
      // GET (GraphQL over HTTP) on /v1/graphql and /v1beta1/relay; /v1alpha1/graphql stays POST-only
      if (isGet && endpoint.v1alpha1) return false;
      const v1alpha1 = endpoint.v1alpha1;
      const started = process.hrtime.bigint();
      const requestId = requestIdOf(req);
      const path = q < 0 ? url : url.slice(0, q);
      const info: RequestInfo = { opType: 'unknown' };
      // tracing on: the request's span (W3C traceparent/tracestate of the client as its parent)
      const t = tracing;
      const span = t ? startRequestSpan(t, req, isGet ? endpoint.spanNames.GET : endpoint.spanNames.POST, requestId) : undefined;
      if (closing) {
        if (span) {
          span.setAttribute('http.response.status_code', 503);
          span.end();
        }
        res.writeHead(503, { 'content-type': JSON_TYPE, connection: 'close' });
        res.end(JSON.stringify({ path: '$', error: 'the server is shutting down', code: 'unexpected' }));
        return true;
      }
      // the media type of the answer (Accept); a GET accepting neither JSON type gets 406, a POST
      // keeps upstream's behaviour and is answered with application/json
      const accept = req.headers.accept;
      const type = responseType(Array.isArray(accept) ? accept.join(',') : accept);
      if (type === undefined && isGet) {
        const e = new SvcError(406, 'not-acceptable', 'the Accept header allows neither application/json nor application/graphql-response+json');
        req.resume();
        send(req, res, started, requestId, { status: 406, body: JSON.stringify(graphqlErrorBody(e, false)), error: e }, path, info, span);
        return true;
      }
      const typed = (r: Answer): Answer => (type === undefined || type === JSON_TYPE ? r : { ...r, type });
      if (isGet) {
        req.resume();
        const done = (r: Answer) => send(req, res, started, requestId, typed(r), path, info, span);
        const cancel = new CancelToken();
        res.once('close', () => {
          if (!res.writableFinished) cancel.cancel();
        });
        const search = q < 0 ? '' : url.slice(q + 1);
        const r = answer('', req.headers, endpoint, requestId, req.rawHeaders, cancel, search, req.socket.remoteAddress, info, span);
        if (r instanceof Promise) r.then(done, (e) => done(failed(e, undefined, v1alpha1)));
        else done(r);
        req.on('error', () => res.destroy());
        return true;
      }
      const tooLarge = (e: SvcError) =>
        send(req, res, started, requestId, { status: 413, body: JSON.stringify({ path: e.path, error: e.message, code: e.code }), error: e }, path, info, span);
      readBoundedBody(req, res, config.bodyLimit, tooLarge, (text) => {
        const done = (r: Answer) => send(req, res, started, requestId, typed(r), path, info, span);
        // the client leaving before the answer cancels the statement in PostgreSQL
        const cancel = new CancelToken();
        res.once('close', () => {
          if (!res.writableFinished) cancel.cancel();
        });
        const r = answer(text, req.headers, endpoint, requestId, req.rawHeaders, cancel, undefined, req.socket.remoteAddress, info, span);
        if (r instanceof Promise) r.then(done, (e) => done(failed(e, undefined, v1alpha1)));
        else done(r);
      });
      req.on('error', () => res.destroy());
      return true;
    },
    close() {
      closing = true;
    },
  };
}

/** The span of a GraphQL HTTP request: `POST /v1/graphql` (server), the client's traceparent as its parent. */
function startRequestSpan(t: NonNullable<typeof tracing>, req: IncomingMessage, name: string, requestId: string): Span {
  const tp = req.headers.traceparent;
  const ts = req.headers.tracestate;
  // an endpoint's http.* attributes: the same every request, kept as a constant (encoded once)
  const span = t.start(name, t.constant(name, routeAttributes), {
    kind: 'server',
    traceparent: typeof tp === 'string' ? tp : null,
    tracestate: typeof ts === 'string' ? ts : null,
  });
  span.setAttribute('svc.request_id', requestId);
  return span;
}

/** a request span's http.* attributes from its name (`<method> <path>`) */
function routeAttributes(name: string): Attributes {
  const at = name.indexOf(' ');
  const path = name.slice(at + 1);
  return { 'http.request.method': name.slice(0, at), 'url.path': path, 'http.route': path };
}

/** Ends a request's span (status, operation type, role, error code) and names its trace in `x-svc-trace-id`. */
function endRequestSpan(span: Span, headers: Record<string, string | number | string[]>, status: number, answer: Answer, info?: RequestInfo): void {
  headers['x-svc-trace-id'] = span.spanContext().traceId;
  span.setAttribute('http.response.status_code', status);
  if (info) span.setAttribute('graphql.operation.type', info.opType);
  if (answer.session) span.setAttribute('svc.role', answer.session.role);
  if (answer.error) tracing?.fail(span, answer.error.code, answer.error.message);
  span.end();
}
