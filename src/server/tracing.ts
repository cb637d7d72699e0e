/**
 * OpenTelemetry traces (issue 35), set up at start-up only when configured: `--otlp-endpoint`
 * (SVC_GRAPHQL_OTLP_ENDPOINT) or the standard OTEL_EXPORTER_OTLP_ENDPOINT /
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (with OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME,
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER / _ARG, OTEL_BSP_*; OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none turn it off). The OpenTelemetry packages are loaded here with dynamic
 * imports: a server without tracing never loads them, and the rest of the code sees
 * `tracing === null` (src/core/tracing.ts).
 *
 * A lean recorder on the official packages, because the SDK's general machinery cost more than the
 * request it traced on the cheapest queries (issue 35: under 10 % at 100 % sampling on a_pk):
 * - the samplers decide as the SDK's do (`OTEL_TRACES_SAMPLER` / _ARG as the SDK reads them; the
 *   constant ones, and the ratio one on the id's bytes, held to the SDK's sampler by a test), the resource is the
 *   resources package's (default + service + OTEL_RESOURCE_ATTRIBUTES/OTEL_SERVICE_NAME), a
 *   client's traceparent/tracestate are read by the W3C propagator's own parser and TraceState
 *   (@opentelemetry/core's parseTraceParent, TraceState; without the Context its extract builds), and
 *   the payloads go out through the OTLP/HTTP exporter's own transport (otlp-exporter-base:
 *   OTEL_EXPORTER_OTLP_* endpoint, headers, timeout, compression, retries), run on a worker thread
 *   (otlpExportWorker.ts: node's HTTP client kept out of the request thread's code);
 * - a span is a small object implementing the API's Span; its ids are bytes cut from slabs of
 *   random bytes (hex only when asked for); times from performance.now(); a span's parent is
 *   passed explicitly (no Context maps, no AsyncLocalStorage: src/core/tracing.ts); the spans
 *   ended during a turn of the event loop are encoded into their batch's Buffer after it (one
 *   setImmediate: in one loop, off the request's path, while they are still young), under a
 *   resource encoded once at start-up:
 *   OTLP/protobuf by default (src/server/otlpProto.ts), OTLP/JSON with
 *   OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL=http/json; a statement text's encoding is remembered;
 * - batching as the BatchSpanProcessor (OTEL_BSP_SCHEDULE_DELAY, _MAX_QUEUE_SIZE,
 *   _MAX_EXPORT_BATCH_SIZE, _EXPORT_TIMEOUT): bounded queue, spans dropped when the collector is
 *   slower than the traffic, never blocking a request.
 */
import { randomFillSync } from 'node:crypto';
import type { Attributes, AttributeValue, Exception, Link, Span, SpanContext, SpanStatus, TimeInput } from '@opentelemetry/api';
import type { Config } from '../config/config.js';
import type { Logger } from '../core/logger.js';
import { installTracing, tracing, type SpanKindName, type Tracing } from '../core/tracing.js';
import { VERSION } from '../version.js';
import { attributes, encodedString, IdBytes, keyValue, ProtoWriter, tag } from './otlpProto.js';
import { WorkerExporter, type EncodedBatch } from './otlpExportWorker.js';
import { performance } from 'node:perf_hooks';

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

// ---- times ---------------------------------------------------------------------------------------

const ORIGIN_MS = performance.timeOrigin;
/** now, in ms since the epoch with sub-ms precision (performance.now() on the time origin) */
const nowMs = (): number => ORIGIN_MS + performance.now();
/** ms since the epoch (fractional) as OTLP's decimal nanoseconds string */
function nanos(ms: number): string {
  const whole = Math.floor(ms);
  const frac = Math.round((ms - whole) * 1e6); // 0…1e6
  return frac >= 1e6 ? `${whole + 1}000000` : `${whole}${String(frac + 1e6).slice(1)}`;
}
function timeOf(t: TimeInput | undefined): number {
  if (t === undefined) return nowMs();
  if (typeof t === 'number') return t < 1e11 ? ORIGIN_MS + t : t; // performance.now() style or epoch ms
  if (t instanceof Date) return t.getTime();
  return t[0] * 1e3 + t[1] / 1e6;
}

// ---- OTLP/JSON ---------------------------------------------------------------------------------

function valueJson(v: AttributeValue): string {
  switch (typeof v) {
    case 'string':
      return `{"stringValue":${JSON.stringify(v)}}`;
    case 'boolean':
      return `{"boolValue":${v}}`;
    case 'number':
      return Number.isSafeInteger(v) ? `{"intValue":${v}}` : Number.isFinite(v) ? `{"doubleValue":${v}}` : `{"doubleValue":${JSON.stringify(String(v))}}`;
    default:
      if (Array.isArray(v))
        return `{"arrayValue":{"values":[${(v as Array<AttributeValue | null | undefined>).map((x) => (x == null ? '{}' : valueJson(x))).join(',')}]}}`;
      return `{"stringValue":${JSON.stringify(String(v))}}`;
  }
}
/** `{"key":"<k>","value":` per attribute name (the names are a small fixed set: written once each) */
const KEY_JSON = new Map<string, string>();
function keyJson(k: string): string {
  let j = KEY_JSON.get(k);
  if (j === undefined) {
    j = `{"key":${JSON.stringify(k)},"value":`;
    if (KEY_JSON.size < 1024) KEY_JSON.set(k, j);
  }
  return j;
}
function attributesJson(a: Attributes): string {
  let out = '';
  for (const k in a) {
    const v = a[k];
    if (v === undefined || v === null) continue;
    out += `${out ? ',' : ''}${keyJson(k)}${valueJson(v)}}`;
  }
  return out;
}

