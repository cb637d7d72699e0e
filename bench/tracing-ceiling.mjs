#!/usr/bin/env node
// The least that exporting traces can cost on this machine (issue 35: "under 10 % at 100 %
// sampling on a_pk"): the raw baseline (bench/raw-server.mjs, a_pk) against the same server
// loaded with bench/export-floor-hook.mjs, which ships --bytes of ready-made bytes per request (what
// a_pk's four spans take as OTLP/protobuf in Svc: ~1,100 bytes, most of it db.statement) to an OTLP
// receiver on this machine, in batches of --batch requests, from a worker thread over one
// kept-alive connection — no span recorded, no id drawn, nothing encoded. wrk loads both
// alternately (rounds in rotated order, each in a session of its own); printed per round and as
// medians: requests per second, the ratio, CPU per request of the server (request thread and the
// rest) and of the receiver. A tracer that records and encodes spans costs more than this.
//
//   node bench/tracing-ceiling.mjs [--rounds 5] [--duration 6] [--connections 32] [--bytes 1100] [--batch 128]
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, threadsMs, waitHttp } from './lib.mjs';
import { HERE } from './scenarios.mjs';

const { values: o } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '6' },
    connections: { type: 'string', default: '32' },
    bytes: { type: 'string', default: '1100' },
    batch: { type: 'string', default: '128' },
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/svc_bench' },
  },
});

// the receiver: drops what it is sent, counts the bytes (GET /bytes)
const sinkCode = `let n = 0; require('node:http').createServer((q, s) => { if (q.method === 'GET') return s.end(String(n)); q.on('data', (d) => (n += d.length)); q.on('end', () => { s.writeHead(200, {'content-type': 'application/json'}); s.end('{}'); }); }).listen(Number(process.argv[1]), '127.0.0.1');`;
const sinkBytes = () =>
  new Promise((resolve, reject) => {
    // a connection of its own each time (a kept one can be closed by the receiver as it is reused)
    http
      .get({ host: '127.0.0.1', port: sinkPort, path: '/bytes', agent: false }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve(Number(text)));
      })
      .on('error', reject);
  });

const sum = (m) => [...m.values()].reduce((a, b) => a + b, 0);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = mkdtempSync(join(os.tmpdir(), 'svc-tracing-ceiling-'));
const lua = join(dir, 'a_pk.lua');
writeFileSync(lua, `wrk.method = "POST"\nwrk.body = '{"variables":{"id":4242}}'\nwrk.headers["content-type"] = "application/json"\n`);

const sinkPort = await freePort();
const sink = spawn(process.execPath, ['-e', sinkCode, String(sinkPort)], { stdio: 'ignore' });
const start = async (name, hook) => {
  const port = await freePort();
  const args = [
    ...(hook ? ['--import', join(HERE, 'export-floor-hook.mjs')] : []),
    join(HERE, 'raw-server.mjs'),
    '--database-url',
    o['database-url'],
    '--port',
    String(port),
    '--pool',
    '16',
  ];
  const env = { ...process.env, EXPORT_FLOOR_URL: `http://127.0.0.1:${sinkPort}/v1/traces`, EXPORT_FLOOR_BYTES: o.bytes, EXPORT_FLOOR_BATCH: o.batch };
  const child = spawn(process.execPath, args, { stdio: 'ignore', env, detached: true });
  const base = `http://127.0.0.1:${port}`;
  await waitHttp(`${base}/healthz`, child);
  return { name, base, child };
};

async function load(t, seconds) {
  const b0 = await sinkBytes();
  const t0 = threadsMs(t.child.pid);
  const s0 = sum(threadsMs(sink.pid));
  const r = spawnSync('setsid', ['-w', 'wrk', '-t2', `-c${o.connections}`, `-d${seconds}s`, '--latency', '-s', lua, `${t.base}/q/a_pk`], { encoding: 'utf8' });
  const requests = Number(/(\d+) requests in/.exec(r.stdout)?.[1]);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(r.stdout)?.[1]);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(r.stdout)?.[1] ?? 0);
  const t1 = threadsMs(t.child.pid);
  let main = 0;
  let rest = 0;
  for (const [tid, ms] of t1) {
    const d = ms - (t0.get(tid) ?? 0);
    if (tid === String(t.child.pid)) main += d;
    else rest += d;
  }
  const sinkMs = sum(threadsMs(sink.pid)) - s0;
  const per = (ms) => (ms * 1000) / requests;
  // what reached the receiver a request (the last batches of a round may arrive in the next one's)
  const received = ((await sinkBytes()) - b0) / requests;
  return { rps, non2xx, mainUs: per(main), restUs: per(rest), sinkUs: per(sinkMs), received };
}

const targets = [];
try {
  await waitHttp(`http://127.0.0.1:${sinkPort}/`, sink);
  targets.push(await start('raw', false), await start('raw-export', true));
  for (const t of targets) await load(t, 2); // warm-up
  const results = { raw: [], 'raw-export': [] };
  for (let round = 1; round <= Number(o.rounds); round++) {
    for (const t of round % 2 ? targets : [...targets].reverse()) {
      const r = await load(t, Number(o.duration));
      if (r.non2xx) throw new Error(`${t.name}: ${r.non2xx} answers were not 2xx`);
      results[t.name].push(r);
      console.log(
        `round ${round} ${t.name.padEnd(10)} ${r.rps.toFixed(0).padStart(6)} req/s  server CPU ${(r.mainUs + r.restUs).toFixed(1)} µs/req (request thread ${r.mainUs.toFixed(1)}, other threads ${r.restUs.toFixed(1)})  receiver ${r.sinkUs.toFixed(1)} µs/req, ${r.received.toFixed(0)} bytes/req`,
      );
    }
  }
  const ratios = results.raw.map((r, i) => results['raw-export'][i].rps / r.rps);
  for (const [name, rs] of Object.entries(results))
    console.log(
      `${name.padEnd(10)} median ${median(rs.map((r) => r.rps)).toFixed(0)} req/s  server CPU ${median(rs.map((r) => r.mainUs + r.restUs)).toFixed(1)} µs/req (request thread ${median(rs.map((r) => r.mainUs)).toFixed(1)}, other ${median(rs.map((r) => r.restUs)).toFixed(1)})  receiver ${median(rs.map((r) => r.sinkUs)).toFixed(1)} µs/req`,
    );
  console.log(
    `raw-export / raw: ${median(ratios).toFixed(3)} (median of the rounds' ratios; ${ratios.map((x) => x.toFixed(3)).join(' ')}): shipping ${o.bytes} bytes a request, nothing recorded`,
  );
} finally {
  for (const t of targets) t.child.kill();
  sink.kill();
}
