/**
 * The permission matrix (issue 11, item 2): for each operation kind (select,
 * aggregate/count, insert, update, delete) × each way of reaching a table
 * (root, object relationship, array relationship, `_exists`, aggregate) × both
 * endpoints (/v1/graphql, /v1/query), a forbidden row or column is neither
 * returned nor observable through a filter: naming a forbidden column or table
 * is rejected (never silently evaluated), and a filter through a relationship
 * or `_exists` only sees the rows the role may select. Then presets, computed
 * fields and functions with session arguments, `allow_aggregations: false`,
 * the select `limit` and the explain endpoint.
 *
 * One server and one database for the file; the probes are generated from
 * the dimensions below and designed to write nothing (a snapshot of every
 * table is compared before and after them).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { post, postGraphql, postQuery, query, startTestServer, type HttpResult, type TestServer } from '../helpers/server.js';

let s: TestServer;

const SQL = `
  create table authors (id serial primary key, name text not null unique, secret text not null, hidden boolean not null default false);
  create table posts (id serial primary key, author_id int not null references authors(id), title text not null unique,
                      published boolean not null default false, draft_note text);
  create table vault (id int primary key, post_id int not null references posts(id), secret text not null);
  create table tags (id int primary key, post_id int not null references posts(id), label text not null);
  create table likes (id int primary key, post_id int not null references posts(id), who text not null);
  insert into authors values (1, 'ann', 's-ann', false), (2, 'bob', 's-bob', false), (3, 'eve', 's-eve', true);
  insert into posts values (1, 1, 'p1', true, 'd1'), (2, 1, 'p2', false, 'd2'), (3, 2, 'p3', true, 'd3'), (4, 3, 'p4', true, 'd4'), (5, 2, 'p5', false, 'd5');
  select setval('authors_id_seq', 100), setval('posts_id_seq', 100);
  insert into vault values (1, 1, 'v1'), (2, 3, 'v3');
  insert into tags values (1, 1, 'a'), (2, 1, 'b'), (3, 1, 'c'), (4, 1, 'd');
  insert into likes values (1, 1, 'x'), (2, 3, 'y');
  create function shout(a authors) returns text language sql stable as $$ select upper(a.name) $$;
  create function secret_len(a authors) returns int language sql stable as $$ select length(a.secret) $$;
  create function all_posts(a authors) returns setof posts language sql stable as $$ select * from posts where author_id = a.id $$;
  create function mine(p posts, s json) returns boolean language sql stable as $$ select p.author_id = (s->>'x-svc-user-id')::int $$;
  create function my_posts(s json) returns setof posts language sql stable as $$ select * from posts where author_id = (s->>'x-svc-user-id')::int $$;
`;

const perm = (kind: string, table: string, permission: object) => ({ type: `create_${kind}_permission`, args: { table, role: 'user', permission } });

const METADATA = [
  { type: 'run_sql', args: { sql: SQL } },
  ...['authors', 'posts', 'vault', 'tags', 'likes'].map((name) => ({ type: 'track_table', args: { name } })),
  { type: 'create_object_relationship', args: { table: 'posts', name: 'author', using: { foreign_key_constraint_on: 'author_id' } } },
  {
    type: 'create_object_relationship',
    args: { table: 'posts', name: 'vault_entry', using: { manual_configuration: { remote_table: 'vault', column_mapping: { id: 'post_id' } } } },
  },
  {
    type: 'create_array_relationship',
    args: { table: 'authors', name: 'posts', using: { foreign_key_constraint_on: { table: 'posts', column: 'author_id' } } },
  },
  ...['vault', 'tags', 'likes'].map((t) => ({
    type: 'create_array_relationship',
    args: { table: 'posts', name: t, using: { foreign_key_constraint_on: { table: t, column: 'post_id' } } },
  })),
  { type: 'add_computed_field', args: { table: 'authors', name: 'shout', definition: { function: 'shout' } } },
  { type: 'add_computed_field', args: { table: 'authors', name: 'secret_len', definition: { function: 'secret_len' } } },
  { type: 'add_computed_field', args: { table: 'authors', name: 'all_posts', definition: { function: 'all_posts' } } },
  { type: 'add_computed_field', args: { table: 'posts', name: 'mine', definition: { function: 'mine', table_argument: 'p', session_argument: 's' } } },
  { type: 'track_function', version: 2, args: { function: 'my_posts', configuration: { session_argument: 's' } } },
  // authors: hidden ones are forbidden rows, `secret` a forbidden column, `secret_len` a forbidden computed field
  perm('select', 'authors', { columns: ['id', 'name'], computed_fields: ['shout'], filter: { hidden: { _eq: false } }, allow_aggregations: true }),
  perm('insert', 'authors', { columns: ['name'], check: {}, set: { secret: 'X-Svc-User-Id' } }),
  perm('update', 'authors', { columns: ['name'], filter: {} }),
  perm('delete', 'authors', { filter: {} }),
  // posts: unpublished ones are forbidden rows, `draft_note` a forbidden column (preset on insert)
  perm('select', 'posts', {
    columns: ['id', 'author_id', 'title', 'published'],
    computed_fields: ['mine'],
    filter: { published: { _eq: true } },
    allow_aggregations: true,
  }),
  perm('insert', 'posts', { columns: ['title', 'author_id'], check: {}, set: { draft_note: 'X-Svc-User-Id' } }),
  perm('update', 'posts', { columns: ['title'], filter: { published: { _eq: true } } }),
  perm('delete', 'posts', { filter: { published: { _eq: true } } }),
  // tags: a row limit; likes: no aggregations; vault: nothing at all
  perm('select', 'tags', { columns: ['id', 'post_id', 'label'], filter: {}, limit: 2, allow_aggregations: true }),
  perm('select', 'likes', { columns: ['id', 'post_id'], filter: {}, allow_aggregations: false }),
];

before(async () => {
  s = await startTestServer();
  await query(s.url, { type: 'bulk', args: METADATA });
});
after(() => s?.close());

// ---- the dimensions ------------------------------------------------------------------

type Endpoint = 'graphql' | 'v1';
type Op = 'select' | 'aggregate' | 'insert' | 'update' | 'delete';
type Reach = 'root' | 'object' | 'array' | 'exists' | 'aggregate';
const ENDPOINTS: Endpoint[] = ['graphql', 'v1'];
const OPS: Op[] = ['select', 'aggregate', 'insert', 'update', 'delete'];
const REACHES: Reach[] = ['root', 'object', 'array', 'exists', 'aggregate'];

type Outcome = { rejected: string } | { value: unknown };
interface Probe {
  endpoint: Endpoint;
  op: Op;
  reach: Reach;
  what: string;
  send: () => Promise<HttpResult>;
  /** the observed value of a successful response */
  pick: (body: any) => unknown;
  expect: Outcome;
}

