/** The API explorer's pure helpers (console/src/graphiql/headers.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseJsonObject, sessionOf } from '../../../console/src/graphiql/headers.ts';

test('editor JSON: empty means {}, anything but an object is refused with the editor named', () => {
  assert.deepEqual(parseJsonObject('  ', 'headers'), {});
  assert.deepEqual(parseJsonObject('{"a": 1}', 'variables'), { a: 1 });
  assert.throws(() => parseJsonObject('[1]', 'variables'), /^Error: variables: expected a JSON object/);
  assert.throws(() => parseJsonObject('{', 'headers'), /^Error: headers: not valid JSON/);
});

test('the explain session: X-Svc-* headers in lower case, without the admin secret', () => {
  assert.deepEqual(sessionOf({ 'X-Svc-Role': 'user', 'x-svc-user-id': 1, 'X-Svc-Admin-Secret': 's', Authorization: 'Bearer x' }), {
    'x-svc-role': 'user',
    'x-svc-user-id': '1',
  });
});
