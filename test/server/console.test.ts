/**
 * The console routes (src/server/console.ts) on real servers: off by default, `/` → `console`,
 * index.html for every /console path, assets with caching headers, gzip, ETag revalidation, no
 * escape from the assets directory, the flags and the startup log.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { DEFAULT_CONSOLE_ASSETS_DIR } from '../../src/server/console.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** GET of `path` as written (no URL normalisation), without decompression or redirects (fetch does both). */
function get(url: string, path: string, headers: Record<string, string> = {}): Promise<Raw> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method: 'GET', headers, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

const INDEX = '<!doctype html><title>console</title><script type="module" src="/console/assets/app-Ab12Cd34.js"></script>';
const APP = `console.log(${JSON.stringify('x'.repeat(5000))});`;

describe('console routes', () => {
  let db: TestDatabase;
  let dir: string;
  const servers: TestServer[] = [];
  const start = async (overrides: Parameters<typeof startTestServer>[0], logTo?: Writable) => {
    const s = await startTestServer({ databaseUrl: db.url, ...overrides }, logTo);
    servers.push(s);
    return s;
  };

  before(async () => {
    db = await createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), 'svc-console-assets-'));
    writeFileSync(join(dir, 'index.html'), INDEX);
    writeFileSync(join(dir, 'app-Ab12Cd34.js'), APP);
    writeFileSync(join(dir, 'notes.txt'), 'plain');
    writeFileSync(join(dir, '.build-hash'), 'secret-ish');
  });
  after(async () => {
    for (const s of servers) await s.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('off by default: / and /console are 404; GET /v1/graphql is GraphQL over HTTP (issue 37), not the console', async () => {
    const s = await start({});
    for (const path of ['/', '/console', '/console/assets/app-Ab12Cd34.js']) {
      const r = await get(s.url, path);
      assert.equal(r.status, 404, path);
      assert.deepEqual(JSON.parse(r.body.toString()), { path: '$', error: 'resource does not exist', code: 'not-found' }, path);
    }
    const g = await get(s.url, '/v1/graphql');
    assert.equal(g.status, 200);
    assert.deepEqual(JSON.parse(g.body.toString()), { errors: [{ extensions: { path: '$', code: 'parse-failed' }, message: 'key "query" not found' }] });
  });

  describe('enabled, with --console-assets-dir', () => {
    let s: TestServer;
    before(async () => {
      s = await start({ enableConsole: true, consoleAssetsDir: dir, adminSecret: 'top' });
    });

    test('/ redirects to console', async () => {
      const r = await get(s.url, '/');
      assert.equal(r.status, 302);
      assert.equal(r.headers.location, 'console');
    });

    test('every /console path is index.html, revalidated (no-cache + ETag → 304), without the admin secret', async () => {
      for (const path of ['/console', '/console/', '/console/data/schema/public/tables/x/browse', '/console/permissions?x=1']) {
        const r = await get(s.url, path);
        assert.equal(r.status, 200, path);
        assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
        assert.equal(r.headers['cache-control'], 'no-cache');
        assert.equal(r.body.toString(), INDEX, path);
        const again = await get(s.url, path, { 'if-none-match': String(r.headers.etag) });
        assert.equal(again.status, 304, path);
        assert.equal(again.body.length, 0);
      }
      // GET /v1/graphql is GraphQL over HTTP with the console on too (behind the admin secret)
      const g = await get(s.url, '/v1/graphql');
      assert.equal(g.status, 200);
      assert.equal(JSON.parse(g.body.toString()).errors[0].extensions.code, 'access-denied');
    });

    test('hashed assets are immutable and gzipped when accepted; other names are revalidated', async () => {
      const plain = await get(s.url, '/console/assets/app-Ab12Cd34.js');
      assert.equal(plain.status, 200);
      assert.equal(plain.headers['content-type'], 'text/javascript; charset=utf-8');
      assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.equal(plain.body.toString(), APP);
      const gz = await get(s.url, '/console/assets/app-Ab12Cd34.js', { 'accept-encoding': 'gzip, deflate' });
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.equal(gz.headers.vary, 'Accept-Encoding');
      assert.ok(gz.body.length < APP.length / 10, `gzipped ${gz.body.length} bytes`);
      assert.equal(gunzipSync(gz.body).toString(), APP);
      const notes = await get(s.url, '/console/assets/notes.txt');
      assert.equal(notes.headers['cache-control'], 'no-cache');
      assert.equal(notes.body.toString(), 'plain');
    });

    test('a file changed on disk is served changed', async () => {
      writeFileSync(join(dir, 'notes.txt'), 'changed, and longer');
      assert.equal((await get(s.url, '/console/assets/notes.txt')).body.toString(), 'changed, and longer');
    });

    test('nothing outside the directory, no dot files, missing files 404', async () => {
      for (const path of [
        '/console/assets/.build-hash',
        '/console/assets/..%2F..%2Fetc%2Fpasswd',
        '/console/assets/%2e%2e/x',
        '/console/assets/missing.js',
        '/console/assets/',
      ]) {
        const r = await get(s.url, path);
        assert.equal(r.status, 404, path);
        assert.equal(JSON.parse(r.body.toString()).code, 'not-found', path);
      }
    });
  });

  test('needs the metadata API, as upstream', async () => {
    const s = await start({ enableConsole: true, consoleAssetsDir: dir, enabledApis: new Set(['graphql']) });
    assert.equal((await get(s.url, '/console')).status, 404);
    assert.equal((await get(s.url, '/')).status, 404);
  });

  test('missing assets: /console says how to build them; the startup log says so too', async () => {
    const missing = join(dir, 'nope');
    let log = '';
    const sink = new Writable({
      write: (c, _e, cb) => {
        log += c;
        cb();
      },
    });
    const s = await start({ enableConsole: true, consoleAssetsDir: missing, logLevel: 'info', enabledLogTypes: ['startup'] }, sink);
    const r = await get(s.url, '/console/data');
    assert.equal(r.status, 503);
    assert.match(r.body.toString(), /npm run build:console/);
    const started = log
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const info = started.find((l) => l.detail?.kind === 'server_configuration')?.detail.info;
    assert.equal(info?.enable_console, true);
    // the warning is written once the missing file is noticed
    for (let i = 0; i < 100 && !log.includes('console assets not found'); i++) await new Promise((res) => setImmediate(res));
    assert.match(log, /console assets not found in .*nope/);
  });

  test('the startup log reports enable_console false by default', async () => {
    let log = '';
    const sink = new Writable({
      write: (c, _e, cb) => {
        log += c;
        cb();
      },
    });
    await start({ logLevel: 'info', enabledLogTypes: ['startup'] }, sink);
    const info = log
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((l) => l.detail?.kind === 'server_configuration')?.detail.info;
    assert.equal(info?.enable_console, false);
  });
});

