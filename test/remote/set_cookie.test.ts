/**
 * Issue 28 item 5: `Set-Cookie` of an action handler's and of a remote schema's answer reach the
 * client over HTTP, as upstream v1.3 passes them (reference/remote-schemas/schema-auth.rst). Real
 * handler and remote on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildSchema, introspectionFromSchema } from 'graphql';
import { postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';
import { Receiver } from '../helpers/receiver.js';
import { startGraphQLServer, type GraphQLTestServer, type Route } from '../fixtures/remote/server.js';

let s: TestServer;
let rx: Receiver;
let remote: GraphQLTestServer;
const routes: Record<string, Route> = {};

before(async () => {
  rx = await new Receiver().start();
  rx.reset(() => ({ status: 200, headers: { 'set-cookie': 'session=abc; Path=/; HttpOnly' }, body: '{"id": 1}' }));
  routes['/graphql'] = { raw: JSON.stringify({ data: introspectionFromSchema(buildSchema('type Query { who: String }')) }) };
  remote = await startGraphQLServer(routes);
  s = await startTestServer();
  await query(s.url, {
    type: 'bulk',
    args: [
      { type: 'set_custom_types', args: { objects: [{ name: 'Out', fields: [{ name: 'id', type: 'Int' }] }] } },
      { type: 'create_action', args: { name: 'login', definition: { kind: 'synchronous', output_type: 'Out', handler: `${rx.url}/login` } } },
      { type: 'add_remote_schema', args: { name: 'who', definition: { url: `${remote.url}/graphql` } } },
    ],
  });
  routes['/graphql'] = { raw: '{"data":{"who":"me"}}', headers: { 'set-cookie': 'remote=1; Path=/' } };
});

after(async () => {
  await s?.close();
  await rx?.close();
  await remote?.close();
});

async function cookiesOf(q: string): Promise<{ body: unknown; cookies: string[] }> {
  const res = await fetch(`${s.url}/v1/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: q }) });
  return { body: await res.json(), cookies: res.headers.getSetCookie() };
}

test("an action handler's Set-Cookie reaches the client", async () => {
  const r = await cookiesOf('mutation { login { id } }');
  assert.deepEqual(r.body, { data: { login: { id: 1 } } });
  assert.deepEqual(r.cookies, ['session=abc; Path=/; HttpOnly']);
});

test("a remote schema's Set-Cookie reaches the client", async () => {
  const r = await cookiesOf('{ who }');
  assert.deepEqual(r.body, { data: { who: 'me' } });
  assert.deepEqual(r.cookies, ['remote=1; Path=/']);
});

test('a request that calls no third party sets no cookie', async () => {
  const r = await cookiesOf('{ __typename }');
  assert.deepEqual(r.cookies, []);
  assert.equal((await postQuery(s.url, { type: 'export_metadata', args: {} })).status, 200);
});
