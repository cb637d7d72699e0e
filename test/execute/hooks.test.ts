/**
 * The request pipeline's hooks (src/execute/hooks.ts): admit hooks run in order before `then`,
 * synchronously until one is asynchronous; a refusal stops the request (thrown when synchronous,
 * a rejection after an asynchronous hook); execute hooks wrap the executor in list order, may
 * change the call and may answer without calling `next`. The engine's own hooks (rate limit,
 * allow-list, time limit) are covered end to end by test/server/api_limits.test.ts and
 * allowlist_roles.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { admitThen, executeThrough, type ExecuteCall, type RequestHook } from '../../src/execute/hooks.js';
import type { ExecContext } from '../../src/execute/interface.js';

const ctx = {} as ExecContext;
const req = { query: '{ a }' };

test('admit hooks run in order, synchronously until one returns a promise', async () => {
  const seen: string[] = [];
  const hooks: RequestHook[] = [
    { name: 'a', admit: () => void seen.push('a') },
    { name: 'b', admit: () => Promise.resolve().then(() => void seen.push('b')) },
    { name: 'c', admit: () => void seen.push('c') },
  ];
  const out = admitThen(hooks, ctx, req, {}, () => (seen.push('then'), 'ok'));
  assert.ok(out instanceof Promise);
  assert.deepEqual(seen, ['a']);
  assert.equal(await out, 'ok');
  assert.deepEqual(seen, ['a', 'b', 'c', 'then']);
  // all synchronous: the answer itself, no promise
  assert.equal(
    admitThen([hooks[0]!, hooks[2]!], ctx, req, {}, () => 'sync'),
    'sync',
  );
  assert.equal(
    admitThen(undefined, ctx, req, {}, () => 'none'),
    'none',
  );
});

test('a refusal stops the request: thrown by a synchronous hook, rejected after an asynchronous one', async () => {
  let ran = false;
  const refuse: RequestHook = {
    name: 'refuse',
    admit: () => {
      throw new Error('refused');
    },
  };
  assert.throws(() => admitThen([refuse], ctx, req, {}, () => (ran = true)), /refused/);
  const later = admitThen([{ name: 'wait', admit: () => Promise.resolve() }, refuse], ctx, req, {}, () => (ran = true));
  await assert.rejects(later as Promise<unknown>, /refused/);
  assert.equal(ran, false);
});

test('execute hooks wrap the executor in order, may change the call, may answer without it', async () => {
  const seen: string[] = [];
  const call = { ctx, req, opts: {}, variables: {}, fail: () => 'failed' } as unknown as ExecuteCall;
  const outer: RequestHook = {
    name: 'outer',
    execute: async (c, next) => {
      seen.push('outer>');
      const r = await next({ ...c, variables: { x: 1 } });
      seen.push('<outer');
      return `[${r}]`;
    },
  };
  const inner: RequestHook = { name: 'inner', execute: (c, next) => (seen.push(`inner x=${String(c.variables.x)}`), next(c)) };
  const executor = (c: ExecuteCall) => (seen.push('executor'), Promise.resolve(`x=${String(c.variables.x)}`));
  assert.equal(await executeThrough([outer, { name: 'admit-only', admit: () => undefined }, inner], call, executor), '[x=1]');
  assert.deepEqual(seen, ['outer>', 'inner x=1', 'executor', '<outer']);
  const answered = await executeThrough([{ name: 'cache', execute: () => Promise.resolve('from the hook') }, outer], call, executor);
  assert.equal(answered, 'from the hook');
  assert.equal(await executeThrough([], call, executor), 'x=undefined');
});
