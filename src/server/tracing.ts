/**
 * OpenTelemetry traces (issue 35), set up at start-up only when configured: `--otlp-endpoint`
 * (SVC_GRAPHQL_OTLP_ENDPOINT) or the standard OTEL_EXPORTER_OTLP_ENDPOINT /
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (with OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME,
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER / _ARG, OTEL_BSP_*; OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none turn it off). The SDK is loaded here with dynamic imports: a server
 * without tracing never loads it, and the rest of the code sees `tracing === null`
 * (src/core/tracing.ts).
 *
 * Spans go out as OTLP/HTTP JSON in batches (BatchSpanProcessor: bounded queue, spans dropped
 * when the collector is slower than the traffic, never blocking a request). The context travels
 * in AsyncLocalStorage; W3C traceparent/tracestate are read from requests and written on every
 * outbound call.
 */
import type { Link } from '@opentelemetry/api';
import type { Config } from '../config/config.js';
import type { Logger } from '../core/logger.js';
import { installTracing, tracing, type SpanKindName, type Tracing } from '../core/tracing.js';
import { VERSION } from '../version.js';

/** The traces URL: the flag (a base URL like OTEL_EXPORTER_OTLP_ENDPOINT, or the full …/v1/traces URL), else undefined (the exporter reads OTEL_*). */
export function otlpTracesUrl(config: Pick<Config, 'otlpEndpoint'>, env: NodeJS.ProcessEnv = process.env): { url?: string; configured: boolean } {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return { configured: false };
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return { configured: false };
  if (config.otlpEndpoint) {
    const base = config.otlpEndpoint.replace(/\/+$/, '');
    return { url: base.endsWith('/v1/traces') ? base : `${base}/v1/traces`, configured: true };
  }
  return { configured: !!(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT) };
}

/** Starts tracing when configured (installs it process-wide); resolves to it, or null. */
export async function startTracing(config: Config, log: Logger): Promise<Tracing | null> {
  if (tracing) return null; // one per process: a second server in the same process uses it, the first one owns it
  const where = otlpTracesUrl(config);
  if (!where.configured) return null;
  const api = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { W3CTraceContextPropagator } = await import('@opentelemetry/core');
  const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes, detectResources, envDetector, defaultResource } = await import('@opentelemetry/resources');
  const { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } = await import('@opentelemetry/semantic-conventions');

  const contextManager = new AsyncLocalStorageContextManager().enable();
  api.context.setGlobalContextManager(contextManager);
  const propagator = new W3CTraceContextPropagator();
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'svc', [ATTR_SERVICE_VERSION]: VERSION }))
    .merge(detectResources({ detectors: [envDetector] }));
  const exporter = new OTLPTraceExporter(where.url ? { url: where.url } : {});
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  const tracer = provider.getTracer('svc', VERSION);
  const KINDS: Record<SpanKindName, number> = { internal: api.SpanKind.INTERNAL, server: api.SpanKind.SERVER, client: api.SpanKind.CLIENT, producer: api.SpanKind.PRODUCER, consumer: api.SpanKind.CONSUMER };
  const carrierGetter = {
    keys: (c: Record<string, string>) => Object.keys(c),
    get: (c: Record<string, string>, k: string) => c[k],
  };
  const ROOT = api.ROOT_CONTEXT;
  const sqlComment = config.tracingSqlComment;

  const impl: Tracing = {
    start(name, attrs, opts) {
      let ctx = opts?.root ? ROOT : api.context.active();
      let links: Link[] | undefined;
      if (opts?.traceparent) {
        const carrier: Record<string, string> = { traceparent: opts.traceparent };
        if (opts.tracestate) carrier.tracestate = opts.tracestate;
        const extracted = propagator.extract(ROOT, carrier, carrierGetter);
        const sc = api.trace.getSpanContext(extracted);
        if (sc && api.isSpanContextValid(sc)) {
          ctx = extracted;
          if (opts.kind === 'consumer') links = [{ context: sc }];
        }
      }
      return tracer.startSpan(name, { kind: KINDS[opts?.kind ?? 'internal'], ...(attrs ? { attributes: attrs } : {}), ...(links ? { links } : {}) }, ctx);
    },
    run(span, fn) {
      return api.context.with(api.trace.setSpan(api.context.active(), span), fn);
    },
    fail(span, code, message) {
      span.setAttribute('svc.error.code', code);
      span.recordException({ name: code, message });
      span.setStatus({ code: api.SpanStatusCode.ERROR, message });
    },
    inject(headers) {
      propagator.inject(api.context.active(), headers, api.defaultTextMapSetter);
    },
    active() {
      return api.trace.getSpan(api.context.active()) !== undefined;
    },
    traceparent() {
      const sc = api.trace.getSpan(api.context.active())?.spanContext();
      if (!sc || !(sc.traceFlags & api.TraceFlags.SAMPLED)) return undefined;
      return `00-${sc.traceId}-${sc.spanId}-01`;
    },
    traceId(span) {
      return span.spanContext().traceId;
    },
    sqlComment,
    flush: () => provider.forceFlush(),
    async shutdown() {
      installTracing(null);
      await provider.shutdown().catch(() => undefined);
      api.context.disable();
      api.trace.disable();
    },
  };
  installTracing(impl);
  log.info({ type: 'startup', detail: { kind: 'tracing', otlp_traces_url: where.url ?? process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${process.env.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`, sql_comment: sqlComment } }, 'OpenTelemetry traces exported over OTLP/HTTP');
  return impl;
}
