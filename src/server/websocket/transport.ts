/**
 * The sub-protocol `graphql-transport-ws` (the `graphql-ws` library), over the connection core
 * (connection.ts):
 *
 *   connection_init → connection_ack; ping/pong; subscribe → next … complete; complete from the
 *   client stops.
 *
 * Frames are validated by graphql-ws's own `parseMessage`. Every protocol error closes the socket:
 * 4400 (bad message, or a server-to-client message from the client), 4401 (subscribe before the
 * ack), 4403 (authentication failed, session expired), 4408 (no connection_init within 3 s), 4409
 * (duplicate id), 4429 (second connection_init), 4500 (internal error). An operation that fails
 * before execution (or is over the cap) gets an `error` frame whose payload is the list of errors,
 * which ends it (no `complete`); execution errors are `next` frames.
 */
import type { IncomingMessage } from 'node:http';
import type { WebSocket } from 'ws';
import { CloseCode, MessageType, parseMessage, type Message } from 'graphql-ws';
import type { GraphQLEndpoint } from '../graphqlHttp.js';
import { Connection, type Protocol, type Refusal } from './connection.js';
import type { WsContext } from './context.js';
import { isJsonObject, JsonNumber, parseJsonExact } from '../../json.js';

export const TRANSPORT = 'graphql-transport-ws';
/** the connection_init must arrive within this (graphql-ws's default) */
const INIT_TIMEOUT_MS = 3_000;

export class TransportProtocol implements Protocol {
  readonly name = TRANSPORT;
  readonly resultType = MessageType.Next;
  readonly internalErrorCode = CloseCode.InternalServerError;
  private readonly conn: Connection;
  /** a connection_init was received (a second one closes 4429) */
  private initReceived = false;
  private readonly initTimer: NodeJS.Timeout;

  constructor(ws: WebSocket, req: IncomingMessage, endpoint: GraphQLEndpoint, ctx: WsContext) {
    this.initTimer = setTimeout(() => {
      if (!this.initReceived) this.conn.close(CloseCode.ConnectionInitialisationTimeout, 'Connection initialisation timeout');
    }, INIT_TIMEOUT_MS);
    this.initTimer.unref();
    this.conn = new Connection(ws, req, endpoint, ctx, this);
    this.conn.onFrames((data, isBinary) => {
      let m: Message;
      try {
        if (isBinary) throw new Error('binary');
        m = parseMessage(parseJsonExact(Array.isArray(data) ? Buffer.concat(data).toString('utf8') : data.toString()));
        // a numeral kept exact (JsonNumber) is an object to graphql-ws's own checks, never a payload or variables
        const p = (m as { payload?: unknown }).payload;
        if (p instanceof JsonNumber || (isJsonObject(p) && p.variables instanceof JsonNumber)) throw new Error('not an object');
      } catch {
        return this.conn.close(CloseCode.BadRequest, 'Invalid message received');
      }
      if (m.type === MessageType.ConnectionInit) {
        // refused here, before the queue of a connection_init being authenticated
        if (this.initReceived) return this.conn.close(CloseCode.TooManyInitialisationRequests, 'Too many initialisation requests');
        this.initReceived = true;
        clearTimeout(this.initTimer);
      }
      this.conn.receive(() => this.handle(m));
    });
  }

  private handle(m: Message): void {
    const conn = this.conn;
    switch (m.type) {
      case MessageType.ConnectionInit:
        void conn.init(m.payload ?? undefined);
        return;
      case MessageType.Ping:
        conn.send(m.payload ? { type: MessageType.Pong, payload: m.payload } : { type: MessageType.Pong });
        return;
      case MessageType.Pong:
        return;
      case MessageType.Subscribe: {
        if (!conn.session) return conn.close(CloseCode.Unauthorized, 'Unauthorized');
        if (conn.hasOperation(m.id)) return conn.close(CloseCode.SubscriberAlreadyExists, `Subscriber for ${m.id} already exists`);
        if (conn.full) {
          return conn.refuseOperation(
            m.id,
            `too many operations on this connection (limit ${conn.ctx.engine.config.maxSubscriptionsPerConnection}); complete one first`,
          );
        }
        const p = m.payload;
        conn.startOperation(m.id, {
          query: p.query,
          variables: (p.variables as Record<string, unknown> | null | undefined) ?? null,
          operationName: p.operationName ?? null,
        });
        return;
      }
      case MessageType.Complete:
        conn.stopOperation(m.id);
        return;
      default:
        // server-to-client messages sent by a client
        conn.close(CloseCode.BadRequest, `Unexpected message of type ${m.type} received`);
    }
  }

  // --- the core's callbacks

  resultPayload(text: string): string {
    return text;
  }

  preExecError(id: string, one: Record<string, unknown>): void {
    this.conn.send({ type: MessageType.Error, id, payload: [one] });
  }

  acknowledged(): void {}

  refusal(why: 'init' | 'expired', message: string): Refusal {
    const reason = `Forbidden: ${message}`;
    return why === 'init' ? { code: CloseCode.Forbidden, reason, log: `${CloseCode.Forbidden} ${reason}` } : { code: CloseCode.Forbidden, reason };
  }

  closed(): void {
    clearTimeout(this.initTimer);
  }
}
