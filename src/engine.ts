/**
 * The running engine: database, configuration, the current schema cache and
 * its replacement after metadata changes (here or on another instance).
 */
import { OutboundClient } from './http/client.js';
import { RemoteStore } from './remote/introspect.js';
import { WorkerSet, type Worker } from './background.js';
import { Semaphore } from './core/semaphore.js';
import { PlanCache } from './execute/planCache.js';
import type { Config } from './config/config.js';
import { initCatalog, loadMetadata, loadResourceVersion, lockMetadata, METADATA_CHANNEL } from './catalog/catalog.js';
import { syncEventTriggers } from './events/triggers.js';
import { ChangeTracker, changeTriggerTables, syncChangeTriggers } from './changes/tracker.js';
import { HostGates } from './delivery/hosts.js';
import { openDb, type Db } from './db/db.js';
import { openSharedStore, type SharedStore } from './db/redis.js';
import { ResponseCache } from './cache/responseCache.js';
import { NotifyFence } from './cache/fence.js';
import { readRouted, ReplicaSet } from './db/replicas.js';
import type { Logger } from './core/logger.js';
import { loadSchemaCache } from './schema/load.js';
import { schemaExtensions } from './extensions.js';
import type { SchemaExtension } from './schema/extensions.js';
import { inconsistentRef } from './schema/dependencies.js';
import type { SchemaCache } from './schema/model.js';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { DeliveryWorker, type DeliveryQueue } from './delivery/worker.js';
import { EventTriggerQueue, triggerWebhook, type DeliverableTrigger } from './events/queue.js';
import { resolveHeaders } from './delivery/http.js';
import { parseClock, type Clock } from './core/clock.js';
import { CronGenerator } from './scheduled/cron.js';
import { ScheduledEventQueue } from './scheduled/queue.js';
import { AsyncActionQueue, type ActionJobContext } from './actions/queue.js';
import { Histograms } from './core/histogram.js';
import { newLiveQueryStats } from './subscriptions/liveQueryManager.js';
import { newStreamStats } from './subscriptions/streamManager.js';

export class Engine {
  private current!: SchemaCache;
  private unlisten?: () => Promise<void>;
  private poll?: NodeJS.Timeout;
  private reloading: Promise<void> | undefined;
  /**
   * Versions this process is committing itself: their NOTIFY can arrive before the request that
   * wrote them swaps its cache in, and must not start a reload of the same version (which raced
   * with that swap and could replace the fresh cache with one built later, from a remote schema
   * that had gone away meanwhile).
   */
  private ownVersions = new Set<number>();
  /** metadata-sync counts: reloads for other instances' changes, own NOTIFYs passed over */
  readonly syncStats = { reloads: 0, ownNotifications: 0 };
  private listeners: Array<(c: SchemaCache) => void> = [];
  /** /v1/query transactions in flight: at most 3/4 of the pool (the rest stays for GraphQL and health) */
  readonly queryGate: Semaphore;
  /** background workers, started once the schema cache is ready, stopped before the pool closes */
  readonly workers: WorkerSet;
  /** this process, as `locked_by` of the deliveries it claims */
  readonly instanceId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  /** event-trigger deliveries */
  events!: DeliveryWorker;
  /** cron-trigger and one-off scheduled-event deliveries, and the cron events' generator */
  cronEvents!: DeliveryWorker;
  scheduledEvents!: DeliveryWorker;
  cronGenerator!: CronGenerator;
  /** the scheduler's clock (ms since the epoch): the system clock unless --scheduler-clock is set */
  clock: Clock;
  /** asynchronous action calls */
  asyncActions!: DeliveryWorker<ActionJobContext>;
  private deliverable?: { version: number; triggers: Map<string, DeliverableTrigger> };