/**
 * Attribute objects a call site keeps and passes again and again (`Tracing.constant`: a statement's
 * db.* attributes, a route's http.* ones, a cached plan's): each is encoded once per format and
 * copied into every span that carries it, instead of its keys and values being written again per
 * span (on a traced primary-key lookup the attributes were ~45 % of recording and encoding a
 * request's four spans). Weak: a constant goes with the statement, route or plan that kept it.
 */
export interface Encoded {
  proto?: Buffer;
  json?: string;
  /** the constant's keys (its own properties), for `overridden` */
  keys?: string[];
}
/**
 * whether an attribute set later (`extra`: key, value pairs) names a key of the constant `attrs`
 * (it then wins, so `attrs` cannot be copied whole); keys compared as strings (no property lookup
 * per key: call sites' keys are literals, mostly the very same strings)
 */
function overridden(attrs: Attributes, e: Encoded, extra: ReadonlyArray<string | AttributeValue> | undefined): boolean {
  if (extra === undefined) return false;
  const keys = (e.keys ??= Object.keys(attrs));
  for (let i = 0; i < extra.length; i += 2) {
    const k = extra[i];
    for (let j = 0; j < keys.length; j++) if (keys[j] === k) return true;
  }
  return false;
}
/** the KeyValue fields (field 9 of a Span) of every set attribute of a constant, encoded once */
function constantProto(attrs: Attributes, e: Encoded, keys: Map<string, Buffer>): Buffer {
  if (e.proto === undefined) {
    const w = new ProtoWriter(256, keys);
    attributes(w, 9, attrs);
    e.proto = w.copy();
  }
  return e.proto;
}
function constantJson(attrs: Attributes, e: Encoded): string {
  return (e.json ??= attributesJson(attrs));
}

/**
 * TraceIdRatioBasedSampler's decision (OTEL_TRACES_SAMPLER=traceidratio and the root spans of
 * parentbased_traceidratio) made on a trace id's bytes instead of its hex: the XOR of its four
 * big-endian 32-bit words is below floor(ratio × 0xffffffff), every id at ratio 1 — what the SDK's
 * `_accumulate` computes from the hex (test/server/tracing_sampler.test.ts holds the two to the same
 * decisions). Asking the SDK's sampler cost every root span the trace id's hex, the API's
 * validity check and the ParentBasedSampler's context lookups, and spread inline-cache misses over
 * the request: at 0.1, 67.8 → 62.1 µs of server CPU per a_pk request (tracing off: 57.4; README
 * "Observability"). The ids here are never all zeros (the SDK's validity check).
 */
export function ratioSampler(ratio: number): (bytes: Buffer, at: number) => boolean {
  const r = typeof ratio !== 'number' || Number.isNaN(ratio) ? 0 : ratio >= 1 ? 1 : ratio <= 0 ? 0 : ratio;
  const bound = r === 1 ? 0x100000000 : Math.floor(r * 0xffffffff);
  return (b, at) => (b.readUInt32BE(at) ^ b.readUInt32BE(at + 4) ^ b.readUInt32BE(at + 8) ^ b.readUInt32BE(at + 12)) >>> 0 < bound;
}

/** OTLP's span kinds (the API's + 1) */
const KIND: Record<SpanKindName, number> = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 };

// ---- spans -------------------------------------------------------------------------------------

export interface Sink {
  push(span: Recorded): void;
  /** the OTLP/JSON value of a statement text (db.statement): the same few texts every request, written once each */
  statementJson(text: string): string;
  /** the same as OTLP/protobuf (an AnyValue's fields) */
  statementProto(text: string): Buffer;
  /** the constant attribute objects (Tracing.constant) and their encodings, made once each */
  readonly constants: WeakMap<Attributes, Encoded>;
}

/** an event of a span, kept until the span is written */
interface SpanEvent {
  name: string;
  /** ms since the epoch */
  at: number;
  attrs: Attributes | undefined;
}

/**
 * The context of a span: ids and flags (also what an unsampled span is). The ids are bytes: a trace
 * id (16) and a span id (8) at offsets (multiples of 8) of slabs shared by many spans (random bytes,
 * never rewritten once handed out; or a remote parent's parsed ids), written into payloads as they are;
 * their hex is made only when asked for (the response's trace id header, an outbound traceparent).
 */
export class Ctx implements SpanContext {
  constructor(
    readonly traceBytes: IdBytes,
    readonly traceAt: number,
    readonly spanBytes: IdBytes,
    readonly spanAt: number,
    public traceFlags: number,
    readonly tracestate: string | undefined,
    private traceHex?: string,
    private spanHex?: string,
  ) {}
  /** a context from hex ids (a remote parent, tests) */
  static fromHex(traceId: string, spanId: string, traceFlags: number, tracestate: string | undefined): Ctx {
    const b = new IdBytes(Buffer.allocUnsafeSlow(24));
    b.bytes.write(traceId + spanId, 0, 'hex');
    return new Ctx(b, 0, b, 16, traceFlags, tracestate, traceId, spanId);
  }
  get traceId(): string {
    return (this.traceHex ??= this.traceBytes.bytes.toString('hex', this.traceAt, this.traceAt + 16));
  }
  get spanId(): string {
    return (this.spanHex ??= this.spanBytes.bytes.toString('hex', this.spanAt, this.spanAt + 8));
  }
  /** the trace id's hex if made already (a child shares it) */
  get knownTraceId(): string | undefined {
    return this.traceHex;
  }
}

