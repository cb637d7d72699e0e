/**
 * pg_dump options are an exact allow-list (issue 11.11): options that name files, directories,
 * connections or roles, abbreviations pg_dump would accept (`--fil=`), glued values (`-f/x`) and
 * positional arguments are refused with a 400 naming the option; the documented ones pass. End to
 * end, through /v1alpha1/pg_dump with the real pg_dump: a request naming an output file writes
 * nothing, while pg_dump run directly with the same option does write it (the check can fail).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { spawnSync } from 'node:child_process';
import { checkPgDumpOptions, runPgDump } from '../../src/server/pgdump.js';
import { post, startTestServer, type TestServer } from '../helpers/server.js';

/** decided up front: the end-to-end part needs the pg_dump binary */
const NO_PG_DUMP = spawnSync('pg_dump', ['--version']).status === 0 ? false : 'no pg_dump binary on PATH';

test('documented and output-shaping options pass', () => {
  for (const opts of [
    ['-O', '-x', '--schema-only', '--schema', 'public'],
    ['--schema=public', '-npublic', '-n', 'other', '-Ox', '--data-only', '--inserts', '--rows-per-insert', '10'],
    ['-t', 'author', '--exclude-table=secret', '--no-comments', '--if-exists', '--clean'],
  ]) {
    assert.doesNotThrow(() => checkPgDumpOptions(opts), opts.join(' '));
  }
});

test('files, connections, abbreviations, formats and positional arguments are refused', () => {
  for (const o of [
    ['-f/tmp/x'],
    ['-f', '/tmp/x'],
    ['--file=/tmp/x'],
    ['--fil=/tmp/x'],
    ['--fi', '/tmp/x'],
    ['--schema-onl'],
    ['-Of/tmp/x'],
    ['-d', 'postgres://evil'],
    ['--dbname=postgres'],
    ['-h', 'evil.example'],
    ['--host=evil'],
    ['-U', 'postgres'],
    ['--role=postgres'],
    ['-Fd'],
    ['--format=directory'],
    ['-j', '4'],
    ['-Z9'],
    ['postgres'],
    ['--schema'],
    ['--no-owner=1'],
  ]) {
    assert.throws(
      () => checkPgDumpOptions(o),
      (e: Error & { code?: string; status?: number }) => e.code === 'invalid-params' && e.status === 400 && e.message.includes(JSON.stringify(o[0])),
      o.join(' '),
    );
  }
});

describe('through /v1alpha1/pg_dump with the real pg_dump', { skip: NO_PG_DUMP }, () => {
  let s: TestServer;
  let dir: string;
  const admin = { 'x-svc-admin-secret': 's' };
  before(async () => {
    s = await startTestServer({ adminSecret: 's' });
    dir = mkdtempSync(join(tmpdir(), 'svc-pgdump-'));
  });
  after(async () => {
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a request naming an output file is refused and writes nothing; pg_dump itself would have', async () => {
    const file = join(dir, 'out.sql');
    const ok = await post(s.url, '/v1alpha1/pg_dump', { opts: ['--schema-only'] }, admin);
    assert.equal(ok.status, 200, ok.text);
    for (const opts of [['-f', file], [`-f${file}`], [`--file=${file}`], [`--fil=${file}`], ['-Of', file]]) {
      const r = await post(s.url, '/v1alpha1/pg_dump', { opts }, admin);
      assert.equal(r.status, 400, `${opts.join(' ')}: ${r.text}`);
      assert.equal(JSON.parse(r.text).code, 'invalid-params');
    }
    assert.deepEqual(readdirSync(dir), []);
    // the control: the same option given to pg_dump directly writes the file
    await runPgDump(s.databaseUrl, ['--schema-only', '-f', file]);
    assert.ok(existsSync(file));
  });
});
