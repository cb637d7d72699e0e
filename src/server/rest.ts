/**
 * `/api/rest/<url>`: REST endpoints (Hasura v2's RESTified endpoints) on plain node:http, beside the
 * GraphQL fast path. A call is matched against the schema cache's router (src/rest/endpoints.ts),
 * its URL, query-string and body parameters become the variables of the endpoint's query
 * (src/rest/variables.ts), and the query runs through the very pipeline of /v1/graphql
 * (`GraphQLHandlers.run`: the allow-list, the plan cache keyed by role and query text, permissions,
 * limits, timeouts, the query-log): an endpoint is a stored GraphQL request.
 *
 * Answers (upstream's Server/Rest.hs): the query's `data` object without the envelope; an unknown
 * path 404 `not-found` "Endpoint not found"; a known path with another method 405
 * `method-not-allowed` "Allowed methods: GET, POST" (and an `Allow` header); a parameter the query
 * does not declare 400 `bad-request`; any error of the request `{path, error, code}` with its status
 * (400 for GraphQL and database errors, 401/403 of authentication, 500 for unexpected ones).
 * Bounded: the body by --body-limit (413), the path by 64 segments, the query string by 100
 * parameters, JSON values by --max-nesting-depth.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Engine } from '../engine.js';
import { SvcError, foreignCode } from '../errors.js';
import { CancelToken } from '../core/cancel.js';
import { tracing, type Span } from '../core/tracing.js';
import { jsonDeeperThan, parseJsonBody, isJsonObject } from '../json.js';
import { takeSetCookies } from '../http/responseHeaders.js';
import { matchRest } from '../rest/endpoints.js';
import { restVariables } from '../rest/variables.js';
import type { GraphQLHandlers, SessionResolver } from './handlers.js';
import { isAdmin, type Session } from './auth/session.js';
import { queryErrorBody, toSvcError } from './errors.js';
import { httpLogWriter, requestIds } from './httpLog.js';
import { acceptsGzip, commonHeaders, compress, sendBytes } from './response.js';
import { readBoundedBody } from './body.js';

const PREFIX = '/api/rest/';
const JSON_TYPE = 'application/json; charset=utf-8';
const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
export const MAX_REST_SEGMENTS = 64;
export const MAX_REST_QUERY_PARAMS = 100;

interface Answer {
  status: number;
  body: string;
  error?: SvcError;
  session?: Session;
  allow?: string;
  query?: unknown;
  /** the endpoint's operation type once matched (the histogram's label) */
  opType?: string;
}

export interface RestHttp {
  /** handles the request when it is a call of /api/rest/…; false = not ours */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  close(): void;
}

/** A GraphQL error response text → the REST error (its first error, with the status its code implies). */
function fromGraphqlErrors(out: string): SvcError {
  try {
    const e = (JSON.parse(out) as { errors?: Array<{ message?: string; extensions?: { path?: string; code?: string; internal?: unknown } }> }).errors?.[0];
    const code = e?.extensions?.code ?? 'unexpected';
    const status = code === 'unexpected' ? 500 : 400;
    return new SvcError(status, foreignCode(code), e?.message ?? 'an unexpected error occurred', e?.extensions?.path ?? '$', e?.extensions?.internal);
  } catch {
    return new SvcError(500, 'unexpected', 'an unexpected error occurred');
  }
}

/** a URL without its query string (span attribute url.path) */
const q0 = (url: string): string => {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
};

