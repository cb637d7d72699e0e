/** Environment values in metadata, one module (src/env.ts): templates, value_from_env, *_from_env. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fromEnv, resolveHeaders, resolveUrlTemplate, templateVariables, unsetVariables } from '../src/env.js';
import { SvcError } from '../src/errors.js';

const env = { BASE: 'http://h:1', TOKEN: 't' };

test('{{NAME}} templates, spaces allowed inside the braces', () => {
  assert.equal(resolveUrlTemplate('{{BASE}}/a/{{ TOKEN }}', env), 'http://h:1/a/t');
  assert.equal(resolveUrlTemplate('http://x/{{not a name}}', env), 'http://x/{{not a name}}');
  assert.deepEqual(templateVariables('{{A}}{{ B }}{A}'), ['A', 'B']);
});

test('an unset variable is 400 not-exists naming it', () => {
  for (const f of [
    () => resolveUrlTemplate('{{MISSING}}/x', env),
    () => fromEnv('MISSING', env),
    () => resolveHeaders([{ name: 'h', value_from_env: 'MISSING' }], env),
  ]) {
    assert.throws(
      f,
      (e: unknown) => e instanceof SvcError && e.status === 400 && e.code === 'not-exists' && e.message === 'environment variable "MISSING" not set',
    );
  }
});

test('headers: value or value_from_env', () => {
  assert.deepEqual(
    resolveHeaders(
      [
        { name: 'a', value: 'v' },
        { name: 'b', value_from_env: 'TOKEN' },
      ],
      env,
    ),
    [
      { name: 'a', value: 'v' },
      { name: 'b', value: 't' },
    ],
  );
  assert.deepEqual(resolveHeaders(undefined, env), []);
});

test('unsetVariables lists what a consistency check reports, in order', () => {
  assert.deepEqual(
    unsetVariables(
      {
        template: '{{BASE}}{{U1}}',
        names: [undefined, 'U2', 'TOKEN'],
        headers: [
          { name: 'h', value_from_env: 'U3' },
          { name: 'k', value: 'x' },
        ],
      },
      env,
    ),
    ['U1', 'U2', 'U3'],
  );
});
