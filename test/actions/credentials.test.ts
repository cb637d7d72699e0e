/**
 * Issue 30 item 4: one list of credential headers (src/http/credentials.ts) for every outbound
 * forward and for what is stored or shown. A client authenticating with the admin secret under
 * either name (`X-Svc-Admin-Secret`, the legacy `X-Svc-Access-Key`) calls a synchronous action, an
 * asynchronous action and a remote schema, all with `forward_client_headers: true`: no handler or
 * remote receives either name, `hdb_action_log.request_headers` does not hold them, and the
 * debugging info of a failed call shows `Authorization` redacted. Real handler and remote on
 * 127.0.0.1, real PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { postGraphql, query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';
import { Receiver, type Received, type Reply } from '../helpers/receiver.js';
import { helloSchema } from '../fixtures/remote/schemas.js';
import { startGraphQLServer, type GraphQLTestServer } from '../fixtures/remote/server.js';

const SECRET = 'top-secret-value';
let s: TestServer;
let rx: Receiver;
let remote: GraphQLTestServer;

const viaAccessKey = { 'x-svc-access-key': SECRET, authorization: 'Bearer client-token', 'x-custom': 'c' };
const viaAdminSecret = { 'x-svc-admin-secret': SECRET, authorization: 'Bearer client-token', 'x-custom': 'c' };

function handler(r: Received): Reply {
  if (r.path === '/broken') return { status: 200, body: '{"unknown_field": 1}' };
  return { status: 200, body: '{"id": 1}' };
}

before(async () => {
  rx = await new Receiver().start();
  rx.reset(handler);
  remote = await startGraphQLServer({ '/graphql': { schema: helloSchema() } });
  s = await startTestServer({ adminSecret: SECRET, eventsFetchInterval: 100 });
  const def = (name: string, kind: string, path: string) => ({
    type: 'create_action',
    args: { name, definition: { kind, output_type: 'Out', handler: `${rx.url}${path}`, forward_client_headers: true } },
  });
  await query(
    s.url,
    {
      type: 'bulk',
      args: [
        { type: 'set_custom_types', args: { objects: [{ name: 'Out', fields: [{ name: 'id', type: 'Int' }] }] } },
        def('sync_call', 'synchronous', '/sync'),
        def('async_call', 'asynchronous', '/async'),
        def('broken_call', 'synchronous', '/broken'),
        { type: 'add_remote_schema', args: { name: 'echo', definition: { url: `${remote.url}/graphql`, forward_client_headers: true } } },
      ],
    },
    { 'x-svc-admin-secret': SECRET },
  );
});

after(async () => {
  await s?.close();
  await rx?.close();
  await remote?.close();
});

const noSecret = (h: Record<string, unknown>) => {
  assert.equal(h['x-svc-access-key'], undefined, 'legacy admin-secret header forwarded');
  assert.equal(h['x-svc-admin-secret'], undefined, 'admin-secret header forwarded');
  assert.ok(!JSON.stringify(h).includes(SECRET), 'the secret reached a third party');
};

describe('the admin secret never leaves Svc', () => {
  for (const [label, headers] of [
    ['X-Svc-Access-Key', viaAccessKey],
    ['X-Svc-Admin-Secret', viaAdminSecret],
  ] as const) {
    test(`synchronous action (${label})`, async () => {
      rx.requests.splice(0);
      const r = await postGraphql(s.url, { query: 'mutation { sync_call { id } }' }, headers);
      assert.deepEqual(r.body, { data: { sync_call: { id: 1 } } }, r.text);
      const h = rx.requests[0]!.headers;
      noSecret(h);
      assert.equal(h['x-custom'], 'c', 'other client headers are forwarded');
      assert.equal(h.authorization, 'Bearer client-token', "the client's Authorization is forwarded, as upstream");
    });

    test(`asynchronous action: not stored, not forwarded (${label})`, async () => {
      rx.requests.splice(0);
      const r = await postGraphql(s.url, { query: 'mutation { async_call }' }, headers);
      const id = r.body.data?.async_call;
      assert.ok(id, r.text);
      const c = new pg.Client({ connectionString: s.databaseUrl });
      await c.connect();
      try {
        const row = await c.query('select request_headers::text as h from svc_catalog.hdb_action_log where id = $1', [id]);
        const stored = row.rows[0].h as string;
        assert.ok(!stored.toLowerCase().includes('x-svc-access-key') && !stored.toLowerCase().includes('x-svc-admin-secret'), stored);
        assert.ok(!stored.includes(SECRET), stored);
        assert.match(stored, /x-custom/);
      } finally {
        await c.end();
      }
      await waitFor('the async handler call', async () => rx.requests.find((x) => x.path === '/async'), 10_000);
      noSecret(rx.requests.find((x) => x.path === '/async')!.headers);
    });

    test(`remote schema (${label})`, async () => {
      remote.reset();
      const r = await postGraphql(
        s.url,
        { query: '{ a: echoHeader(name: "x-svc-access-key") b: echoHeader(name: "x-svc-admin-secret") c: echoHeader(name: "x-custom") }' },
        headers,
      );
      assert.deepEqual(r.body, { data: { a: null, b: null, c: 'c' } }, r.text);
      noSecret(remote.requests[0]!.headers);
    });
  }

  test('debugging info of a failed call shows credential headers redacted', async () => {
    const r = await postGraphql(s.url, { query: 'mutation { broken_call { id } }' }, viaAccessKey);
    const internal = r.body.errors?.[0]?.extensions?.internal;
    assert.ok(internal, r.text);
    assert.ok(!r.text.includes(SECRET) && !r.text.includes('client-token'), r.text);
    const shown = internal.request.headers as Array<{ name: string; value: string }>;
    assert.deepEqual(shown.find((h) => h.name.toLowerCase() === 'authorization')?.value, '<redacted>');
  });
});