const USER = { 'x-svc-role': 'user', 'x-svc-user-id': '1' };
const REJECTED: Record<Endpoint, Outcome> = { graphql: { rejected: 'validation-failed' }, v1: { rejected: 'permission-denied' } };
type Table = 'posts' | 'authors';

/**
 * Boolean expressions by way of reaching a table: ones naming a forbidden
 * column or table (must be rejected), and one that would match only rows the
 * role may not see (must match nothing). `conflict`: an object whose upsert
 * conflicts with the row the hidden filter would match without permissions.
 */
const FILTERS: Partial<Record<Reach, { table: Table; forbidden: Array<[string, object]>; hidden: object; conflict: object }>> = {
  root: {
    table: 'posts',
    forbidden: [
      ['forbidden column', { draft_note: { _eq: 'd1' } }],
      ['forbidden column under _not/_or', { _or: [{ _not: { draft_note: { _is_null: true } } }] }],
    ],
    hidden: { id: { _in: [2, 5] } },
    conflict: { title: 'p2', author_id: 1 },
  },
  object: {
    table: 'posts',
    forbidden: [
      ['forbidden column of the target', { author: { secret: { _eq: 's-ann' } } }],
      ['forbidden target table', { vault_entry: { secret: { _eq: 'v1' } } }],
    ],
    hidden: { author: { name: { _eq: 'eve' } } },
    conflict: { title: 'p4', author_id: 3 },
  },
  array: {
    table: 'authors',
    forbidden: [
      ['forbidden column of the target', { posts: { draft_note: { _eq: 'd2' } } }],
      ['forbidden table behind the target', { posts: { vault: { secret: { _eq: 'v1' } } } }],
    ],
    hidden: { posts: { id: { _in: [2, 5] } } },
    conflict: { name: 'ann' },
  },
  exists: {
    table: 'posts',
    forbidden: [
      ['forbidden table', { _exists: { _table: 'vault', _where: { secret: { _eq: 'v1' } } } }],
      ['forbidden column of the table', { _exists: { _table: 'authors', _where: { secret: { _eq: 's-ann' } } } }],
    ],
    hidden: { _exists: { _table: 'authors', _where: { name: { _eq: 'eve' } } } },
    conflict: { title: 'p1', author_id: 1 },
  },
};

const SET: Record<Table, string> = { posts: 'title: "zz"', authors: 'name: "zz"' };
const CONFLICT: Record<Table, string> = { posts: 'posts_title_key, update_columns: [title]', authors: 'authors_name_key, update_columns: [name]' };
const gqlObject = (o: object) =>
  `{${Object.entries(o)
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
    .join(', ')}}`;

/** An operation on `table` filtered by `where`, as one request of `endpoint`; undefined when the endpoint has no such filter. */
function filtered(
  endpoint: Endpoint,
  op: Op,
  table: Table,
  where: object,
  conflict: object,
  headers: Record<string, string> = USER,
): Pick<Probe, 'send' | 'pick'> | undefined {
  if (endpoint === 'graphql') {
    const w = `$w: ${table}_bool_exp!`;
    const doc: Record<Op, [string, (d: any) => unknown]> = {
      select: [`query (${w}) { r: ${table}(where: $w) { id } }`, (d) => d.r.length],
      aggregate: [`query (${w}) { r: ${table}_aggregate(where: $w) { aggregate { count } } }`, (d) => d.r.aggregate.count],
      insert: [
        `mutation (${w}) { r: insert_${table}(objects: [${gqlObject(conflict)}], on_conflict: {constraint: ${CONFLICT[table]}, where: $w}) { affected_rows } }`,
        (d) => d.r.affected_rows,
      ],
      update: [`mutation (${w}) { r: update_${table}(where: $w, _set: {${SET[table]}}) { affected_rows } }`, (d) => d.r.affected_rows],
      delete: [`mutation (${w}) { r: delete_${table}(where: $w) { affected_rows } }`, (d) => d.r.affected_rows],
    };
    const [q, pick] = doc[op];
    return { send: () => postGraphql(s.url, { query: q, variables: { w: where } }, headers), pick: (b) => pick(b.data) };
  }
  const args = { table, where };
  const body: Record<Op, [object, (b: any) => unknown] | undefined> = {
    select: [{ type: 'select', args: { ...args, columns: ['id'] } }, (b) => b.length],
    aggregate: [{ type: 'count', args }, (b) => b.count],
    insert: undefined, // a v1 insert has no boolean expression
    update: [{ type: 'update', args: { ...args, $set: table === 'posts' ? { title: 'zz' } : { name: 'zz' } } }, (b) => b.affected_rows],
    delete: [{ type: 'delete', args }, (b) => b.affected_rows],
  };
  const x = body[op];
  if (!x) return undefined;
  return { send: () => postQuery(s.url, x[0], headers), pick: x[1] };
}

