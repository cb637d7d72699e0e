/**
 * The Relay API (issue 19) against PostgreSQL through the executor: paging
 * forward and back through 1,000 rows in ten orders returns every row once and
 * in the order /v1/graphql gives; `node` refetches exactly the rows a role
 * can see; bad ids, cursors and counts get upstream's errors.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { planRequest, runGraphQL } from '../../src/execute/graphql.js';
import { PlanCache } from '../../src/execute/planCache.js';
import { emptyMetadata, fixture, table, type Fixture } from './helpers.js';

let f: Fixture;

const SETUP = `
create table category (id int primary key, title text);
insert into category select g, 'C' || (g % 4) from generate_series(1, 10) g;
create table item (id int primary key, cat int not null references category(id), grp int, name text, score numeric, ts timestamptz, big bigint not null);
insert into item
  select g, 1 + g % 10,
    case when g % 11 = 0 then null else g % 13 end,
    case when g % 17 = 0 then null else 'n' || (g % 50) end,
    (g % 29)::numeric / 4,
    timestamptz '2020-01-01' + (g % 97) * interval '1 hour',
    9007199254740993 + g
  from generate_series(1, 1000) g;
create table tag (id serial primary key, item_id int not null references item(id), label text);
insert into tag (item_id, label) select 1 + (g * 7) % 1000, 'x' from generate_series(1, 1500) g;
create index on tag (item_id);
create table pair (a int, b text, v int, primary key (a, b));
insert into pair select g % 7, 'b' || g, g from generate_series(1, 50) g;
create table nopk (x int);
`;

before(async () => {
  const md = emptyMetadata();
  md.tables.push(
    table('category', {
      array_relationships: [{ name: 'items', using: { foreign_key_constraint_on: { table: { schema: 'public', name: 'item' }, column: 'cat' } } }],
    }),
    table('item', {
      object_relationships: [{ name: 'category', using: { foreign_key_constraint_on: 'cat' } }],
      array_relationships: [{ name: 'tags', using: { foreign_key_constraint_on: { table: { schema: 'public', name: 'tag' }, column: 'item_id' } } }],
      select_permissions: [{ role: 'user', permission: { columns: ['id', 'grp', 'name'], filter: { grp: { _lt: 'X-Svc-User-Id' } } } }],
    }),
    table('tag', { select_permissions: [{ role: 'user', permission: { columns: ['id', 'label'], filter: {}, allow_aggregations: true } }] }),
    table('pair'),
    table('nopk'),
  );
  f = await fixture(SETUP, md);
});
after(() => f.close());

/** one plan cache for the file: cached plans must answer later variable values right */
const plans = new PlanCache();
const relay = async (query: string, variables?: Record<string, unknown>, role = 'admin', vars: Record<string, string> = {}) =>
  JSON.parse(await runGraphQL(f.ctx(role, vars), { query, variables }, { relay: true, planCache: plans }));
const graphql = async (query: string, variables?: Record<string, unknown>) => JSON.parse(await runGraphQL(f.ctx(), { query, variables }));

interface Page {
  pageInfo: { startCursor: string | null; endCursor: string | null; hasNextPage: boolean; hasPreviousPage: boolean };
  edges: Array<{ cursor: string; node: { id: string; big: number } }>;
}

/** `id` is the global id in the Relay schema; `big` is read to check bigint order */
const PAGE = (args: string) => `query($after: String, $before: String, $first: Int, $last: Int) {
  p: item_connection(first: $first, last: $last, after: $after, before: $before, ${args}) {
    pageInfo { startCursor endCursor hasNextPage hasPreviousPage }
    edges { cursor node { id big } }
  }
}`;

const ORDERS = [
  '',
  'order_by: {grp: asc}',
  'order_by: {grp: desc}',
  'order_by: [{grp: asc_nulls_first}, {name: desc_nulls_last}]',
  'order_by: {name: asc}',
  'order_by: [{score: desc}, {ts: asc}]',
  'order_by: {big: desc}',
  'order_by: {category: {title: asc}}',
  'order_by: {tags_aggregate: {count: desc}}',
  'order_by: [{ts: desc_nulls_first}, {grp: asc}, {id: desc}]',
];

