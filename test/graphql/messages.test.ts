/**
 * GraphQL validation errors with upstream v1.3's messages and paths (src/ir/messages.ts):
 * Hasura/GraphQL/Validate.hs (variables), Validate/Context.hs, Validate/SelectionSet.hs
 * (selection sets, arguments, fragments, directives, merging) and Validate/InputValue.hs
 * (input values).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runGraphQL } from '../../src/execute/graphql.js';
import { emptyMetadata, fixture, table, type Fixture } from './helpers.js';

let f: Fixture;

before(async () => {
  const md = emptyMetadata();
  md.tables.push(
    table('author', {
      array_relationships: [{ name: 'articles', using: { foreign_key_constraint_on: { table: { schema: 'public', name: 'article' }, column: 'author_id' } } }],
    }),
    table('article'),
  );
  f = await fixture(
    `create table author (id serial primary key, name text);
     create table article (id serial primary key, title text, author_id int references author(id));
     insert into author (name) values ('A1');`,
    md,
  );
});
after(() => f.close());

async function err(query: string, variables?: Record<string, unknown>) {
  const r = await runGraphQL(f.ctx(), { query, variables });
  const body = JSON.parse(r);
  assert.ok(body.errors, `expected an error, got ${r}`);
  const e = body.errors[0];
  return { path: e.extensions.path, code: e.extensions.code, message: e.message };
}

const ve = (path: string, message: string) => ({ path, code: 'validation-failed', message });

describe('variables (Validate.hs getAnnVarVals, InputValue.hs)', () => {
  test('a variable the operation does not define', async () => {
    assert.deepEqual(await err('{ author { id } }', { x: 1, y: 2 }), ve('$.variableValues', 'unexpected variables in variableValues: "x", "y"'));
  });
  test('a missing non-nullable variable names its type', async () => {
    assert.deepEqual(
      await err('query($id: Int!) { author_by_pk(id: $id) { id } }', {}),
      ve('$.variableValues', 'expecting a value for non-nullable variable: "id" of type: Int! in variableValues'),
    );
  });
  test('a variable the operation does not declare', async () => {
    assert.deepEqual(
      await err('{ author(where: {id: {_eq: $x}}) { id } }'),
      ve('$.selectionSet.author.args.where.id._eq', 'no such variable defined in the operation: "x"'),
    );
  });
  test('a nullable variable at a non-null position', async () => {
    assert.deepEqual(
      await err('query($id: Int) { author_by_pk(id: $id) { id } }', { id: 1 }),
      ve('$.selectionSet.author_by_pk.args.id', 'variable id of type Int is used in position expecting Int!'),
    );
  });
  test('a variable of an unknown type', async () => {
    assert.deepEqual(await err('query($x: nope) { author { id } }', { x: 1 }), ve('$.variableValues', "no such type exists in the schema: 'nope'"));
  });
  test('JSON values of the wrong kind', async () => {
    assert.deepEqual(
      await err('query($o: order_by) { author(order_by: {id: $o}) { id } }', { o: 1 }),
      ve('$.variableValues.o', 'expecting a JSON string for Enum'),
    );
    assert.deepEqual(await err('query($w: author_bool_exp) { author(where: $w) { id } }', { w: 1 }), ve('$.variableValues.w', 'expecting a JSON object'));
  });
});

describe('input values (InputValue.hs)', () => {
  test('literals of the wrong kind', async () => {
    assert.deepEqual(await err('{ author(where: 1) { id } }'), ve('$.selectionSet.author.args.where', 'expecting an object'));
    assert.deepEqual(
      await err('{ author(where: {name: {_eq: foo}}) { id } }'),
      ve('$.selectionSet.author.args.where.name._eq', 'unexpected enum for a scalar'),
    );
  });
  test('a required field of an input object', async () => {
    assert.deepEqual(
      await err('mutation { insert_article(objects: [{title: "t"}], on_conflict: {update_columns: []}) { affected_rows } }'),
      ve('$.selectionSet.insert_article.args.on_conflict', 'field constraint of type article_constraint! is required, but not found'),
    );
  });
  test('a field given twice', async () => {
    assert.deepEqual(
      await err('{ author(where: {id: {_eq: 1, _eq: 2}}) { id } }'),
      ve('$.selectionSet.author.args.where.id', 'when parsing a value of type: \'Int_comparison_exp\', the following fields are duplicated: "_eq"'),
    );
  });
});

describe('selection sets (SelectionSet.hs)', () => {
  test('leaves and objects', async () => {
    assert.deepEqual(
      await err('{ author { id { x } } }'),
      ve('$.selectionSet.author.selectionSet.id', 'field "id" must not have a selection since type Int! has no subfields'),
    );
    assert.deepEqual(await err('{ author }'), ve('$.selectionSet.author', 'field "author" of type [author!]! must have a selection of subfields'));
  });
  test('paths name the field, not its alias', async () => {
    assert.deepEqual(await err('{ a: author { b: nope } }'), ve('$.selectionSet.author.selectionSet.nope', 'field "nope" not found in type: \'author\''));
  });
  test('fields merged under one alias', async () => {
    assert.deepEqual(
      await err('{ author { x: id x: name } }'),
      ve('$.selectionSet.author.selectionSet', 'cannot merge different fields under the same alias ("x"): "id", "name"'),
    );
    assert.deepEqual(
      await err('{ author { articles(limit: 1) { id } articles(limit: 2) { id } } }'),
      ve('$.selectionSet.author.selectionSet', 'cannot merge fields with different arguments under the same alias: "articles"'),
    );
  });
  test('arguments', async () => {
    assert.deepEqual(
      await err('{ author(limit: 1, limit: 2) { id } }'),
      ve('$.selectionSet.author.args', 'the following arguments are defined more than once: "limit"'),
    );
    assert.deepEqual(await err('{ author(nope: 1) { id } }'), ve('$.selectionSet.author.args.nope', 'no such argument "nope" is expected'));
    assert.deepEqual(await err('{ author_by_pk { id } }'), ve('$.selectionSet.author_by_pk.args', 'the required argument "id" is missing'));
  });
  test('fragments', async () => {
    assert.deepEqual(await err('{ author { ...F } }'), ve('$.selectionSet.author.selectionSet', "fragment 'F' not found"));
    assert.deepEqual(
      await err('{ author { ...F } } fragment F on article { id }'),
      ve('$.selectionSet.author.selectionSet.F', "cannot spread fragment  defined on 'article' when selecting fields of type 'author'"),
    );
    assert.deepEqual(
      await err('{ author { ... on article { id } } }'),
      ve('$.selectionSet.author.selectionSet.inlineFragment', "cannot spread fragment  defined on 'article' when selecting fields of type 'author'"),
    );
    assert.deepEqual(await err('{ author { ... on nope { id } } }'), ve('$.selectionSet.author.selectionSet', "no such type exists in the schema: 'nope'"));
  });
  test('directives', async () => {
    assert.deepEqual(await err('{ author @foo { id } }'), ve('$.selectionSet.author.directives.foo', 'unexpected directive: "foo"'));
    assert.deepEqual(await err('{ author @skip { id } }'), ve('$.selectionSet.author.directives.skip.args', 'the required argument "if" is missing'));
    assert.deepEqual(
      await err('{ author @skip(if: true) @skip(if: false) { id } }'),
      ve('$.selectionSet.author.directives', 'the following directives are used more than once: "skip"'),
    );
  });
});
