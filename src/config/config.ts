/**
 * The flag/env table of the server (reference: deployment/graphql-engine-flags).
 * One row per option drives parsing, validation, defaults and `svc --help`.
 * Flags take precedence over environment variables.
 */
import { parseClock } from '../core/clock.js';

export type ApiName = 'graphql' | 'metadata' | 'pgdump' | 'config';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface JwtConfigRaw {
  type?: string;
  key?: string;
  jwk_url?: string;
  claims_namespace?: string;
  claims_namespace_path?: string;
  claims_format?: 'json' | 'stringified_json';
  audience?: string | string[];
  issuer?: string;
  allowed_skew?: number;
  header?: { type: 'Authorization' | 'Cookie' | 'CustomHeader'; name?: string };
  claims_map?: Record<string, unknown>;
}

export interface Config {
  databaseUrl?: string;
  dataDir: string;
  port: number;
  host: string;
  adminSecret?: string;
  authHook?: string;
  authHookMode: 'GET' | 'POST';
  jwtSecret?: JwtConfigRaw;
  unauthorizedRole?: string;
  corsDomain: string[] | '*';
  disableCors: boolean;
  pgConnections: number;
  /** pool connections that carry pipelined fast reads (src/db/pipeline.ts); undefined: min(2, connections / 4) */
  pgPipelineLanes?: number;
  /** reads whose measured running time's floor is under this many ms are pipelined; undefined: 1 (pipeline.ts FAST_MS) */
  pgPipelineFastMs?: number;
  pgTimeout?: number;
  usePreparedStatements: boolean;
  /** worker processes (node:cluster) sharing the port; 'auto' = cores with a PostgreSQL URL, 1 on PGlite */
  workers: number | 'auto';
  /** the PostgreSQL URL of the LISTEN connection (metadata sync); default --database-url */
  listenDatabaseUrl?: string;
  /** PostgreSQL streaming replicas that serve GraphQL/Relay queries and subscriptions (src/db/replicas.ts) */
  readReplicaUrls: string[];
  /** seconds of replay lag past which a replica is skipped */
  readReplicaMaxLag: number;
  /** roles whose reads always go to the primary */
  readFromPrimaryRoles: string[];
  txIsolation: 'read-committed' | 'repeatable-read' | 'serializable';
  stringifyNumericTypes: boolean;
  enabledApis: Set<ApiName>;
  liveQueriesRefetchInterval: number;
  /** ms: least time between two change-driven runs of one live-query cohort */
  liveQueriesChangeRefetchGap: number;
  liveQueriesBatchSize: number;
  streamingQueriesRefetchInterval: number;
  streamingQueriesBatchSize: number;
  /** statement-level NOTIFY triggers on tracked tables (changes/tracker.ts); off: live queries poll, @cached is bypassed */
  tableChangeTriggers: boolean;
  enableAllowlist: boolean;
  logLevel: LogLevel;
  enabledLogTypes: string[];
  devMode: boolean;
  adminInternalErrors: boolean;
  eventsHttpPoolSize: number;
  /** deliveries in flight to one webhook host at most (reached gradually) */
  eventsHttpMaxConnectionsPerHost: number;
  eventsFetchInterval: number;
  eventsLeaseSeconds: number;
  /** testing: the scheduler's simulated clock (src/core/clock.ts); unset = the system clock */
  schedulerClock?: string;
  wsReadCookie: boolean;
  bodyLimit: number;
  enableConsole: boolean;
  consoleAssetsDir?: string;
  /** live operations one websocket may have open at once */
  maxSubscriptionsPerConnection: number;
  /** open websockets per process */
  maxWebsocketConnections: number;
  /** seconds SIGTERM waits for in-flight requests and deliveries */
  gracefulShutdownTimeout: number;
  /** seconds a non-admin request's statement may run (0: no limit) */
  statementTimeout: number;
  /** seconds an admin request's statement may run (0: no limit) */
  adminStatementTimeout: number;
  /** seconds a request waits for a pool connection before a 503 */
  poolAcquireTimeout: number;
  /** seconds start-up keeps retrying a database that does not answer */
  dbConnectRetryTimeout: number;
  /** GraphQL document limits, checked before validation */
  maxQueryBytes: number;
  /** automatic persisted queries: bytes of query text kept per process (LRU); 0 = none kept */
  persistedQueriesMaxBytes: number;
  /** bytes of @cached responses kept per process (without --redis-url) */
  queryCacheMaxBytes: number;
  /** a fence before every @cached lookup: no hit misses a write committed before the request */
  queryCacheStrict: boolean;
  maxQueryTokens: number;
  maxQueryDepth: number;
  maxQueryNodes: number;
  maxQueryAliases: number;
  /** nesting depth of JSON inputs (boolean expressions, bulk, variables) */
  maxNestingDepth: number;
  /** memory budget of the plan cache */
  planCacheMaxBytes: number;
  /** Redis for state shared by workers and instances (rate limits, persisted queries, response cache) */
  redisUrl?: string;
  /** start-up: apply the pending migrations of this directory before serving (src/cli/startup.ts) */
  migrationsDir?: string;
  /** start-up: apply this metadata directory (after the migrations) before serving */
  metadataDir?: string;
  /** estimated memory of the per-role GraphQL schemas kept per schema cache (least recently used dropped) */
  roleSchemaCacheMaxBytes: number;
  /** outbound calls to private, loopback and link-local addresses are refused (src/http/outbound.ts) */
  outboundDenyPrivate: boolean;
  /** when non-empty, outbound calls only to these hosts (`*.suffix` for subdomains) */
  outboundAllowHosts: string[];
  /** the console records its changes into this project directory (migrations, metadata files): src/server/project.ts */
  projectDir?: string;
  /** OTLP/HTTP endpoint of traces (src/server/tracing.ts); the OTEL_EXPORTER_OTLP_* variables work too */
  otlpEndpoint?: string;
  /**
   * with tracing on, which of a sampled request's statements carry a sqlcommenter traceparent
   * comment: `auto` those not known to run faster than tracingSqlCommentMinMs (a commented
   * statement cannot use its prepared plan), `always`, `never`
   */
  tracingSqlComment: 'auto' | 'always' | 'never';
  /** `auto`: a prepared statement whose recent runs took less than this many ms is sent without the comment */
  tracingSqlCommentMinMs: number;
}

