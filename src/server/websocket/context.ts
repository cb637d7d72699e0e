/** What every websocket connection of the server shares, and what running an operation needs of a connection. */
import type { IncomingMessage } from 'node:http';
import type { Engine } from '../../engine.js';
import type { ErrorFormat } from '../../execute/errors.js';
import type { GraphQLRequest } from '../../execute/interface.js';
import type { SvcError } from '../../errors.js';
import type { LiveQueryManager } from '../../subscriptions/liveQueryManager.js';
import type { StreamManager } from '../../subscriptions/streamManager.js';
import type { GraphQLHandlers, SessionResolver } from '../handlers.js';

/** What every connection of the server shares (websocket/attach.ts). */
export interface WsContext {
  engine: Engine;
  auth: SessionResolver;
  gql: GraphQLHandlers;
  live: LiveQueryManager;
  streams: StreamManager;
  /** `websocket-log` is among the enabled log types */
  wsLogOn: boolean;
}

/** What operation.ts uses of a connection (connection.ts `Connection`). */
export interface OperationConnection {
  readonly ctx: WsContext;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly relay: boolean;
  readonly v1alpha1: boolean;
  readonly req: IncomingMessage;
  readonly drained: boolean;
  errorFormat(): ErrorFormat;
}

/** What operation.ts uses of an operation (connection.ts `Operation`). */
export interface RunningOperation {
  readonly id: string;
  readonly request: GraphQLRequest;
  readonly active: boolean;
  stop: () => void;
  end(): void;
  log(operationType: Record<string, unknown>): void;
  result(text: string): void;
  live(text: string): void;
  complete(): void;
  failed(e: SvcError): void;
}