/** A span that records nothing (not sampled): it carries its context to children and outbound calls */
class Quiet implements Span {
  constructor(readonly ctx: Ctx) {}
  spanContext(): SpanContext {
    return this.ctx;
  }
  setAttribute(): this {
    return this;
  }
  setAttributes(): this {
    return this;
  }
  addEvent(): this {
    return this;
  }
  addLink(): this {
    return this;
  }
  addLinks(): this {
    return this;
  }
  setStatus(): this {
    return this;
  }
  updateName(): this {
    return this;
  }
  end(): void {}
  isRecording(): boolean {
    return false;
  }
  recordException(): void {}
}

/** whether `pairs` (key, value, key, value…) sets `key` at or after index `from` (even) */
function setAgain(pairs: ReadonlyArray<string | AttributeValue>, key: string, from: number): boolean {
  for (let j = from; j < pairs.length; j += 2) if (pairs[j] === key) return true;
  return false;
}

/** A sampled span: its fields until end(), when it is encoded into the exporter's current batch */
export class Recorded implements Span {
  /**
   * the attributes given at the start, or a constant given whole to setAttributes before any other
   * (the caller's object, not copied: call sites build a fresh literal per span or pass a constant;
   * it is encoded after the turn that ends the span, so it must not change before then)
   */
  private attrs: Attributes | undefined;
  /** attributes set later, as key, value pairs (no object copy or dictionary-mode object per span) */
  private extra: Array<string | AttributeValue> | undefined;
  private events: SpanEvent[] | undefined;
  private status: SpanStatus | undefined;
  private links: Link[] | undefined;
  private ended = false;
  private readonly start: number;
  private end_ = 0;
  constructor(
    readonly ctx: Ctx,
    private readonly parent: Ctx | undefined,
    private name: string,
    private readonly kind: number,
    attrs: Attributes | undefined,
    links: Link[] | undefined,
    private readonly sink: Sink,
  ) {
    this.start = performance.now();
    this.attrs = attrs;
    this.links = links;
  }
  spanContext(): SpanContext {
    return this.ctx;
  }
  setAttribute(key: string, value: AttributeValue | undefined): this {
    if (!this.ended && value !== undefined) (this.extra ??= []).push(key, value);
    return this;
  }
  setAttributes(attributes: Attributes): this {
    if (this.ended) return this;
    // a constant set before any other attribute (a cached plan's): kept whole, encoded once
    if (this.attrs === undefined && this.extra === undefined && this.sink.constants.has(attributes)) {
      this.attrs = attributes;
      return this;
    }
    for (const k in attributes) {
      const v = attributes[k];
      if (v !== undefined) (this.extra ??= []).push(k, v);
    }
    return this;
  }
  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.ended) return this;
    const isTime =
      attributesOrTime === undefined || typeof attributesOrTime === 'number' || attributesOrTime instanceof Date || Array.isArray(attributesOrTime);
    const attrs = isTime ? undefined : (attributesOrTime as Attributes);
    const at = timeOf(isTime ? (attributesOrTime as TimeInput | undefined) : time);
    // copied: the caller may reuse its object before the span is written (events are rare: errors)
    (this.events ??= []).push({ name, at, attrs: attrs && { ...attrs } });
    return this;
  }
  addLink(link: Link): this {
    if (!this.ended) (this.links ??= []).push(link);
    return this;
  }
  addLinks(links: Link[]): this {
    for (const l of links) this.addLink(l);
    return this;
  }
  setStatus(status: SpanStatus): this {
    if (!this.ended) this.status = status;
    return this;
  }
  updateName(name: string): this {
    if (!this.ended) this.name = name;
    return this;
  }
  isRecording(): boolean {
    return !this.ended;
  }
  recordException(exception: Exception, time?: TimeInput): void {
    const e = typeof exception === 'string' ? { message: exception } : exception;
    const attrs: Attributes = {};
    if (e.name) attrs['exception.type'] = e.name;
    else if (e.code !== undefined) attrs['exception.type'] = String(e.code);
    if (e.message) attrs['exception.message'] = e.message;
    if (e.stack) attrs['exception.stacktrace'] = e.stack;
    this.addEvent('exception', attrs, time);
  }
  end(endTime?: TimeInput): void {
    if (this.ended) return;
    this.ended = true;
    this.end_ = endTime === undefined ? performance.now() : Math.max(this.start, timeOf(endTime) - ORIGIN_MS);
    this.sink.push(this);
  }
  /** OTLP/JSON (empty fields left out, as proto3's JSON mapping allows) */
  json(): string {
    const c = this.ctx;
    let attrs = '';
    const extra = this.extra;
    const constant = this.attrs && this.sink.constants.get(this.attrs);
    if (constant && !overridden(this.attrs!, constant, extra)) attrs = constantJson(this.attrs!, constant);
    else if (this.attrs) {
      for (const k in this.attrs) {
        const v = this.attrs[k];
        if (v === undefined || v === null || (extra && setAgain(extra, k, 0))) continue; // set later: the later value wins
        attrs += `${attrs ? ',' : ''}${keyJson(k)}${k === 'db.statement' && typeof v === 'string' ? this.sink.statementJson(v) : valueJson(v)}}`;
      }
    }
    if (extra) {
      for (let i = 0; i < extra.length; i += 2) {
        const k = extra[i] as string;
        if (setAgain(extra, k, i + 2)) continue; // the later value wins
        attrs += `${attrs ? ',' : ''}${keyJson(k)}${valueJson(extra[i + 1] as AttributeValue)}}`;
      }
    }
    let events = '';
    if (this.events)
      for (const e of this.events)
        events += `${events ? ',' : ''}{"timeUnixNano":"${nanos(e.at)}","name":${JSON.stringify(e.name)}${e.attrs ? `,"attributes":[${attributesJson(e.attrs)}]` : ''}}`;
    let links = '';
    if (this.links)
      for (const l of this.links)
        links += `${links ? ',' : ''}{"traceId":"${l.context.traceId}","spanId":"${l.context.spanId}"${l.context.traceState ? `,"traceState":${JSON.stringify(l.context.traceState.serialize())}` : ''}${l.attributes ? `,"attributes":[${attributesJson(l.attributes)}]` : ''}}`;
    const st = this.status;
    return `{"traceId":"${c.traceId}","spanId":"${c.spanId}"${c.tracestate ? `,"traceState":${JSON.stringify(c.tracestate)}` : ''}${this.parent ? `,"parentSpanId":"${this.parent.spanId}"` : ''},"name":${JSON.stringify(this.name)},"kind":${this.kind},"startTimeUnixNano":"${nanos(ORIGIN_MS + this.start)}","endTimeUnixNano":"${nanos(ORIGIN_MS + this.end_)}"${attrs ? `,"attributes":[${attrs}]` : ''}${events ? `,"events":[${events}]` : ''}${st && st.code ? `,"status":{"code":${st.code}${st.message ? `,"message":${JSON.stringify(st.message)}` : ''}}` : ''}${links ? `,"links":[${links}]` : ''}}`;
  }
  /** OTLP/protobuf: the Span message's fields (the same content as json()) */
  proto(w: ProtoWriter): void {
    const c = this.ctx;
    w.id(1, c.traceBytes, c.traceAt, 16);
    w.id(2, c.spanBytes, c.spanAt, 8);
    if (c.tracestate) w.string(3, c.tracestate);
    const p = this.parent;
    if (p) w.id(4, p.spanBytes, p.spanAt, 8);
    w.string(5, this.name);
    w.byte(tag(6, 0));
    w.byte(this.kind);
    w.byte(tag(7, 1));
    w.nanos(ORIGIN_MS + this.start);
    w.byte(tag(8, 1));
    w.nanos(ORIGIN_MS + this.end_);
    const extra = this.extra;
    const constant = this.attrs && this.sink.constants.get(this.attrs);
    if (constant && !overridden(this.attrs!, constant, extra)) w.raw(constantProto(this.attrs!, constant, w.keys));
    else if (this.attrs) {
      for (const k in this.attrs) {
        const v = this.attrs[k];
        if (v === undefined || v === null || (extra && setAgain(extra, k, 0))) continue; // set later: the later value wins
        keyValue(w, 9, k, v, k === 'db.statement' && typeof v === 'string' ? this.sink.statementProto(v) : undefined);
      }
    }
    if (extra) {
      for (let i = 0; i < extra.length; i += 2) {
        const k = extra[i] as string;
        if (setAgain(extra, k, i + 2)) continue; // the later value wins
        keyValue(w, 9, k, extra[i + 1] as AttributeValue);
      }
    }
    if (this.events)
      for (const e of this.events) {
        const at = w.open(11);
        w.byte(tag(1, 1));
        w.nanos(e.at);
        w.string(2, e.name);
        if (e.attrs) attributes(w, 3, e.attrs);
        w.close(at);
      }
    if (this.links)
      for (const l of this.links) {
        const at = w.open(13);
        const ids = Ctx.fromHex(l.context.traceId, l.context.spanId, 0, undefined);
        w.id(1, ids.traceBytes, ids.traceAt, 16);
        w.id(2, ids.spanBytes, ids.spanAt, 8);
        const ts = l.context.traceState?.serialize();
        if (ts) w.string(3, ts);
        if (l.attributes) attributes(w, 4, l.attributes);
        w.close(at);
      }
    const st = this.status;
    if (st && st.code) {
      const at = w.open(15);
      if (st.message) w.string(2, st.message);
      w.byte(tag(3, 0));
      w.varint(st.code);
      w.close(at);
    }
  }
}