type Kind = 'string' | 'int' | 'bool' | 'json' | 'enum' | 'list';
interface Option {
  key: keyof Config;
  flag: string;
  short?: string;
  env?: string;
  kind: Kind;
  values?: readonly string[];
  description: string;
  /** a flag without a value means `true` (bool options only) */
  switch?: boolean;
}

export const OPTIONS: readonly Option[] = [
  {
    key: 'databaseUrl',
    flag: 'database-url',
    env: 'SVC_GRAPHQL_DATABASE_URL',
    kind: 'string',
    description: 'PostgreSQL URL; without it Svc runs on an embedded PostgreSQL (PGlite) in --data-dir',
  },
  {
    key: 'dataDir',
    flag: 'data-dir',
    env: 'SVC_GRAPHQL_DATA_DIR',
    kind: 'string',
    description: 'data directory of the embedded PostgreSQL (default ./svc-data)',
  },
  { key: 'port', flag: 'server-port', env: 'SVC_GRAPHQL_SERVER_PORT', kind: 'int', description: 'port to listen on (default 8080)' },
  { key: 'host', flag: 'server-host', env: 'SVC_GRAPHQL_SERVER_HOST', kind: 'string', description: 'host to listen on (default *)' },
  {
    key: 'adminSecret',
    flag: 'admin-secret',
    env: 'SVC_GRAPHQL_ADMIN_SECRET',
    kind: 'string',
    description: 'admin secret key, required to access this instance',
  },
  { key: 'authHook', flag: 'auth-hook', env: 'SVC_GRAPHQL_AUTH_HOOK', kind: 'string', description: 'URL of the authorization webhook' },
  {
    key: 'authHookMode',
    flag: 'auth-hook-mode',
    env: 'SVC_GRAPHQL_AUTH_HOOK_MODE',
    kind: 'enum',
    values: ['GET', 'POST'],
    description: 'HTTP method of the auth webhook (default GET)',
  },
  {
    key: 'jwtSecret',
    flag: 'jwt-secret',
    env: 'SVC_GRAPHQL_JWT_SECRET',
    kind: 'json',
    description: 'JSON JWT configuration (type+key or jwk_url, claims_namespace, ...)',
  },
  {
    key: 'unauthorizedRole',
    flag: 'unauthorized-role',
    env: 'SVC_GRAPHQL_UNAUTHORIZED_ROLE',
    kind: 'string',
    description: 'role for requests without credentials',
  },
  {
    key: 'corsDomain',
    flag: 'cors-domain',
    env: 'SVC_GRAPHQL_CORS_DOMAIN',
    kind: 'list',
    description: 'CSV of allowed CORS origins, wildcards allowed (default *)',
  },
  { key: 'disableCors', flag: 'disable-cors', env: 'SVC_GRAPHQL_DISABLE_CORS', kind: 'bool', switch: true, description: 'send no CORS headers' },
  {
    key: 'wsReadCookie',
    flag: 'ws-read-cookie',
    env: 'SVC_GRAPHQL_WS_READ_COOKIE',
    kind: 'bool',
    description:
      'read cookies on websocket handshake even when CORS is disabled (default false: with --disable-cors the Cookie header of the handshake is dropped)',
  },
  {
    key: 'pgConnections',
    flag: 'connections',
    short: 'c',
    env: 'SVC_GRAPHQL_PG_CONNECTIONS',
    kind: 'int',
    description: 'maximum PostgreSQL connections (default 50)',
  },
  {
    key: 'pgPipelineLanes',
    flag: 'pipeline-lanes',
    env: 'SVC_GRAPHQL_PG_PIPELINE_LANES',
    kind: 'int',
    description:
      'pool connections that carry pipelined fast reads, many statements in flight on each (default min(2, connections / 4); 0: every statement on a connection of its own)',
  },
  {
    key: 'pgPipelineFastMs',
    flag: 'pipeline-fast-ms',
    env: 'SVC_GRAPHQL_PG_PIPELINE_FAST_MS',
    kind: 'int',
    description:
      'a read is pipelined once its measured running time (the round trip included) is under this many milliseconds (default 1; with a database more than a millisecond away, set it above the round trip)',
  },
  { key: 'pgTimeout', flag: 'timeout', env: 'SVC_GRAPHQL_PG_TIMEOUT', kind: 'int', description: 'seconds an idle connection is kept (default 180)' },
  {
    key: 'usePreparedStatements',
    flag: 'use-prepared-statements',
    env: 'SVC_GRAPHQL_USE_PREPARED_STATEMENTS',
    kind: 'bool',
    description: 'use prepared statements (default true)',
  },
  {
    key: 'workers',
    flag: 'workers',
    env: 'SVC_GRAPHQL_WORKERS',
    kind: 'string',
    description:
      'worker processes sharing the port: a number or auto (= the cores; default auto with --database-url, 1 on the embedded database); --connections is shared among them',
  },
  {
    key: 'listenDatabaseUrl',
    flag: 'listen-database-url',
    env: 'SVC_GRAPHQL_LISTEN_DATABASE_URL',
    kind: 'string',
    description:
      'PostgreSQL URL of the LISTEN connection for metadata sync, e.g. direct when --database-url is a transaction-mode pgbouncer (default --database-url)',
  },
  {
    key: 'readReplicaUrls',
    flag: 'read-replica-urls',
    env: 'SVC_GRAPHQL_READ_REPLICA_URLS',
    kind: 'list',
    description:
      'CSV of PostgreSQL streaming-replica URLs that serve GraphQL queries and subscriptions (round-robin, health-checked); writes, /v1/query, metadata and delivery stay on --database-url',
  },
  {
    key: 'readReplicaMaxLag',
    flag: 'read-replica-max-lag',
    env: 'SVC_GRAPHQL_READ_REPLICA_MAX_LAG',
    kind: 'int',
    description: 'seconds of replication lag past which a replica is skipped until it catches up (default 5)',
  },
  {
    key: 'readFromPrimaryRoles',
    flag: 'read-from-primary-roles',
    env: 'SVC_GRAPHQL_READ_FROM_PRIMARY_ROLES',
    kind: 'list',
    description: 'CSV of roles whose queries always read from the primary (any request can ask with X-Svc-Read-From: primary)',
  },
  {
    key: 'txIsolation',
    flag: 'tx-iso',
    short: 'i',
    env: 'SVC_GRAPHQL_TX_ISOLATION',
    kind: 'enum',
    values: ['read-committed', 'repeatable-read', 'serializable'],
    description: 'transaction isolation of mutations (default read-committed)',
  },
  {
    key: 'stringifyNumericTypes',
    flag: 'stringify-numeric-types',
    env: 'SVC_GRAPHQL_STRINGIFY_NUMERIC_TYPES',
    kind: 'bool',
    switch: true,
    description: 'return bigint/numeric/float values as strings',
  },
  {
    key: 'enabledApis',
    flag: 'enabled-apis',
    env: 'SVC_GRAPHQL_ENABLED_APIS',
    kind: 'list',
    values: ['graphql', 'metadata', 'pgdump', 'config'],
    description: 'CSV of enabled APIs (default graphql,metadata,pgdump,config)',
  },
  {
    key: 'liveQueriesRefetchInterval',
    flag: 'live-queries-multiplexed-refetch-interval',
    env: 'SVC_GRAPHQL_LIVE_QUERIES_MULTIPLEXED_REFETCH_INTERVAL',
    kind: 'int',
    description: 'live query refetch interval in ms (default 1000)',
  },
  {
    key: 'liveQueriesChangeRefetchGap',
    flag: 'live-queries-change-refetch-gap',
    env: 'SVC_GRAPHQL_LIVE_QUERIES_CHANGE_REFETCH_GAP',
    kind: 'int',
    description:
      'change-driven live queries: least ms between two runs of one cohort; a write is pushed within about this long (default 50, at most the refetch interval)',
  },
  {
    key: 'liveQueriesBatchSize',
    flag: 'live-queries-multiplexed-batch-size',
    env: 'SVC_GRAPHQL_LIVE_QUERIES_MULTIPLEXED_BATCH_SIZE',
    kind: 'int',
    description: 'live query cohort batch size (default 100)',
  },
  {
    key: 'streamingQueriesRefetchInterval',
    flag: 'streaming-queries-multiplexed-refetch-interval',
    env: 'SVC_GRAPHQL_STREAMING_QUERIES_MULTIPLEXED_REFETCH_INTERVAL',
    kind: 'int',
    description: 'streaming subscription refetch interval in ms (default 1000)',
  },
  {
    key: 'streamingQueriesBatchSize',
    flag: 'streaming-queries-multiplexed-batch-size',
    env: 'SVC_GRAPHQL_STREAMING_QUERIES_MULTIPLEXED_BATCH_SIZE',
    kind: 'int',
    description: 'streaming subscription cohort batch size: subscribers per statement (default 100)',
  },
  {
    key: 'tableChangeTriggers',
    flag: 'table-change-triggers',
    env: 'SVC_GRAPHQL_TABLE_CHANGE_TRIGGERS',
    kind: 'bool',
    description:
      'a statement-level NOTIFY trigger on every tracked table, so that live queries refetch on change and @cached results are invalidated (default true; false drops them: live queries poll every interval, @cached is bypassed; set the same on every instance)',
  },
  {
    key: 'enableConsole',
    flag: 'enable-console',
    env: 'SVC_GRAPHQL_ENABLE_CONSOLE',
    kind: 'bool',
    switch: true,
    description: 'serve the web console at /console (default false; `npm start` sets it to true)',
  },
  {
    key: 'consoleAssetsDir',
    flag: 'console-assets-dir',
    env: 'SVC_GRAPHQL_CONSOLE_ASSETS_DIR',
    kind: 'string',
    description: 'directory of the console files, served at /console/assets (default: console/dist of the package)',
  },
  {
    key: 'enableAllowlist',
    flag: 'enable-allowlist',
    env: 'SVC_GRAPHQL_ENABLE_ALLOWLIST',
    kind: 'bool',
    switch: true,
    description: 'only allow-listed queries for non-admin roles',
  },
  {
    key: 'logLevel',
    flag: 'log-level',
    env: 'SVC_GRAPHQL_LOG_LEVEL',
    kind: 'enum',
    values: ['debug', 'info', 'warn', 'error'],
    description: 'log level (default info)',
  },
  {
    key: 'enabledLogTypes',
    flag: 'enabled-log-types',
    env: 'SVC_GRAPHQL_ENABLED_LOG_TYPES',
    kind: 'list',
    description: 'CSV of log types (default startup,http-log,webhook-log,websocket-log)',
  },
  {
    key: 'devMode',
    flag: 'dev-mode',
    env: 'SVC_GRAPHQL_DEV_MODE',
    kind: 'bool',
    switch: true,
    description: 'include internal error details in GraphQL errors',
  },
  {
    key: 'adminInternalErrors',
    flag: 'admin-internal-errors',
    env: 'SVC_GRAPHQL_ADMIN_INTERNAL_ERRORS',
    kind: 'bool',
    description: 'include internal error details for admin (default true)',
  },
  {
    key: 'eventsHttpPoolSize',
    flag: 'events-http-pool-size',
    env: 'SVC_GRAPHQL_EVENTS_HTTP_POOL_SIZE',
    kind: 'int',
    description: 'concurrent event deliveries (default 100)',
  },
  {
    key: 'eventsHttpMaxConnectionsPerHost',
    flag: 'events-http-max-connections-per-host',
    env: 'SVC_GRAPHQL_EVENTS_HTTP_MAX_CONNECTIONS_PER_HOST',
    kind: 'int',
    description: 'webhook deliveries in flight to one host at most; reached gradually from 4, while the host answers fast (default 100)',
  },
  {
    key: 'eventsFetchInterval',
    flag: 'events-fetch-interval',
    env: 'SVC_GRAPHQL_EVENTS_FETCH_INTERVAL',
    kind: 'int',
    description: 'ms between event polls when idle (default 1000)',
  },
  {
    key: 'eventsLeaseSeconds',
    flag: 'events-lease-seconds',
    env: 'SVC_GRAPHQL_EVENTS_LEASE_SECONDS',
    kind: 'int',
    description: "seconds a claimed delivery stays leased to its process without renewal; a killed process's deliveries are retried after this (default 30)",
  },
  {
    key: 'schedulerClock',
    flag: 'scheduler-clock',
    env: 'SVC_GRAPHQL_SCHEDULER_CLOCK',
    kind: 'string',
    description: 'testing only: run scheduled triggers on a simulated clock, <ISO time>[@<epoch ms>][x<rate>] (default: the system clock)',
  },
  { key: 'bodyLimit', flag: 'body-limit', env: 'SVC_GRAPHQL_BODY_LIMIT', kind: 'int', description: 'maximum request body in bytes (default 104857600)' },
  {
    key: 'maxSubscriptionsPerConnection',
    flag: 'max-subscriptions-per-connection',
    env: 'SVC_GRAPHQL_MAX_SUBSCRIPTIONS_PER_CONNECTION',
    kind: 'int',
    description: 'operations one websocket may have running at once (default 100)',
  },
  {
    key: 'maxWebsocketConnections',
    flag: 'max-websocket-connections',
    env: 'SVC_GRAPHQL_MAX_WEBSOCKET_CONNECTIONS',
    kind: 'int',
    description: 'open websockets per process; more are refused with 503 (default 5000)',
  },
  {
    key: 'gracefulShutdownTimeout',
    flag: 'graceful-shutdown-timeout',
    env: 'SVC_GRAPHQL_GRACEFUL_SHUTDOWN_TIMEOUT',
    kind: 'int',
    description: 'seconds SIGTERM waits for in-flight requests, background workers and the export of the last spans (default 5)',
  },
  {
    key: 'statementTimeout',
    flag: 'statement-timeout',
    env: 'SVC_GRAPHQL_STATEMENT_TIMEOUT',
    kind: 'int',
    description: 'seconds a statement of a GraphQL request or of a non-admin /v1/query may run; 0 = no limit (default 60)',
  },
  {
    key: 'adminStatementTimeout',
    flag: 'admin-statement-timeout',
    env: 'SVC_GRAPHQL_ADMIN_STATEMENT_TIMEOUT',
    kind: 'int',
    description: 'seconds an admin /v1/query request (run_sql, metadata) may run; 0 = no limit (default 0)',
  },
  {
    key: 'poolAcquireTimeout',
    flag: 'pool-acquire-timeout',
    env: 'SVC_GRAPHQL_POOL_ACQUIRE_TIMEOUT',
    kind: 'int',
    description: 'seconds a request waits for a database connection before a 503 (default 10)',
  },
  {
    key: 'dbConnectRetryTimeout',
    flag: 'db-connect-retry-timeout',
    env: 'SVC_GRAPHQL_DB_CONNECT_RETRY_TIMEOUT',
    kind: 'int',
    description: 'seconds start-up retries a database that does not answer (default 60)',
  },
  {
    key: 'persistedQueriesMaxBytes',
    flag: 'persisted-queries-max-bytes',
    env: 'SVC_GRAPHQL_PERSISTED_QUERIES_MAX_BYTES',
    kind: 'int',
    description: 'bytes of automatic persisted queries kept per process, least recently used evicted first; 0 = none (default 16777216)',
  },
  {
    key: 'queryCacheMaxBytes',
    flag: 'query-cache-max-bytes',
    env: 'SVC_GRAPHQL_QUERY_CACHE_MAX_BYTES',
    kind: 'int',
    description:
      'bytes of @cached responses kept per process, least recently used evicted first (with --redis-url: the largest response stored in Redis); 0 = none (default 67108864)',
  },
  {
    key: 'queryCacheStrict',
    flag: 'query-cache-strict',
    env: 'SVC_GRAPHQL_QUERY_CACHE_STRICT',
    kind: 'bool',
    switch: true,
    description:
      'before every @cached lookup, wait until the change notifications of every write committed before the request have arrived (one NOTIFY round trip per batch of lookups); default false',
  },
  {
    key: 'maxQueryBytes',
    flag: 'max-query-bytes',
    env: 'SVC_GRAPHQL_MAX_QUERY_BYTES',
    kind: 'int',
    description: 'maximum size of a GraphQL document (default 1048576)',
  },
  {
    key: 'maxQueryTokens',
    flag: 'max-query-tokens',
    env: 'SVC_GRAPHQL_MAX_QUERY_TOKENS',
    kind: 'int',
    description: 'maximum lexical tokens of a GraphQL document (default 20000)',
  },
  {
    key: 'maxQueryDepth',
    flag: 'max-query-depth',
    env: 'SVC_GRAPHQL_MAX_QUERY_DEPTH',
    kind: 'int',
    description: 'maximum selection depth, fragments expanded (default 100)',
  },
  {
    key: 'maxQueryNodes',
    flag: 'max-query-nodes',
    env: 'SVC_GRAPHQL_MAX_QUERY_NODES',
    kind: 'int',
    description: 'maximum fields of the expanded selection (default 10000)',
  },
  {
    key: 'maxQueryAliases',
    flag: 'max-query-aliases',
    env: 'SVC_GRAPHQL_MAX_QUERY_ALIASES',
    kind: 'int',
    description: 'maximum aliased fields in a document (default 1000)',
  },
  {
    key: 'maxNestingDepth',
    flag: 'max-nesting-depth',
    env: 'SVC_GRAPHQL_MAX_NESTING_DEPTH',
    kind: 'int',
    description: 'maximum nesting of JSON inputs: where, bulk, variables (default 256)',
  },
  {
    key: 'redisUrl',
    flag: 'redis-url',
    env: 'SVC_GRAPHQL_REDIS_URL',
    kind: 'string',
    description:
      'redis:// URL of a Redis shared by all workers and instances: rate-limit counters, persisted queries and the response cache (default: per-process state)',
  },
  {
    key: 'planCacheMaxBytes',
    flag: 'plan-cache-max-bytes',
    env: 'SVC_GRAPHQL_PLAN_CACHE_MAX_BYTES',
    kind: 'int',
    description: 'memory budget of the plan cache in bytes (default 67108864)',
  },
  {
    key: 'migrationsDir',
    flag: 'migrations-dir',
    env: 'SVC_GRAPHQL_MIGRATIONS_DIR',
    kind: 'string',
    description: 'apply the pending migrations of this directory (svc migrate) before serving; refuse to start if one fails',
  },
  {
    key: 'roleSchemaCacheMaxBytes',
    flag: 'role-schema-cache-max-bytes',
    env: 'SVC_GRAPHQL_ROLE_SCHEMA_CACHE_MAX_BYTES',
    kind: 'int',
    description:
      "estimated bytes of per-role GraphQL schemas kept; the least recently used role's schema is dropped beyond it and rebuilt on its next request (default 268435456)",
  },
  {
    key: 'outboundDenyPrivate',
    flag: 'outbound-deny-private',
    env: 'SVC_GRAPHQL_OUTBOUND_DENY_PRIVATE',
    kind: 'bool',
    switch: true,
    description:
      'refuse outbound calls (webhooks, action handlers, remote schemas, auth webhook, JWKS) to loopback, private, link-local and other non-public addresses, checked on the resolved addresses (default false)',
  },
  {
    key: 'outboundAllowHosts',
    flag: 'outbound-allow-hosts',
    env: 'SVC_GRAPHQL_OUTBOUND_ALLOW_HOSTS',
    kind: 'list',
    description:
      'CSV of the only hosts outbound calls may go to (`*.example.com` for subdomains); these are exempt from --outbound-deny-private (default: any host)',
  },
  {
    key: 'metadataDir',
    flag: 'metadata-dir',
    env: 'SVC_GRAPHQL_METADATA_DIR',
    kind: 'string',
    description: 'apply this metadata directory (svc metadata export) before serving, after the migrations; refuse to start if it fails',
  },
  {
    key: 'otlpEndpoint',
    flag: 'otlp-endpoint',
    env: 'SVC_GRAPHQL_OTLP_ENDPOINT',
    kind: 'string',
    description:
      'OTLP/HTTP endpoint that receives traces, e.g. http://localhost:4318 (/v1/traces is appended); OTEL_EXPORTER_OTLP_ENDPOINT and the other OTEL_* variables work too (default: tracing off)',
  },
  {
    key: 'tracingSqlComment',
    flag: 'tracing-sql-comment',
    env: 'SVC_GRAPHQL_TRACING_SQL_COMMENT',
    kind: 'enum',
    values: ['auto', 'always', 'never', 'true', 'false'],
    description:
      "with tracing on, which of a sampled request's statements carry a /*traceparent=…*/ comment (sqlcommenter; a commented statement is parsed and planned again): auto (default: all but prepared statements whose recent runs were faster than --tracing-sql-comment-min-ms), always (true), never (false)",
  },
  {
    key: 'tracingSqlCommentMinMs',
    flag: 'tracing-sql-comment-min-ms',
    env: 'SVC_GRAPHQL_TRACING_SQL_COMMENT_MIN_MS',
    kind: 'int',
    description:
      'with --tracing-sql-comment auto: prepared statements whose recent runs took less than this many milliseconds keep their plan and go without the comment (default 50)',
  },
  {
    key: 'projectDir',
    flag: 'project-dir',
    env: 'SVC_GRAPHQL_PROJECT_DIR',
    kind: 'string',
    description:
      'project directory (svc init) the console records into: its schema changes become migrations, its metadata changes metadata files (as under svc console)',
  },
];

