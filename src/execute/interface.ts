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

export interface GraphQLRequest {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

export type { Logger } from '../core/logger.js';
import type { Logger } from '../core/logger.js';

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
  /** API limits' time limit of a mutation: its transaction's statement_timeout */
  timeLimitMs?: number;
  /** the response cache of @cached queries (src/cache) */
  responseCache?: ResponseCache;
  /** the engine's plan cache (unset: one of the schema cache's own, src/execute/planCache.ts) */
  planCache?: PlanCache;
  /** the engine's outbound client (action handlers, remote schemas): its policy, agents and histogram */
  outbound: OutboundClient;
  /** the engine's histograms (/v1/metrics); unset: nothing observed (tests, tools) */
  histograms?: Histograms;
  /** an asynchronous action was queued: the engine's worker polls at once */
  asyncActionQueued?: () => void;
}
