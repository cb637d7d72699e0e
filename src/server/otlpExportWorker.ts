/**
 * The OTLP/HTTP exporter's transport on a worker thread (issue 35): the encoded batches (one Buffer
 * each, made on the main thread as spans end: tracing.ts) are handed over by transfer, without a
 * copy, and the worker sends them with the official exporter's pieces (@opentelemetry/otlp-exporter-base:
 * the OTEL_EXPORTER_OTLP_* endpoint, headers, timeout and compression as its
 * `convertLegacyHttpOptions` reads them, its export delegate with its bounded queue and metrics)
 * over undici's dispatcher instead of the package's node:http transport.
 *
 * Why a thread: sending from the request thread put node's HTTP client (its ClientRequest,
 * IncomingMessage and socket objects) through the same node:http and stream code as the server's
 * requests, which turned that code's inline caches polymorphic: on-CPU, the exporter's stacks and
 * node's HTTP client were 3.7-4.4 µs of a traced primary-key lookup and the generic load IC
 * 3.2 µs more (README "Observability"). In its own isolate the client has its own caches, and an
 * export's sending, retries and compression never run between two requests.
 *
 * Why undici: node:http's client cost about 3× the CPU per POST of undici's dispatcher for a
 * 140 KB batch (sequential POSTs: 450-1,200 µs against 170-500 µs), CPU the exporter thread
 * takes from the process's cores (bench/post-transport.mjs measures the three clients: node:http,
 * undici, and the exchange written by hand on node:net, which saves ~1 µs of a traced request
 * against undici: too little to own an HTTP client for). The transport (SCRIPT's `undiciTransport`) gives the outcomes
 * of the package's node transport (its http-transport-utils.js and is-export-retryable.js): ≤ 299
 * sent, 429/502/503/504 and transient network errors retried (Retry-After honoured, bounded by the
 * timeout), anything else refused; the timeout covers the whole exchange; a response body is read
 * up to 4 MiB. The retries around it are the package's loop, written again (see SCRIPT).
 *
 * Guarantees:
 * - `export(batch, done)`: `done` is called once, when the worker reports the export finished,
 *   with the exporter's own outcome (undefined: sent; else why it was refused or failed), or at
 *   once when the worker is gone (as failed);
 * - `forceFlush()` and `shutdown()` resolve when the worker has done them (or is gone); after
 *   `shutdown()` the thread is stopped (its connections closed) and further exports are dropped
 *   (their `done` called); `stop()` stops it at once, whatever it is sending;
 * - the thread does not keep the process alive (unref), and a failing worker (an exception, the
 *   module not loading) only loses the batches in flight: it is reported once through `onError`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';

/** A batch as the exporter's serializer takes it: the payload, already encoded, and its span count. */
export interface EncodedBatch {
  payload: Buffer;
  count: number;
}

/**
 * The worker's code (CommonJS, run with `eval`: the same text under tsx in tests and in dist/; the
 * modules it needs are required by the absolute paths resolved here, in workerData).
 */
const SCRIPT = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { promisify } = require('node:util');
const gzip = promisify(require('node:zlib').gzip);
const { Pool } = require(workerData.undici);
const { createOtlpNetworkExportDelegate, OTLPExporterError } = require(workerData.base);
const { convertLegacyHttpOptions, createOtlpHttpExporterMetrics } = require(workerData.nodeHttp);

const options = convertLegacyHttpOptions(workerData.url ? { url: workerData.url } : {}, 'TRACES', 'v1/traces', { 'Content-Type': workerData.contentType });