export function restHttp(
  engine: Engine,
  auth: SessionResolver,
  gql: GraphQLHandlers,
  allowOrigin: (origin: string | undefined) => string | undefined,
): RestHttp {
  const config = engine.config;
  const logRequest = config.enabledLogTypes.includes('http-log') ? httpLogWriter(engine.log) : undefined;
  const requestIdOf = requestIds();
  const showInternal = (s?: Session) => config.devMode || (!!s && isAdmin(s) && config.adminInternalErrors);
  let closing = false;

  const failed = (e: unknown, session?: Session, query?: unknown, allow?: string): Answer => {
    const err = toSvcError(e);
    if (err.status >= 500) engine.log.error({ type: 'http-log', code: err.code, err: String(err.internal ?? err.message) }, 'rest request failed');
    return { status: err.status, body: JSON.stringify(queryErrorBody(err, showInternal(session))), error: err, session, query, allow };
  };

  const send = (req: IncomingMessage, res: ServerResponse, started: bigint, requestId: string, a: Answer, span?: Span) => {
    const headers: Record<string, string | number | string[]> = commonHeaders(req, allowOrigin, requestId);
    headers['content-type'] = JSON_TYPE;
    if (span) {
      // the request's span (tracing on): status, operation type, role, error code; its trace id in a header
      headers['x-svc-trace-id'] = span.spanContext().traceId;
      span.setAttribute('http.response.status_code', a.status);
      if (a.opType) span.setAttribute('graphql.operation.type', a.opType);
      if (a.session) span.setAttribute('svc.role', a.session.role);
      if (a.error) tracing?.fail(span, a.error.code, a.error.message);
      span.end();
    }
    if (a.allow) headers.allow = a.allow;
    const cookies = takeSetCookies(req.headers);
    if (cookies) headers['set-cookie'] = cookies;
    const finish = (payload: string | Buffer) => {
      const length = sendBytes(res, a.status, headers, payload);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      // one bounded endpoint label for every REST endpoint (not the URL: unbounded)
      engine.histograms.requestDuration.observe3(ms / 1000, '/api/rest', a.opType ?? 'unknown', a.error ? 'error' : 'success');
      logRequest?.({
        req,
        status: a.status,
        ms,
        requestId,
        failure: a.error,
        session: a.session,
        responseSize: payload === a.body ? length : Buffer.byteLength(a.body),
        query: a.error ? a.query : undefined,
      });
    };
    if (acceptsGzip(req)) {
      void compress(a.body).then((c) => {
        if (c.gzipped) headers['content-encoding'] = 'gzip';
        finish(c.body);
      });
    } else finish(a.body);
  };

  /** The answer to an authenticated call. */
  const call = async (
    session: Session,
    method: string,
    path: string,
    search: string,
    text: string,
    headers: IncomingMessage['headers'],
    requestId: string,
    signal: CancelToken,
    ip?: string,
    span?: Span,
  ): Promise<Answer> => {
    // the path below /api/rest/, split into decoded segments
    const raw = path.split('/');
    if (raw.length > MAX_REST_SEGMENTS) return failed(new SvcError(404, 'not-found', 'Endpoint not found'), session);
    let segments: string[];
    try {
      segments = raw.map((s) => decodeURIComponent(s));
    } catch {
      return failed(new SvcError(400, 'bad-request', 'the URL path is not valid percent-encoded UTF-8'), session);
    }
    const m = matchRest(engine.cache.rest, segments, method);
    if (m.kind === 'none') return failed(new SvcError(404, 'not-found', 'Endpoint not found'), session);
    if (m.kind === 'method')
      return failed(new SvcError(405, 'method-not-allowed', `Allowed methods: ${m.allowed.join(', ')}`), session, undefined, m.allowed.join(', '));
    const ep = m.endpoint;
    const opType = ep.operation.operation;
    const typed = (a: Answer): Answer => ({ ...a, opType });
    let query: Array<[string, string]> = [];
    if (search !== '') {
      const params = new URLSearchParams(search);
      query = [...params];
      if (query.length > MAX_REST_QUERY_PARAMS)
        return typed(failed(new SvcError(400, 'bad-request', `more than ${MAX_REST_QUERY_PARAMS} query parameters`), session));
    }
    let body: Record<string, unknown> | undefined;
    if (text.trim() !== '') {
      let parsed: unknown;
      try {
        parsed = parseJsonBody(text);
      } catch (e) {
        return typed(failed(e, session));
      }
      if (!isJsonObject(parsed)) {
        return typed(failed(new SvcError(400, 'bad-request', 'the request body must be a JSON object of variables'), session));
      }
      if (jsonDeeperThan(parsed, config.maxNestingDepth))
        return typed(failed(new SvcError(400, 'parse-failed', `the request body is nested deeper than ${config.maxNestingDepth} levels`), session));
      body = parsed as Record<string, unknown>;
    }
    let variables: Record<string, unknown>;
    try {
      variables = restVariables(ep.operation, { path: m.params, query, body }, config.maxNestingDepth);
    } catch (e) {
      return typed(failed(e, session));
    }
    const request = { query: ep.query, variables };
    let out: string;
    try {
      out = await gql.run(engine, session, request, headers, { v1alpha1: false, requestId, signal, rejectPreExec: true, client: { ip }, span });
    } catch (e) {
      return typed(failed(e, session, request));
    }
    // `{"data":{…}}` without remote errors after it: the data object, without the envelope
    if (out.startsWith('{"data":') && out.endsWith('}}')) return { status: 200, body: out.slice(8, -1), session, opType };
    if (!out.includes('"errors"')) return { status: 200, body: out.startsWith('{"data":') ? out.slice(8, -1) : out, session, opType };
    return typed(failed(fromGraphqlErrors(out), session, request));
  };

  return {
    handle(req, res) {
      const method = req.method ?? '';
      const url = req.url ?? '';
      if (!url.startsWith(PREFIX) || !METHODS.has(method) || !config.enabledApis.has('graphql')) return false;
      const started = process.hrtime.bigint();
      const requestId = requestIdOf(req);
      // tracing on: the request's span (the client's traceparent/tracestate as its parent); the
      // route is the /api/rest prefix (the URL itself is unbounded)
      const t = tracing;
      let span: Span | undefined;
      if (t) {
        const tp = req.headers.traceparent;
        const ts = req.headers.tracestate;
        span = t.start(
          `${method} /api/rest`,
          { 'http.request.method': method, 'url.path': q0(url), 'http.route': '/api/rest', 'svc.request_id': requestId },
          { kind: 'server', traceparent: typeof tp === 'string' ? tp : null, tracestate: typeof ts === 'string' ? ts : null },
        );
      }
      if (closing) {
        span?.end();
        req.resume();
        res.writeHead(503, { 'content-type': JSON_TYPE, connection: 'close' });
        res.end(JSON.stringify({ path: '$', error: 'the server is shutting down', code: 'unexpected' }));
        return true;
      }
      const q = url.indexOf('?');
      const path = q < 0 ? url.slice(PREFIX.length) : url.slice(PREFIX.length, q);
      const search = q < 0 ? '' : url.slice(q + 1);
      readBoundedBody(
        req,
        res,
        config.bodyLimit,
        (e) => send(req, res, started, requestId, failed(e), span),
        (text) => {
          const cancel = new CancelToken();
          res.once('close', () => {
            if (!res.writableFinished) cancel.cancel();
          });
          const done = (a: Answer) => send(req, res, started, requestId, a, span);
          const headers = req.headers as Record<string, string | string[] | undefined>;
          const withSession = (session: Session) => call(session, method, path, search, text, req.headers, requestId, cancel, req.socket.remoteAddress, span);
          let session: Session | undefined;
          // authentication (tracing on: a span `svc.auth` under the request's, the webhook or JWKS call under it)
          const go = (): Promise<Answer> => {
            const as = span ? t?.start('svc.auth', undefined, { parent: span }) : undefined;
            const authed = (s: Session) => {
              session = s;
              if (as) {
                as.setAttribute('svc.role', s.role);
                as.end();
              }
              return withSession(s);
            };
            const bad = (e: unknown): Answer => {
              if (as) {
                const err = toSvcError(e);
                t!.fail(as, err.code, err.message);
                as.end();
              }
              return failed(e);
            };
            let now: Session | undefined;
            try {
              now = auth.resolveNow?.(headers, true);
            } catch (e) {
              return Promise.resolve(bad(e));
            }
            if (now) return authed(now);
            return auth.resolve(headers, req.rawHeaders, as).then(authed, bad);
          };
          go().then(done, (e) => done(failed(e, session)));
        },
      );
      req.on('error', () => res.destroy());
      return true;
    },
    close() {
      closing = true;
    },
  };
}
