/**
 * `--workers N|auto`: a primary process forks N workers (node:cluster) that share the listening
 * port; each worker is a full engine (schema cache, plan cache, live queries, delivery), kept
 * consistent across workers the way separate instances are (LISTEN/NOTIFY metadata sync,
 * `FOR UPDATE SKIP LOCKED` leases).
 *
 * - Pool: `--connections` is the server's total; each worker gets an equal share
 *   (`poolPerWorker`). Unless `--connections` was given, the total is also capped by what the
 *   database allows (`max_connections` − `superuser_reserved_connections` − what others already
 *   use − the workers' LISTEN connections), so a default start never exhausts `max_connections`.
 * - A worker that dies is replaced after a backoff (1 s doubling to 30 s, back to 1 s once a worker
 *   has lived 60 s), and logged.
 * - SIGTERM/SIGINT are passed to every worker, which drains as a single process does; the primary
 *   exits once all have (or after the grace period + 10 s).
 * - `/v1/metrics`, asked of any worker, is every worker's metrics aggregated (prom-client's
 *   AggregatorRegistry, through the primary).
 */
import cluster, { type Worker } from 'node:cluster';
import os from 'node:os';
import pg from 'pg';
import client from 'prom-client';
import type { Config } from '../config/config.js';
import type { Logger } from '../core/logger.js';
import { exitAfterLog } from './exit.js';

/** Environment a worker reads: its pool share, and whether it applies migrations/metadata at start-up. */
export const WORKER_POOL_ENV = 'SVC_CLUSTER_WORKER_POOL';
export const WORKER_FIRST_ENV = 'SVC_CLUSTER_WORKER_FIRST';
export const WORKER_COUNT_ENV = 'SVC_CLUSTER_WORKERS';

/** The number of worker processes this process is one of (1 outside a cluster). */
export function runningWorkers(): number {
  if (!cluster.isWorker) return 1;
  const n = Number(process.env[WORKER_COUNT_ENV]);
  return Number.isInteger(n) && n >= 1 ? n : 1;
}

/** The number of workers `--workers` asks for: `auto` = cores with a PostgreSQL URL, 1 on the embedded database. */
export function resolveWorkers(config: Config): number {
  if (config.workers === 'auto' || config.workers === undefined) return config.databaseUrl ? Math.max(1, os.availableParallelism?.() ?? os.cpus().length) : 1;
  return config.workers;
}

/** Each worker's pool out of a total. */
export function poolPerWorker(total: number, workers: number): number {
  return Math.max(1, Math.floor(total / workers));
}

/**
 * The connections the server may use in total: `--connections`, or, when it was not given, at most
 * what the database has free for it (each worker also holds one LISTEN connection).
 */
export async function connectionBudget(config: Config, workers: number, explicit: boolean, log: Logger): Promise<number> {
  if (explicit || !config.databaseUrl) return config.pgConnections;
  const c = new pg.Client({ connectionString: config.databaseUrl, connectionTimeoutMillis: 10_000 });
  try {
    await c.connect();
    const r = await c.query(
      `select current_setting('max_connections')::int as max, current_setting('superuser_reserved_connections')::int as reserved,
              (select count(*)::int from pg_stat_activity where backend_type = 'client backend') as used`,
    );
    const { max, reserved, used } = r.rows[0] as { max: number; reserved: number; used: number };
    // the primary's own check connection is counted in `used`; it closes before the workers start
    const free = max - reserved - (used - 1) - workers * 2;
    const total = Math.max(workers, Math.min(config.pgConnections, free));
    if (total < config.pgConnections) {
      log.warn(
        { type: 'startup', detail: { kind: 'connections', max_connections: max, reserved, in_use: used - 1, workers, total } },
        `--connections ${config.pgConnections} would exceed max_connections (${max}): using ${total} in total (${poolPerWorker(total, workers)} per worker)`,
      );
    }
    return total;
  } catch {
    // the database is not up yet: the workers retry it; keep the configured size
    return config.pgConnections;
  } finally {
    await c.end().catch(() => undefined);
  }
}

interface Msg {
  svc?: string;
  id?: number;
  text?: string;
  /** metadata-version / metadata-sync: the resource version committed */
  version?: number;
  /** metadata-sync / metadata-synced: the pid of the worker that committed it */
  origin?: number;
}