function filterProbes(): Probe[] {
  const out: Probe[] = [];
  for (const endpoint of ENDPOINTS) {
    for (const op of OPS) {
      for (const reach of REACHES) {
        const f = FILTERS[reach];
        if (!f) continue;
        for (const [what, where] of f.forbidden) {
          const r = filtered(endpoint, op, f.table, where, f.conflict);
          // GraphQL (v1.3) has no _exists: the key itself is unknown
          if (r) out.push({ endpoint, op, reach, what: `filter: ${what}`, ...r, expect: REJECTED[endpoint] });
        }
        const r = filtered(endpoint, op, f.table, f.hidden, f.conflict);
        if (!r) continue;
        const expect = endpoint === 'graphql' && reach === 'exists' ? REJECTED.graphql : { value: 0 };
        out.push({ endpoint, op, reach, what: 'filter matching only rows the role may not see', ...r, expect });
      }
    }
  }
  return out;
}

// ---- what is returned (selections, returning, order_by, distinct_on, aggregates) -------------

const gq = (op: Op, reach: Reach, what: string, doc: string, pick: (d: any) => unknown, expect?: unknown): Probe => ({
  endpoint: 'graphql',
  op,
  reach,
  what,
  send: () => postGraphql(s.url, { query: doc }, USER),
  pick: (b) => pick(b.data),
  expect: expect === undefined ? REJECTED.graphql : { value: expect },
});
const v1 = (op: Op, reach: Reach, what: string, body: object, pick: (b: any) => unknown, expect?: unknown, rejected = 'permission-denied'): Probe => ({
  endpoint: 'v1',
  op,
  reach,
  what,
  send: () => postQuery(s.url, body, USER),
  pick,
  expect: expect === undefined ? { rejected } : { value: expect },
});
const none = () => null;
const ids = (rows: Array<{ id: number }>) => rows.map((r) => r.id);
const UPSERT = (obj: string, table: Table = 'posts') => `insert_${table}(objects: [${obj}], on_conflict: {constraint: ${CONFLICT[table]}})`;

