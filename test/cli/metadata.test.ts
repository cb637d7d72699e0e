/**
 * `svc metadata` against real Svc processes, the CLI run as a child process: export from a server
 * with tables, relationships, permissions, computed fields, custom names, functions, event and
 * cron triggers, actions and custom types, a remote schema (a real GraphQL server) with a remote
 * relationship, a query collection and the allow-list → migrations and metadata applied onto a
 * second server on a fresh database → its export is identical (files and export_metadata);
 * diff exits 0, then 1 after a change; apply repairs it; refused metadata changes nothing;
 * inconsistency list/status/drop, reload, clear.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { messagesSchema } from '../fixtures/remote/schemas.js';
import { startGraphQLServer, type GraphQLTestServer } from '../fixtures/remote/server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { cleanEnv, startSvcProcess, type SvcProcess } from '../helpers/process.js';
import { query } from '../helpers/server.js';
import { METADATA_OPS, SCHEMA } from './fixture.js';
import { svc, svcOk, tempDir } from './helpers.js';

let dbA: TestDatabase;
let dbB: TestDatabase;
let a: { proc: SvcProcess; url: string };
let b: { proc: SvcProcess; url: string };
let remote: GraphQLTestServer;
let tmp: { dir: string; remove(): void };
let project: string;

before(async () => {
  [dbA, dbB] = await Promise.all([createTestDatabase(), createTestDatabase()]);
  remote = await startGraphQLServer({ '/': { schema: messagesSchema() } });
  const env = cleanEnv();
  const [sa, sb] = await Promise.all([
    startSvcProcess(['--database-url', dbA.url, '--enabled-log-types', 'startup'], env),
    startSvcProcess(['--database-url', dbB.url, '--enabled-log-types', 'startup', '--admin-secret', SECRET], env),
  ]);
  a = sa;
  b = sb;
  tmp = tempDir();
  project = join(tmp.dir, 'proj');
});

after(async () => {
  await Promise.all([a?.proc.stop(5_000), b?.proc.stop(5_000)]);
  await remote?.close();
  await Promise.all([dbA?.drop(), dbB?.drop()]);
  tmp?.remove();
});

const inProject = (extra: Record<string, string> = {}) => ({ cwd: project, env: extra });
/** the second server has an admin secret: the CLI takes it from the environment */
const SECRET = 's3cret';
const onB = (extra: Record<string, string> = {}) => inProject({ SVC_GRAPHQL_ADMIN_SECRET: SECRET, ...extra });
const asAdmin = { 'x-svc-admin-secret': SECRET };
const files = (dir: string) =>
  Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((f) => [f, readFileSync(join(dir, f), 'utf8')]),
  );
const exportOf = (url: string) => query(url, { type: 'export_metadata', args: {} }, url === b.url ? asAdmin : {});

let mdA: any;

