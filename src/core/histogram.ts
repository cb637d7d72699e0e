/**
 * Prometheus histograms for hot paths. prom-client's Histogram hashes its label object on every
 * `observe` (keys sorted and joined: about a microsecond); here a label set is bound once
 * (`child(...)`, cached by the caller or by a small map) and an observation is a bucket search over
 * a few numbers and two additions. The registry of /v1/metrics reads them with `get()`, the shape
 * prom-client's `Registry.registerMetric` expects (and its cluster aggregation sums).
 *
 * Label cardinality is bounded: past `maxSeries` label sets, new ones are counted under the value
 * `other` for every label.
 */

export interface HistogramChild {
  observe(seconds: number): void;
}

class Series implements HistogramChild {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(
    private readonly bounds: readonly number[],
    readonly labels: Record<string, string>,
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(v: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && v > b[i]!) i++;
    if (i < b.length) this.counts[i]!++;
    this.sum += v;
    this.count++;
  }
}

/** Default buckets (seconds) of request-like latencies: 0.5 ms to 10 s. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class FastHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly buckets: readonly number[] = LATENCY_BUCKETS,
    private readonly maxSeries = 500,
  ) {}

  /** the series of these label values (in `labelNames` order); bind once, observe often */
  child(...values: string[]): HistogramChild {
    const key = values.join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      if (this.series.size >= this.maxSeries) return this.child(...this.labelNames.map(() => 'other'));
      const labels: Record<string, string> = {};
      this.labelNames.forEach((n, i) => (labels[n] = values[i] ?? ''));
      s = new Series(this.buckets, labels);
      this.series.set(key, s);
    }
    return s;
  }

  observe(seconds: number, ...values: string[]): void {
    this.child(...values).observe(seconds);
  }

  /** nested-map cache of three-label series: no string building or array per observation (hot paths) */
  private readonly by3 = new Map<string, Map<string, Map<string, HistogramChild>>>();

  /** `observe` for a three-label histogram, without allocating */
  observe3(seconds: number, a: string, b: string, c: string): void {
    let m1 = this.by3.get(a);
    if (!m1) this.by3.set(a, (m1 = new Map()));
    let m2 = m1.get(b);
    if (!m2) m1.set(b, (m2 = new Map()));
    let s = m2.get(c);
    if (!s) m2.set(c, (s = this.child(a, b, c)));
    s.observe(seconds);
  }

  /** prom-client's metric shape: `_bucket` (cumulative, with `le`), `_sum`, `_count` per series */
  get(): {
    name: string;
    help: string;
    type: string;
    aggregator: string;
    values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }>;
  } {
    const values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> = [];
    for (const s of this.series.values()) {
      let acc = 0;
      this.buckets.forEach((b, i) => {
        acc += s.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: b }, value: acc });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.series.clear();
    this.by3.clear();
  }
}

/**
 * The histograms of /v1/metrics (src/server/metrics.ts registers them), observed where the time is
 * spent: one set per engine (src/engine.ts), so that two engines in one process count apart.
 */
export class Histograms {
  /** GraphQL (HTTP and websocket operations) and /v1/query requests, observed once per request */
  readonly requestDuration = new FastHistogram(
    'svc_http_request_duration_seconds',
    'request latency (received to answered) by endpoint (/v1/graphql, /v1alpha1/graphql, /v1beta1/relay, /v1/query, websocket), GraphQL operation type and outcome (success, error)',
    ['endpoint', 'operation_type', 'outcome'],
  );
  /** PostgreSQL time of a GraphQL request (its statement, or its mutation's transaction) */
  readonly requestSqlDuration = new FastHistogram(
    'svc_request_sql_duration_seconds',
    'time a GraphQL request waited for PostgreSQL (its statement, or its mutation transaction), by operation type',
    ['operation_type'],
  );
  /** `requestSqlDuration` by operation type, bound once */
  readonly sqlTime = { query: this.requestSqlDuration.child('query'), mutation: this.requestSqlDuration.child('mutation') };
  /** outbound HTTP: auth webhook, JWKS, action handlers, remote schemas, event/scheduled webhooks */
  readonly outboundDuration = new FastHistogram(
    'svc_outbound_request_duration_seconds',
    'outbound HTTP calls by target kind (auth_webhook, jwks, action, remote_schema, event, cron, scheduled, async_action), host (at most 100 hosts, then other) and outcome (2xx, 4xx, 5xx, error)',
    ['target', 'host', 'outcome'],
    LATENCY_BUCKETS,
    400,
  );
  /** event / scheduled delivery lag: created (or due) to delivered */
  readonly deliveryLag = new FastHistogram(
    'svc_delivery_lag_seconds',
    "time from an event's creation (scheduled events: their due time) to its successful delivery, by queue and trigger",
    ['queue', 'trigger'],
    [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
    1000,
  );
  readonly liveQueryPollDuration = new FastHistogram(
    'svc_live_query_poll_duration_seconds',
    'run time of one live-query cohort batch statement (one poll of up to --live-queries-multiplexed-batch-size subscribers)',
    [],
  );
  readonly liveQueryCohortSubscribers = new FastHistogram(
    'svc_live_query_cohort_subscribers',
    'subscribers of a live-query cohort, observed at each poll',
    [],
    [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 5000],
  );
  /** waits for a pool connection when none was idle (an idle one is taken at once and not observed) */
  readonly poolWait = new FastHistogram(
    'svc_db_pool_wait_seconds',
    'time a statement waited for a PostgreSQL pool connection when none was idle',
    [],
    [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30],
  );

  /** all of them, in the order /v1/metrics lists them */
  all(): FastHistogram[] {
    return [
      this.requestDuration,
      this.requestSqlDuration,
      this.outboundDuration,
      this.deliveryLag,
      this.liveQueryPollDuration,
      this.liveQueryCohortSubscribers,
      this.poolWait,
    ];
  }
}
