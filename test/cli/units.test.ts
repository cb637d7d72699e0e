/**
 * The CLI's pure parts: the line diff (checked against a dynamic-programming LCS on random
 * inputs), the metadata directory's round trip, migration planning, flag parsing, .env files.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseArgs } from '../../src/cli/args.js';
import type { CommandSpec } from '../../src/cli/context.js';
import { CliError } from '../../src/cli/errors.js';
import { parseMetadataFiles, renderMetadata, roundTripLoss } from '../../src/cli/metadataFiles.js';
import { nextVersion, planApply } from '../../src/cli/migrate.js';
import { readMigrations, sqlIsEmpty, type Migration } from '../../src/cli/migrations.js';
import { objectName } from '../../src/cli/messages.js';
import { painter } from '../../src/cli/output.js';
import { readEnvFile } from '../../src/cli/project.js';
import { diffLines, unifiedDiff } from '../../src/cli/textdiff.js';
import { tempDir } from './helpers.js';

function lcs(a: string[], b: string[]): number {
  const dp = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) dp[i]![j] = a[i - 1] === b[j - 1] ? dp[i - 1]![j - 1]! + 1 : Math.max(dp[i - 1]![j]!, dp[i]![j - 1]!);
  return dp[a.length]![b.length]!;
}

test('diffLines: both sides come back and the edit script is minimal (random cases)', () => {
  let seed = 42;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (let round = 0; round < 400; round++) {
    const a = Array.from({ length: rnd(14) }, () => 'abcde'[rnd(5)]!);
    const b = Array.from({ length: rnd(14) }, () => 'abcde'[rnd(5)]!);
    const ops = diffLines(a, b);
    assert.deepEqual(
      ops.filter((o) => o.kind !== '+').map((o) => o.line),
      a,
    );
    assert.deepEqual(
      ops.filter((o) => o.kind !== '-').map((o) => o.line),
      b,
    );
    assert.equal(ops.filter((o) => o.kind !== ' ').length, a.length + b.length - 2 * lcs(a, b), `${a.join('')} → ${b.join('')}`);
  }
});

test('unifiedDiff: hunks as GNU diff -u writes them (checked by hand against diff 3.8)', () => {
  const p = painter(false);
  assert.equal(unifiedDiff('a\nb\n', 'a\nb\n', 'x', 'y', p), '');
  const before = Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n') + '\n';
  const after = before.replace('l3\n', 'l3\nnew\n').replace('l15\n', '');
  assert.equal(
    unifiedDiff(before, after, 'server/t.yaml', 'metadata/t.yaml', p),
    [
      '--- server/t.yaml',
      '+++ metadata/t.yaml',
      '@@ -2,6 +2,7 @@',
      ' l1',
      ' l2',
      ' l3',
      '+new',
      ' l4',
      ' l5',
      ' l6',
      '@@ -13,7 +14,6 @@',
      ' l12',
      ' l13',
      ' l14',
      '-l15',
      ' l16',
      ' l17',
      ' l18',
      '',
    ].join('\n'),
  );
  assert.equal(unifiedDiff('', 'a\n', 'x', 'y', p), '--- x\n+++ y\n@@ -0,0 +1,1 @@\n+a\n');
  assert.match(unifiedDiff('a\n', 'b\n', 'x', 'y', painter(true)), /\u001b\[31m-a\u001b\[0m\n\u001b\[32m\+b\u001b\[0m/);
});

const RICH = {
  version: 2,
  tables: [
    {
      table: { schema: 'public', name: 'author' },
      select_permissions: [{ role: 'user', permission: { columns: ['id'], filter: { id: { _eq: 'X-Svc-User-Id' } } } }],
    },
  ],
  functions: [{ function: { schema: 'public', name: 'f' } }],
  custom_types: {
    input_objects: [{ name: 'In', fields: [{ name: 'a', type: '[Int!]!', description: 'line 1\nline 2' }] }],
    objects: [
      {
        name: 'Out',
        description: 'say "hi"',
        fields: [{ name: 'id', type: 'Int!' }],
        relationships: [{ name: 'author', type: 'object', remote_table: { schema: 'public', name: 'author' }, field_mapping: { id: 'id' } }],
      },
    ],
    scalars: [{ name: 'Date', description: 'a date' }],
    enums: [{ name: 'E', values: [{ value: 'A' }, { value: 'B', description: 'b', is_deprecated: true }] }],
  },
  actions: [
    {
      name: 'doit',
      definition: {
        arguments: [{ name: 'x', type: 'In!', description: 'the x' }],
        output_type: 'Out',
        headers: [],
        forward_client_headers: false,
        handler: 'http://h/doit',
        type: 'mutation',
        kind: 'asynchronous',
        timeout: 3,
      },
      comment: 'c',
      permissions: [{ role: 'user' }],
    },
    {
      name: 'get',
      definition: {
        arguments: [],
        output_type: '[Out!]',
        headers: [{ name: 'h', value_from_env: 'V' }],
        forward_client_headers: true,
        handler: '{{BASE}}/get',
        type: 'query',
      },
    },
  ],
  cron_triggers: [{ name: 'c', webhook: 'http://h/c', schedule: '* * * * *', include_in_metadata: true, payload: { yes: 'no', n: 1.5, s: '007', t: 'true' } }],
  inherited_roles: [{ role_name: 'both', role_set: ['user', 'editor'] }],
};

test('metadata files: render → parse gives back what export_metadata holds', () => {
  assert.equal(roundTripLoss(RICH), undefined);
  const back = parseMetadataFiles(renderMetadata(RICH));
  assert.deepEqual(back, RICH);
  assert.deepEqual(Object.keys(back), Object.keys(RICH), "export_metadata's key order");
  // strings that look like other YAML types stay strings
  assert.match(renderMetadata(RICH).get('cron_triggers.yaml')!, /s: "007"\n {4}t: "true"/);
  // empty metadata: every file, nothing in them
  const empty = renderMetadata({ version: 2 });
  assert.equal(empty.get('tables.yaml'), '[]\n');
  assert.equal(empty.get('actions.graphql'), '');
  assert.deepEqual(parseMetadataFiles(empty), { version: 2 });
  // what SDL cannot say is reported
  const withNull = { ...RICH, custom_types: { scalars: [{ name: 'D', description: null }] } };
  assert.equal(roundTripLoss(withNull), '$.custom_types.scalars[0].description');
});

test('metadata files: actions.graphql and actions.yaml must agree', () => {
  const files = renderMetadata(RICH);
  const bad = (graphql: string) => {
    const f = new Map<string, string | undefined>(files);
    f.set('actions.graphql', graphql);
    try {
      parseMetadataFiles(f);
    } catch (e) {
      assert.ok(e instanceof CliError);
      return e.message;
    }
    return 'no error';
  };
  assert.match(bad(files.get('actions.graphql')!.replace('get: [Out!]', 'gett: [Out!]')), /actions\.yaml: action "get" is not defined in actions\.graphql/);
  assert.match(bad(`${files.get('actions.graphql')!}\ntype Query { extra: Int }\n`), /action "extra" has no entry in actions\.yaml/);
  assert.match(bad(`${files.get('actions.graphql')!}\ninterface I { a: Int }\n`), /InterfaceTypeDefinition is not supported here/);
  assert.match(bad('type Query {'), /^actions\.graphql: 1:13: Syntax Error/);
  // a type only in actions.graphql is picked up
  const f = new Map<string, string | undefined>(files);
  f.set('actions.graphql', `${files.get('actions.graphql')!}\nscalar Extra\n`);
  assert.deepEqual((parseMetadataFiles(f).custom_types as { scalars: unknown[] }).scalars, [{ name: 'Date', description: 'a date' }, { name: 'Extra' }]);
});

const mig = (v: number, down = true): Migration => ({
  version: BigInt(v),
  name: `m${v}`,
  id: `${v}_m${v}`,
  location: `/p/migrations/${v}_m${v}`,
  up: [{ file: 'up.sql', requests: [{}], empty: false }],
  down: down ? [{ file: 'down.sql', requests: [{}], empty: false }] : [],
  files: [],
});

test('planApply: which migrations run, in which order', () => {
  const local = [mig(1), mig(2), mig(3, false), mig(4)];
  const applied = (...vs: number[]) => vs.map((v) => ({ version: BigInt(v), dirty: false }));
  const plan = (a: number[], r: Parameters<typeof planApply>[2]) =>
    planApply(local, applied(...a), r, 'migrations').map((s) => `${s.migration.version}${s.direction === 'up' ? '+' : '-'}`);
  const up = { type: 'up' as const, skipExecution: false };
  assert.deepEqual(plan([], up), ['1+', '2+', '3+', '4+']);
  assert.deepEqual(plan([1, 3], up), ['2+', '4+'], 'older pending ones too, as upstream');
  assert.deepEqual(plan([], { ...up, up: 2 }), ['1+', '2+']);
  assert.deepEqual(plan([1, 2], { ...up, down: 1 }), ['2-']);
  assert.deepEqual(plan([1, 2], { ...up, down: 'all' }), ['2-', '1-']);
  assert.throws(() => plan([1, 2, 3], { ...up, down: 1 }), /migration 3_m3 has no down\.sql or down\.yaml/);
  assert.deepEqual(plan([1, 2, 3], { ...up, down: 1, skipExecution: true }), ['3-']);
  assert.deepEqual(plan([1, 2, 4], { ...up, goto: 2n }), ['4-']);
  assert.deepEqual(plan([1], { ...up, goto: 4n }), ['2+', '3+', '4+']);
  assert.deepEqual(plan([1], { ...up, version: 1n }), [], 'already applied: nothing');
  assert.deepEqual(plan([1], { ...up, version: 1n, type: 'down' }), ['1-']);
  assert.throws(() => plan([9], { ...up, down: 1 }), /cannot roll back 9: applied on the server but not in migrations/);
  assert.deepEqual(plan([9], { ...up, version: 9n, type: 'down', skipExecution: true }), ['9-'], 'unmark a version whose files are gone');
  assert.throws(() => plan([], { ...up, version: 7n }), /migration 7 is not in migrations/);
  assert.equal(nextVersion([5n], 3), 6n);
  assert.equal(nextVersion([5n], 1000), 1000n);
});

test('readMigrations: directories and flat files, steps in order, empty SQL', () => {
  const t = tempDir();
  try {
    const m = join(t.dir, 'migrations');
    mkdirSync(join(m, '10_a'), { recursive: true });
    writeFileSync(join(m, '10_a', 'up.sql'), 'create table a ();');
    writeFileSync(join(m, '10_a', 'up.yaml'), '- type: track_table\n  args: {table: a}\n');
    writeFileSync(join(m, '10_a', 'down.sql'), '-- nothing\n/* at all */\n');
    writeFileSync(join(m, '2_b.up.sql'), 'select 1;');
    writeFileSync(join(m, '.gitkeep'), '');
    const ms = readMigrations(m, t.dir);
    assert.deepEqual(
      ms.map((x) => x.id),
      ['2_b', '10_a'],
    );
    assert.deepEqual(
      ms[1]!.up.map((s) => s.file),
      ['migrations/10_a/up.sql', 'migrations/10_a/up.yaml'],
    );
    assert.deepEqual(ms[1]!.up[1]!.requests, [{ type: 'track_table', args: { table: 'a' } }]);
    assert.equal(ms[1]!.down[0]!.empty, true);
    assert.equal(ms[0]!.down.length, 0);
    writeFileSync(join(m, '10_other.up.sql'), 'x');
    assert.throws(() => readMigrations(m, t.dir), /two migrations have version 10: 10_a and 10_other/);
  } finally {
    t.remove();
  }
  assert.equal(sqlIsEmpty(' -- c\n'), true);
  assert.equal(sqlIsEmpty('select 1 -- c'), false);
});

