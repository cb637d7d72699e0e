/**
 * The log destination (src/core/logStream.ts): lines arrive whole and in order, `flush(cb)` and
 * `flushSync` write what is pending, lines past the bound are dropped and counted, and a process
 * that logs and exits at once loses nothing (the exit hook writes synchronously) — also through
 * pino and the `http-log` writer's direct path.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { constants as fsConstants, mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { LogStream } from '../../src/core/logStream.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-logstream-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const line = (i: number) => `{"n":${i},"text":"${'é'.repeat(i % 7)}${'x'.repeat(200)}"}\n`;

describe('LogStream', () => {
  test('many lines: whole, in order, every one (chunks past the threshold and the rest on flush)', async () => {
    const file = join(dir, 'a.log');
    const fd = openSync(file, 'w');
    const s = new LogStream(fd, { minBytes: 4096 });
    let want = '';
    for (let i = 0; i < 5000; i++) {
      s.write(line(i));
      want += line(i);
      if (i % 97 === 0) await new Promise((r) => setImmediate(r));
    }
    await new Promise<void>((resolve, reject) => s.flush((e) => (e ? reject(e) : resolve())));
    s.end();
    closeSync(fd);
    assert.equal(readFileSync(file, 'utf8'), want);
    assert.equal(s.dropped, 0);
    assert.equal(s.errors, 0);
  });

  test('lines of every length around the chunk size, multi-byte characters at its edges: whole and in order', async () => {
    const file = join(dir, 'd.log');
    const fd = openSync(file, 'w');
    const s = new LogStream(fd, { minBytes: 256 });
    let want = '';
    // deterministic lengths 0-999 (longer than a chunk too), with 2-, 3- and 4-byte characters
    let seed = 7;
    for (let i = 0; i < 3000; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const n = seed % 1000;
      const l = `${['a', 'é', '€', '😀'][i % 4]!.repeat(n % 300)}${'z'.repeat(n)}\n`;
      s.write(l);
      want += l;
      if (i % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    await new Promise<void>((resolve, reject) => s.flush((e) => (e ? reject(e) : resolve())));
    s.end();
    closeSync(fd);
    assert.equal(readFileSync(file, 'utf8'), want);
    assert.equal(s.errors, 0);
  });

  test('a descriptor that takes nothing: periodic flushes gather no half-empty chunks (memory stays bounded)', async () => {
    // a FIFO opened read-write and non-blocking: it takes 64 KB, then answers EAGAIN for good
    const fifo = join(dir, 'stuck.fifo');
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
    const fd = openSync(fifo, fsConstants.O_RDWR | fsConstants.O_NONBLOCK);
    const s = new LogStream(fd, { minBytes: 65536, periodMs: 2, stuckMs: 100 });
    s.write('x'.repeat(70_000) + '\n'); // fills the FIFO: the write in flight now gets EAGAIN
    for (let i = 0; i < 100; i++) {
      s.write(`{"n":${i}}\n`);
      await new Promise((r) => setTimeout(r, 3)); // a flush period passes after each line
    }
    // 100 periods with a line each: the lines share one chunk, not one 64 KB chunk a period
    assert.ok(s.heldBytes() <= 2 * 65536, `held ${s.heldBytes()} bytes`);
    s.end();
    closeSync(fd);
    assert.equal(s.dropped, 100, 'the pending lines are dropped at the end, counted');
  });

  test('ended while a write waits to retry after EAGAIN: nothing is written to the descriptor after end', async () => {
    // the owner closes the descriptor after end(); the next file opened takes its number, and a
    // retry that went on after end would write the rest of the stuck chunk into that file
    const fifo = join(dir, 'retry.fifo');
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
    const fd = openSync(fifo, fsConstants.O_RDWR | fsConstants.O_NONBLOCK);
    const s = new LogStream(fd, { minBytes: 65536, stuckMs: 10 });
    s.write('y'.repeat(70_000) + '\n'); // 64 KB go into the FIFO, the rest is retried every 5 ms
    await new Promise((r) => setTimeout(r, 30));
    s.end();
    closeSync(fd);
    const file = join(dir, 'after-end.log');
    const fd2 = openSync(file, 'w');
    try {
      assert.equal(fd2, fd, 'the next descriptor reuses the number (the case this test is about)');
      await new Promise((r) => setTimeout(r, 60)); // many retry periods
      assert.equal(readFileSync(file, 'utf8'), '');
    } finally {
      closeSync(fd2);
    }
  });

  test('flushSync writes the pending lines at once', () => {
    const file = join(dir, 'b.log');
    const fd = openSync(file, 'w');
    const s = new LogStream(fd, { minBytes: 1 << 20 });
    s.write('one\n');
    s.write('two\n');
    assert.equal(readFileSync(file, 'utf8'), '');
    s.flushSync();
    assert.equal(readFileSync(file, 'utf8'), 'one\ntwo\n');
    s.end();
    closeSync(fd);
  });

  test('bounded: past maxBytes pending, lines are dropped and counted', () => {
    const file = join(dir, 'c.log');
    const fd = openSync(file, 'w');
    const s = new LogStream(fd, { minBytes: 1 << 20, maxBytes: 1000 });
    let accepted = 0;
    for (let i = 0; i < 100; i++) if (s.write(line(1))) accepted++;
    assert.ok(accepted < 100 && accepted >= 4, `accepted ${accepted}`);
    assert.equal(s.dropped, 100 - accepted);
    s.end();
    closeSync(fd);
    assert.equal(readFileSync(file, 'utf8').split('\n').length - 1, accepted);
  });

  test('a descriptor nobody reads: writes stay asynchronous, and exiting does not block on it', async () => {
    // the child logs 8 MB to its stdout, a pipe this test never reads (it fills after a few hundred
    // KB; the write in flight is retried on EAGAIN), then exits: the exit hook's flushSync must see
    // the write stuck and drop the rest, not retry chunk after chunk
    const script = `
      import { LogStream } from './src/core/logStream.ts';
      const s = new LogStream(1, { minBytes: 65536, stuckMs: 300 });
      const line = 'x'.repeat(1000) + '\\n';
      for (let i = 0; i < 8000; i++) s.write(line);
      let ticks = 0;
      const t = setInterval(() => ticks++, 10);
      setTimeout(() => {
        clearInterval(t);
        process.stderr.write('ticks ' + ticks + ' dropped-before-exit ' + s.dropped + '\\n');
        process.exit(0);
      }, 800);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: join(import.meta.dirname, '..', '..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.stdout.pause(); // never read
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
    clearTimeout(killer);
    child.stdout.destroy();
    assert.equal(signal, null, `the child had to be killed: ${err}`);
    assert.equal(code, 0, err);
    // the event loop kept running while the write was stuck (timers fired)
    const ticks = Number(/ticks (\d+)/.exec(err)?.[1]);
    assert.ok(ticks >= 20, err);
  });

  test('a process that logs 20,000 lines through pino and the http-log writer, then exits at once, loses none', () => {
    const script = `
      import { createLogger } from './src/server/start.ts';
      import { httpLogWriter } from './src/server/httpLog.ts';
      import { defaultConfig } from './src/config/config.ts';
      const log = createLogger({ ...defaultConfig(), logLevel: 'info' });
      const http = httpLogWriter(log);
      const req = { url: '/v1/graphql', method: 'POST', httpVersion: '1.1', socket: { remoteAddress: '127.0.0.1' }, headers: {} };
      for (let i = 0; i < 10000; i++) {
        log.info({ type: 'test', i }, 'line');
        http({ req, status: 200, ms: 1, requestId: 'r' + i, session: { role: 'admin', vars: {}, hasAdminCredentials: true }, responseSize: 10 });
      }
      process.exit(0);`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: join(import.meta.dirname, '..', '..'),
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    assert.equal(lines.filter((l) => l.type === 'test').length, 10000);
    assert.equal(lines.filter((l) => l.type === 'http-log').length, 10000);
    // in the order written
    const ids = lines.filter((l) => l.type === 'http-log').map((l) => l.detail.operation.request_id);
    assert.deepEqual(ids.slice(0, 3), ['r0', 'r1', 'r2']);
    assert.equal(ids[9999], 'r9999');
  });
});
