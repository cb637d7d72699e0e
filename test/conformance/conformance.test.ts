/**
 * Conformance: runs exactly the items listed in passing.txt (against a fresh server configured like
 * the upstream CI), from every suite (the public copy and upstream/), and fails, with the diff, if
 * any of them does not pass. The list grows with
 * `npm run conformance:update`.
 *
 * Then once more against a server with an admin secret (the runner's `--admin-secret`): every listed
 * item of the areas in ADMIN_SECRET_AREAS must pass there too, including the harness's "forbidden"
 * checks (the same request without the secret and with a wrong one: HTTP 200 on /v1/graphql and
 * /v1beta1/relay, 401 or 404 elsewhere), so a status regression cannot hide behind the default
 * no-secret run.
 */
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { startConformanceServer, type TestServer } from '../helpers/server.js';
import { FIXTURE_NEEDS, startFixtures, type Fixtures } from './fixtures.js';
import { SUITES, loadManifest, plan, readPassingList, runSuites, type ConformanceResult } from './runner.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const listed = readPassingList(join(HERE, 'passing.txt'));
const listedSet = new Set(listed);

/** the areas run a second time with an admin secret (issue 28) */
const ADMIN_SECRET_AREAS = ['graphql_query', 'graphql_mutation', 'metadata', 'relay', 'actions'];
const ADMIN_SECRET = 'conformance-s3cret';

/** a class's failures, or a reason to skip it (helper servers or PostGIS missing) */
function verdict(ids: string[], byId: Map<string, ConformanceResult>, fixtures: Fixtures | undefined, postgis: boolean): { failures: string[]; skip?: string } {
  const failures: string[] = [];
  for (const id of ids) {
    const r = byId.get(id);
    if (!r) failures.push(`${id}: not run`);
    else if (r.status !== 'pass') failures.push(`${id}: ${r.message}${r.diff ? `\n${r.diff.replace(/^/gm, '    ')}` : ''}`);
  }
  // a machine whose PostgreSQL has no PostGIS cannot run the setup SQL of these classes
  // (.ci/run installs it; with PostGIS present this never skips)
  // the helper servers (fixtures.ts) need fixed ports: when one is taken, its cases are skipped
  const missing = FIXTURE_NEEDS.filter((n) => !fixtures?.needs.includes(n));
  if (failures.length > 0 && failures.every((f) => missing.some((n) => f.includes(`needs ${n}`)))) {
    return { failures, skip: `helper servers not started (their ports are taken): ${missing.join(', ')}` };
  }
  if (!postgis && failures.length > 0 && failures.every((f) => f.includes('class setup failed') && f.includes('"code":"postgres-error"'))) {
    return { failures, skip: 'PostGIS is not installed on this PostgreSQL (Debian: postgresql-15-postgis-3)' };
  }
  return { failures };
}

/** listed items grouped by class (`module::Class`) */
function byClass(ids: readonly string[]): Map<string, string[]> {
  const classes = new Map<string, string[]>();
  for (const id of ids) {
    const cls = id.split('::').slice(0, 2).join('::');
    classes.set(cls, [...(classes.get(cls) ?? []), id]);
  }
  return classes;
}

describe('conformance (passing.txt)', { timeout: 20 * 60_000 }, () => {
  let server: TestServer | undefined;
  let fixtures: Fixtures | undefined;
  const byId = new Map<string, ConformanceResult>();
  let postgis = true;

  before(async () => {
    server = await startConformanceServer();
    fixtures = await startFixtures(server.url);
    postgis = (await server.engine.db.query("select 1 from pg_available_extensions where name = 'postgis'")).rows.length > 0;
    const results = await runSuites({ url: server.url, filter: (id) => listedSet.has(id), fixtures: fixtures.needs });
    for (const r of results) byId.set(r.id, r);
  });

  after(async () => {
    await fixtures?.close();
    await server?.close();
  });

  test('passing.txt names existing, runnable items without duplicates', () => {
    assert.ok(listed.length > 0, 'passing.txt is empty');
    assert.equal(listedSet.size, listed.length, 'passing.txt has duplicate lines');
    const known = new Map<string, string | null>();
    for (const suite of SUITES) for (const { items } of plan(loadManifest(suite.manifest), { fixtures: FIXTURE_NEEDS })) for (const it of items) known.set(it.id, it.skip);
    const unknown = listed.filter((id) => !known.has(id));
    assert.deepEqual(unknown, [], 'passing.txt lists items that are in no manifest (manifest.json, upstream/manifest.json)');
    const skipped = listed.filter((id) => known.get(id));
    assert.deepEqual(skipped, [], 'passing.txt lists items the runner skips');
  });

  // one test per class, each checking every listed item of the class
  for (const [cls, ids] of byClass(listed)) {
    test(cls, (t) => {
      const { failures, skip } = verdict(ids, byId, fixtures, postgis);
      if (skip) return void t.skip(skip);
      assert.ok(failures.length === 0, `${failures.length} of ${ids.length} listed items failed:\n${failures.join('\n')}`);
    });
  }
});

describe(`conformance with an admin secret (passing.txt, areas ${ADMIN_SECRET_AREAS.join(', ')})`, { timeout: 20 * 60_000 }, () => {
  let server: TestServer | undefined;
  let fixtures: Fixtures | undefined;
  const byId = new Map<string, ConformanceResult>();
  let postgis = true;
  let ran = new Set<string>();

  before(async () => {
    server = await startConformanceServer({ adminSecret: ADMIN_SECRET });
    fixtures = await startFixtures(server.url, ADMIN_SECRET);
    postgis = (await server.engine.db.query("select 1 from pg_available_extensions where name = 'postgis'")).rows.length > 0;
    const results = await runSuites({ url: server.url, adminSecret: ADMIN_SECRET, areas: ADMIN_SECRET_AREAS, filter: (id) => listedSet.has(id), fixtures: fixtures.needs });
    for (const r of results) byId.set(r.id, r);
    ran = new Set(results.map((r) => r.id));
  });

  after(async () => {
    await fixtures?.close();
    await server?.close();
  });

  test('the areas have listed items, and all of them ran', () => {
    assert.ok(inAreas.size > 300, `only ${inAreas.size} items in ${ADMIN_SECRET_AREAS.join(', ')}`);
    assert.ok(ran.size > 300, `only ${ran.size} listed items ran in ${ADMIN_SECRET_AREAS.join(', ')}`);
  });

  // the listed items of these areas
  const inAreas = new Set<string>();
  for (const suite of SUITES) {
    for (const { items } of plan(loadManifest(suite.manifest), { areas: ADMIN_SECRET_AREAS, adminSecret: ADMIN_SECRET, fixtures: FIXTURE_NEEDS })) for (const it of items) inAreas.add(it.id);
  }
  for (const [cls, ids] of byClass(listed.filter((id) => inAreas.has(id)))) {
    test(`${cls} (admin secret)`, (t) => {
      const { failures, skip } = verdict(ids, byId, fixtures, postgis);
      if (skip) return void t.skip(skip);
      assert.ok(failures.length === 0, `${failures.length} of ${ids.length} listed items failed with an admin secret:\n${failures.join('\n')}`);
    });
  }
});
