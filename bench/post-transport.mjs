#!/usr/bin/env node
// CPU per OTLP POST of three HTTP clients at the exporter thread's rate (issue 35): the tracer
// sends a 140 KB batch every few milliseconds, tens a second, so the sending code never leaves
// V8's baseline tier, and what it costs a POST is CPU the server's process takes from its cores
// on every traced request. Sequential POSTs of one 140 KB body to a receiver in another process
// (node:http, answering 200 with an empty body), one every --gap ms, for --seconds each, rounds
// alternating; process CPU (user + system) per POST, less an idle loop's (timers only).
//
//   node bench/post-transport.mjs [--rounds 3] [--seconds 6] [--gap 14] [--size 143360]
//
//   node:http  http.request with a keep-alive Agent (the OTLP exporter package's own transport)
//   undici     undici's Pool.dispatch (Svc's transport before: src/server/otlpExportWorker.ts)
//   socket     the request written on a kept net.Socket, the response's head read by hand (what
//              the exporter thread's transport does now, less its checks)
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '6' },
    gap: { type: 'string', default: '14' },
    size: { type: 'string', default: String(140 * 1024) },
  },
});
const RECEIVER = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': 0 }); res.end(); });
}).listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;
const receiver = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise((resolve) => receiver.stdout.once('data', (d) => resolve(Number(String(d).trim()))));
const origin = `http://127.0.0.1:${port}`;
const body = Buffer.alloc(Number(opts.size), 7);
const headers = { 'Content-Type': 'application/x-protobuf', 'User-Agent': 'bench' };

function nodeHttp() {
  const agent = new http.Agent({ keepAlive: true });
  return (buf) =>
    new Promise((resolve, reject) => {
      const req = http.request(`${origin}/v1/traces`, { method: 'POST', agent, headers: { ...headers, 'Content-Length': buf.length } }, (res) => {
        res.on('data', () => undefined);
        res.on('end', () => resolve(res.statusCode));
      });
      req.on('error', reject);
      req.end(buf);
    });
}
function undici() {
  const pool = new Pool(origin, { pipelining: 1, headersTimeout: 0, bodyTimeout: 0 });
  return (buf) =>
    new Promise((resolve, reject) => {
      let status = 0;
      pool.dispatch(
        { origin, path: '/v1/traces', method: 'POST', headers, body: buf },
        { onConnect() {}, onHeaders: (s) => ((status = s), true), onData: () => true, onComplete: () => resolve(status), onError: reject },
      );
    });
}
function socket() {
  let sock;
  let pending;
  let acc = null;
  const connect = () => {
    sock = net.connect(port, '127.0.0.1');
    sock.setNoDelay(true);
    sock.on('data', (c) => {
      acc = acc ? Buffer.concat([acc, c]) : c;
      const end = acc.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = acc.toString('latin1', 0, end);
      const len = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (acc.length < end + 4 + len) return;
      acc = null;
      pending(Number(head.slice(9, 12)));
    });
    sock.on('close', () => (sock = undefined));
  };
  return (buf) =>
    new Promise((resolve) => {
      if (!sock) connect();
      pending = resolve;
      sock.cork();
      sock.write(`POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/x-protobuf\r\nUser-Agent: bench\r\nContent-Length: ${buf.length}\r\n\r\n`, 'latin1');
      sock.write(buf);
      sock.uncork();
    });
}
const idle = async () => 200;

async function run(send) {
  const until = Date.now() + Number(opts.seconds) * 1000;
  let n = 0;
  const c0 = process.cpuUsage();
  while (Date.now() < until) {
    const status = await send(body);
    if (status !== 200) throw new Error(`status ${status}`);
    n++;
    await new Promise((r) => setTimeout(r, Number(opts.gap)));
  }
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / n;
}

const clients = { idle, 'node:http': nodeHttp(), undici: undici(), socket: socket() };
const results = Object.fromEntries(Object.keys(clients).map((k) => [k, []]));
for (let r = 1; r <= Number(opts.rounds); r++)
  for (const [name, send] of Object.entries(clients)) {
    const us = await run(send);
    results[name].push(us);
    console.log(`round ${r}  ${name.padEnd(9)} ${us.toFixed(0).padStart(5)} µs CPU a POST`);
  }
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(results.idle);
console.log(`\nmedians, less the idle loop's ${base.toFixed(0)} µs (${(body.length / 1024).toFixed(0)} KB bodies, one every ${opts.gap} ms):`);
for (const name of ['node:http', 'undici', 'socket']) console.log(`  ${name.padEnd(9)} ${(median(results[name]) - base).toFixed(0).padStart(5)} µs a POST`);
receiver.kill();
