/**
 * Prometheus metrics at GET /v1/metrics (admin only). Values are read at
 * scrape time from counters the hot path already keeps, so requests pay
 * nothing for them.
 */
import client from 'prom-client';
import type { Engine } from '../engine.js';
import { planCacheStats } from '../execute/graphql.js';

export function createMetrics(engine: Engine): client.Registry {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  new client.Gauge({
    name: 'svc_plan_cache_hits_total',
    help: 'GraphQL requests answered from the plan cache (no parse, validation or compilation)',
    registers: [registry],
    collect() {
      this.set(planCacheStats.hits);
    },
  });
  new client.Gauge({
    name: 'svc_plan_cache_misses_total',
    help: 'GraphQL requests that were parsed, validated and compiled',
    registers: [registry],
    collect() {
      this.set(planCacheStats.misses);
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
    help: 'version of the metadata the schema cache was built from',
    registers: [registry],
    collect() {
      this.set(engine.cache.resourceVersion);
    },
  });
  new client.Gauge({
    name: 'svc_inconsistent_objects',
    help: 'inconsistent metadata objects',
    registers: [registry],
    collect() {
      this.set(engine.cache.inconsistent.length);
    },
  });
  return registry;
}
