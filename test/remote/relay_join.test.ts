/**
 * Issue 28 item 5: remote relationships under a Relay connection (`/v1beta1/relay`) resolve as
 * under `/v1/graphql`: one request to the remote for every parent row of the connection. A real
 * remote (graphql-js) on 127.0.0.1, real PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { post, query, startTestServer, type TestServer } from '../helpers/server.js';
import { messagesSchema } from '../fixtures/remote/schemas.js';
import { startGraphQLServer, type GraphQLTestServer } from '../fixtures/remote/server.js';

let svc: TestServer;
let remote: GraphQLTestServer;

before(async () => {
  svc = await startTestServer();
  remote = await startGraphQLServer({ '/': { schema: messagesSchema() } });
  await query(svc.url, {
    type: 'bulk',
    args: [
      { type: 'run_sql', args: { sql: "create table profiles (id serial primary key, name text); insert into profiles (name) values ('alice'), ('bob');" } },
      { type: 'track_table', args: { schema: 'public', name: 'profiles' } },
      { type: 'add_remote_schema', args: { name: 'msgs', definition: { url: remote.url, forward_client_headers: false } } },
      {
        type: 'create_remote_relationship',
        args: { name: 'messageBasic', table: 'profiles', svc_fields: ['id'], remote_schema: 'msgs', remote_field: { message: { arguments: { id: '$id' } } } },
      },
    ],
  });
});

after(async () => {
  await svc?.close();
  await remote?.close();
});

test('a remote relationship inside a Relay connection', async () => {
  remote.reset();
  const r = await post(svc.url, '/v1beta1/relay', {
    query: '{ profiles_connection(order_by: {id: asc}) { edges { node { name messageBasic { id msg } } } } }',
  });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(
    r.body,
    {
      data: {
        profiles_connection: {
          edges: [{ node: { name: 'alice', messageBasic: { id: 1, msg: 'You win!' } } }, { node: { name: 'bob', messageBasic: { id: 2, msg: 'You lose!' } } }],
        },
      },
    },
    r.text,
  );
  assert.equal(remote.count(), 1, 'one remote request for the connection');
});
