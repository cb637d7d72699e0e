/**
 * postLimited (src/http/client.ts), the outbound client of webhooks, actions and remote schemas,
 * against a real receiver: the request line keeps the URL's path and query, credentials in the URL
 * become Basic auth, IPv6 literals connect, the same URL twice reuses its parse, and response
 * headers come both raw (in order, as sent) and as a Headers object; a body over the cap and a
 * deadline passing mid-body reject the call and never surface as an uncaught exception.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postLimited } from '../src/http/client.js';
import { Receiver } from './helpers/receiver.js';

const rx = new Receiver();
before(() => rx.start());
after(() => rx.close());

test('path, query, userinfo and headers reach the receiver; response headers raw and parsed', async () => {
  rx.respond = () => ({ status: 201, headers: { 'X-One': 'a', 'x-two': 'b' }, body: '{"ok":1}' });
  const port = new URL(rx.url).port;
  for (let i = 0; i < 2; i++) {
    const res = await postLimited(`http://us%40er:p%3Ass@127.0.0.1:${port}/a/b?x=1&y=%20`, { 'content-type': 'application/json', 'x-h': String(i) }, '{"n":1}', { timeoutMs: 5000, maxBytes: 1000 });
    assert.equal(res.status, 201);
    assert.equal(res.body.toString(), '{"ok":1}');
    assert.deepEqual(res.rawHeaders!.filter((h) => h.name.toLowerCase().startsWith('x-')), [{ name: 'X-One', value: 'a' }, { name: 'x-two', value: 'b' }]);
    assert.equal(res.headers.get('x-one'), 'a');
    const got = rx.requests.at(-1)!;
    assert.equal(got.path, '/a/b?x=1&y=%20');
    assert.equal(got.headers.authorization, `Basic ${Buffer.from('us@er:p:ss').toString('base64')}`);
    assert.equal(got.headers['x-h'], String(i));
    assert.equal(got.headers['content-length'], '7');
    assert.deepEqual(got.body, { n: 1 });
  }
});

test('a deadline passing in the middle of the body rejects (TimeoutError), nothing uncaught', async () => {
  const { createServer } = await import('node:http');
  const s = createServer((_req, res) => {
    res.writeHead(200, { 'content-length': '100' });
    res.write('{"partial":');
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  try {
    const port = (s.address() as { port: number }).port;
    const t0 = Date.now();
    await assert.rejects(postLimited(`http://127.0.0.1:${port}/`, {}, '', { timeoutMs: 150, maxBytes: 1000 }), (e: Error) => e.name === 'TimeoutError');
    assert.ok(Date.now() - t0 < 2000);
  } finally {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

test('IPv6 literals and a body over the cap', async () => {
  const { createServer } = await import('node:http');
  const s = createServer((_req, res) => res.end('x'.repeat(2000)));
  await new Promise<void>((r) => s.listen(0, '::1', r));
  try {
    const port = (s.address() as { port: number }).port;
    const ok = await postLimited(`http://[::1]:${port}/`, {}, '', { timeoutMs: 5000, maxBytes: 5000 });
    assert.equal(ok.body.length, 2000);
    await assert.rejects(postLimited(`http://[::1]:${port}/`, {}, '', { timeoutMs: 5000, maxBytes: 100 }), /larger than 100 bytes/);
  } finally {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});
