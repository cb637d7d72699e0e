/**
 * The OTLP/HTTP exporter's transport on a worker thread (issue 35): the encoded batches (one Buffer
 * each, made on the main thread as spans end: tracing.ts) are handed over by transfer, without a
 * copy, and the worker sends them with the official exporter (@opentelemetry/otlp-exporter-base:
 * the OTEL_EXPORTER_OTLP_* endpoint, headers, timeout, compression and retries as it reads them).
 *
 * Why a thread: sending from the request thread put node's HTTP client (its ClientRequest,
 * IncomingMessage and socket objects) through the same node:http and stream code as the server's
 * requests, which turned that code's inline caches polymorphic: on-CPU, the exporter's stacks and
 * node's HTTP client were 3.7-4.4 µs of a traced primary-key lookup and the generic load IC
 * 3.2 µs more (README "Observability"). In its own isolate the client has its own caches, and an
 * export's sending, retries and compression never run between two requests.
 *
 * Guarantees:
 * - `export(batch, done)`: `done` is called once, when the worker reports the export finished
 *   (sent, refused or failed: the exporter's own outcome), or at once when the worker is gone;
 * - `forceFlush()` and `shutdown()` resolve when the worker has done them (or is gone); after
 *   `shutdown()` the thread is stopped and further exports are dropped (their `done` called);
 * - the thread does not keep the process alive (unref), and a failing worker (an exception, the
 *   module not loading) only loses the batches in flight: it is reported once through `onError`.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** A batch as the exporter's serializer takes it: the payload, already encoded, and its span count. */
export interface EncodedBatch {
  payload: Buffer;
  count: number;
}

/** The worker's code (CommonJS, run with `eval`: the same text under tsx in tests and in dist/). */
const SCRIPT = `
const { parentPort, workerData } = require('node:worker_threads');
const { createOtlpHttpExportDelegate, convertLegacyHttpOptions } = require(workerData.module);
const delegate = createOtlpHttpExportDelegate(
  convertLegacyHttpOptions(workerData.url ? { url: workerData.url } : {}, 'TRACES', 'v1/traces', { 'Content-Type': workerData.contentType }),
  { serializeRequest: (b) => b.payload, deserializeResponse: (d) => d },
  'otlp_http_span_exporter',
  { name: 'span', countItems: (b) => b.count },
  undefined,
);
const reply = (id) => () => parentPort.postMessage(id);
parentPort.on('message', (m) => {
  if (m.op === 'export') {
    const p = m.payload;
    delegate.export({ payload: Buffer.from(p.buffer, p.byteOffset, p.byteLength), count: m.count }, reply(m.id));
  } else if (m.op === 'flush') delegate.forceFlush().then(reply(m.id), reply(m.id));
  else if (m.op === 'shutdown') delegate.shutdown().then(reply(m.id), reply(m.id));
});
`;

export class WorkerExporter {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, () => void>();
  private next = 0;
  private gone = false;

  /**
   * @param url the traces URL (undefined: the exporter reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT)
   * @param contentType application/x-protobuf or application/json
   */
  constructor(url: string | undefined, contentType: string, onError: (e: Error) => void) {
    const module = createRequire(import.meta.url).resolve('@opentelemetry/otlp-exporter-base/node-http');
    this.worker = new Worker(SCRIPT, { eval: true, workerData: { module, url, contentType } });
    this.worker.unref();
    this.worker.on('message', (id: number) => {
      const done = this.waiting.get(id);
      this.waiting.delete(id);
      done?.();
    });
    const end = () => {
      this.gone = true;
      const all = [...this.waiting.values()];
      this.waiting.clear();
      for (const done of all) done();
    };
    this.worker.on('error', (e) => {
      onError(e);
      end();
    });
    this.worker.on('exit', end);
  }

  private ask(message: { op: string; payload?: Buffer; count?: number }, done: () => void, transfer?: ArrayBuffer[]): void {
    if (this.gone) {
      done();
      return;
    }
    const id = ++this.next;
    this.waiting.set(id, done);
    this.worker.postMessage({ ...message, id }, transfer);
  }

  /**
   * Sends a batch; `done` once it is finished. The payload's memory is transferred: the caller
   * gives it up (the encoders write each batch into a Buffer of its own, never reused).
   */
  export(batch: EncodedBatch, done: () => void): void {
    const p = batch.payload;
    // a Buffer of node's shared pool must not be transferred (it would detach the pool): copied then
    let payload = p;
    if (p.byteOffset !== 0 || p.buffer.byteLength === Buffer.poolSize) {
      payload = Buffer.allocUnsafeSlow(p.byteLength);
      p.copy(payload);
    }
    this.ask({ op: 'export', payload, count: batch.count }, done, [payload.buffer as ArrayBuffer]);
  }

  forceFlush(): Promise<void> {
    return new Promise((resolve) => this.ask({ op: 'flush' }, resolve));
  }

  async shutdown(): Promise<void> {
    await new Promise<void>((resolve) => this.ask({ op: 'shutdown' }, resolve));
    this.gone = true;
    await this.worker.terminate();
  }
}
