/**
 * The OTLP exporter's thread (src/server/otlpExportWorker.ts) against a real receiver on
 * 127.0.0.1: a batch arrives whole with its media type and the OTEL_EXPORTER_OTLP_HEADERS the
 * worker read, its memory transferred (not copied), `done` waits for the receiver's answer, a
 * Buffer of node's shared pool is sent as a copy (the pool stays usable), a refused export still
 * ends, and after shutdown an export ends at once without sending. Then the transport (its own
 * HTTP/1.1 client) against receivers that answer as a test says: the headers it sends (Content-Type, User-Agent,
 * OTEL_EXPORTER_OTLP_HEADERS) on a kept-alive connection, a 503 with Retry-After retried, a 400
 * not, a receiver that never answers given up at OTEL_EXPORTER_OTLP_TIMEOUT, and gzip.
 */
import assert from 'node:assert/strict';
import { randomFillSync } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
    assert.equal(await new Promise((resolve) => ex.export({ payload: pooled, count: 1 }, resolve)), undefined, 'sent');
    assert.equal(pooled.toString(), 'pooled batch');
    assert.equal(neighbour.toString(), 'neighbour');
    assert.equal(received[1]!.body.toString(), 'pooled batch');

    // a refused export (HTTP 400: not retried) still ends, and says why
    status = 400;
    assert.equal(await new Promise((resolve) => ex.export({ payload: Buffer.from('refused'), count: 1 }, resolve)), 'Bad Request');
    assert.equal(received.length, 3);
    status = 200;

    await ex.forceFlush();
    await ex.shutdown();
    const n = received.length;
    assert.equal(await new Promise((resolve) => ex.export({ payload: Buffer.from('late'), count: 1 }, resolve)), 'the exporter thread is stopped');
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

