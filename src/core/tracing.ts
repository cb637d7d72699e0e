/**
 * Tracing (OpenTelemetry) as every layer sees it: `tracing` is null unless traces are configured
 * (--otlp-endpoint or the OTEL_EXPORTER_OTLP_* variables; src/server/tracing.ts installs it at
 * start-up, loading the SDK with a dynamic import). Call sites test `tracing` and do nothing else
 * when it is null: with tracing off a request pays one null check per hop and the SDK is never
 * loaded. Only types are imported here.
 *
 * The parent of a span is passed explicitly (`opts.parent`): a request's span travels on its
 * ExecContext (`ctx.span`), its statements through a Db bound to it (`db.withSpan(span)`), its
 * outbound calls in their options (`parent`). No AsyncLocalStorage: on Node 20 its promise hooks
 * ran on every promise of the process once tracing was configured, sampled or not (+17-20 % CPU
 * on a primary-key lookup, README "Observability").
 */
import type { Attributes, Span } from '@opentelemetry/api';

export type { Span };
export type SpanKindName = 'internal' | 'server' | 'client' | 'consumer' | 'producer';

export interface StartOptions {
  kind?: SpanKindName;
  /** the parent span; none (and no traceparent): a new root span */
  parent?: Span;
  /** parent (and, for a consumer span, link) from a W3C traceparent (+ tracestate): a client's or a stored one */
  traceparent?: string | null;
  tracestate?: string | null;
}

export interface Tracing {
  /**
   * a span, child of `opts.parent` (or of `opts.traceparent`), else a root; `attrs` is kept, not
   * copied, and encoded after the turn of the event loop that ends the span: pass a fresh object (or
   * a `constant`) and do not change it afterwards
   */
  start(name: string, attrs?: Attributes, opts?: StartOptions): Span;
  /**
   * The attributes `make(key)` makes for `key` (a statement text, a route, a plan), made once and
   * kept by this tracer as a constant: encoded once, copied whole into each span that is given it
   * (at its start, or to `setAttributes` before any other attribute). The object must not be changed.
   */
  constant<K extends string | object>(key: K, make: (key: K) => Attributes): Attributes;
  /** records an error on the span (exception event, status ERROR, `svc.error.code`) */
  fail(span: Span, code: string, message: string): void;
  /** adds `traceparent` (and `tracestate`) of `span` to outbound headers */
  inject(span: Span, headers: Record<string, string>): void;
  /** the W3C traceparent of `span` when it is sampled (SQL comments, event rows); undefined without a span */
  traceparent(span: Span | undefined): string | undefined;
  /** the trace id of a span */
  traceId(span: Span): string;
  /**
   * the sqlcommenter comment (` /*traceparent='…'*\/`) for a statement under `span`, or '' (not
   * sampled, comments off, or — `auto` — `key`, a prepared statement's name, has been running
   * faster than the threshold: it keeps its plan)
   */
  sqlComment(span: Span, key: string | undefined): string;
  /** whether statementTook wants the durations of prepared statements (`auto`) */
  readonly timesStatements: boolean;
  /** a traced prepared statement's duration (ms), for sqlComment's `auto` */
  statementTook(key: string, ms: number): void;
  /** exports the spans ended so far */
  flush(): Promise<void>;
  /**
   * Exports what is left and stops. `cut`: when it aborts (a shutdown's grace period is over), the
   * exports still in flight (an OTLP endpoint that is down, retried with backoff) are given up: their
   * spans are counted in a warning, the exporter thread is stopped, and this resolves at once.
   */
  shutdown(cut?: AbortSignal): Promise<void>;
}

/** null: tracing is off (the default) */
export let tracing: Tracing | null = null;

export function installTracing(t: Tracing | null): void {
  tracing = t;
}

/** the sampled traceparent of `span` with tracing on (event rows, scheduled events, async actions), else undefined */
export function traceparentOf(span: Span | undefined): string | undefined {
  return span === undefined ? undefined : tracing?.traceparent(span);
}
