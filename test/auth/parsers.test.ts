import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseExpires, parseMaxAge } from '../../src/server/auth/expiry.js';
import { getJsonPath, parseJsonPath } from '../../src/server/auth/jsonpath.js';
import { normalizeHeaders } from '../../src/server/auth/headers.js';

test("normalizeHeaders: a Node request's headers the same with the fast path; other objects checked", () => {
  // as Node's parser hands them over: lower-case token names, set-cookie as a list
  const node = { host: 'h', 'x-svc-role': 'user', 'x-svc-user-id': '1', 'set-cookie': ['a=1', 'b=2'], accept: '*/*' };
  assert.deepEqual([...normalizeHeaders(node, true)], [...normalizeHeaders(node)]);
  assert.equal(normalizeHeaders(node, true).get('set-cookie'), 'a=1');
  // a websocket connection_init payload: any spelling and JSON values, bad names dropped
  const payload = { 'X-Svc-Role': 'user', 'x-svc-role': 'other', ':authority': 'x', 'bad name': 'v', n: 5, o: { a: 1 } } as Record<string, unknown>;
  assert.deepEqual(
    [...normalizeHeaders(payload as never)],
    [
      ['x-svc-role', 'user'],
      ['n', '5'],
    ],
  );
});

test('parseMaxAge', () => {
  assert.equal(parseMaxAge('max-age=600'), 600);
  assert.equal(parseMaxAge('public, Max-Age="60"'), 60);
  assert.equal(parseMaxAge('s-maxage=5'), 5);
  assert.equal(parseMaxAge('s-maxage=5, max-age=7'), 7);
  assert.equal(parseMaxAge('max-age=abc, s-maxage=3'), 3);
  assert.equal(parseMaxAge('max-age=-1'), undefined);
  assert.equal(parseMaxAge('no-cache'), undefined);
  assert.equal(parseMaxAge(''), undefined);
});

test('parseExpires: strict "%a, %d %b %Y %T GMT"', () => {
  assert.equal(parseExpires('Mon, 30 Mar 2020 13:25:18 GMT'), Date.UTC(2020, 2, 30, 13, 25, 18));
  assert.equal(parseExpires('Sun, 1 Mar 2020 00:00:00 GMT'), Date.UTC(2020, 2, 1));
  for (const bad of [
    'Mon, 30 03 2020 13:25:18 UTC',
    'Mon, 30 Mar 2020 13:25:18 UTC',
    '2020-03-30T13:25:18Z',
    'Mon, 31 Feb 2020 13:25:18 GMT',
    'Mon, 30 Mar 2020 25:00:00 GMT',
    '',
  ]) {
    assert.equal(parseExpires(bad), undefined, bad);
  }
});

test('JSON paths', () => {
  assert.deepEqual(parseJsonPath('$'), []);
  assert.deepEqual(parseJsonPath('$.svc.claims'), ['svc', 'claims']);
  assert.deepEqual(parseJsonPath("$['https://x.io/claims'][0].a"), ['https://x.io/claims', 0, 'a']);
  assert.deepEqual(parseJsonPath('$["a\\"b"]'), ['a"b']);
  assert.deepEqual(parseJsonPath('a.b'), ['a', 'b']);
  for (const bad of ['', '$.', '$[x]', "$['a'", '$..a']) assert.throws(() => parseJsonPath(bad), Error, bad);
  const doc = { a: { b: [1, { c: 'x' }] } };
  assert.equal(getJsonPath(doc, ['a', 'b', 1, 'c']), 'x');
  assert.equal(getJsonPath(doc, ['a', 'x']), undefined);
  assert.equal(getJsonPath(doc, ['a', 'b', 5]), undefined);
  assert.equal(getJsonPath(doc, ['toString']), undefined);
  assert.equal(getJsonPath({}, ['__proto__']), undefined);
});