describe("the OTLP exporter thread's transport against a receiver", () => {
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

/**
 * The transport (undici's dispatcher under the package's outcomes) against receivers that write raw
 * bytes: the ways a response can be delimited (and which leave the connection kept), a kept
 * connection the receiver closed, and the bounds and refusals (a malformed or oversized response
 * fails the export, never retried, at once where the bytes say so and at the export's timeout
 * where they only promise more; a header value that would split the request is never written);
 * https with OTEL_EXPORTER_OTLP_CERTIFICATE.
 */
describe("the OTLP exporter thread's transport against raw receivers", () => {
  interface Raw {
    head: string;
    body: Buffer;
    socket: Socket;
  }
  let reply: (socket: Socket, n: number, req: Raw) => void = () => undefined;
  let reqs: Raw[] = [];
  let sockets: Socket[] = [];
  const arrivals = new EventEmitter();
  const server = createNetServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    socket.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.toString('latin1', 0, end);
        const len = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + len) return;
        const req = { head, body: Buffer.from(buf.subarray(end + 4, end + 4 + len)), socket };
        buf = buf.subarray(end + 4 + len);
        reqs.push(req);
        arrivals.emit('request');
        reply(socket, reqs.length, req);
      }
    });
  });
  let port = 0;
  before(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    server.close();
    await once(server, 'close');
  });

  function exporter(env: Record<string, string>, url = `http://127.0.0.1:${port}/v1/traces`): WorkerExporter {
    reqs = [];
    sockets = [];
    const saved = Object.keys(env).map((k) => [k, process.env[k]] as const);
    Object.assign(process.env, { OTEL_EXPORTER_OTLP_TIMEOUT: '5000', ...env });
    try {
      return new WorkerExporter(url, 'application/x-protobuf', (e) => assert.fail(e));
    } finally {
      for (const [k, v] of [...saved, ['OTEL_EXPORTER_OTLP_TIMEOUT', undefined] as const]) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  }
  /** exports `text`; resolves with the outcome (undefined: sent) and how long it took */
  function send(ex: WorkerExporter, text: string): Promise<{ failed: string | undefined; ms: number }> {
    const t0 = performance.now();
    return new Promise((resolve) => ex.export({ payload: Buffer.from(text), count: 1 }, (failed) => resolve({ failed, ms: performance.now() - t0 })));
  }
  /** writes `bytes` one at a time, each in a write of its own */
  async function dribble(socket: Socket, bytes: string): Promise<void> {
    for (const b of Buffer.from(bytes, 'latin1')) {
      socket.write(Buffer.of(b));
      await new Promise((r) => setImmediate(r));
    }
  }

  test(
    'Content-Length, chunked (extensions, trailers) and 204, whole or byte by byte, all end the export sent, on one kept connection',
    { timeout: 10_000 },
    async () => {
      const ex = exporter({});
      const answers = [
        'HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 3\r\n\r\nabc',
        'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n0\r\nX-Trailer: t\r\n\r\n',
        'HTTP/1.1 204 No Content\r\n\r\n',
      ];
      reply = (socket, n) => {
        const a = answers[(n - 1) % answers.length]!;
        if (n > answers.length) void dribble(socket, a);
        else socket.write(a);
      };
      for (let i = 0; i < answers.length * 2; i++) {
        const r = await send(ex, `batch ${i}`);
        assert.equal(r.failed, undefined, `answer ${i + 1} ends the export sent`);
      }
      assert.equal(reqs.length, 6, 'none retried');
      assert.deepEqual(
        reqs.map((r) => r.body.toString()),
        Array.from({ length: 6 }, (_, i) => `batch ${i}`),
      );
      assert.equal(sockets.length, 1, 'every answer was delimited: the one connection was kept');
      const head = reqs[0]!.head;
      assert.match(head, /^POST \/v1\/traces HTTP\/1\.1\r\n/);
      assert.match(head, new RegExp(`\\r\\nhost: 127\\.0\\.0\\.1:${port}(\\r\\n|$)`, 'i'));
      assert.match(head, /\r\ncontent-type: application\/x-protobuf(\r\n|$)/i);
      assert.match(head, /\r\ncontent-length: 7(\r\n|$)/i);
      await ex.shutdown();
    },
  );

  test("a response read to the connection's end, and one with Connection: close: sent, the next export on a new connection", { timeout: 10_000 }, async () => {
    const ex = exporter({});
    reply = (socket, n) => {
      if (n === 1) socket.end('HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\n\r\nno length, to the end');
      else if (n === 2) socket.write('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      else socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
    };
    assert.equal((await send(ex, 'one')).failed, undefined);
    assert.equal((await send(ex, 'two')).failed, undefined);
    assert.equal((await send(ex, 'three')).failed, undefined);
    assert.equal(reqs.length, 3);
    assert.equal(sockets.length, 3, 'neither connection was reused');
    await ex.shutdown();
  });

  test('a kept connection the receiver closed while idle: the next export goes on a new one at once', { timeout: 10_000 }, async () => {
    const ex = exporter({});
    reply = (socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
    assert.equal((await send(ex, 'one')).failed, undefined);
    const first = sockets[0]!;
    first.destroy();
    await once(first, 'close');
    await new Promise((r) => setTimeout(r, 50)); // the FIN reaches the client
    const r = await send(ex, 'two');
    assert.equal(r.failed, undefined);
    assert.ok(r.ms < 500, `no retry's backoff (${Math.round(r.ms)} ms)`);
    assert.equal(reqs.length, 2);
    assert.equal(sockets.length, 2);
    await ex.shutdown();
  });

  test('a connection dropped before the answer is retried on a new one; then sent', { timeout: 10_000 }, async () => {
    const ex = exporter({});
    reply = (socket, n) => (n === 1 ? socket.destroy() : socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'));
    const r = await send(ex, 'again');
    assert.equal(r.failed, undefined);
    assert.equal(reqs.length, 2, 'sent twice');
    assert.equal(reqs[1]!.body.toString(), 'again');
    assert.ok(r.ms >= 700, `after the package's backoff (${Math.round(r.ms)} ms)`);
    await ex.shutdown();
  });

  /** [what, the answer, the failure, whether it fails at once (else at the export's timeout: the bytes promise more)] */
  const refusals: Array<[string, string, RegExp, boolean]> = [
    ['a status line that is not HTTP', 'SSH-2.0-OpenSSH\r\n\r\n', /does not match the HTTP\/1\.1 protocol/, true],
    ['a header line without a colon', 'HTTP/1.1 200 OK\r\nno colon here\r\n\r\n', /does not match the HTTP\/1\.1 protocol/, true],
    ['two different Content-Lengths', 'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab', /content-length/i, true],
    ['a head over 64 KiB', `HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(70_000)}`, /Headers Overflow/, true],
    ['a Content-Length over 4 MiB', 'HTTP/1.1 200 OK\r\nContent-Length: 5000000\r\n\r\n', /exceeded size limit of 4194304 bytes/, true],
    ['a body over 4 MiB read to the end', `HTTP/1.1 200 OK\r\n\r\n${'b'.repeat(4_200_000)}`, /exceeded size limit of 4194304 bytes/, true],
    ['a chunk over 4 MiB that never comes', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n500000\r\n', /timed out/, false],
    ['a 101 Switching Protocols', 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n', /timed out/, false],
  ];
  for (const [name, answer, error, atOnce] of refusals)
    test(`${name}: the export fails ${atOnce ? 'at once' : 'at its timeout'}, not retried, the connection closed`, { timeout: 10_000 }, async () => {
      const ex = exporter({ OTEL_EXPORTER_OTLP_TIMEOUT: '1500' });
      reply = (socket) => socket.write(answer);
      const r = await send(ex, 'x');
      assert.ok(r.failed !== undefined, 'failed');
      assert.match(r.failed, error);
      if (atOnce) assert.ok(r.ms < 1000, `at once (${Math.round(r.ms)} ms)`);
      else assert.ok(r.ms >= 1400 && r.ms < 3000, `at the timeout (${Math.round(r.ms)} ms)`);
      const s = sockets[0]!;
      if (!s.destroyed) await once(s, 'close');
      await ex.forceFlush();
      assert.equal(reqs.length, 1, 'not retried');
      await ex.shutdown();
    });

  test('a 2xx whose body breaks (a bad chunk size): the batch was taken, the export ends sent, the connection closed', { timeout: 10_000 }, async () => {
    const ex = exporter({});
    reply = (socket) => socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n');
    const r = await send(ex, 'x');
    assert.equal(r.failed, undefined);
    assert.ok(r.ms < 1000, `at once (${Math.round(r.ms)} ms)`);
    const s = sockets[0]!;
    if (!s.destroyed) await once(s, 'close');
    assert.equal(reqs.length, 1);
    await ex.shutdown();
  });

  test('a header value that would split the request (OTEL_EXPORTER_OTLP_HEADERS) fails the export; nothing is sent', { timeout: 10_000 }, async () => {
    const ex = exporter({ OTEL_EXPORTER_OTLP_HEADERS: 'x-a=1%0D%0AX-Injected%3A%20yes' });
    reply = (socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
    const r = await send(ex, 'x');
    assert.match(r.failed ?? '', /invalid x-a header/);
    await ex.forceFlush();
    assert.equal(sockets.length, 0, 'no connection made');
    assert.equal(reqs.length, 0);
    await ex.shutdown();
  });

  test('https: the receiver trusted through OTEL_EXPORTER_OTLP_CERTIFICATE gets the batch; without it the export fails', { timeout: 20_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-otlp-tls-'));
    try {
      const key = join(dir, 'key.pem');
      const cert = join(dir, 'cert.pem');
      const made = spawnSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-keyout',
          key,
          '-out',
          cert,
          '-days',
          '1',
          '-subj',
          '/CN=localhost',
          '-addext',
          'subjectAltName=DNS:localhost,IP:127.0.0.1',
        ],
        { encoding: 'utf8' },
      );
      assert.equal(made.status, 0, made.stderr);
      const bodies: Buffer[] = [];
      const tlsServer = createHttpsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          bodies.push(Buffer.concat(chunks));
          res.writeHead(200, { 'content-type': 'application/x-protobuf' });
          res.end();
        });
      });
      tlsServer.listen(0, '127.0.0.1');
      await once(tlsServer, 'listening');
      const url = `https://localhost:${(tlsServer.address() as AddressInfo).port}/v1/traces`;
      try {
        const trusted = exporter({ OTEL_EXPORTER_OTLP_CERTIFICATE: cert }, url);
        const r = await send(trusted, 'over tls');
        assert.equal(r.failed, undefined);
        assert.deepEqual(bodies.map(String), ['over tls']);
        await trusted.shutdown();

        const untrusted = exporter({}, url);
        const u = await send(untrusted, 'not trusted');
        assert.match(u.failed ?? '', /self[- ]signed/i);
        assert.equal(bodies.length, 1, 'nothing sent to an untrusted receiver');
        await untrusted.shutdown();
      } finally {
        tlsServer.closeAllConnections();
        tlsServer.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