/** How long a metadata request waits for the other workers to run its version (then it answers anyway, logged). */
const VERSION_BARRIER_MS = 10_000;

/** Runs the primary: forks the workers, replaces dead ones, drains them on SIGTERM. Never returns. */
export async function runPrimary(config: Config, workers: number, explicitConnections: boolean, log: Logger): Promise<void> {
  const total = await connectionBudget(config, workers, explicitConnections, log);
  const perWorker = poolPerWorker(total, workers);
  const aggregator = new client.AggregatorRegistry();
  let stopping = false;
  let delay = 1_000;
  const bornAt = new Map<Worker, number>();
  log.info(
    { type: 'startup', detail: { kind: 'cluster', workers, connections_total: perWorker * workers, connections_per_worker: perWorker } },
    `starting ${workers} workers (${perWorker} connections each)`,
  );

  const fork = (first: boolean): Worker => {
    const w = cluster.fork({ [WORKER_POOL_ENV]: String(perWorker), [WORKER_FIRST_ENV]: first ? '1' : '0', [WORKER_COUNT_ENV]: String(workers) });
    bornAt.set(w, Date.now());
    w.on('message', (m: Msg) => {
      if (m?.svc === 'metadata-ready') {
        ready.add(w);
        return;
      }
      if (m?.svc === 'metadata-version') {
        versionBarrier(w, m);
        return;
      }
      if (m?.svc !== 'metrics-req') return;
      aggregator.clusterMetrics().then(
        (text) => w.isConnected() && w.send({ svc: 'metrics-res', id: m.id, text }),
        (e: Error) => w.isConnected() && w.send({ svc: 'metrics-res', id: m.id, error: e.message }),
      );
    });
    return w;
  };

  // a metadata change committed by one worker: the others reload it, then the committer answers
  const ready = new Set<Worker>();
  const barriers = new Map<string, { waiting: Set<number>; done: () => void }>();
  const versionBarrier = (from: Worker, m: Msg): void => {
    const key = `${from.process.pid}:${m.id}`;
    // the workers that are up (a starting one reads the catalog when it starts, after this commit)
    const others = [...ready].filter((o) => o !== from && o.isConnected());
    const reply = () => {
      barriers.delete(key);
      clearTimeout(timer);
      if (from.isConnected()) from.send({ svc: 'metadata-version-done', id: m.id });
    };
    const timer = setTimeout(() => {
      const b = barriers.get(key);
      if (b)
        log.warn(
          { type: 'cluster', detail: { event: 'metadata-barrier-timeout', version: m.version, waiting: [...b.waiting] } },
          `workers ${[...b.waiting].join(', ')} did not confirm metadata version ${m.version} within ${VERSION_BARRIER_MS} ms`,
        );
      reply();
    }, VERSION_BARRIER_MS);
    timer.unref();
    if (!others.length) return reply();
    barriers.set(key, { waiting: new Set(others.map((o) => o.process.pid!)), done: reply });
    for (const o of others) o.send({ svc: 'metadata-sync', id: m.id, version: m.version, origin: from.process.pid });
  };
  cluster.on('message', (w: Worker, m: Msg) => {
    if (m?.svc !== 'metadata-synced') return;
    const b = barriers.get(`${m.origin}:${m.id}`);
    if (!b) return;
    b.waiting.delete(w.process.pid!);
    if (!b.waiting.size) b.done();
  });
  cluster.on('exit', (w) => {
    ready.delete(w);
    // a worker that died will not confirm
    for (const b of [...barriers.values()]) {
      b.waiting.delete(w.process.pid!);
      if (!b.waiting.size) b.done();
    }
  });

  cluster.on('exit', (w, code, signal) => {
    const lived = Date.now() - (bornAt.get(w) ?? Date.now());
    bornAt.delete(w);
    if (stopping) return;
    if (lived > 60_000) delay = 1_000;
    log.error(
      { type: 'cluster', detail: { event: 'worker-died', pid: w.process.pid, code, signal, lived_ms: lived, restart_in_ms: delay } },
      `worker ${w.process.pid} died (${signal ?? `exit code ${code}`}); replacing it in ${delay} ms`,
    );
    const wait = delay;
    delay = Math.min(delay * 2, 30_000);
    setTimeout(() => {
      if (!stopping) fork(false);
    }, wait);
  });

  // the first worker applies --migrations-dir/--metadata-dir alone; the others start once it listens
  const first = fork(true);
  await new Promise<void>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`the first worker exited with code ${code} before listening`));
    first.once('exit', onExit);
    first.once('listening', () => {
      first.off('exit', onExit);
      resolve();
    });
  }).catch(async (e: Error) => {
    log.error({ type: 'startup', err: e.message }, 'failed to start');
    process.stderr.write(`svc: failed to start: ${e.message}\n`);
    await exitAfterLog(log, 1);
  });
  for (let i = 1; i < workers; i++) fork(false);

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ type: 'shutdown', signal }, `shutting down ${Object.keys(cluster.workers ?? {}).length} workers`);
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    const hard = setTimeout(
      () => {
        for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
        void exitAfterLog(log, 1, 1000);
      },
      config.gracefulShutdownTimeout * 1000 + 10_000,
    );
    hard.unref();
    const check = () => {
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        log.info({ type: 'shutdown' }, 'stopped');
        void exitAfterLog(log, 0);
      }
    };
    cluster.on('exit', check);
    check();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/**
 * The whole server's metrics (`registry`: the engine's): aggregated across workers in a cluster (the
 * worker's registry published to the primary's aggregation), else this process's.
 */
