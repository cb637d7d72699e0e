/**
 * Regression guard of the benchmark's read path (issue 32), not a timing test:
 *
 * - the SQL Svc generates for each bench scenario (bench/queries/*.hasura.graphql on the bench
 *   schema and metadata) is the checked-in snapshot test/bench/scenario_sql.json: a change of
 *   shape (an extra subquery, a per-row function call, a session variable read differently) shows
 *   up as a diff to review, and its plan to measure (`npm run bench`). Regenerate with
 *   SVC_UPDATE_SNAPSHOT=1 after a deliberate change;
 * - a repeated request is one plan-cache hit and exactly one statement (the plan's named
 *   prepared statement): no re-planning, no second round trip, no per-request catalog read;
 * - each scenario's data equals what the raw baseline's hand-written SQL (bench/queries/<id>.sql)
 *   returns on the same rows.
 *
 * The dataset is bench/dataset.sql scaled down (52,000 articles (f_large reads ids above 50,000), 40,000 comments).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { SCENARIOS, diff, loadQueries } from '../../bench/scenarios.mjs';
import { postGraphql, query, startTestServer, type TestServer } from '../helpers/server.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const BENCH = join(HERE, '..', '..', 'bench');
const SNAPSHOT = join(HERE, 'scenario_sql.json');
const READS = SCENARIOS.filter((s) => s.id !== 'g_insert');

/** bench/dataset.sql with fewer rows, runnable as one simple-protocol batch */
function smallDataset(): string {
  return readFileSync(join(BENCH, 'dataset.sql'), 'utf8')
    .split('\n')
    .filter((l) => !l.startsWith('\\') && !/^VACUUM/.test(l))
    .join('\n')
    .replace('generate_series(1, 100000)', 'generate_series(1, 52000)')
    .replace('generate_series(1, 1000000)', 'generate_series(1, 40000)')
    .replace('(i - 1) % 100000', '(i - 1) % 52000')
    .replace('(i - 1) / 100000', '(i - 1) / 52000');
}

describe('bench scenarios: generated SQL, one statement per cached request, same data as the raw SQL', () => {
  let server: TestServer;
  const lines: string[] = [];
  const log = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l.includes('"query-log"')) lines.push(l);
      cb();
    },
  });

  before(async () => {
    server = await startTestServer({ logLevel: 'info', enabledLogTypes: ['query-log'] }, log);
    const c = new pg.Client({ connectionString: server.databaseUrl });
    await c.connect();
    try {
      await c.query(smallDataset());
      await c.query('ANALYZE authors, articles, comments');
    } finally {
      await c.end();
    }
    await query(server.url, { type: 'replace_metadata', args: JSON.parse(readFileSync(join(BENCH, 'svc-metadata.json'), 'utf8')) });
  });
  after(async () => {
    await server?.close();
  });

  const ask = (s: (typeof SCENARIOS)[number]) =>
    postGraphql(server.url, { query: loadQueries(s).hasura, variables: s.variables, operationName: s.id }, s.headers);

  test('the SQL of every read scenario is the snapshot', async () => {
    const got: Record<string, string> = {};
    for (const s of READS) {
      lines.length = 0;
      const r = await ask(s);
      assert.equal(r.status, 200);
      assert.ok(r.body.data, `${s.id}: ${r.text.slice(0, 300)}`);
      const entry = lines.map((l) => JSON.parse(l)).find((l) => l.detail?.query?.operationName === s.id);
      assert.ok(entry, `${s.id}: no query-log line`);
      const sqls = new Set(Object.values(entry.detail.generated_sql as Record<string, { query: string }>).map((g) => g.query));
      assert.equal(sqls.size, 1, `${s.id}: one statement for all root fields`);
      got[s.id] = [...sqls][0]!;
    }
    if (process.env.SVC_UPDATE_SNAPSHOT === '1') writeFileSync(SNAPSHOT, `${JSON.stringify(got, null, 2)}\n`);
    const want = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as Record<string, string>;
    for (const s of READS) assert.equal(got[s.id], want[s.id], `${s.id}: the generated SQL changed (review it, measure it, then SVC_UPDATE_SNAPSHOT=1)`);
  });

  test('a repeated request: a plan-cache hit and exactly one statement, the named prepared one', async () => {
    const db = server.engine.db as unknown as Record<string, (...a: unknown[]) => unknown>;
    const seen: string[] = [];
    const originals = new Map<string, (...a: unknown[]) => unknown>();
    // count what the request path sends (background workers read svc_catalog: left out)
    for (const m of ['query', 'prepared', 'withConn', 'transaction', 'batch']) {
      const f = db[m];
      if (typeof f !== 'function') continue;
      originals.set(m, f);
      db[m] = function (this: unknown, ...a: unknown[]) {
        const text = typeof a[0] === 'string' && m !== 'prepared' ? a[0] : typeof a[1] === 'string' ? a[1] : m;
        if (!/svc_catalog/.test(text)) seen.push(`${m}:${m === 'prepared' ? String(a[0]) : text.slice(0, 60)}`);
        return f.apply(this, a);
      };
    }
    // and the background pollers are stopped meanwhile (they share the Db)
    await server.engine.workers.stop(1_000);
    try {
      for (const s of READS) {
        await ask(s); // planned (or already planned by the test above)
        const stats = server.engine.planCache.stats;
        const misses = stats.misses;
        const hits = stats.hits;
        seen.length = 0;
        const N = 5;
        for (let i = 0; i < N; i++) assert.ok((await ask(s)).body.data, s.id);
        assert.equal(stats.misses - misses, 0, `${s.id}: no planning when repeated`);
        assert.equal(stats.hits - hits, N, `${s.id}: one plan-cache hit per request`);
        assert.equal(seen.length, N, `${s.id}: one statement per request, got ${JSON.stringify(seen)}`);
        assert.ok(
          seen.every((x) => x === seen[0] && x.startsWith('prepared:svc_')),
          `${s.id}: the same named prepared statement: ${JSON.stringify(seen)}`,
        );
      }
    } finally {
      for (const [m, f] of originals) db[m] = f;
      await server.engine.workers.start();
    }
  });

  test("every read scenario's data equals the raw baseline SQL's on the same rows", async () => {
    const c = new pg.Client({ connectionString: server.databaseUrl });
    await c.connect();
    try {
      for (const s of READS) {
        const raw = await c.query<{ data: unknown }>(loadQueries(s).sql, s.params(s.variables, s.headers));
        const cell = raw.rows[0]!.data;
        const want: unknown = typeof cell === 'string' ? JSON.parse(cell) : cell;
        const r = await ask(s);
        assert.equal(diff(r.body.data, want), null, `${s.id}: svc and the raw SQL differ`);
        assert.ok(JSON.stringify(want).length > 40, `${s.id}: the scaled dataset answers with rows`);
      }
    } finally {
      await c.end();
    }
  });
});
