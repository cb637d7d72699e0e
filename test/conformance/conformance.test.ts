/**
 * Conformance: runs exactly the items listed in passing.txt (against a fresh server configured like
 * the upstream CI), from every suite (the public copy and upstream/), and fails, with the diff, if
 * any of them does not pass. The list grows with
 * `npm run conformance:update`.
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
  const classes = new Map<string, string[]>();
  for (const id of listed) {
    const cls = id.split('::').slice(0, 2).join('::');
    classes.set(cls, [...(classes.get(cls) ?? []), id]);
  }
  for (const [cls, ids] of classes) {
    test(cls, (t) => {
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
        t.skip(`helper servers not started (their ports are taken): ${missing.join(', ')}`);
        return;
      }
      if (!postgis && failures.length > 0 && failures.every((f) => f.includes('class setup failed') && f.includes('"code":"postgres-error"'))) {
        t.skip('PostGIS is not installed on this PostgreSQL (Debian: postgresql-15-postgis-3)');
        return;
      }
      assert.ok(failures.length === 0, `${failures.length} of ${ids.length} listed items failed:\n${failures.join('\n')}`);
    });
  }
});
