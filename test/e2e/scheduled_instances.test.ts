/**
 * Scheduled triggers across processes (issue 15). Two `svc serve` processes on one database run on
 * the same simulated clock (--scheduler-clock, 60× real time) through an hour of a `* * * * *` cron
 * trigger plus 60 one-off events; one process is killed with SIGKILL half-way. Checked: no duplicate
 * rows in hdb_cron_events, every due event delivered exactly once (the receiver counts ids; a
 * duplicate would only be allowed for a request in flight at the kill, and is reported), nothing
 * lost. Then the delivery lag of 1,000 one-off events due at the same second (real clock, default
 * fetch interval, after a warm-up of 200 events), with one and with two processes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { after, before, test } from 'node:test';
import { createTestDatabase, sql, type TestDatabase } from '../helpers/db.js';
import { cleanEnv, startSvcProcess, type SvcProcess } from '../helpers/process.js';
import { query, waitFor } from '../helpers/server.js';
import { Receiver, type Received } from '../helpers/receiver.js';
import { percentile } from '../../src/delivery/worker.js';

let rx: Receiver;
const dbs: TestDatabase[] = [];
const procs: SvcProcess[] = [];

before(async () => {
  rx = await new Receiver().start();
});

after(async () => {
  for (const p of procs) await p.stop(5_000).catch(() => undefined);
  await rx?.close();
  for (const d of dbs) await d.drop();
});

const admin = { 'x-svc-role': 'admin' };
const iso = (ms: number) => new Date(ms).toISOString();
/** user + system CPU time of a process so far (ms) */
function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** receiver requests on `path` (and matching `pred`) by event id */
function byId(path: string, pred: (r: Received) => boolean = () => true): Map<string, Received[]> {
  const m = new Map<string, Received[]>();
  for (const r of rx.requests) if (r.path === path && pred(r)) m.set(r.body.id, [...(m.get(r.body.id) ?? []), r]);
  return m;
}

