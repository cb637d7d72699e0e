// Helpers shared by the benchmark scripts (bench/*.mjs): PostgreSQL admin statements, free ports,
// waiting for a server, the bench metadata loaded into a Svc, wrk's POST script, and per-process
// CPU read from /proc. Not part of `npm test`.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { join } from 'node:path';

const ROOT = join(new URL('.', import.meta.url).pathname, '..');
const pg = createRequire(join(ROOT, 'package.json'))('pg');

/** Runs `text` on `url`'s server in its `postgres` database (CREATE/DROP DATABASE), or in `url`'s own when `own`. */
export async function adminSql(url, text, { own = false } = {}) {
  const u = new URL(url);
  if (!own) u.pathname = '/postgres';
  const c = new pg.Client({ connectionString: u.toString() });
  await c.connect();
  try {
    return await c.query(text);
  } finally {
    await c.end();
  }
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((res, rej) => {
    const s = net.createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

/** Waits until `url` answers below 500 (30 s at most); fails at once when `child` has exited. */
export async function waitHttp(url, child) {
  for (let i = 0; i < 300; i++) {
    if (child && child.exitCode !== null) throw new Error(`${url}: exited ${child.exitCode}`);
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (r.status < 500) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come up`);
}

/** Loads bench/svc-metadata.json into the Svc at `base` (replace_metadata as admin); throws when it is refused. */
export async function loadBenchMetadata(base, name = 'svc') {
  const metadata = readFileSync(join(ROOT, 'bench', 'svc-metadata.json'), 'utf8');
  const r = await fetch(`${base}/v1/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-role': 'admin' },
    body: `{"type":"replace_metadata","args":${metadata}}`,
  });
  if (r.status !== 200) throw new Error(`${name}: replace_metadata: ${r.status} ${await r.text()}`);
}

/** wrk's Lua script for POSTing `body` with `headers` */
export function wrkPostScript(body, headers) {
  return `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body)}\n${Object.entries(headers)
    .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
    .join('\n')}\n`;
}

/** CPU ticks (1/100 s, user + system) a process has used; 0 when it is gone. */
export function procTicks(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const parts = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return Number(parts[11]) + Number(parts[12]);
  } catch {
    return 0;
  }
}

/** CPU ms (user + system) of each thread of a process (tid → ms), from /proc/<pid>/task */
export function threadsMs(pid) {
  const out = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const st = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      out.set(tid, ((Number(f[11]) + Number(f[12])) * 1000) / 100);
    } catch {
      /* the thread ended */
    }
  }
  return out;
}

/** CPU time (ns) a process has run, from /proc/<pid>/schedstat; 0 when it is gone. */
export function cpuNs(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return 0;
  }
}

/** the median of the finite numbers of `xs` (the mean of the middle two for an even count); NaN for none */
export function median(xs) {
  const v = xs.filter((x) => Number.isFinite(x)).sort((x, y) => x - y);
  if (!v.length) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}
