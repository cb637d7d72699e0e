/** `svc serve`: flags + env → Config → boot. Bad configuration exits 1 with a message, not a stack trace. */
import { ConfigError, helpText, parseConfig } from './config/config.js';
import { VERSION } from './version.js';
import { CLI_COMMANDS, cliOverview } from './cli/names.js';
import type { Engine } from './engine.js';

async function main(): Promise<void> {
  // the CLI for metadata and migrations (svc init | metadata | migrate | seed): src/cli
  const argv = process.argv.slice(2);
  const cliArgv = argv[0] === 'help' && argv[1] && CLI_COMMANDS.includes(argv[1]) ? [...argv.slice(1), '--help'] : argv;
  if (cliArgv[0] && CLI_COMMANDS.includes(cliArgv[0])) {
    const { runCli } = await import('./cli/index.js');
    process.exitCode = await runCli(cliArgv);
    return;
  }
  let parsed;
  try {
    parsed = parseConfig(process.argv.slice(2), process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`svc: ${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
  if (parsed.command === 'help') {
    process.stdout.write(`${cliOverview()}\n\n${helpText()}\n`);
    return;
  }
  if (parsed.command === 'version') {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  // loaded here, not at the top: the CLI commands above do not load the server
  const { createLogger, startSvc } = await import('./server/start.js');
  const { exitAfterLog } = await import('./server/exit.js');
  const log = createLogger(parsed.config);
  // --workers: the primary process only forks and supervises the workers (src/server/cluster.ts)
  const cluster = (await import('node:cluster')).default;
  const clustering = await import('./server/cluster.js');
  const workers = clustering.resolveWorkers(parsed.config);
  if (cluster.isPrimary && workers > 1) {
    await clustering.runPrimary(parsed.config, workers, parsed.explicit.has('pgConnections'), log);
    return;
  }
  const pool = Number(process.env[clustering.WORKER_POOL_ENV]);
  if (cluster.isWorker && pool > 0) parsed.config.pgConnections = pool;
  else parsed.config.pgConnections = await clustering.connectionBudget(parsed.config, 1, parsed.explicit.has('pgConnections'), log);
  const firstWorker = !cluster.isWorker || process.env[clustering.WORKER_FIRST_ENV] === '1';
  let svc;
  try {
    const { migrationsDir, metadataDir } = parsed.config;
    const beforeListen =
      firstWorker && (migrationsDir !== undefined || metadataDir !== undefined)
        ? async (engine: Engine) => (await import('./cli/startup.js')).applyAtStartup(engine, { migrationsDir, metadataDir }, log)
        : undefined;
    svc = await startSvc(parsed.config, log, beforeListen ? { beforeListen } : {});
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    log.error({ type: 'startup', err: msg }, 'failed to start');
    process.stderr.write(`svc: failed to start: ${msg}\n`);
    await exitAfterLog(log, 1);
    return;
  }
  // --workers: metadata changes are synchronous across this server's workers
  clustering.registerWorkerMetadataSync(svc.engine, log);
  // A bug that escapes every handler leaves the process in an unknown state: log it and exit
  // loudly (70 = EX_SOFTWARE) so that the supervisor restarts it, rather than serve half-broken.
  const fatal = (kind: string) => (e: unknown) => {
    log.error({ type: 'unhandled', kind, err: e instanceof Error ? { message: e.message, stack: e.stack } : String(e) }, 'fatal: unhandled error');
    process.stderr.write(`svc: fatal ${kind}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    // the fatal line gets a second to reach the log (a write in flight is finished first)
    void exitAfterLog(log, 70, 1000);
  };
  process.on('unhandledRejection', fatal('unhandledRejection'));
  process.on('uncaughtException', fatal('uncaughtException'));

  // SIGTERM/SIGINT: websockets are closed (1001) at once, new requests get 503, in-flight ones
  // finish, then the background workers stop and the last spans are exported; after
  // --graceful-shutdown-timeout the rest is cut off (connections closed, statements still running
  // cancelled, unexported spans given up).
  const graceMs = parsed.config.gracefulShutdownTimeout * 1000;
  const stop = async (signal: string) => {
    const started = Date.now();
    log.info({ type: 'shutdown', signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      const { waitingFor, cancelledStatements } = svc.forceClose();
      log.warn(
        { type: 'shutdown', detail: { waiting_for: waitingFor, cancelled_statements: cancelledStatements } },
        `the shutdown still waits for ${waitingFor} after ${graceMs} ms: cut short`,
      );
    }, graceMs);
    force.unref();
    const hard = setTimeout(() => void exitAfterLog(log, 1, 1000), graceMs + 5_000);
    hard.unref();
    await svc.close();
    log.info({ type: 'shutdown', ms: Date.now() - started }, 'stopped');
    await exitAfterLog(log, 0);
  };
  // Listening for good, not once: a second signal during the drain is ignored, where without a
  // listener it would kill the process at once (in-flight requests cut, pending log lines lost).
  // It comes whenever the whole process group or cgroup is signalled — a terminal's Ctrl-C,
  // systemd's default KillMode=control-group, `pkill` — as a worker then gets the signal and the
  // SIGTERM its primary forwards (src/server/cluster.ts).
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.info({ type: 'shutdown', signal }, 'already shutting down: signal ignored');
      return;
    }
    stopping = true;
    void stop(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

void main();
