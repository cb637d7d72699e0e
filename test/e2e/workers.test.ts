/**
 * `svc serve --workers 2` (node:cluster, src/server/cluster.ts) as a real process on a real database:
 * both workers serve the port; a metadata change made through one is visible on both within 1 s, and
 * on both at once when its request has answered (metadata is synchronous across the workers);
 * a subscription keeps updating while the other worker serves the mutations; an event is delivered
 * once; /v1/metrics aggregates both workers; a worker killed with SIGKILL is replaced and no request
 * after the replacement fails; SIGTERM to every process at once (a signalled process group) lets the
 * requests in flight finish, each worker drain once, and the primary exit 0.
 * Every request goes on a new TCP connection, so the cluster's round-robin spreads them over both workers.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createTestDatabase, sql, type TestDatabase } from '../helpers/db.js';
import { cleanEnv, startSvcProcess, type SvcProcess } from '../helpers/process.js';
import { Receiver } from '../helpers/receiver.js';
import { waitFor } from '../helpers/server.js';

let db: TestDatabase;
let proc: SvcProcess;
let url: string;
let receiver: Receiver;

/** POST on a fresh connection (no keep-alive): the cluster hands each connection to the next worker. */
function postFresh(path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; text: string }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(
      `${url}${path}`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...headers }, timeout: 20_000 },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, text });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(data);
  });
}

async function ok(path: string, body: unknown): Promise<any> {
  const r = await postFresh(path, body);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.errors, undefined, r.text);
  return r.body;
}

/** pids of the primary's worker processes */
function workerPids(): number[] {
  const pid = proc.child.pid!;
  const text = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text ? text.split(/\s+/).map(Number) : [];
}

const startupLines = () =>
  proc
    .output()
    .split('\n')
    .filter((l) => l.includes('"server_configuration"')).length;

before(async () => {
  db = await createTestDatabase();
  receiver = await new Receiver().start();
  await sql(db.url, 'create table note (id serial primary key, body text not null)');
  ({ proc, url } = await startSvcProcess(
    ['--workers', '2', '--connections', '8'],
    cleanEnv({ SVC_GRAPHQL_DATABASE_URL: db.url, SVC_GRAPHQL_ENABLED_LOG_TYPES: 'startup', SVC_GRAPHQL_LIVE_QUERIES_MULTIPLEXED_REFETCH_INTERVAL: '100' }),
  ));
  await waitFor('both workers to listen', async () => startupLines() >= 2, 60_000, 100);
  assert.equal(workerPids().length, 2);
});

after(async () => {
  await proc?.stop(10_000);
  await receiver?.close();
  await db?.drop();
});

test('the primary logs the cluster and the per-worker pool', () => {
  assert.match(proc.output(), /starting 2 workers \(4 connections each\)/);
});

test('a metadata change through one worker is visible on both within 1 s', { timeout: 30_000 }, async () => {
  await ok('/v1/query', { type: 'track_table', args: { schema: 'public', name: 'note' } });
  const started = Date.now();
  // six fresh connections: three per worker; each must know the table
  await waitFor(
    'every worker to serve the new table',
    async () => {
      const rs = await Promise.all(Array.from({ length: 6 }, () => postFresh('/v1/graphql', { query: '{ note { id } }' })));
      return rs.every((r) => r.status === 200 && r.body.data?.note !== undefined);
    },
    1_000,
    20,
  );
  assert.ok(Date.now() - started <= 1_000);
});

test('metadata is synchronous across the workers: the request right after a change, on either worker, sees it', { timeout: 60_000 }, async () => {
  // 10 rounds: a run_sql + track_table, then at once 4 fresh connections (both workers) query the
  // new table; with an asynchronous sync a worker that had not reloaded yet would answer
  // "field not found"
  for (let i = 0; i < 10; i++) {
    await ok('/v1/query', {
      type: 'bulk',
      args: [
        { type: 'run_sql', args: { sql: `create table sync_${i} (id int primary key); insert into sync_${i} values (${i})` } },
        { type: 'track_table', args: { table: `sync_${i}` } },
      ],
    });
    const rs = await Promise.all(Array.from({ length: 4 }, () => postFresh('/v1/graphql', { query: `{ sync_${i} { id } }` })));
    for (const r of rs) assert.deepEqual(r.body, { data: { [`sync_${i}`]: [{ id: i }] } }, `round ${i}: ${r.text}`);
  }
});

test('a subscription keeps updating while the other worker serves mutations', { timeout: 60_000 }, async () => {
  const client = createClient({ url: url.replace('http', 'ws') + '/v1/graphql', webSocketImpl: WebSocket, retryAttempts: 0 });
  const seen: number[] = [];
  let wake: (() => void) | undefined;
  const unsubscribe = client.subscribe<{ note_aggregate?: unknown; note: Array<{ id: number }> }>(
    { query: 'subscription { note(order_by: {id: asc}) { id } }' },
    {
      next: (m) => {
        seen.push(m.data!.note.length);
        wake?.();
      },
      error: (e) => assert.fail(`subscription error: ${JSON.stringify(e)}`),
      complete: () => undefined,
    },
  );
  const until = (n: number) =>
    waitFor(
      `the subscription to see ${n} notes`,
      async () => seen.at(-1) === n || (await new Promise<boolean>((r) => ((wake = () => r(seen.at(-1) === n)), setTimeout(() => r(seen.at(-1) === n), 200)))),
      10_000,
      0,
    );
  try {
    await until(0);
    for (let i = 1; i <= 6; i++) {
      await ok('/v1/graphql', { query: `mutation { insert_note_one(object: {body: "n${i}"}) { id } }` });
      await until(i);
    }
  } finally {
    unsubscribe();
    await client.dispose();
  }
});

