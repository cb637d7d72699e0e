/**
 * The startup line names the address the server is bound to (every interface for `--server-host *`,
 * then also a local URL) and, with the console enabled, the console's URL (src/server/start.ts
 * listeningOn).
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { listeningOn } from '../../src/server/start.js';
import { startTestServer } from '../helpers/server.js';

test('listeningOn: the bound address, a local URL for every interface, the console URL', () => {
  assert.deepEqual(listeningOn({ address: '0.0.0.0', port: 8080, family: 'IPv4' }, true), {
    url: 'http://0.0.0.0:8080',
    console: 'http://localhost:8080/console',
    message: 'svc listening on http://0.0.0.0:8080 (all interfaces; http://localhost:8080 from this machine), console at http://localhost:8080/console',
  });
  assert.deepEqual(listeningOn({ address: '127.0.0.1', port: 9000, family: 'IPv4' }, false), {
    url: 'http://127.0.0.1:9000',
    message: 'svc listening on http://127.0.0.1:9000',
  });
  assert.equal(listeningOn({ address: '::1', port: 9000, family: 'IPv6' }, false).url, 'http://[::1]:9000');
});

test('a server on every interface says so in its startup line', async () => {
  const lines: any[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      cb();
    },
  });
  const s = await startTestServer({ host: '*', logLevel: 'info', enabledLogTypes: ['startup'], enableConsole: true }, sink);
  try {
    let line: any;
    for (let i = 0; i < 200 && !(line = lines.find((l) => l.type === 'startup' && l.detail?.kind === 'server_configuration')); i++)
      await new Promise((r) => setTimeout(r, 10));
    assert.ok(line, 'a startup line');
    assert.equal(
      line.msg,
      `svc listening on http://0.0.0.0:${s.port} (all interfaces; http://localhost:${s.port} from this machine), console at http://localhost:${s.port}/console`,
    );
    assert.equal(line.detail.info.bound_address, `http://0.0.0.0:${s.port}`);
    assert.equal(line.detail.info.console_url, `http://localhost:${s.port}/console`);
  } finally {
    await s.close();
  }
});