test('two processes over a simulated hour, one killed half-way: no duplicate rows, every due event delivered exactly once', { timeout: 300_000 }, async (t) => {
  const db = await createTestDatabase();
  dbs.push(db);
  const RATE = 60;
  const start = Date.parse('2031-06-01T00:00:00Z');
  const anchor = Date.now();
  const sim = (real = Date.now()) => start + (real - anchor) * RATE;
  const env = cleanEnv({
    SVC_GRAPHQL_DATABASE_URL: db.url,
    SVC_GRAPHQL_ENABLED_LOG_TYPES: 'startup',
    SVC_GRAPHQL_EVENTS_FETCH_INTERVAL: '100',
    SVC_GRAPHQL_EVENTS_LEASE_SECONDS: '2',
    SVC_GRAPHQL_PG_CONNECTIONS: '6',
    SVC_GRAPHQL_GRACEFUL_SHUTDOWN_TIMEOUT: '1',
    SVC_GRAPHQL_SCHEDULER_CLOCK: `${iso(start)}@${anchor}x${RATE}`,
  });
  const [a, b] = await Promise.all([startSvcProcess([], env), startSvcProcess([], env)]);
  procs.push(a.proc, b.proc);
  // slow answers (1.5 s real = 1.5 simulated minutes), so that the killed process has requests in flight
  rx.respond = () => ({ status: 200, delayMs: 1_500 });
  const created = sim();
  await query(
    a.url,
    {
      type: 'create_cron_trigger',
      args: { name: 'every_minute', webhook: `${rx.url}/cron`, schedule: '* * * * *', payload: { k: 'v' }, include_in_metadata: false },
    },
    admin,
  );
  // 60 one-off events, one per simulated minute, half of them created through each process
  const firstMinute = Math.ceil(created / 60_000) * 60_000;
  await Promise.all(
    [a, b].map((p, j) =>
      query(
        p.url,
        {
          type: 'bulk',
          args: Array.from({ length: 30 }, (_, i) => ({
            type: 'create_scheduled_event',
            args: { webhook: `${rx.url}/once`, schedule_at: iso(firstMinute + (2 * i + j) * 60_000 + 30_000), payload: { i: 2 * i + j } },
          })),
        },
        admin,
      ),
    ),
  );
  const end = firstMinute + 60 * 60_000; // the last cron event of the hour; the last one-off is at end - 30 s
  t.diagnostic(`trigger created at simulated ${iso(created)}; the hour runs to ${iso(end)}`);

  // half-way through the hour: SIGKILL one process
  await waitFor('half an hour simulated', async () => sim() >= firstMinute + 30 * 60_000, 120_000, 100);
  // the events leased to B when it dies: read just before the kill (one whose lease runs out right
  // after it may be claimed again by A at once) and just after (B may claim one in between)
  const leasedToB = async (): Promise<string[]> =>
    (
      await sql<{ id: string }>(
        db.url,
        "select 'cron:' || id as id from svc_catalog.hdb_cron_events where status = 'locked' and locked_by like '%:' || $1 || ':%' union all select 'once:' || id from svc_catalog.hdb_scheduled_events where status = 'locked' and locked_by like '%:' || $1 || ':%'",
        [String(b.proc.child.pid)],
      )
    ).map((r) => r.id);
  const before = await leasedToB();
  b.proc.child.kill('SIGKILL');
  await b.proc.exited;
  const leased = [{ n: new Set([...before, ...(await leasedToB())]).size }];
  t.diagnostic(`killed process B at simulated ${iso(sim())} with ${leased[0]!.n} events leased to it`);

  await waitFor('the hour simulated', async () => sim() >= end + 60_000, 150_000, 200);
  await waitFor(
    'every cron event of the hour delivered',
    async () => {
      const [r] = await sql(db.url, "select count(*)::int as n from svc_catalog.hdb_cron_events where scheduled_time <= $1 and status <> 'delivered'", [
        iso(end),
      ]);
      return r!.n === 0;
    },
    30_000,
    200,
  );
  await waitFor(
    'every one-off event delivered',
    async () => (await sql(db.url, "select count(*)::int as n from svc_catalog.hdb_scheduled_events where status <> 'delivered'"))[0]!.n === 0,
    30_000,
    200,
  );
  await new Promise((r) => setTimeout(r, 500));

  const dupRows = await sql(
    db.url,
    'select trigger_name, scheduled_time, count(*)::int as n from svc_catalog.hdb_cron_events group by 1, 2 having count(*) > 1',
  );
  const [gen] = await sql(
    db.url,
    "select count(*)::int as rows, count(*) filter (where status = 'delivered' and scheduled_time <= $1)::int as delivered, count(*) filter (where status = 'dead')::int as dead, count(*) filter (where status = 'error')::int as error from svc_catalog.hdb_cron_events",
    [iso(end)],
  );
  // the events of the hour (the clock has moved on since: later minutes may have been delivered too)
  const cron = byId('/cron', (r) => Date.parse(r.body.scheduled_time) <= end);
  const once = byId('/once');
  const dueCron = (await sql(db.url, 'select count(*)::int as n from svc_catalog.hdb_cron_events where scheduled_time <= $1', [iso(end)]))[0]!.n as number;
  const cronDup = [...cron.values()].filter((l) => l.length > 1).length;
  const onceDup = [...once.values()].filter((l) => l.length > 1).length;
  const minutes = new Set([...cron.values()].map((l) => l[0]!.body.scheduled_time));
  t.diagnostic(
    `cron: ${gen!.rows} rows generated (${dupRows.length} duplicate rows), ${dueCron} due in the hour, ${cron.size} delivered (${minutes.size} distinct minutes), ${cronDup} delivered twice, ${gen!.dead} dead, ${gen!.error} error`,
  );
  t.diagnostic(`one-off: 60 due, ${once.size} delivered, ${onceDup} delivered twice`);
  assert.deepEqual(dupRows, []);
  assert.equal(gen!.dead, 0);
  assert.equal(gen!.error, 0);
  assert.equal(cron.size, dueCron, 'every due cron event delivered');
  assert.equal(gen!.delivered, dueCron);
  assert.equal(minutes.size, dueCron, 'one delivery per scheduled minute');
  assert.ok(dueCron >= 60, `${dueCron} cron events due`);
  assert.equal(once.size, 60);
  // a duplicate only for a request in flight at the kill (its 2xx never recorded)
  assert.ok(cronDup + onceDup <= Number(leased[0]!.n), `${cronDup + onceDup} duplicates, at most the ${leased[0]!.n} leased at the kill`);
  for (const l of cron.values()) assert.deepEqual(l[0]!.body.payload, { k: 'v' });
  // the window keeps going after the hour
  const [future] = await sql<{ n: number }>(db.url, "select count(*)::int as n from svc_catalog.hdb_cron_events where status = 'scheduled'");
  assert.ok(future!.n >= 90 && future!.n <= 100, `${future!.n} future events in the window`);
  await a.proc.stop(5_000);
});

