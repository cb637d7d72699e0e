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
import { readFileSync } from 'node:fs';
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

/**
 * What may be skipped, decided before anything runs and never from a failure's text: the classes
 * whose setup creates the PostGIS extension when this PostgreSQL has none (.ci/run installs it),
 * and the items that need a helper server (fixtures.ts) whose fixed port was taken. Item id → why.
 */
const POSTGIS_SETUP = /create\s+extension[^;"]*\bpostgis/i;

async function skipReasons(server: TestServer, fixtures: Fixtures): Promise<Map<string, string>> {
  const reasons = new Map<string, string>();
  const postgis = (await server.engine.db.query("select 1 from pg_available_extensions where name = 'postgis'")).rows.length > 0;
  for (const suite of SUITES) {
    for (const { cls, items } of plan(loadManifest(suite.manifest), { fixtures: fixtures.needs })) {
      const setup = [...(cls.setup ?? []), ...(cls.values_setup ?? [])];
      const needsPostgis = !postgis && setup.some((f) => POSTGIS_SETUP.test(readFileSync(join(suite.cases, f), 'utf8')));
      for (const it of items) {
        if (needsPostgis) reasons.set(it.id, 'PostGIS is not installed on this PostgreSQL (Debian: postgresql-15-postgis-3)');
        // listed items are never skipped with every helper server up (checked below): a skip here is a missing one
        else if (it.skip?.startsWith('needs ')) reasons.set(it.id, `helper servers not started (their ports are taken): ${it.skip}`);
      }
    }
  }
  return reasons;
}

/** a class's failures (its items not skipped up front), and why the rest were skipped */
function verdict(ids: string[], byId: Map<string, ConformanceResult>, skipped: Map<string, string>): { failures: string[]; skip?: string } {
  const failures: string[] = [];
  let skip: string | undefined;
  for (const id of ids) {
    const why = skipped.get(id);
    if (why) {
      skip ??= why;
      continue;
    }
    const r = byId.get(id);
    if (!r) failures.push(`${id}: not run`);
    else if (r.status !== 'pass') failures.push(`${id}: ${r.message}${r.diff ? `\n${r.diff.replace(/^/gm, '    ')}` : ''}`);
  }
  return failures.length ? { failures } : { failures, ...(skip ? { skip } : {}) };
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
  let skipped = new Map<string, string>();

  before(async () => {
    server = await startConformanceServer();
    fixtures = await startFixtures(server.url);
    skipped = await skipReasons(server, fixtures);
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
    for (const suite of SUITES)
      for (const { items } of plan(loadManifest(suite.manifest), { fixtures: FIXTURE_NEEDS })) for (const it of items) known.set(it.id, it.skip);
    const unknown = listed.filter((id) => !known.has(id));
    assert.deepEqual(unknown, [], 'passing.txt lists items that are in no manifest (manifest.json, upstream/manifest.json)');
    const skipped = listed.filter((id) => known.get(id));
    assert.deepEqual(skipped, [], 'passing.txt lists items the runner skips');
  });

  // one test per class, each checking every listed item of the class
  for (const [cls, ids] of byClass(listed)) {
    test(cls, (t) => {
      const { failures, skip } = verdict(ids, byId, skipped);
      if (skip) return void t.skip(skip);
      assert.ok(failures.length === 0, `${failures.length} of ${ids.length} listed items failed:\n${failures.join('\n')}`);
    });
  }
});

describe(`conformance with an admin secret (passing.txt, areas ${ADMIN_SECRET_AREAS.join(', ')})`, { timeout: 20 * 60_000 }, () => {
  let server: TestServer | undefined;
  let fixtures: Fixtures | undefined;
  const byId = new Map<string, ConformanceResult>();
  let skipped = new Map<string, string>();
  let ran = new Set<string>();

  before(async () => {
    server = await startConformanceServer({ adminSecret: ADMIN_SECRET });
    fixtures = await startFixtures(server.url, ADMIN_SECRET);
    skipped = await skipReasons(server, fixtures);
    const results = await runSuites({
      url: server.url,
      adminSecret: ADMIN_SECRET,
      areas: ADMIN_SECRET_AREAS,
      filter: (id) => listedSet.has(id),
      fixtures: fixtures.needs,
    });
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
    for (const { items } of plan(loadManifest(suite.manifest), { areas: ADMIN_SECRET_AREAS, adminSecret: ADMIN_SECRET, fixtures: FIXTURE_NEEDS }))
      for (const it of items) inAreas.add(it.id);
  }
  for (const [cls, ids] of byClass(listed.filter((id) => inAreas.has(id)))) {
    test(`${cls} (admin secret)`, (t) => {
      const { failures, skip } = verdict(ids, byId, skipped);
      if (skip) return void t.skip(skip);
      assert.ok(failures.length === 0, `${failures.length} of ${ids.length} listed items failed with an admin secret:\n${failures.join('\n')}`);
    });
  }
});
