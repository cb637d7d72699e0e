/**
 * The OTLP payloads of the exporter (src/server/tracing.ts, src/server/otlpProto.ts): protobuf by
 * default, JSON on request, the same content in both. The test's protobuf decoder
 * (test/helpers/otlp.ts) is first checked against @opentelemetry/otlp-transformer's own protobuf
 * and JSON serializers on spans of the SDK; then a batch of Svc's spans with every kind of field
 * (tracestate, parent, typed and array attributes, attributes set later, an exception event,
 * links with attributes, an error status, a statement text) is encoded both ways and compared;
 * the 64-bit writers against BigInt arithmetic.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { TraceState } from '@opentelemetry/core';
import { Ctx, jsonBatches, jsonEncoder, otlpProtocol, protoBatches, protoEncoder, Recorded, type Sink } from '../../src/server/tracing.js';
import { ProtoWriter, encodedString } from '../../src/server/otlpProto.js';
import { decodeJson, decodeProtobuf } from '../helpers/otlp.js';

describe('the test decoder agrees with the OpenTelemetry packages', () => {
  test("the SDK's spans through otlp-transformer's protobuf and JSON serializers decode alike", () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const tracer = provider.getTracer('scope', '1.2.3');
    const parent = tracer.startSpan('parent', { kind: 1, attributes: { s: 'é ☃', i: -5, big: 2 ** 40, b: true, d: 1.5, arr: ['x', 'y'], nums: [1, 2] } });
    parent.addEvent('ev', { k: 1 });
    parent.setStatus({ code: 2, message: 'bad' });
    parent.end();
    const child = tracer.startSpan('child', {
      kind: 3,
      links: [{ context: parent.spanContext(), attributes: { why: 'because' } }],
      attributes: { long: 'x'.repeat(300) },
    });
    child.end();
    const spans = exporter.getFinishedSpans();
    const proto = decodeProtobuf(Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!));
    const json = decodeJson(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans)!));
    assert.deepEqual(proto, json);
    const got = proto.resourceSpans[0]!.scopeSpans[0]!.spans;
    assert.equal(got.length, 2);
    assert.deepEqual(got[0]!.attributes!.find((a) => a.key === 'i')!.value, { intValue: '-5' });
    assert.equal(got[1]!.links![0]!.spanId, parent.spanContext().spanId);
  });
});

const sink: Sink = {
  push: () => undefined,
  statementJson: (t) => JSON.stringify({ stringValue: t }),
  statementProto: encodedString,
  constants: new WeakMap(),
};
/** `attrs` as a constant of the test's sink (what Tracing.constant does for the objects it makes) */
const constantAttributes = <T extends Record<string, unknown>>(attrs: T): T => {
  sink.constants.set(attrs as never, {});
  return attrs;
};

