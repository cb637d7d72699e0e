/**
 * Prometheus metrics at GET /v1/metrics (admin only). Values are read at
 * scrape time from counters the hot path already keeps, so requests pay
 * nothing for them.
 */
import client from 'prom-client';
import type { Engine } from '../engine.js';
import type { PipelineStats } from '../db/pipeline.js';
import { percentile } from '../delivery/worker.js';
import { ScheduledEventQueue } from '../scheduled/queue.js';

export function createMetrics(engine: Engine): client.Registry {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  new client.Gauge({
    name: 'svc_worker_processes',
    help: 'processes serving (1 per worker; summed over the workers of --workers)',
    registers: [registry],
    collect() {
      this.set(1);
    },
  });
  new client.Gauge({
    name: 'svc_plan_cache_hits_total',
    help: 'GraphQL requests answered from the plan cache (no parse, validation or compilation)',
    registers: [registry],
    collect() {
      this.set(engine.planCache.stats.hits);
    },
  });
  new client.Gauge({
    name: 'svc_plan_cache_misses_total',
    help: 'GraphQL requests that were parsed, validated and compiled',
    registers: [registry],
    collect() {
      this.set(engine.planCache.stats.misses);
    },
  });
  // the response cache of @cached queries (src/cache)
  const cacheGauge = (name: string, help: string, read: (st: Engine['responseCache']['stats']) => number) =>
    new client.Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const rc = engine.responseCache;
        if (rc) this.set(read(rc.stats));
      },
    });
  cacheGauge('svc_query_cache_hits_total', '@cached queries answered from the response cache', (s) => s.hits);
  cacheGauge('svc_query_cache_misses_total', '@cached queries run and stored (or refreshed)', (s) => s.misses);
  cacheGauge('svc_query_cache_evictions_total', 'response-cache entries dropped to stay within --query-cache-max-bytes', (s) => s.evictions);
  cacheGauge('svc_query_cache_invalidations_total', 'response-cache entries dropped because a table they read was written', (s) => s.invalidations);
  cacheGauge(
    'svc_query_cache_bypasses_total',
    '@cached queries answered without the cache (functions, views, remote schemas, no change signal)',
    (s) => s.bypasses,
  );
  cacheGauge('svc_query_cache_redis_errors_total', 'Redis commands of the response cache that failed (each answered as a miss)', (s) => s.redisErrors);
  new client.Gauge({
    name: 'svc_query_cache_bytes',
    help: 'bytes of responses held by the in-process response cache',
    registers: [registry],
    collect() {
      this.set(engine.responseCache?.memory?.bytes ?? 0);
    },
  });
  new client.Gauge({
    name: 'svc_db_statements_total',
    help: 'SQL statements sent to PostgreSQL',
    registers: [registry],
    collect() {
      this.set(engine.db.statementCount);
    },
  });
  new client.Gauge({
    name: 'svc_db_round_trips_total',
    help: 'waits for PostgreSQL (a batch or pipeline of statements is one)',
    registers: [registry],
    collect() {
      this.set(engine.db.roundTrips);
    },
  });
  new client.Gauge({
    name: 'svc_metadata_resource_version',
    aggregator: 'max', // the same in every worker of a cluster (src/server/cluster.ts)
    help: 'version of the metadata the schema cache was built from',
    registers: [registry],
    collect() {
      this.set(engine.cache.resourceVersion);
    },
  });
  new client.Gauge({
    name: 'svc_inconsistent_objects',
    aggregator: 'max', // the same in every worker of a cluster (src/server/cluster.ts)
    help: 'inconsistent metadata objects',
    registers: [registry],
    collect() {
      this.set(engine.cache.inconsistent.length);
    },
  });
  // event-trigger deliveries (src/delivery): counters kept by the worker, queue depth read at scrape
  const events = () => engine.events?.stats;
  const counter = (name: string, help: string, read: (st: NonNullable<ReturnType<typeof events>>) => number) =>
    new client.Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const st = events();
        if (st) this.set(read(st));
      },
    });
  counter('svc_event_deliveries_claimed_total', 'event deliveries claimed by this process', (st) => st.claimed);
  counter('svc_event_deliveries_delivered_total', 'event webhook tries answered with a 2xx', (st) => st.delivered);
  counter('svc_event_deliveries_failed_total', 'event webhook tries that failed (non-2xx, timeout, connection error)', (st) => st.failed);
  counter('svc_event_deliveries_retried_total', 'failed tries followed by a retry', (st) => st.retried);
  counter('svc_event_deliveries_errored_total', 'events marked error (retries exhausted)', (st) => st.errored);
  counter('svc_event_deliveries_in_flight', 'event webhook requests in flight', (st) => st.inFlight);
  new client.Gauge({
    name: 'svc_event_delivery_latency_ms',
    help: 'latency from the event commit to the 2xx, over the last 2048 deliveries',
    labelNames: ['quantile'],
    registers: [registry],
    collect() {
      const st = events();
      if (!st) return;
      this.set({ quantile: '0.5' }, percentile(st.latencies, 50));
      this.set({ quantile: '0.99' }, percentile(st.latencies, 99));
    },
  });
  // live queries (src/subscriptions/liveQueryManager.ts): counters of the engine's cohorts
  const live = (name: string, help: string, read: (st: Engine['liveQueryStats']) => number) =>
    new client.Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read(engine.liveQueryStats));
      },
    });
  live('svc_live_query_cohorts', 'live-query cohorts (subscriptions sharing one multiplexed plan)', (st) => st.cohorts);
  live('svc_live_query_subscribers', 'multiplexed live-query subscribers', (st) => st.subscribers);
  live('svc_live_query_batches_total', 'multiplexed batch statements run', (st) => st.batches);
  live('svc_live_query_batch_errors_total', 'multiplexed batch statements that failed', (st) => st.batchErrors);
  live('svc_live_query_batch_seconds_total', 'total run time of the multiplexed batch statements', (st) => st.batchMs / 1000);
  live('svc_live_query_messages_total', 'live-query results pushed to subscribers', (st) => st.messages);
  live('svc_live_query_messages_dropped_total', 'live-query results replaced by a newer one before a slow client took them', (st) => st.dropped);
  live('svc_live_query_change_runs_total', 'cohort runs caused by a table change (change-driven refetch)', (st) => st.changeRuns);
  live('svc_live_query_cohorts_change_driven', 'cohorts refetched only when a table they read changes', (st) => st.drivenCohorts);
  live(
    'svc_live_query_cohorts_polled',
    'cohorts refetched every interval (read set unknown, a table without change trigger, or no change signal)',
    (st) => st.polledCohorts,
  );
  new client.Gauge({
    name: 'svc_live_query_refetch_mode',
    help: 'how live queries learn of table changes: notify (table-change triggers + LISTEN, connection up) or poll (1 on the current mode)',
    labelNames: ['mode'],
    registers: [registry],
    collect() {
      const notify = engine.changes.listening();
      this.set({ mode: 'notify' }, notify ? 1 : 0);
      this.set({ mode: 'poll' }, notify ? 0 : 1);
    },
  });
  live('svc_live_query_overruns_total', 'refetch intervals a cohort skipped because its previous run had not finished', (st) => st.overruns);
  new client.Gauge({
    name: 'svc_live_query_batch_ms',
    help: 'run time of a multiplexed batch statement, over the last 1024 batches',
    labelNames: ['quantile'],
    registers: [registry],
    collect() {
      this.set({ quantile: '0.5' }, percentile(engine.liveQueryStats.recentBatchMs, 50));
      this.set({ quantile: '0.99' }, percentile(engine.liveQueryStats.recentBatchMs, 99));
    },
  });
  // streaming subscriptions (src/subscriptions/streamManager.ts)
  const stream = (name: string, help: string, read: (st: Engine['streamStats']) => number) =>
    new client.Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read(engine.streamStats));
      },
    });
  stream('svc_stream_cohorts', 'streaming-subscription cohorts (subscriptions sharing one statement)', (st) => st.cohorts);
  stream('svc_stream_subscribers', 'streaming-subscription subscribers', (st) => st.subscribers);
  stream('svc_stream_batches_total', 'streaming-subscription statements run', (st) => st.batches);
  stream('svc_stream_batch_errors_total', 'streaming-subscription statements that failed', (st) => st.batchErrors);
  stream('svc_stream_batch_seconds_total', 'total run time of the streaming-subscription statements', (st) => st.batchMs / 1000);
  stream('svc_stream_messages_total', 'batches pushed to streaming subscribers', (st) => st.messages);
  stream('svc_stream_rows_total', 'rows pushed to streaming subscribers', (st) => st.rows);
  stream('svc_stream_woken_total', 'streaming cohort runs started by a table-change notification', (st) => st.woken);
  stream('svc_stream_deferred_total', 'subscriber rows left out of a run while a client was slow', (st) => st.deferred);
  new client.Gauge({
    name: 'svc_event_queue_depth',
    help: 'events waiting for delivery (due or scheduled for a retry)',
    registers: [registry],
    async collect() {
      const q = engine.events?.queueDepth;
      if (q) this.set(await q().catch(() => 0));
    },
  });
  // scheduled triggers (src/scheduled): the same counters per queue (cron, scheduled), dead events,
  // generated cron events, queue depth and the lag from due time to 2xx
  const scheduled = () => [engine.cronEvents, engine.scheduledEvents].filter((w) => w !== undefined);
  const perQueue = (name: string, help: string, read: (w: ReturnType<typeof scheduled>[number]) => number) =>
    new client.Gauge({
      name,
      help,
      labelNames: ['queue'],
      registers: [registry],
      collect() {
        for (const w of scheduled()) this.set({ queue: w.queue.kind }, read(w));
      },
    });
  perQueue('svc_scheduled_deliveries_claimed_total', 'scheduled events claimed by this process', (w) => w.stats.claimed);
  perQueue('svc_scheduled_deliveries_delivered_total', 'scheduled-event webhook tries answered with a 2xx', (w) => w.stats.delivered);
  perQueue('svc_scheduled_deliveries_failed_total', 'scheduled-event webhook tries that failed', (w) => w.stats.failed);
  perQueue('svc_scheduled_deliveries_retried_total', 'failed scheduled-event tries followed by a retry', (w) => w.stats.retried);
  perQueue('svc_scheduled_deliveries_errored_total', 'scheduled events marked error (retries exhausted)', (w) => w.stats.errored);
  perQueue('svc_scheduled_deliveries_in_flight', 'scheduled-event webhook requests in flight', (w) => w.stats.inFlight);
  perQueue('svc_scheduled_events_dead_total', 'scheduled events found past their tolerance and marked dead by this process', (w) =>
    w.queue instanceof ScheduledEventQueue ? w.queue.stats.dead : 0,
  );
  new client.Gauge({
    name: 'svc_cron_events_generated_total',
    help: 'cron events generated by this process (window top-ups)',
    registers: [registry],
    collect() {
      if (engine.cronGenerator) this.set(engine.cronGenerator.stats.generated);
    },
  });
  new client.Gauge({
    name: 'svc_scheduled_delivery_lag_ms',
    help: 'lag from the time a scheduled event was due to the 2xx, over the last 2048 deliveries',
    labelNames: ['queue', 'quantile'],
    registers: [registry],
    collect() {
      for (const w of scheduled()) {
        this.set({ queue: w.queue.kind, quantile: '0.5' }, percentile(w.stats.latencies, 50));
        this.set({ queue: w.queue.kind, quantile: '0.99' }, percentile(w.stats.latencies, 99));
      }
    },
  });
  new client.Gauge({
    name: 'svc_scheduled_queue_depth',
    help: 'scheduled events due and not yet finished',
    labelNames: ['queue'],
    registers: [registry],
    async collect() {
      for (const w of scheduled()) this.set({ queue: w.queue.kind }, await w.queueDepth().catch(() => 0));
    },
  });
  // read replicas (--read-replica-urls, src/db/replicas.ts): health, lag and reads per replica
  const replicaGauge = (
    name: string,
    help: string,
    read: (st: ReturnType<NonNullable<Engine['replicas']>['status']>[number]) => number | null,
    aggregator?: 'max' | 'sum',
  ) =>
    new client.Gauge({
      name,
      help,
      labelNames: ['replica'],
      registers: [registry],
      ...(aggregator ? { aggregator } : {}),
      collect() {
        this.reset();
        for (const st of engine.replicas?.status() ?? []) {
          const v = read(st);
          if (v !== null) this.set({ replica: st.url }, v);
        }
      },
    });
  replicaGauge(
    'svc_read_replica_healthy',
    '1 while the replica serves reads, 0 while it is skipped (down, not a standby, or lagging)',
    (st) => (st.healthy ? 1 : 0),
    'max',
  );
  replicaGauge('svc_read_replica_lag_seconds', 'replication lag at the last successful check', (st) => st.lagSeconds, 'max');
  replicaGauge('svc_read_replica_reads_total', 'reads sent to the replica', (st) => st.reads);
  // latency histograms (src/core/histogram.ts), observed where the time is spent
  for (const h of engine.histograms.all()) registry.registerMetric(h as unknown as client.Metric);
  // the primary's connection pool: open / idle connections, statements waiting for one, the maximum
  new client.Gauge({
    name: 'svc_db_pool_connections',
    help: 'PostgreSQL pool connections of the primary by state: open (total), idle, waiting (statements waiting for a connection), max',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const st = engine.db.poolStats?.();
      if (!st) return;
      this.set({ state: 'total' }, st.total);
      this.set({ state: 'idle' }, st.idle);
      this.set({ state: 'waiting' }, st.waiting);
      this.set({ state: 'max' }, st.max);
    },
  });
  // pipelined reads (src/db/pipeline.ts) on the primary
  const pipeline = (name: string, help: string, value: (st: PipelineStats) => number) =>
    new client.Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const st = engine.db.pipelineStats?.();
        if (st) this.set(value(st));
      },
    });
  pipeline('svc_db_pipeline_lanes', 'pool connections of the primary carrying pipelined reads now', (st) => st.lanes);
  pipeline('svc_db_pipelined_statements_total', 'read statements answered on pipeline lanes', (st) => st.pipelined);
  pipeline('svc_db_pipeline_reruns_total', 'pipelined statements run again on a connection of their own (they waited behind a stuck one)', (st) => st.rerun);
  return registry;
}
