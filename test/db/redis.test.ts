/** The shared store (--redis-url) against a real redis-server on 127.0.0.1:6379. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSharedStore } from '../../src/db/redis.js';
import type { Logger } from '../../src/core/logger.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

const url = process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

test('shared store: commands round-trip; close is idempotent', async () => {
  const store = await openSharedStore({ url, log: quiet });
  try {
    assert.equal(store.ready(), true);
    const key = `${store.prefix}test:${process.pid}:${Date.now()}`;
    await store.client.set(key, 'v', { EX: 5 });
    assert.equal(await store.client.get(key), 'v');
    await store.client.del(key);
    assert.equal(await store.client.get(key), null);
  } finally {
    await store.close();
    await store.close();
  }
});

test('shared store: an unreachable Redis fails the open within the connect timeout', async () => {
  const started = Date.now();
  await assert.rejects(openSharedStore({ url: 'redis://127.0.0.1:1', connectTimeoutMs: 500, log: quiet }));
  assert.ok(Date.now() - started < 3_000, `took ${Date.now() - started} ms`);
});