// ---- a batch's payload -------------------------------------------------------------------------

/**
 * The OTLP/HTTP encoding: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
 * else `http/protobuf` (the specification's default); `grpc` is not served (OTLP/HTTP only).
 */
export function otlpProtocol(env: NodeJS.ProcessEnv, log?: Logger): 'http/protobuf' | 'http/json' {
  const v = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || '').trim().toLowerCase();
  if (v === 'http/json') return 'http/json';
  if (v && v !== 'http/protobuf')
    log?.warn({ type: 'startup', detail: { kind: 'tracing', protocol: v } }, `OTLP protocol ${v} is not supported: http/protobuf`);
  return 'http/protobuf';
}

const scope = { name: 'svc', version: VERSION };

/**
 * A batch being written: each span is encoded when added (by the tracer: after the turn of the event
 * loop that ended it, or at a flush, shutdown or the schedule delay), so an ended span is garbage
 * soon and a batch waits as one Buffer outside V8's heap, not as span objects the collector would
 * copy from young to old space while the batch fills (holding a whole batch's spans cost more than
 * encoding them soon after they ended).
 */
export interface BatchEncoder {
  /** appends an ended span to the batch (one that cannot be encoded throws and leaves the batch as it was) */
  add(span: Recorded): void;
  /** spans in the batch */
  readonly count: number;
  /**
   * the ExportTraceServiceRequest of the batch's spans; the encoder starts a new batch (when the new
   * batch's Buffer cannot be allocated it throws, and the batch stays as it was)
   */
  take(): Buffer;
}

