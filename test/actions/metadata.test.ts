/**
 * Action metadata (issue 16): bad input answered with clear 400s and nothing stored (an output
 * type that is an input type, arguments of unknown types, duplicate names, permissions for unknown
 * actions, set_custom_types that would break an action); export/replace; an action whose handler
 * variable disappears is an inconsistent object, not a crash.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postGraphql, postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const admin = { 'x-svc-role': 'admin' };
const run = (body: unknown) => query(s.url, body, admin);
const raw = (body: unknown) => postQuery(s.url, body, admin);
const exported = () => run({ type: 'export_metadata', args: {} });
const actionNames = async () => ((await exported()).actions ?? []).map((a: { name: string }) => a.name);

const TYPES = {
  input_objects: [{ name: 'ThingInput', fields: [{ name: 'name', type: 'String!' }] }],
  objects: [{ name: 'Thing', fields: [{ name: 'id', type: 'Int!' }] }],
};
const create = (name: string, definition: Record<string, unknown>) => ({ type: 'create_action', args: { name, definition } });
const def = (extra: Record<string, unknown> = {}) => ({ output_type: 'Thing', handler: 'http://127.0.0.1:1/x', ...extra });

before(async () => {
  s = await startTestServer();
  await run({ type: 'set_custom_types', args: TYPES });
  await run(create('good', def({ arguments: [{ name: 'input', type: 'ThingInput!' }] })));
});

after(async () => {
  await s?.close();
  delete process.env.SVC_TEST_ACTION_URL;
});

async function rejected(body: unknown, status: number, code: string, error: string | RegExp): Promise<void> {
  const before = JSON.stringify(await exported());
  const r = await raw(body);
  assert.equal(r.status, status, r.text);
  assert.equal(r.body.code, code, r.text);
  if (typeof error === 'string') assert.equal(r.body.error, error);
  else assert.match(r.body.error, error);
  assert.equal(JSON.stringify(await exported()), before, 'nothing stored');
}

describe('bad input: clear 400s, nothing stored', () => {
  test('an output type that is an input type, or not defined', async () => {
    await rejected(
      create('bad', def({ output_type: 'ThingInput' })),
      400,
      'constraint-violation',
      'in action "bad"; the type: "ThingInput" is not an object type defined in custom types',
    );
    await rejected(
      create('bad', def({ output_type: '[Nope]' })),
      400,
      'constraint-violation',
      'in action "bad"; the type: "Nope" is not an object type defined in custom types',
    );
  });

  test('arguments of unknown types or of object types', async () => {
    await rejected(
      create('bad', def({ arguments: [{ name: 'a', type: 'Nope!' }] })),
      400,
      'constraint-violation',
      'in action "bad"; the type: "Nope" is not defined in custom types or it is not a scalar/enum/input_object',
    );
    await rejected(
      create('bad', def({ arguments: [{ name: 'a', type: 'Thing' }] })),
      400,
      'constraint-violation',
      /the type: "Thing" is not defined in custom types/,
    );
  });

  test("an output type named like a table's type", async () => {
    await run({ type: 'run_sql', args: { sql: 'create table "Clash" (id int primary key)' } });
    await run({ type: 'track_table', args: { table: 'Clash' } });
    await run({ type: 'set_custom_types', args: { ...TYPES, objects: [...TYPES.objects, { name: 'Clash', fields: [{ name: 'id', type: 'Int!' }] }] } });
    await rejected(
      create('bad', def({ output_type: 'Clash' })),
      400,
      'constraint-violation',
      'in action "bad"; the custom type "Clash" has the name of a table\'s GraphQL type',
    );
    await run({ type: 'set_custom_types', args: TYPES });
  });

  test('duplicate names', async () => {
    await rejected(create('good', def()), 400, 'already-exists', 'action with name "good" already exists');
    await rejected(
      create(
        'bad',
        def({
          arguments: [
            { name: 'a', type: 'Int' },
            { name: 'a', type: 'String' },
          ],
        }),
      ),
      400,
      'invalid-params',
      'the argument "a" is defined more than once',
    );
  });

  test('malformed definitions', async () => {
    await rejected(create('bad', { handler: 'http://x' }), 400, 'parse-failed', 'key "output_type" not found');
    await rejected(create('bad', def({ kind: 'later' })), 400, 'parse-failed', 'expected synchronous or asynchronous, but found later');
    await rejected(create('bad', def({ type: 'subscription' })), 400, 'parse-failed', 'expected mutation or query, but found subscription');
    await rejected(create('bad-name', def()), 400, 'parse-failed', '"bad-name" is not a valid GraphQL name');
  });

  test('permissions: unknown actions, twice, dropping what is not there', async () => {
    await rejected({ type: 'create_action_permission', args: { action: 'nope', role: 'user' } }, 400, 'not-exists', 'action with name "nope" does not exist');
    await run({ type: 'create_action_permission', args: { action: 'good', role: 'user' } });
    await rejected(
      { type: 'create_action_permission', args: { action: 'good', role: 'user' } },
      400,
      'already-exists',
      'permission for role: "user" is already defined on "good"',
    );
    await rejected(
      { type: 'drop_action_permission', args: { action: 'good', role: 'other' } },
      400,
      'not-exists',
      'permission for role: "other" is not defined on "good"',
    );
    await run({ type: 'drop_action_permission', args: { action: 'good', role: 'user' } });
  });

  test('update and drop of an unknown action', async () => {
    await rejected({ type: 'update_action', args: { name: 'nope', definition: def() } }, 400, 'not-exists', 'action with name "nope" does not exist');
    await rejected({ type: 'drop_action', args: { name: 'nope' } }, 400, 'not-exists', 'action with name "nope" does not exist');
  });

  test('set_custom_types that would break an action fails', async () => {
    await rejected({ type: 'set_custom_types', args: { objects: TYPES.objects } }, 400, 'unexpected', 'cannot continue due to new inconsistent metadata');
  });

  test('a custom object relationship named like a field of the object', async () => {
    await run({ type: 'run_sql', args: { sql: 'create table thing (id int primary key)' } });
    await run({ type: 'track_table', args: { table: 'thing' } });
    const objects = [{ ...TYPES.objects[0], relationships: [{ name: 'id', type: 'object', remote_table: 'thing', field_mapping: { id: 'id' } }] }];
    await rejected(
      { type: 'set_custom_types', args: { ...TYPES, objects } },
      400,
      'constraint-violation',
      'validation for the given custom types failed because the relationship "id" of object type "Thing" has the name of one of its fields',
    );
  });

  test('a bulk is all-or-nothing', async () => {
    await rejected({ type: 'bulk', args: [create('first', def()), create('second', def({ output_type: 'Nope' }))] }, 400, 'constraint-violation', /"second"/);
    assert.deepEqual(await actionNames(), ['good']);
  });
});

describe('export and replace', () => {
  test('actions and their permissions are exported and replaced with the metadata', async () => {
    await run({ type: 'create_action_permission', args: { action: 'good', role: 'user', comment: 'c' } });
    await run(create('asking', def({ type: 'query' })));
    const md = await exported();
    assert.deepEqual(
      md.actions.find((a: { name: string }) => a.name === 'good'),
      {
        name: 'good',
        definition: {
          arguments: [{ name: 'input', type: 'ThingInput!' }],
          output_type: 'Thing',
          headers: [],
          forward_client_headers: false,
          handler: 'http://127.0.0.1:1/x',
          type: 'mutation',
          kind: 'synchronous',
        },
        permissions: [{ role: 'user', comment: 'c' }],
      },
    );
    assert.equal(md.actions.find((a: { name: string }) => a.name === 'asking').definition.kind, undefined);
    await run({ type: 'clear_metadata', args: {} });
    assert.deepEqual(await actionNames(), []);
    await run({ type: 'replace_metadata', args: md });
    assert.deepEqual(await exported(), md);
    const r = await postGraphql(s.url, { query: '{ __schema { mutationType { fields { name } } } }' }, { 'x-svc-role': 'user' });
    assert.deepEqual(
      r.body.data.__schema.mutationType.fields.map((f: { name: string }) => f.name),
      ['good'],
    );
    // an action whose type is missing is refused by replace_metadata too
    const broken = { ...md, actions: [...md.actions, { name: 'broken', definition: def({ output_type: 'Nope' }) }] };
    const bad = await raw({ type: 'replace_metadata', args: broken });
    assert.equal(bad.status, 400);
    assert.deepEqual(await exported(), md);
    const twice = await raw({ type: 'replace_metadata', args: { ...md, actions: [...md.actions, md.actions[0]] } });
    assert.equal(twice.status, 400, twice.text);
    assert.match(JSON.stringify(twice.body.internal), /multiple declarations exist for the action/);
    // so is a malformed definition (reported, not a crash)
    const malformed = await raw({ type: 'replace_metadata', args: { ...md, actions: [...md.actions, { name: 'malformed', definition: { handler: 3 } }] } });
    assert.equal(malformed.status, 400, malformed.text);
    assert.match(JSON.stringify(malformed.body.internal), /in action \\"malformed\\"; key \\"output_type\\" not found/);
    assert.deepEqual(await exported(), md);
    await run({ type: 'drop_action', args: { name: 'asking' } });
  });
});

describe('inconsistency instead of a crash', () => {
  test('a handler variable that disappears makes the action inconsistent; it comes back with the variable', async () => {
    process.env.SVC_TEST_ACTION_URL = 'http://127.0.0.1:1';
    await run(create('templated', def({ handler: '{{SVC_TEST_ACTION_URL}}/x' })));
    delete process.env.SVC_TEST_ACTION_URL;
    await run({ type: 'reload_metadata', args: {} });
    const inc = await run({ type: 'get_inconsistent_metadata', args: {} });
    assert.equal(inc.is_consistent, false);
    assert.equal(inc.inconsistent_objects[0].type, 'action');
    assert.equal(inc.inconsistent_objects[0].reason, 'in action "templated"; environment variable "SVC_TEST_ACTION_URL" not set');
    const gone = await postGraphql(s.url, { query: 'mutation { templated { id } }' }, admin);
    assert.equal(gone.body.errors[0].extensions.code, 'validation-failed');
    // the rest of the schema still works
    const ok = await postGraphql(s.url, { query: '{ __typename }' }, admin);
    assert.deepEqual(ok.body, { data: { __typename: 'query_root' } });
    process.env.SVC_TEST_ACTION_URL = 'http://127.0.0.1:1';
    await run({ type: 'reload_metadata', args: {} });
    assert.equal((await run({ type: 'get_inconsistent_metadata', args: {} })).is_consistent, true);
    await run({ type: 'drop_action', args: { name: 'templated' } });
  });
});