test('export: every kind of metadata object into the metadata directory', async () => {
  await svcOk(['init', 'proj', '--endpoint', a.url], { cwd: tmp.dir });
  writeFileSync(join(tmp.dir, 'schema.sql'), SCHEMA);
  await svcOk(['migrate', 'create', 'init', '--sql-from-file', join(tmp.dir, 'schema.sql')], inProject());
  await svcOk(['migrate', 'apply'], inProject());
  await query(a.url, { type: 'bulk', args: METADATA_OPS(remote.url) });
  mdA = await exportOf(a.url);

  const r = await svcOk(['metadata', 'export'], inProject());
  assert.match(r.stdout, /exported the metadata to metadata\/ \(11 files\)/);
  assert.equal(r.stderr, '', 'no warning: everything round-trips');
  const f = files(join(project, 'metadata'));
  assert.deepEqual(Object.keys(f), [
    'actions.graphql',
    'actions.yaml',
    'allow_list.yaml',
    'cron_triggers.yaml',
    'functions.yaml',
    'inherited_roles.yaml',
    'query_collections.yaml',
    'remote_schemas.yaml',
    'rest_endpoints.yaml',
    'tables.yaml',
    'version.yaml',
  ]);
  assert.equal(f['version.yaml'], 'version: 2\n');
  for (const s of [
    'object_relationships',
    'array_relationships',
    'computed_fields',
    'remote_relationships',
    'insert_permissions',
    'select_permissions',
    'update_permissions',
    'delete_permissions',
    'event_triggers',
    'custom_root_fields',
    'X-Svc-User-Id',
  ]) {
    assert.ok(f['tables.yaml']!.includes(s), `tables.yaml has ${s}`);
  }
  assert.match(f['functions.yaml']!, /name: search_articles/);
  assert.match(f['remote_schemas.yaml']!, new RegExp(`url: ${remote.url.replace(/[.]/g, '\\.')}`));
  assert.match(f['cron_triggers.yaml']!, /name: nightly/);
  assert.match(f['inherited_roles.yaml']!, /- role_name: user_and_editor\n {2}role_set:\n {2}- user\n {2}- editor/);
  assert.doesNotMatch(f['cron_triggers.yaml']!, /not_in_metadata/);
  assert.match(f['query_collections.yaml']!, /query: \|-?\n\s+query articles \{/, 'GraphQL as a literal block');
  assert.equal(f['allow_list.yaml'], '- collection: app\n');
  assert.match(f['actions.graphql']!, /type Query \{\n {2}stats\(since: Timestamp, mood: Mood\): \[Stats!\]!\n\}/);
  assert.match(
    f['actions.graphql']!,
    /type Mutation \{\n {2}export_all: Stats\n {2}login\(\n {4}"credentials"\n {4}input: LoginInput!\n {2}\): LoginOutput\n\}/,
  );
  assert.match(f['actions.graphql']!, /"no longer"\n {2}GRUMPY @deprecated/);
  assert.match(f['actions.yaml']!, /- name: login\n {2}definition:\n/);
  assert.doesNotMatch(f['actions.yaml']!, /output_type|arguments/, 'types live in actions.graphql');
  assert.match(f['actions.yaml']!, /relationships:\n\s+- name: author/);
});

test('apply onto a fresh database: the second server exports the identical metadata', async () => {
  // without its admin secret, or with a wrong one, the server refuses the CLI: exit 4, nothing done
  const none = await svc(['migrate', 'status', '--endpoint', b.url], inProject());
  assert.equal(none.code, 4, none.stderr);
  assert.match(
    none.stderr,
    /refused the admin credentials: x-svc-admin-secret\/x-svc-access-key required, but not found\n {2}the server has an admin secret: give it with --admin-secret/,
  );
  const wrong = await svc(['migrate', 'status', '--endpoint', b.url, '--admin-secret', 'nope'], onB());
  assert.equal(wrong.code, 4, wrong.stderr);
  assert.match(wrong.stderr, /the admin secret is not the server's/);
  await svcOk(['migrate', 'apply', '--endpoint', b.url], onB());
  const applied = await svcOk(['metadata', 'apply', '--endpoint', b.url], onB());
  assert.match(
    applied.stdout,
    /metadata applied \(changed: tables\.yaml, functions\.yaml, remote_schemas\.yaml, query_collections\.yaml, allow_list\.yaml, actions\.yaml, actions\.graphql, cron_triggers\.yaml, inherited_roles\.yaml\)/,
  );
  assert.deepEqual(await exportOf(b.url), mdA);
  await svcOk(['metadata', 'export', '--endpoint', b.url], onB({ SVC_GRAPHQL_METADATA_DIRECTORY: 'metadata_b' }));
  assert.deepEqual(files(join(project, 'metadata_b')), files(join(project, 'metadata')));
  // and the objects work there: the remote relationship, the computed field
  await query(b.url, { type: 'run_sql', args: { sql: "insert into profiles values (1, 2); insert into author (name) values ('Ada')" } }, asAdmin);
  const g = await fetch(`${b.url}/v1/graphql`, {
    method: 'POST',
    headers: asAdmin,
    body: JSON.stringify({ query: '{ profiles { id message { msg } } authors { full_name } }' }),
  }).then((r) => r.json());
  assert.deepEqual(g, { data: { profiles: [{ id: 1, message: { msg: 'You lose!' } }], authors: [{ full_name: 'Ada!' }] } });
  // applying again sends nothing
  assert.match((await svcOk(['metadata', 'apply', '--endpoint', b.url], onB())).stdout, /already has this metadata/);
});

test('diff exits 0, then 1 after a change on the server; apply repairs it', async () => {
  const same = await svcOk(['metadata', 'diff', '--endpoint', b.url], onB());
  assert.match(same.stdout, /no differences/);
  await query(b.url, { type: 'drop_select_permission', args: { table: 'article', role: 'user' } }, asAdmin);
  const d = await svc(['metadata', 'diff', '--endpoint', b.url], onB());
  assert.equal(d.code, 1, d.stderr);
  assert.match(d.stdout, /^--- server\/tables\.yaml\n\+\+\+ metadata\/tables\.yaml\n@@ /m);
  assert.match(d.stdout, /^\+ {2}select_permissions:\n\+ {2}- role: user$/m);
  assert.match(d.stdout, /1 file differs: tables\.yaml/);
  assert.doesNotMatch(d.stdout, /\u001b\[/, 'no colour when stdout is not a terminal');
  const j = await svc(['metadata', 'diff', '--endpoint', b.url, '-o', 'json'], onB());
  assert.equal(j.code, 1);
  assert.equal(j.json().identical, false);
  assert.deepEqual(
    j.json().files.map((x: { file: string }) => x.file),
    ['tables.yaml'],
  );
  const dry = await svcOk(['metadata', 'apply', '--dry-run', '--endpoint', b.url], onB());
  assert.match(dry.stdout, /1 file differs/);
  assert.equal((await exportOf(b.url)).tables.find((t: any) => t.table.name === 'article').select_permissions, undefined, 'dry run changed nothing');

  assert.match((await svcOk(['metadata', 'apply', '--endpoint', b.url], onB())).stdout, /metadata applied \(changed: tables\.yaml\)/);
  await svcOk(['metadata', 'diff', '--endpoint', b.url], onB());
  assert.deepEqual(await exportOf(b.url), mdA);
  // two directories, no server
  await svcOk(['metadata', 'diff', 'metadata', 'metadata_b'], inProject());
});

test('metadata the server refuses changes nothing and says why', async () => {
  const bad = join(project, 'metadata_bad');
  cpSync(join(project, 'metadata'), bad, { recursive: true });
  writeFileSync(join(bad, 'tables.yaml'), `${readFileSync(join(bad, 'tables.yaml'), 'utf8')}- table:\n    schema: public\n    name: nosuch\n`);
  const r = await svc(['metadata', 'apply', '--endpoint', b.url], onB({ SVC_GRAPHQL_METADATA_DIRECTORY: 'metadata_bad' }));
  assert.equal(r.code, 5, r.stderr);
  assert.match(r.stderr, /the server refused the metadata \(nothing was changed\)/);
  assert.match(r.stderr, /nosuch/);
  assert.deepEqual(await exportOf(b.url), mdA);
  // a broken file is a project error (3) naming the file and line
  writeFileSync(join(bad, 'functions.yaml'), '- function:\n  name: [oops\n');
  const y = await svc(['metadata', 'apply', '--endpoint', b.url], onB({ SVC_GRAPHQL_METADATA_DIRECTORY: 'metadata_bad' }));
  assert.equal(y.code, 3, y.stderr);
  assert.match(y.stderr, /functions\.yaml: 3:1: Flow sequence in block collection must be sufficiently indented and end with a \]\n/);
  writeFileSync(join(bad, 'functions.yaml'), '[]\n');
  writeFileSync(join(bad, 'actions.graphql'), 'type Mutation { login: LoginOutput }\n');
  const g = await svc(['metadata', 'apply', '--endpoint', b.url], onB({ SVC_GRAPHQL_METADATA_DIRECTORY: 'metadata_bad' }));
  assert.equal(g.code, 3, g.stderr);
  assert.match(g.stderr, /actions\.yaml: action "export_all" is not defined in actions\.graphql \(as a field of type Query or type Mutation\)/);
});

test('inconsistency status / list / drop, reload, clear', async () => {
  await svcOk(['metadata', 'inconsistency', 'status', '--endpoint', b.url], onB());
  await remote.stop();
  try {
    const reload = await svcOk(['metadata', 'reload', '--reload-remote-schemas', '--endpoint', b.url], onB());
    assert.match(reload.stderr, /the metadata is inconsistent/);
    const st = await svc(['md', 'ic', 'status', '--endpoint', b.url], onB());
    assert.equal(st.code, 1, st.stderr);
    assert.match(st.stdout, /metadata is inconsistent/);
    const list = await svcOk(['metadata', 'inconsistency', 'list', '--endpoint', b.url, '-o', 'json'], onB());
    assert.ok(
      list.json().inconsistent_objects.some((o: { type: string }) => o.type === 'remote_schema'),
      list.stdout,
    );
    const text = await svcOk(['metadata', 'inconsistency', 'ls', '--endpoint', b.url], onB());
    assert.match(text.stdout, /TYPE\s+NAME\s+REASON\n.*remote_schema\s+msgs/);
    await svcOk(['metadata', 'inconsistency', 'drop', '--endpoint', b.url], onB());
    await svcOk(['metadata', 'inconsistency', 'status', '--endpoint', b.url], onB());
    assert.equal((await exportOf(b.url)).remote_schemas, undefined);
  } finally {
    await remote.start();
  }
  await svcOk(['metadata', 'clear', '--endpoint', b.url], onB());
  assert.deepEqual((await exportOf(b.url)).tables, []);
  assert.ok(existsSync(join(project, 'metadata', 'tables.yaml')));
});
