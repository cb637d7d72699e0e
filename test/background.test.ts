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

test('start in order; stop all at once, within one grace period however many workers are slow', async () => {
  const events: string[] = [];
  const mk = (name: string, slowMs = 0, hang = false): Worker => ({
    name,
    start: async () => void events.push(`start ${name}`),
    stop: (grace) => {
      events.push(`stop ${name}`);
      if (hang) return new Promise(() => events.push(`hang ${name} ${grace}`));
      return new Promise((r) => setTimeout(r, slowMs));
    },
  });
  const set = new WorkerSet(log);
  await set.add(mk('a', 300));
  await set.add(mk('b', 0, true));
  await set.start();
  await set.add(mk('c', 300));
  await set.add(mk('d', 300));
  const t0 = Date.now();
  await set.stop(300);
  const took = Date.now() - t0;
  // one grace period (+1 s for the hung worker), not one per worker: 3 × 300 ms + 1.3 s in sequence
  assert.ok(took < 1_800, `stop took ${took} ms`);
  assert.deepEqual(events.slice(0, 3), ['start a', 'start b', 'start c']);
  assert.deepEqual(events.filter((e) => e.startsWith('stop')).sort(), ['stop a', 'stop b', 'stop c', 'stop d']);
  assert.ok(events.includes('hang b 300'));
  await set.stop(100); // idempotent
});

test('the engine runs metadata sync as a worker and stops it on close', async () => {
  const s = await startTestServer();
  try {
    assert.deepEqual(s.engine.workers.names, ['metadata-sync', 'delivery:event-trigger', 'cron-generator', 'delivery:cron', 'delivery:scheduled', 'delivery:action']);
  } finally {
    await s.close();
  }
});
