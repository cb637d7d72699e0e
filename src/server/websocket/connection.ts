/**
 * One websocket connection, whatever its sub-protocol: the core both protocol adapters
 * (legacy.ts, transport.ts) drive. The adapters turn frames into calls on it; it calls them back
 * (the `Protocol` interface) for the few frames that differ. It owns:
 *
 * - the session: `connection_init` (its payload's headers over the upgrade request's; each init
 *   replaces the session and stops the operations of the previous one) authenticated through the
 *   SessionResolver; messages that arrive while an init is being authenticated wait in a queue and
 *   are handled in order once it is answered; the session's expiry (JWT `exp`, auth webhook
 *   `Expires`/`Cache-Control`) ends the connection;
 * - the operations: a registry by id (start, stop, complete by itself), capped at
 *   `--max-subscriptions-per-connection` (the adapters check the cap and answer in their terms);
 *   running one is operation.ts;
 * - what is sent: results (`data`/`next` frames; on /v1alpha1 with the legacy protocol an execution
 *   error carries `"data": null`), errors before execution, and live results with backpressure: a
 *   live result for a client whose socket buffer holds more than 1 MiB waits, and a newer result of
 *   the same operation replaces it (memory stays bounded by one pending result per operation);
 * - closing: timers, operations and the queue end with the socket; a close reason is cut to 123 bytes;
 * - `websocket-log` lines (deployment/logging.rst): `accepted`, `rejected`, `operation`
 *   (`started` / `completed` / `stopped` / `query_err`), `session_expired`, `closed`, each with
 *   `connection_info` (websocket id, JWT expiry, msg) and the session's `user_vars`.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RawData, WebSocket } from 'ws';
import type { GraphQLRequest } from '../../execute/interface.js';
import { errorObject, showInternalErrors, type ErrorFormat } from '../../execute/errors.js';
import { SvcError, type ErrorCode } from '../../errors.js';
import type { Session } from '../auth/session.js';
import { toSvcError } from '../errors.js';
import type { GraphQLEndpoint } from '../graphqlHttp.js';
import { runOperation } from './operation.js';
import type { WsContext } from './context.js';
import { isJsonObject } from '../../json.js';

/** a live result waits (and is replaced by newer ones) while the socket buffers more than this */
export const HIGH_WATER_BYTES = 1024 * 1024;
/** the longest a timer can wait (setTimeout's limit); later expiries are re-armed */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How a sub-protocol ends a connection it refuses: the close code and reason, a frame before it, the log line's msg. */
export interface Refusal {
  code: number;
  reason: string;
  frame?: object;
  log?: string;
}

/** What the core asks of a sub-protocol: the frames that differ between the two. */
export interface Protocol {
  /** the sub-protocol's name (the `accepted` log line) */
  readonly name: string;
  /** the type of a result frame: `data` (legacy) or `next` */
  readonly resultType: string;
  /** the close code of an internal error (a bug met handling a frame) */
  readonly internalErrorCode: number;
  /** the payload of a result frame from a response text (legacy on /v1alpha1: `"data": null` beside errors) */
  resultPayload(text: string): string;
  /** an operation refused before execution (`one`: its error object); `complete`: it was a run that failed, not a refused start */
  preExecError(id: string, one: Record<string, unknown>, complete: boolean): void;
  /** connection_ack was sent */
  acknowledged(): void;
  /** how the connection ends when `connection_init` fails authentication, or when the session expires */
  refusal(why: 'init' | 'expired', message: string): Refusal;
  /** the connection is over: stop the protocol's own timers */
  closed(): void;
}

/** An operation in the registry, from its start until it is stopped or ends by itself. */
export class Operation {
  /** stops what runs it (a live query, a stream); before that, nothing runs that needs stopping */
  stop: () => void = () => {};
  readonly requestId: string;

