/**
 * The legacy `graphql-ws` (subscriptions-transport-ws) protocol on
 * /v1/graphql: connection_init (headers in payload) → connection_ack + `ka`
 * keep-alives; start → data … complete; stop; connection_terminate.
 * Queries and mutations run once; subscriptions re-run at the live-query
 * refetch interval and send data when the result changes.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer, type WebSocket } from 'ws';
import { parse, type OperationDefinitionNode } from 'graphql';
import type { Engine } from '../engine.js';
import type { GraphQLRequest } from '../execute/interface.js';
import type { GraphQLHandlers, SessionResolver } from './app.js';
import type { Session } from './auth/session.js';
import { graphqlErrorBody, toSvcError } from './errors.js';

const KEEPALIVE_MS = 5_000;
const PATHS = new Set(['/v1/graphql', '/v1alpha1/graphql']);

interface Connection {
  session?: Session;
  headers: Record<string, string | string[] | undefined>;
  ops: Map<string, () => void>;
}

export function attachWebsocket(app: FastifyInstance, engine: Engine, auth: SessionResolver, gql: GraphQLHandlers): void {
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (protocols) => (protocols.has('graphql-ws') ? 'graphql-ws' : false),
  });
  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '').split('?')[0]!;
    if (!PATHS.has(path) || !engine.config.enabledApis.has('graphql')) {
      socket.write('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, req));
  });
  app.addHook('onClose', async () => {
    for (const c of wss.clients) c.close(1001, 'server shutting down');
    wss.close();
  });

  function onConnection(ws: WebSocket, req: IncomingMessage): void {
    const conn: Connection = { headers: { ...req.headers }, ops: new Map() };
    let ka: NodeJS.Timeout | undefined;
    const send = (msg: object) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
    };
    const sendRaw = (id: string, type: string, payloadJson: string) => {
      if (ws.readyState === ws.OPEN) ws.send(`{"type":${JSON.stringify(type)},"id":${JSON.stringify(id)},"payload":${payloadJson}}`);
    };
    const stopAll = () => {
      for (const stop of conn.ops.values()) stop();
      conn.ops.clear();
      if (ka) clearInterval(ka);
    };
    ws.on('close', stopAll);
    ws.on('error', stopAll);
    ws.on('message', async (data) => {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- client frame payload, checked field by field below
      let msg: { type?: string; id?: string; payload?: any };
      try {
        msg = JSON.parse(data.toString());
      } catch {
        send({ type: 'connection_error', payload: 'parsing ClientMessage failed' });
        return;
      }
      switch (msg.type) {
        case 'connection_init': {
          const headers = msg.payload?.headers;
          if (headers && typeof headers === 'object') {
            const lower: Record<string, string> = {};
            for (const [k, v] of Object.entries(headers)) if (typeof v === 'string') lower[k.toLowerCase()] = v;
            conn.headers = { ...conn.headers, ...lower };
          }
          try {
            conn.session = await auth.resolve(conn.headers);
          } catch (e) {
            const err = toSvcError(e);
            send({ type: 'connection_error', payload: err.message });
            ws.close(1000);
            return;
          }
          send({ type: 'connection_ack' });
          send({ type: 'ka' });
          ka = setInterval(() => send({ type: 'ka' }), KEEPALIVE_MS);
          ka.unref();
          return;
        }
        case 'start': {
          const id = String(msg.id ?? '');
          if (!conn.session) {
            send({ type: 'connection_error', payload: 'start received before the connection is initialised' });
            return;
          }
          if (conn.ops.has(id)) {
            send({ type: 'error', id, payload: { errors: [{ extensions: { path: '$', code: 'bad-request' }, message: `an operation already exists with this id: ${id}` }] } });
            return;
          }
          // session expiry (JWT exp, webhook cache) is re-checked per operation
          if (conn.session.expiresAt !== undefined && conn.session.expiresAt <= Date.now()) {
            try {
              conn.session = await auth.resolve(conn.headers);
            } catch (e) {
              send({ type: 'connection_error', payload: toSvcError(e).message });
              ws.close(1000);
              return;
            }
          }
          const req = (msg.payload ?? {}) as GraphQLRequest;
          const isSubscription = operationKind(req) === 'subscription';
          if (!isSubscription) {
            conn.ops.set(id, () => undefined);
            const out = await runSafe(req);
            if (!conn.ops.has(id)) return;
            sendRaw(id, 'data', out);
            send({ type: 'complete', id });
            conn.ops.delete(id);
            return;
          }
          let last: string | undefined;
          let stopped = false;
          let timer: NodeJS.Timeout | undefined;
          const tick = async () => {
            if (stopped) return;
            const out = await runSafe(req);
            if (stopped) return;
            if (out !== last) {
              last = out;
              sendRaw(id, 'data', out);
            }
            timer = setTimeout(tick, engine.config.liveQueriesRefetchInterval);
            timer.unref();
          };
          conn.ops.set(id, () => {
            stopped = true;
            if (timer) clearTimeout(timer);
          });
          void tick();
          return;
        }
        case 'stop': {
          const id = String(msg.id ?? '');
          const stop = conn.ops.get(id);
          if (stop) {
            stop();
            conn.ops.delete(id);
          }
          return;
        }
        case 'connection_terminate':
          stopAll();
          ws.close(1000);
          return;
        default:
          send({ type: 'connection_error', payload: `unknown message type ${JSON.stringify(msg.type)}` });
      }
    });

    async function runSafe(req: GraphQLRequest): Promise<string> {
      try {
        return await gql.run(engine, conn.session!, req, conn.headers, { v1alpha1: false });
      } catch (e) {
        return JSON.stringify(graphqlErrorBody(toSvcError(e), false));
      }
    }
  }
}

function operationKind(req: GraphQLRequest): string | undefined {
  try {
    const doc = parse(req.query);
    const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
    const op = req.operationName ? ops.find((o) => o.name?.value === req.operationName) : ops[0];
    return op?.operation;
  } catch {
    return undefined;
  }
}
