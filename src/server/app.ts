/**
 * HTTP routes. Every request: authenticate → pick the current schema cache →
 * run → envelope. Errors become `{path, error, code}` (/v1/query) or GraphQL
 * `errors` (/v1/graphql) with the documented statuses; never a stack trace.
 */
import { createServer } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Config } from '../config/config.js';
import type { Engine } from '../engine.js';
import { SvcError } from '../errors.js';
import { jsonDeeperThan, jsonSyntaxMessage, jsonText, parseJsonExact } from '../json.js';
import { runQueryRequest } from '../metadata/run.js';
import { VERSION } from '../version.js';
import type { Session } from './auth/session.js';
import { isAdmin } from './auth/session.js';
import { corsMatcher } from './cors.js';
import { acceptsGzip, commonHeaders, compress } from './response.js';
import { queryErrorBody, toSvcError } from './errors.js';
import { showInternalErrors } from '../execute/errors.js';
import { attachWebsocket } from './websocket/attach.js';
import { cleanDump, parsePgDumpArgs, runPgDump } from './pgdump.js';
import { createMetrics } from './metrics.js';
import { serverMetrics } from './cluster.js';
import { graphqlHttp } from './graphqlHttp.js';
import { restHttp } from './rest.js';
import { openApiDocument } from '../rest/openapi.js';
import { httpLogWriter, requestIds } from './httpLog.js';
import { registerConsole } from './console.js';
import { registerProjectApi } from './project.js';
import { tracing, type Span } from '../core/tracing.js';
import type { GraphQLHandlers, SessionResolver } from './handlers.js';
import { performance } from 'node:perf_hooks';

const notFound = () => new SvcError(404, 'not-found', 'resource does not exist');

