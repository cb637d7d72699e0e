/**
 * Boot: engine (db, catalog, schema cache) + HTTP server. Used by `svc serve`
 * and by the tests, which start real servers on ephemeral ports.
 */
import pino from 'pino';
import type { Config } from '../config/config.js';
import { Engine } from '../engine.js';
import type { Logger } from '../execute/interface.js';
import { buildApp } from './app.js';
import { LogStream } from '../core/logStream.js';
import { createSessionResolver } from './auth/resolver.js';
import { graphqlHandlers } from './graphql.js';
import { startTracing } from './tracing.js';
import { Histograms } from '../core/histogram.js';
import { performance } from 'node:perf_hooks';

export interface RunningSvc {
  url: string;
  port: number;
  engine: Engine;
  close(): Promise<void>;
  /**
   * after the grace period of a shutdown: cuts every open HTTP connection, cancels the statements
   * still running in PostgreSQL and gives up the spans still being exported; says what the shutdown
   * was waiting for and how many statements were cancelled
   */
  forceClose(): { waitingFor: string; cancelledStatements: number };
}

export function createLogger(config: Config, destination?: NodeJS.WritableStream): Logger {
  // process.stdout on a pipe or socket is a libuv stream, which puts the descriptor in non-blocking
  // mode (a file or a terminal is left as it is): the log stream's writes then answer EAGAIN when
  // the reader stops reading (retried, then dropped) instead of blocking a thread of libuv's pool,
  // which process.exit joins (the exits of exit.ts also cover a pipe a child made blocking again)
  if (!destination) void process.stdout;
  return pino(
    { level: config.logLevel, base: undefined, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } },
    destination ?? (new LogStream(1) as unknown as NodeJS.WritableStream),
  ) as unknown as Logger;
}

/** `beforeListen`: runs once the engine is up and before the port is opened; its failure stops the start. */
export async function startSvc(
  config: Config,
  log: Logger = createLogger(config),
  opts: { beforeListen?: (engine: Engine) => Promise<void> } = {},
): Promise<RunningSvc> {
  // the engine's histograms and outbound client, made first: the authenticator's calls go through it
  const histograms = new Histograms();
  const outbound = Engine.outboundClient(config, histograms);
  // configuration errors of auth surface before anything is opened
  const auth = createSessionResolver(config, log, outbound);
  // traces (only when configured: the SDK is loaded by this call, else never)
  const tracer = await startTracing(config, log);
  let engine: Engine;
  try {
    await auth.ready?.();
    engine = await Engine.start(config, log, { histograms, outbound });
  } catch (e) {
    auth.close?.();
    await tracer?.shutdown();
    throw e;
  }
  if (opts.beforeListen) {
    try {
      await opts.beforeListen(engine);
    } catch (e) {
      auth.close?.();
      await engine.close();
      await tracer?.shutdown();
      throw e;
    }
  }
  let app;
  try {
    app = await buildApp(engine, auth, graphqlHandlers);
  } catch (e) {
    // e.g. --project-dir without a config.yaml
    auth.close?.();
    await engine.close();
    await tracer?.shutdown();
    throw e;
  }
  try {
    await app.listen({ port: config.port, host: config.host === '*' ? '0.0.0.0' : config.host });
  } catch (e) {
    await engine.close();
    await tracer?.shutdown();
    throw e;
  }
  const bound = app.server.address() as { address: string; port: number; family: string };
  const port = bound.port;
  const where = listeningOn(bound, config.enableConsole);
  log.info(
    {
      type: 'startup',
      detail: {
        kind: 'server_configuration',
        info: {
          port,
          server_host: config.host,
          bound_address: where.url,
          console_url: where.console ?? null,
          database: config.databaseUrl ? 'postgres' : `embedded (PGlite, data dir ${config.dataDir})`,
          admin_secret_set: !!config.adminSecret,
          auth_hook: config.authHook ?? null,
          auth_hook_mode: config.authHook ? config.authHookMode : null,
          jwt_secret: config.jwtSecret ? { ...config.jwtSecret, key: config.jwtSecret.key ? '<redacted>' : undefined } : null,
          unauth_role: config.unauthorizedRole ?? null,
          cors_config: config.disableCors ? { disabled: true } : { allowed_origins: config.corsDomain },
          enable_console: config.enableConsole,
          enable_allowlist: config.enableAllowlist,
          enabled_apis: [...config.enabledApis],
          use_prepared_statements: config.usePreparedStatements,
          stringify_numeric_types: config.stringifyNumericTypes,
          live_query_options: { batch_size: config.liveQueriesBatchSize, refetch_delay: config.liveQueriesRefetchInterval },
          enabled_log_types: config.enabledLogTypes,
          resource_version: engine.cache.resourceVersion,
        },
      },
    },
    where.message,
  );
  (log as { flush?: () => void }).flush?.();
  let closing: Promise<void> | undefined;
  // what a shutdown is waiting for (named in the warning when its grace period ends)
  let stage = 'in-flight requests';
  const cutShort = new AbortController();
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    engine,
    close: () =>
      (closing ??= (async () => {
        const began = performance.now();
        await app.close();
        auth.close?.();
        stage = 'background workers and database connections';
        // the deliveries in flight get what is left of the grace period (all of it when the requests
        // were answered at once; none once it was cut short), not a grace period of their own
        await engine.close(Math.max(0, config.gracefulShutdownTimeout * 1000 - (performance.now() - began)));
        stage = 'spans being exported';
        await tracer?.shutdown(cutShort.signal);
        stage = 'nothing';
      })()),
    forceClose: () => {
      app.server.closeAllConnections();
      // a request cut here may have left its statement running (an admin's run_sql has no statement
      // timeout by default): the pool would not close before it ends, and the process exiting would
      // leave it running in PostgreSQL
      const cancelledStatements = engine.cancelRunning();
      cutShort.abort();
      return { waitingFor: stage, cancelledStatements };
    },
  };
}

/**
 * Where the server listens, as the startup line says it: the bound address (`0.0.0.0` or `::` means
 * every interface; then a local URL to open is added) and, with the console enabled, its URL.
 */
export function listeningOn(bound: { address: string; port: number; family: string }, console: boolean): { url: string; console?: string; message: string } {
  const v6 = bound.family === 'IPv6' || bound.family === '6' || bound.address.includes(':');
  const host = v6 ? `[${bound.address}]` : bound.address;
  const url = `http://${host}:${bound.port}`;
  const any = bound.address === '0.0.0.0' || bound.address === '::';
  const local = any ? `http://localhost:${bound.port}` : url;
  const consoleUrl = console ? `${local}/console` : undefined;
  let message = `svc listening on ${url}`;
  if (any) message += ` (all interfaces; ${local} from this machine)`;
  if (consoleUrl) message += `, console at ${consoleUrl}`;
  return { url, ...(consoleUrl ? { console: consoleUrl } : {}), message };
}