  /** the read replicas (--read-replica-urls), and the database of reads that may use them */
  replicas?: ReplicaSet;
  private replicaReads?: Db;
  /** the shared store (--redis-url): state that all workers and instances agree on */
  redis?: SharedStore;
  /** which tracked tables may have changed (changes/tracker.ts): per-table versions from NOTIFY */
  readonly changes: ChangeTracker;
  /** the response cache of @cached queries (src/cache): in memory, or in Redis with --redis-url */
  responseCache!: ResponseCache;

  /** this engine's plan cache, bounded by its --plan-cache-max-bytes */
  readonly planCache: PlanCache;

  /** the introspections of the remote schemas this engine fetched */
  readonly remotes: RemoteStore;
  /** the schema extensions every schema cache of this engine is built with (src/extensions.ts) */
  private readonly extensions: readonly SchemaExtension[];

  /** the counters of this engine's live queries and streaming subscriptions (/v1/metrics) */
  readonly liveQueryStats = newLiveQueryStats();
  readonly streamStats = newStreamStats();

  private constructor(
    readonly db: Db,
    readonly config: Config,
    readonly log: Logger,
    /** this engine's latency histograms (/v1/metrics) */
    readonly histograms: Histograms,
    /** this engine's outbound HTTP: its --outbound-* policy, keep-alive connections and histogram */
    readonly outbound: OutboundClient,
  ) {
    this.remotes = new RemoteStore(outbound);
    this.extensions = schemaExtensions(this.remotes);
    this.planCache = new PlanCache(undefined, config.planCacheMaxBytes);
    this.workers = new WorkerSet(log);
    const clock = parseClock(config.schedulerClock);
    this.clock = () => clock();
    this.queryGate = new Semaphore(config.databaseUrl ? Math.max(1, Math.floor((config.pgConnections * 3) / 4)) : 1);
    this.changes = new ChangeTracker(db, log);
  }