// the package's transport (build/src/transport/http-transport-utils.js), its outcomes on undici
const DEFAULT_USER_AGENT = 'OTel-OTLP-Exporter-JavaScript/' + workerData.version;
const USER_AGENT = options.userAgent ? options.userAgent + ' ' + DEFAULT_USER_AGENT : DEFAULT_USER_AGENT;
const MAX_RESPONSE_BODY_SIZE = 4 * 1024 * 1024;
const RETRYABLE_NETWORK_ERROR_CODES = new Set([
  'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ENOTFOUND', 'ENETUNREACH', 'EHOSTUNREACH',
  // undici's own: a socket closed or failing mid-exchange, its connect, headers and body timeouts
  'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT',
]);
const isRetryableStatus = (s) => s === 429 || s === 502 || s === 503 || s === 504;
const isRetryableNetworkError = (e) =>
  (e != null && typeof e.code === 'string' && RETRYABLE_NETWORK_ERROR_CODES.has(e.code)) ||
  (e != null && e.cause != null && typeof e.cause.code === 'string' && RETRYABLE_NETWORK_ERROR_CODES.has(e.cause.code));
/** Retry-After as the package's parseRetryAfterToMills reads it, never more than the timeout */
function retryAfterMillis(value, timeoutMillis) {
  if (value == null) return undefined;
  const seconds = Number.parseInt(value, 10);
  let ms;
  if (Number.isInteger(seconds)) ms = seconds > 0 ? seconds * 1000 : -1;
  else {
    const delay = new Date(value).getTime() - Date.now();
    ms = delay >= 0 ? delay : 0;
  }
  return Math.min(ms, timeoutMillis);
}

/**
 * POSTs each batch on one undici Pool for the URL's origin (keep-alive, created at the first
 * export, destroyed at shutdown). For https, the TLS options of the https.Agent the package's
 * agentFactory makes (OTEL_EXPORTER_OTLP_(TRACES_)CERTIFICATE, _CLIENT_CERTIFICATE, _CLIENT_KEY as
 * the package reads them) are undici's connect options: a private CA and client certificates work.
 */
function undiciTransport() {
  const target = new URL(options.url);
  const path = target.pathname + target.search;
  // credentials in the URL, sent as node:http's request(url) sends them
  const authorization =
    target.username || target.password
      ? 'Basic ' + Buffer.from(decodeURIComponent(target.username) + ':' + decodeURIComponent(target.password)).toString('base64')
      : undefined;
  let pool;
  let closed = false;
  /** https: the TLS material of the package's agent, read once */
  let connectOptions;
  const tlsReady =
    target.protocol === 'https:' && typeof options.agentFactory === 'function'
      ? Promise.resolve()
          .then(() => options.agentFactory('https:'))
          .then((agent) => {
            const o = (agent && agent.options) || {};
            connectOptions = {};
            for (const k of ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername']) if (o[k] !== undefined) connectOptions[k] = o[k];
          })
      : Promise.resolve();
  // a failure fails each export (prepare awaits it), never the thread
  tlsReady.catch(() => undefined);
  async function prepare(data) {
    await tlsReady;
    const headers = {};
    for (const [k, v] of Object.entries(await options.headers())) if (k.toLowerCase() !== 'user-agent') headers[k] = v;
    headers['User-Agent'] = USER_AGENT;
    if (authorization && !Object.keys(headers).some((k) => k.toLowerCase() === 'authorization')) headers.Authorization = authorization;
    if (options.compression !== 'gzip') return { headers, body: data };
    headers['Content-Encoding'] = 'gzip';
    return { headers, body: await gzip(data) };
  }
  function send(data, timeoutMillis) {
    return new Promise((resolve) => {
      let settled = false;
      /** undici's abort of this request, once it is on a connection */
      let abortRequest;
      const settle = (response) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(response);
      };
      const stop = (response) => {
        settle(response);
        if (abortRequest) abortRequest(); // the connection is dropped
      };
      const timer = setTimeout(() => stop({ status: 'retryable', error: new Error('Request timed out') }), timeoutMillis);
      if (closed) {
        settle({ status: 'failure', error: new Error('The exporter is shut down') });
        return;
      }
      prepare(data).then(({ headers, body }) => {
        if (settled) return;
        if (closed) return settle({ status: 'failure', error: new Error('The exporter is shut down') });
        if (!pool) pool = new Pool(target.origin, { pipelining: 1, headersTimeout: 0, bodyTimeout: 0, ...(connectOptions ? { connect: connectOptions } : {}) });
        let status = 0;
        let statusText = '';
        let retryAfter;
        let size = 0;
        const chunks = [];
        const tooLarge = () =>
          stop({ status: 'failure', error: new Error('OTLP export response body exceeded size limit of ' + MAX_RESPONSE_BODY_SIZE + ' bytes') });
        pool.dispatch({ origin: target.origin, path, method: 'POST', headers, body }, {
          onConnect(abort) {
            if (settled) abort(); // timed out while waiting for a connection: never sent
            else abortRequest = abort;
          },
          onHeaders(statusCode, raw, resume, text) {
            if (settled) return false;
            status = statusCode;
            statusText = text || '';
            for (let i = 0; i + 1 < raw.length; i += 2) {
              const name = raw[i].toString('latin1').toLowerCase();
              if (name === 'retry-after' && retryAfter === undefined) retryAfter = raw[i + 1].toString('latin1');
              else if (name === 'content-length' && Number(raw[i + 1].toString('latin1')) > MAX_RESPONSE_BODY_SIZE) {
                tooLarge();
                return false;
              }
            }
            return true;
          },
          onData(chunk) {
            if (settled) return false;
            size += chunk.length;
            if (size > MAX_RESPONSE_BODY_SIZE) {
              tooLarge();
              return false;
            }
            chunks.push(chunk);
            return true;
          },
          onComplete() {
            if (status <= 299) settle({ status: 'success', data: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) });
            else if (isRetryableStatus(status)) settle({ status: 'retryable', retryInMillis: retryAfterMillis(retryAfter, timeoutMillis) });
            else settle({ status: 'failure', error: new OTLPExporterError(statusText, status, Buffer.concat(chunks).toString()) });
          },
          onError(error) {
            if (status === 0) settle({ status: isRetryableNetworkError(error) ? 'retryable' : 'failure', error });
            // the body failed: as the package, a 2xx was delivered; a retryable status stays retryable
            else if (status <= 299) settle({ status: 'success', data: Buffer.concat(chunks) });
            else if (isRetryableStatus(status)) settle({ status: 'retryable', error, retryInMillis: retryAfterMillis(retryAfter, timeoutMillis) });
            else settle({ status: 'failure', error });
          },
        });
      }).catch((error) => settle({ status: 'failure', error }));
    });
  }
  return {
    send,
    shutdown() {
      closed = true;
      // after the delegate's flush nothing is in flight: destroy, so no connection (nor a connect
      // nobody waits for) keeps this thread's event loop alive
      if (pool) pool.destroy().catch(() => undefined);
      pool = undefined;
    },
  };
}