const spec: CommandSpec = {
  path: ['x'],
  summary: '',
  usage: '',
  examples: [],
  flags: [
    { name: 'schema', type: 'list', description: '' },
    { name: 'dry-run', type: 'bool', description: '' },
    { name: 'name', type: 'string', description: '' },
  ],
  args: { min: 0, max: 2 },
  server: true,
  exits: [],
  run: async () => 0,
};

test('parseArgs: flag forms', () => {
  const p = parseArgs(spec, ['a', '--schema', 'x,y', '--schema=z', '--dry-run=false', '--name=n', '-o', 'json', '--', '--b']);
  assert.deepEqual(p.args, ['a', '--b']);
  assert.deepEqual(p.flags.get('schema'), ['x', 'y', 'z']);
  assert.equal(p.flags.get('dry-run'), false);
  assert.equal(p.flags.get('name'), 'n');
  assert.equal(p.flags.get('output'), 'json');
  assert.equal(p.flags.get('endpoint'), undefined);
  assert.throws(() => parseArgs(spec, ['--nope']), /unknown flag --nope for "svc x"/);
  assert.throws(() => parseArgs(spec, ['--name']), /flag --name needs a value/);
  assert.throws(() => parseArgs(spec, ['--dry-run=maybe']), /expects true or false/);
});

test('readEnvFile: .env syntax', () => {
  const t = tempDir();
  try {
    writeFileSync(join(t.dir, '.env'), '# c\nA=1\nexport B="two words"\nC=\'x y\'\nD=v # comment\nnot a line\n');
    assert.deepEqual(readEnvFile(join(t.dir, '.env')), { A: '1', B: 'two words', C: 'x y', D: 'v' });
    assert.equal(readEnvFile(join(t.dir, 'none')), undefined);
  } finally {
    t.remove();
  }
});

test('objectName: how a refused request names the inconsistent objects of its internal list', () => {
  const table = { schema: 'public', name: 'article' };
  assert.equal(objectName(table), 'public.article');
  assert.equal(objectName({ table, name: 'author', using: {} }), 'public.article.author');
  assert.equal(objectName({ table, role: 'user', permission: {} }), 'public.article.user');
  // an event trigger: {table, configuration} (as upstream v1.3 reports it)
  assert.equal(objectName({ table, configuration: { name: 'article_changes' } }), 'public.article.article_changes');
});