  /**
   * `parts`: what the server made before the engine (src/server/start.ts: the authenticator's calls
   * go through the engine's outbound client); made here when not given.
   */
  static async start(config: Config, log: Logger, parts: { histograms?: Histograms; outbound?: OutboundClient } = {}): Promise<Engine> {
    const histograms = parts.histograms ?? new Histograms();
    const outbound = parts.outbound ?? Engine.outboundClient(config, histograms);
    const db = await openDb({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      connections: config.pgConnections,
      ...(config.pgPipelineLanes !== undefined ? { pipelineLanes: config.pgPipelineLanes } : {}),
      ...(config.pgPipelineFastMs !== undefined ? { pipelineFastMs: config.pgPipelineFastMs } : {}),
      idleTimeoutSeconds: config.pgTimeout,
      usePreparedStatements: config.usePreparedStatements,
      ...(config.listenDatabaseUrl ? { listenUrl: config.listenDatabaseUrl } : {}),
      acquireTimeoutMs: config.poolAcquireTimeout * 1000,
      statementTimeoutMs: config.statementTimeout * 1000,
      connectRetryTimeoutMs: config.dbConnectRetryTimeout * 1000,
      poolWait: histograms.poolWait,
      onConnectRetry: (attempt, delayMs, e) =>
        log.warn(
          { type: 'startup', detail: { kind: 'db_connect_retry', attempt, retry_in_ms: delayMs, error: e.message } },
          `database not reachable (try ${attempt}): ${e.message}; retrying in ${delayMs} ms`,
        ),
    });
    let opened: Engine | undefined;
    try {
      await initCatalog(db);
      const engine = new Engine(db, config, log, histograms, outbound);
      opened = engine;
      if (config.readReplicaUrls.length) {
        engine.replicas = new ReplicaSet({
          urls: config.readReplicaUrls,
          pool: {
            connections: config.pgConnections,
            ...(config.pgPipelineLanes !== undefined ? { pipelineLanes: config.pgPipelineLanes } : {}),
            ...(config.pgPipelineFastMs !== undefined ? { pipelineFastMs: config.pgPipelineFastMs } : {}),
            idleTimeoutSeconds: config.pgTimeout,
            usePreparedStatements: config.usePreparedStatements,
            acquireTimeoutMs: config.poolAcquireTimeout * 1000,
            statementTimeoutMs: config.statementTimeout * 1000,
            poolWait: histograms.poolWait,
          },
          maxLagSeconds: config.readReplicaMaxLag,
          onChange: (url, healthy, why) =>
            (healthy ? log.info.bind(log) : log.warn.bind(log))(
              { type: 'read-replica', detail: { url, healthy, reason: why } },
              `read replica ${url} ${healthy ? 'in use' : `skipped: ${why}`}`,
            ),
        });
        await engine.replicas.start();
        engine.replicaReads = readRouted(db, engine.replicas);
      }
      if (config.redisUrl) engine.redis = await openSharedStore({ url: config.redisUrl, log });
      let fence: NotifyFence | undefined;
      if (config.queryCacheStrict) {
        fence = new NotifyFence(db);
        await engine.workers.add({ name: 'query-cache-fence', start: () => fence!.start(), stop: () => fence!.stop() });
      }
      engine.responseCache = new ResponseCache({
        fence,
        maxBytes: config.queryCacheMaxBytes,
        shared: engine.redis,
        changes: engine.changes,
        dbId: await databaseIdentity(db),
        log,
      });
      await engine.reloadFromCatalog();
      await engine.repairEventTriggers();
      await engine.workers.add(engine.metadataSync());
      await engine.workers.add({ name: 'table-changes', start: () => engine.changes.start(), stop: () => engine.changes.stop() });
      engine.onCacheChange(() => void engine.changes.refresh().catch(() => undefined));
      // one delivery subsystem: a worker per queue, all with the same pool, lease and poll settings
      const hosts = new HostGates(Math.max(1, config.eventsHttpMaxConnectionsPerHost));
      const delivery = <C>(queue: DeliveryQueue<C>, clock?: Clock) =>
        new DeliveryWorker<C>({
          db,
          log,
          queue,
          owner: engine.instanceId,
          fetchIntervalMs: config.eventsFetchInterval,
          concurrency: Math.max(1, config.eventsHttpPoolSize),
          leaseSec: Math.max(1, config.eventsLeaseSeconds),
          logTries: config.enabledLogTypes.includes('webhook-log'),
          hosts,
          lag: engine.histograms.deliveryLag,
          outbound,
          ...(clock ? { clock } : {}),
        });
      engine.events = delivery(new EventTriggerQueue(() => engine.deliverableTriggers()));
      await engine.workers.add(engine.events);
      // scheduled triggers run on the scheduler's clock (simulated in tests)
      const clock = () => engine.clock();
      engine.cronGenerator = new CronGenerator({ db, log, clock, intervalMs: 10_000 });
      await engine.workers.add(engine.cronGenerator);
      const dead = (kind: string) => (n: number) =>
        log.info({ type: 'scheduled-trigger', detail: { queue: kind, dead: n } }, `${n} ${kind} events past their tolerance marked dead`);
      engine.cronEvents = delivery(ScheduledEventQueue.cron(clock, dead('cron')), clock);
      engine.scheduledEvents = delivery(ScheduledEventQueue.oneOff(clock, dead('scheduled')), clock);
      await engine.workers.add(engine.cronEvents);
      await engine.workers.add(engine.scheduledEvents);
      // asynchronous actions: the same delivery machinery over svc_catalog.hdb_action_log
      engine.asyncActions = delivery(new AsyncActionQueue(() => engine.cache.actions));
      await engine.workers.add(engine.asyncActions);
      await engine.workers.start();
      return engine;
    } catch (e) {
      await opened?.redis?.close();
      await db.close();
      throw e;
    }
  }

  /**
   * The database a read-only GraphQL operation runs on: the replicas (when configured and healthy)
   * unless the role is in --read-from-primary-roles or the request asks `X-Svc-Read-From: primary`.
   */
  readDb(role?: string, headers?: Record<string, string | string[] | undefined>): Db {
    if (!this.replicaReads) return this.db;
    if (role !== undefined && this.config.readFromPrimaryRoles.includes(role)) return this.db;
    const h = headers?.['x-svc-read-from'];
    if (typeof h === 'string' && h.trim().toLowerCase() === 'primary') return this.db;
    return this.replicaReads;
  }