/** OTLP/JSON batches, span by span into one Buffer (no batch-sized string) */
export function jsonEncoder(resource: Attributes, sizeHint = 64 * 1024): BatchEncoder {
  const head = `{"resourceSpans":[{"resource":{"attributes":[${attributesJson(resource)}],"droppedAttributesCount":0},"scopeSpans":[{"scope":{"name":"${scope.name}","version":${JSON.stringify(scope.version)}},"spans":[`;
  const tail = ']}]}]}';
  const fresh = (): Buffer => Buffer.allocUnsafeSlow(Math.max(sizeHint, head.length * 3 + tail.length));
  let buf: Buffer;
  let at = 0;
  let count = 0;
  const begin = (next: Buffer) => {
    buf = next;
    at = buf.write(head, 0, 'utf8');
    count = 0;
  };
  begin(fresh());
  return {
    add(span) {
      const text = (count ? ',' : '') + span.json();
      if (at + text.length * 3 + tail.length > buf.length) {
        const bigger = Buffer.allocUnsafeSlow(Math.max(buf.length * 2, at + text.length * 3 + tail.length));
        buf.copy(bigger, 0, 0, at);
        buf = bigger;
      }
      at += buf.write(text, at, 'utf8');
      count++;
    },
    get count() {
      return count;
    },
    take() {
      // the next batch's Buffer first: when it cannot be had, this batch stays as it was
      const next = fresh();
      at += buf.write(tail, at, 'latin1');
      const out = buf.subarray(0, at);
      begin(next);
      return out;
    },
  };
}

/** OTLP/protobuf batches: the resource and scope encoded once, each span written into the batch's Buffer */
export function protoEncoder(resource: Attributes, sizeHint = 64 * 1024): BatchEncoder {
  const once = new ProtoWriter(1024);
  const r = once.open(1); // ResourceSpans.resource
  attributes(once, 1, resource);
  once.close(r);
  const resourceField = once.copy();
  once.pos = 0;
  const sc = once.open(1); // ScopeSpans.scope
  once.string(1, scope.name);
  once.string(2, scope.version);
  once.close(sc);
  const scopeField = once.copy();
  const keys = new Map<string, Buffer>();
  let w: ProtoWriter;
  let rs = 0;
  let ss = 0;
  let count = 0;
  const begin = (next: ProtoWriter) => {
    w = next;
    rs = w.open(1); // ExportTraceServiceRequest.resource_spans
    w.raw(resourceField);
    ss = w.open(2); // ResourceSpans.scope_spans
    w.raw(scopeField);
    count = 0;
  };
  begin(new ProtoWriter(sizeHint, keys));
  return {
    add(span) {
      const at = w.open(2); // ScopeSpans.spans
      try {
        span.proto(w);
      } catch (e) {
        w.pos = at - 1; // the batch as it was before this span
        throw e;
      }
      w.close(at);
      count++;
    },
    get count() {
      return count;
    },
    take() {
      // the next batch's writer first: when it cannot be had, this batch stays as it was
      const next = new ProtoWriter(sizeHint, keys);
      w.close(ss);
      w.close(rs);
      const out = w.buf.subarray(0, w.pos);
      begin(next);
      return out;
    },
  };
}

/** a whole batch at once (tests, tools) */
const batchOf =
  (encoder: BatchEncoder) =>
  (batch: Recorded[]): Buffer => {
    for (const span of batch) encoder.add(span);
    return encoder.take();
  };
/** ExportTraceServiceRequest as OTLP/JSON */
export const jsonBatches = (resource: Attributes): ((batch: Recorded[]) => Buffer) => batchOf(jsonEncoder(resource));
/** ExportTraceServiceRequest as OTLP/protobuf */
export const protoBatches = (resource: Attributes): ((batch: Recorded[]) => Buffer) => batchOf(protoEncoder(resource));

/**
 * A statement text's encoded value, remembered: the same few texts every request, encoded once
 * each. Bounded (4,096 texts, 4 MiB), started over when full.
 */
function encodedOnce<T extends { length: number }>(encode: (text: string) => T): (text: string) => T {
  const known = new Map<string, T>();
  let bytes = 0;
  return (text) => {
    let e = known.get(text);
    if (e === undefined) {
      e = encode(text);
      if (known.size >= 4096 || bytes + e.length > 4 << 20) {
        known.clear();
        bytes = 0;
      }
      known.set(text, e);
      bytes += e.length;
    }
    return e;
  };
}