test(
  'lag of 1,000 one-off events due at the same second, one and two processes (real clock, default fetch interval and pool)',
  { timeout: 300_000 },
  async (t) => {
    for (const n of [1, 2]) {
      const db = await createTestDatabase();
      dbs.push(db);
      const env = cleanEnv({ SVC_GRAPHQL_DATABASE_URL: db.url, SVC_GRAPHQL_ENABLED_LOG_TYPES: 'startup', SVC_GRAPHQL_PG_CONNECTIONS: '10' });
      const ps = await Promise.all(Array.from({ length: n }, () => startSvcProcess([], env)));
      procs.push(...ps.map((p) => p.proc));
      rx.respond = () => ({ status: 200 });
      const cpu = () => ps.reduce((sum, p) => sum + cpuMs(p.proc.child.pid!), 0);
      let cpuDelivering = 0;
      const schedule = async (path: string, N: number, due: number) => {
        await query(
          ps[0]!.url,
          {
            type: 'bulk',
            args: Array.from({ length: N }, (_, i) => ({
              type: 'create_scheduled_event',
              args: { webhook: `${rx.url}${path}`, schedule_at: iso(due), payload: { i } },
            })),
          },
          admin,
        );
        assert.ok(Date.now() < due, 'created before they are due');
        const c0 = cpu();
        await rx.waitFor(N, (x) => x.path === path, 90_000);
        cpuDelivering = cpu() - c0;
      };
      // warm-up (both ends of the HTTP connections, the JIT): 200 events
      await schedule(`/warm${n}`, 200, Math.ceil((Date.now() + 3_000) / 1000) * 1000);
      const path = `/lag${n}`;
      const due = Math.ceil((Date.now() + 8_000) / 1000) * 1000;
      const N = 1000;
      await schedule(path, N, due);
      await waitFor(
        'all delivered',
        async () => (await sql(db.url, "select count(*)::int as n from svc_catalog.hdb_scheduled_events where status = 'delivered'"))[0]!.n === N + 200,
        30_000,
        100,
      );
      await new Promise((r) => setTimeout(r, 300));
      const got = byId(path);
      const lags = [...got.values()].map((l) => l[0]!.at - due);
      const dup = [...got.values()].filter((l) => l.length > 1).length;
      t.diagnostic(
        `${n} process(es): ${got.size} of ${N} delivered, ${dup} twice; lag due→receiver p50 ${percentile(lags, 50)} ms, p99 ${percentile(lags, 99)} ms, max ${Math.max(...lags)} ms, min ${Math.min(...lags)} ms; Svc CPU ${(cpuDelivering / N).toFixed(2)} ms per delivery (polls while waiting included); load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores`,
      );
      assert.equal(got.size, N);
      assert.equal(dup, 0);
      assert.ok(Math.min(...lags) >= 0, 'nothing delivered before its time');
      for (const p of ps) await p.proc.stop(5_000);
    }
  },
);