test('an event is delivered once by the two workers', { timeout: 60_000 }, async () => {
  await ok('/v1/query', {
    type: 'create_event_trigger',
    args: { name: 'note_insert', table: { schema: 'public', name: 'note' }, webhook: receiver.url, insert: { columns: '*' } },
  });
  for (let i = 0; i < 5; i++) await ok('/v1/graphql', { query: `mutation { insert_note_one(object: {body: "e${i}"}) { id } }` });
  await waitFor('5 deliveries', async () => receiver.requests.length >= 5, 20_000);
  // a little longer than a fetch interval: no second delivery of any event shows up
  await sql(db.url, 'select pg_sleep(1.5)');
  const ids = receiver.requests.map((r) => (r.body as { id: string }).id);
  assert.equal(ids.length, 5, JSON.stringify(ids));
  assert.equal(new Set(ids).size, 5);
});

test('/v1/metrics aggregates both workers', { timeout: 30_000 }, async () => {
  const r = await new Promise<string>((resolve, reject) => {
    http
      .get(`${url}/v1/metrics`, { agent: false }, (res) => {
        let t = '';
        res.on('data', (c) => (t += c));
        res.on('end', () => resolve(t));
      })
      .on('error', reject);
  });
  // each worker counts itself once; the aggregation sums them
  assert.match(r, /^svc_worker_processes 2$/m, r.slice(0, 300));
});

test('a worker killed with SIGKILL is replaced; no request after the replacement fails', { timeout: 60_000 }, async () => {
  const [victim, survivor] = workerPids();
  process.kill(victim!, 'SIGKILL');
  await waitFor(
    'the replacement worker',
    async () => {
      const pids = workerPids();
      return pids.length === 2 && !pids.includes(victim!) && pids.includes(survivor!);
    },
    20_000,
    50,
  );
  await waitFor('the replacement to listen', async () => startupLines() >= 3, 30_000, 50);
  assert.match(proc.output(), new RegExp(`worker ${victim} died \\(SIGKILL\\); replacing it`));
  const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => postFresh('/v1/graphql', { query: `{ note(limit: 1, offset: ${i % 3}) { id } }` })));
  for (const r of rs) assert.equal(r.status, 200, r.text);
  for (const r of rs) assert.equal(r.body.errors, undefined, r.text);
});

test(
  'SIGTERM to the primary and every worker at once (a signalled process group or cgroup): requests in flight finish, each worker drains once, the primary exits 0',
  { timeout: 60_000 },
  async () => {
    // systemd's default KillMode=control-group, a terminal's Ctrl-C and `pkill` signal every process:
    // a worker gets the signal and, a moment later, the SIGTERM its primary forwards; that second
    // signal must not kill it mid-drain
    const pids = workerPids();
    assert.equal(pids.length, 2);
    const slowSql = 'select pg_sleep(1.5) /* workers-drain */';
    const running = async () => (await sql<{ n: number }>(db.url, `select count(*)::int as n from pg_stat_activity where query = $1`, [slowSql]))[0]!.n;
    // fresh connections: the cluster hands them to the workers in turn, so both have requests in flight
    const slow = Array.from({ length: 4 }, () => postFresh('/v1/query', { type: 'run_sql', args: { sql: slowSql } }));
    await waitFor('the four statements to run', async () => (await running()) === 4, 20_000, 20);
    // the workers' own signal first, then the primary's (which forwards SIGTERM to the draining
    // workers): two signals that arrived together could be merged into one by the kernel
    for (const pid of pids) process.kill(pid, 'SIGTERM');
    const draining = () =>
      proc
        .output()
        .split('\n')
        .filter((l) => l.includes('"shutting down: finishing in-flight requests"')).length;
    await waitFor('both workers to start draining', async () => draining() === 2, 10_000, 10);
    process.kill(proc.child.pid!, 'SIGTERM');
    const rs = await Promise.all(slow);
    for (const r of rs) assert.equal(r.status, 200, r.text);
    for (const r of rs) assert.equal(r.body.result_type, 'TuplesOk', r.text);
    const exit = await proc.exited;
    assert.equal(exit.code, 0, proc.output().slice(-2000));
    for (const pid of pids) assert.throws(() => process.kill(pid, 0), /ESRCH/);
    const lines = proc
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { type?: string; msg?: string; ms?: number });
    const shutdown = lines.filter((l) => l.type === 'shutdown');
    // each worker drained once (its "stopped" line, with the drain's duration) and ignored the second signal
    assert.equal(shutdown.filter((l) => l.msg === 'shutting down: finishing in-flight requests').length, 2, JSON.stringify(shutdown));
    assert.equal(shutdown.filter((l) => l.msg === 'stopped' && typeof l.ms === 'number').length, 2, JSON.stringify(shutdown));
    assert.equal(shutdown.filter((l) => l.msg === 'already shutting down: signal ignored').length, 2, JSON.stringify(shutdown));
  },
);