/** The row order /v1/graphql gives for the same order_by with the primary key appended. */
async function expectedOrder(orderArgs: string): Promise<number[]> {
  const m = /^order_by: (.*)$/.exec(orderArgs);
  let items = m ? m[1]! : '[]';
  if (!items.startsWith('[')) items = `[${items}]`;
  if (!/\{id:/.test(items)) items = items.replace(/\]$/, items === '[]' ? '{id: asc}]' : ', {id: asc}]');
  const r = await graphql(`{ item(order_by: ${items}) { id } }`);
  return (r.data.item as Array<{ id: number }>).map((x) => x.id);
}

/** the primary key in a global id (`[1, "public", "item", 42]`) */
const idOf = (globalId: string) => (JSON.parse(Buffer.from(globalId, 'base64').toString()) as number[])[3]!;

describe('paging through 1,000 rows', () => {
  for (const order of ORDERS) {
    test(`forward and back: ${order || 'primary key'}`, async () => {
      const expected = await expectedOrder(order);
      assert.equal(expected.length, 1000);
      const query = PAGE(order);

      const forward: number[] = [];
      let cursor: string | null = null;
      for (let page = 0; ; page++) {
        const r = await relay(query, { first: 37, after: cursor });
        assert.equal(r.errors, undefined, JSON.stringify(r.errors));
        const p: Page = r.data.p;
        forward.push(...p.edges.map((e) => idOf(e.node.id)));
        assert.equal(p.pageInfo.hasPreviousPage, page > 0);
        assert.equal(p.pageInfo.startCursor, p.edges[0]?.cursor ?? null);
        assert.equal(p.pageInfo.endCursor, p.edges.at(-1)?.cursor ?? null);
        assert.ok(page < 100, 'paging does not end');
        if (!p.pageInfo.hasNextPage) break;
        cursor = p.pageInfo.endCursor;
      }
      assert.deepEqual(forward, expected);

      const pages: number[][] = [];
      cursor = null;
      for (let page = 0; ; page++) {
        const r = await relay(query, { last: 41, before: cursor });
        assert.equal(r.errors, undefined, JSON.stringify(r.errors));
        const p: Page = r.data.p;
        pages.unshift(p.edges.map((e) => idOf(e.node.id)));
        assert.equal(p.pageInfo.hasNextPage, page > 0);
        assert.ok(page < 100, 'paging does not end');
        if (!p.pageInfo.hasPreviousPage) break;
        cursor = p.pageInfo.startCursor;
      }
      assert.deepEqual(pages.flat(), expected);
    });
  }

  test('a page after a cursor is a keyset comparison, not an offset', async () => {
    const { plan } = planRequest(
      f.ctx(),
      { query: PAGE(''), variables: { first: 20, after: Buffer.from('{"id" : 700}').toString('base64') } },
      new PlanCache(),
      true,
    );
    const text = plan.statement!.compiled.text;
    assert.doesNotMatch(text, /OFFSET|row_number/i);
    // one row beyond the page answers hasNextPage
    assert.match(text, /\("_t\d+"\."id"\) > \(\$1\)::int4 ORDER BY "_t\d+"\."id" ASC NULLS LAST LIMIT 21/);
    const r = await f.db.query(`EXPLAIN ${text.replace(/\$1/g, "'700'")}`);
    assert.match(r.rows.map((x) => String(x['QUERY PLAN'])).join('\n'), /Index Cond: \(id > /);
  });

  test('a cursor variable is a parameter: paging reuses one plan', async () => {
    const cache = new PlanCache();
    const query = PAGE('');
    let cursor: string | null = null;
    for (let i = 0; i < 10; i++) {
      const r = JSON.parse(await runGraphQL(f.ctx(), { query, variables: { first: 20, after: cursor } }, { relay: true, planCache: cache }));
      cursor = r.data.p.pageInfo.endCursor;
    }
    // one plan for the first page (no cursor), one for the others
    assert.equal(cache.stats.misses, 2);
    assert.equal(cache.stats.hits, 8);
  });

  test('first with before, last with after, backwards orders', async () => {
    const c = (id: number) => Buffer.from(`{"id" : ${id}}`).toString('base64');
    const r = await relay(`{
      a: item_connection(first: 3, before: "${c(20)}") { pageInfo { hasNextPage hasPreviousPage } edges { node { id } } }
      b: item_connection(last: 3, after: "${c(990)}") { pageInfo { hasNextPage hasPreviousPage } edges { node { id } } }
      c: item_connection(last: 2, before: "${c(20)}", order_by: {id: desc}) { pageInfo { hasNextPage hasPreviousPage } edges { node { id } } }
    }`);
    const ids = (x: { edges: Array<{ node: { id: string } }> }) => x.edges.map((e) => idOf(e.node.id));
    assert.deepEqual([ids(r.data.a), r.data.a.pageInfo], [[1, 2, 3], { hasNextPage: true, hasPreviousPage: false }]);
    assert.deepEqual([ids(r.data.b), r.data.b.pageInfo], [[998, 999, 1000], { hasNextPage: false, hasPreviousPage: true }]);
    assert.deepEqual([ids(r.data.c), r.data.c.pageInfo], [[22, 21], { hasNextPage: true, hasPreviousPage: true }]);
  });

  test('distinct_on: one row per value, paged', async () => {
    for (const order of ['', 'order_by: {grp: desc}']) {
      const grps: Array<number | null> = [];
      let cursor: string | null = null;
      for (let i = 0; i < 20; i++) {
        const r = await relay(
          `query($c: String) { item_connection(first: 4, after: $c, distinct_on: [grp] ${order}) { pageInfo { endCursor hasNextPage } edges { node { grp } } } }`,
          { c: cursor },
        );
        assert.equal(r.errors, undefined, JSON.stringify(r.errors));
        grps.push(...r.data.item_connection.edges.map((e: { node: { grp: number | null } }) => e.node.grp));
        if (!r.data.item_connection.pageInfo.hasNextPage) break;
        cursor = r.data.item_connection.pageInfo.endCursor;
      }
      assert.equal(grps.length, 14, order);
      assert.equal(new Set(grps).size, 14, order);
    }
  });

  test('composite primary keys and a where: every row once', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (;;) {
      const r = await relay(
        `query($c: String) { pair_connection(first: 4, after: $c, where: {v: {_gt: 5}}, order_by: {a: desc}) { pageInfo { endCursor hasNextPage } edges { node { id a b } } } }`,
        { c: cursor },
      );
      seen.push(...r.data.pair_connection.edges.map((e: { node: { a: number; b: string } }) => `${e.node.a}/${e.node.b}`));
      if (!r.data.pair_connection.pageInfo.hasNextPage) break;
      cursor = r.data.pair_connection.pageInfo.endCursor;
    }
    assert.equal(seen.length, 45);
    assert.equal(new Set(seen).size, 45);
  });
});

