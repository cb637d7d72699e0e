/**
 * The engine's background workers (src/background.ts): started in order once the engine is ready,
 * stopped in reverse order with a grace period (a worker that does not stop in time is logged and
 * left behind, never blocking shutdown), and metadata sync is one of them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WorkerSet, type Worker } from '../src/background.js';
import { startTestServer } from './helpers/server.js';

const log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

test('start in order, stop in reverse order, a hung worker bounded by the grace period', async () => {
  const events: string[] = [];
  const mk = (name: string, hang = false): Worker => ({
    name,
    start: async () => void events.push(`start ${name}`),
    stop: (grace) => (hang ? new Promise(() => events.push(`hang ${name} ${grace}`)) : Promise.resolve(void events.push(`stop ${name}`))),
  });
  const set = new WorkerSet(log);
  await set.add(mk('a'));
  await set.add(mk('b', true));
  await set.start();
  await set.add(mk('c'));
  const t0 = Date.now();
  await set.stop(100);
  assert.ok(Date.now() - t0 < 2_000);
  assert.deepEqual(events, ['start a', 'start b', 'start c', 'stop c', 'hang b 100', 'stop a']);
  await set.stop(100); // idempotent
});

test('the engine runs metadata sync as a worker and stops it on close', async () => {
  const s = await startTestServer();
  try {
    assert.deepEqual(s.engine.workers.names, ['metadata-sync', 'delivery:event-trigger', 'cron-generator', 'delivery:cron', 'delivery:scheduled']);
  } finally {
    await s.close();
  }
});