  constructor(
    private readonly conn: Connection,
    readonly id: string,
    readonly request: GraphQLRequest,
  ) {
    const sent = conn.headers['x-request-id'];
    this.requestId = typeof sent === 'string' && sent !== '' ? sent : randomUUID();
  }

  /** still this id's operation: not stopped, its connection open */
  get active(): boolean {
    return this.conn.isActive(this);
  }

  /** it ended by itself (a result, an error): it leaves the registry */
  end(): void {
    this.conn.forget(this);
  }

  /** an `operation` log line of this operation */
  log(operationType: Record<string, unknown>): void {
    this.conn.opLog(this.id, operationType, this);
  }

  /** a result (a response text) */
  result(text: string): void {
    this.conn.sendRaw(this.conn.resultFrame(this.id, text));
  }

  /** a live result: sent now, or kept (replacing an older one) until the socket drains */
  live(text: string): void {
    this.conn.sendLive(this, text);
  }

  complete(): void {
    this.conn.send({ type: 'complete', id: this.id });
  }

  /** refused before execution (parse, validation, permissions, variables): logged, the error, then it ends */
  failed(e: SvcError): void {
    this.end();
    this.log({ type: 'query_err', detail: { path: e.path, error: e.message, code: e.code } });
    this.conn.preExecError(this.id, e, true);
  }
}

export class Connection {
  readonly websocketId = randomUUID();
  /** the upgrade request's headers (without its Cookie under --disable-cors, unless --ws-read-cookie) */
  private readonly upgradeHeaders: Record<string, string | string[] | undefined>;
  /** the headers of the current session: the last connection_init's over the upgrade request's */
  headers: Record<string, string | string[] | undefined>;
  session: Session | undefined;
  /** while connection_init is being authenticated, later messages wait here */
  private queue: Array<() => void> | undefined;
  private readonly ops = new Map<string, Operation>();
  /** live results waiting for a slow client: the latest frame per operation */
  private readonly pending = new Map<string, string>();
  private flushTimer: NodeJS.Timeout | undefined;
  private expiry: NodeJS.Timeout | undefined;
  private closedFlag = false;
  readonly v1alpha1: boolean;
  readonly relay: boolean;

