/**
 * The legacy sub-protocol `graphql-ws` (subscriptions-transport-ws), as upstream v1.3 speaks it, over
 * the connection core (connection.ts):
 *
 *   connection_init (headers in its payload) → connection_ack + `ka` every 5 s;
 *   start → data … complete; stop; connection_terminate.
 *
 * - every frame is validated; a bad one gets `connection_error` and never throws; so do an unknown
 *   type and a start/stop without an id;
 * - a start before the connection is initialised gets an `error` for its id (code start-failed), as
 *   upstream's sendStartErr; a duplicate id, the cap and a bad payload likewise (no `complete`);
 * - an operation that fails before execution: `error` then `complete` (upstream's `withComplete .
 *   preExecErr`); its payload is `{errors: [{extensions, message}]}` on /v1/graphql and the legacy
 *   `{path, error, code}` on /v1alpha1/graphql, where an execution error's `data` payload also
 *   carries `"data": null` beside its errors (upstream's GQExecError);
 * - authentication failure and session expiry: `connection_error`, then close 1000;
 * - connection_terminate is handled at once, even while a connection_init is being authenticated.
 */
import type { IncomingMessage } from 'node:http';
import type { RawData, WebSocket } from 'ws';
import type { GraphQLRequest } from '../../execute/interface.js';
import { SvcError } from '../../errors.js';
import type { GraphQLEndpoint } from '../graphqlHttp.js';
import { Connection, type Protocol, type Refusal } from './connection.js';
import type { WsContext } from './context.js';
import { parseJsonExact, isJsonObject } from '../../json.js';

export const LEGACY = 'graphql-ws';
const KEEPALIVE_MS = 5_000;

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
    v = parseJsonExact(Array.isArray(data) ? Buffer.concat(data).toString('utf8') : data.toString());
  } catch {
    return 'the message is not valid JSON';
  }
  if (!isJsonObject(v)) return 'the message is not a JSON object';
  const m = v as Record<string, unknown>;
  if (typeof m.type !== 'string') return 'the message has no string "type"';
  if (m.id !== undefined && typeof m.id !== 'string' && typeof m.id !== 'number') return 'the message "id" is not a string';
  if (m.payload !== undefined && m.payload !== null && !isJsonObject(m.payload)) return 'the message "payload" is not an object';
  return {
    type: m.type,
    ...(m.id !== undefined ? { id: String(m.id) } : {}),
    ...(m.payload !== undefined && m.payload !== null ? { payload: m.payload } : {}),
  };
}

export class LegacyProtocol implements Protocol {
  readonly name = LEGACY;
  readonly resultType = 'data';
  readonly internalErrorCode = 1011;
  private readonly conn: Connection;
  private ka: NodeJS.Timeout | undefined;

  constructor(ws: WebSocket, req: IncomingMessage, endpoint: GraphQLEndpoint, ctx: WsContext) {
    this.conn = new Connection(ws, req, endpoint, ctx, this);
    this.conn.onFrames((data, isBinary) => {
      const m = parseClientMessage(data, isBinary);
      if (typeof m === 'string') {
        this.conn.send({ type: 'connection_error', payload: `parsing ClientMessage failed: ${m}` });
        return;
      }
      this.conn.receive(() => this.handle(m), m.type !== 'connection_terminate');
    });
  }

  private handle(m: ClientMessage): void {
    const conn = this.conn;
    switch (m.type) {
      case 'connection_init':
        void conn.init(m.payload);
        return;
      case 'start':
        this.start(m);
        return;
      case 'stop':
        if (m.id === undefined) return this.connectionError('stop received without an id');
        conn.stopOperation(m.id);
        return;
      case 'connection_terminate':
        conn.close(1000, 'connection_terminate');
        return;
      default:
        this.connectionError(`unknown message type ${JSON.stringify(m.type)}`);
    }
  }

  private start(m: ClientMessage): void {
    const conn = this.conn;
    const id = m.id;
    if (id === undefined) return this.connectionError('start received without an id');
    if (!conn.session) {
      // upstream's sendStartErr: an `error` for this id, code start-failed
      return conn.preExecError(id, new SvcError(400, 'start-failed', 'start received before the connection is initialised', '$'), false);
    }
    if (conn.hasOperation(id)) return conn.refuseOperation(id, `an operation already exists with this id: ${id}`);
    if (conn.full) {
      return conn.refuseOperation(id, `too many operations on this connection (limit ${conn.ctx.engine.config.maxSubscriptionsPerConnection}); stop one first`);
    }
    const p = m.payload as Partial<GraphQLRequest> | undefined;
    if (!p || typeof p.query !== 'string') return conn.refuseOperation(id, 'the start payload must be an object with a string "query"', 'parse-failed');
    if (p.variables !== undefined && p.variables !== null && !isJsonObject(p.variables)) {
      return conn.refuseOperation(id, 'variables must be an object', 'parse-failed');
    }
    if (p.operationName !== undefined && p.operationName !== null && typeof p.operationName !== 'string') {
      return conn.refuseOperation(id, 'operationName must be a string', 'parse-failed');
    }
    conn.startOperation(id, { query: p.query, variables: p.variables ?? null, operationName: p.operationName ?? null });
  }

  private connectionError(message: string): void {
    this.conn.send({ type: 'connection_error', payload: message });
  }

  // --- the core's callbacks

  resultPayload(text: string): string {
    return this.conn.v1alpha1 && text.startsWith('{"errors":') ? `{"data":null,${text.slice(1)}` : text;
  }

  preExecError(id: string, one: Record<string, unknown>, complete: boolean): void {
    this.conn.send({ type: 'error', id, payload: this.conn.v1alpha1 ? one : { errors: [one] } });
    if (complete) this.conn.send({ type: 'complete', id });
  }

  acknowledged(): void {
    this.conn.send({ type: 'ka' });
    if (!this.ka) {
      this.ka = setInterval(() => this.conn.send({ type: 'ka' }), KEEPALIVE_MS);
      this.ka.unref();
    }
  }

  refusal(why: 'init' | 'expired', message: string): Refusal {
    const frame = { type: 'connection_error', payload: message };
    return why === 'init'
      ? { frame, code: 1000, reason: 'connection_init failed', log: `connection_error: ${message}` }
      : { frame, code: 1000, reason: 'session expired' };
  }

  closed(): void {
    if (this.ka) clearInterval(this.ka);
  }
}