function returnedProbes(): Probe[] {
  return [
    // select
    gq('select', 'root', 'forbidden table', '{ vault { id } }', none),
    gq('select', 'root', 'forbidden column', '{ posts { draft_note } }', none),
    gq('select', 'root', 'forbidden column in order_by', '{ posts(order_by: {draft_note: asc}) { id } }', none),
    gq('select', 'root', 'forbidden column in distinct_on', '{ posts(distinct_on: [draft_note]) { id } }', none),
    gq('select', 'root', 'rows', '{ posts(order_by: {id: asc}) { id } }', (d) => ids(d.posts), [1, 3, 4]),
    gq('select', 'object', 'forbidden column of the target', '{ posts { author { secret } } }', none),
    gq('select', 'object', 'forbidden target table', '{ posts { vault_entry { id } } }', none),
    gq('select', 'object', 'forbidden column in order_by', '{ posts(order_by: {author: {secret: asc}}) { id } }', none),
    gq('select', 'object', 'forbidden table in order_by', '{ posts(order_by: {vault_entry: {secret: asc}}) { id } }', none),
    gq(
      'select',
      'object',
      'rows of the target',
      '{ posts(order_by: {id: asc}) { id author { name } } }',
      (d) => d.posts.map((p: any) => p.author?.name ?? null),
      ['ann', 'bob', null],
    ),
    gq(
      'select',
      'object',
      'order_by sees only rows of the target',
      '{ posts(order_by: {author: {name: desc_nulls_last}}) { id } }',
      (d) => ids(d.posts),
      [3, 1, 4],
    ),
    gq('select', 'array', 'forbidden column of the target', '{ authors { posts { draft_note } } }', none),
    gq('select', 'array', 'forbidden target table', '{ posts { vault { id } } }', none),
    gq(
      'select',
      'array',
      'rows of the target',
      '{ authors(order_by: {id: asc}) { posts(order_by: {id: asc}) { id } } }',
      (d) => d.authors.map((a: any) => ids(a.posts)),
      [[1], [3]],
    ),
    gq('select', 'aggregate', 'forbidden column in nodes', '{ authors { posts_aggregate { nodes { draft_note } } } }', none),
    gq('select', 'aggregate', 'forbidden column in an aggregate', '{ authors { posts_aggregate { aggregate { max { draft_note } } } } }', none),
    gq('select', 'aggregate', 'allow_aggregations: false', '{ posts { likes_aggregate { aggregate { count } } } }', none),
    gq('select', 'aggregate', 'forbidden column in an aggregate order_by', '{ authors(order_by: {posts_aggregate: {max: {draft_note: asc}}}) { id } }', none),
    gq('select', 'aggregate', 'allow_aggregations: false in order_by', '{ posts(order_by: {likes_aggregate: {count: asc}}) { id } }', none),
    gq(
      'select',
      'aggregate',
      'counts only rows of the target',
      '{ authors(order_by: {id: asc}) { posts_aggregate { aggregate { count } } } }',
      (d) => d.authors.map((a: any) => a.posts_aggregate.aggregate.count),
      [1, 1],
    ),
    v1('select', 'root', 'forbidden table', { type: 'select', args: { table: 'vault', columns: ['id'] } }, none),
    v1('select', 'root', 'forbidden column', { type: 'select', args: { table: 'posts', columns: ['draft_note'] } }, none),
    v1('select', 'root', 'forbidden column in order_by', { type: 'select', args: { table: 'posts', columns: ['id'], order_by: '-draft_note' } }, none),
    v1(
      'select',
      'root',
      '"*" is the selectable columns',
      { type: 'select', args: { table: 'posts', columns: ['*'], order_by: 'id' } },
      (b) => Object.keys(b[0]),
      ['id', 'author_id', 'title', 'published'],
    ),
    v1('select', 'root', 'rows', { type: 'select', args: { table: 'posts', columns: ['id'], order_by: 'id' } }, ids, [1, 3, 4]),
    v1(
      'select',
      'object',
      'forbidden column of the target',
      { type: 'select', args: { table: 'posts', columns: ['id', { name: 'author', columns: ['secret'] }] } },
      none,
    ),
    v1(
      'select',
      'object',
      'forbidden target table',
      { type: 'select', args: { table: 'posts', columns: ['id', { name: 'vault_entry', columns: ['id'] }] } },
      none,
    ),
    v1('select', 'object', 'forbidden column in order_by', { type: 'select', args: { table: 'posts', columns: ['id'], order_by: 'author.secret' } }, none),
    v1('select', 'object', 'forbidden table in order_by', { type: 'select', args: { table: 'posts', columns: ['id'], order_by: 'vault_entry.secret' } }, none),
    v1(
      'select',
      'object',
      'rows of the target',
      { type: 'select', args: { table: 'posts', columns: ['id', { name: 'author', columns: ['name'] }], order_by: 'id' } },
      (b) => b.map((p: any) => p.author?.name ?? null),
      ['ann', 'bob', null],
    ),
    v1(
      'select',
      'object',
      'order_by sees only rows of the target',
      { type: 'select', args: { table: 'posts', columns: ['id'], order_by: { column: 'author.name', type: 'desc', nulls: 'last' } } },
      ids,
      [3, 1, 4],
    ),
    v1(
      'select',
      'array',
      'forbidden column of the target',
      { type: 'select', args: { table: 'authors', columns: [{ name: 'posts', columns: ['draft_note'] }] } },
      none,
    ),
    v1('select', 'array', 'forbidden target table', { type: 'select', args: { table: 'posts', columns: [{ name: 'vault', columns: ['id'] }] } }, none),
    v1(
      'select',
      'array',
      'forbidden column in the where of the target',
      { type: 'select', args: { table: 'authors', columns: [{ name: 'posts', columns: ['id'], where: { draft_note: { _eq: 'd1' } } }] } },
      none,
    ),
    v1(
      'select',
      'array',
      'forbidden column in the order_by of the target',
      { type: 'select', args: { table: 'authors', columns: [{ name: 'posts', columns: ['id'], order_by: 'draft_note' }] } },
      none,
    ),
    v1(
      'select',
      'array',
      'forbidden table in the where of the target',
      { type: 'select', args: { table: 'authors', columns: [{ name: 'posts', columns: ['id'], where: { vault_entry: { id: { _eq: 1 } } } }] } },
      none,
    ),
    v1(
      'select',
      'array',
      'rows of the target',
      { type: 'select', args: { table: 'authors', columns: [{ name: 'posts', columns: ['id'], order_by: 'id' }], order_by: 'id' } },
      (b) => b.map((a: any) => ids(a.posts)),
      [[1], [3]],
    ),
    // aggregate / count
    gq('aggregate', 'root', 'forbidden table', '{ vault_aggregate { aggregate { count } } }', none),
    gq('aggregate', 'root', 'forbidden column in an aggregate', '{ posts_aggregate { aggregate { max { draft_note } } } }', none),
    gq('aggregate', 'root', 'forbidden column in count(columns)', '{ posts_aggregate { aggregate { count(columns: [draft_note]) } } }', none),
    gq('aggregate', 'root', 'forbidden column in nodes', '{ posts_aggregate { nodes { draft_note } } }', none),
    gq('aggregate', 'root', 'allow_aggregations: false', '{ likes_aggregate { aggregate { count } } }', none),
    gq('aggregate', 'root', 'counts only rows', '{ posts_aggregate { aggregate { count } } }', (d) => d.posts_aggregate.aggregate.count, 3),
    gq('aggregate', 'object', 'forbidden column of the target in nodes', '{ posts_aggregate { nodes { author { secret } } } }', none),
    gq(
      'aggregate',
      'object',
      'rows of the target in nodes',
      '{ posts_aggregate(order_by: {id: asc}) { nodes { author { name } } } }',
      (d) => d.posts_aggregate.nodes.map((n: any) => n.author?.name ?? null),
      ['ann', 'bob', null],
    ),
    gq('aggregate', 'array', 'forbidden column of the target in nodes', '{ authors_aggregate { nodes { posts { draft_note } } } }', none),
    gq(
      'aggregate',
      'array',
      'rows of the target in nodes',
      '{ authors_aggregate(order_by: {id: asc}) { nodes { posts { id } } } }',
      (d) => d.authors_aggregate.nodes.map((a: any) => ids(a.posts)),
      [[1], [3]],
    ),
    gq(
      'aggregate',
      'aggregate',
      'nested aggregate counts only rows',
      '{ authors_aggregate(order_by: {id: asc}) { aggregate { count } nodes { posts_aggregate { aggregate { count } } } } }',
      (d) => [d.authors_aggregate.aggregate.count, ...d.authors_aggregate.nodes.map((a: any) => a.posts_aggregate.aggregate.count)],
      [2, 1, 1],
    ),
    gq(
      'aggregate',
      'aggregate',
      'forbidden column in a nested aggregate',
      '{ authors_aggregate { nodes { posts_aggregate { aggregate { min { draft_note } } } } } }',
      none,
    ),
    v1('aggregate', 'root', 'forbidden table', { type: 'count', args: { table: 'vault' } }, none),
    v1('aggregate', 'root', 'forbidden column in distinct', { type: 'count', args: { table: 'posts', distinct: ['draft_note'] } }, none),
    v1('aggregate', 'root', 'counts only rows', { type: 'count', args: { table: 'posts' } }, (b) => b.count, 3),
    // insert (the upserts below conflict with a published post: they rewrite its title with itself)
    gq('insert', 'root', 'forbidden table', 'mutation { insert_vault(objects: [{id: 9, post_id: 1, secret: "x"}]) { affected_rows } }', none),
    gq('insert', 'root', 'forbidden column in returning', `mutation { ${UPSERT('{title: "p1", author_id: 1}')} { returning { draft_note } } }`, none),
    gq(
      'insert',
      'root',
      'preset column given',
      'mutation { insert_posts(objects: [{title: "zz", author_id: 1, draft_note: "mine"}]) { affected_rows } }',
      none,
    ),
    gq('insert', 'root', 'column not insertable', 'mutation { insert_posts(objects: [{title: "zz", author_id: 1, published: true}]) { affected_rows } }', none),
    gq(
      'insert',
      'root',
      'forbidden column in on_conflict.where',
      `mutation { insert_posts(objects: [{title: "p1", author_id: 1}], on_conflict: {constraint: ${CONFLICT.posts}, where: {draft_note: {_eq: "d1"}}}) { affected_rows } }`,
      none,
    ),
    gq('insert', 'root', 'returning', `mutation { ${UPSERT('{title: "p1", author_id: 1}')} { returning { id title } } }`, (d) => d.insert_posts.returning, [
      { id: 1, title: 'p1' },
    ]),
    gq(
      'insert',
      'object',
      'forbidden column of the target in returning',
      `mutation { ${UPSERT('{title: "p1", author_id: 1}')} { returning { author { secret } } } }`,
      none,
    ),
    gq(
      'insert',
      'object',
      'rows of the target in returning',
      `mutation { ${UPSERT('{title: "p4", author_id: 3}')} { returning { id author { name } } } }`,
      (d) => d.insert_posts.returning,
      [{ id: 4, author: null }],
    ),
    gq(
      'insert',
      'array',
      'forbidden column of the target in returning',
      `mutation { ${UPSERT('{title: "p1", author_id: 1}')} { returning { author { posts { draft_note } } } } }`,
      none,
    ),
    gq(
      'insert',
      'array',
      'rows of the target in returning',
      `mutation { ${UPSERT('{title: "p1", author_id: 1}')} { returning { author { posts { id } } } } }`,
      (d) => d.insert_posts.returning.map((r: any) => ids(r.author.posts)),
      [[1]],
    ),
    gq(
      'insert',
      'object',
      'forbidden column in a nested on_conflict.where',
      `mutation { insert_posts(objects: [{title: "zz", author: {data: {name: "ann"}, on_conflict: {constraint: ${CONFLICT.authors}, where: {secret: {_eq: "s-ann"}}}}}]) { affected_rows } }`,
      none,
    ),
    gq(
      'insert',
      'array',
      'forbidden column in a nested on_conflict.where',
      `mutation { ${UPSERT('{name: "ann", posts: {data: [{title: "p1"}], on_conflict: {constraint: ' + CONFLICT.posts + ', where: {draft_note: {_eq: "d1"}}}}}', 'authors')} { affected_rows } }`,
      none,
    ),
    // the nested upsert conflicts with p4, whose author (eve) the role may not see: only the parent row is written
    gq(
      'insert',
      'array',
      'nested on_conflict.where sees only rows of the target',
      `mutation { ${UPSERT('{name: "ann", posts: {data: [{title: "p4"}], on_conflict: {constraint: ' + CONFLICT.posts + ', where: {author: {name: {_eq: "eve"}}}}}}', 'authors')} { affected_rows } }`,
      (d) => d.insert_authors.affected_rows,
      1,
    ),
    gq(
      'insert',
      'aggregate',
      'counts only rows in returning',
      `mutation { ${UPSERT('{title: "p1", author_id: 1}')} { returning { author { posts_aggregate { aggregate { count } } } } } }`,
      (d) => d.insert_posts.returning[0].author.posts_aggregate.aggregate.count,
      1,
    ),
    gq(
      'insert',
      'aggregate',
      'allow_aggregations: false in returning',
      `mutation { ${UPSERT('{title: "p1", author_id: 1}')} { returning { likes_aggregate { aggregate { count } } } } }`,
      none,
    ),
    v1('insert', 'root', 'forbidden table', { type: 'insert', args: { table: 'vault', objects: [{ id: 9, post_id: 1, secret: 'x' }] } }, none),
    v1(
      'insert',
      'root',
      'forbidden column in returning',
      { type: 'insert', args: { table: 'posts', objects: [{ title: 'zz', author_id: 1 }], returning: ['draft_note'] } },
      none,
    ),
    v1(
      'insert',
      'root',
      'preset column given',
      { type: 'insert', args: { table: 'posts', objects: [{ title: 'zz', author_id: 1, draft_note: 'mine' }] } },
      none,
      undefined,
      'not-supported',
    ),
    v1(
      'insert',
      'root',
      'column not insertable',
      { type: 'insert', args: { table: 'posts', objects: [{ title: 'zz', author_id: 1, published: true }] } },
      none,
    ),
    // update
    gq('update', 'root', 'forbidden table', 'mutation { update_vault(where: {}, _set: {secret: "x"}) { affected_rows } }', none),
    gq(
      'update',
      'root',
      'forbidden column in returning',
      'mutation { update_posts(where: {id: {_eq: 1}}, _set: {title: "p1"}) { returning { draft_note } } }',
      none,
    ),
    gq('update', 'root', 'column not updatable', 'mutation { update_posts(where: {id: {_eq: 1}}, _set: {draft_note: "x"}) { affected_rows } }', none),
    gq(
      'update',
      'root',
      'returning',
      'mutation { update_posts(where: {id: {_eq: 1}}, _set: {title: "p1"}) { returning { id } } }',
      (d) => ids(d.update_posts.returning),
      [1],
    ),
    gq(
      'update',
      'object',
      'forbidden column of the target in returning',
      'mutation { update_posts(where: {id: {_eq: 1}}, _set: {title: "p1"}) { returning { author { secret } } } }',
      none,
    ),
    gq(
      'update',
      'object',
      'rows of the target in returning',
      'mutation { update_posts(where: {id: {_eq: 4}}, _set: {title: "p4"}) { returning { author { name } } } }',
      (d) => d.update_posts.returning,
      [{ author: null }],
    ),
    gq(
      'update',
      'array',
      'forbidden column of the target in returning',
      'mutation { update_authors(where: {id: {_eq: 1}}, _set: {name: "ann"}) { returning { posts { draft_note } } } }',
      none,
    ),
    gq(
      'update',
      'array',
      'rows of the target in returning',
      'mutation { update_authors(where: {id: {_eq: 1}}, _set: {name: "ann"}) { returning { posts { id } } } }',
      (d) => d.update_authors.returning.map((a: any) => ids(a.posts)),
      [[1]],
    ),
    gq(
      'update',
      'aggregate',
      'counts only rows in returning',
      'mutation { update_authors(where: {id: {_eq: 1}}, _set: {name: "ann"}) { returning { posts_aggregate { aggregate { count } } } } }',
      (d) => d.update_authors.returning[0].posts_aggregate.aggregate.count,
      1,
    ),
    gq(
      'update',
      'aggregate',
      'forbidden column in an aggregate in returning',
      'mutation { update_authors(where: {id: {_eq: 1}}, _set: {name: "ann"}) { returning { posts_aggregate { aggregate { max { draft_note } } } } } }',
      none,
    ),
    v1('update', 'root', 'forbidden table', { type: 'update', args: { table: 'vault', where: {}, $set: { secret: 'x' } } }, none),
    v1(
      'update',
      'root',
      'forbidden column in returning',
      { type: 'update', args: { table: 'posts', where: { id: { _eq: 1 } }, $set: { title: 'p1' }, returning: ['draft_note'] } },
      none,
    ),
    v1('update', 'root', 'column not updatable', { type: 'update', args: { table: 'posts', where: { id: { _eq: 1 } }, $set: { draft_note: 'x' } } }, none),
    v1(
      'update',
      'root',
      'returning',
      { type: 'update', args: { table: 'posts', where: { id: { _eq: 1 } }, $set: { title: 'p1' }, returning: ['id'] } },
      (b) => ids(b.returning),
      [1],
    ),
    // delete (of nothing: the where matches no row)
    gq('delete', 'root', 'forbidden table', 'mutation { delete_vault(where: {}) { affected_rows } }', none),
    gq('delete', 'root', 'forbidden column in returning', 'mutation { delete_posts(where: {id: {_eq: -1}}) { returning { draft_note } } }', none),
    gq(
      'delete',
      'object',
      'forbidden column of the target in returning',
      'mutation { delete_posts(where: {id: {_eq: -1}}) { returning { author { secret } } } }',
      none,
    ),
    gq(
      'delete',
      'array',
      'forbidden column of the target in returning',
      'mutation { delete_authors(where: {id: {_eq: -1}}) { returning { posts { draft_note } } } }',
      none,
    ),
    gq(
      'delete',
      'aggregate',
      'forbidden column in an aggregate in returning',
      'mutation { delete_authors(where: {id: {_eq: -1}}) { returning { posts_aggregate { aggregate { max { draft_note } } } } } }',
      none,
    ),
    v1('delete', 'root', 'forbidden table', { type: 'delete', args: { table: 'vault', where: {} } }, none),
    v1(
      'delete',
      'root',
      'forbidden column in returning',
      { type: 'delete', args: { table: 'posts', where: { id: { _eq: -1 } }, returning: ['draft_note'] } },
      none,
    ),
  ];
}

