/**
 * nextStep (src/delivery/worker.ts), the pure decision after a try, as upstream makes it: delivered
 * on success; retried after the retry interval while tries remain; a Retry-After honoured, once past
 * the retries too; error when exhausted. Delays are clamped, so the retry time is always a date
 * PostgreSQL can store. No clock: `now` is given.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextStep, type DeliveryJob } from '../../src/delivery/worker.js';
import type { DeliveryOutcome } from '../../src/delivery/http.js';
import { MAX_DELAY_SEC } from '../../src/core/limits.js';

const NOW = Date.UTC(2026, 0, 1);
const job = (tries: number, maxRetries = 2, retryIntervalSec = 10): DeliveryJob => ({
  id: '1',
  url: 'http://x/',
  headers: [],
  body: '{}',
  timeoutMs: 1000,
  logUrl: 'http://x/',
  tries,
  maxRetries,
  retryIntervalSec,
  context: undefined,
});
const failed = (retryAfterSec?: number): DeliveryOutcome => ({
  ok: false,
  status: 500,
  latencyMs: 1,
  ...(retryAfterSec !== undefined ? { retryAfterSec } : {}),
});
const at = (sec: number) => ({ kind: 'retry', at: new Date(NOW + sec * 1000) });

test('a success is delivered, whatever the tries', () => {
  for (const tries of [0, 2, 5]) assert.deepEqual(nextStep(job(tries), { ok: true, status: 200, latencyMs: 1 }, NOW), { kind: 'delivered' });
});

test('a failure with tries left is retried after the retry interval', () => {
  assert.deepEqual(nextStep(job(0), failed(), NOW), at(10));
  assert.deepEqual(nextStep(job(1, 2, 30), failed(), NOW), at(30));
  assert.deepEqual(nextStep(job(0), { ok: false, status: null, error: 'timed out', latencyMs: 1 }, NOW), at(10));
});

test('exhausted: error, unless the response asked for a Retry-After (honoured once)', () => {
  assert.deepEqual(nextStep(job(2), failed(), NOW), { kind: 'error' });
  assert.deepEqual(nextStep(job(2), failed(5), NOW), at(5));
  assert.deepEqual(nextStep(job(3), failed(5), NOW), { kind: 'error' });
  assert.deepEqual(nextStep(job(0, 0), failed(), NOW), { kind: 'error' });
});

test('Retry-After wins over the interval while tries remain', () => {
  assert.deepEqual(nextStep(job(0, 2, 10), failed(120), NOW), at(120));
  assert.deepEqual(nextStep(job(0, 2, 10), failed(0), NOW), at(0));
});

test('delays are clamped: negative to 0, huge to MAX_DELAY_SEC, not a number to 10 s', () => {
  assert.deepEqual(nextStep(job(0, 2, -5), failed(), NOW), at(0));
  assert.deepEqual(nextStep(job(0, 2, 1e300), failed(), NOW), at(MAX_DELAY_SEC));
  assert.deepEqual(nextStep(job(0, 2, Number.NaN), failed(), NOW), at(10));
  const far = nextStep(job(0), failed(Number.POSITIVE_INFINITY), NOW);
  assert.equal(far.kind, 'retry');
  assert.ok(far.kind === 'retry' && Number.isFinite(far.at.getTime()));
});
