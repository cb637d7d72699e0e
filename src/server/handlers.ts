/**
 * What the routes (app.ts, graphqlHttp.ts, rest.ts, websocket/) are given: the session resolver
 * (auth/) and the GraphQL handlers (graphql.ts), wired together by start.ts.
 */
import type { Span } from '../core/tracing.js';
import type { CancelToken } from '../core/cancel.js';
import type { Engine } from '../engine.js';
import type { GraphQLRequest } from '../execute/interface.js';
import type { StreamPlan } from '../subscriptions/streamPlan.js';
import type { LiveQueryPlan } from '../subscriptions/liveQueryPlan.js';
import type { Session } from './auth/session.js';

export interface SessionResolver {
  /** `span`: the request's auth span (tracing on), parent of the auth webhook's call */
  resolve(headers: Record<string, string | string[] | undefined>, rawHeaders?: readonly string[], span?: Span): Promise<Session>;
  /** the session without a promise when no webhook/JWT is involved, else undefined */
  /** `fromNode`: the headers are a Node request's `headers` object (names already lower-cased and checked) */
  resolveNow?(headers: Record<string, string | string[] | undefined>, fromNode?: boolean): Session | undefined;
  describe(): Record<string, unknown>;
}

export interface GraphQLHandlers {
  /** may throw (allow-list) or return a promise that resolves to the response text */
  run(
    engine: Engine,
    session: Session,
    req: GraphQLRequest,
    headers: Record<string, string | string[] | undefined>,
    opts: {
      v1alpha1: boolean;
      relay?: boolean;
      requestId?: string;
      signal?: CancelToken;
      legacyErrors?: boolean;
      rejectPreExec?: boolean;
      client?: { ip?: string };
      info?: { opType: string };
      /** tracing on: the request's span */
      span?: Span;
    },
  ): Promise<string>;
  explain(engine: Engine, session: Session, body: unknown, headers: Record<string, string | string[] | undefined>): Promise<unknown>;
  /** a subscription's multiplexed live-query plan (null: not multiplexable); may throw like `run` */
  planLive(
    engine: Engine,
    session: Session,
    req: GraphQLRequest,
    headers: Record<string, string | string[] | undefined>,
    opts?: { relay?: boolean },
  ): LiveQueryPlan | null;
  /**
   * a streaming subscription's plan (`<table>_stream`; null: not one); `now`: synchronously (re-planning
   * after a metadata change); rejects/throws like `run` (the allow-list, errors before execution)
   */
  planStream(
    engine: Engine,
    session: Session,
    req: GraphQLRequest,
    headers: Record<string, string | string[] | undefined>,
    opts?: { relay?: boolean },
  ): Promise<StreamPlan | null>;
  planStreamNow(
    engine: Engine,
    session: Session,
    req: GraphQLRequest,
    headers: Record<string, string | string[] | undefined>,
    opts?: { relay?: boolean },
  ): StreamPlan | null;
}
