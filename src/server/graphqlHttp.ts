/**
 * POST /v1/graphql, /v1alpha1/graphql and /v1beta1/relay on plain `node:http`, in front of
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
import { takeSetCookies } from '../http/responseHeaders.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Engine } from '../engine.js';
import { SvcError } from '../errors.js';
import { keyNotFound, typeMismatch } from '../metadata/args.js';
import { CancelToken } from '../core/cancel.js';
import { jsonDeeperThan, parseJsonBody } from '../json.js';
import type { GraphQLRequest } from '../execute/interface.js';
import type { GraphQLHandlers, SessionResolver } from './app.js';
import { isAdmin, type RequestHeaders, type Session } from './auth/session.js';
import { acceptsGzip, commonHeaders, compress } from './response.js';
import { graphqlErrorBody, toSvcError } from './errors.js';
import { httpLogWriter, requestIdOf } from './httpLog.js';

const JSON_TYPE = 'application/json; charset=utf-8';

interface Answer {
  status: number;
  body: string;
  error?: SvcError;
  /** for the http-log line */
  session?: Session;
  query?: unknown;
  rawQuery?: string;
}

/** `variables` and `operationName` of a request object, checked as upstream's aeson parser does. */
function requestShapeError(one: Record<string, unknown>, maxDepth: number): SvcError | undefined {
  const v = one.variables;
  if (v !== undefined && v !== null && (typeof v !== 'object' || Array.isArray(v))) {
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
    return new SvcError(200, e?.extensions?.code ?? 'unexpected', e?.message ?? '', e?.extensions?.path ?? '$');
  } catch {
    return undefined;
  }
}
/** The GraphQL endpoints: `v1alpha1` (its error envelope and statuses), `relay` (the Relay schema). */
export interface GraphQLEndpoint {
  v1alpha1: boolean;
  relay: boolean;
}
export const GRAPHQL_ENDPOINTS = new Map<string, GraphQLEndpoint>([
  ['/v1/graphql', { v1alpha1: false, relay: false }],
  ['/v1alpha1/graphql', { v1alpha1: true, relay: false }],
  ['/v1beta1/relay', { v1alpha1: false, relay: true }],
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
  const showInternal = (s?: Session) => config.devMode || (!!s && isAdmin(s) && config.adminInternalErrors);
  let closing = false;

  /** one request object of the body → its response text */
  const runOne = (one: unknown, session: Session, headers: RequestHeaders, endpoint: GraphQLEndpoint, requestId: string, signal?: CancelToken): string | Promise<string> => {
    if (!one || typeof one !== 'object' || typeof (one as GraphQLRequest).query !== 'string') {
      // upstream's GQLQueryText is a newtype over Text (its aeson parser is Text's)
      const e = one && typeof one === 'object' && !('query' in one) ? keyNotFound('query', '$') : typeMismatch('Text', 'String', (one as { query?: unknown })?.query, '$.query');
      return JSON.stringify(graphqlErrorBody(e, showInternal(session)));
    }
    const bad = requestShapeError(one as Record<string, unknown>, config.maxNestingDepth);
    if (bad) return JSON.stringify(graphqlErrorBody(bad, showInternal(session)));
    try {
      return gql.run(engine, session, one as GraphQLRequest, headers, { v1alpha1: endpoint.v1alpha1, relay: endpoint.relay, requestId, signal });
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
  const single = (v1alpha1: boolean, session: Session, query: unknown) => (out: string): Answer => {
    const error = firstError(out);
    return error ? { status: v1alpha1 ? 400 : 200, body: out, error, session, query } : { status: 200, body: out, session };
  };

  const withSession = (body: unknown, session: Session, headers: RequestHeaders, endpoint: GraphQLEndpoint, requestId: string, signal?: CancelToken): Answer | Promise<Answer> => {
    const v1alpha1 = endpoint.v1alpha1;
    if (Array.isArray(body)) {
      return (async () => {
        const parts: string[] = [];
        for (const one of body) parts.push(await runOne(one, session, headers, endpoint, requestId, signal));
        const error = parts.map(firstError).find((x) => x !== undefined);
        return { status: 200, body: `[${parts.join(',')}]`, session, ...(error ? { error, query: body } : {}) };
      })();
    }
    const out = runOne(body, session, headers, endpoint, requestId, signal);
    return typeof out === 'string' ? single(v1alpha1, session, body)(out) : out.then(single(v1alpha1, session, body));
  };

  /**
   * The response to a body. Without a webhook or JWT to consult and with a
   * cached plan, the only promise on the way is the statement's.
   */
  const answer = (text: string, headers: RequestHeaders, endpoint: GraphQLEndpoint, requestId: string, rawHeaders?: readonly string[], signal?: CancelToken): Answer | Promise<Answer> => {
    const v1alpha1 = endpoint.v1alpha1;
    // upstream authenticates first, then parses the body (Server/App.hs mkSpockAction)
    const parsed = (session: Session): Answer | Promise<Answer> => {
      let body: unknown;
      try {
        body = parseJsonBody(text);
      } catch (e) {
        return { ...failed(e, session, v1alpha1), rawQuery: text.length > 4096 ? `${text.slice(0, 4096)}…` : text };
      }
      try {
        return withSession(body, session, headers, endpoint, requestId, signal);
      } catch (e) {
        return failed(e, session, v1alpha1, body);
      }
    };
    let session: Session | undefined;
    try {
      session = auth.resolveNow?.(headers);
    } catch (e) {
      return authFailed(e, v1alpha1, undefined);
    }
    if (session) return parsed(session);
    return auth.resolve(headers, rawHeaders).then(parsed, (e) => authFailed(e, v1alpha1, undefined));
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

  const send = (req: IncomingMessage, res: ServerResponse, started: bigint, requestId: string, answer: Answer) => {
    const { status, body } = answer;
    const headers: Record<string, string | number | string[]> = commonHeaders(req, allowOrigin, requestId);
    headers['content-type'] = JSON_TYPE;
    // Set-Cookie of action handlers and remote schemas (src/http/responseHeaders.ts)
    const cookies = takeSetCookies(req.headers);
    if (cookies) headers['set-cookie'] = cookies;
    const finish = (payload: string | Buffer) => {
      headers['content-length'] = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
      res.writeHead(status, headers);
      res.end(payload);
      logRequest?.({
        req,
        status,
        ms: Number(process.hrtime.bigint() - started) / 1e6,
        requestId,
        failure: answer.error,
        session: answer.session,
        responseSize: Buffer.byteLength(body), // before compression
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
      if (req.method !== 'POST') return false;
      const url = req.url ?? '';
      const q = url.indexOf('?');
      const endpoint = GRAPHQL_ENDPOINTS.get(q < 0 ? url : url.slice(0, q));
      if (endpoint === undefined || !config.enabledApis.has('graphql')) return false;
      const v1alpha1 = endpoint.v1alpha1;
      const started = process.hrtime.bigint();
      const requestId = requestIdOf(req);
      if (closing) {
        res.writeHead(503, { 'content-type': JSON_TYPE, connection: 'close' });
        res.end(JSON.stringify({ path: '$', error: 'the server is shutting down', code: 'unexpected' }));
        return true;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let tooLarge = false;
      req.on('data', (c: Buffer) => {
        if (tooLarge) return;
        size += c.length;
        if (size > config.bodyLimit) {
          tooLarge = true;
          const e = new SvcError(413, 'payload-too-large', `request body exceeds ${config.bodyLimit} bytes`);
          res.setHeader('connection', 'close');
          send(req, res, started, requestId, { status: 413, body: JSON.stringify({ path: e.path, error: e.message, code: e.code }), error: e });
          req.resume();
          return;
        }
        chunks.push(c);
      });
      req.on('end', () => {
        if (tooLarge) return;
        const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
        const done = (r: Answer) => send(req, res, started, requestId, r);
        // the client leaving before the answer cancels the statement in PostgreSQL
        const cancel = new CancelToken();
        res.once('close', () => {
          if (!res.writableFinished) cancel.cancel();
        });
        const r = answer(text, req.headers, endpoint, requestId, req.rawHeaders, cancel);
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
