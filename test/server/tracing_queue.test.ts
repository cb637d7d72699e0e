// The span queue of the tracer (src/server/tracing.ts, issue 35): spans ended during a turn of the
// event loop are encoded after it (out of the request's path) into the batch being written; a full
// batch goes to the exporter without waiting for the schedule delay; OTEL_BSP_MAX_QUEUE_SIZE bounds
// the spans waiting (held, in the batch being written) and the rest are dropped and counted.
// A real OTLP/HTTP receiver on 127.0.0.1 decodes what the exporter thread sends.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { defaultConfig } from '../../src/config/config.js';
import type { Logger } from '../../src/core/logger.js';
import type { Tracing } from '../../src/core/tracing.js';
import { startTracing } from '../../src/server/tracing.js';
import { decodeTraces, type OtlpSpan } from '../helpers/otlp.js';

const received: OtlpSpan[] = [];
let posts = 0;
/** waiters for spans (by name prefix), settled as requests arrive */
const waiters: Array<() => boolean> = [];
/** resolves once `n` spans named `prefix…` have arrived (rejects after 10 s) */
function arrived(prefix: string, n: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${n} spans ${prefix}* did not arrive (${names(prefix).length})`)), 10_000);
    const check = () => {
      if (names(prefix).length < n) return false;
      clearTimeout(timer);
      resolve();
      return true;
    };
    if (!check()) waiters.push(check);
  });
}
const receiver: Server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (d: Buffer) => parts.push(d));
  req.on('end', () => {
    posts++;
    for (const rs of decodeTraces(req.headers['content-type'], Buffer.concat(parts)).resourceSpans) for (const ss of rs.scopeSpans) received.push(...ss.spans);
    for (let i = waiters.length - 1; i >= 0; i--) if (waiters[i]!()) waiters.splice(i, 1);
    res.writeHead(200, { 'content-type': 'application/x-protobuf' });
    res.end();
  });
});

const warnings: object[] = [];
const log: Logger = { debug() {}, info() {}, warn: (o) => void warnings.push(o), error() {} };
let t: Tracing;

before(async () => {
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const port = (receiver.address() as AddressInfo).port;
  // batches of 4, at most 6 spans waiting, and a schedule delay no test waits for
  process.env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE = '4';
  process.env.OTEL_BSP_MAX_QUEUE_SIZE = '6';
  process.env.OTEL_BSP_SCHEDULE_DELAY = '600000';
  const started = await startTracing({ ...defaultConfig(), otlpEndpoint: `http://127.0.0.1:${port}` }, log);
  assert.ok(started, 'tracing starts');
  t = started;
});

after(async () => {
  await t?.shutdown();
  receiver.close();
});

const names = (prefix: string) =>
  received
    .filter((s) => s.name.startsWith(prefix))
    .map((s) => s.name)
    .sort();

test('a full batch is exported after the turn that ended its spans, without a flush or the schedule delay', async () => {
  const ended: string[] = [];
  for (let i = 0; i < 4; i++) {
    const s = t.start(`full.${i}`, { 'svc.i': i });
    s.end();
    ended.push(`full.${i}`);
  }
  // nothing leaves during the turn that ended them (encoded and sent afterwards)
  assert.equal(names('full.').length, 0);
  await arrived('full.', 4);
  assert.deepEqual(names('full.'), ended);
  const attrs = received.find((s) => s.name === 'full.3')?.attributes;
  assert.deepEqual(attrs, [{ key: 'svc.i', value: { intValue: '3' } }]);
});

test('spans past OTEL_BSP_MAX_QUEUE_SIZE in one turn are dropped (counted at shutdown); the rest are exported', async () => {
  const before = posts;
  for (let i = 0; i < 9; i++) t.start(`bound.${i}`).end();
  // 6 held (the bound), 3 dropped; after the turn a batch of 4 goes out, 2 wait for the next
  await arrived('bound.', 4);
  await t.flush();
  assert.deepEqual(names('bound.'), ['bound.0', 'bound.1', 'bound.2', 'bound.3', 'bound.4', 'bound.5']);
  assert.equal(posts - before, 2, 'two requests: the full batch, then the flushed rest');
  await t.shutdown();
  assert.ok(
    warnings.some((w) => JSON.stringify(w).includes('"dropped_spans":3')),
    `the 3 dropped spans are reported: ${JSON.stringify(warnings)}`,
  );
});
