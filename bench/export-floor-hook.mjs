// Loaded with `node --import` into bench/raw-server.mjs by bench/tracing-ceiling.mjs: the least
// that exporting a request's spans can cost, without recording or encoding anything. Each response
// copies EXPORT_FLOOR_BYTES of ready bytes (a request's spans as OTLP, encoded by nobody) into the
// batch being filled; every EXPORT_FLOOR_BATCH requests the batch's memory is transferred to a worker
// thread that POSTs it over one kept-alive connection to EXPORT_FLOOR_URL with a hand-written
// HTTP/1.1 request on node:net (cheaper than node:http and undici: bench/post-transport.mjs), as
// Svc's exporter thread does with the OTLP exporter's transport.
import http from 'node:http';
import { Worker } from 'node:worker_threads';

const url = process.env.EXPORT_FLOOR_URL;
const bytes = Number(process.env.EXPORT_FLOOR_BYTES ?? 1100);
const perBatch = Number(process.env.EXPORT_FLOOR_BATCH ?? 128);
if (url && bytes > 0) {
  const ready = Buffer.alloc(bytes, 0x5a);
  let batch = Buffer.allocUnsafeSlow(bytes * perBatch);
  let n = 0;
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads');
    const net = require('node:net');
    const u = new URL(workerData.url);
    let socket;
    let waiting = [];
    let inFlight = 0;
    let buffered = '';
    const connect = () => {
      socket = net.connect(Number(u.port), u.hostname);
      socket.setNoDelay(true);
      socket.on('data', (d) => {
        // each answer is a head and '{}' (the receiver's): count them off
        buffered += d.toString('latin1');
        let i;
        while ((i = buffered.indexOf('\\r\\n\\r\\n')) >= 0 && buffered.length >= i + 6) {
          buffered = buffered.slice(i + 6);
          inFlight--;
          next();
        }
      });
      socket.on('error', () => {});
      // the receiver closes a connection left idle (node:http: 5 s): the next batch opens another
      socket.on('close', () => {
        socket = undefined;
        inFlight = 0;
        buffered = '';
        next();
      });
    };
    const next = () => {
      if (socket === undefined && waiting.length > 0) connect();
      while (inFlight < 2 && waiting.length > 0) {
        const body = waiting.shift();
        inFlight++;
        socket.write('POST ' + u.pathname + ' HTTP/1.1\\r\\nHost: ' + u.host + '\\r\\nContent-Type: application/x-protobuf\\r\\nContent-Length: ' + body.length + '\\r\\n\\r\\n');
        socket.write(body);
      }
    };
    parentPort.on('message', (ab) => {
      if (waiting.length < 8) waiting.push(Buffer.from(ab));
      next();
    });
    `,
    { eval: true, workerData: { url } },
  );
  worker.unref();
  const end = http.ServerResponse.prototype.end;
  http.ServerResponse.prototype.end = function (...args) {
    batch.set(ready, n * bytes);
    if (++n === perBatch) {
      worker.postMessage(batch.buffer, [batch.buffer]);
      batch = Buffer.allocUnsafeSlow(bytes * perBatch);
      n = 0;
    }
    return end.apply(this, args);
  };
}
