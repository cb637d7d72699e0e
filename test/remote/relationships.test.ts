/**
 * Remote relationships against a real GraphQL server (graphql-js on 127.0.0.1, ephemeral port):
 * object and array results, nested remote paths, client arguments merged with the configured ones,
 * `where`/`limit` on the parent, a non-admin role, errors, validation (400, nothing stored),
 * dependencies (remove_remote_schema, dropping a join column), and a parent result of 1,000 rows
 * answered with exactly one remote request (counted at the server).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postGraphql, postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';
import { messagesSchema } from '../fixtures/remote/schemas.js';
import { startGraphQLServer, type GraphQLTestServer } from '../fixtures/remote/server.js';

let svc: TestServer;
let remote: GraphQLTestServer;

const gql = async (q: string, headers: Record<string, string> = {}, variables?: Record<string, unknown>) =>
  (await postGraphql(svc.url, { query: q, variables }, headers)).body;
const rel = (name: string, svcFields: string[], remoteField: Record<string, unknown>, table = 'profiles') => ({
  type: 'create_remote_relationship',
  args: { name, table, svc_fields: svcFields, remote_schema: 'msgs', remote_field: remoteField },
});

before(async () => {
  svc = await startTestServer();
  remote = await startGraphQLServer({ '/': { schema: messagesSchema() } });
  await query(svc.url, {
    type: 'bulk',
    args: [
      {
        type: 'run_sql',
        args: {
          sql: `create table profiles (id serial primary key, name text);
                insert into profiles (name) values ('alice'), ('bob'), ('alice');
                create table many (id int primary key, msg_id int);
                insert into many select g, 1 + g % 3 from generate_series(1, 1000) g;
                create table teams (id int primary key);
                insert into teams values (1);
                alter table profiles add column team_id int references teams(id) default 1;`,
        },
      },
      { type: 'track_table', args: { schema: 'public', name: 'profiles' } },
      { type: 'track_table', args: { schema: 'public', name: 'many' } },
      { type: 'track_table', args: { schema: 'public', name: 'teams' } },
      {
        type: 'create_array_relationship',
        args: { table: 'teams', name: 'profiles', using: { foreign_key_constraint_on: { table: 'profiles', column: 'team_id' } } },
      },
      { type: 'add_remote_schema', args: { name: 'msgs', definition: { url: remote.url, forward_client_headers: false } } },
      rel('messageBasic', ['id'], { message: { arguments: { id: '$id' } } }),
      rel('messagesNested', ['id'], { messages: { arguments: { where: { id: { eq: '$id' } } } } }),
      rel('messagesByName', ['name'], { messages: { arguments: { where: { name: { eq: '$name' } } } } }),
      rel('userNested', ['id', 'name'], {
        user: { arguments: { user_id: '$id' }, field: { userMessages: { arguments: { whered: { name: { eq: '$name' } } } } } },
      }),
      rel('message', ['msg_id'], { message: { arguments: { id: '$msg_id' } } }, 'many'),
      {
        type: 'create_select_permission',
        args: { table: 'profiles', role: 'user', permission: { columns: ['id', 'name'], filter: { id: { _eq: 'X-Svc-User-Id' } } } },
      },
      { type: 'create_select_permission', args: { table: 'profiles', role: 'nameonly', permission: { columns: ['name'], filter: {} } } },
    ],
  });
});

after(async () => {
  await svc?.close();
  await remote?.close();
});

describe('execution', () => {
  test('object relationship: one remote request for all parent rows', async () => {
    remote.reset();
    const r = await gql('{ profiles(order_by: {id: asc}) { id messageBasic { id name msg } } }');
    assert.deepEqual(r, {
      data: {
        profiles: [
          { id: 1, messageBasic: { id: 1, name: 'alice', msg: 'You win!' } },
          { id: 2, messageBasic: { id: 2, name: 'bob', msg: 'You lose!' } },
          { id: 3, messageBasic: { id: 3, name: 'alice', msg: 'Another alice' } },
        ],
      },
    });
    assert.equal(remote.count(), 1);
  });

  test('array relationships, client arguments merged with the configured ones, parent where/limit', async () => {
    remote.reset();
    const r = await gql(`{
      profiles(where: {name: {_eq: "alice"}}, order_by: {id: asc}, limit: 1) {
        id
        messagesByName(includes: {id: [3]}) { id }
        all: messagesByName { id }
        messagesNested { msg }
      }
    }`);
    assert.deepEqual(r, { data: { profiles: [{ id: 1, messagesByName: [{ id: 3 }], all: [{ id: 1 }, { id: 3 }], messagesNested: [{ msg: 'You win!' }] }] } });
    assert.equal(remote.count(), 1, 'every relationship of the request in one document');
  });

  test('a nested remote path; variables and fragments in the remote selection', async () => {
    const r = await gql(
      'query ($ids: [Int]) { profiles(order_by: {id: asc}) { name userNested(includes: {id: $ids}) { ...M } } } fragment M on Message { id }',
      {},
      { ids: [1, 2] },
    );
    assert.deepEqual(r, {
      data: {
        profiles: [
          { name: 'alice', userNested: [{ id: 1 }] },
          { name: 'bob', userNested: [{ id: 2 }] },
          { name: 'alice', userNested: [] },
        ],
      },
    });
  });

  test('remote relationships under a table relationship, and aggregates untouched', async () => {
    const r = await gql('{ teams { profiles(order_by: {id: desc}, limit: 2) { messageBasic { name } } } profiles_aggregate { aggregate { count } } }');
    assert.deepEqual(r, {
      data: {
        teams: [{ profiles: [{ messageBasic: { name: 'alice' } }, { messageBasic: { name: 'bob' } }] }],
        profiles_aggregate: { aggregate: { count: 3 } },
      },
    });
  });

  test('a role sees the relationship when it may read the join columns', async () => {
    const r = await gql('{ profiles { id messageBasic { name } } }', { 'X-Svc-Role': 'user', 'X-Svc-User-Id': '2' });
    assert.deepEqual(r, { data: { profiles: [{ id: 2, messageBasic: { name: 'bob' } }] } });
    const denied = await gql('{ profiles { messageBasic { name } } }', { 'X-Svc-Role': 'nameonly' });
    assert.equal(denied.errors[0].extensions.code, 'validation-failed');
    // messagesByName joins on `name`, which this role reads
    assert.deepEqual((await gql('{ profiles(limit: 1) { messagesByName { id } } }', { 'X-Svc-Role': 'nameonly' })).data, {
      profiles: [{ messagesByName: [{ id: 1 }, { id: 3 }] }],
    });
  });

  test('errors of the remote: "Errors from remote server" with the remote errors', async () => {
    const r = await gql('{ profiles { messageBasic { errorMsg } } }');
    assert.equal(r.errors[0].message, 'Errors from remote server');
    assert.equal(r.errors[0].extensions.code, 'unexpected');
    assert.equal(r.errors[0].extensions.internal.errors.length, 3);
  });

  test('remote relationships in the rows a mutation returns', async () => {
    const r = await gql('mutation { update_profiles(where: {id: {_lte: 2}}, _set: {team_id: 1}) { affected_rows returning { id messageBasic { msg } } } }');
    assert.deepEqual(r, {
      data: {
        update_profiles: {
          affected_rows: 2,
          returning: [
            { id: 1, messageBasic: { msg: 'You win!' } },
            { id: 2, messageBasic: { msg: 'You lose!' } },
          ],
        },
      },
    });
    const one = await gql('mutation { update_profiles_by_pk(pk_columns: {id: 3}, _set: {team_id: 1}) { id messageBasic { id } } }');
    assert.deepEqual(one, { data: { update_profiles_by_pk: { id: 3, messageBasic: { id: 3 } } } });
  });

  test('1,000 parent rows: exactly one remote request', async () => {
    remote.reset();
    const r = await gql('{ many(order_by: {id: asc}) { id message { id } } }');
    assert.equal(r.data.many.length, 1000);
    assert.deepEqual(r.data.many[0], { id: 1, message: { id: 2 } });
    assert.deepEqual(r.data.many[999], { id: 1000, message: { id: 2 } });
    assert.equal(remote.count(), 1, 'one request for 1,000 rows');
    // distinct join values are asked once
    assert.equal((remote.requests[0]!.body.query!.match(/message\(/g) ?? []).length, 3);
  });
});

describe('metadata', () => {
  const remoteRels = async () =>
    (await query(svc.url, { type: 'export_metadata', args: {} })).tables
      .find((t: { table: { name: string } }) => t.table.name === 'profiles')
      .remote_relationships.map((r: { name: string }) => r.name)
      .sort();

  test('bad relationships: 400 with the reason, nothing stored', async () => {
    const before = await remoteRels();
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...rel('x', ['id'], { message: { arguments: { id: '$id' } } }).args, remote_schema: 'nope' }, /remote schema with name "nope" not found/],
      [rel('x', ['id_wrong'], { message: { arguments: { id: '$id_wrong' } } }).args, /field with name "id_wrong" not found in table "profiles"/],
      [rel('x', ['id'], { message_wrong: { arguments: { id: '$id' } } }).args, /remote field with name "message_wrong" and type "Query" not found/],
      [rel('x', ['id'], { message: { arguments: { id_wrong: '$id' } } }).args, /argument with name "id_wrong" not found/],
      [rel('x', ['id', 'name'], { message: { arguments: { id: '$name' } } }).args, /expected type "Int!" but got "String"/],
      [rel('x', ['id'], { message: { arguments: { id: 'abc' } } }).args, /expected type "Int" but got/],
      [rel('x', ['id'], { message: { arguments: { id: '$nope' } } }).args, /variable "nope" is not found/],
      [rel('x', ['id'], { messages: { arguments: { where: { id: { xyz: '$id' } } } } }).args, /field with name "xyz" not found/],
      [rel('x', ['id'], { messages: { arguments: { where: { id: { eq: ['$id'] } } } } }).args, /expected type "Int" but got a list/],
      [rel('messageBasic', ['id'], { message: { arguments: { id: '$id' } } }).args, /already exists/],
    ];
    for (const [args, re] of cases) {
      const r = await postQuery(svc.url, { type: 'create_remote_relationship', args });
      assert.equal(r.status, 400, JSON.stringify(args));
      assert.match(r.body.error, re);
    }
    assert.deepEqual(await remoteRels(), before);
  });

  test('update and delete; remove_remote_schema is refused while used; dropping a join column needs cascade', async () => {
    await query(svc.url, rel('tmp', ['id'], { message: { arguments: { id: '$id' } } }));
    await query(svc.url, {
      type: 'update_remote_relationship',
      args: { ...rel('tmp', ['id'], { messages: { arguments: { where: { id: { gt: '$id' } } } } }).args },
    });
    assert.deepEqual((await gql('{ profiles(where: {id: {_eq: 2}}) { tmp { id } } }')).data, { profiles: [{ tmp: [{ id: 3 }] }] });
    let r = await postQuery(svc.url, { type: 'remove_remote_schema', args: { name: 'msgs' } });
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'dependency-error');
    assert.match(r.body.error, /remote_relationship profiles\.messageBasic/);
    await query(svc.url, { type: 'delete_remote_relationship', args: { table: 'profiles', name: 'tmp' } });
    r = await postQuery(svc.url, { type: 'delete_remote_relationship', args: { table: 'profiles', name: 'tmp' } });
    assert.equal(r.status, 400);
    // a column used by a remote relationship
    await query(svc.url, { type: 'run_sql', args: { sql: 'alter table profiles add column pid int default 1' } });
    await query(svc.url, rel('byPid', ['pid'], { message: { arguments: { id: '$pid' } } }));
    r = await postQuery(svc.url, { type: 'run_sql', args: { sql: 'alter table profiles drop column pid' } });
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'dependency-error');
    assert.match(r.body.error, /remote_relationship profiles\.byPid/);
    await query(svc.url, { type: 'run_sql', args: { sql: 'alter table profiles drop column pid', cascade: true } });
    assert.ok(!(await remoteRels()).includes('byPid'));
  });

  test('export/replace keep remote relationships', async () => {
    const md = await query(svc.url, { type: 'export_metadata', args: {} });
    const profiles = md.tables.find((t: { table: { name: string } }) => t.table.name === 'profiles');
    assert.deepEqual(
      profiles.remote_relationships.find((r: { name: string }) => r.name === 'messageBasic'),
      {
        name: 'messageBasic',
        definition: { svc_fields: ['id'], remote_schema: 'msgs', remote_field: { message: { arguments: { id: '$id' } } } },
      },
    );
    await query(svc.url, { type: 'replace_metadata', args: md });
    assert.deepEqual((await gql('{ profiles(where: {id: {_eq: 1}}) { messageBasic { id } } }')).data, { profiles: [{ messageBasic: { id: 1 } }] });
  });
});
