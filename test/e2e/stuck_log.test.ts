/**
 * A server whose stdout nobody reads (a log pipe whose reader stopped: a stuck log shipper): it
 * keeps answering, and a SIGTERM still ends it, with exit code 0, in a bounded time. Before, the
 * shutdown's synchronous flush retried the full pipe for ~10 s a 64 KB chunk (minutes in all) and,
 * with a blocking pipe (a server started without tsx), waited in libuv's pool for good.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { MAIN, ROOT, cleanEnv, freePort, waitHealthy } from '../helpers/process.js';

const dbs: TestDatabase[] = [];
after(async () => {
  for (const db of dbs) await db.drop();
});

async function stuckStdout(extra: string[], ended: (code: number | null, signal: NodeJS.Signals | null, err: string) => void): Promise<void> {
  const db = await createTestDatabase();
  dbs.push(db);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', MAIN, 'serve', '--database-url', db.url, '--server-port', String(port), '--server-host', '127.0.0.1', ...extra],
    {
      cwd: ROOT,
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout!.pause(); // never read: the pipe fills after the first few hundred KB
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  try {
    await waitHealthy(url, 30_000);
    // ~8,000 http-log lines (~3 MB) against a pipe that takes a few hundred KB
    const body = JSON.stringify({ query: '{ __typename }' });
    for (let i = 0; i < 500; i++) {
      const rs = await Promise.all(
        Array.from({ length: 16 }, () =>
          fetch(`${url}/v1/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(10_000) }).then((r) =>
            r.text(),
          ),
        ),
      );
      assert.equal(rs[0], '{"data":{"__typename":"query_root"}}');
    }
    // still answering with its log stuck
    assert.equal((await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) })).status, 200);
    const t0 = Date.now();
    child.kill('SIGTERM');
    const [code, signal] = await exited;
    const ms = Date.now() - t0;
    assert.notEqual(signal, 'SIGKILL', `killed after 60 s, not ended by its SIGTERM:\n${err}`);
    ended(code, signal, err);
    assert.ok(ms < 15_000, `SIGTERM took ${ms} ms`);
  } finally {
    clearTimeout(killer);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    child.stdout!.destroy();
  }
}

test('stdout never read: the server keeps answering, and SIGTERM ends it within seconds, code 0', () =>
  stuckStdout([], (code, signal, err) => {
    assert.equal(signal, null, err);
    assert.equal(code, 0, err);
  }));

test('the same with --workers 2 (the start of a worker makes the shared pipe blocking again): ended all the same', () =>
  // the primary's last write may sit in libuv's pool for good: it then ends by SIGTERM (exit.ts)
  stuckStdout(['--workers', '2'], (code, signal, err) => {
    assert.ok((signal === null && code === 0) || signal === 'SIGTERM', `code ${code}, signal ${signal}: ${err}`);
  }));