export function defaultConfig(): Config {
  return {
    dataDir: './svc-data',
    port: 8080,
    host: '0.0.0.0',
    authHookMode: 'GET',
    corsDomain: '*',
    disableCors: false,
    wsReadCookie: false,
    pgConnections: 50,
    usePreparedStatements: true,
    workers: 'auto',
    readReplicaUrls: [],
    readReplicaMaxLag: 5,
    readFromPrimaryRoles: [],
    txIsolation: 'read-committed',
    stringifyNumericTypes: false,
    enabledApis: new Set<ApiName>(['graphql', 'metadata', 'pgdump', 'config']),
    liveQueriesRefetchInterval: 1000,
    liveQueriesChangeRefetchGap: 50,
    liveQueriesBatchSize: 100,
    streamingQueriesRefetchInterval: 1000,
    streamingQueriesBatchSize: 100,
    tableChangeTriggers: true,
    enableAllowlist: false,
    logLevel: 'info',
    enabledLogTypes: ['startup', 'http-log', 'webhook-log', 'websocket-log'],
    devMode: false,
    adminInternalErrors: true,
    eventsHttpPoolSize: 100,
    eventsHttpMaxConnectionsPerHost: 100,
    eventsFetchInterval: 1000,
    eventsLeaseSeconds: 30,
    bodyLimit: 100 * 1024 * 1024,
    enableConsole: false,
    maxSubscriptionsPerConnection: 100,
    maxWebsocketConnections: 5000,
    gracefulShutdownTimeout: 5,
    statementTimeout: 60,
    adminStatementTimeout: 0,
    poolAcquireTimeout: 10,
    dbConnectRetryTimeout: 60,
    maxQueryBytes: 1024 * 1024,
    persistedQueriesMaxBytes: 16 * 1024 * 1024,
    queryCacheMaxBytes: 64 * 1024 * 1024,
    queryCacheStrict: false,
    maxQueryTokens: 20_000,
    maxQueryDepth: 100,
    maxQueryNodes: 10_000,
    maxQueryAliases: 1000,
    maxNestingDepth: 256,
    planCacheMaxBytes: 64 * 1024 * 1024,
    roleSchemaCacheMaxBytes: 256 * 1024 * 1024,
    outboundDenyPrivate: false,
    outboundAllowHosts: [],
    tracingSqlComment: 'auto',
    tracingSqlCommentMinMs: 50,
  };
}