  /** Polls every delivery queue now (rows were queued by a request). */
  pokeDeliveries(): void {
    for (const w of [this.events, this.cronEvents, this.scheduledEvents, this.asyncActions]) w?.poke();
  }

  get cache(): SchemaCache {
    return this.current;
  }

  onCacheChange(fn: (c: SchemaCache) => void): void {
    this.listeners.push(fn);
  }

  swapCache(next: SchemaCache): void {
    if (this.current && next.resourceVersion < this.current.resourceVersion) return;
    this.current = next;
    for (const l of this.listeners) l(next);
  }

  /**
   * The event triggers this process can deliver: consistent in the current schema cache, with their
   * webhook and header variables set (the others' events wait in the log).
   */
  deliverableTriggers(): Map<string, DeliverableTrigger> {
    const c = this.current;
    if (this.deliverable?.version === c.resourceVersion) return this.deliverable.triggers;
    const bad = new Set(
      c.inconsistent
        .map(inconsistentRef)
        .filter((r) => r?.kind === 'event_trigger')
        .map((r) => (r as { name: string }).name),
    );
    const triggers = new Map<string, DeliverableTrigger>();
    for (const t of c.metadata.tables) {
      for (const def of t.event_triggers) {
        if (bad.has(def.name)) continue;
        try {
          triggerWebhook(def);
          resolveHeaders(def.headers);
        } catch {
          continue;
        }
        triggers.set(def.name, { def, table: t.table });
      }
    }
    this.deliverable = { version: c.resourceVersion, triggers };
    return triggers;
  }

  /**
   * `--workers`: resolves once every other worker of this server runs `version` (or a bounded wait
   * passed); set by server/cluster.ts. A metadata request answers only after it, so the next
   * request, whichever worker the kernel gives it to, sees the change (as with one process).
   */
  versionBarrier?: (version: number) => Promise<void>;

  /** Reloads until the cache is at least `version` (another worker of this server committed it). */
  async syncTo(version: number): Promise<void> {
    await this.maybeReload(version);
  }

  /** Reloads when the catalog holds a newer version than the cache (a worker joining its server). */
  async catchUp(): Promise<void> {
    await this.maybeReload(await loadResourceVersion(this.db));
  }

  /** A metadata request of this process is committing `version` (run.ts); `done` when it swapped or failed. */
  committingVersion(version: number): () => void {
    this.ownVersions.add(version);
    return () => this.ownVersions.delete(version);
  }

  /**
   * Start-up: the database objects of the event triggers are brought in line with the metadata
   * (objects of an older naming replaced, missing ones re-installed), under the metadata row's lock
   * so that instances starting together do it once. A failure is logged, not fatal.
   */
  async repairEventTriggers(): Promise<void> {
    try {
      await this.db.tx(async (c) => {
        await lockMetadata(c);
        const { metadata } = await loadMetadata(c);
        const tables = this.current.db.tables;
        await syncEventTriggers(c, metadata, metadata, (t) => tables.has(`${t.schema}.${t.name}`));
        const changes = await syncChangeTriggers(c, this.config.tableChangeTriggers ? changeTriggerTables(metadata.tables, (k) => tables.get(k)?.kind) : []);
        for (const f of changes.failed)
          this.log.warn(
            { type: 'table-changes', detail: { table: f.table, error: f.error } },
            `no change trigger on ${f.table.schema}.${f.table.name}: its live queries poll`,
          );
      });
    } catch (e) {
      this.log.error(
        { type: 'startup', detail: { error: e instanceof Error ? e.message : String(e) } },
        "could not bring the event triggers' database objects in line with the metadata",
      );
    }
  }

