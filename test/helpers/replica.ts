/**
 * A real PostgreSQL 15 streaming replica of the test server (127.0.0.1:5432) for tests: a second
 * cluster on a free local port, copied with `pg_basebackup -R` (which writes `primary_conninfo`
 * and `standby.signal`), started with `pg_ctl`, stopped/started again by the test, and removed by
 * `destroy()`. Commands run as the `postgres` OS user (through `runuser` when the test runs as
 * root), without `pg_ctlcluster`. Needs a replication entry in the primary's pg_hba.conf
 * (`host replication all 127.0.0.1/32 trust`; `.ci/run` adds it and reloads, no restart).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './process.js';
import { adminDatabaseUrl, sql, withDatabase } from './db.js';

const run = promisify(execFile);
export const PG_BIN = process.env.SVC_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** Runs a PostgreSQL binary as the postgres OS user. */
async function asPostgres(bin: string, args: string[], timeoutMs = 120_000): Promise<string> {
  const exe = path.join(PG_BIN, bin);
  const isRoot = process.getuid?.() === 0;
  const { stdout } = isRoot
    ? await run('runuser', ['-u', 'postgres', '--', exe, ...args], { timeout: timeoutMs })
    : await run(exe, args, { timeout: timeoutMs });
  return stdout;
}

export interface Replica {
  port: number;
  /** the replica's URL for `database` (the same database names as on the primary) */
  url(database: string): string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** waits until the replica has replayed everything the primary has written so far */
  caughtUp(timeoutMs?: number): Promise<void>;
  destroy(): Promise<void>;
}

export async function createReplica(): Promise<Replica> {
  const primary = new URL(adminDatabaseUrl());
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-replica-'));
  fs.chmodSync(dir, 0o755);
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'log');
  if (process.getuid?.() === 0) await run('chown', ['postgres:postgres', dir]);
  const destroy = async () => {
    await asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await asPostgres('pg_basebackup', [
      '-h',
      primary.hostname,
      '-p',
      primary.port || '5432',
      '-U',
      decodeURIComponent(primary.username || 'postgres'),
      '-D',
      data,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
    ]);
    // Debian keeps postgresql.conf and pg_hba.conf outside the data directory: give the copy its own
    fs.writeFileSync(
      path.join(data, 'postgresql.conf'),
      [
        `port = ${port}`,
        `listen_addresses = '127.0.0.1'`,
        `unix_socket_directories = '${dir}'`,
        'max_connections = 100',
        'hot_standby = on',
        'wal_receiver_status_interval = 1s',
        'hot_standby_feedback = on',
        "timezone = 'Etc/UTC'",
        '',
      ].join('\n'),
    );
    fs.writeFileSync(path.join(data, 'pg_hba.conf'), 'local all all trust\nhost all all 127.0.0.1/32 trust\n');
    if (process.getuid?.() === 0) await run('chown', ['postgres:postgres', path.join(data, 'postgresql.conf'), path.join(data, 'pg_hba.conf')]);
  } catch (e) {
    await destroy();
    throw e;
  }
  const start = async () => {
    await asPostgres('pg_ctl', ['-D', data, '-l', log, '-w', '-t', '60', 'start']);
  };
  const stop = async () => {
    await asPostgres('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
  };
  const replicaAdmin = () => {
    const u = new URL(withDatabase(adminDatabaseUrl(), 'postgres'));
    u.port = String(port);
    return u.toString();
  };
  try {
    await start();
  } catch (e) {
    const tail = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').slice(-2000) : '';
    await destroy();
    throw new Error(`the replica did not start: ${(e as Error).message}\n${tail}`);
  }
  return {
    port,
    url: (database) => {
      const u = new URL(withDatabase(adminDatabaseUrl(), database));
      u.port = String(port);
      return u.toString();
    },
    start,
    stop,
    async caughtUp(timeoutMs = 10_000) {
      const [{ lsn }] = await sql<{ lsn: string }>(adminDatabaseUrl(), 'select pg_current_wal_lsn()::text as lsn');
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const [{ ok }] = await sql<{ ok: boolean }>(replicaAdmin(), 'select pg_last_wal_replay_lsn() >= $1::pg_lsn as ok', [lsn]);
        if (ok) return;
        if (Date.now() > deadline) throw new Error(`the replica did not replay up to ${lsn} within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    destroy,
  };
}
