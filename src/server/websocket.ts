/**
 * The legacy `graphql-ws` (subscriptions-transport-ws) protocol on /v1/graphql and
 * /v1alpha1/graphql: connection_init (headers in payload) → connection_ack + `ka` keep-alives;
 * start → data … complete; stop; connection_terminate. Queries and mutations run once;
 * subscriptions are live queries (subscriptions/liveQuery.ts).
 *
 * Robustness rules:
 * - every frame is validated (JSON object, string `type`, string `id` where one is needed, object
 *   payload); a bad frame gets `connection_error` and never throws;
 * - messages that arrive while `connection_init` is being authenticated are queued and handled in
 *   order once it is answered (subscriptions-transport-ws sends `start` right behind the init);
 * - each `connection_init` replaces the session (the upgrade request's headers plus this init's
 *   headers; an earlier init's headers do not linger);
 * - the session's expiry (JWT `exp`, auth webhook `Expires`/`Cache-Control`) ends the connection:
 *   its operations stop and the socket is closed;
 * - caps: `--max-subscriptions-per-connection` operations per socket, `--max-websocket-connections`
 *   sockets per process (503 on the upgrade);
 * - shutdown closes every socket with 1001 before the HTTP server waits for its requests.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { parse, type OperationDefinitionNode } from 'graphql';
import type { Engine } from '../engine.js';
import type { GraphQLRequest } from '../execute/interface.js';
import { startLiveQuery } from '../subscriptions/liveQuery.js';
import type { GraphQLHandlers, SessionResolver } from './app.js';
import type { Session } from './auth/session.js';
import { toSvcError } from './errors.js';
import { SvcError } from '../errors.js';
import { errorObject } from '../execute/errors.js';
import { ADMIN_ROLE } from '../core/session.js';
import { GRAPHQL_ENDPOINTS, type GraphQLEndpoint } from './graphqlHttp.js';

const KEEPALIVE_MS = 5_000;

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
    handleProtocols: (protocols) => (protocols.has('graphql-ws') ? 'graphql-ws' : false),
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
  });

  function onConnection(ws: WebSocket, req: IncomingMessage, endpoint: GraphQLEndpoint): void {
    const { v1alpha1, relay } = endpoint;
    const upgradeHeaders = { ...req.headers };
    let headers: Record<string, string | string[] | undefined> = upgradeHeaders;
    let session: Session | undefined;
    /** while connection_init is being authenticated, later messages wait here */
    let queue: ClientMessage[] | undefined;
    const ops = new Map<string, () => void>();
    let ka: NodeJS.Timeout | undefined;
    let expiry: NodeJS.Timeout | undefined;
    let closed = false;

    const send = (msg: object) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
    };
    const sendRaw = (id: string, type: string, payloadJson: string) => {
      if (ws.readyState === ws.OPEN) ws.send(`{"type":${JSON.stringify(type)},"id":${JSON.stringify(id)},"payload":${payloadJson}}`);
    };
    /**
     * An operation that fails before execution (parse, validation, permissions, variables) gets an
     * `error` message followed by `complete`, as upstream's `withComplete . preExecErr`; a start
     * that is refused as a protocol error (bad payload, duplicate id, cap) gets the `error` alone,
     * as upstream's `sendStartErr`. The payload is
     * `{errors: [{extensions, message}]}` on /v1/graphql and the legacy `{path, error, code}` on
     * /v1alpha1/graphql. Execution errors are `data` messages in the same format.
     */
    const preExecError = (id: string, e: SvcError) => {
      const admin = session?.role === ADMIN_ROLE;
      const fmt = { legacy: v1alpha1, includeInternal: engine.config.devMode || (admin && engine.config.adminInternalErrors) };
      const one = errorObject(e, fmt);
      send({ type: 'error', id, payload: v1alpha1 ? one : { errors: [one] } });
    };
    const opError = (id: string, message: string, code = 'bad-request') => preExecError(id, new SvcError(400, code, message, '$'));
    const stopAll = () => {
      for (const stop of ops.values()) stop();
      ops.clear();
    };
    const cleanup = () => {
      closed = true;
      stopAll();
      queue = undefined;
      if (ka) clearInterval(ka);
      if (expiry) clearTimeout(expiry);
    };
    const end = (code: number, reason: string) => {
      cleanup();
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason);
    };
    ws.on('close', cleanup);
    ws.on('error', cleanup);

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
        engine.log.info({ type: 'websocket-log', detail: { event: 'session-expired' } });
        send({ type: 'connection_error', payload: 'session expired' });
        end(1000, 'session expired');
      };
      fire();
    };

    const init = async (m: ClientMessage) => {
      const given = (m.payload as { headers?: unknown } | undefined)?.headers;
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
        send({ type: 'connection_error', payload: toSvcError(e).message });
        end(1000, 'connection_init failed');
        return;
      }
      if (closed) return;
      send({ type: 'connection_ack' });
      send({ type: 'ka' });
      if (!ka) {
        ka = setInterval(() => send({ type: 'ka' }), KEEPALIVE_MS);
        ka.unref();
      }
      armExpiry(session);
      const waiting = queue ?? [];
      queue = undefined;
      for (const q of waiting) handle(q);
    };

    const start = (m: ClientMessage) => {
      const id = m.id;
      if (id === undefined) {
        send({ type: 'connection_error', payload: 'start received without an id' });
        return;
      }
      if (!session) {
        send({ type: 'connection_error', payload: 'start received before the connection is initialised' });
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
      const request: GraphQLRequest = { query: p.query, variables: p.variables ?? null, operationName: p.operationName ?? null };
      const s = session;
      let cancelled = false;
      const stop = () => (cancelled = true);
      ops.set(id, stop);
      const current = () => !cancelled && ops.get(id) === stop;
      // the first run tells a request that fails before execution (an `error` message) from one
      // that runs; a subscription then becomes a live query that starts from that first result
      void run(s, request, true).then((first) => {
        if (!current()) return;
        if (first instanceof SvcError) {
          ops.delete(id);
          preExecError(id, first);
          send({ type: 'complete', id });
          return;
        }
        if (operationKind(request) !== 'subscription') {
          ops.delete(id);
          sendRaw(id, 'data', first);
          send({ type: 'complete', id });
          return;
        }
        const live = startLiveQuery({ first, run: () => run(s, request, false) as Promise<string>, send: (out) => sendRaw(id, 'data', out), intervalMs: config.liveQueriesRefetchInterval });
        ops.set(id, () => live.stop());
      });
    };

    const handle = (m: ClientMessage) => {
      if (closed) return;
      if (queue && m.type !== 'connection_terminate') {
        queue.push(m);
        return;
      }
      switch (m.type) {
        case 'connection_init':
          void init(m);
          return;
        case 'start':
          start(m);
          return;
        case 'stop': {
          if (m.id === undefined) {
            send({ type: 'connection_error', payload: 'stop received without an id' });
            return;
          }
          const stop = ops.get(m.id);
          if (stop) {
            stop();
            ops.delete(m.id);
          }
          return;
        }
        case 'connection_terminate':
          end(1000, 'connection_terminate');
          return;
        default:
          send({ type: 'connection_error', payload: `unknown message type ${JSON.stringify(m.type)}` });
      }
    };

    ws.on('message', (data, isBinary) => {
      try {
        const m = parseClientMessage(data, isBinary);
        if (typeof m === 'string') {
          send({ type: 'connection_error', payload: `parsing ClientMessage failed: ${m}` });
          return;
        }
        handle(m);
      } catch (e) {
        // a bug, not an input: log it and end this connection, never the process
        engine.log.error({ type: 'websocket-log', err: e instanceof Error ? { message: e.message, stack: e.stack } : String(e) }, 'websocket message failed');
        end(1011, 'internal error');
      }
    });

    /** the response text, or (with `rejectPreExec`) the SvcError of a request that failed before execution */
    async function run(s: Session, request: GraphQLRequest, rejectPreExec: boolean): Promise<string | SvcError> {
      try {
        return await gql.run(engine, s, request, headers, { v1alpha1, relay, legacyErrors: v1alpha1, rejectPreExec });
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
