/**
 * The one list of client headers never forwarded (src/http/forwarded.ts), as the three forwards use
 * it: action handlers (forwardedClientHeaders), remote schemas (remoteHeaders), the auth webhook
 * (GET: as headers; POST: as data).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HOP_BY_HOP_HEADERS, IGNORED_CLIENT_HEADERS, isForwardableHeader, isSendableHeader } from '../../src/http/forwarded.js';
import { forwardedClientHeaders } from '../../src/actions/webhook.js';
import { remoteHeaders } from '../../src/remote/execute.js';
import type { ExecContext } from '../../src/execute/interface.js';

// upstream's commonClientHeadersIgnored (Hasura/Server/Utils.hs, v1.3)
const UPSTREAM = [
  'Content-Length',
  'Content-MD5',
  'User-Agent',
  'Host',
  'Origin',
  'Referer',
  'Accept',
  'Accept-Encoding',
  'Accept-Language',
  'Accept-Datetime',
  'Cache-Control',
  'Connection',
  'DNT',
  'Content-Type',
];

test("the ignored list is upstream's commonClientHeadersIgnored", () => {
  assert.deepEqual([...IGNORED_CLIENT_HEADERS].sort(), UPSTREAM.map((h) => h.toLowerCase()).sort());
});

test('never forwarded as headers: the ignored list, hop-by-hop headers, the admin secret (any case)', () => {
  for (const h of [...UPSTREAM, ...HOP_BY_HOP_HEADERS, 'X-Svc-Admin-Secret', 'x-svc-access-key', 'Proxy-Authorization', 'Transfer-Encoding']) {
    assert.equal(isForwardableHeader(h), false, h);
  }
  for (const h of ['Authorization', 'Cookie', 'X-Custom', 'x-request-id', 'x-svc-role']) assert.equal(isForwardableHeader(h), true, h);
});

test("sent as data (the auth webhook's POST mode): all but hop-by-hop headers and the admin secret", () => {
  for (const h of ['Content-Type', 'Origin', 'Authorization', 'Cookie', 'User-Agent']) assert.equal(isSendableHeader(h), true, h);
  for (const h of ['Keep-Alive', 'Transfer-Encoding', 'X-Svc-Admin-Secret']) assert.equal(isSendableHeader(h), false, h);
});

test('actions and remote schemas apply the same list', () => {
  const client: Record<string, string> = {
    'x-custom': 'c',
    authorization: 'Bearer t',
    accept: '*/*',
    'cache-control': 'no-cache',
    'content-encoding': 'gzip',
    'proxy-authorization': 'p',
    'x-svc-admin-secret': 's',
    host: 'h',
  };
  assert.deepEqual(
    forwardedClientHeaders(client)
      .map((h) => h.name)
      .sort(),
    ['authorization', 'x-custom'],
  );
  const ctx = { headers: client, session: { role: 'user', vars: { 'x-svc-role': 'user' } } } as unknown as ExecContext;
  const h = remoteHeaders(ctx, { name: 'r', url: 'http://127.0.0.1/', headers: [], forwardClientHeaders: true, timeoutMs: 1000 });
  assert.deepEqual(Object.keys(h).sort(), ['authorization', 'x-custom', 'x-svc-role']);
});