async function outcome(p: Probe): Promise<Outcome> {
  const r = await p.send();
  if (p.endpoint === 'graphql' && r.body.errors) return { rejected: r.body.errors[0].extensions?.code };
  if (p.endpoint === 'v1' && r.status !== 200) return { rejected: r.body.code };
  try {
    return { value: p.pick(r.body) };
  } catch {
    return { value: `unexpected response ${r.text.slice(0, 200)}` };
  }
}

/** Every row of every table, as the admin sees it. */
async function snapshot(): Promise<unknown> {
  const out: Record<string, unknown> = {};
  for (const t of ['authors', 'posts', 'vault', 'tags', 'likes'])
    out[t] = await query(s.url, { type: 'select', args: { table: t, columns: ['*'], order_by: 'id' } });
  return out;
}

describe('the matrix', () => {
  const probes = [...filterProbes(), ...returnedProbes()];

  test(`${probes.length} probes cover every operation × way of reaching a table × endpoint that exists`, () => {
    const cells = new Set(probes.map((p) => `${p.op}/${p.reach}/${p.endpoint}`));
    for (const op of OPS) {
      for (const reach of REACHES) {
        for (const endpoint of ENDPOINTS) {
          // /v1/query has no aggregate fields, and its insert no boolean expression
          const absent = endpoint === 'v1' && (reach === 'aggregate' || (op === 'insert' && reach !== 'root'));
          assert.equal(cells.has(`${op}/${reach}/${endpoint}`), !absent, `${op}/${reach}/${endpoint}`);
        }
      }
    }
    assert.ok(probes.length >= 150, String(probes.length));
  });

  test('control: as admin, the filters on hidden rows do match rows (reads only)', async () => {
    const matches: Record<string, number> = { root: 2, object: 1, array: 2, exists: 5 };
    for (const endpoint of ENDPOINTS) {
      for (const [reach, n] of Object.entries(matches)) {
        if (endpoint === 'graphql' && reach === 'exists') continue;
        const f = FILTERS[reach as Reach]!;
        for (const op of ['select', 'aggregate'] as const) {
          const r = filtered(endpoint, op, f.table, f.hidden, f.conflict, {})!;
          assert.equal(r.pick((await r.send()).body), n, `${endpoint} ${op} ${reach}`);
        }
      }
    }
    // the nested upsert of the matrix writes its child row for a role that sees the target (same values: nothing changes)
    const nested = `mutation { ${UPSERT('{name: "ann", secret: "s-ann", posts: {data: [{title: "p4"}], on_conflict: {constraint: ' + CONFLICT.posts + ', where: {author: {name: {_eq: "eve"}}}}}}', 'authors')} { affected_rows } }`;
    assert.deepEqual((await postGraphql(s.url, { query: nested })).body, { data: { insert_authors: { affected_rows: 2 } } });
  });

  test('a forbidden row or column is neither returned nor observable; nothing is written', async () => {
    const before = await snapshot();
    const failures: string[] = [];
    for (const p of probes) {
      const got = await outcome(p);
      try {
        assert.deepEqual(got, p.expect);
      } catch {
        failures.push(`${p.endpoint} ${p.op} via ${p.reach}: ${p.what}: expected ${JSON.stringify(p.expect)}, got ${JSON.stringify(got)}`);
      }
    }
    assert.deepEqual(failures, []);
    assert.deepEqual(await snapshot(), before);
  });
});

