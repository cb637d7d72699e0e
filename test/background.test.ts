/**
 * The engine's background workers (src/background.ts): started in order once the engine is ready,
 * stopped all at once with one grace period (a worker that does not stop in time is logged and
 * left behind, never blocking shutdown), and metadata sync is one of them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WorkerSet, type Worker } from '../src/background.js';
import { startTestServer } from './helpers/server.js';

const log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

test('start in order; stop all at once, within one grace period however many workers are slow', async (t) => {
  // simulated timers: no dependence on the machine's speed
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const events: string[] = [];
  const mk = (name: string, slowMs = 0, hang = false): Worker => ({
    name,
    start: async () => void events.push(`start ${name}`),
    stop: (grace) => {
      events.push(`stop ${name}`);
      if (hang) return new Promise(() => events.push(`hang ${name} ${grace}`));
      return new Promise((r) => setTimeout(() => (events.push(`stopped ${name}`), r()), slowMs));
    },
  });
  const warnings: string[] = [];
  const set = new WorkerSet({ ...log, warn: (_o: unknown, m: string) => void warnings.push(m) });
  await set.add(mk('a', 300));
  await set.add(mk('b', 0, true));
  await set.start();
  await set.add(mk('c', 300));
  await set.add(mk('d', 300));
  assert.deepEqual(events, ['start a', 'start b', 'start c', 'start d']);
  let done = false;
  const stopping = set.stop(300).then(() => (done = true));
  const settle = () => new Promise((r) => setImmediate(r));
  await settle();
  // all at once: every worker was asked to stop before any of them finished
  assert.deepEqual(
    events
      .slice(4)
      .filter((e) => e.startsWith('stop '))
      .sort(),
    ['stop a', 'stop b', 'stop c', 'stop d'],
  );
  assert.ok(events.includes('hang b 300'));
  assert.ok(!events.some((e) => e.startsWith('stopped')));
  t.mock.timers.tick(300);
  await settle();
  assert.deepEqual(events.filter((e) => e.startsWith('stopped')).sort(), ['stopped a', 'stopped c', 'stopped d']);
  // the hung one is waited for one grace period + 1 s, then logged and left behind
  t.mock.timers.tick(999);
  await settle();
  assert.equal(done, false);
  t.mock.timers.tick(1);
  await stopping;
  assert.deepEqual(warnings, ['worker b did not stop in time']);
  await set.stop(100); // idempotent
});

test('the engine runs metadata sync as a worker and stops it on close', async () => {
  const s = await startTestServer();
  try {
    assert.deepEqual(s.engine.workers.names, [
      'metadata-sync',
      'table-changes',
      'delivery:event-trigger',
      'cron-generator',
      'delivery:cron',
      'delivery:scheduled',
      'delivery:action',
    ]);
  } finally {
    await s.close();
  }
});
