/**
 * Errors at the edge, one module (src/execute/errors.ts): the converter of anything thrown, the
 * "who sees internal details" rule, the envelope builder behind both HTTP bodies
 * (src/server/errors.ts) and the websocket protocols.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { adminDatabaseUrl } from './helpers/db.js';
import { SvcError } from '../src/errors.js';
import { asSvcError, errorObject, showInternalErrors } from '../src/execute/errors.js';
import { graphqlErrorBody, queryErrorBody, toSvcError } from '../src/server/errors.js';

let c: pg.Client;
before(async () => {
  c = new pg.Client({ connectionString: adminDatabaseUrl() });
  await c.connect();
});
after(() => c.end());

const pgError = async (text: string) =>
  c.query(text).then(
    () => assert.fail('no error'),
    (e: unknown) => e,
  );

test('one converter: the server and the executor convert alike', () => {
  assert.equal(toSvcError, asSvcError);
  const e = new SvcError(400, 'not-exists', 'x');
  assert.equal(asSvcError(e), e);
});

test("a database error is mapped to upstream's code; expected ones carry no internal details", async () => {
  const div = asSvcError(await pgError('select 1/0'));
  assert.equal(div.status, 400);
  assert.equal(div.code, 'data-exception');
  assert.equal(div.internal, undefined);
  const bad = asSvcError(await pgError('select * from no_such_table_at_all'));
  assert.equal(bad.status, 500);
  assert.equal(bad.code, 'unexpected');
  assert.equal(bad.message, 'database query error');
  assert.equal((bad.internal as { error: { status_code: string } }).error.status_code, '42P01');
});

test('a connection failure is a 503; anything else a 500 whose message never leaks', () => {
  const refused = asSvcError(Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:5432'), { code: 'ECONNREFUSED' }));
  assert.equal(refused.status, 503);
  assert.equal(refused.message, 'database connection error');
  const bug = asSvcError(new TypeError('cannot read properties of undefined (reading "x")'));
  assert.deepEqual([bug.status, bug.code, bug.message], [500, 'unexpected', 'an unexpected error occurred']);
  assert.deepEqual(bug.internal, { message: 'cannot read properties of undefined (reading "x")' });
  assert.equal(asSvcError('a string').code, 'unexpected');
});

test('internal details: everyone in dev mode, admin unless turned off, nobody else', () => {
  const cases: Array<[boolean, boolean, string | undefined, boolean]> = [
    [false, true, 'admin', true],
    [false, false, 'admin', false],
    [false, true, 'user', false],
    [false, true, undefined, false],
    [true, false, 'user', true],
    [true, false, undefined, true],
  ];
  for (const [devMode, adminInternalErrors, role, shown] of cases) {
    assert.equal(
      showInternalErrors({ devMode, adminInternalErrors }, role === undefined ? undefined : { role }),
      shown,
      JSON.stringify({ devMode, adminInternalErrors, role }),
    );
  }
});

test('one envelope builder: /v1/query, /v1/graphql and the legacy websocket object', () => {
  const e = new SvcError(400, 'not-exists', 'gone', '$.args', { detail: 1 });
  assert.deepEqual(queryErrorBody(e, false), { path: '$.args', error: 'gone', code: 'not-exists' });
  assert.deepEqual(queryErrorBody(e, true), { path: '$.args', error: 'gone', code: 'not-exists', internal: { detail: 1 } });
  assert.deepEqual(queryErrorBody(e, true), errorObject(e, { legacy: true, includeInternal: true }));
  assert.deepEqual(graphqlErrorBody(e, false), { errors: [{ extensions: { path: '$.args', code: 'not-exists' }, message: 'gone' }] });
  assert.deepEqual(graphqlErrorBody(e, true), { errors: [{ extensions: { path: '$.args', code: 'not-exists', internal: { detail: 1 } }, message: 'gone' }] });
});

test('a SvcError is an answer: no stack trace captured, other errors keep theirs', () => {
  const e = new SvcError(400, 'validation-failed', 'bad', '$.x');
  assert.equal(e.message, 'bad');
  assert.equal(e.name, 'SvcError');
  assert.ok(e instanceof Error);
  assert.doesNotMatch(e.stack ?? '', /\n\s+at /);
  // the limit is restored for everything else
  assert.match(new Error('bug').stack ?? '', /\n\s+at /);
});