// ---- around the matrix ------------------------------------------------------------------

const gql = async (doc: string, headers: Record<string, string> = USER) => (await postGraphql(s.url, { query: doc }, headers)).body;
const v1q = (body: object, headers: Record<string, string> = USER) => postQuery(s.url, body, headers);

describe('messages', () => {
  test("the rejections carry Hasura's messages and paths", async () => {
    assert.deepEqual(await gql('{ posts { draft_note } }'), {
      errors: [
        {
          extensions: { path: '$.selectionSet.posts.selectionSet.draft_note', code: 'validation-failed' },
          message: 'field "draft_note" not found in type: \'posts\'',
        },
      ],
    });
    assert.deepEqual((await v1q({ type: 'count', args: { table: 'posts', where: { author: { secret: { _eq: 'x' } } } } })).body, {
      path: '$.args.where',
      error: 'role "user" does not have permission to select column "secret"',
      code: 'permission-denied',
    });
    assert.deepEqual((await v1q({ type: 'count', args: { table: 'posts', where: { vault_entry: { id: { _eq: 1 } } } } })).body, {
      path: '$.args.where',
      error: 'role "user" does not have permission to read relationship "vault_entry"; no permission on table "vault"',
      code: 'permission-denied',
    });
    assert.deepEqual((await v1q({ type: 'insert', args: { table: 'posts', objects: [{ title: 'zz', author_id: 1, draft_note: 'mine' }] } })).body, {
      path: '$.args.objects[0]',
      error: 'column "draft_note" is not insertable for role "user"',
      code: 'not-supported',
    });
    assert.deepEqual(
      (await gql('mutation { insert_posts(objects: [{title: "zz", author_id: 1, draft_note: "mine"}]) { affected_rows } }')).errors[0].message,
      'field "draft_note" not found in type: \'posts_insert_input\'',
    );
  });
});