export class ConfigError extends Error {}

function convert(opt: Option, raw: string, source: string): unknown {
  const bad = (why: string) => new ConfigError(`${source}: ${why}`);
  switch (opt.kind) {
    case 'string':
      if (raw === '') throw bad('expected a non-empty value');
      return raw;
    case 'int': {
      if (!/^\d+$/.test(raw.trim())) throw bad(`expected a non-negative integer, got ${JSON.stringify(raw)}`);
      const n = Number(raw);
      if (opt.key === 'port' && n > 65535) throw bad('port must be between 0 (any free port) and 65535');
      if (opt.key === 'pgConnections' && n < 1) throw bad('must be at least 1');
      return n;
    }
    case 'bool': {
      const v = raw.trim().toLowerCase();
      if (['true', 't', 'yes', 'y', '1', 'on'].includes(v)) return true;
      if (['false', 'f', 'no', 'n', '0', 'off'].includes(v)) return false;
      throw bad(`expected true or false, got ${JSON.stringify(raw)}`);
    }
    case 'enum': {
      const v = opt.key === 'authHookMode' ? raw.toUpperCase() : raw.toLowerCase();
      if (!opt.values!.includes(v)) throw bad(`expected one of ${opt.values!.join(', ')}, got ${JSON.stringify(raw)}`);
      // the boolean spellings of an earlier release
      if (opt.key === 'tracingSqlComment') return v === 'true' ? 'always' : v === 'false' ? 'never' : v;
      return v;
    }
    case 'json':
      try {
        const v = JSON.parse(raw);
        if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('not an object');
        return v;
      } catch (e) {
        throw bad(`expected a JSON object (${(e as Error).message})`);
      }
    case 'list': {
      const items = raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      if (opt.key === 'corsDomain') return items.includes('*') ? '*' : items;
      if (opt.values) {
        for (const i of items)
          if (!opt.values.includes(i.toLowerCase())) throw bad(`unknown value ${JSON.stringify(i)}; expected some of ${opt.values.join(', ')}`);
        if (opt.key === 'enabledApis') return new Set(items.map((i) => i.toLowerCase()));
      }
      return items;
    }
  }
}

