/**
 * Issue 28 item 5: two remote schemas that define the same scalar, or an identical type, can both be
 * added (their types merge; as upstream v1.3, types are compared without their descriptions and
 * with fields as maps); only conflicting definitions are refused. Real graphql-js remotes on
 * 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildSchema } from 'graphql';
import { postGraphql, postQuery, startTestServer, type TestServer } from '../helpers/server.js';
import { startGraphQLServer, type GraphQLTestServer } from '../fixtures/remote/server.js';

let svc: TestServer;
let remote: GraphQLTestServer;

const schema = (sdl: string) => buildSchema(sdl);

before(async () => {
  svc = await startTestServer();
  remote = await startGraphQLServer({
    '/one': { schema: schema('scalar JSON "a point" type Point { a: Int j: JSON } type Query { one: Point }') },
    '/two': { schema: schema('scalar JSON type Point { a: Int j: JSON } type Query { two: Point }') },
    '/three': { schema: schema('scalar JSON type Point { a: String } type Query { three: Point }') },
  });
});

after(async () => {
  await svc?.close();
  await remote?.close();
});

const add = (name: string, path: string) => postQuery(svc.url, { type: 'add_remote_schema', args: { name, definition: { url: `${remote.url}${path}` } } });

test('the same scalar and an identical type merge; a conflicting type is refused', async () => {
  const one = await add('one', '/one');
  assert.equal(one.status, 200, one.text);
  const two = await add('two', '/two');
  assert.equal(two.status, 200, two.text);
  const three = await add('three', '/three');
  assert.equal(three.status, 400, three.text);
  assert.match(three.body.error, /types: \[ Point \] have mismatch/);
  const r = await postGraphql(svc.url, { query: '{ __type(name: "Point") { fields { name } } }' });
  assert.deepEqual(
    r.body.data.__type.fields.map((f: { name: string }) => f.name),
    ['a', 'j'],
  );
});