  constructor(
    readonly ws: WebSocket,
    readonly req: IncomingMessage,
    endpoint: GraphQLEndpoint,
    readonly ctx: WsContext,
    private readonly protocol: Protocol,
  ) {
    this.v1alpha1 = endpoint.v1alpha1;
    this.relay = endpoint.relay;
    const config = ctx.engine.config;
    this.upgradeHeaders = { ...req.headers };
    if (config.disableCors && !config.wsReadCookie) delete this.upgradeHeaders.cookie;
    this.headers = this.upgradeHeaders;
    ws.on('close', (code, reason) => {
      const wasClosed = this.closedFlag;
      this.cleanup();
      this.log({ type: 'closed' }, `${code}${reason.length ? ` ${reason.toString()}` : ''}${wasClosed ? '' : ' (by the client)'}`);
    });
    ws.on('error', () => this.cleanup());
    this.log({ type: 'accepted' }, `${protocol.name} on ${req.url ?? ''}`);
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  // ---------------------------------------------------------------------------------------------
  // frames in

  /** Handles each frame with `handle`; a throw is a bug, not an input: logged, and this connection (never the process) ends. */
  onFrames(handle: (data: RawData, isBinary: boolean) => void): void {
    this.ws.on('message', (data, isBinary) => {
      try {
        handle(data, isBinary);
      } catch (e) {
        this.ctx.engine.log.error(
          { type: 'websocket-log', err: e instanceof Error ? { message: e.message, stack: e.stack } : String(e) },
          'websocket message failed',
        );
        this.close(this.protocol.internalErrorCode, 'internal error');
      }
    });
  }

  /** A parsed client message: handled now, or (`queued`, the default) after the connection_init being authenticated. */
  receive(handle: () => void, queued = true): void {
    if (this.closedFlag) return;
    if (queued && this.queue) {
      this.queue.push(handle);
      return;
    }
    handle();
  }

  // ---------------------------------------------------------------------------------------------
  // the session

  /** connection_init: a new session from its payload's headers; ack, or the protocol's refusal */
  async init(payload: unknown): Promise<void> {
    const given = (payload as { headers?: unknown } | undefined)?.headers;
    // this init's headers replace an earlier init's; the client's own spelling is kept
    const fresh: Record<string, string | string[] | undefined> = {};
    if (isJsonObject(given)) {
      for (const [k, v] of Object.entries(given)) if (typeof v === 'string') fresh[k] = v;
    }
    const lower = new Set(Object.keys(fresh).map((k) => k.toLowerCase()));
    for (const [k, v] of Object.entries(this.upgradeHeaders)) if (!lower.has(k)) fresh[k] = v;
    this.headers = fresh;
    this.session = undefined;
    this.stopAll();
    this.queue = [];
    let session: Session;
    try {
      session = await this.ctx.auth.resolve(this.headers);
    } catch (e) {
      if (this.closedFlag) return;
      const err = toSvcError(e);
      const r = this.protocol.refusal('init', err.message);
      this.log({ type: 'rejected', detail: { path: err.path, error: err.message, code: err.code } }, r.log ?? null);
      this.refuse(r);
      return;
    }
    if (this.closedFlag) return;
    this.session = session;
    this.send({ type: 'connection_ack' });
    this.protocol.acknowledged();
    this.armExpiry(session);
    const waiting = this.queue ?? [];
    this.queue = undefined;
    for (const handle of waiting) this.receive(handle);
  }

  /** ends the connection when the session expires, as upstream does */
  private armExpiry(s: Session): void {
    if (this.expiry) clearTimeout(this.expiry);
    this.expiry = undefined;
    if (s.expiresAt === undefined) return;
    const fire = () => {
      const left = s.expiresAt! - Date.now();
      if (left > 0) {
        this.expiry = setTimeout(fire, Math.min(left, MAX_TIMER_MS));
        this.expiry.unref();
        return;
      }
      this.log({ type: 'session_expired' }, 'session expired');
      this.refuse(this.protocol.refusal('expired', 'session expired'));
    };
    fire();
  }

  private refuse(r: Refusal): void {
    if (r.frame) this.send(r.frame);
    this.close(r.code, r.reason);
  }

  // ---------------------------------------------------------------------------------------------
  // operations

  hasOperation(id: string): boolean {
    return this.ops.has(id);
  }

  /** the connection runs as many operations as it may (`--max-subscriptions-per-connection`) */
  get full(): boolean {
    return this.ops.size >= this.ctx.engine.config.maxSubscriptionsPerConnection;
  }

  /** Starts an operation (a checked start/subscribe payload) under this id; the session is there. */
  startOperation(id: string, request: GraphQLRequest): void {
    const op = new Operation(this, id, request);
    this.ops.set(id, op);
    op.log({ type: 'started' });
    runOperation(this, op, this.session!);
  }

  /** stop (legacy) / complete (graphql-transport-ws) from the client */
  stopOperation(id: string): void {
    const op = this.ops.get(id);
    if (op) {
      op.stop();
      this.ops.delete(id);
      // as before: the `stopped` line names the operation by id only
      this.opLog(id, { type: 'stopped' });
    }
    this.pending.delete(id);
  }

  /** an operation refused as a protocol error (bad payload, duplicate id, cap): an `error` for its id */
  refuseOperation(id: string, message: string, code: ErrorCode = 'bad-request'): void {
    this.preExecError(id, new SvcError(400, code, message, '$'), false);
  }

  isActive(op: Operation): boolean {
    return this.ops.get(op.id) === op;
  }

  forget(op: Operation): void {
    if (this.ops.get(op.id) === op) this.ops.delete(op.id);
  }

  private stopAll(): void {
    for (const op of this.ops.values()) op.stop();
    this.ops.clear();
    this.pending.clear();
  }

  // ---------------------------------------------------------------------------------------------
  // frames out

  send(msg: object): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(msg));
  }

  sendRaw(frame: string): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(frame);
  }

  /** a `data` (legacy) or `next` frame around a response text */
  resultFrame(id: string, text: string): string {
    return `{"type":"${this.protocol.resultType}","id":${JSON.stringify(id)},"payload":${this.protocol.resultPayload(text)}}`;
  }

  sendLive(op: Operation, text: string): void {
    if (this.ws.readyState !== this.ws.OPEN || !this.isActive(op)) return;
    const frame = this.resultFrame(op.id, text);
    if (this.pending.size === 0 && this.ws.bufferedAmount <= HIGH_WATER_BYTES) {
      this.ws.send(frame);
      return;
    }
    if (this.pending.delete(op.id)) this.ctx.engine.liveQueryStats.dropped++;
    this.pending.set(op.id, frame);
    this.scheduleFlush();
  }

  /** the socket can take another batch of a stream (nothing is dropped there: the stream waits) */
  get drained(): boolean {
    return this.ws.bufferedAmount <= HIGH_WATER_BYTES;
  }

  private flush(): void {
    this.flushTimer = undefined;
    if (this.closedFlag || this.ws.readyState !== this.ws.OPEN) return;
    for (const [id, frame] of this.pending) {
      if (this.ws.bufferedAmount > HIGH_WATER_BYTES) break;
      this.pending.delete(id);
      this.ws.send(frame);
    }
    if (this.pending.size > 0) this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => this.flush(), 25);
    this.flushTimer.unref();
  }

  errorFormat(): ErrorFormat {
    return { v1alpha1: this.v1alpha1, legacy: this.v1alpha1, includeInternal: showInternalErrors(this.ctx.engine.config, this.session) };
  }

  /** an operation that fails before execution, in the protocol's frames */
  preExecError(id: string, e: SvcError, complete: boolean): void {
    this.protocol.preExecError(id, errorObject(e, this.errorFormat()), complete);
  }

  // ---------------------------------------------------------------------------------------------
  // logs and the end

  /** one websocket-log line (upstream's WSLog: event, connection_info, user_vars) */
  log(event: Record<string, unknown>, msg: string | null = null): void {
    if (!this.ctx.wsLogOn) return;
    const s = this.session;
    const jwtExpiry = s?.expiresAt !== undefined ? new Date(s.expiresAt).toISOString() : null;
    this.ctx.engine.log.info({
      type: 'websocket-log',
      detail: { event, connection_info: { websocket_id: this.websocketId, jwt_expiry: jwtExpiry, msg }, user_vars: s?.vars ?? null },
    });
  }

  /** an `operation` event */
  opLog(opId: string, operationType: Record<string, unknown>, op?: { requestId: string; request: GraphQLRequest }): void {
    this.log({
      type: 'operation',
      detail: {
        request_id: op?.requestId ?? null,
        operation_id: opId,
        query: op ? { variables: op.request.variables ?? {}, query: op.request.query } : null,
        operation_type: operationType,
        operation_name: op?.request.operationName ?? null,
      },
    });
  }

  /** Ends the connection: its operations stop, the socket closes with this code. */
  close(code: number, reason: string): void {
    this.cleanup();
    // a close reason is at most 123 bytes
    if (this.ws.readyState === this.ws.OPEN || this.ws.readyState === this.ws.CONNECTING) this.ws.close(code, Buffer.from(reason).subarray(0, 123).toString());
  }

  private cleanup(): void {
    this.closedFlag = true;
    this.stopAll();
    this.queue = undefined;
    this.protocol.closed();
    if (this.expiry) clearTimeout(this.expiry);
    if (this.flushTimer) clearTimeout(this.flushTimer);
  }
}
