/**
 * The OTLP exporter's thread (src/server/otlpExportWorker.ts) against a real receiver on
 * 127.0.0.1: a batch arrives whole with its media type and the OTEL_EXPORTER_OTLP_HEADERS the
 * worker read, its memory transferred (not copied), `done` waits for the receiver's answer, a
 * Buffer of node's shared pool is sent as a copy (the pool stays usable), a refused export still
 * ends, and after shutdown an export ends at once without sending.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { WorkerExporter } from '../../src/server/otlpExportWorker.js';

interface Received {
  type: string | undefined;
  auth: string | undefined;
  body: Buffer;
}

describe('the OTLP exporter thread', () => {
  const received: Received[] = [];
  let status = 200;
  let answer: (() => void) | undefined;
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ type: req.headers['content-type'], auth: req.headers['x-test-auth'] as string | undefined, body: Buffer.concat(chunks) });
      const reply = () => {
        res.writeHead(status, { 'content-type': 'application/x-protobuf' });
        res.end();
      };
      if (answer) answer = reply;
      else reply();
    });
  });
  let url = '';
  let headersBefore: string | undefined;

  before(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
    headersBefore = process.env.OTEL_EXPORTER_OTLP_HEADERS;
    process.env.OTEL_EXPORTER_OTLP_HEADERS = 'x-test-auth=token%201';
  });
  after(async () => {
    if (headersBefore === undefined) delete process.env.OTEL_EXPORTER_OTLP_HEADERS;
    else process.env.OTEL_EXPORTER_OTLP_HEADERS = headersBefore;
    server.close();
    await once(server, 'close');
  });

  test('sends batches whole, waits for the answer, copies pooled Buffers, ends refused exports, drops after shutdown', async () => {
    const errors: Error[] = [];
    const ex = new WorkerExporter(url, 'application/x-protobuf', (e) => errors.push(e));

    // a dedicated Buffer (as the encoders make) is transferred: the caller's view is detached
    const big = Buffer.allocUnsafeSlow(100_000).fill(7);
    const payload = big.subarray(0, 70_000);
    let finished = false;
    answer = () => undefined; // hold the receiver's answer: done must wait for it
    const first = new Promise<void>((resolve) =>
      ex.export({ payload, count: 3 }, () => {
        finished = true;
        resolve();
      }),
    );
    assert.equal(payload.length, 0, 'the transferred Buffer is detached in the sender');
    while (received.length === 0) await new Promise((r) => setTimeout(r, 5));
    assert.equal(finished, false, 'done before the receiver answered');
    const reply = answer as unknown as () => void;
    answer = undefined;
    reply();
    await first;
    assert.equal(received[0]!.body.length, 70_000);
    assert.ok(received[0]!.body.every((b) => b === 7));
    assert.equal(received[0]!.type, 'application/x-protobuf');
    assert.equal(received[0]!.auth, 'token 1', 'OTEL_EXPORTER_OTLP_HEADERS as the exporter reads it');

    // a small Buffer of node's shared pool is sent as a copy (node marks the pool untransferable:
    // Node 20 clones it, later versions refuse it): the pool and its other Buffers stay usable
    const neighbour = Buffer.from('neighbour');
    const pooled = Buffer.from('pooled batch');
    assert.equal(pooled.buffer, neighbour.buffer, 'both from the pool');
    await new Promise<void>((resolve) => ex.export({ payload: pooled, count: 1 }, resolve));
    assert.equal(pooled.toString(), 'pooled batch');
    assert.equal(neighbour.toString(), 'neighbour');
    assert.equal(received[1]!.body.toString(), 'pooled batch');

    // a refused export (HTTP 400: not retried) still ends
    status = 400;
    await new Promise<void>((resolve) => ex.export({ payload: Buffer.from('refused'), count: 1 }, resolve));
    assert.equal(received.length, 3);
    status = 200;

    await ex.forceFlush();
    await ex.shutdown();
    const n = received.length;
    await new Promise<void>((resolve) => ex.export({ payload: Buffer.from('late'), count: 1 }, resolve));
    assert.equal(received.length, n, 'nothing is sent after shutdown');
    assert.deepEqual(errors, []);
  });
});
