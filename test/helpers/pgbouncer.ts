/**
 * A real pgbouncer in transaction pooling mode in front of the test PostgreSQL server, for tests:
 * its own configuration in a temporary directory, a free local port, started in the foreground
 * (as the postgres OS user when the test runs as root: pgbouncer refuses to run as root) and
 * stopped by `close()`. Debian's package installs /usr/sbin/pgbouncer (`.ci/run` installs it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { adminDatabaseUrl } from './db.js';
import { freePort } from './process.js';

export const PGBOUNCER = process.env.SVC_TEST_PGBOUNCER ?? (fs.existsSync('/usr/sbin/pgbouncer') ? '/usr/sbin/pgbouncer' : 'pgbouncer');

export interface Bouncer {
  port: number;
  /** the URL of `database` through pgbouncer */
  url(database: string): string;
  output(): string;
  close(): Promise<void>;
}

export async function startPgbouncer(opts: { poolSize?: number } = {}): Promise<Bouncer> {
  const target = new URL(adminDatabaseUrl());
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-pgbouncer-'));
  fs.chmodSync(dir, 0o777);
  const ini = path.join(dir, 'pgbouncer.ini');
  fs.writeFileSync(path.join(dir, 'userlist.txt'), `"${decodeURIComponent(target.username || 'postgres')}" ""\n`);
  fs.writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${target.hostname} port=${target.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${opts.poolSize ?? 8}`,
      'max_client_conn = 500',
      // node-postgres sends these at connection start; pgbouncer does not pass them through
      'ignore_startup_parameters = extra_float_digits,statement_timeout,options',
      'server_reset_query =',
      'admin_users = postgres',
      '',
    ].join('\n'),
  );
  const isRoot = process.getuid?.() === 0;
  const child: ChildProcess = isRoot
    ? spawn('runuser', ['-u', 'postgres', '--', PGBOUNCER, ini], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(PGBOUNCER, [ini], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM'); // runuser passes it on
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  // bounded wait for the port
  const deadline = Date.now() + 10_000;
  for (;;) {
    const up = await new Promise<boolean>((r) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.destroy();
        r(true);
      });
      s.on('error', () => r(false));
    });
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      await close();
      throw new Error(`pgbouncer did not start on port ${port}:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    url: (database) => {
      const u = new URL(adminDatabaseUrl());
      u.port = String(port);
      u.pathname = `/${encodeURIComponent(database)}`;
      return u.toString();
    },
    output: () => out,
    close,
  };
}
