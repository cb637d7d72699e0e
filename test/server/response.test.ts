/**
 * One response pipeline (src/server/response.ts): the GraphQL fast path and the Fastify routes
 * answer with the same CORS headers, request id and compression.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;

before(async () => {
  s = await startTestServer({ corsDomain: ['https://app.example'] });
});

after(async () => {
  await s?.close();
});

function call(method: string, path: string, body?: unknown): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, s.url),
      { method, headers: { origin: 'https://app.example', 'accept-encoding': 'gzip', 'x-request-id': `rid-${path}`, 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

for (const [method, path, body] of [
  ['POST', '/v1/graphql', { query: '{ __typename }' }],
  ['POST', '/v1/query', { type: 'export_metadata', args: {} }],
  ['GET', '/v1/version', undefined],
  ['POST', '/v1/graphql', { query: '{ nope }' }],
  ['POST', '/v1/query', { type: 'nope', args: {} }],
] as const) {
  test(`${method} ${path} ${JSON.stringify(body ?? '')}: CORS, request id and gzip`, async () => {
    const r = await call(method, path, body);
    assert.equal(r.headers['access-control-allow-origin'], 'https://app.example');
    assert.equal(r.headers['access-control-allow-credentials'], 'true');
    assert.equal(r.headers['x-request-id'], `rid-${path}`);
    assert.equal(r.headers['content-encoding'], 'gzip');
    assert.doesNotThrow(() => JSON.parse(gunzipSync(r.body).toString('utf8')));
  });
}