/**
 * The package's retrying transport (build/src/retrying-transport.js), written again because its
 * createRetryingTransport is not in the package's exports map: 5 retries, a backoff of 1 s ×1.5 up
 * to 5 s with ±20 % jitter, Retry-After honoured, no retry past the export's deadline. One change:
 * a retry's timeout is what is left of the deadline after the wait (the package's counts from
 * before it), so an export never runs past its deadline. (Its diag logging is left out: nothing
 * reads diag in this thread.)
 */
function retrying(transport) {
  const MAX_ATTEMPTS = 5;
  const INITIAL_BACKOFF = 1000;
  const MAX_BACKOFF = 5000;
  const BACKOFF_MULTIPLIER = 1.5;
  const JITTER = 0.2;
  return {
    async send(data, timeoutMillis) {
      let attempts = MAX_ATTEMPTS;
      let nextBackoff = INITIAL_BACKOFF;
      const deadline = Date.now() + timeoutMillis;
      let result = await transport.send(data, timeoutMillis);
      while (result.status === 'retryable' && attempts > 0) {
        attempts--;
        const backoff = Math.max(Math.min(nextBackoff * (1 + Math.random() * (2 * JITTER) - JITTER), MAX_BACKOFF), 0);
        nextBackoff = nextBackoff * BACKOFF_MULTIPLIER;
        const retryInMillis = result.retryInMillis ?? backoff;
        if (retryInMillis > deadline - Date.now()) return result;
        await new Promise((resolve) => setTimeout(resolve, retryInMillis));
        result = await transport.send(data, Math.max(deadline - Date.now(), 0));
      }
      return result;
    },
    shutdown() {
      transport.shutdown();
    },
  };
}

