/**
 * An OTLP receiver's decoding, for tests: ExportTraceServiceRequest as protobuf (the wire format,
 * field by field from opentelemetry/proto collector/trace/v1, trace/v1, common/v1, resource/v1)
 * or JSON, both into the same plain shape (proto3's JSON mapping: hex ids, 64-bit integers as
 * decimal strings), with empty and zero fields left out so that the two encodings of one batch
 * compare equal. The decoder is itself checked against @opentelemetry/otlp-transformer's own
 * protobuf and JSON serializers (test/server/otlp.test.ts).
 */

export interface OtlpValue {
  stringValue?: string;
  intValue?: string;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values: OtlpValue[] };
}
export interface OtlpKeyValue {
  key: string;
  value: OtlpValue;
}
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  traceState?: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: OtlpKeyValue[];
  events?: Array<{ timeUnixNano: string; name: string; attributes?: OtlpKeyValue[] }>;
  links?: Array<{ traceId: string; spanId: string; traceState?: string; attributes?: OtlpKeyValue[] }>;
  status?: { code?: number; message?: string };
  flags?: number;
}
export interface OtlpRequest {
  resourceSpans: Array<{ resource?: { attributes?: OtlpKeyValue[] }; scopeSpans: Array<{ scope?: { name?: string; version?: string }; spans: OtlpSpan[] }> }>;
}

/** the protobuf wire format: (field, wire type, value) triples of one message */
type Field = { n: number; wire: number; v: bigint | Buffer };
function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (at >= buf.length) throw new Error('protobuf: truncated varint');
      const b = buf[at++]!;
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
      if (shift > 63n) throw new Error('protobuf: varint longer than 10 bytes');
    }
  };
  while (at < buf.length) {
    const key = Number(varint());
    const n = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ n, wire, v: varint() });
    else if (wire === 1) {
      out.push({ n, wire, v: buf.readBigUInt64LE(at) });
      at += 8;
    } else if (wire === 5) {
      out.push({ n, wire, v: BigInt(buf.readUInt32LE(at)) });
      at += 4;
    } else if (wire === 2) {
      const len = Number(varint());
      if (at + len > buf.length) throw new Error('protobuf: length past the end');
      out.push({ n, wire, v: buf.subarray(at, at + len) });
      at += len;
    } else throw new Error(`protobuf: wire type ${wire}`);
  }
  return out;
}
const str = (f: Field) => (f.v as Buffer).toString('utf8');
const hex = (f: Field) => (f.v as Buffer).toString('hex');
const int64 = (v: bigint): string => BigInt.asIntN(64, v).toString();

function anyValue(buf: Buffer): OtlpValue {
  const out: OtlpValue = {};
  for (const f of fields(buf)) {
    if (f.n === 1) out.stringValue = str(f);
    else if (f.n === 2) out.boolValue = f.v !== 0n;
    else if (f.n === 3) out.intValue = int64(f.v as bigint);
    else if (f.n === 4)
      out.doubleValue = Buffer.from(
        BigInt.asUintN(64, f.v as bigint)
          .toString(16)
          .padStart(16, '0'),
        'hex',
      ).readDoubleBE(0);
    else if (f.n === 5)
      out.arrayValue = {
        values: fields(f.v as Buffer)
          .filter((x) => x.n === 1)
          .map((x) => anyValue(x.v as Buffer)),
      };
  }
  return out;
}
function keyValues(fs: Field[], n: number): OtlpKeyValue[] | undefined {
  const kvs = fs.filter((f) => f.n === n);
  if (!kvs.length) return undefined;
  return kvs.map((f) => {
    const inner = fields(f.v as Buffer);
    const k = inner.find((x) => x.n === 1);
    const v = inner.find((x) => x.n === 2);
    return { key: k ? str(k) : '', value: v ? anyValue(v.v as Buffer) : {} };
  });
}

function span(buf: Buffer): OtlpSpan {
  const fs = fields(buf);
  const one = (n: number) => fs.find((f) => f.n === n);
  const s: OtlpSpan = {
    traceId: one(1) ? hex(one(1)!) : '',
    spanId: one(2) ? hex(one(2)!) : '',
    name: one(5) ? str(one(5)!) : '',
    kind: one(6) ? Number(one(6)!.v) : 0,
    startTimeUnixNano: one(7) ? String(one(7)!.v) : '0',
    endTimeUnixNano: one(8) ? String(one(8)!.v) : '0',
  };
  if (one(3) && str(one(3)!)) s.traceState = str(one(3)!);
  if (one(4) && (one(4)!.v as Buffer).length) s.parentSpanId = hex(one(4)!);
  const attributes = keyValues(fs, 9);
  if (attributes) s.attributes = attributes;
  const events = fs.filter((f) => f.n === 11);
  if (events.length)
    s.events = events.map((f) => {
      const e = fields(f.v as Buffer);
      const t = e.find((x) => x.n === 1);
      const nm = e.find((x) => x.n === 2);
      const a = keyValues(e, 3);
      return { timeUnixNano: t ? String(t.v) : '0', name: nm ? str(nm) : '', ...(a ? { attributes: a } : {}) };
    });
  const links = fs.filter((f) => f.n === 13);
  if (links.length)
    s.links = links.map((f) => {
      const l = fields(f.v as Buffer);
      const ts = l.find((x) => x.n === 3);
      const a = keyValues(l, 4);
      return {
        traceId: hex(l.find((x) => x.n === 1)!),
        spanId: hex(l.find((x) => x.n === 2)!),
        ...(ts && str(ts) ? { traceState: str(ts) } : {}),
        ...(a ? { attributes: a } : {}),
      };
    });
  const st = one(15);
  if (st) {
    const sf = fields(st.v as Buffer);
    const code = sf.find((x) => x.n === 3);
    const msg = sf.find((x) => x.n === 2);
    if ((code && code.v) || (msg && str(msg)))
      s.status = { ...(code && code.v ? { code: Number(code.v) } : {}), ...(msg && str(msg) ? { message: str(msg) } : {}) };
  }
  if (one(16) && one(16)!.v) s.flags = Number(one(16)!.v);
  return s;
}