  /** Rebuild from the stored metadata (start-up, or another instance changed it). */
  async reloadFromCatalog(): Promise<void> {
    if (this.reloading) return this.reloading;
    this.reloading = (async () => {
      const stored = await loadMetadata(this.db);
      const cache = await loadSchemaCache(this.db, stored.metadata, stored.resourceVersion, undefined, this.extensions, this.config.roleSchemaCacheMaxBytes);
      if (cache.inconsistent.length) {
        this.log.warn({ type: 'startup', inconsistent: cache.inconsistent.length }, 'metadata has inconsistent objects');
      }
      // a cache of the same version is already live (this process wrote it): keep that one
      if (!this.current || cache.resourceVersion > this.current.resourceVersion) this.swapCache(cache);
    })().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  /**
   * Reloads when `version` is newer than the cache. A reload already in flight may have read the
   * catalog before `version` was committed: wait for it, then compare again (a newer version
   * announced meanwhile is never left to the slow poll).
   */
  private async maybeReload(version: number): Promise<void> {
    if (this.ownVersions.has(version)) {
      this.syncStats.ownNotifications++;
      return;
    }
    for (let i = 0; i < 3 && version > this.current.resourceVersion; i++) {
      try {
        this.syncStats.reloads++;
        await this.reloadFromCatalog();
      } catch (e) {
        this.log.error({ type: 'sync', err: String(e) }, 'metadata reload failed');
        return;
      }
    }
  }

  /** Metadata sync as a background worker: NOTIFY from other instances, a slow poll for missed ones. */
  private metadataSync(): Worker {
    return {
      name: 'metadata-sync',
      start: async () => {
        if (this.db.kind === 'pglite') return;
        const recheck = () =>
          loadResourceVersion(this.db)
            .then((v) => this.maybeReload(v))
            .catch(() => undefined);
        this.unlisten = await this.db.listen(
          METADATA_CHANNEL,
          (payload) => void this.maybeReload(Number(payload)),
          // notifications sent while the connection was down are lost: compare versions now
          () => {
            this.log.info({ type: 'metadata-sync', detail: { event: 'listen-reconnected' } }, 'LISTEN connection re-opened');
            void recheck();
          },
        );
        this.poll = setInterval(() => void recheck(), 10_000);
        this.poll.unref();
      },
      stop: async () => {
        if (this.poll) clearInterval(this.poll);
        this.poll = undefined;
        if (this.unlisten) await this.unlisten();
        this.unlisten = undefined;
      },
    };
  }

  /** a shutdown past its grace period: cancels the statements still running (primary and replicas); how many were asked */
  cancelRunning(): number {
    return (this.db.cancelRunning?.() ?? 0) + (this.replicas?.cancelRunning() ?? 0);
  }

  /** Stops the background workers (within `graceMs`), then closes the pool. */
  async close(graceMs = this.config.gracefulShutdownTimeout * 1000): Promise<void> {
    this.responseCache?.close();
    await this.workers.stop(graceMs);
    await this.replicas?.close();
    await this.redis?.close();
    await this.db.close();
    this.outbound.close();
  }

  /** The outbound client of a configuration (--outbound-deny-private, --outbound-allow-hosts), observed in `histograms`. */
  static outboundClient(config: Config, histograms: Histograms): OutboundClient {
    return new OutboundClient({ denyPrivate: config.outboundDenyPrivate, allowHosts: config.outboundAllowHosts }, histograms.outboundDuration);
  }
}

/**
 * What identifies the database across processes (the response cache's Redis keys): the cluster's
 * system identifier and the database's name and oid; the name alone where the control functions
 * are not allowed.
 */
async function databaseIdentity(db: Db): Promise<string> {
  try {
    const r = await db.query(
      "select (select system_identifier::text from pg_control_system()) || ':' || d.oid::text || ':' || d.datname as id from pg_database d where d.datname = current_database()",
    );
    return String(r.rows[0]?.id);
  } catch {
    const r = await db.query('select current_database() as id');
    return String(r.rows[0]?.id);
  }
}