describe('node', () => {
  test('refetches every id the role can see and none it cannot', async () => {
    const all = await relay('{ item_connection { edges { node { id grp } } } }');
    const nodes: Array<{ id: string; grp: number | null }> = all.data.item_connection.edges.map((e: { node: unknown }) => e.node);
    assert.equal(nodes.length, 1000);
    const query = 'query($id: ID!) { node(id: $id) { id ... on item { grp } } }';
    let visible = 0;
    for (const n of nodes) {
      const r = await relay(query, { id: n.id }, 'user', { 'x-svc-user-id': '5' });
      assert.equal(r.errors, undefined, JSON.stringify(r.errors));
      const canSee = n.grp !== null && n.grp < 5;
      if (canSee) {
        visible++;
        assert.deepEqual(r.data.node, { id: n.id, grp: n.grp });
      } else assert.equal(r.data.node, null, `node ${n.id} must not be visible`);
    }
    assert.ok(visible > 0 && visible < 1000);
    // the admin refetches every one
    for (const n of nodes.slice(0, 50)) assert.deepEqual((await relay(query, { id: n.id })).data.node, { id: n.id, grp: n.grp });
  });

  test('a table the role cannot select is an invalid id', async () => {
    const cat = (await relay('{ category_connection(first: 1) { edges { node { id } } } }')).data.category_connection.edges[0].node.id;
    const r = await relay('query($id: ID!) { node(id: $id) { id } }', { id: cat }, 'user', { 'x-svc-user-id': '5' });
    assert.deepEqual(r.errors, [
      { extensions: { path: '$.selectionSet.node.args.id', code: 'validation-failed' }, message: `the node id is invalid: the table ${JSON.stringify(cat)}` },
    ]);
  });

  test('ids of composite keys, and fragments on other types are skipped', async () => {
    const id = Buffer.from(JSON.stringify([1, 'public', 'pair', 3, 'b10'])).toString('base64');
    const r = await relay(`{ node(id: "${id}") { __typename id ... on pair { v } ... on item { grp } } }`);
    assert.deepEqual(r.data.node, { __typename: 'pair', id: Buffer.from('[1, "public", "pair", 3, "b10"]').toString('base64'), v: 10 });
  });
});

