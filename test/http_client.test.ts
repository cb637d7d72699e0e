/**
 * The one outbound transport (src/http/client.ts: postLimited for webhooks, actions and remote
 * schemas; fetchLimited for the auth webhook and the JWK set), against real receivers: the request line keeps the URL's path and query, credentials in the URL
 * become Basic auth, IPv6 literals connect, the same URL twice reuses its parse, and response
 * headers come both raw (in order, as sent) and as a Headers object; a body over the cap and a
 * deadline passing mid-body reject the call and never surface as an uncaught exception; GETs follow
 * redirects only when asked (under one deadline, the redirect bodies unread), a body can be left
 * unread by status, a declared length over the cap is refused before reading, and an abort signal
 * ends the call.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createServer, type Server } from 'node:http';
import { fetchLimited, OutboundClient, postLimited } from '../src/http/client.js';

/** the client of these calls: no outbound policy, not observed */
const client = new OutboundClient();
import { Receiver } from './helpers/receiver.js';

const rx = new Receiver();
before(() => rx.start());
after(() => rx.close());

test('path, query, userinfo and headers reach the receiver; response headers raw and parsed', async () => {
  rx.respond = () => ({ status: 201, headers: { 'X-One': 'a', 'x-two': 'b' }, body: '{"ok":1}' });
  const port = new URL(rx.url).port;
  for (let i = 0; i < 2; i++) {
    const res = await postLimited(
      `http://us%40er:p%3Ass@127.0.0.1:${port}/a/b?x=1&y=%20`,
      { 'content-type': 'application/json', 'x-h': String(i) },
      '{"n":1}',
      { client, timeoutMs: 5000, maxBytes: 1000 },
    );
    assert.equal(res.status, 201);
    assert.equal(res.body.toString(), '{"ok":1}');
    assert.deepEqual(
      res.rawHeaders!.filter((h) => h.name.toLowerCase().startsWith('x-')),
      [
        { name: 'X-One', value: 'a' },
        { name: 'x-two', value: 'b' },
      ],
    );
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
    await assert.rejects(postLimited(`http://127.0.0.1:${port}/`, {}, '', { client, timeoutMs: 150, maxBytes: 1000 }), (e: Error) => e.name === 'TimeoutError');
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
    const ok = await postLimited(`http://[::1]:${port}/`, {}, '', { client, timeoutMs: 5000, maxBytes: 5000 });
    assert.equal(ok.body.length, 2000);
    await assert.rejects(postLimited(`http://[::1]:${port}/`, {}, '', { client, timeoutMs: 5000, maxBytes: 100 }), /larger than 100 bytes/);
  } finally {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<{ s: Server; url: string; close: () => Promise<void> }> {
  const s = createServer(handler);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(s.address() as { port: number }).port}`;
  return { s, url, close: () => (s.closeAllConnections(), new Promise<void>((r) => s.close(() => r()))) };
}

test('GET: redirects followed when asked (relative and absolute, the deadline over all hops), else returned', async () => {
  const seen: string[] = [];
  const srv = await serve((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    if (req.url === '/a') return res.writeHead(302, { location: '/b' }).end('x'.repeat(5000));
    if (req.url === '/b') return res.writeHead(301, { location: `http://127.0.0.1:${(srv.s.address() as { port: number }).port}/c` }).end();
    if (req.url === '/loop') return res.writeHead(307, { location: '/loop' }).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":[]}');
  });
  try {
    const res = await fetchLimited(
      `${srv.url}/a`,
      { method: 'GET', headers: { accept: 'application/json' }, redirect: 'follow' },
      { client, timeoutMs: 5000, maxBytes: 100 },
    );
    assert.equal(res.status, 200);
    assert.equal(res.body.toString(), '{"keys":[]}');
    assert.deepEqual(seen, ['GET /a', 'GET /b', 'GET /c']);
    const manual = await fetchLimited(`${srv.url}/a`, { method: 'GET', headers: {}, redirect: 'manual' }, { client, timeoutMs: 5000, maxBytes: 10000 });
    assert.equal(manual.status, 302);
    assert.equal(manual.headers.get('location'), '/b');
    await assert.rejects(
      fetchLimited(`${srv.url}/loop`, { method: 'GET', headers: {}, redirect: 'follow' }, { client, timeoutMs: 5000, maxBytes: 100 }),
      /too many redirects/,
    );
  } finally {
    await srv.close();
  }
});