describe('computed fields and functions with session arguments', () => {
  test('scalar computed fields: only the permitted ones, selected or compared', async () => {
    assert.deepEqual(await gql('{ authors(order_by: {id: asc}) { shout } }'), { data: { authors: [{ shout: 'ANN' }, { shout: 'BOB' }] } });
    assert.equal((await gql('{ authors { secret_len } }')).errors[0].extensions.code, 'validation-failed');
    assert.deepEqual((await v1q({ type: 'count', args: { table: 'authors', where: { shout: { _eq: 'EVE' } } } })).body, { count: 0 });
    assert.deepEqual((await v1q({ type: 'count', args: { table: 'authors', where: { secret_len: { _gt: 0 } } } })).body, {
      path: '$.args.where',
      error: 'role "user" does not have permission to select computed field "secret_len"',
      code: 'permission-denied',
    });
  });

  test("a table computed field is filtered by the returned table's permission", async () => {
    assert.deepEqual(await gql('{ authors(order_by: {id: asc}) { all_posts(order_by: {id: asc}) { id } } }'), {
      data: { authors: [{ all_posts: [{ id: 1 }] }, { all_posts: [{ id: 3 }] }] },
    });
    assert.equal((await gql('{ authors { all_posts { draft_note } } }')).errors[0].extensions.code, 'validation-failed');
  });

  test('a computed field with a session argument reads the caller’s session', async () => {
    assert.deepEqual(await gql('{ posts(order_by: {id: asc}) { id mine } }'), {
      data: {
        posts: [
          { id: 1, mine: true },
          { id: 3, mine: false },
          { id: 4, mine: false },
        ],
      },
    });
    assert.deepEqual(await gql('{ posts(order_by: {id: asc}) { id mine } }', { ...USER, 'x-svc-user-id': '2' }), {
      data: {
        posts: [
          { id: 1, mine: false },
          { id: 3, mine: true },
          { id: 4, mine: false },
        ],
      },
    });
  });

  test("a function with a session argument: the caller's rows, filtered by the permission", async () => {
    assert.deepEqual(await gql('{ my_posts { id } }'), { data: { my_posts: [{ id: 1 }] } });
    assert.deepEqual(await gql('{ my_posts { id } my_posts_aggregate { aggregate { count } } }', { ...USER, 'x-svc-user-id': '2' }), {
      data: { my_posts: [{ id: 3 }], my_posts_aggregate: { aggregate: { count: 1 } } },
    });
    assert.equal((await gql('{ my_posts { draft_note } }')).errors[0].extensions.code, 'validation-failed');
  });
});