describe('console flags', () => {
  test('--enable-console is a switch or takes a boolean; the environment variable; flags win', () => {
    assert.equal(parseConfig(['serve'], {}).config.enableConsole, false);
    assert.equal(parseConfig(['serve', '--enable-console'], {}).config.enableConsole, true);
    assert.equal(parseConfig(['serve', '--enable-console', 'false'], {}).config.enableConsole, false);
    assert.equal(parseConfig(['serve', '--enable-console=true'], {}).config.enableConsole, true);
    assert.equal(parseConfig(['serve'], { SVC_GRAPHQL_ENABLE_CONSOLE: 'true' }).config.enableConsole, true);
    assert.equal(parseConfig(['serve', '--enable-console', 'false'], { SVC_GRAPHQL_ENABLE_CONSOLE: 'true' }).config.enableConsole, false);
    assert.throws(() => parseConfig(['serve'], { SVC_GRAPHQL_ENABLE_CONSOLE: 'perhaps' }), /SVC_GRAPHQL_ENABLE_CONSOLE: expected true or false/);
  });

  test('--console-assets-dir / SVC_GRAPHQL_CONSOLE_ASSETS_DIR; default console/dist of the package', () => {
    assert.equal(parseConfig(['serve', '--console-assets-dir', '/srv/console-assets'], {}).config.consoleAssetsDir, '/srv/console-assets');
    assert.equal(parseConfig(['serve'], { SVC_GRAPHQL_CONSOLE_ASSETS_DIR: '/x' }).config.consoleAssetsDir, '/x');
    assert.equal(parseConfig(['serve'], {}).config.consoleAssetsDir, undefined);
    assert.match(DEFAULT_CONSOLE_ASSETS_DIR, /[/\\]console[/\\]dist$/);
  });
});
