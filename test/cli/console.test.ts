/**
 * `svc console` as a child process in front of a real Svc: it serves the console's files (and
 * nothing outside their directory), passes other requests on with the project's admin secret
 * unless the browser sends its own, passes websockets on (a graphql-transport-ws handshake), and
 * names the project on /apis/project. The console's flows are in test/console/migrations.e2e.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { sql } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSvcConsole, svc, tempDir } from './helpers.js';

describe('svc console', () => {
  let server: TestServer;
  let tmp: { dir: string; remove(): void };
  let front: Awaited<ReturnType<typeof startSvcConsole>>;

  before(async () => {
    server = await startTestServer({ adminSecret: 'front-secret' });
    tmp = tempDir('svc-console-');
    writeFileSync(join(tmp.dir, 'config.yaml'), `version: 2\nendpoint: ${server.url}\nadmin_secret: front-secret\n`);
    mkdirSync(join(tmp.dir, 'assets'), { recursive: true });
    writeFileSync(join(tmp.dir, 'assets', 'index.html'), '<!doctype html><title>console</title>');
    writeFileSync(join(tmp.dir, 'assets', 'app-0123456789.js'), 'console.log(1)');
    writeFileSync(join(tmp.dir, 'assets', '.secret'), 'x');
    front = await startSvcConsole(tmp.dir, ['--assets-dir', 'assets']);
  });
  after(async () => {
    await front?.close();
    await server?.close();
    tmp?.remove();
  });

  test("the console's files: index.html for every /console path, assets, nothing outside the directory", async () => {
    for (const path of ['/console', '/console/data/schema/public']) {
      const r = await fetch(front.url + path);
      assert.equal(r.status, 200);
      assert.equal(await r.text(), '<!doctype html><title>console</title>');
    }
    const a = await fetch(`${front.url}/console/assets/app-0123456789.js`);
    assert.equal(a.status, 200);
    assert.equal(a.headers.get('content-type'), 'text/javascript; charset=utf-8');
    for (const bad of ['/console/assets/..%2Fconfig.yaml', '/console/assets/.secret', '/console/assets/nope.js']) {
      assert.equal((await fetch(front.url + bad)).status, 404, bad);
    }
  });

  test("requests pass through with the project's admin secret; the browser's own secret wins", async () => {
    const post = (headers: Record<string, string>) =>
      fetch(`${front.url}/v1/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ type: 'export_metadata', args: {} }),
      });
    const ok = await post({});
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), { version: 2, tables: [] });
    const wrong = await post({ 'x-svc-admin-secret': 'wrong' });
    assert.equal(wrong.status, 401);
    const health = await fetch(`${front.url}/healthz`);
    assert.equal(await health.text(), 'OK');
    const p = (await (await fetch(`${front.url}/apis/project`)).json()) as { directory: string; endpoint: string };
    assert.equal(p.directory, tmp.dir);
    assert.equal(p.endpoint, server.url);
  });

  /** a raw request (fetch does not let Host be set) */
  const raw = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    new Promise<{ status: number; text: string }>((res, rej) => {
      const req = request(`${front.url}${path}`, { method, headers }, (r) => {
        let text = '';
        r.setEncoding('utf8')
          .on('data', (c: string) => (text += c))
          .on('end', () => res({ status: r.statusCode ?? 0, text }));
      });
      req.on('error', rej);
      req.end(body);
    });

  test('other sites get nothing: another Host is refused, another Origin gets no admin secret, /apis/migrate takes same-origin JSON only', async () => {
    const body = JSON.stringify({ type: 'export_metadata', args: {} });
    const json = { 'content-type': 'application/json' };
    assert.equal((await raw('POST', '/v1/query', { ...json, host: 'evil.example:9695' }, body)).status, 403);
    assert.equal((await raw('GET', '/console', { host: 'rebound.example' })).status, 403);
    assert.equal((await raw('POST', '/v1/query', { ...json, origin: 'http://evil.example' }, body)).status, 401);
    assert.equal((await raw('POST', '/v1/query', { ...json, 'sec-fetch-site': 'cross-site' }, body)).status, 401);
    const port = new URL(front.url).port;
    assert.equal((await raw('POST', '/v1/query', { ...json, origin: `http://127.0.0.1:${port}` }, body)).status, 200);
    const change = JSON.stringify({ request: { type: 'run_sql', args: { sql: 'create table csrf (id int)' } } });
    assert.equal((await raw('POST', '/apis/migrate', { ...json, origin: 'http://evil.example' }, change)).status, 403);
    assert.equal((await raw('POST', '/apis/migrate', { 'content-type': 'text/plain' }, change)).status, 415);
    const [row] = await sql<{ t: string | null }>(server.databaseUrl, `select to_regclass('csrf')::text as t`);
    assert.equal(row!.t, null);
  });

  test("websockets pass through (GraphiQL's subscriptions)", async () => {
    const ws = new WebSocket(`${front.url.replace('http', 'ws')}/v1/graphql`, 'graphql-transport-ws');
    try {
      const ack = await new Promise<unknown>((res, rej) => {
        const t = setTimeout(() => rej(new Error('no connection_ack within 10 s')), 10_000);
        ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: {} })));
        ws.on('message', (m) => {
          clearTimeout(t);
          res(JSON.parse(String(m)));
        });
        ws.on('error', (e) => {
          clearTimeout(t);
          rej(e);
        });
      });
      assert.deepEqual(ack, { type: 'connection_ack' });
    } finally {
      ws.close();
    }
  });

  test('a bad port is a usage error (exit 2)', async () => {
    const r = await svc(['console', '--console-port', 'x', '--no-browser'], { cwd: tmp.dir });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--console-port expects a port number/);
  });
});
