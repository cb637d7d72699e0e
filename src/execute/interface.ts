/**
 * The contract between the HTTP edge and the GraphQL executor.
 * The server authenticates, picks the current SchemaCache and calls these.
 */
import type { Config } from '../config/config.js';
import type { Db } from '../db/db.js';
import type { SchemaCache } from '../schema/model.js';
import type { Session } from '../core/session.js';
import type { CancelToken } from '../core/cancel.js';
import type { ResponseCache } from '../cache/responseCache.js';
import type { PlanCache } from './planCache.js';
import type { Histograms } from '../core/histogram.js';
import type { OutboundClient } from '../http/client.js';
import type { Span } from '../core/tracing.js';

export interface GraphQLRequest {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

export type { Logger } from '../core/logger.js';
import type { Logger } from '../core/logger.js';
import type { QueryPlan } from './plan.js';

export interface ExecContext {
  cache: SchemaCache;
  db: Db;
  /**
   * where a read-only operation (a query, not a mutation) runs: the read replicas or the primary
   * (src/db/replicas.ts); unset = `db`
   */
  readDb?: Db;
  config: Config;
  session: Session;
  log: Logger;
  /** request headers (lower-cased), for actions/remote schemas forwarding */
  headers: Record<string, string | string[] | undefined>;
  /** cancelled when the client goes away: running statements are cancelled */
  signal?: CancelToken;
  /**
   * tracing on: the request's span, parent of its plan span, its outbound calls' spans and (through
   * `db` and `readDb`, bound to it) its statements' spans; its traceparent goes into event rows
   */
  span?: Span;
  /** API limits' time limit of a mutation: its transaction's statement_timeout */
  timeLimitMs?: number;
  /** the response cache of @cached queries (src/cache) */
  responseCache?: ResponseCache;
  /** the engine's plan cache (unset: one of the schema cache's own, src/execute/planCache.ts) */
  planCache?: PlanCache;
  /** the engine's outbound client (action handlers, remote schemas): its policy, connections and histogram */
  outbound: OutboundClient;
  /** the engine's histograms (/v1/metrics); unset: nothing observed (tests, tools) */
  histograms?: Histograms;
  /** an asynchronous action was queued: the engine's worker polls at once */
  asyncActionQueued?: () => void;
  /** the executors of the root-field kinds the schema extensions answer (src/extensions.ts) */
  executors: ExtensionExecutors;
  /** the request pipeline's hooks (execute/hooks.ts): admission, around execution; unset: none */
  hooks?: readonly RequestHook[];
}

export interface RunOptions {
  /** `/v1alpha1/graphql` error envelope */
  v1alpha1?: boolean;
  planCache?: PlanCache;
  /** the HTTP request's id, for the `query-log` line */
  requestId?: string;
  /** legacy error objects `{path, error, code}` (`/v1alpha1/graphql` over websockets) */
  legacyErrors?: boolean;
  /**
   * reject with the SvcError when the request fails before execution (parse, validation,
   * permissions, variables) instead of resolving with an error response: the websocket
   * protocol answers those with an `error` message, execution errors with `data`
   */
  rejectPreExec?: boolean;
  /** `/v1beta1/relay`: the Relay schema */
  relay?: boolean;
  /** filled in once planned: the operation type (latency histogram, request span) */
  info?: { opType: string };
  /** a client's operation (unset for a live query's refetch): its address, for the rate limit */
  client?: { ip?: string };
  /** tracing on: the request's span (ExecContext.span) */
  span?: Span;
}

/**
 * Runs a plan (its response text, `{"data": …}`; `fail` turns an error into the error response).
 * The executor of a plan is chosen by the kinds of its root fields (execute/graphql.ts `EXECUTORS`).
 */
export type PlanExecutor = (
  ctx: ExecContext,
  req: GraphQLRequest,
  opts: RunOptions,
  plan: QueryPlan,
  variables: Record<string, unknown>,
  fail: (e: unknown) => string,
) => Promise<string>;

/** kinds of plans answered by a schema extension: with actions, with remote fields, both */
export type ExtensionExecutorKind = 'actions' | 'remote' | 'remote-actions';
export type ExtensionExecutors = Readonly<Record<ExtensionExecutorKind, PlanExecutor>>;

/** The request pipeline's hooks: see execute/hooks.ts. */
/** A planned request on its way to its executor. */
export interface ExecuteCall {
  ctx: ExecContext;
  req: GraphQLRequest;
  opts: RunOptions;
  plan: QueryPlan;
  variables: Record<string, unknown>;
  /** an error → the error response text */
  fail: (e: unknown) => string;
}

export interface RequestHook {
  readonly name: string;
  admit?(ctx: ExecContext, req: GraphQLRequest, opts: RunOptions): void | Promise<void>;
  execute?(call: ExecuteCall, next: (call: ExecuteCall) => Promise<string>): Promise<string>;
}