/** ExportTraceServiceRequest from its protobuf bytes */
export function decodeProtobuf(buf: Buffer): OtlpRequest {
  return {
    resourceSpans: fields(buf)
      .filter((f) => f.n === 1)
      .map((f) => {
        const rs = fields(f.v as Buffer);
        const res = rs.find((x) => x.n === 1);
        const resAttrs = res ? keyValues(fields(res.v as Buffer), 1) : undefined;
        return {
          ...(res ? { resource: resAttrs ? { attributes: resAttrs } : {} } : {}),
          scopeSpans: rs
            .filter((x) => x.n === 2)
            .map((x) => {
              const ss = fields(x.v as Buffer);
              const sc = ss.find((y) => y.n === 1);
              const scope: { name?: string; version?: string } = {};
              if (sc)
                for (const y of fields(sc.v as Buffer)) {
                  if (y.n === 1) scope.name = str(y);
                  if (y.n === 2) scope.version = str(y);
                }
              return { ...(sc ? { scope } : {}), spans: ss.filter((y) => y.n === 2).map((y) => span(y.v as Buffer)) };
            }),
        };
      }),
  };
}

/** ExportTraceServiceRequest from its JSON text, in the same shape as decodeProtobuf's (empty and zero fields left out, int64s as strings) */
export function decodeJson(text: string): OtlpRequest {
  const value = (v: any): OtlpValue => {
    if (v.stringValue !== undefined) return { stringValue: v.stringValue };
    if (v.boolValue !== undefined) return { boolValue: v.boolValue };
    if (v.intValue !== undefined) return { intValue: String(v.intValue) };
    if (v.doubleValue !== undefined) return { doubleValue: Number(v.doubleValue) };
    if (v.arrayValue !== undefined) return { arrayValue: { values: (v.arrayValue.values ?? []).map(value) } };
    return {};
  };
  const kvs = (a: any[] | undefined): OtlpKeyValue[] | undefined => (a?.length ? a.map((x) => ({ key: x.key, value: value(x.value ?? {}) })) : undefined);
  const opt = <T>(k: string, v: T | undefined) => (v === undefined || v === '' ? {} : { [k]: v });
  const body = JSON.parse(text);
  return {
    resourceSpans: (body.resourceSpans ?? []).map((rs: any) => ({
      ...(rs.resource ? { resource: kvs(rs.resource.attributes) ? { attributes: kvs(rs.resource.attributes) } : {} } : {}),
      scopeSpans: (rs.scopeSpans ?? []).map((ss: any) => ({
        ...(ss.scope ? { scope: { ...opt('name', ss.scope.name), ...opt('version', ss.scope.version) } } : {}),
        spans: (ss.spans ?? []).map((s: any): OtlpSpan => ({
          traceId: s.traceId,
          spanId: s.spanId,
          name: s.name ?? '',
          kind: s.kind ?? 0,
          startTimeUnixNano: String(s.startTimeUnixNano ?? '0'),
          endTimeUnixNano: String(s.endTimeUnixNano ?? '0'),
          ...opt('traceState', s.traceState),
          ...opt('parentSpanId', s.parentSpanId),
          ...opt('attributes', kvs(s.attributes)),
          ...opt(
            'events',
            s.events?.length
              ? s.events.map((e: any) => ({ timeUnixNano: String(e.timeUnixNano ?? '0'), name: e.name ?? '', ...opt('attributes', kvs(e.attributes)) }))
              : undefined,
          ),
          ...opt(
            'links',
            s.links?.length
              ? s.links.map((l: any) => ({ traceId: l.traceId, spanId: l.spanId, ...opt('traceState', l.traceState), ...opt('attributes', kvs(l.attributes)) }))
              : undefined,
          ),
          ...opt(
            'status',
            s.status && (s.status.code || s.status.message) ? { ...opt('code', s.status.code || undefined), ...opt('message', s.status.message) } : undefined,
          ),
          ...opt('flags', s.flags || undefined),
        })),
      })),
    })),
  };
}

/** a receiver's body by its content type */
export function decodeTraces(contentType: string | undefined, body: Buffer): OtlpRequest {
  return /protobuf/.test(String(contentType)) ? decodeProtobuf(body) : decodeJson(body.toString('utf8'));
}
