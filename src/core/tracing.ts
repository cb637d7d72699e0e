/**
 * Tracing (OpenTelemetry) as every layer sees it: `tracing` is null unless traces are configured
 * (--otlp-endpoint or the OTEL_EXPORTER_OTLP_* variables; src/server/tracing.ts installs it at
 * start-up, loading the SDK with a dynamic import). Call sites test `tracing` and do nothing else
 * when it is null: with tracing off a request pays one null check per hop and the SDK is never
 * loaded. Only types are imported here.
 *
 * The active span travels in AsyncLocalStorage (the SDK's context manager), so the database and
 * the outbound HTTP client find their parent without it being passed down every call.
 */
import type { Attributes, Span } from '@opentelemetry/api';

export type { Span };
export type SpanKindName = 'internal' | 'server' | 'client' | 'consumer' | 'producer';

export interface StartOptions {
  kind?: SpanKindName;
  /** parent (and link) from a stored W3C traceparent (+ tracestate) instead of the active context */
  traceparent?: string | null;
  tracestate?: string | null;
  /** a new root span (no parent) */
  root?: boolean;
}

export interface Tracing {
  /** a span, child of the active span (or of `opts.traceparent`) */
  start(name: string, attrs?: Attributes, opts?: StartOptions): Span;
  /** runs `fn` with `span` as the active span */
  run<T>(span: Span, fn: () => T): T;
  /** records an error on the span (exception event, status ERROR, `svc.error.code`) */
  fail(span: Span, code: string, message: string): void;
  /** adds `traceparent` (and `tracestate`) of the active span to outbound headers */
  inject(headers: Record<string, string>): void;
  /** whether a span is active (SQL outside any request, e.g. the background workers' polls, makes no root spans) */
  active(): boolean;
  /** the W3C traceparent of the active span when it is sampled (SQL comments, event rows) */
  traceparent(): string | undefined;
  /** the trace id of a span */
  traceId(span: Span): string;
  /** SQL statements carry a sqlcommenter `traceparent` comment (sampled requests only) */
  readonly sqlComment: boolean;
  /** exports the spans ended so far */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** null: tracing is off (the default) */
export let tracing: Tracing | null = null;

export function installTracing(t: Tracing | null): void {
  tracing = t;
}

/** sqlcommenter's comment of the active span, '' when there is none (appended to the statement) */
export function sqlTraceComment(t: Tracing): string {
  if (!t.sqlComment) return '';
  const tp = t.traceparent();
  return tp === undefined ? '' : ` /*traceparent='${tp}'*/`;
}
