/**
 * GraphQL mutations end to end against PostgreSQL (runGraphQL on a real
 * database, no HTTP): nested inserts in few statements and one transaction,
 * permission checks aborting everything, concurrent upserts, bad input.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { printSchema, validateSchema } from 'graphql';
import { runGraphQL } from '../../src/execute/graphql.js';
import { getRoleSchema } from '../../src/schema/graphql/schema.js';
import { emptyMetadata, fixture, table, type Fixture } from './helpers.js';

let f: Fixture;

const SETUP = `
create table author (id serial primary key, name text unique, rating int);
create table article (id serial primary key, title text not null, author_id int not null references author(id), is_published bool default false);
create table bulk (id serial primary key, n int not null, s text);
create table logged (id serial primary key, v text);
create table audit (id serial primary key, who text);
create function audit_fn() returns trigger as $$
  begin insert into audit (who) values (current_setting('svc.user', true)); return new; end $$ language plpgsql;
create trigger logged_audit after insert on logged for each row execute function audit_fn();
create table colors (value text primary key, comment text);
insert into colors values ('red', null), ('blue', null);
create table paint (id serial primary key, color text references colors(value));
`;

const all = '*' as const;

before(async () => {
  const md = emptyMetadata();
  md.tables.push(
    table('author', {
      array_relationships: [{ name: 'articles', using: { foreign_key_constraint_on: { table: { schema: 'public', name: 'article' }, column: 'author_id' } } }],
      select_permissions: [
        { role: 'upserter', permission: { columns: all, filter: {} } },
        { role: 'nested', permission: { columns: ['id', 'name'], filter: {} } },
        { role: 'reader', permission: { columns: all, filter: {} } },
      ],
      insert_permissions: [
        { role: 'upserter', permission: { check: {}, columns: ['name', 'rating'] } },
        { role: 'nested', permission: { check: {}, columns: ['name'] } },
        { role: 'backend', permission: { check: {}, columns: ['name'], backend_only: true } },
      ],
      update_permissions: [{ role: 'upserter', permission: { columns: ['rating'], filter: {} } }],
    }),
    table('article', {
      object_relationships: [{ name: 'author', using: { foreign_key_constraint_on: 'author_id' } }],
      select_permissions: [
        { role: 'writer', permission: { columns: ['id', 'title', 'author_id'], filter: {} } },
        { role: 'nested', permission: { columns: ['id', 'title'], filter: {} } },
      ],
      insert_permissions: [
        { role: 'writer', permission: { check: { title: { _neq: 'bad' } }, columns: ['title', 'author_id', 'is_published'] } },
        // the check reads the author, which the same mutation may insert (through the relationship)
        { role: 'nested', permission: { check: { author: { name: { _eq: 'X-Svc-Name' } } }, columns: ['title'] } },
      ],
      update_permissions: [{ role: 'writer', permission: { columns: ['title'], filter: { is_published: false }, check: { title: { _neq: 'bad' } } } }],
      delete_permissions: [{ role: 'writer', permission: { filter: { is_published: false } } }],
    }),
    table('bulk'),
    table('logged'),
    table('colors', { is_enum: true }),
    table('paint'),
  );
  f = await fixture(SETUP, md);
});
after(() => f.close());

const run = async (query: string, variables?: Record<string, unknown>, role = 'admin', vars: Record<string, string> = {}) =>
  JSON.parse(await runGraphQL(f.ctx(role, vars), { query, variables }));

const count = async (sql: string) => Number((await f.db.query(sql)).rows[0].n);

async function newAuthor(name: string): Promise<number> {
  const r = await run('mutation ($n: String) { insert_author_one(object: {name: $n}) { id } }', { n: name });
  return r.data.insert_author_one.id;
}

describe('schema', () => {
  test("every role schema is a valid GraphQL schema with Hasura's mutation types", () => {
    for (const role of ['admin', 'writer', 'nested', 'upserter', 'reader', 'backend']) {
      // (a role that can select nothing has empty query roots; not the concern here)
      const problems = validateSchema(getRoleSchema(f.cache, role).schema)
        .map((e) => e.message)
        .filter((m) => !/^Type (query|subscription)_root must define/.test(m));
      assert.deepEqual(problems, [], role);
    }
    const sdl = printSchema(getRoleSchema(f.cache, 'admin').schema);
    for (const part of [
      'insert_author(\n    """the rows to be inserted"""\n    objects: [author_insert_input!]!',
      'input author_on_conflict {\n  constraint: author_constraint!\n  update_columns: [author_update_column!]!\n  where: author_bool_exp\n}',
      'input author_obj_rel_insert_input {\n  data: author_insert_input!\n  on_conflict: author_on_conflict\n}',
      'input article_arr_rel_insert_input {\n  data: [article_insert_input!]!\n  on_conflict: article_on_conflict\n}',
      'pk_columns: article_pk_columns_input!',
      'type author_mutation_response {\n  """number of affected rows by the mutation"""\n  affected_rows: Int!\n\n  """data of the affected rows by the mutation"""\n  returning: [author!]!\n}',
    ]) {
      assert.ok(sdl.includes(part), part);
    }
    // the writer may not select authors: no author mutations at all, and its article response has returning
    const writer = getRoleSchema(f.cache, 'writer').schema;
    assert.equal(writer.getType('author_mutation_response'), undefined);
    assert.deepEqual(Object.keys((writer.getType('article_mutation_response') as any).getFields()), ['affected_rows', 'returning']);
  });
});

describe('nested inserts', () => {
  test('a parent with 100 children: one transaction of a handful of statements', async () => {
    const children = Array.from({ length: 100 }, (_, i) => ({ title: `child ${i}` }));
    const before = f.db.statementCount;
    const trips = f.db.roundTrips;
    const r = await run(
      'mutation ($c: [article_insert_input!]!) { insert_author(objects: [{name: "parent of 100", articles: {data: $c}}]) { affected_rows } }',
      { c: children },
    );
    const statements = f.db.statementCount - before;
    assert.deepEqual(r, { data: { insert_author: { affected_rows: 101 } } });
    // set_config(svc.user) and the insert: one transaction, one round trip
    assert.equal(statements, 2);
    assert.equal(f.db.roundTrips - trips, 1);
    assert.equal(await count(`select count(*) as n from article a join author p on p.id = a.author_id where p.name = 'parent of 100'`), 100);
  });

  test('returning through relationships sees the rows written (second statement)', async () => {
    const before = f.db.statementCount;
    const trips = f.db.roundTrips;
    const r = await run(`mutation {
      insert_author(objects: [{name: "with kids", articles: {data: [{title: "k1"}, {title: "k2"}]}}, {name: "no kids"}]) {
        affected_rows returning { name articles(order_by: {title: asc}) { title } }
      } }`);
    // begin + set_config (one round trip), the write, the output, commit
    assert.equal(f.db.statementCount - before, 5);
    assert.equal(f.db.roundTrips - trips, 4);
    assert.deepEqual(r.data.insert_author, {
      affected_rows: 4,
      returning: [
        { name: 'with kids', articles: [{ title: 'k1' }, { title: 'k2' }] },
        { name: 'no kids', articles: [] },
      ],
    });
  });

  test('many parents, children and grandchildren: each row goes to its own parent; returning keeps the input order', async () => {
    const r = await run(`mutation {
      insert_article(objects: [
        {title: "g1", author: {data: {name: "ga", articles: {data: [{title: "ga-1"}, {title: "ga-2"}]}}}},
        {title: "g2", is_published: true},
        {title: "g3", author: {data: {name: "gb", rating: 5}}},
        {title: "g4", author: {data: {name: "gc", articles: {data: [{title: "gc-1"}]}}}}
      ]) { affected_rows returning { title author { name rating articles(order_by: {title: asc}) { title } } } }
    }`);
    // g2 has no author: the not-null violation undoes everything
    assert.equal(r.errors[0].extensions.code, 'constraint-violation');
    assert.equal(await count(`select count(*) as n from author where name in ('ga', 'gb', 'gc')`), 0);
    const ok = await run(`mutation {
      insert_article(objects: [
        {title: "g1", author: {data: {name: "ga", articles: {data: [{title: "ga-1"}, {title: "ga-2"}]}}}},
        {title: "g3", author: {data: {name: "gb", rating: 5}}},
        {title: "g4", author: {data: {name: "gc", articles: {data: [{title: "gc-1"}]}}}}
      ]) { affected_rows returning { title author { name rating articles(order_by: {title: asc}) { title } } } }
    }`);
    assert.deepEqual(ok.data.insert_article, {
      affected_rows: 9,
      returning: [
        { title: 'g1', author: { name: 'ga', rating: null, articles: [{ title: 'g1' }, { title: 'ga-1' }, { title: 'ga-2' }] } },
        { title: 'g3', author: { name: 'gb', rating: 5, articles: [{ title: 'g3' }] } },
        { title: 'g4', author: { name: 'gc', rating: null, articles: [{ title: 'g4' }, { title: 'gc-1' }] } },
      ],
    });
  });

  test('an object relationship upsert that writes nothing stops the insert', async () => {
    await newAuthor('taken');
    const r = await run(
      `mutation { insert_article(objects: [{title: "t", author: {data: {name: "taken"}, on_conflict: {constraint: author_name_key, update_columns: []}}}]) { affected_rows } }`,
    );
    assert.deepEqual(r.errors, [
      {
        extensions: { path: '$.selectionSet.insert_article.args.objects', code: 'not-supported' },
        message: 'cannot proceed to insert object relation "author" since insert to table "author" affects zero rows',
      },
    ]);
    const upserted = await run(
      `mutation { insert_article(objects: [{title: "t2", author: {data: {name: "taken"}, on_conflict: {constraint: author_name_key, update_columns: [name]}}}]) { returning { author { name } } } }`,
    );
    assert.deepEqual(upserted.data.insert_article.returning, [{ author: { name: 'taken' } }]);
  });

  test('object relationship: the related row is inserted first', async () => {
    const r = await run(
      'mutation { insert_article(objects: [{title: "a1", author: {data: {name: "obj rel author"}}}]) { affected_rows returning { title author { name } } } }',
    );
    assert.deepEqual(r.data.insert_article, { affected_rows: 2, returning: [{ title: 'a1', author: { name: 'obj rel author' } }] });
  });

  test('a column the parent determines cannot be given', async () => {
    const r = await run('mutation { insert_author(objects: [{name: "x1", articles: {data: [{title: "t", author_id: 1}]}}]) { affected_rows } }');
    assert.deepEqual(r.errors, [
      {
        extensions: { path: '$.selectionSet.insert_author.args.objects[0].articles.data[0]', code: 'validation-failed' },
        message: 'cannot insert "author_id" columns as their values are already being determined by parent insert',
      },
    ]);
  });

  test('an object relationship whose column is also given: upstream\'s message, "relation ship" (sic)', async () => {
    const r = await run('mutation { insert_article(objects: [{title: "t", author_id: 1, author: {data: {name: "both"}}}]) { affected_rows } }');
    assert.deepEqual(r.errors, [
      {
        extensions: { path: '$.selectionSet.insert_article.args.objects[0].author', code: 'validation-failed' },
        message: 'cannot insert object relation ship "author" as "author_id" column values are already determined',
      },
    ]);
    assert.equal(await count(`select count(*) as n from author where name = 'both'`), 0);
  });

  test('a parent upsert that writes nothing cannot take children', async () => {
    await newAuthor('exists already');
    const r = await run(`mutation { insert_author(objects: [{name: "exists already", articles: {data: [{title: "orphan"}]}}],
      on_conflict: {constraint: author_name_key, update_columns: []}) { affected_rows } }`);
    assert.equal(r.errors[0].extensions.code, 'not-supported');
    assert.equal(r.errors[0].message, 'cannot proceed to insert array relations since insert to table "author" affects zero rows');
    assert.equal(await count(`select count(*) as n from article where title = 'orphan'`), 0);
  });

  test('a check through a relationship sees the related row inserted by the same mutation', async () => {
    const ok = await run(
      'mutation { insert_article(objects: [{title: "by me", author: {data: {name: "me myself"}}}]) { affected_rows } }',
      undefined,
      'nested',
      { 'x-svc-name': 'me myself' },
    );
    assert.deepEqual(ok, { data: { insert_article: { affected_rows: 2 } } });
    const denied = await run(
      'mutation { insert_article(objects: [{title: "not me", author: {data: {name: "someone else"}}}]) { affected_rows } }',
      undefined,
      'nested',
      { 'x-svc-name': 'me myself' },
    );
    assert.equal(denied.errors[0].message, 'Check constraint violation. insert check constraint failed');
    assert.equal(await count(`select count(*) as n from author where name = 'someone else'`), 0);
  });
});

describe('objects given as variables', () => {
  test("same shape → the cached plan, with this request's values", async () => {
    const q = 'mutation ($o: article_insert_input!) { insert_article(objects: [$o]) { returning { title author_id is_published } } }';
    const a = await newAuthor('shape-1');
    f.planCache.resetStats();
    const one = await run(q, { o: { title: 'first', author_id: a, is_published: true } });
    const two = await run(q, { o: { title: 'second', author_id: a, is_published: false } });
    assert.deepEqual(one.data.insert_article.returning, [{ title: 'first', author_id: a, is_published: true }]);
    assert.deepEqual(two.data.insert_article.returning, [{ title: 'second', author_id: a, is_published: false }]);
    assert.deepEqual({ ...f.planCache.stats }, { hits: 1, misses: 1 });
    // another shape (a key left out, a null) is another plan
    const three = await run(q, { o: { title: 'third', author_id: a } });
    const four = await run(q, { o: { title: 'fourth', author_id: a, is_published: null } });
    assert.deepEqual(three.data.insert_article.returning, [{ title: 'third', author_id: a, is_published: false }]);
    assert.deepEqual(four.data.insert_article.returning, [{ title: 'fourth', author_id: a, is_published: null }]);
    assert.deepEqual({ ...f.planCache.stats }, { hits: 1, misses: 3 });
  });

  test('lists of objects: the length is part of the shape; nested objects too', async () => {
    const q = 'mutation ($os: [author_insert_input!]!) { insert_author(objects: $os) { affected_rows returning { name articles { title } } } }';
    f.planCache.resetStats();
    const r1 = await run(q, { os: [{ name: 'L1', articles: { data: [{ title: 'L1a' }] } }] });
    const r2 = await run(q, { os: [{ name: 'L2', articles: { data: [{ title: 'L2a' }] } }] });
    const r3 = await run(q, { os: [{ name: 'L3', articles: { data: [{ title: 'L3a' }, { title: 'L3b' }] } }, { name: 'L4' }] });
    assert.deepEqual(r1.data.insert_author.returning, [{ name: 'L1', articles: [{ title: 'L1a' }] }]);
    assert.deepEqual(r2.data.insert_author.returning, [{ name: 'L2', articles: [{ title: 'L2a' }] }]);
    assert.equal(r3.data.insert_author.affected_rows, 4);
    assert.deepEqual({ ...f.planCache.stats }, { hits: 1, misses: 2 });
  });

  test('an upsert given by a variable keys the plan by its constraint and columns', async () => {
    const q = 'mutation ($o: author_insert_input!) { insert_author_one(object: $o) { name rating } }';
    await run(q, { o: { name: 'ups', rating: 1 } });
    const kept = await run(q, { o: { name: 'ups', rating: 2 } }).catch(() => null);
    assert.equal(kept?.errors?.[0]?.extensions?.code, 'constraint-violation');
    const up = await run('mutation ($o: author_insert_input!, $c: author_on_conflict) { insert_author_one(object: $o, on_conflict: $c) { name rating } }', {
      o: { name: 'ups', rating: 3 },
      c: { constraint: 'author_name_key', update_columns: ['rating'] },
    });
    assert.deepEqual(up.data.insert_author_one, { name: 'ups', rating: 3 });
    const none = await run('mutation ($o: author_insert_input!, $c: author_on_conflict) { insert_author_one(object: $o, on_conflict: $c) { name rating } }', {
      o: { name: 'ups', rating: 4 },
      c: { constraint: 'author_name_key', update_columns: [] },
    });
    assert.equal(none.data.insert_author_one, null);
    assert.equal(await count("select rating as n from author where name = 'ups'"), 3);
  });
});

describe('permissions', () => {
  test('a failing check on row 50 of 100 leaves the table unchanged', async () => {
    const a = await newAuthor('check author');
    const before = await count('select count(*) as n from article');
    const objects = Array.from({ length: 100 }, (_, i) => ({ title: i === 49 ? 'bad' : `ok ${i}`, author_id: a }));
    const r = await run('mutation ($o: [article_insert_input!]!) { insert_article(objects: $o) { affected_rows } }', { o: objects }, 'writer');
    assert.deepEqual(r.errors, [
      {
        extensions: { path: '$.selectionSet.insert_article.args.objects', code: 'permission-error' },
        message: 'Check constraint violation. insert check constraint failed',
      },
    ]);
    assert.equal(await count('select count(*) as n from article'), before);
  });

  test('update: the filter limits the rows, the check aborts', async () => {
    const a = await newAuthor('update author');
    await f.db.query(`insert into article (title, author_id, is_published) values ('draft', ${a}, false), ('live', ${a}, true)`);
    const r = await run(
      `mutation { update_article(where: {author_id: {_eq: ${a}}}, _set: {title: "renamed"}) { affected_rows returning { title } } }`,
      undefined,
      'writer',
    );
    assert.deepEqual(r.data.update_article, { affected_rows: 1, returning: [{ title: 'renamed' }] });
    const bad = await run(`mutation { update_article(where: {author_id: {_eq: ${a}}}, _set: {title: "bad"}) { affected_rows } }`, undefined, 'writer');
    assert.deepEqual(bad.errors, [
      { extensions: { path: '$', code: 'permission-error' }, message: 'Check constraint violation. update check constraint failed' },
    ]);
    assert.equal(await count(`select count(*) as n from article where author_id = ${a} and title = 'renamed'`), 1);
  });

  test('columns outside the permission do not exist; no permission, no mutation', async () => {
    const r = await run('mutation { insert_author(objects: [{name: "x", id: 5}]) { affected_rows } }', undefined, 'nested');
    assert.equal(r.errors[0].extensions.code, 'validation-failed');
    assert.equal(r.errors[0].message, `field "id" not found in type: 'author_insert_input'`);
    const none = await run('mutation { insert_author(objects: [{name: "x"}]) { affected_rows } }', undefined, 'reader');
    assert.deepEqual(none.errors, [{ extensions: { path: '$', code: 'validation-failed' }, message: 'no mutations exist' }]);
    const noDelete = await run('mutation { delete_author(where: {}) { affected_rows } }', undefined, 'upserter');
    assert.equal(noDelete.errors[0].message, `field "delete_author" not found in type: 'mutation_root'`);
    assert.equal(await count(`select count(*) as n from author where name = 'x'`), 0);
  });

  test('returning only has the selectable columns', async () => {
    const a = await newAuthor('returning author');
    const r = await run(`mutation { insert_article(objects: [{title: "r", author_id: ${a}}]) { returning { id is_published } } }`, undefined, 'writer');
    assert.equal(r.errors[0].message, `field "is_published" not found in type: 'article'`);
  });

  test('upsert needs the update permission (no on_conflict argument without it)', async () => {
    const r = await run(
      'mutation { insert_author(objects: [{name: "u"}], on_conflict: {constraint: author_pkey, update_columns: [name]}) { affected_rows } }',
      undefined,
      'nested',
    );
    assert.equal(r.errors[0].message, 'no such argument "on_conflict" is expected');
    assert.equal(await count(`select count(*) as n from author where name = 'u'`), 0);
  });

  test('backend-only insert permissions need admin credentials and the header', async () => {
    const plain = await run('mutation { insert_author(objects: [{name: "backend"}]) { affected_rows } }', undefined, 'backend');
    assert.equal(plain.errors[0].message, 'no mutations exist');
    const ctx = f.ctx('backend', { 'x-svc-use-backend-only-permissions': 'true' });
    const ok = JSON.parse(
      await runGraphQL(
        { ...ctx, session: { ...ctx.session, hasAdminCredentials: true } },
        { query: 'mutation { insert_author(objects: [{name: "backend"}]) { affected_rows } }' },
      ),
    );
    assert.deepEqual(ok, { data: { insert_author: { affected_rows: 1 } } });
  });
});

describe('transactions', () => {
  test('several root fields run in order in one transaction; a failure rolls back all', async () => {
    const r = await run(`mutation {
      a: insert_author(objects: [{name: "tx 1"}]) { affected_rows }
      b: insert_author(objects: [{name: "tx 1"}]) { affected_rows }
    }`);
    assert.deepEqual(r.errors, [
      {
        extensions: { path: '$.selectionSet.insert_author.args.objects', code: 'constraint-violation' },
        message: 'Uniqueness violation. duplicate key value violates unique constraint "author_name_key"',
      },
    ]);
    assert.equal(await count(`select count(*) as n from author where name = 'tx 1'`), 0);
    const ok = await run(`mutation {
      a: insert_author(objects: [{name: "tx 2"}]) { affected_rows }
      b: update_author(where: {name: {_eq: "tx 2"}}, _set: {rating: 7}) { returning { rating } }
      __typename
    }`);
    assert.deepEqual(ok, { data: { a: { affected_rows: 1 }, b: { returning: [{ rating: 7 }] }, __typename: 'mutation_root' } });
  });

  test('svc.user holds the session inside the transaction (triggers read it)', async () => {
    await run('mutation { insert_logged(objects: [{v: "x"}]) { affected_rows } }', undefined, 'admin', { 'x-svc-user-id': '42' });
    const who = (await f.db.query('select who from audit order by id desc limit 1')).rows[0].who;
    assert.deepEqual(JSON.parse(who), { 'x-svc-role': 'admin', 'x-svc-user-id': '42' });
  });

  test('two clients upserting the same key concurrently both succeed; the row is one of theirs', async () => {
    const q =
      'mutation ($r: Int) { insert_author(objects: [{name: "contended", rating: $r}], on_conflict: {constraint: author_name_key, update_columns: [rating]}) { affected_rows } }';
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => run(q, { r: i }, 'upserter')));
    for (const r of results) assert.deepEqual(r, { data: { insert_author: { affected_rows: 1 } } });
    const rows = (await f.db.query(`select rating from author where name = 'contended'`)).rows;
    assert.equal(rows.length, 1);
    assert.ok([0, 1, 2, 3, 4, 5, 6, 7].includes(Number(rows[0].rating)));
  });
});

describe('bad input', () => {
  test('wrong types: clear errors, nothing written', async () => {
    const before = await count('select count(*) as n from bulk');
    const b1 = await run('mutation { insert_bulk(objects: [{n: true}]) { affected_rows } }');
    assert.deepEqual(b1.errors, [
      { extensions: { path: '$.selectionSet.insert_bulk.args.objects[0].n', code: 'validation-failed' }, message: 'expected Int32, encountered Boolean' },
    ]);
    const b2 = await run('mutation { insert_bulk(objects: [{n: 1.5}]) { affected_rows } }');
    assert.equal(b2.errors[0].extensions.code, 'parse-failed');
    const b3 = await run('mutation { insert_bulk(objects: [{n: "abc"}]) { affected_rows } }');
    assert.deepEqual(b3.errors, [
      { extensions: { path: '$.selectionSet.insert_bulk.args.objects[0].n', code: 'validation-failed' }, message: 'expected Int32, encountered String "abc"' },
    ]);
    const b4 = await run('mutation ($o: [bulk_insert_input!]!) { insert_bulk(objects: $o) { affected_rows } }', { o: [{ n: 1 }, { n: { x: 1 } }] });
    assert.deepEqual(b4.errors, [
      { extensions: { path: '$.variableValues.o[1].n', code: 'validation-failed' }, message: 'expected Int32, encountered Object' },
    ]);
    const b5 = await run('mutation { insert_bulk(objects: [{s: "no n"}]) { affected_rows } }');
    assert.equal(b5.errors[0].extensions.code, 'constraint-violation');
    assert.equal(await count('select count(*) as n from bulk'), before);
  });

  test('unknown columns and enum values', async () => {
    const r = await run('mutation { insert_bulk(objects: [{n: 1, nope: 2}]) { affected_rows } }');
    assert.deepEqual(r.errors, [
      {
        extensions: { path: '$.selectionSet.insert_bulk.args.objects[0].nope', code: 'validation-failed' },
        message: `field "nope" not found in type: 'bulk_insert_input'`,
      },
    ]);
    const e = await run('mutation { insert_paint(objects: [{color: green}]) { affected_rows } }');
    assert.equal(e.errors[0].message, `unexpected value "green" for enum: 'colors_enum'`);
    const ok = await run('mutation { insert_paint(objects: [{color: red}]) { returning { color } } }');
    assert.deepEqual(ok.data.insert_paint.returning, [{ color: 'red' }]);
  });

  test('10,000 objects in one insert work', async () => {
    const o = Array.from({ length: 10_000 }, (_, i) => ({ n: i, s: `row ${i}` }));
    const before = f.db.statementCount;
    const r = await run('mutation ($o: [bulk_insert_input!]!) { insert_bulk(objects: $o) { affected_rows } }', { o });
    assert.deepEqual(r, { data: { insert_bulk: { affected_rows: 10_000 } } });
    assert.equal(f.db.statementCount - before, 2);
  });

  test('10,000 parents with a child each: still one INSERT per table', async () => {
    const o = Array.from({ length: 10_000 }, (_, i) => ({ name: `p${i}`, articles: { data: [{ title: `c${i}` }] } }));
    const before = f.db.statementCount;
    const r = await run('mutation ($o: [author_insert_input!]!) { insert_author(objects: $o) { affected_rows } }', { o });
    assert.deepEqual(r, { data: { insert_author: { affected_rows: 20_000 } } });
    assert.equal(f.db.statementCount - before, 2);
    // every child went to its own parent
    assert.equal(
      await count(`select count(*) as n from article a join author p on p.id = a.author_id where p.name like 'p%' and a.title = 'c' || substr(p.name, 2)`),
      10_000,
    );
  });

  test('an on_conflict target that is not the conflicting constraint: the violation, nothing written', async () => {
    await newAuthor('conflicting');
    const r = await run(
      'mutation { insert_author(objects: [{name: "fresh"}, {name: "conflicting"}], on_conflict: {constraint: author_pkey, update_columns: [rating]}) { affected_rows } }',
    );
    assert.equal(r.errors[0].extensions.code, 'constraint-violation');
    assert.equal(await count(`select count(*) as n from author where name = 'fresh'`), 0);
    const unknown = await run(
      'mutation { insert_author(objects: [{name: "z"}], on_conflict: {constraint: no_such_key, update_columns: []}) { affected_rows } }',
    );
    assert.equal(unknown.errors[0].message, `unexpected value "no_such_key" for enum: 'author_constraint'`);
  });
});
