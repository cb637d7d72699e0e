/**
 * The OTLP exporter's thread (src/server/otlpExportWorker.ts) against a real receiver on
 * 127.0.0.1: a batch arrives whole with its media type and the OTEL_EXPORTER_OTLP_HEADERS the
 * worker read, its memory transferred (not copied), `done` waits for the receiver's answer, a
 * Buffer of node's shared pool is sent as a copy (the pool stays usable), a refused export still
 * ends, and after shutdown an export ends at once without sending. Then the transport (undici's)
 * against receivers that answer as a test says: the headers it sends (Content-Type, User-Agent,
 * OTEL_EXPORTER_OTLP_HEADERS) on a kept-alive connection, a 503 with Retry-After retried, a 400
 * not, a receiver that never answers given up at OTEL_EXPORTER_OTLP_TIMEOUT, and gzip.
 */
import assert from 'node:assert/strict';
import { randomFillSync } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
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

/** what a receiver got: the request's headers, its body, its connection */
interface Request {
  headers: IncomingHttpHeaders;
  body: Buffer;
  socket: Socket;
  at: number;
}

describe("the OTLP exporter thread's transport (undici) against a receiver", () => {
  /** how the receiver answers the n-th request (from 1) of a test */
  let respond: (res: ServerResponse, n: number) => void = (res) => res.end();
  let requests: Request[] = [];
  const arrivals = new EventEmitter();
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ headers: req.headers, body: Buffer.concat(chunks), socket: req.socket, at: performance.now() });
      arrivals.emit('request');
      respond(res, requests.length);
    });
  });
  let url = '';
  /** the exporter package's version, as its User-Agent names it */
  const version = (
    JSON.parse(readFileSync(new URL('../../node_modules/@opentelemetry/otlp-exporter-base/package.json', import.meta.url), 'utf8')) as { version: string }
  ).version;

  before(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  });
  after(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });

  /** an exporter whose worker starts with these OTEL_* variables set (the worker copies process.env when it starts) */
  function exporter(env: Record<string, string>, errors: Error[]): WorkerExporter {
    requests = [];
    const saved = Object.keys(env).map((k) => [k, process.env[k]] as const);
    Object.assign(process.env, env);
    try {
      return new WorkerExporter(url, 'application/x-protobuf', (e) => errors.push(e));
    } finally {
      for (const [k, v] of saved) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  }
  /** a batch's payload (random bytes) and a copy to compare with: the payload is transferred */
  function batch(size: number): { payload: Buffer; bytes: Buffer } {
    const payload = randomFillSync(Buffer.allocUnsafeSlow(size));
    return { payload, bytes: Buffer.from(payload) };
  }
  /** exports a batch; resolves when `done` is called, counting the calls in `calls` */
  function send(ex: WorkerExporter, payload: Buffer, calls: { n: number; at: number }): Promise<void> {
    return new Promise((resolve) =>
      ex.export({ payload, count: 1 }, () => {
        calls.n++;
        calls.at = performance.now();
        resolve();
      }),
    );
  }
  /** resolves once the receiver has had n requests */
  async function arrived(n: number): Promise<void> {
    while (requests.length < n) await once(arrivals, 'request');
  }

  test(
    'a batch arrives whole with its Content-Type, the User-Agent and OTEL_EXPORTER_OTLP_HEADERS, on a kept-alive connection',
    { timeout: 10_000 },
    async () => {
      const errors: Error[] = [];
      const ex = exporter({ OTEL_EXPORTER_OTLP_HEADERS: 'x-test-auth=token%201,x-other=2' }, errors);
      respond = (res) => {
        res.writeHead(200, { 'content-type': 'application/x-protobuf' });
        res.end();
      };
      const calls = { n: 0, at: 0 };
      const first = batch(140_000);
      await send(ex, first.payload, calls);
      const second = batch(10);
      await send(ex, second.payload, calls);
      assert.equal(requests.length, 2);
      const [a, b] = requests as [Request, Request];
      assert.ok(a.body.equals(first.bytes), 'the body is the batch, byte for byte');
      assert.ok(b.body.equals(second.bytes));
      assert.equal(a.headers['content-type'], 'application/x-protobuf');
      assert.equal(a.headers['user-agent'], `OTel-OTLP-Exporter-JavaScript/${version}`);
      assert.equal(a.headers['x-test-auth'], 'token 1');
      assert.equal(a.headers['x-other'], '2');
      assert.equal(a.headers['content-encoding'], undefined);
      assert.equal(a.headers['content-length'], '140000');
      assert.equal(b.socket, a.socket, 'the second export reuses the connection');
      assert.equal(calls.n, 2);
      await ex.shutdown();
      assert.deepEqual(errors, []);
    },
  );

  test('a 503 with Retry-After: 1 is retried after a second; done once, after the retry is answered', { timeout: 10_000 }, async () => {
    const errors: Error[] = [];
    const ex = exporter({}, errors);
    let answeredAt = 0;
    respond = (res, n) => {
      if (n === 1) res.writeHead(503, { 'retry-after': '1' });
      else {
        res.writeHead(200);
        answeredAt = performance.now();
      }
      res.end();
    };
    const calls = { n: 0, at: 0 };
    const { payload, bytes } = batch(1000);
    await send(ex, payload, calls);
    assert.equal(requests.length, 2, 'sent twice');
    assert.ok(requests[0]!.body.equals(bytes) && requests[1]!.body.equals(bytes), 'the same batch both times');
    assert.ok(requests[1]!.at - requests[0]!.at >= 990, `Retry-After honoured (${Math.round(requests[1]!.at - requests[0]!.at)} ms)`);
    assert.ok(answeredAt > 0 && calls.at >= answeredAt, 'done after the retry was answered');
    await ex.forceFlush();
    assert.equal(calls.n, 1, 'done once');
    await ex.shutdown();
    assert.equal(requests.length, 2);
    assert.deepEqual(errors, []);
  });

  test('a 400 ends the export without a retry', { timeout: 10_000 }, async () => {
    const errors: Error[] = [];
    const ex = exporter({}, errors);
    respond = (res) => {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end('bad batch');
    };
    const calls = { n: 0, at: 0 };
    await send(ex, Buffer.from('refused'), calls);
    await ex.forceFlush();
    assert.equal(calls.n, 1);
    assert.equal(requests.length, 1, 'not retried');
    await ex.shutdown();
    assert.equal(requests.length, 1);
    assert.deepEqual(errors, []);
  });

  test('a receiver that never answers: done at OTEL_EXPORTER_OTLP_TIMEOUT, the connection dropped, then a clean shutdown', { timeout: 10_000 }, async () => {
    const errors: Error[] = [];
    const ex = exporter({ OTEL_EXPORTER_OTLP_TIMEOUT: '500' }, errors);
    respond = () => undefined; // never answered
    const calls = { n: 0, at: 0 };
    const t0 = performance.now();
    const sent = send(ex, Buffer.from('unanswered'), calls);
    await arrived(1);
    const dropped = once(requests[0]!.socket, 'close');
    await sent;
    const elapsed = calls.at - t0;
    assert.ok(elapsed >= 450 && elapsed < 3000, `done after the timeout (${Math.round(elapsed)} ms)`);
    await dropped; // the worker closed the connection it gave up on
    assert.equal(requests.length, 1, 'no retry: the backoff is past the deadline');
    await ex.shutdown();
    assert.equal(calls.n, 1);
    assert.deepEqual(errors, []);
  });

  test('OTEL_EXPORTER_OTLP_COMPRESSION=gzip: the body is gzipped, Content-Encoding says so', { timeout: 10_000 }, async () => {
    const errors: Error[] = [];
    const ex = exporter({ OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip' }, errors);
    respond = (res) => res.end();
    const calls = { n: 0, at: 0 };
    const { payload, bytes } = batch(140_000);
    await send(ex, payload, calls);
    assert.equal(requests.length, 1);
    const r = requests[0]!;
    assert.equal(r.headers['content-encoding'], 'gzip');
    assert.equal(r.headers['content-type'], 'application/x-protobuf');
    assert.ok(r.body.length < bytes.length + 1000);
    assert.ok(gunzipSync(r.body).equals(bytes), 'gunzipped, the same bytes');
    await ex.shutdown();
    assert.deepEqual(errors, []);
  });
});