test('readBody: an unread body is discarded; a declared length over the cap is refused before reading', async () => {
  const srv = await serve((req, res) => {
    if (req.url === '/big') return res.writeHead(200, { 'content-length': '1000000' }).end('x'.repeat(1000000));
    res.writeHead(req.url === '/denied' ? 403 : 200).end('body');
  });
  try {
    const denied = await fetchLimited(
      `${srv.url}/denied`,
      { method: 'POST', headers: {}, body: '{}', redirect: 'manual' },
      { client, timeoutMs: 5000, maxBytes: 100, readBody: (s) => s === 200 },
    );
    assert.deepEqual([denied.status, denied.body.length], [403, 0]);
    const ok = await fetchLimited(
      `${srv.url}/ok`,
      { method: 'POST', headers: {}, body: '{}', redirect: 'manual' },
      { client, timeoutMs: 5000, maxBytes: 100, readBody: (s) => s === 200 },
    );
    assert.equal(ok.body.toString(), 'body');
    await assert.rejects(
      fetchLimited(`${srv.url}/big`, { method: 'GET', headers: {}, redirect: 'manual' }, { client, timeoutMs: 5000, maxBytes: 100 }),
      /larger than 100 bytes/,
    );
  } finally {
    await srv.close();
  }
});

test('an abort signal ends a hanging call (AbortError); an aborted one is never sent', async () => {
  let requests = 0;
  const srv = await serve(() => {
    requests++;
  });
  try {
    const ac = new AbortController();
    const call = fetchLimited(srv.url, { method: 'GET', headers: {}, redirect: 'manual' }, { client, timeoutMs: 60_000, maxBytes: 100, signal: ac.signal });
    while (requests === 0) await new Promise((r) => setImmediate(r));
    ac.abort();
    await assert.rejects(call, (e: Error) => e.name === 'AbortError');
    await assert.rejects(
      fetchLimited(srv.url, { method: 'GET', headers: {}, redirect: 'manual' }, { client, timeoutMs: 60_000, maxBytes: 100, signal: ac.signal }),
      (e: Error) => e.name === 'AbortError',
    );
    assert.equal(requests, 1);
  } finally {
    await srv.close();
  }
});

test("headers that are the connection's (transfer-encoding, connection, keep-alive, upgrade, expect, content-length) are left out, the body sent whole; connections are kept", async () => {
  const sockets = new Set<string>();
  const s = createServer((req, res) => {
    sockets.add(`${req.socket.remotePort}`);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ headers: req.headers, body: Buffer.concat(chunks).toString() }));
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${(s.address() as { port: number }).port}/`;
    const configured = {
      'Content-Type': 'application/json',
      'Transfer-Encoding': 'chunked',
      Connection: 'upgrade',
      'Keep-Alive': 'timeout=1',
      Upgrade: 'websocket',
      Expect: '100-continue',
      'Content-Length': '999',
      'X-Kept': 'yes',
    };
    for (let i = 0; i < 5; i++) {
      const res = await postLimited(url, configured, `{"i":${i},"s":"é"}`, { client, timeoutMs: 5000, maxBytes: 10_000 });
      assert.equal(res.status, 200);
      const got = JSON.parse(res.body.toString()) as { headers: Record<string, string>; body: string };
      assert.equal(got.body, `{"i":${i},"s":"é"}`);
      assert.equal(got.headers['content-length'], String(Buffer.byteLength(got.body)));
      assert.equal(got.headers['x-kept'], 'yes');
      for (const h of ['transfer-encoding', 'upgrade', 'expect', 'keep-alive']) assert.equal(got.headers[h], undefined, h);
      assert.notEqual(got.headers.connection, 'upgrade');
    }
    // the configured headers were not changed for the caller
    assert.equal(configured['Content-Length'], '999');
    // kept connections (a call that follows at once may find its predecessor's connection not yet
    // free and open a second one)
    assert.ok(sockets.size <= 2, `five calls in a row on ${sockets.size} connections`);
  } finally {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

test('a dispatcher keeps pools for at most 1,000 origins: the next origin gets a fresh one, the old one closes', async () => {
  const c = new OutboundClient();
  try {
    const first = c.dispatcher(false, 'http://127.0.0.1:1');
    for (let port = 2; port <= 1000; port++) assert.equal(c.dispatcher(false, `http://127.0.0.1:${port}`), first);
    assert.equal(c.dispatcher(false, 'http://127.0.0.1:1'), first, 'an origin seen before');
    assert.equal(c.dispatcher(true, 'http://127.0.0.1:1001') === first, false, 'the guarded dispatcher is another');
    const next = c.dispatcher(false, 'http://127.0.0.1:1001');
    assert.notEqual(next, first);
    assert.equal(first.closed, true);
    assert.equal(c.dispatcher(false, 'http://127.0.0.1:1'), next);
  } finally {
    c.close();
  }
});