function svcSpans(): Recorded[] {
  const root = new Recorded(
    Ctx.fromHex('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', 1, 'vendor=a,other=b'),
    undefined,
    'POST /v1/graphql',
    2,
    { 'svc.role': 'user', n: 3, neg: -1234567890123, ratio: 0.25, flag: false, list: ['a', 'b'], nothing: undefined },
    undefined,
    sink,
  );
  root.setAttribute('svc.role', 'admin'); // the later value wins
  root.setAttribute('http.response.status_code', 200);
  root.recordException({ name: 'validation-failed', message: 'field "x" not found ✗', stack: 'at here' });
  root.setStatus({ code: 2, message: 'field "x" not found ✗' });
  const sql = new Recorded(
    Ctx.fromHex('4bf92f3577b34da6a3ce929d0e0e4736', 'b7ad6b7169203331', 1, undefined),
    root.ctx,
    'svc.sql',
    3,
    { 'db.system': 'postgresql', 'db.statement': `SELECT ${'"x", '.repeat(100)}1 WHERE id = $1`, 'db.response.returned_rows': 1 },
    [
      {
        context: { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b9c7c989f97918e1', traceFlags: 1, traceState: new TraceState('k=v') },
        attributes: { why: 'event' },
      },
    ],
    sink,
  );
  sql.addEvent('no attributes');
  const long = new Recorded(
    Ctx.fromHex('0af7651916cd43dd8448eb211c80319c', '53995c3f42cd8ad8', 1, undefined),
    undefined,
    'n'.repeat(20_000),
    1,
    undefined,
    undefined,
    sink,
  );
  for (const s of [sql, root, long]) s.end();
  return [sql, root, long];
}

describe("Svc's spans", () => {
  test('protobuf and JSON carry the same content, field by field', () => {
    const resource = { 'service.name': 'svc', 'service.version': '9.9.9', pid: 42 };
    const batch = svcSpans();
    const proto = decodeProtobuf(protoBatches(resource)(batch));
    const json = decodeJson(jsonBatches(resource)(batch).toString('utf8'));
    assert.deepEqual(proto, json);
    const [sql, root, long] = proto.resourceSpans[0]!.scopeSpans[0]!.spans;
    assert.deepEqual(proto.resourceSpans[0]!.scopeSpans[0]!.scope, { name: 'svc', version: proto.resourceSpans[0]!.scopeSpans[0]!.scope!.version });
    assert.equal(root!.traceState, 'vendor=a,other=b');
    assert.equal(sql!.parentSpanId, '00f067aa0ba902b7');
    const attr = (k: string) => root!.attributes!.find((a) => a.key === k)?.value;
    assert.deepEqual(attr('svc.role'), { stringValue: 'admin' });
    assert.equal(root!.attributes!.filter((a) => a.key === 'svc.role').length, 1);
    assert.deepEqual(attr('neg'), { intValue: '-1234567890123' });
    assert.deepEqual(attr('ratio'), { doubleValue: 0.25 });
    assert.deepEqual(attr('flag'), { boolValue: false });
    assert.deepEqual(attr('list'), { arrayValue: { values: [{ stringValue: 'a' }, { stringValue: 'b' }] } });
    assert.equal(attr('nothing'), undefined);
    assert.deepEqual(root!.status, { code: 2, message: 'field "x" not found ✗' });
    assert.equal(root!.events![0]!.name, 'exception');
    assert.deepEqual(sql!.links, [
      {
        traceId: '0af7651916cd43dd8448eb211c80319c',
        spanId: 'b9c7c989f97918e1',
        traceState: 'k=v',
        attributes: [{ key: 'why', value: { stringValue: 'event' } }],
      },
    ]);
    assert.equal(long!.name.length, 20_000);
    assert.ok(BigInt(sql!.endTimeUnixNano) >= BigInt(sql!.startTimeUnixNano));
    assert.ok(Math.abs(Number(BigInt(root!.startTimeUnixNano) / 1_000_000n) - Date.now()) < 60_000);
  });

  test('a batch of 512 spans: the statement text encoded once is the same every time; the payload is smaller than the JSON one', () => {
    const batch = Array.from({ length: 256 }, () => svcSpans().slice(0, 2)).flat(); // the request and statement spans
    const proto = protoBatches({ 'service.name': 'svc' })(batch);
    const json = jsonBatches({ 'service.name': 'svc' })(batch);
    assert.deepEqual(decodeProtobuf(proto), decodeJson(json.toString('utf8')));
    assert.ok(proto.length < json.length * 0.8, `${proto.length} vs ${json.length}`);
  });
});

describe('constant attributes (encoded once per object, copied into each span)', () => {
  const ctx = (span: string) => Ctx.fromHex('4bf92f3577b34da6a3ce929d0e0e4736', span, 1, undefined);
  const statement = `SELECT ${'"x", '.repeat(60)}1 WHERE id = $1`;
  /** the same spans, with the attributes given as fresh literals or as one kept constant */
  const spans = (attrs: () => Record<string, string | number | boolean>, later: (s: Recorded) => void, viaSet: boolean): Recorded[] =>
    ['1111111111111111', '2222222222222222', '3333333333333333'].map((id) => {
      const s = new Recorded(ctx(id), undefined, 'svc.sql', 3, viaSet ? undefined : attrs(), undefined, sink);
      if (viaSet) s.setAttributes(attrs());
      later(s);
      s.end();
      return s;
    });
  const both = (batch: Recorded[]) => {
    const proto = decodeProtobuf(protoBatches({ 'service.name': 'svc' })(batch));
    assert.deepEqual(proto, decodeJson(jsonBatches({ 'service.name': 'svc' })(batch).toString('utf8')));
    return proto.resourceSpans[0]!.scopeSpans[0]!.spans.map((s) => s.attributes);
  };
  for (const viaSet of [false, true]) {
    test(`${viaSet ? 'given to setAttributes first' : 'given at the start'}: the same payload as fresh objects, a later value of one of its keys wins`, () => {
      const literal = () => ({ 'db.system': 'postgresql', 'db.operation': 'SELECT', 'db.statement': statement, big: 2 ** 40, ok: true });
      const kept = constantAttributes(literal());
      const later = (s: Recorded) => s.setAttribute('db.response.returned_rows', 1);
      assert.deepEqual(both(spans(() => kept, later, viaSet)), both(spans(literal, later, viaSet)));
      const got = both(spans(() => kept, later, viaSet))[0]!;
      assert.deepEqual(
        got!.map((a) => a.key),
        ['db.system', 'db.operation', 'db.statement', 'big', 'ok', 'db.response.returned_rows'],
      );
      // a later value of one of the constant's keys: that key once, with the later value
      const override = (s: Recorded) => s.setAttribute('db.operation', 'WITH');
      const overridden = both(spans(() => kept, override, viaSet));
      assert.deepEqual(overridden, both(spans(literal, override, viaSet)));
      assert.deepEqual(
        overridden[0]!.filter((a) => a.key === 'db.operation'),
        [{ key: 'db.operation', value: { stringValue: 'WITH' } }],
      );
      // the constant itself is untouched, and still encoded as it was
      assert.equal(kept['db.operation'], 'SELECT');
      assert.deepEqual(both(spans(() => kept, later, viaSet)), both(spans(literal, later, viaSet)));
    });
  }
  test('setAttributes with a constant after other attributes: its keys are set one by one (later values win)', () => {
    const kept = constantAttributes({ a: 'one', b: 'two' });
    const s = new Recorded(ctx('4444444444444444'), undefined, 'x', 1, undefined, undefined, sink);
    s.setAttribute('b', 'first');
    s.setAttributes(kept);
    s.setAttribute('a', 'last');
    s.end();
    assert.deepEqual(both([s])[0], [
      { key: 'b', value: { stringValue: 'two' } },
      { key: 'a', value: { stringValue: 'last' } },
    ]);
  });
});

describe('a batch being written', () => {
  test('a span that cannot be encoded leaves the batch as it was: the spans around it arrive', () => {
    const enc = protoEncoder({ 'service.name': 'svc' });
    const [sql, root] = svcSpans();
    const bad = new Recorded(
      Ctx.fromHex('4bf92f3577b34da6a3ce929d0e0e4736', '1111111111111111', 1, undefined),
      undefined,
      'bad',
      1,
      // an attribute value whose text cannot be made
      { 'x.bad': { toString: () => assert.fail('no text') } as unknown as string },
      undefined,
      sink,
    );
    bad.end();
    enc.add(sql!);
    assert.throws(() => enc.add(bad));
    enc.add(root!);
    assert.equal(enc.count, 2);
    const got = decodeProtobuf(enc.take()).resourceSpans[0]!.scopeSpans[0]!.spans;
    assert.deepEqual(
      got.map((x) => x.name),
      ['svc.sql', 'POST /v1/graphql'],
    );
    // and the encoder starts a new batch
    assert.equal(enc.count, 0);
  });

  for (const [name, make] of [
    ['protobuf', () => protoEncoder({ 'service.name': 'svc' })],
    ['JSON', () => jsonEncoder({ 'service.name': 'svc' })],
  ] as const) {
    test(`${name}: a take whose next batch's Buffer cannot be allocated throws and leaves the batch whole`, () => {
      const enc = make();
      const [sql, root] = svcSpans();
      enc.add(sql!);
      enc.add(root!);
      const real = Buffer.allocUnsafeSlow;
      Buffer.allocUnsafeSlow = () => {
        throw new RangeError('Array buffer allocation failed');
      };
      try {
        assert.throws(() => enc.take(), /allocation failed/);
      } finally {
        Buffer.allocUnsafeSlow = real;
      }
      assert.equal(enc.count, 2);
      const payload = enc.take();
      const got = (name === 'JSON' ? decodeJson(payload.toString('utf8')) : decodeProtobuf(payload)).resourceSpans[0]!.scopeSpans[0]!.spans;
      assert.deepEqual(
        got.map((x) => x.name),
        ['svc.sql', 'POST /v1/graphql'],
      );
      assert.equal(enc.count, 0);
    });
  }
});

describe('the writers', () => {
  test('fixed64 nanoseconds and negative int64s, against BigInt arithmetic', () => {
    const w = new ProtoWriter(16);
    const cases = [0, 0.5, 1, 1795765429119.478452, 1795765429119.9999999, 4102444800000.000001, 2 ** 41 + 0.123456, Date.now() + 0.999999];
    for (const ms of cases) {
      w.pos = 0;
      w.nanos(ms);
      const whole = Math.floor(ms);
      const frac = Math.round((ms - whole) * 1e6);
      assert.equal(w.buf.readBigUInt64LE(0), BigInt(whole) * 1_000_000n + BigInt(frac), String(ms));
    }
    for (const v of [-1, -2, -127, -128, -(2 ** 31), -(2 ** 32), -(2 ** 32) - 1, -(2 ** 53) + 1, 0, 1, 127, 128, 2 ** 53 - 1]) {
      w.pos = 0;
      w.int64(v);
      let got = 0n;
      for (let i = 0; i < w.pos; i++) got |= BigInt(w.buf[i]! & 0x7f) << BigInt(7 * i);
      assert.equal(BigInt.asIntN(64, got), BigInt(v), String(v));
      assert.equal(w.pos, v < 0 ? 10 : Math.max(1, Math.ceil(Math.log2(v + 1) / 7)), `length of ${v}`);
    }
  });

  test('OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL: protobuf by default, JSON on request, the traces variable first', () => {
    assert.equal(otlpProtocol({}), 'http/protobuf');
    assert.equal(otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), 'http/json');
    assert.equal(otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }), 'http/protobuf');
    assert.equal(otlpProtocol({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: ' HTTP/JSON ' }), 'http/json');
    const warned: string[] = [];
    const log = { warn: (_o: unknown, m: string) => void warned.push(m) } as any;
    assert.equal(otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, log), 'http/protobuf');
    assert.match(warned[0]!, /grpc is not supported/);
  });
});
