/**
 * GraphQL over websockets on /v1/graphql, /v1alpha1/graphql and /v1beta1/relay, in both sub-protocols, chosen by
 * the client's `Sec-WebSocket-Protocol` (`graphql-transport-ws` when offered, else the legacy one):
 *
 * - legacy `graphql-ws` (subscriptions-transport-ws): connection_init (headers in payload) →
 *   connection_ack + `ka` keep-alives; start → data … complete; stop; connection_terminate;
 * - `graphql-transport-ws` (the `graphql-ws` library): connection_init → connection_ack;
 *   ping/pong; subscribe → next … complete; complete from the client stops; close codes 4400 (bad
 *   message), 4401 (subscribe before the ack), 4403 (authentication failed, session expired),
 *   4408 (no connection_init within 3 s), 4409 (duplicate id), 4429 (second connection_init),
 *   4500 (internal error).
 *
 * Queries and mutations run once; subscriptions are live queries: multiplexed into their cohort
 * (subscriptions/liveQueryManager.ts), or, when they have no database field, re-run alone
 * (subscriptions/soloLiveQuery.ts).
 *
 * Robustness rules:
 * - every frame is validated; a bad legacy frame gets `connection_error` and never throws;
 * - messages that arrive while `connection_init` is being authenticated are queued and handled in
 *   order once it is answered (clients send `start`/`subscribe` right behind the init);
 * - each legacy `connection_init` replaces the session (the upgrade request's headers plus this
 *   init's headers; an earlier init's headers do not linger);
 * - the session's expiry (JWT `exp`, auth webhook `Expires`/`Cache-Control`) ends the connection:
 *   its operations stop and the socket is closed;
 * - caps: `--max-subscriptions-per-connection` operations per socket, `--max-websocket-connections`
 *   sockets per process (503 on the upgrade);
 * - backpressure: a live result for a client whose socket buffer holds more than 1 MiB waits, and
 *   a newer result of the same operation replaces it (a slow client gets the latest, memory stays
 *   bounded by one pending result per operation);
 * - shutdown closes every socket with 1001 before the HTTP server waits for its requests;
 * - with `--disable-cors` the handshake's Cookie header is not passed on (to the auth webhook)
 *   unless `--ws-read-cookie`: a page on another site could otherwise open a socket with the
 *   user's cookies (cross-site websocket hijacking), as upstream.
 *
 * `websocket-log` lines (deployment/logging.rst): `accepted` when a socket opens, `rejected` when
 * its connection_init fails authentication (4403 / connection_error), `operation` with
 * `started` / `completed` / `stopped` / `query_err` (request id, operation id and name, query),
 * `closed` with the close code and reason; each with `connection_info` (websocket id, JWT expiry,
 * msg) and the session's `user_vars`.
 */
import { tracing } from '../core/tracing.js';
import { requestDuration } from '../core/histogram.js';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { parse, type OperationDefinitionNode } from 'graphql';
import type { Engine } from '../engine.js';
import type { GraphQLRequest } from '../execute/interface.js';
import { startLiveQuery, type LiveQuery } from '../subscriptions/soloLiveQuery.js';
import { LiveQueryManager, liveQueryStats, type LiveQueryHandle } from '../subscriptions/liveQueryManager.js';
import { StreamManager, type StreamHandle } from '../subscriptions/streamManager.js';
import type { StreamPlan } from '../subscriptions/streamPlan.js';
import { CloseCode, MessageType, parseMessage, type Message } from 'graphql-ws';
import type { GraphQLHandlers, SessionResolver } from './app.js';
import type { Session } from './auth/session.js';
import { toSvcError } from './errors.js';
import { SvcError, type ErrorCode } from '../errors.js';
import { errorObject, errorResponse, showInternalErrors, type ErrorFormat } from '../execute/errors.js';
import { GRAPHQL_ENDPOINTS, type GraphQLEndpoint } from './graphqlHttp.js';

