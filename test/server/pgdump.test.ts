/**
 * pg_dump options are an exact allow-list (issue 11.11): options that name files, directories,
 * connections or roles, abbreviations pg_dump would accept (`--fil=`), glued values (`-f/x`) and
 * positional arguments are refused with a 400 naming the option; the documented ones pass.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { checkPgDumpOptions } from '../../src/server/pgdump.js';

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
    assert.throws(() => checkPgDumpOptions(o), (e: Error & { code?: string; status?: number }) => e.code === 'invalid-params' && e.status === 400 && e.message.includes(JSON.stringify(o[0])), o.join(' '));
  }
  assert.equal(existsSync('/tmp/x'), false);
});
