/**
 * GraphQL over websockets on /v1/graphql, /v1alpha1/graphql and /v1beta1/relay: the upgrade, the
 * sub-protocol chosen by the client's `Sec-WebSocket-Protocol` (`graphql-transport-ws` when offered,
 * else the legacy `graphql-ws`), and what every connection of the server shares.
 *
 * - connection.ts: the protocol-independent core of one connection (session, operations, results
 *   and backpressure, expiry, closing, logs); operation.ts runs one operation;
 * - legacy.ts (`graphql-ws`, subscriptions-transport-ws, and the /v1alpha1 frames) and
 *   transport.ts (`graphql-transport-ws`): one small adapter per sub-protocol, frames to and from
 *   the core;
 * - the live-query and stream managers (src/subscriptions) are the server's, one of each.
 *
 * Caps: `--max-websocket-connections` sockets per process (503 on the upgrade; also while shutting
 * down). Shutdown closes every socket with 1001 before the HTTP server waits for its requests. With
 * `--disable-cors` the handshake's Cookie header is not passed on (to the auth webhook) unless
 * `--ws-read-cookie`: a page on another site could otherwise open a socket with the user's cookies
 * (cross-site websocket hijacking), as upstream.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer } from 'ws';
import type { Engine } from '../../engine.js';
import { LiveQueryManager } from '../../subscriptions/liveQueryManager.js';
import { StreamManager } from '../../subscriptions/streamManager.js';
import type { GraphQLHandlers, SessionResolver } from '../handlers.js';
import { GRAPHQL_ENDPOINTS } from '../graphqlHttp.js';
import type { WsContext } from './context.js';
import { LEGACY, LegacyProtocol } from './legacy.js';
import { TRANSPORT, TransportProtocol } from './transport.js';

export function attachWebsocket(app: FastifyInstance, engine: Engine, auth: SessionResolver, gql: GraphQLHandlers): void {
  const config = engine.config;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: Math.min(config.bodyLimit, 64 * 1024 * 1024),
    handleProtocols: (protocols) => (protocols.has(TRANSPORT) ? TRANSPORT : protocols.has(LEGACY) ? LEGACY : false),
  });
  const live = new LiveQueryManager({
    stats: engine.liveQueryStats,
    histograms: engine.histograms,
    // live queries are reads: the replicas when there are healthy ones (src/db/replicas.ts)
    db: () => engine.readDb(),
    log: engine.log,
    intervalMs: config.liveQueriesRefetchInterval,
    changeGapMs: Math.min(config.liveQueriesChangeRefetchGap, config.liveQueriesRefetchInterval),
    batchSize: config.liveQueriesBatchSize,
    currentCache: () => engine.cache,
    concurrency: Math.floor(config.pgConnections / 2),
    // change-driven refetch (src/changes/tracker.ts); with replicas a change waits for their replay
    changes: engine.changes,
    ...(engine.replicas ? { fence: () => engine.replicas!.caughtUp(engine.db), primary: () => engine.db } : {}),
  });
  const streams = new StreamManager({
    stats: engine.streamStats,
    // the primary: holding rows back reads its running transactions (src/subscriptions/streamPlan.ts)
    db: () => engine.db,
    log: engine.log,
    intervalMs: config.streamingQueriesRefetchInterval,
    batchSize: config.streamingQueriesBatchSize,
    currentCache: () => engine.cache,
    concurrency: Math.floor(config.pgConnections / 4),
    changes: engine.changes,
  });
  const ctx: WsContext = { engine, auth, gql, live, streams, wsLogOn: config.enabledLogTypes.includes('websocket-log') };
  let closing = false;
  const refuse = (socket: Duplex, status: string, message: string) => {
    socket.write(
      `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: application/json\r\n\r\n${JSON.stringify({ path: '$', error: message, code: 'unexpected' })}`,
    );
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
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (ws.protocol === TRANSPORT) new TransportProtocol(ws, req, endpoint, ctx);
      else new LegacyProtocol(ws, req, endpoint, ctx);
    });
  });
  // before the HTTP server waits for its connections: open sockets would hold it for ever
  app.addHook('preClose', async () => {
    closing = true;
    for (const c of wss.clients) c.close(1001, 'server shutting down');
    wss.close();
    await live.close();
    await streams.close();
  });
}
