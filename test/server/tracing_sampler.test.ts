/**
 * The ratio samplers (OTEL_TRACES_SAMPLER=traceidratio / parentbased_traceidratio) decide on the
 * trace id's bytes (src/server/tracing.ts `ratioSampler`) instead of asking the SDK's
 * TraceIdRatioBasedSampler with the id's hex: the decisions must be the SDK's, id for id, and the
 * tracer must apply them as the SDK's samplers do (a root by its trace id; under
 * parentbased_traceidratio a child, local or remote, by its parent's flag; under traceidratio every
 * span by its trace id, whatever its parent says). A client's traceparent and tracestate are read
 * as the W3C propagator of @opentelemetry/core reads them (the tracer uses its parser without the
 * Context its extract builds). A real OTLP receiver takes the exports.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import { defaultConfig } from '../../src/config/config.js';
import type { Logger } from '../../src/core/logger.js';
import type { Tracing } from '../../src/core/tracing.js';
import { ratioSampler, startTracing } from '../../src/server/tracing.js';
import { decodeTraces, type OtlpSpan } from '../helpers/otlp.js';

const sdkSays = (ratio: number, traceId: string): boolean =>
  new TraceIdRatioBasedSampler(ratio).shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED;

describe('ratioSampler', () => {
  test("decides as the SDK's TraceIdRatioBasedSampler, id for id", () => {
    // random ids, and ids whose accumulated words sit at the edges of the bound
    const ids: Buffer[] = [];
    for (let i = 0; i < 20_000; i++) ids.push(randomBytes(16));
    for (const words of [
      [0, 0, 0, 1],
      [0xffffffff, 0, 0, 0],
      [0x19999999, 0, 0, 0], // floor(0.1 × 0xffffffff)
      [0x1999999a, 0, 0, 0],
      [0x7fffffff, 0, 0, 0], // floor(0.5 × 0xffffffff)
      [0x80000000, 0, 0, 0],
      [0xffffffff, 0xffffffff, 0xffffffff, 0],
    ]) {
      const b = Buffer.alloc(16);
      words.forEach((w, i) => b.writeUInt32BE(w, i * 4));
      ids.push(b);
    }
    for (const ratio of [0, 1e-9, 0.1, 0.25, 0.5, 0.999, 1, 1.5, -1, Number.NaN]) {
      const decide = ratioSampler(ratio);
      let yes = 0;
      for (const id of ids) {
        // at an offset, as the tracer's ids sit in slabs
        const slab = Buffer.concat([randomBytes(8), id]);
        const ours = decide(slab, 8);
        assert.equal(ours, sdkSays(ratio, id.toString('hex')), `ratio ${ratio}, trace id ${id.toString('hex')}`);
        if (ours) yes++;
      }
      if (ratio === 0.25) assert.ok(yes > 4_500 && yes < 5_500, `about a quarter sampled (${yes} of ${ids.length})`);
    }
  });
});

describe('the tracer under the ratio samplers', () => {
  const received: OtlpSpan[] = [];
  const receiver: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      for (const rs of decodeTraces(req.headers['content-type'], Buffer.concat(parts)).resourceSpans)
        for (const ss of rs.scopeSpans) received.push(...ss.spans);
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end();
    });
  });
  const warnings: string[] = [];
  const log: Logger = { debug() {}, info() {}, warn: (_o, msg) => void warnings.push(String(msg)), error() {} };
  const saved: Record<string, string | undefined> = {};
  const setEnv = (k: string, v: string | undefined) => {
    if (!(k in saved)) saved[k] = process.env[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  };
  let url = '';

  before(async () => {
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    setEnv('OTEL_BSP_SCHEDULE_DELAY', '600000');
  });
  after(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    receiver.close();
  });

  async function withSampler(name: string, arg: string, body: (t: Tracing) => void | Promise<void>): Promise<void> {
    setEnv('OTEL_TRACES_SAMPLER', name);
    setEnv('OTEL_TRACES_SAMPLER_ARG', arg);
    const t = await startTracing({ ...defaultConfig(), otlpEndpoint: url }, log);
    assert.ok(t, 'tracing starts');
    try {
      await body(t);
    } finally {
      await t.shutdown();
    }
  }
  const isSampled = (t: Tracing, span: ReturnType<Tracing['start']>) => (span.spanContext().traceFlags & 1) === 1;
  const hex = (n: number) => randomBytes(n).toString('hex');

  test('parentbased_traceidratio: a root by its trace id (the SDK decision), a child, local or remote, by its parent', async () => {
    await withSampler('parentbased_traceidratio', '0.3', (t) => {
      let sampledRoots = 0;
      for (let i = 0; i < 2_000; i++) {
        const root = t.start('root');
        const yes = isSampled(t, root);
        assert.equal(yes, sdkSays(0.3, root.spanContext().traceId), 'the SDK decision for its trace id');
        assert.equal(root.isRecording(), yes);
        const child = t.start('child', undefined, { parent: root });
        assert.equal(isSampled(t, child), yes, 'a local child follows its parent');
        assert.equal(child.spanContext().traceId, root.spanContext().traceId);
        child.end();
        root.end();
        if (yes) sampledRoots++;
      }
      assert.ok(sampledRoots > 450 && sampledRoots < 750, `about 30 % of the roots (${sampledRoots})`);
      // a remote parent's flag decides, whatever the ratio would say of its trace id
      for (let i = 0; i < 200; i++) {
        const trace = hex(16);
        for (const flag of ['01', '00']) {
          const s = t.start('remote child', undefined, { traceparent: `00-${trace}-${hex(8)}-${flag}` });
          assert.equal(s.spanContext().traceId, trace);
          assert.equal(isSampled(t, s), flag === '01', `the remote parent's flag ${flag}`);
          s.end();
        }
      }
    });
  });

  test('traceidratio: every span by its trace id, whatever its parent says', async () => {
    await withSampler('traceidratio', '0.5', (t) => {
      for (let i = 0; i < 400; i++) {
        const trace = hex(16);
        const want = sdkSays(0.5, trace);
        for (const flag of ['01', '00']) {
          const s = t.start('remote child', undefined, { traceparent: `00-${trace}-${hex(8)}-${flag}` });
          assert.equal(isSampled(t, s), want, `trace ${trace}, parent flag ${flag}: the ratio decides`);
          s.end();
        }
        const root = t.start('root');
        assert.equal(isSampled(t, root), sdkSays(0.5, root.spanContext().traceId));
        root.end();
      }
    });
  });

  test('a sampler name the SDK does not know: parentbased_always_on, with a warning', async () => {
    warnings.length = 0;
    await withSampler('always_sometimes', '', (t) => {
      assert.deepEqual(warnings, ['OTEL_TRACES_SAMPLER not recognised: parentbased_always_on']);
      const root = t.start('root');
      assert.ok(isSampled(t, root), 'a root is sampled');
      root.end();
      const child = t.start('remote child', undefined, { traceparent: `00-${hex(16)}-${hex(8)}-00` });
      assert.equal(isSampled(t, child), false, "a child follows its remote parent's flag");
      child.end();
    });
  });

  test("a client's traceparent and tracestate are read as the W3C propagator reads them", async () => {
    const propagator = new W3CTraceContextPropagator();
    const getter = { keys: (c: Record<string, string>) => Object.keys(c), get: (c: Record<string, string>, k: string) => c[k] };
    const t0 = '4bf92f3577b34da6a3ce929d0e0e4736';
    const p0 = '00f067aa0ba902b7';
    const cases: Array<[string, string | undefined]> = [
      [`00-${t0}-${p0}-01`, undefined],
      [`00-${t0}-${p0}-00`, 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7'],
      [`00-${t0}-${p0}-03`, 'a=1,,b=2'],
      [`00-${t0}-${p0}-01`, 'not a valid=list'],
      [` 00-${t0}-${p0}-01 `, undefined],
      [`01-${t0}-${p0}-01-future-part`, undefined],
      [`00-${t0}-${p0}-01-extra`, undefined],
      [`ff-${t0}-${p0}-01`, undefined],
      [`00-${'0'.repeat(32)}-${p0}-01`, undefined],
      [`00-${t0}-${'0'.repeat(16)}-01`, undefined],
      [`00-${t0.toUpperCase()}-${p0}-01`, undefined],
      [`00-${t0}-${p0}`, undefined],
      ['garbage', 'k=v'],
      ['', undefined],
    ];
    await withSampler('parentbased_always_on', '', async (t) => {
      received.length = 0;
      cases.forEach(([traceparent, tracestate], i) => {
        const carrier: Record<string, string> = { traceparent };
        if (tracestate !== undefined) carrier.tracestate = tracestate;
        const sc = trace.getSpanContext(propagator.extract(ROOT_CONTEXT, carrier, getter));
        const span = t.start(`case ${i}`, undefined, { kind: 'server', traceparent, tracestate });
        const ctx = span.spanContext();
        const headers: Record<string, string> = {};
        t.inject(span, headers);
        if (sc) {
          assert.equal(ctx.traceId, sc.traceId, `case ${i}: the client's trace`);
          assert.equal(isSampled(t, span), (sc.traceFlags & 1) === 1, `case ${i}: the client's sampled flag`);
          assert.equal(headers.tracestate, sc.traceState?.serialize() || undefined, `case ${i}: the tracestate as the propagator's TraceState serialises it`);
        } else {
          assert.notEqual(ctx.traceId, t0, `case ${i}: not a valid traceparent: a new trace`);
          assert.ok(isSampled(t, span), `case ${i}: a new root, sampled`);
          assert.equal(headers.tracestate, undefined, `case ${i}: no tracestate without a valid traceparent`);
        }
        span.end();
        // a consumer span (an event delivery) is linked to the stored traceparent's span as well
        const consumer = t.start(`consumer ${i}`, undefined, { kind: 'consumer', traceparent, tracestate });
        consumer.end();
      });
      await t.flush();
      cases.forEach(([traceparent, tracestate], i) => {
        const carrier: Record<string, string> = { traceparent };
        if (tracestate !== undefined) carrier.tracestate = tracestate;
        const sc = trace.getSpanContext(propagator.extract(ROOT_CONTEXT, carrier, getter));
        const server = received.find((x) => x.name === `case ${i}`);
        const consumer = received.find((x) => x.name === `consumer ${i}`);
        if (sc && (sc.traceFlags & 1) === 0) {
          assert.equal(server, undefined, `case ${i}: unsampled, not exported`);
          return;
        }
        assert.ok(server && consumer, `case ${i}: exported`);
        assert.equal(server.parentSpanId, sc?.spanId, `case ${i}: the parent is the client's span (none without a valid traceparent)`);
        assert.equal(server.traceState, sc?.traceState?.serialize() || undefined, `case ${i}: traceState`);
        if (sc) {
          assert.deepEqual(
            consumer.links?.map((l) => [l.traceId, l.spanId, l.traceState]),
            [[sc.traceId, sc.spanId, sc.traceState?.serialize() || undefined]],
            `case ${i}: the consumer span's link`,
          );
        } else assert.equal(consumer.links, undefined, `case ${i}: no link without a valid traceparent`);
      });
    });
  });
});
