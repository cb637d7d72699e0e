// The ceiling of any response cache on this machine: a node:http server that reads the request
// body and answers a constant JSON text of a given size without touching a database (what a cache
// hit could cost at the very least), loaded with wrk against the raw baseline (bench/raw-server.mjs)
// alternately. A cache hit in Svc also pays Svc's own request handling, so its ratio to raw is
// below this server's. Not part of `npm test`.
//
// usage: node bench/http-ceiling.mjs [--rounds 3] [--duration 5] [--bytes 495]
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { writeFileSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, waitHttp } from './lib.mjs';
import { HERE } from './scenarios.mjs';

const { values: o } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '5' }, bytes: { type: 'string', default: '495' }, serve: { type: 'string' }, 'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/svc_bench' } } });

if (o.serve) {
  // the constant server (a child process, so that it has its own core time like the others)
  const body = `{"data":${JSON.stringify({ x: 'y'.repeat(Math.max(0, Number(o.bytes) - 20)) })}}`;
  createServer((req, res) => {
    if (req.url === '/healthz') return res.end('OK');
    req.on('data', () => {});
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  }).listen(Number(o.serve), '127.0.0.1');
} else {
  const dir = mkdtempSync(join(os.tmpdir(), 'svc-ceiling-'));
  const lua = join(dir, 'post.lua');
  writeFileSync(lua, `wrk.method = "POST"\nwrk.body = '{"variables":{"id":4242}}'\nwrk.headers["content-type"] = "application/json"\n`);
  const cport = await freePort();
  const rport = await freePort();
  const constant = spawn(process.execPath, [new URL(import.meta.url).pathname, '--serve', String(cport), '--bytes', o.bytes], { stdio: 'ignore' });
  const raw = spawn(process.execPath, [join(HERE, 'raw-server.mjs'), '--database-url', o['database-url'], '--port', String(rport), '--pool', '16'], { stdio: 'ignore' });
  const wrk = (url) =>
    new Promise((resolve) => {
      const w = spawn('wrk', ['-t2', '-c32', `-d${o.duration}s`, '-s', lua, url]);
      let out = '';
      w.stdout.on('data', (d) => (out += d));
      w.on('close', () => resolve(Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0)));
    });
  try {
    await waitHttp(`http://127.0.0.1:${cport}/healthz`, constant);
    await waitHttp(`http://127.0.0.1:${rport}/healthz`, raw);
    await wrk(`http://127.0.0.1:${rport}/q/a_pk`);
    await wrk(`http://127.0.0.1:${cport}/`);
    const ratios = [];
    for (let i = 0; i < Number(o.rounds); i++) {
      const r = await wrk(`http://127.0.0.1:${rport}/q/a_pk`);
      const c = await wrk(`http://127.0.0.1:${cport}/`);
      ratios.push(c / r);
      process.stdout.write(`round ${i + 1}: raw a_pk ${r.toFixed(0)} req/s, constant ${c.toFixed(0)} req/s: ${(c / r).toFixed(2)}x\n`);
    }
    ratios.sort((a, b) => a - b);
    process.stdout.write(`median ${ratios[Math.floor(ratios.length / 2)].toFixed(2)}x raw: no response cache can exceed this on this machine\n`);
  } finally {
    constant.kill();
    raw.kill();
  }
}
