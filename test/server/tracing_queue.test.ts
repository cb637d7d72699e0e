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
    let refused = false;
    for (const rs of decodeTraces(req.headers['content-type'], Buffer.concat(parts)).resourceSpans)
      for (const ss of rs.scopeSpans) {
        received.push(...ss.spans);
        refused ||= ss.spans.some((s) => s.name.startsWith('refused.'));
      }
    for (let i = waiters.length - 1; i >= 0; i--) if (waiters[i]!()) waiters.splice(i, 1);
    // a batch with a span named refused.* is answered 400 (the exporter does not retry it)
    res.writeHead(refused ? 400 : 200, { 'content-type': 'application/x-protobuf' });
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
  await arrived('full.', 4);
  assert.deepEqual(names('full.'), ended);
  const attrs = received.find((s) => s.name === 'full.3')?.attributes;
  assert.deepEqual(attrs, [{ key: 'svc.i', value: { intValue: '3' } }]);
});

test('spans ended in the turn of a flush are exported by it', async () => {
  const before = posts;
  t.start('flushed.0').end();
  t.start('flushed.1').end();
  await t.flush();
  assert.deepEqual(names('flushed.'), ['flushed.0', 'flushed.1']);
  assert.equal(posts - before, 1);
});

test('the bound counts the batch being written: 3 spans in one turn, 5 in the next, 2 of them dropped', async () => {
  t.start('turns.0').end();
  t.start('turns.1').end();
  t.start('turns.2').end();
  // the next turn: the 3 are in the batch being written (below 4: not sent)
  await new Promise((r) => setImmediate(r));
  for (let i = 3; i < 8; i++) t.start(`turns.${i}`).end();
  // 3 written + 3 held = 6: turns.6 and turns.7 dropped; after the turn a batch of 4 goes out
  await arrived('turns.', 4);
  await t.flush();
  assert.deepEqual(names('turns.'), ['turns.0', 'turns.1', 'turns.2', 'turns.3', 'turns.4', 'turns.5']);
});

test('spans of an export the endpoint refuses are warned about at once, later ones at most once a minute (the rest at shutdown)', async () => {
  const failedWarnings = () => warnings.filter((w) => JSON.stringify(w).includes('failed_spans'));
  t.start('refused.0').end();
  t.start('refused.1').end();
  await t.flush();
  assert.equal(failedWarnings().length, 1, JSON.stringify(warnings));
  assert.match(JSON.stringify(failedWarnings()[0]), /"failed_spans":2,"error":"Bad Request"/);
  t.start('refused.2').end();
  t.start('refused.3').end();
  t.start('refused.4').end();
  await t.flush();
  assert.equal(failedWarnings().length, 1, 'not again within the minute');
});

test('spans past OTEL_BSP_MAX_QUEUE_SIZE in one turn are dropped (counted at shutdown, with the 2 above); the rest are exported', async () => {
  const before = posts;
  for (let i = 0; i < 9; i++) t.start(`bound.${i}`).end();
  // 6 held (the bound), 3 dropped; after the turn a batch of 4 goes out, 2 wait for the next
  await arrived('bound.', 4);
  await t.flush();
  assert.deepEqual(names('bound.'), ['bound.0', 'bound.1', 'bound.2', 'bound.3', 'bound.4', 'bound.5']);
  assert.equal(posts - before, 2, 'two requests: the full batch, then the flushed rest');
  await t.shutdown();
  assert.ok(
    warnings.some((w) => JSON.stringify(w).includes('"dropped_spans":5')),
    `the 5 dropped spans (2 and 3) are reported: ${JSON.stringify(warnings)}`,
  );
  assert.ok(
    warnings.some((w) => JSON.stringify(w).includes('"failed_spans":3,"error":"Bad Request"')),
    `the 3 refused spans not warned about yet are reported: ${JSON.stringify(warnings)}`,
  );
});