export interface ParsedArgs {
  command: 'serve' | 'help' | 'version';
  config: Config;
  /** the keys set by a flag or an environment variable (the others have their defaults) */
  explicit: Set<keyof Config>;
}

/** Parse argv (without node and script) and an environment into a Config. Throws ConfigError. */
export function parseConfig(argv: readonly string[], env: NodeJS.ProcessEnv): ParsedArgs {
  const cfg = defaultConfig() as unknown as Record<string, unknown>;
  const explicit = new Set<keyof Config>();
  for (const opt of OPTIONS) {
    const v = opt.env ? env[opt.env] : undefined;
    if (v !== undefined && v !== '') {
      cfg[opt.key] = convert(opt, v, opt.env!);
      explicit.add(opt.key);
    }
  }
  let command: ParsedArgs['command'] | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--help' || a === '-h' || a === 'help') {
      command = 'help';
      continue;
    }
    if (a === '--version' || a === 'version') {
      command = 'version';
      continue;
    }
    if (!a.startsWith('-')) {
      if (a === 'serve' && !command) {
        command = 'serve';
        continue;
      }
      throw new ConfigError(`unknown command ${JSON.stringify(a)} (expected: serve, version, help)`);
    }
    let name: string;
    let value: string | undefined;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      name = eq >= 0 ? a.slice(2, eq) : a.slice(2);
      value = eq >= 0 ? a.slice(eq + 1) : undefined;
    } else {
      name = a.slice(1);
    }
    const opt = OPTIONS.find((o) => o.flag === name || o.short === name);
    if (!opt) throw new ConfigError(`unknown flag ${a}; see svc --help`);
    if (value === undefined) {
      const next = argv[i + 1];
      if (opt.switch && (next === undefined || next.startsWith('-') || !/^(true|false|t|f|yes|no|0|1|on|off)$/i.test(next))) {
        value = 'true';
      } else {
        if (next === undefined) throw new ConfigError(`flag --${opt.flag} needs a value`);
        value = next;
        i++;
      }
    }
    cfg[opt.key] = convert(opt, value, `--${opt.flag}`);
    explicit.add(opt.key);
  }
  const config = cfg as unknown as Config;
  if (config.schedulerClock !== undefined) {
    try {
      parseClock(config.schedulerClock);
    } catch (e) {
      throw new ConfigError(`--scheduler-clock: ${(e as Error).message}`);
    }
  }
  if (config.authHook && config.jwtSecret) throw new ConfigError('--auth-hook and --jwt-secret cannot be used together');
  if (config.authHook) {
    try {
      new URL(config.authHook);
    } catch {
      throw new ConfigError(`--auth-hook: not a URL: ${config.authHook}`);
    }
  }
  if (config.databaseUrl && !/^postgres(ql)?:\/\//.test(config.databaseUrl)) {
    throw new ConfigError('--database-url: expected postgres://user:password@host:port/dbname');
  }
  const w = String(config.workers).trim().toLowerCase();
  if (w === 'auto') config.workers = 'auto';
  else if (/^\d+$/.test(w) && Number(w) >= 1 && Number(w) <= 1024) config.workers = Number(w);
  else throw new ConfigError(`--workers: expected a number of processes (1-1024) or auto, got ${JSON.stringify(String(config.workers))}`);
  if (!config.databaseUrl && typeof config.workers === 'number' && config.workers > 1) {
    throw new ConfigError('--workers: the embedded database (PGlite) serves one process; use --database-url to run several workers');
  }
  if (config.listenDatabaseUrl && !/^postgres(ql)?:\/\//.test(config.listenDatabaseUrl))
    throw new ConfigError('--listen-database-url: expected postgres://user:password@host:port/dbname');
  if (config.readReplicaUrls.length) {
    if (!config.databaseUrl) throw new ConfigError('--read-replica-urls: needs --database-url (the embedded database has no replicas)');
    for (const u of config.readReplicaUrls)
      if (!/^postgres(ql)?:\/\//.test(u))
        throw new ConfigError(`--read-replica-urls: expected postgres:// URLs, got ${JSON.stringify(u.replace(/:[^:@/]*@/, ':***@'))}`);
  }
  return { command: command ?? 'serve', config, explicit };
}

export function helpText(): string {
  const lines = ['Usage: svc [serve] [flags]', '', 'Flags (environment variable in brackets; flags win):'];
  for (const o of OPTIONS) {
    lines.push(`  --${o.flag}${o.short ? `, -${o.short}` : ''}${o.env ? `  [${o.env}]` : ''}`);
    lines.push(`      ${o.description}`);
  }
  return lines.join('\n');
}