const delegate = createOtlpNetworkExportDelegate(
  options,
  { serializeRequest: (b) => b.payload, deserializeResponse: (d) => d },
  createOtlpHttpExporterMetrics('otlp_http_span_exporter', { name: 'span', countItems: (b) => b.count }, options.url, undefined),
  retrying(undiciTransport()),
);
const reply = (id) => () => parentPort.postMessage({ id });
parentPort.on('message', (m) => {
  if (m.op === 'export') {
    const p = m.payload;
    // the outcome (the delegate's ExportResult: code 0 sent, else failed) goes back with the id
    delegate.export({ payload: Buffer.from(p.buffer, p.byteOffset, p.byteLength), count: m.count }, (result) =>
      parentPort.postMessage({ id: m.id, failed: result.code !== 0 ? String((result.error && result.error.message) || result.error || 'failed') : undefined }),
    );
  } else if (m.op === 'flush') delegate.forceFlush().then(reply(m.id), reply(m.id));
  else if (m.op === 'shutdown') delegate.shutdown().then(reply(m.id), reply(m.id));
});
`;

/** The modules the worker requires, by absolute path, and the exporter package's version (its User-Agent). */
interface WorkerModules {
  base: string;
  nodeHttp: string;
  undici: string;
  version: string;
}
function workerModules(): WorkerModules {
  const require = createRequire(import.meta.url);
  const name = '@opentelemetry/otlp-exporter-base';
  const base = require.resolve(name);
  // the package's version module is not in its exports map: its package.json, found above its main entry
  let version: string | undefined;
  for (let dir = dirname(base); version === undefined; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === name) version = String(pkg.version);
    }
    if (version === undefined && dirname(dir) === dir) throw new Error(`${name}: package.json not found above ${base}`);
  }
  return { base, nodeHttp: require.resolve(`${name}/node-http`), undici: require.resolve('undici'), version };
}

/** the outcome of an export the thread can no longer report (stopped, or failed) */
const GONE = 'the exporter thread is stopped';

export class WorkerExporter {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, (failed?: string) => void>();
  private next = 0;
  private gone = false;

  /**
   * @param url the traces URL (undefined: the exporter reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT)
   * @param contentType application/x-protobuf or application/json
   */
  constructor(url: string | undefined, contentType: string, onError: (e: Error) => void) {
    this.worker = new Worker(SCRIPT, { eval: true, workerData: { ...workerModules(), url, contentType } });
    this.worker.unref();
    this.worker.on('message', (m: { id: number; failed?: string }) => {
      const done = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      done?.(m.failed);
    });
    const end = () => {
      this.gone = true;
      const all = [...this.waiting.values()];
      this.waiting.clear();
      for (const done of all) done(GONE);
    };
    this.worker.on('error', (e) => {
      onError(e);
      end();
    });
    this.worker.on('exit', end);
  }

  private ask(message: { op: string; payload?: Buffer; count?: number }, done: (failed?: string) => void, transfer?: ArrayBuffer[]): void {
    if (this.gone) {
      done(GONE);
      return;
    }
    const id = ++this.next;
    this.waiting.set(id, done);
    this.worker.postMessage({ ...message, id }, transfer);
  }

  /**
   * Sends a batch; `done` once it is finished, with undefined when it was sent, else why not. The
   * payload's memory is transferred: the caller gives it up (the encoders write each batch into a
   * Buffer of its own, never reused).
   */
  export(batch: EncodedBatch, done: (failed?: string) => void): void {
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
    return new Promise((resolve) => this.ask({ op: 'flush' }, () => resolve()));
  }

  async shutdown(): Promise<void> {
    await new Promise<void>((resolve) => this.ask({ op: 'shutdown' }, () => resolve()));
    this.gone = true;
    await this.worker.terminate();
  }

  /** stops the thread now: exports in flight are given up (their `done` called), later ones dropped */
  stop(): void {
    this.gone = true;
    const all = [...this.waiting.values()];
    this.waiting.clear();
    for (const done of all) done(GONE);
    void this.worker.terminate();
  }
}
