/** Issue 36 item 2: allow-lists per role (Hasura v2's scope), on a real server over PostgreSQL. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postGraphql, postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';

const SETUP = {
  type: 'bulk',
  args: [
    {
      type: 'run_sql',
      args: {
        sql: "create table author (id serial primary key, first_name text, last_name text); insert into author (first_name, last_name) values ('George', 'Martin'), ('Paulo', 'Coelho');",
      },
    },
    { type: 'track_table', args: { name: 'author' } },
    ...['user', 'guest'].map((role) => ({
      type: 'create_select_permission',
      args: { table: 'author', role, permission: { columns: ['id', 'first_name', 'last_name'], filter: {} } },
    })),
  ],
};

// v2's test_allowlist.py queries: q0 in no collection, q1 only in c1, q2 in both, q3 only in c2
const q0 = 'query { author { first_name } }';
const q1 = 'query { author { first_name last_name } }';
const q2 = 'query { author { __typename last_name } }';
const q3 = 'query { author { id } }';
const NOT_ALLOWED = { errors: [{ extensions: { path: '$', code: 'validation-failed' }, message: 'query is not allowed' }] };

describe('allow-list scopes', () => {
  let s: TestServer;
  const allowlist = async () => (await query(s.url, { type: 'export_metadata', args: {} })).allowlist;
  const allowed = async (role: string, q: string) => {
    const r = await postGraphql(s.url, { query: q }, { 'x-svc-role': role });
    if (r.body.errors) assert.deepEqual(r.body, NOT_ALLOWED);
    return r.body.errors === undefined;
  };
  const matrix = async () => {
    const out: Record<string, boolean[]> = {};
    for (const role of ['user', 'guest', 'admin']) out[role] = await Promise.all([q0, q1, q2, q3].map((q) => allowed(role, q)));
    return out;
  };

  before(async () => {
    s = await startTestServer({ enableAllowlist: true });
    await query(s.url, SETUP);
    await query(s.url, {
      type: 'create_query_collection',
      args: {
        name: 'collection_1',
        definition: {
          queries: [
            { name: 'q1', query: q1 },
            { name: 'q2', query: q2 },
          ],
        },
      },
    });
    await query(s.url, {
      type: 'create_query_collection',
      args: {
        name: 'collection_2',
        definition: {
          queries: [
            { name: 'q2', query: q2 },
            { name: 'q3', query: q3 },
          ],
        },
      },
    });
  });
  after(() => s?.close());

  test('by role: a global collection for everyone, a scoped one for its roles, admin always', async () => {
    assert.deepEqual(await matrix(), { user: [false, false, false, false], guest: [false, false, false, false], admin: [true, true, true, true] });
    await query(s.url, { type: 'add_collection_to_allowlist', args: { collection: 'collection_1', scope: { global: true } } });
    await query(s.url, { type: 'add_collection_to_allowlist', args: { collection: 'collection_2', scope: { global: false, roles: ['user'] } } });
    assert.deepEqual(await allowlist(), [
      { collection: 'collection_1', scope: { global: true } },
      { collection: 'collection_2', scope: { global: false, roles: ['user'] } },
    ]);
    assert.deepEqual(await matrix(), { user: [false, true, true, true], guest: [false, true, true, false], admin: [true, true, true, true] });
    // update_scope_of_collection_in_allowlist: collection_1 now only for guest, collection_2 global
    await query(s.url, { type: 'update_scope_of_collection_in_allowlist', args: { collection: 'collection_1', scope: { global: false, roles: ['guest'] } } });
    await query(s.url, { type: 'update_scope_of_collection_in_allowlist', args: { collection: 'collection_2', scope: { global: true } } });
    assert.deepEqual(await matrix(), { user: [false, false, true, true], guest: [false, true, true, true], admin: [true, true, true, true] });
  });

  test('adding again keeps the scope and says how to change it (v2); v1.3 entries (no scope) export as written', async () => {
    const before = await allowlist();
    const r = await query(s.url, { type: 'add_collection_to_allowlist', args: { collection: 'collection_1', scope: { global: true } } });
    assert.deepEqual(r, {
      message: 'collection "collection_1" already exists in the allowlist, scope ignored; to change scope, use update_scope_of_collection_in_allowlist',
    });
    assert.deepEqual(await query(s.url, { type: 'add_collection_to_allowlist', args: { collection: 'collection_1' } }), { message: 'success' });
    assert.deepEqual(await allowlist(), before);
    await query(s.url, { type: 'drop_collection_from_allowlist', args: { collection: 'collection_1' } });
    await query(s.url, { type: 'add_collection_to_allowlist', args: { collection: 'collection_1' } });
    assert.deepEqual((await allowlist())[0], { collection: 'collection_1' });
  });

  test('export → replace_metadata round trip keeps the scopes; duplicates are refused', async () => {
    const md = await query(s.url, { type: 'export_metadata', args: {} });
    await query(s.url, { type: 'replace_metadata', args: md });
    assert.deepEqual(await query(s.url, { type: 'export_metadata', args: {} }), md);
    const dup = await postQuery(s.url, {
      type: 'replace_metadata',
      args: { ...md, allowlist: [{ collection: 'collection_1' }, { collection: 'collection_1', scope: { global: true } }] },
    });
    assert.deepEqual(dup.body, { path: '$', error: 'multiple declarations exist for the following allowlist entries: collection_1', code: 'parse-failed' });
    const badScope = await postQuery(s.url, {
      type: 'replace_metadata',
      args: { ...md, allowlist: [{ collection: 'collection_1', scope: { global: false, roles: [] } }] },
    });
    assert.equal(badScope.status, 400);
    assert.equal(badScope.body.error, 'parsing NonEmpty failed, unexpected empty list');
    assert.deepEqual(await query(s.url, { type: 'export_metadata', args: {} }), md);
  });

  test("bad input for every op: v2's messages, the metadata unchanged", async () => {
    const md = await query(s.url, { type: 'export_metadata', args: {} });
    const cases: Array<[string, unknown, { path: string; error: string; code: string }]> = [
      ['add_collection_to_allowlist', { scope: { global: true } }, { path: '$', error: 'key "collection" not found', code: 'parse-failed' }],
      [
        'add_collection_to_allowlist',
        { collection: 'collection_1', scope: { global: false } },
        { path: '$.scope', error: 'key "roles" not found', code: 'parse-failed' },
      ],
      [
        'add_collection_to_allowlist',
        { collection: 'collection_1', scope: { global: false, roles: [] } },
        { path: '$.scope.roles', error: 'parsing NonEmpty failed, unexpected empty list', code: 'parse-failed' },
      ],
      [
        'add_collection_to_allowlist',
        { collection: 'collection_1', scope: { global: true, roles: ['foo'] } },
        { path: '$.scope', error: 'roles are not allowed when global is true', code: 'parse-failed' },
      ],
      ['add_collection_to_allowlist', { collection: 'collection_1', scope: {} }, { path: '$.scope', error: 'key "global" not found', code: 'parse-failed' }],
      [
        'add_collection_to_allowlist',
        { collection: 'collection_1', scope: { global: false, roles: ['a', 'a'] } },
        { path: '$.scope', error: 'duplicate roles are not allowed', code: 'parse-failed' },
      ],
      [
        'add_collection_to_allowlist',
        { collection: 'nope', scope: { global: true } },
        { path: '$.args', error: 'query collection with name "nope" does not exists', code: 'not-exists' },
      ],
      ['update_scope_of_collection_in_allowlist', { scope: { global: true } }, { path: '$', error: 'key "collection" not found', code: 'parse-failed' }],
      ['update_scope_of_collection_in_allowlist', { collection: 'collection_1' }, { path: '$', error: 'key "scope" not found', code: 'parse-failed' }],
      [
        'update_scope_of_collection_in_allowlist',
        { collection: 'collection_1', scope: { global: 'yes' } },
        { path: '$.scope.global', error: 'parsing Bool failed, expected Boolean, but encountered String', code: 'parse-failed' },
      ],
      [
        'update_scope_of_collection_in_allowlist',
        { collection: 'nope', scope: { global: true } },
        { path: '$.args', error: 'collection "nope" doesn\'t exist in the allowlist', code: 'not-found' },
      ],
    ];
    for (const [type, args, expected] of cases) {
      const r = await postQuery(s.url, { type, args });
      assert.equal(r.status, 400, `${type} ${JSON.stringify(args)}`);
      assert.deepEqual(r.body, expected, `${type} ${JSON.stringify(args)}`);
    }
    assert.deepEqual(await query(s.url, { type: 'export_metadata', args: {} }), md);
  });

  test('drop_query_collection with cascade removes a scoped entry too', async () => {
    await query(s.url, { type: 'update_scope_of_collection_in_allowlist', args: { collection: 'collection_2', scope: { global: false, roles: ['user'] } } });
    await query(s.url, { type: 'drop_query_collection', args: { collection: 'collection_2', cascade: true } });
    assert.deepEqual(await allowlist(), [{ collection: 'collection_1' }]);
    assert.equal(await allowed('user', q3), false);
  });
});