describe('schema and errors', () => {
  test('tables without a primary key are no Node and have no connection', async () => {
    const r = await relay(
      '{ __schema { types { name interfaces { name } } queryType { fields { name } } } node: __type(name: "Node") { kind possibleTypes { name } } }',
    );
    assert.deepEqual(r.data.node, { kind: 'INTERFACE', possibleTypes: [{ name: 'category' }, { name: 'item' }, { name: 'pair' }, { name: 'tag' }] });
    const types = new Map<string, string[]>(
      r.data.__schema.types.map((t: { name: string; interfaces: Array<{ name: string }> | null }) => [t.name, (t.interfaces ?? []).map((i) => i.name)]),
    );
    assert.deepEqual(types.get('item'), ['Node']);
    assert.deepEqual(types.get('nopk'), []);
    const roots = r.data.__schema.queryType.fields.map((x: { name: string }) => x.name).sort();
    assert.deepEqual(roots, ['category_connection', 'item_connection', 'node', 'pair_connection', 'tag_connection']);
  });

  test('array relationships as connections', async () => {
    const r = await relay(
      '{ category_connection(first: 1) { edges { node { title items_connection(first: 2, order_by: {id: desc}) { pageInfo { hasNextPage hasPreviousPage } edges { node { id } } } } } } }',
    );
    const c = r.data.category_connection.edges[0].node;
    assert.deepEqual(c.items_connection.pageInfo, { hasNextPage: true, hasPreviousPage: false });
    assert.deepEqual(
      c.items_connection.edges.map((e: { node: { id: string } }) => idOf(e.node.id)),
      [1000, 990],
    );
  });

  const errorOf = async (query: string, variables?: Record<string, unknown>) => (await relay(query, variables)).errors?.[0];

  test('first and last, after and before, negative counts, bad cursors: upstream errors', async () => {
    assert.deepEqual(await errorOf('{ item_connection(first: 1, last: 1) { edges { cursor } } }'), {
      extensions: { path: '$.selectionSet.item_connection', code: 'validation-failed' },
      message: '"first" and "last" are not allowed at once',
    });
    assert.deepEqual(await errorOf('{ item_connection(first: -1) { edges { cursor } } }'), {
      extensions: { path: '$.selectionSet.item_connection.args.first', code: 'validation-failed' },
      message: 'expecting a positive integer',
    });
    assert.deepEqual(await errorOf('{ item_connection(last: -3) { edges { cursor } } }'), {
      extensions: { path: '$.selectionSet.item_connection.args.last', code: 'validation-failed' },
      message: 'expecting a positive integer',
    });
    const invalid = { extensions: { path: '$.selectionSet.item_connection', code: 'validation-failed' }, message: 'the "after" or "before" cursor is invalid' };
    assert.deepEqual(await errorOf('{ item_connection(after: "garbage") { edges { cursor } } }'), invalid);
    const wrongKeys = Buffer.from('{"x": 1}').toString('base64');
    assert.deepEqual(await errorOf(`{ item_connection(after: "${wrongKeys}") { edges { cursor } } }`), invalid);
    // a cursor variable: checked for every value, not only the one the plan was built for
    const q = 'query($c: String) { item_connection(first: 1, after: $c) { edges { cursor } } }';
    assert.equal(await errorOf(q, { c: Buffer.from('{"id": 1}').toString('base64') }), undefined);
    assert.deepEqual(await errorOf(q, { c: wrongKeys }), invalid);
    assert.deepEqual(await errorOf(q, { c: Buffer.from('{"id": "x"}').toString('base64') }), {
      extensions: { path: '$.selectionSet.item_connection', code: 'validation-failed' },
      message: 'parsing Int32 failed, expected Number, but encountered String',
    });
  });

  test('first: 0 and an empty page', async () => {
    const r = await relay('{ item_connection(first: 0) { pageInfo { startCursor endCursor hasNextPage hasPreviousPage } edges { cursor } } }');
    assert.deepEqual(r.data.item_connection, { pageInfo: { startCursor: null, endCursor: null, hasNextPage: true, hasPreviousPage: false }, edges: [] });
  });

  test('pages ending exactly at the last row, last: 0 (the row read beyond the page never shows)', async () => {
    const c = (id: number) => Buffer.from(`{"id" : ${id}}`).toString('base64');
    const r = await relay(`{
      a: item_connection(first: 5, after: "${c(995)}") { pageInfo { hasNextPage endCursor } edges { cursor node { id } } }
      b: item_connection(first: 5, after: "${c(994)}") { pageInfo { hasNextPage endCursor } edges { cursor } }
      z: item_connection(last: 0) { pageInfo { startCursor endCursor hasNextPage hasPreviousPage } edges { cursor } }
      l: item_connection(last: 5, before: "${c(6)}") { pageInfo { hasPreviousPage startCursor endCursor } edges { node { id } } }
      m: item_connection(last: 5, before: "${c(7)}") { pageInfo { hasPreviousPage startCursor } edges { cursor } }
    }`);
    const ids = (x: { edges: Array<{ node: { id: string } }> }) => x.edges.map((e) => idOf(e.node.id));
    assert.deepEqual(ids(r.data.a), [996, 997, 998, 999, 1000]);
    assert.deepEqual(r.data.a.pageInfo, { hasNextPage: false, endCursor: c(1000) });
    assert.deepEqual(
      r.data.b.edges.map((e: { cursor: string }) => e.cursor),
      [995, 996, 997, 998, 999].map(c),
    );
    assert.deepEqual(r.data.b.pageInfo, { hasNextPage: true, endCursor: c(999) });
    assert.deepEqual(r.data.z, { pageInfo: { startCursor: null, endCursor: null, hasNextPage: false, hasPreviousPage: true }, edges: [] });
    assert.deepEqual(ids(r.data.l), [1, 2, 3, 4, 5]);
    assert.deepEqual(r.data.l.pageInfo, { hasPreviousPage: false, startCursor: c(1), endCursor: c(5) });
    assert.deepEqual(
      r.data.m.edges.map((e: { cursor: string }) => e.cursor),
      [2, 3, 4, 5, 6].map(c),
    );
    assert.deepEqual(r.data.m.pageInfo, { hasPreviousPage: true, startCursor: c(2) });
  });

  test('bad node ids never fail the server', async () => {
    for (const id of [
      '',
      'e30=',
      'W10=',
      'WzFd',
      'WzEsMiwzLDRd',
      'WzEsInB1YmxpYyIsIml0ZW0iLG51bGxd',
      Buffer.from('[1, "public", "item", 1, 2]').toString('base64'),
    ]) {
      const r = await relay('query($id: ID!) { node(id: $id) { id } }', { id });
      assert.ok(r.errors || r.data.node === null, `${id}: ${JSON.stringify(r)}`);
      if (r.errors) assert.match(r.errors[0].extensions.code, /^(validation-failed|parse-failed|data-exception)$/);
    }
  });
});