describe('allow_aggregations: false and the row limit', () => {
  test('no aggregates over likes (GraphQL); /v1/query count needs only select, as upstream', async () => {
    assert.deepEqual(await gql('{ likes(order_by: {id: asc}) { id } }'), { data: { likes: [{ id: 1 }, { id: 2 }] } });
    assert.equal((await gql('{ likes_aggregate { aggregate { count } } }')).errors[0].message, 'field "likes_aggregate" not found in type: \'query_root\'');
    assert.deepEqual((await v1q({ type: 'count', args: { table: 'likes' } })).body, { count: 2 });
  });

  test('the limit bounds rows at the root, through relationships and in aggregate nodes (not the aggregates)', async () => {
    assert.equal((await gql('{ tags { id } }')).data.tags.length, 2);
    assert.equal((await gql('{ tags(limit: 3) { id } }')).data.tags.length, 2);
    assert.equal((await gql('{ posts(where: {id: {_eq: 1}}) { tags { id } } }')).data.posts[0].tags.length, 2);
    assert.deepEqual(
      await gql('{ tags_aggregate { aggregate { count } nodes { id } } }').then((b) => [
        b.data.tags_aggregate.aggregate.count,
        b.data.tags_aggregate.nodes.length,
      ]),
      [4, 2],
    );
    assert.equal((await gql('{ posts(where: {id: {_eq: 1}}) { tags_aggregate { nodes { id } } } }')).data.posts[0].tags_aggregate.nodes.length, 2);
    assert.equal((await v1q({ type: 'select', args: { table: 'tags', columns: ['id'] } })).body.length, 2);
    assert.equal(
      (await v1q({ type: 'select', args: { table: 'posts', columns: [{ name: 'tags', columns: ['id'] }], where: { id: { _eq: 1 } } } })).body[0].tags.length,
      2,
    );
  });
});

describe('explain', () => {
  const explain = (body: object, headers: Record<string, string>) => post(s.url, '/v1/graphql/explain', body, headers);

  test('a non-admin cannot use it', async () => {
    const r = await explain({ query: { query: '{ posts { id } }' } }, USER);
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { path: '$', error: 'restricted access : admin only', code: 'access-denied' });
  });

  test("the admin explaining as a role sees the role's filters and schema", async () => {
    const asUser = await explain({ query: { query: '{ posts { id author { name } } }' }, user: { 'x-svc-role': 'user' } }, {});
    assert.equal(asUser.status, 200, asUser.text);
    assert.match(asUser.body[0].sql, /"published"/);
    assert.match(asUser.body[0].sql, /"hidden"/);
    const asAdmin = await explain({ query: { query: '{ posts { id author { name } } }' } }, {});
    assert.doesNotMatch(asAdmin.body[0].sql, /"published"|"hidden"/);
    const forbidden = await explain({ query: { query: '{ posts { draft_note } }' }, user: { 'x-svc-role': 'user' } }, {});
    assert.equal(forbidden.body.code, 'validation-failed');
  });
});

describe('presets', () => {
  test('a preset column takes its value from the session, on both endpoints', async () => {
    const r = await v1q({ type: 'insert', args: { table: 'posts', objects: [{ title: 'new-v1', author_id: 1 }] } }, { ...USER, 'x-svc-user-id': '7' });
    assert.deepEqual(r.body, { affected_rows: 1 });
    const g = await gql('mutation { insert_posts_one(object: {title: "new-gql", author_id: 2}) { title } }', { ...USER, 'x-svc-user-id': '8' });
    assert.deepEqual(g, { data: { insert_posts_one: { title: 'new-gql' } } });
    const rows = await query(s.url, {
      type: 'select',
      args: { table: 'posts', columns: ['title', 'draft_note'], where: { title: { _like: 'new-%' } }, order_by: 'title' },
    });
    assert.deepEqual(rows, [
      { title: 'new-gql', draft_note: '8' },
      { title: 'new-v1', draft_note: '7' },
    ]);
  });
});
