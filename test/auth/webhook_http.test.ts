/**
 * The auth webhook behind the real HTTP server: POST mode forwards header names as the client
 * spelled them on the wire (Node lower-cases `req.headers`; the server reads `req.rawHeaders`), on
 * the GraphQL fast path and on the Fastify routes alike.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import { json, startServer, type TestServer as HookServer } from './helpers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let hook: HookServer;
let svc: TestServer;

before(async () => {
  hook = await startServer((_req, res) => json(res, 200, { 'X-Svc-Role': 'user' }));
  svc = await startTestServer({ adminSecret: 's3cret', authHook: hook.url, authHookMode: 'POST' });
});

after(async () => {
  await svc?.close();
  await hook?.close();
});

/** A request with exactly these header names on the wire (node:http keeps their case). */
function send(path: string, body: unknown, headers: Record<string, string>): Promise<number> {
  const u = new URL(path, svc.url);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(u, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

for (const [route, body] of [
  ['/v1/graphql', { query: '{ __typename }' }],
  ['/v1/graphql/explain', { query: { query: '{ __typename }' } }],
] as const) {
  test(`${route}: the webhook receives the client's spelling of header names`, async () => {
    hook.requests.length = 0;
    await send(route, body, { Authorization: 'Bearer abc', 'X-Custom-Header': 'v' });
    assert.equal(hook.requests.length, 1);
    const sent = (JSON.parse(hook.requests[0]!.body) as { headers: Record<string, string> }).headers;
    assert.equal(sent['Authorization'], 'Bearer abc');
    assert.equal(sent['X-Custom-Header'], 'v');
    assert.equal(sent['authorization'], undefined);
  });
}