const KEEPALIVE_MS = 5_000;
const LEGACY = 'graphql-ws';
const TRANSPORT = 'graphql-transport-ws';
/** graphql-transport-ws: the connection_init must arrive within this (graphql-ws's default) */
const INIT_TIMEOUT_MS = 3_000;
/** a live result waits (and is replaced by newer ones) while the socket buffers more than this */
const HIGH_WATER_BYTES = 1024 * 1024;
/** the longest a timer can wait (setTimeout's limit); later expiries are re-armed */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface ClientMessage {
  type: string;
  id?: string;
  payload?: unknown;
}

/** A frame as a client message, or the reason it is not one. */
export function parseClientMessage(data: RawData, isBinary: boolean): ClientMessage | string {
  if (isBinary) return 'binary frames are not supported';
  let v: unknown;
  try {
    v = JSON.parse(Array.isArray(data) ? Buffer.concat(data).toString('utf8') : data.toString());
  } catch {
    return 'the message is not valid JSON';
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'the message is not a JSON object';
  const m = v as Record<string, unknown>;
  if (typeof m.type !== 'string') return 'the message has no string "type"';
  if (m.id !== undefined && typeof m.id !== 'string' && typeof m.id !== 'number') return 'the message "id" is not a string';
  if (m.payload !== undefined && m.payload !== null && (typeof m.payload !== 'object' || Array.isArray(m.payload))) return 'the message "payload" is not an object';
  return { type: m.type, ...(m.id !== undefined ? { id: String(m.id) } : {}), ...(m.payload !== undefined && m.payload !== null ? { payload: m.payload } : {}) };
}

export function attachWebsocket(app: FastifyInstance, engine: Engine, auth: SessionResolver, gql: GraphQLHandlers): void {
  const config = engine.config;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: Math.min(config.bodyLimit, 64 * 1024 * 1024),
    handleProtocols: (protocols) => (protocols.has(TRANSPORT) ? TRANSPORT : protocols.has(LEGACY) ? LEGACY : false),
  });
  const live = new LiveQueryManager({
    // live queries are reads: the replicas when there are healthy ones (src/db/replicas.ts)
    db: () => engine.readDb(),
    log: engine.log,
    intervalMs: config.liveQueriesRefetchInterval,
    batchSize: config.liveQueriesBatchSize,
    currentCache: () => engine.cache,
    concurrency: Math.floor(config.pgConnections / 2),
    // change-driven refetch (src/changes/tracker.ts); with replicas a change waits for their replay
    changes: engine.changes,
    ...(engine.replicas ? { fence: () => engine.replicas!.caughtUp(engine.db), primary: () => engine.db } : {}),
  });
  const streams = new StreamManager({
    // the primary: holding rows back reads its running transactions (src/subscriptions/streamPlan.ts)
    db: () => engine.db,
    log: engine.log,
    intervalMs: config.streamingQueriesRefetchInterval,
    batchSize: config.streamingQueriesBatchSize,
    currentCache: () => engine.cache,
    concurrency: Math.floor(config.pgConnections / 4),
    changes: engine.changes,
  });
  let closing = false;
  const refuse = (socket: Duplex, status: string, message: string) => {
    socket.write(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: application/json\r\n\r\n${JSON.stringify({ path: '$', error: message, code: 'unexpected' })}`);
    socket.destroy();
  };
  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const path = (req.url ?? '').split('?')[0]!;
    const endpoint = GRAPHQL_ENDPOINTS.get(path);
    if (endpoint === undefined || !config.enabledApis.has('graphql')) {
      socket.write('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      socket.destroy();
      return;
    }
    if (closing) return refuse(socket, '503 Service Unavailable', 'the server is shutting down');
    if (wss.clients.size >= config.maxWebsocketConnections) {
      engine.log.warn({ type: 'websocket-log', detail: { event: 'refused', reason: 'max-websocket-connections', limit: config.maxWebsocketConnections } });
      return refuse(socket, '503 Service Unavailable', `too many websocket connections (limit ${config.maxWebsocketConnections})`);
    }
    wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, req, endpoint));
  });
  // before the HTTP server waits for its connections: open sockets would hold it for ever
  app.addHook('preClose', async () => {
    closing = true;
    for (const c of wss.clients) c.close(1001, 'server shutting down');
    wss.close();
    await live.close();
    await streams.close();
  });

  const wsLogOn = config.enabledLogTypes.includes('websocket-log');

  function onConnection(ws: WebSocket, req: IncomingMessage, endpoint: GraphQLEndpoint): void {
    const { v1alpha1, relay } = endpoint;
    const transport = ws.protocol === TRANSPORT;
    const upgradeHeaders = { ...req.headers };
    if (config.disableCors && !config.wsReadCookie) delete upgradeHeaders.cookie;
    const websocketId = randomUUID();
    let headers: Record<string, string | string[] | undefined> = upgradeHeaders;
    let session: Session | undefined;
    /** one websocket-log line (upstream's WSLog: event, connection_info, user_vars) */
    const wsLog = (event: Record<string, unknown>, msg: string | null = null) => {
      if (!wsLogOn) return;
      const jwtExpiry = session?.expiresAt !== undefined ? new Date(session.expiresAt).toISOString() : null;
      engine.log.info({ type: 'websocket-log', detail: { event, connection_info: { websocket_id: websocketId, jwt_expiry: jwtExpiry, msg }, user_vars: session?.vars ?? null } });
    };
    /** an `operation` event */
    const opLog = (opId: string, operationType: Record<string, unknown>, op?: { requestId: string; request: GraphQLRequest }) =>
      wsLog({
        type: 'operation',
        detail: {
          request_id: op?.requestId ?? null,
          operation_id: opId,
          query: op ? { variables: op.request.variables ?? {}, query: op.request.query } : null,
          operation_type: operationType,
          operation_name: op?.request.operationName ?? null,
        },
      });
    /** while connection_init is being authenticated, later messages wait here */
    let queue: ClientMessage[] | undefined;
    const ops = new Map<string, () => void>();
    let ka: NodeJS.Timeout | undefined;
    let expiry: NodeJS.Timeout | undefined;
    let closed = false;
    /** graphql-transport-ws: a connection_init was received (a second one closes 4429) */
    let initReceived = false;
    let initTimer: NodeJS.Timeout | undefined;
    if (transport) {
      initTimer = setTimeout(() => {
        if (!initReceived) end(CloseCode.ConnectionInitialisationTimeout, 'Connection initialisation timeout');
      }, INIT_TIMEOUT_MS);
      initTimer.unref();
    }
    /** live results waiting for a slow client: the latest frame per operation */
    const pending = new Map<string, string>();
    let flushTimer: NodeJS.Timeout | undefined;

    const send = (msg: object) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
    };
    /** a `data` (legacy) or `next` frame around a response text */
    const dataFrame = (id: string, payloadJson: string) => `{"type":"${transport ? MessageType.Next : 'data'}","id":${JSON.stringify(id)},"payload":${payloadJson}}`;
    const sendData = (id: string, payloadJson: string) => {
      if (ws.readyState === ws.OPEN) ws.send(dataFrame(id, payloadJson));
    };
    const flush = () => {
      flushTimer = undefined;
      if (closed || ws.readyState !== ws.OPEN) return;
      for (const [id, frame] of pending) {
        if (ws.bufferedAmount > HIGH_WATER_BYTES) break;
        pending.delete(id);
        ws.send(frame);
      }
      if (pending.size > 0) scheduleFlush();
    };
    const scheduleFlush = () => {
      if (flushTimer) return;
      flushTimer = setTimeout(flush, 25);
      flushTimer.unref();
    };
    /** a live result: sent now, or kept (replacing an older one) until the socket drains */
    const sendLive = (id: string, payloadJson: string) => {
      if (ws.readyState !== ws.OPEN || !ops.has(id)) return;
      const frame = dataFrame(id, withData(payloadJson));
      if (pending.size === 0 && ws.bufferedAmount <= HIGH_WATER_BYTES) {
        ws.send(frame);
        return;
      }
      if (pending.delete(id)) liveQueryStats.dropped++;
      pending.set(id, frame);
      scheduleFlush();
    };
    /**
     * legacy protocol on /v1alpha1/graphql: an execution error's payload carries `"data": null`
     * beside its errors, as upstream's GQExecError encodes it
     */
    const withData = (payloadJson: string) => (v1alpha1 && !transport && payloadJson.startsWith('{"errors":') ? `{"data":null,${payloadJson.slice(1)}` : payloadJson);
    const errorFormat = (): ErrorFormat => {
      return { v1alpha1, legacy: v1alpha1, includeInternal: showInternalErrors(engine.config, session) };
    };
    /**
     * An operation that fails before execution (parse, validation, permissions, variables):
     * legacy: an `error` message followed by `complete`, as upstream's `withComplete . preExecErr`
     * (`complete` is left out for a start refused as a protocol error: bad payload, duplicate id,
     * cap, as upstream's `sendStartErr`); the payload is `{errors: [{extensions, message}]}` on
     * /v1/graphql and the legacy `{path, error, code}` on /v1alpha1/graphql.
     * graphql-transport-ws: an `error` message whose payload is the list of errors; it ends the
     * operation (no `complete`). Execution errors are `data`/`next` messages in both.
     */
    const preExecError = (id: string, e: SvcError, complete: boolean) => {
      const one = errorObject(e, errorFormat());
      if (transport) {
        send({ type: MessageType.Error, id, payload: [one] });
        return;
      }
      send({ type: 'error', id, payload: v1alpha1 ? one : { errors: [one] } });
      if (complete) send({ type: 'complete', id });
    };
    const opError = (id: string, message: string, code: ErrorCode = 'bad-request') => preExecError(id, new SvcError(400, code, message, '$'), false);
    const stopOp = (id: string) => {
      const stop = ops.get(id);
      if (stop) {
        stop();
        ops.delete(id);
        opLog(id, { type: 'stopped' });
      }
      pending.delete(id);
    };
    const stopAll = () => {
      for (const stop of ops.values()) stop();
      ops.clear();
      pending.clear();
    };
    const cleanup = () => {
      closed = true;
      stopAll();
      queue = undefined;
      if (ka) clearInterval(ka);
      if (expiry) clearTimeout(expiry);
      if (initTimer) clearTimeout(initTimer);
      if (flushTimer) clearTimeout(flushTimer);
    };
    const end = (code: number, reason: string) => {
      cleanup();
      // a close reason is at most 123 bytes
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, Buffer.from(reason).subarray(0, 123).toString());
    };
    ws.on('close', (code, reason) => {
      const wasClosed = closed;
      cleanup();
      wsLog({ type: 'closed' }, `${code}${reason.length ? ` ${reason.toString()}` : ''}${wasClosed ? '' : ' (by the client)'}`);
    });
    ws.on('error', cleanup);
    wsLog({ type: 'accepted' }, `${transport ? TRANSPORT : LEGACY} on ${req.url ?? ''}`);

    /** ends the connection when the session expires, as upstream does */
    const armExpiry = (s: Session) => {
      if (expiry) clearTimeout(expiry);
      expiry = undefined;
      if (s.expiresAt === undefined) return;
      const fire = () => {
        const left = s.expiresAt! - Date.now();
        if (left > 0) {
          expiry = setTimeout(fire, Math.min(left, MAX_TIMER_MS));
          expiry.unref();
          return;
        }
        wsLog({ type: 'session_expired' }, 'session expired');
        if (transport) return end(CloseCode.Forbidden, 'Forbidden: session expired');
        send({ type: 'connection_error', payload: 'session expired' });
        end(1000, 'session expired');
      };
      fire();
    };

    const init = async (payload: unknown) => {
      const given = (payload as { headers?: unknown } | undefined)?.headers;
      // this init's headers replace an earlier init's; the client's own spelling is kept
      const fresh: Record<string, string | string[] | undefined> = {};
      if (given && typeof given === 'object' && !Array.isArray(given)) {
        for (const [k, v] of Object.entries(given)) if (typeof v === 'string') fresh[k] = v;
      }
      const lower = new Set(Object.keys(fresh).map((k) => k.toLowerCase()));
      for (const [k, v] of Object.entries(upgradeHeaders)) if (!lower.has(k)) fresh[k] = v;
      headers = fresh;
      session = undefined;
      stopAll();
      queue = [];
      try {
        session = await auth.resolve(headers);
      } catch (e) {
        if (closed) return;
        const err = toSvcError(e);
        wsLog({ type: 'rejected', detail: { path: err.path, error: err.message, code: err.code } }, transport ? `${CloseCode.Forbidden} Forbidden: ${err.message}` : `connection_error: ${err.message}`);
        if (transport) return end(CloseCode.Forbidden, `Forbidden: ${err.message}`);
        send({ type: 'connection_error', payload: err.message });
        end(1000, 'connection_init failed');
        return;
      }
      if (closed) return;
      send({ type: 'connection_ack' });
      if (!transport) {
        send({ type: 'ka' });
        if (!ka) {
          ka = setInterval(() => send({ type: 'ka' }), KEEPALIVE_MS);
          ka.unref();
        }
      }
      armExpiry(session);
      const waiting = queue ?? [];
      queue = undefined;
      for (const q of waiting) handle(q);
    };

    /** runs an operation (a checked start/subscribe payload) under this id */
    const startOperation = (id: string, request: GraphQLRequest) => {
      const s = session!;
      let cancelled = false;
      const stop = () => (cancelled = true);
      ops.set(id, stop);
      const current = () => !cancelled && ops.get(id) === stop;
      const sent = headers['x-request-id'];
      const op = { requestId: typeof sent === 'string' && sent !== '' ? sent : randomUUID(), request };
      opLog(id, { type: 'started' }, op);
      const firstRun = () => runFirst(id, s, request, current, op);
      if (operationKind(request) === 'subscription') {
        // a streaming subscription (`<table>_stream`) has no first run: its batches come from its cohort
        void gql.planStream(engine, s, request, headers, { relay }).then(
          (plan) => {
            if (!current()) return;
            if (!plan) return firstRun();
            const h = streamQuery(id, s, request, plan, op);
            ops.set(id, () => h.stop());
          },
          (e: unknown) => {
            if (!current()) return;
            // an error before execution, as the first run would answer it
            if (!(e instanceof SvcError)) return firstRun();
            ops.delete(id);
            opLog(id, { type: 'query_err', detail: { path: e.path, error: e.message, code: e.code } }, op);
            preExecError(id, e, true);
          },
        );
      } else firstRun();
    };

    /** runs an operation once; a subscription's first result starts its live query */
    const runFirst = (id: string, s: Session, request: GraphQLRequest, current: () => boolean, op: { requestId: string; request: GraphQLRequest }) => {
      // the first run tells a request that fails before execution (an `error` message) from one
      // that runs; a subscription then becomes a live query that starts from that first result.
      // The operation's span (tracing on; the handshake's traceparent as its parent) and its latency:
      // for a subscription, until its first result
      const info = { opType: 'unknown' };
      const t = tracing;
      const tp = headers.traceparent;
      const span = t?.start('svc.websocket.operation', { 'svc.websocket.operation_id': id, ...(request.operationName ? { 'graphql.operation.name': request.operationName } : {}) }, { kind: 'server', traceparent: typeof tp === 'string' ? tp : null });
      const t0 = performance.now();
      const firstResult = span ? t!.run(span, () => run(s, request, true, info)) : run(s, request, true, info);
      void firstResult.then((first) => {
        const failed = first instanceof SvcError ? { code: first.code, error: first.message } : executionError(first);
        requestDuration.observe3((performance.now() - t0) / 1000, 'websocket', info.opType, failed ? 'error' : 'success');
        if (span) {
          span.setAttribute('graphql.operation.type', info.opType);
          if (failed) t!.fail(span, String(failed.code ?? 'unexpected'), String(failed.error ?? ''));
          span.end();
        }
        if (!current()) return;
        if (first instanceof SvcError) {
          ops.delete(id);
          opLog(id, { type: 'query_err', detail: { path: first.path, error: first.message, code: first.code } }, op);
          preExecError(id, first, true);
          return;
        }
        if (operationKind(request) !== 'subscription') {
          ops.delete(id);
          const failed = executionError(first);
          if (failed) opLog(id, { type: 'query_err', detail: failed }, op);
          sendData(id, withData(first));
          send({ type: 'complete', id });
          opLog(id, { type: 'completed' }, op);
          return;
        }
        sendData(id, withData(first));
        const h = liveQuery(id, s, request, first);
        ops.set(id, () => h.stop());
      });
    };

    /** a streaming subscription: its cohort pushes each new batch; an error ends it */
    const streamQuery = (id: string, s: Session, request: GraphQLRequest, plan: StreamPlan, op: { requestId: string; request: GraphQLRequest }): StreamHandle => {
      const errorText = (e: unknown) => errorResponse(e, errorFormat());
      return streams.add(plan, {
        push: (text) => {
          if (ws.readyState === ws.OPEN && ops.has(id)) ws.send(dataFrame(id, withData(text)));
        },
        fail: (text) => {
          if (!ops.has(id)) return;
          ops.delete(id);
          const failed = executionError(text);
          if (failed) opLog(id, { type: 'query_err', detail: failed }, op);
          sendData(id, withData(text));
          send({ type: 'complete', id });
        },
        ready: () => ws.bufferedAmount <= HIGH_WATER_BYTES,
        errorText,
        replan: () => {
          try {
            return gql.planStreamNow(engine, s, request, headers, { relay }) ?? errorText(new SvcError(400, 'validation-failed', 'the subscription is no longer a streaming subscription', '$'));
          } catch (e) {
            return errorText(e);
          }
        },
      });
    };

    /** the live query of a subscription whose first result was sent: multiplexed when it can be */
    const liveQuery = (id: string, s: Session, request: GraphQLRequest, first: string): LiveQueryHandle | LiveQuery => {
      const errorText = (e: unknown) => errorResponse(e, errorFormat());
      const plan = () => {
        try {
          return gql.planLive(engine, s, request, headers, { relay });
        } catch {
          return null;
        }
      };
      const p = plan();
      if (p) {
        return live.add(
          p,
          {
            push: (text) => sendLive(id, text),
            errorText,
            replan: () => {
              try {
                return gql.planLive(engine, s, request, headers, { relay }) ?? errorText(new SvcError(400, 'validation-failed', 'the subscription no longer selects a database field', '$'));
              } catch (e) {
                return errorText(e);
              }
            },
          },
          first,
        );
      }
      return startLiveQuery({ first, sendFirst: false, run: () => run(s, request, false) as Promise<string>, send: (out) => sendLive(id, out), intervalMs: config.liveQueriesRefetchInterval });
    };

    const start = (m: ClientMessage) => {
      const id = m.id;
      if (id === undefined) {
        send({ type: 'connection_error', payload: 'start received without an id' });
        return;
      }
      if (!session) {
        // upstream's sendStartErr: an `error` for this id, code start-failed
        preExecError(id, new SvcError(400, 'start-failed', 'start received before the connection is initialised', '$'), false);
        return;
      }
      if (ops.has(id)) return opError(id, `an operation already exists with this id: ${id}`);
      if (ops.size >= config.maxSubscriptionsPerConnection) {
        return opError(id, `too many operations on this connection (limit ${config.maxSubscriptionsPerConnection}); stop one first`);
      }
      const p = m.payload as Partial<GraphQLRequest> | undefined;
      if (!p || typeof p.query !== 'string') return opError(id, 'the start payload must be an object with a string "query"', 'parse-failed');
      if (p.variables !== undefined && p.variables !== null && (typeof p.variables !== 'object' || Array.isArray(p.variables))) {
        return opError(id, 'variables must be an object', 'parse-failed');
      }
      if (p.operationName !== undefined && p.operationName !== null && typeof p.operationName !== 'string') {
        return opError(id, 'operationName must be a string', 'parse-failed');
      }
      startOperation(id, { query: p.query, variables: p.variables ?? null, operationName: p.operationName ?? null });
    };

    const handleLegacy = (m: ClientMessage) => {
      switch (m.type) {
        case 'connection_init':
          void init(m.payload);
          return;
        case 'start':
          start(m);
          return;
        case 'stop': {
          if (m.id === undefined) {
            send({ type: 'connection_error', payload: 'stop received without an id' });
            return;
          }
          stopOp(m.id);
          return;
        }
        case 'connection_terminate':
          end(1000, 'connection_terminate');
          return;
        default:
          send({ type: 'connection_error', payload: `unknown message type ${JSON.stringify(m.type)}` });
      }
    };

    /** graphql-transport-ws: messages already validated by graphql-ws's parseMessage */
    const handleTransport = (m: Message) => {
      switch (m.type) {
        case MessageType.ConnectionInit:
          // the second one is refused in onMessage, before the queue
          void init(m.payload ?? undefined);
          return;
        case MessageType.Ping:
          send(m.payload ? { type: MessageType.Pong, payload: m.payload } : { type: MessageType.Pong });
          return;
        case MessageType.Pong:
          return;
        case MessageType.Subscribe: {
          if (!session) return end(CloseCode.Unauthorized, 'Unauthorized');
          if (ops.has(m.id)) return end(CloseCode.SubscriberAlreadyExists, `Subscriber for ${m.id} already exists`);
          if (ops.size >= config.maxSubscriptionsPerConnection) {
            return opError(m.id, `too many operations on this connection (limit ${config.maxSubscriptionsPerConnection}); complete one first`);
          }
          const p = m.payload;
          startOperation(m.id, { query: p.query, variables: (p.variables as Record<string, unknown> | null | undefined) ?? null, operationName: p.operationName ?? null });
          return;
        }
        case MessageType.Complete:
          stopOp(m.id);
          return;
        default:
          // server-to-client messages sent by a client
          end(CloseCode.BadRequest, `Unexpected message of type ${m.type} received`);
      }
    };

    const handle = (m: ClientMessage | Message) => {
      if (closed) return;
      if (queue && m.type !== 'connection_terminate') {
        queue.push(m as ClientMessage);
        return;
      }
      if (transport) handleTransport(m as Message);
      else handleLegacy(m as ClientMessage);
    };

    ws.on('message', (data, isBinary) => {
      try {
        if (transport) {
          let m: Message;
          try {
            if (isBinary) throw new Error('binary');
            m = parseMessage(Array.isArray(data) ? Buffer.concat(data).toString('utf8') : data.toString());
          } catch {
            return end(CloseCode.BadRequest, 'Invalid message received');
          }
          if (m.type === MessageType.ConnectionInit) {
            if (initReceived) return end(CloseCode.TooManyInitialisationRequests, 'Too many initialisation requests');
            initReceived = true;
            if (initTimer) clearTimeout(initTimer);
          }
          handle(m);
          return;
        }
        const m = parseClientMessage(data, isBinary);
        if (typeof m === 'string') {
          send({ type: 'connection_error', payload: `parsing ClientMessage failed: ${m}` });
          return;
        }
        handle(m);
      } catch (e) {
        // a bug, not an input: log it and end this connection, never the process
        engine.log.error({ type: 'websocket-log', err: e instanceof Error ? { message: e.message, stack: e.stack } : String(e) }, 'websocket message failed');
        end(transport ? CloseCode.InternalServerError : 1011, 'internal error');
      }
    });

    /** the response text, or (with `rejectPreExec`) the SvcError of a request that failed before execution */
    async function run(s: Session, request: GraphQLRequest, rejectPreExec: boolean, info?: { opType: string }): Promise<string | SvcError> {
      try {
        // a start is a client's operation (rate-limited); a live query's refetch is not
        return await gql.run(engine, s, request, headers, { v1alpha1, relay, legacyErrors: v1alpha1, rejectPreExec, client: rejectPreExec ? { ip: req.socket.remoteAddress } : undefined, ...(info ? { info } : {}) });
      } catch (e) {
        const err = e instanceof SvcError ? e : toSvcError(e);
        if (rejectPreExec) return err;
        const one = errorObject(err, { legacy: v1alpha1 });
        return JSON.stringify({ errors: [one] });
      }
    }
  }
}

function operationKind(req: GraphQLRequest): string | undefined {
  try {
    const doc = parse(req.query, { maxTokens: 20_000 });
    const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
    const op = req.operationName ? ops.find((o) => o.name?.value === req.operationName) : ops[0];
    return op?.operation;
  } catch {
    return undefined;
  }
}

/** The first error of an execution's response text (for the websocket-log line), if it failed. */
function executionError(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith('{"errors":')) return undefined;
  try {
    const e = (JSON.parse(text) as { errors: Array<Record<string, unknown> & { extensions?: { path?: string; code?: string }; message?: string }> }).errors[0];
    if (!e) return undefined;
    return e.extensions ? { path: e.extensions.path, error: e.message, code: e.extensions.code } : e;
  } catch {
    return undefined;
  }
}
