/**
 * /v1/query operations: each `type` maps to one OpDef. Metadata ops edit the
 * request's draft metadata; the runner rebuilds the schema cache after each
 * one and rejects changes that make metadata inconsistent. Data ops (run_sql,
 * select, insert …) work on the request's connection.
 */
import type { DbIntrospection } from '../model/introspection.js';
import type { Config } from '../config/config.js';
import type { Conn, Db } from '../db/db.js';
import type { Span } from '../core/tracing.js';
import type { Logger } from '../core/logger.js';
import type { SchemaCache } from '../schema/model.js';
import type { Session } from '../core/session.js';
import type { Metadata } from '../model/metadata.js';
import type { OutboundClient } from '../http/client.js';
import type { RemoteStore } from '../remote/introspect.js';

export interface RequestState {
  /** draft metadata of this request (a private copy) */
  metadata: Metadata;
  /** schema cache matching the draft */
  cache: SchemaCache;
  metadataChanged: boolean;
  /** run_sql ran: the database may have changed */
  dbChanged: boolean;
  /** rows were queued for delivery (invoke_event_trigger, redeliver_event): poll after commit */
  queuedDeliveries?: boolean;
}

export interface OpContext {
  db: Db;
  conn: Conn;
  config: Config;
  log: Logger;
  session: Session;
  headers: Record<string, string | string[] | undefined>;
  state: RequestState;
  /** JSON path of this operation's `args` (`$.args` or `$.args[2].args`) */
  path: string;
  /** the engine's outbound client and its store of remote introspections (remote/ops.ts) */
  outbound: OutboundClient;
  remotes: RemoteStore;
  /** tracing on: the /v1/query request's span (`db` is bound to it; outbound calls and event rows use it) */
  span?: Span;
  /** rebuild state.cache from state.metadata (re-introspecting when asked) */
  rebuild(opts?: { introspect?: boolean; db?: DbIntrospection }): Promise<SchemaCache>;
}

export type AccessMode = 'read' | 'write' | 'read-only-forced';

export interface OpDef {
  /** metadata ops are checked for new inconsistencies after they run */
  kind: 'metadata' | 'data';
  /** admin-only (every op but the DML ones) */
  adminOnly?: boolean;
  accessMode?(args: unknown): AccessMode;
  /**
   * Does the op need the metadata lock (it may change the metadata or what it is built on)?
   * Default: metadata ops and writing ops do; DML ops and data-only run_sql do not.
   */
  locksMetadata?(args: unknown): boolean;
  run(ctx: OpContext, args: unknown, version: number): Promise<unknown>;
}

export const OPS = new Map<string, OpDef>();

export function defineOp(type: string, def: OpDef): void {
  OPS.set(type, { adminOnly: true, ...def });
}

export const SUCCESS = { message: 'success' } as const;