export function serverMetrics(registry: client.Registry): () => Promise<string> {
  if (!cluster.isWorker || !process.send) return () => registry.metrics();
  client.AggregatorRegistry.setRegistries([registry]);
  new client.AggregatorRegistry(); // installs the worker's answer to the primary's requests
  let nextId = 0;
  const pending = new Map<number, (text: string | undefined) => void>();
  process.on('message', (m: Msg) => {
    if (m?.svc === 'metrics-res' && m.id !== undefined) {
      pending.get(m.id)?.(m.text);
      pending.delete(m.id);
    }
  });
  return () => aggregated(registry, pending, nextId++);
}

async function aggregated(registry: client.Registry, pending: Map<number, (text: string | undefined) => void>, id: number): Promise<string> {
  const text = await new Promise<string | undefined>((resolve) => {
    const t = setTimeout(() => {
      pending.delete(id);
      resolve(undefined);
    }, 6_000);
    pending.set(id, (v) => {
      clearTimeout(t);
      resolve(v);
    });
    process.send!({ svc: 'metrics-req', id });
  });
  return text ?? registry.metrics();
}

/**
 * In a worker: metadata changes are synchronous across the workers of this server. A change this
 * worker commits waits (at most 10 s) until every other worker has reloaded it; a change another
 * worker commits is reloaded here at once and confirmed. Between separate instances the sync
 * stays asynchronous (LISTEN/NOTIFY, as upstream).
 */
export function registerWorkerMetadataSync(
  engine: { versionBarrier?: (version: number) => Promise<void>; syncTo(version: number): Promise<void>; catchUp(): Promise<void> },
  log: Logger,
): void {
  if (!cluster.isWorker || !process.send) return;
  const waiting = new Map<number, () => void>();
  let next = 0;
  process.on('message', (m: Msg) => {
    if (m?.svc === 'metadata-version-done' && m.id !== undefined) {
      waiting.get(m.id)?.();
      waiting.delete(m.id);
    } else if (m?.svc === 'metadata-sync' && m.version !== undefined) {
      const confirm = () => process.send?.({ svc: 'metadata-synced', id: m.id, origin: m.origin });
      engine.syncTo(m.version).then(confirm, (e: unknown) => {
        log.error({ type: 'sync', err: String(e) }, 'metadata reload for another worker failed');
        confirm();
      });
    }
  });
  // from now on this worker takes part in the barrier (the primary waits for its confirmations);
  // a change committed while it started is caught up once
  process.send({ svc: 'metadata-ready' });
  void engine.catchUp().catch((e: unknown) => log.error({ type: 'sync', err: String(e) }, 'metadata catch-up at worker start failed'));
  engine.versionBarrier = (version) =>
    new Promise<void>((resolve) => {
      const id = next++;
      const t = setTimeout(() => {
        waiting.delete(id);
        resolve();
      }, VERSION_BARRIER_MS + 1_000);
      waiting.set(id, () => {
        clearTimeout(t);
        resolve();
      });
      process.send!({ svc: 'metadata-version', id, version });
    });
}