// ---- the batching exporter -----------------------------------------------------------------------

const envInt = (name: string, dflt: number): number => {
  const v = Number(process.env[name]);
  return process.env[name]?.trim() && Number.isFinite(v) && v >= 0 ? v : dflt;
};

/** Starts tracing when configured (installs it process-wide); resolves to it, or null. */
export async function startTracing(config: Config, log: Logger): Promise<Tracing | null> {
  if (tracing) return null; // one per process: a second server in the same process uses it, the first one owns it
  const where = otlpTracesUrl(config);
  if (!where.configured) return null;
  const api = await import('@opentelemetry/api');
  const { parseTraceParent, TraceState } = await import('@opentelemetry/core');
  const { detectResources, envDetector, defaultResource, resourceFromAttributes } = await import('@opentelemetry/resources');
  const { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } = await import('@opentelemetry/semantic-conventions');

  // the sampler as the SDK reads OTEL_TRACES_SAMPLER / _ARG (default parentbased_always_on; a name
  // it does not know: parentbased_always_on, with a warning), its decisions made here: the SDK's
  // constant samplers' and TraceIdRatioBasedSampler's (ratioSampler), none of which adds attributes;
  // a parent-based sampler's child follows its parent's flag, local or remote (the
  // ParentBasedSampler's defaults for both are the constant samplers), the others decide every span
  // (the ratio one by the trace id, which a child shares)
  const ratio = (): number => {
    const r = Number(process.env.OTEL_TRACES_SAMPLER_ARG);
    return process.env.OTEL_TRACES_SAMPLER_ARG?.trim() && r >= 0 && r <= 1 ? r : 1;
  };
  const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'];
  const asked = process.env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on';
  if (!SAMPLERS.includes(asked))
    log.warn({ type: 'startup', detail: { kind: 'tracing', sampler: asked } }, 'OTEL_TRACES_SAMPLER not recognised: parentbased_always_on');
  const samplerName = SAMPLERS.includes(asked) ? asked : 'parentbased_always_on';
  const parentBased = samplerName.startsWith('parentbased_');
  const byRatio = samplerName.endsWith('traceidratio') ? ratioSampler(ratio()) : undefined;
  const constant = samplerName.endsWith('always_on');
  const sampled = (parent: Ctx | undefined, ctx: Ctx): boolean => {
    if (parent && parentBased) return (parent.traceFlags & 1) === 1;
    return byRatio !== undefined ? byRatio(ctx.traceBytes.bytes, ctx.traceAt) : constant;
  };

  // the resource, serialised once
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'svc', [ATTR_SERVICE_VERSION]: VERSION }))
    .merge(detectResources({ detectors: [envDetector] }));
  await resource.waitForAsyncAttributes?.();
  const protocol = otlpProtocol(process.env, log);
  // batching (the BatchSpanProcessor's variables and defaults)
  const maxQueue = envInt('OTEL_BSP_MAX_QUEUE_SIZE', 2048);
  const maxBatch = Math.max(1, Math.min(envInt('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512), maxQueue));
  const delayMs = envInt('OTEL_BSP_SCHEDULE_DELAY', 5000);
  const exportTimeoutMs = envInt('OTEL_BSP_EXPORT_TIMEOUT', 30000);
  // ~250 bytes a span: a full batch fits the first Buffer
  const sizeHint = Math.min(4 << 20, 1024 + maxBatch * 320);
  const encoder = protocol === 'http/json' ? jsonEncoder(resource.attributes, sizeHint * 2) : protoEncoder(resource.attributes, sizeHint);

  // the exporter's transport (OTEL_EXPORTER_OTLP_* as the OTLP/HTTP exporter reads them), on a
  // worker thread (otlpExportWorker.ts); a batch reaches it encoded, its Buffer transferred
  const delegate = new WorkerExporter(where.url, protocol === 'http/json' ? 'application/json' : 'application/x-protobuf', (e) =>
    log.warn({ type: 'startup', detail: { kind: 'tracing', error: String(e) } }, 'the OTLP exporter thread failed: spans are no longer exported'),
  );

  // the queue: spans ended in this turn of the event loop (encoded after it) and the batch being
  // written, bounded by OTEL_BSP_MAX_QUEUE_SIZE spans together; full batches go to the exporter
  // thread at once (its transport bounds what waits there)
  let ready: EncodedBatch[] = [];
  let dropped = 0;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  /** exports not finished yet, each with its span count */
  const pending = new Map<Promise<void>, number>();
  /** spans of exports the endpoint refused or that failed, not yet in a warning (warned at most once a minute) */
  let failed = 0;
  /** the last failure's reason */
  let failedError = '';
  let failedWarnedAt = -Infinity;
  let stopped = false;
  const warnFailed = (): void => {
    if (failed === 0) return;
    log.warn(
      { type: 'startup', detail: { kind: 'tracing', failed_spans: failed, error: failedError } },
      'spans not exported: the OTLP endpoint refused them or could not be reached',
    );
    failed = 0;
    failedWarnedAt = performance.now();
  };
  const exportBatch = (batch: EncodedBatch): Promise<void> => {
    const p = new Promise<void>((resolve) => {
      const t = setTimeout(resolve, exportTimeoutMs);
      t.unref();
      delegate.export(batch, (error) => {
        clearTimeout(t);
        if (error !== undefined && !stopped) {
          failed += batch.count;
          failedError = error;
          if (performance.now() - failedWarnedAt >= 60_000) warnFailed();
        }
        resolve();
      });
    });
    pending.set(p, batch.count);
    void p.then(() => pending.delete(p));
    return p;
  };
  /** ended spans not yet encoded: those of the current turn (with the batch being written, at most OTEL_BSP_MAX_QUEUE_SIZE) */
  let held: Recorded[] = [];
  let encodeFailed = false;
  /**
   * the batch being written, closed, into `ready`; when the next batch's Buffer cannot be allocated
   * the batch stays whole and is tried again by the next take (warned once)
   */
  const takeBatch = (): void => {
    try {
      ready.push({ count: encoder.count, payload: encoder.take() });
    } catch (e) {
      if (!encodeFailed)
        log.warn({ type: 'startup', detail: { kind: 'tracing', error: String(e) } }, 'a batch of spans could not be closed: spans are dropped');
      encodeFailed = true;
    }
  };
  /** encodes the held spans into the batch being written; a full batch goes into `ready` */
  const encodeHeld = (): void => {
    const spans = held;
    held = [];
    for (let i = 0; i < spans.length; i++) {
      if (encoder.count >= maxQueue) {
        dropped += spans.length - i; // batches could not be closed: the bound holds
        return;
      }
      try {
        encoder.add(spans[i]!);
      } catch {
        dropped++; // a span that cannot be encoded (an attribute whose String() throws) is lost alone
      }
      if (encoder.count >= maxBatch) takeBatch();
    }
  };
  /** after a turn that ended spans: encoded, and a full batch sent (never in a request's path) */
  const encodeSoon = (): void => {
    if (closed) return;
    encodeHeld();
    if (ready.length > 0) drain(false);
    else if (encoder.count > 0) arm();
  };
  const drain = (all: boolean): void => {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    encodeHeld();
    if (all && encoder.count > 0) takeBatch();
    const out = ready;
    ready = [];
    for (const b of out) void exportBatch(b);
    if (encoder.count > 0) arm();
  };
  const arm = (): void => {
    if (timer || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      drain(true);
    }, delayMs);
    timer.unref();
  };
  // Tracing.constant: attribute objects kept by key (a statement text, a route, a plan), and each
  // one's encodings; texts bounded (4,096 of them, 4 Mi characters in all, started over when full;
  // a text longer than 16 Ki characters, say a run_sql, is not kept), objects weakly
  const constants = new WeakMap<Attributes, Encoded>();
  const constantByText = new Map<string, Attributes>();
  let constantChars = 0;
  const constantByObject = new WeakMap<object, Attributes>();
  const sink: Sink = {
    constants,
    statementJson: encodedOnce(valueJson),
    statementProto: encodedOnce(encodedString),
    push(span) {
      if (closed) return;
      if (held.length + encoder.count >= maxQueue) {
        dropped++;
        return;
      }
      // encoded together after this turn of the event loop: out of the request's path, in one
      // tight loop over the turn's spans, while they are still young (a span held for a whole batch
      // outlived scavenges at low rates: more instructions per request than encoding at once)
      if (held.push(span) === 1) setImmediate(encodeSoon);
    },
  };

  // span and trace ids: cut from slabs of random bytes; a slab is never rewritten (spans keep
  // offsets into it), a full one is replaced and collected with the last span that uses it
  const SLAB = 16 * 1024;
  let slab = new IdBytes(Buffer.allocUnsafeSlow(0));
  let slabAt = 0;
  /** the offset in `slab` of `n` fresh random bytes (never all zeros: an invalid id) */
  const take = (n: 8 | 16): number => {
    for (;;) {
      if (slabAt + n > slab.bytes.length) {
        slab = new IdBytes(randomFillSync(Buffer.allocUnsafeSlow(SLAB)));
        slabAt = 0;
      }
      const at = slabAt;
      slabAt += n;
      const w = slab.words;
      const i = at >>> 2;
      if (w[i] !== 0 || w[i + 1] !== 0) return at;
      if (n === 16 && (w[i + 2] !== 0 || w[i + 3] !== 0)) return at;
    }
  };

  const sqlComment = config.tracingSqlComment;
  const commentMinMs = config.tracingSqlCommentMinMs;
  // `auto`: how long each prepared statement takes (ms, by name): a floor that a faster run lowers
  // at once and slower runs raise a tenth of the way each, so that the queueing and event-loop
  // delays of a busy server do not tip fast statements into being commented (and so re-planned,
  // which would make it busier), while one that has turned slow is commented from its next run or
  // so; bounded, started over when full
  const took = new Map<string, number>();
  const ctxOf = (s: Span | undefined): Ctx | undefined => (s === undefined ? undefined : s instanceof Recorded || s instanceof Quiet ? s.ctx : undefined);

  const impl: Tracing = {
    start(name, attrs, opts) {
      // a child of a span that records nothing records nothing either (every sampler here decides a
      // local child as its parent was decided: parent-based ones by the flag, the ratio one by the
      // trace id, the constant ones alike): the parent itself stands for it, its context propagated
      if (opts?.parent instanceof Quiet) return opts.parent;
      let parent = ctxOf(opts?.parent);
      let links: Link[] | undefined;
      if (parent === undefined && opts?.traceparent) {
        // the W3C propagator's extract without the Context it builds: its own parser (a valid
        // traceparent: version, non-zero ids, flags; version 00 with nothing after them) and, when
        // the traceparent is valid, its TraceState of the tracestate header
        const p = parseTraceParent(opts.traceparent);
        if (p) {
          const state = opts.tracestate ? new TraceState(opts.tracestate) : undefined;
          // the remote ids written into fresh bytes of the slab (as a new span's ids, never rewritten)
          const traceAt = take(16);
          const traceBytes = slab;
          traceBytes.bytes.write(p.traceId, traceAt, 'hex');
          const spanAt = take(8);
          slab.bytes.write(p.spanId, spanAt, 'hex');
          parent = new Ctx(traceBytes, traceAt, slab, spanAt, p.traceFlags, state?.serialize() || undefined, p.traceId, p.spanId);
          if (opts.kind === 'consumer')
            links = [{ context: { traceId: p.traceId, spanId: p.spanId, traceFlags: p.traceFlags, isRemote: true, traceState: state } }];
        }
      }
      const kind = KIND[opts?.kind ?? 'internal'];
      let ctx: Ctx;
      if (parent) {
        const at = take(8);
        ctx = new Ctx(parent.traceBytes, parent.traceAt, slab, at, 0, parent.tracestate, parent.knownTraceId);
      } else {
        const traceAt = take(16);
        const traceBytes = slab;
        const at = take(8);
        ctx = new Ctx(traceBytes, traceAt, slab, at, 0, undefined);
      }
      if (!sampled(parent, ctx)) return new Quiet(ctx);
      ctx.traceFlags = 1;
      return new Recorded(ctx, parent, name, kind, attrs, links, sink);
    },
    fail(span, code, message) {
      span.setAttribute('svc.error.code', code);
      span.recordException({ name: code, message });
      span.setStatus({ code: api.SpanStatusCode.ERROR, message });
    },
    inject(span, headers) {
      const c = ctxOf(span);
      if (!c) return;
      headers.traceparent = `00-${c.traceId}-${c.spanId}-0${c.traceFlags & 1}`;
      if (c.tracestate) headers.tracestate = c.tracestate;
    },
    traceparent(span) {
      const c = ctxOf(span);
      if (!c || !(c.traceFlags & 1)) return undefined;
      return `00-${c.traceId}-${c.spanId}-01`;
    },
    traceId(span) {
      return span.spanContext().traceId;
    },
    sqlComment(span, key) {
      if (sqlComment === 'never') return '';
      const c = ctxOf(span);
      if (!c || !(c.traceFlags & 1)) return '';
      if (sqlComment === 'auto' && key !== undefined) {
        const ms = took.get(key);
        if (ms !== undefined && ms < commentMinMs) return '';
      }
      return ` /*traceparent='00-${c.traceId}-${c.spanId}-01'*/`;
    },
    constant(key, make) {
      let a = typeof key === 'string' ? constantByText.get(key) : constantByObject.get(key);
      if (a === undefined) {
        a = make(key);
        if (typeof key === 'string') {
          if (key.length > 16 * 1024) return a; // encoded with its span, as any other
          if (constantByText.size >= 4096 || constantChars + key.length > 4 << 20) {
            constantByText.clear();
            constantChars = 0;
          }
          constantByText.set(key, a);
          constantChars += key.length;
        } else constantByObject.set(key, a);
        constants.set(a, {});
      }
      return a;
    },
    timesStatements: sqlComment === 'auto',
    statementTook(key, ms) {
      const before = took.get(key);
      if (before === undefined && took.size >= 10_000) took.clear();
      took.set(key, before === undefined || ms < before ? ms : before + (ms - before) * 0.1);
    },
    async flush() {
      drain(true);
      await Promise.all([...pending.keys()]);
      await delegate.forceFlush();
    },
    async shutdown(cut) {
      installTracing(null);
      drain(true);
      closed = true;
      const finished = (async () => {
        await Promise.all([...pending.keys()]);
        await delegate.shutdown();
        return true;
      })();
      let onCut!: () => void;
      const given = new Promise<boolean>((resolve) => (onCut = () => resolve(false)));
      if (cut?.aborted) onCut();
      else cut?.addEventListener('abort', onCut, { once: true });
      const done = await Promise.race([finished, given]);
      cut?.removeEventListener('abort', onCut);
      if (!done) {
        // the grace period is over: what is still being sent (or retried) is given up
        let unexported = 0;
        for (const n of pending.values()) unexported += n;
        stopped = true;
        delegate.stop();
        log.warn(
          { type: 'shutdown', detail: { kind: 'tracing', unexported_spans: unexported } },
          'spans not exported: the OTLP endpoint had not taken them when the shutdown grace period ended',
        );
      }
      warnFailed();
      if (dropped)
        log.warn({ type: 'startup', detail: { kind: 'tracing', dropped_spans: dropped } }, 'spans dropped: the OTLP endpoint was slower than the traffic');
    },
  };
  installTracing(impl);
  log.info(
    {
      type: 'startup',
      detail: {
        kind: 'tracing',
        otlp_traces_url: where.url ?? process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${process.env.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`,
        sql_comment: sqlComment,
        ...(sqlComment === 'auto' ? { sql_comment_min_ms: commentMinMs } : {}),
        sampler: samplerName,
      },
    },
    'OpenTelemetry traces exported over OTLP/HTTP',
  );
  return impl;
}