export async function buildApp(engine: Engine, auth: SessionResolver, gql: GraphQLHandlers): Promise<FastifyInstance> {
  const config: Config = engine.config;
  const allowOrigin = corsMatcher(config);
  const logRequest = config.enabledLogTypes.includes('http-log') ? httpLogWriter(engine.log) : undefined;
  const requestIdOf = requestIds();
  // GraphQL POSTs are answered on node:http directly (graphqlHttp.ts); Fastify serves the rest
  const fast = graphqlHttp(engine, auth, gql, allowOrigin);
  // REST endpoints (/api/rest/…) on node:http too, through the same GraphQL pipeline (rest.ts)
  const rest = restHttp(engine, auth, gql, allowOrigin);
  const app = Fastify({
    bodyLimit: config.bodyLimit,
    logger: false,
    return503OnClosing: true,
    genReqId: (req) => requestIdOf(req),
    serverFactory: (handler) =>
      createServer((req, res) => {
        if (!fast.handle(req, res) && !rest.handle(req, res)) handler(req, res);
      }),
  });
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    fast.close();
    rest.close();
  });
  const enabled = (api: 'graphql' | 'metadata' | 'pgdump' | 'config') => config.enabledApis.has(api);

  // bodies are parsed here so that malformed JSON gets Hasura's error, not fastify's; numerals a
  // double would change are kept exact (JsonNumber: /v1/query's data operations use them)
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, parseJsonExact(text));
    } catch {
      done(null, { __invalidJson: true, message: jsonSyntaxMessage(text), text: text.length > 4096 ? `${text.slice(0, 4096)}…` : text });
    }
  });

  app.addHook('onRequest', async (req, reply) => {
    (req as FastifyRequest & { startedAt: bigint }).startedAt = process.hrtime.bigint();
    for (const [k, v] of Object.entries(commonHeaders(req.raw, allowOrigin, req.id))) reply.header(k, v);
    if (req.method === 'OPTIONS') {
      reply.code(204).send();
    }
  });

  app.addHook('onResponse', async (req, reply) => {
    if (!logRequest) return;
    const started = (req as FastifyRequest & { startedAt?: bigint }).startedAt;
    const ms = started ? Number(process.hrtime.bigint() - started) / 1e6 : undefined;
    const { svcError: failure, svcSession: session } = reply as LoggedReply;
    const body = req.body as { __invalidJson?: boolean; text?: string } | undefined;
    const invalid = body?.__invalidJson === true;
    const size = (reply as LoggedReply).svcSize ?? Number(reply.getHeader('content-length'));
    logRequest({
      req: req.raw,
      status: reply.statusCode,
      ms,
      requestId: req.id,
      failure,
      session,
      responseSize: Number.isFinite(size) ? size : undefined,
      query: failure && !invalid ? body : undefined,
      rawQuery: failure && invalid ? body.text : undefined,
    });
  });

  // gzip when the client accepts it (Hasura compresses every response then)
  app.addHook('onSend', async (req, reply, payload) => {
    if (!acceptsGzip(req.raw) || reply.getHeader('content-encoding')) return payload;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    (reply as LoggedReply).svcSize = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length; // logged before compression
    const c = await compress(payload);
    if (!c.gzipped) return payload;
    reply.header('content-encoding', 'gzip');
    reply.removeHeader('content-length');
    return c.body;
  });

  app.setNotFoundHandler((req, reply) => {
    sendQueryError(reply, notFound(), true);
  });

  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, req, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return sendQueryError(reply, new SvcError(413, 'payload-too-large', `request body exceeds ${config.bodyLimit} bytes`), true);
    }
    if (error.statusCode && error.statusCode < 500) {
      return sendQueryError(reply, new SvcError(error.statusCode, 'bad-request', error.message), true);
    }
    engine.log.error({ type: 'http-log', err: error.message }, 'unhandled error');
    return sendQueryError(reply, new SvcError(500, 'unexpected', 'an unexpected error occurred'), false);
  });

  /** the caller of a request; kept on the reply for the http-log line's `user_vars` */
  /** `span`: tracing on, the request's span (parent of the auth webhook's call) */
  const resolve = async (req: FastifyRequest, reply?: FastifyReply, span?: Span) => {
    const session = await auth.resolve(req.headers as Record<string, string | string[] | undefined>, req.raw.rawHeaders, span);
    if (reply) (reply as LoggedReply).svcSession = session;
    return session;
  };
  const showInternal = (s?: Session) => showInternalErrors(config, s);

  /**
   * Readiness (/readyz, /healthz?strict=true): why this process cannot serve now (shutting down,
   * no schema cache, the database not answering within 2 s), or undefined when it can.
   */
  const notReady = async (): Promise<string | undefined> => {
    if (closing) return 'shutting down';
    if (!engine.cache) return 'schema cache not built';
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([engine.db.query('select 1'), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), 2000)))]);
    } catch {
      return 'database unreachable';
    } finally {
      clearTimeout(timer);
    }
    return undefined;
  };
  const ready = async (reply: FastifyReply) => {
    const why = await notReady();
    reply
      .code(why ? 503 : 200)
      .type('text/plain')
      .send(why ? `NOT READY: ${why}` : 'OK');
    return reply;
  };
  app.get('/readyz', async (_req, reply) => ready(reply));

  app.get('/healthz', async (req, reply) => {
    if ((req.query as { strict?: string } | undefined)?.strict === 'true') return ready(reply);
    try {
      await engine.db.query('select 1');
      const inconsistent = engine.cache.inconsistent.length > 0;
      reply
        .code(200)
        .type('text/plain')
        .send(inconsistent ? 'WARN: inconsistent objects in schema' : 'OK');
    } catch {
      reply.code(500).type('text/plain').send('ERROR');
    }
    return reply;
  });

  app.get('/v1/version', async () => ({ version: VERSION }));

  app.post('/v1/query', async (req, reply) => {
    if (!enabled('metadata')) return sendQueryError(reply, notFound(), true);
    const t0 = performance.now();
    const t = tracing;
    const tp = req.headers.traceparent;
    const ts = req.headers.tracestate;
    const span = t?.start(
      'POST /v1/query',
      { 'http.request.method': 'POST', 'url.path': '/v1/query', 'http.route': '/v1/query', 'svc.request_id': req.id },
      { kind: 'server', traceparent: typeof tp === 'string' ? tp : null, tracestate: typeof ts === 'string' ? ts : null },
    );
    let session: Session | undefined;
    let opType = 'unknown';
    let error: SvcError | undefined;
    const handle = async () => {
      try {
        session = await resolve(req, reply, span);
        jsonBody(req);
        const result = await runQueryRequest(engine, session, req.body, req.headers as Record<string, string | string[] | undefined>, span);
        // the operation's type as a label only once it ran (a known type: bounded cardinality)
        const type = (req.body as { type?: unknown } | undefined)?.type;
        if (typeof type === 'string') opType = type;
        reply
          .code(200)
          .type('application/json')
          .send(jsonText(result ?? null));
      } catch (e) {
        error = toSvcError(e);
        sendQueryError(reply, error, showInternal(session), engine);
      }
    };
    if (span) {
      reply.header('x-svc-trace-id', span.spanContext().traceId);
      await handle();
      span.setAttributes({ 'svc.query.type': opType, 'http.response.status_code': reply.statusCode, ...(session ? { 'svc.role': session.role } : {}) });
      if (error) t!.fail(span, error.code, error.message);
      span.end();
    } else await handle();
    engine.histograms.requestDuration.observe3((performance.now() - t0) / 1000, '/v1/query', opType, error ? 'error' : 'success');
    return reply;
  });

  app.post('/v1/graphql/explain', async (req, reply) => {
    if (!enabled('metadata')) return sendQueryError(reply, notFound(), true);
    let session: Session | undefined;
    try {
      session = await resolve(req, reply);
      jsonBody(req);
      if (!isAdmin(session)) throw new SvcError(400, 'access-denied', 'restricted access : admin only');
      if (jsonDeeperThan(req.body, config.maxNestingDepth))
        throw new SvcError(400, 'parse-failed', `the request is nested deeper than ${config.maxNestingDepth} levels`, '$');
      const result = await gql.explain(engine, session, req.body, req.headers as Record<string, string | string[] | undefined>);
      reply.code(200).type('application/json').send(jsonText(result));
    } catch (e) {
      sendQueryError(reply, toSvcError(e), showInternal(session), engine);
    }
    return reply;
  });

  app.post('/v1alpha1/pg_dump', async (req, reply) => {
    if (!enabled('pgdump')) return sendQueryError(reply, notFound(), true);
    try {
      const session = await resolve(req, reply);
      jsonBody(req);
      if (!isAdmin(session)) throw new SvcError(400, 'access-denied', 'restricted access : admin only');
      const { opts, clean } = parsePgDumpArgs(req.body);
      if (!config.databaseUrl) throw new SvcError(400, 'not-supported', 'pg_dump is not available on the embedded database');
      const out = await runPgDump(config.databaseUrl, opts);
      reply
        .code(200)
        .type('application/sql')
        .send(clean ? cleanDump(out) : out);
    } catch (e) {
      sendQueryError(reply, toSvcError(e), false, engine);
    }
    return reply;
  });

  const metrics = createMetrics(engine);
  const scrape = serverMetrics(metrics);
  app.get('/v1/metrics', async (req, reply) => {
    try {
      const session = await resolve(req, reply);
      if (!isAdmin(session)) throw new SvcError(400, 'access-denied', 'restricted access : admin only');
      reply
        .code(200)
        .type(metrics.contentType)
        .send(await scrape());
    } catch (e) {
      sendQueryError(reply, toSvcError(e), false, engine);
    }
    return reply;
  });

  app.get('/v1alpha1/config', async (req, reply) => {
    if (!enabled('config')) return sendQueryError(reply, notFound(), true);
    try {
      const session = await resolve(req, reply);
      if (!isAdmin(session)) throw new SvcError(400, 'access-denied', 'restricted access : admin only');
      const d = auth.describe();
      reply.code(200).send({
        version: VERSION,
        is_admin_secret_set: d.is_admin_secret_set ?? false,
        is_auth_hook_set: d.is_auth_hook_set ?? false,
        is_jwt_set: d.is_jwt_set ?? false,
        jwt: d.jwt ?? null,
        is_allow_list_enabled: config.enableAllowlist,
        live_queries: { batch_size: config.liveQueriesBatchSize, refetch_delay: config.liveQueriesRefetchInterval },
      });
    } catch (e) {
      sendQueryError(reply, toSvcError(e), false, engine);
    }
    return reply;
  });

  // the OpenAPI 3 document of the REST endpoints (Hasura v2's /api/swagger/json; admin only)
  app.get('/api/swagger/json', async (req, reply) => {
    if (!enabled('metadata')) return sendQueryError(reply, notFound(), true);
    try {
      const session = await resolve(req, reply);
      if (!isAdmin(session)) throw new SvcError(400, 'access-denied', 'restricted access : admin only');
      reply
        .code(200)
        .type('application/json')
        .send(JSON.stringify(await openApiDocument(engine.cache, config)));
    } catch (e) {
      sendQueryError(reply, toSvcError(e), false, engine);
    }
    return reply;
  });

  registerConsole(app, config, engine.log);
  registerProjectApi(app, engine, config, resolve, (reply, e) => sendQueryError(reply, toSvcError(e), true, engine));
  attachWebsocket(app, engine, auth, gql);
  return app;
}

/**
 * A POST route's body must be JSON: an empty body is upstream's `Error in $: not enough input`, a
 * malformed one names what the parser found (code invalid-json, HTTP 400). Checked after
 * authentication, as upstream (Server/App.hs parses the body once the caller is known).
 */
function jsonBody(req: FastifyRequest): void {
  const body = req.body as { __invalidJson?: boolean; message?: string } | undefined;
  if (body === undefined) throw new SvcError(400, 'invalid-json', jsonSyntaxMessage(''));
  if (body?.__invalidJson) throw new SvcError(400, 'invalid-json', body.message ?? jsonSyntaxMessage(''));
}

/** What the http-log line needs from a reply: its error and the caller. */
type LoggedReply = FastifyReply & { svcError?: SvcError; svcSession?: Session; svcSize?: number };

function sendQueryError(reply: FastifyReply, e: SvcError, showInternal: boolean, engine?: Engine): FastifyReply {
  (reply as LoggedReply).svcError = e;
  if (e.status >= 500 && engine) engine.log.error({ type: 'http-log', code: e.code, err: String(e.internal ?? e.message) }, 'request failed');
  return reply
    .code(e.status)
    .type('application/json')
    .send(JSON.stringify(queryErrorBody(e, showInternal)));
}
