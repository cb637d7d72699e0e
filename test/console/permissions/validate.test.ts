/** The permission form's checks (console/src/permissions/validate.ts): pure functions, no browser. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  accessLevel,
  buildPermission,
  checkBoolExp,
  checkBoolExpText,
  checkLimit,
  checkPresets,
  formOf,
  type TableContext,
  type TableLookup,
} from '../../../console/src/permissions/validate.ts';

const article: TableContext = {
  columns: [
    { name: 'id', type: 'integer' },
    { name: 'title', type: 'text' },
    { name: 'author_id', type: 'integer' },
    { name: 'published', type: 'boolean' },
    { name: 'meta', type: 'jsonb' },
  ],
  relationships: { author: { schema: 'public', name: 'author' } },
};
const author: TableContext = {
  columns: [
    { name: 'id', type: 'integer' },
    { name: 'name', type: 'text' },
  ],
  relationships: {},
};
const lookup: TableLookup = (t) => (t.schema === 'public' && t.name === 'author' ? author : t.name === 'article' ? article : undefined);
const paths = (ps: Array<{ path: string }>) => ps.map((p) => p.path);

describe('row filter JSON', () => {
  test('empty text and {} mean no restriction', () => {
    assert.deepEqual(checkBoolExpText('', article, lookup), { value: {}, problems: [] });
    assert.deepEqual(checkBoolExpText('  {} ', article, lookup), { value: {}, problems: [] });
  });

  test('valid expressions: columns, session variables, relationships, _and/_or/_not/_exists, $-operators, shorthand', () => {
    const text = JSON.stringify({
      _and: [
        { author_id: { _eq: 'X-Svc-User-Id' } },
        { _or: [{ published: { _eq: true } }, { author: { name: { _ilike: '%a%' } } }] },
        { _not: { id: { $in: [1, 2, 3] } } },
        { _exists: { _table: { schema: 'public', name: 'author' }, _where: { id: { _eq: 'x-svc-user-id' } } } },
        { title: 'exact' },
        { meta: { _has_keys_any: ['a', 'b'] } },
        { id: { _cgt: 'author_id' } },
        { title: { _is_null: false } },
      ],
    });
    const r = checkBoolExpText(text, article, lookup);
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.value, JSON.parse(text));
  });

  test('JSON syntax errors say where', () => {
    const r = checkBoolExpText('{\n  "id": {"_eq": 1},\n}', article, lookup);
    assert.equal(r.value, undefined);
    assert.equal(r.problems.length, 1);
    assert.equal(r.problems[0]!.path, '$');
    assert.match(r.problems[0]!.message, /^not valid JSON/);
    assert.match(r.problems[0]!.message, /line 3/);
  });

  test('the top level and every operand of _and/_or must be objects', () => {
    assert.deepEqual(paths(checkBoolExpText('[]', article, lookup).problems), ['$']);
    assert.deepEqual(paths(checkBoolExp({ _and: {} }, article, lookup)), ['$._and']);
    assert.deepEqual(paths(checkBoolExp({ _or: [{}, 3] }, article, lookup)), ['$._or[1]']);
  });

  test('unknown columns, relationships and operators are named with their path', () => {
    const ps = checkBoolExp({ _and: [{ nope: { _eq: 1 } }, { id: { _equals: 1 } }, { _where: {} }, { author: { age: { _gt: 3 } } }] }, article, lookup);
    assert.deepEqual(paths(ps), ['$._and[0].nope', '$._and[1].id._equals', '$._and[2]._where', '$._and[3].author.age']);
    assert.match(ps[0]!.message, /no column or relationship named "nope"/);
    assert.match(ps[1]!.message, /unknown operator _equals/);
  });

  test('operands must fit the operator and the column type', () => {
    const ps = checkBoolExp(
      {
        _and: [
          { id: { _in: 5 } },
          { id: { _eq: 'five' } },
          { title: { _like: 3 } },
          { published: { _is_null: 'yes' } },
          { id: { _ceq: 'missing' } },
          { meta: { _has_keys_all: [1] } },
          { id: { _eq: null } },
          { id: { _eq: { a: 1 } } },
        ],
      },
      article,
      lookup,
    );
    assert.deepEqual(paths(ps), [
      '$._and[0].id._in',
      '$._and[1].id._eq',
      '$._and[2].title._like',
      '$._and[3].published._is_null',
      '$._and[4].id._ceq',
      '$._and[5].meta._has_keys_all',
      '$._and[6].id._eq',
      '$._and[7].id._eq',
    ]);
    assert.match(ps[1]!.message, /expected a number/);
    assert.match(ps[6]!.message, /_is_null/);
  });

  test('session variables are accepted wherever a value is', () => {
    assert.deepEqual(checkBoolExp({ id: { _in: 'X-Svc-Allowed-Ids' }, author_id: { _gt: 'x-svc-user-id' } }, article, lookup), []);
  });

  test('_exists needs a tracked table; relationships to untracked tables are reported', () => {
    assert.deepEqual(paths(checkBoolExp({ _exists: { _table: 'ghost', _where: {} } }, article, lookup)), ['$._exists._table']);
    assert.deepEqual(paths(checkBoolExp({ _exists: { _where: {} } }, article, lookup)), ['$._exists']);
    const orphan: TableContext = { columns: [], relationships: { gone: { schema: 'public', name: 'ghost' } } };
    assert.match(checkBoolExp({ gone: {} }, orphan, lookup)[0]!.message, /not tracked/);
  });
});

describe('presets and limit', () => {
  test('presets get their column type; session variables stay strings', () => {
    const r = checkPresets(
      [
        { column: 'author_id', value: 'X-Svc-User-Id' },
        { column: 'published', value: 'true' },
        { column: 'id', value: '7' },
        { column: '', value: '' },
      ],
      article.columns,
    );
    assert.deepEqual(r, { value: { author_id: 'X-Svc-User-Id', published: true, id: 7 }, problems: [] });
  });

  test('bad presets: unknown column, duplicate, value of the wrong type', () => {
    const r = checkPresets(
      [
        { column: 'nope', value: '1' },
        { column: 'id', value: '1' },
        { column: 'id', value: '2' },
        { column: 'author_id', value: 'abc' },
      ],
      article.columns,
    );
    assert.deepEqual(paths(r.problems), ['$.set[0]', '$.set[2]', '$.set[3]']);
  });

  test('limit: empty or a positive whole number', () => {
    assert.deepEqual(checkLimit(''), { value: null, problems: [] });
    assert.deepEqual(checkLimit(' 25 '), { value: 25, problems: [] });
    for (const bad of ['0', '-1', '2.5', 'ten', '1e3']) assert.equal(checkLimit(bad).problems.length, 1, bad);
  });
});

describe('the permission built from the form', () => {
  const all = article.columns.map((c) => c.name);

  test('select: columns in table order, filter, limit, aggregations', () => {
    const form = {
      ...formOf('select', undefined, all),
      columns: ['title', 'id'],
      filter: '{"author_id":{"_eq":"X-Svc-User-Id"}}',
      limit: '10',
      allowAggregations: true,
    };
    assert.deepEqual(buildPermission('select', form, article, lookup), {
      permission: { columns: ['id', 'title'], filter: { author_id: { _eq: 'X-Svc-User-Id' } }, allow_aggregations: true, limit: 10 },
      problems: [],
    });
  });

  test('insert: check, presets, backend_only', () => {
    const form = { ...formOf('insert', undefined, all), columns: ['title'], presets: [{ column: 'author_id', value: 'X-Svc-User-Id' }], backendOnly: true };
    assert.deepEqual(buildPermission('insert', form, article, lookup).permission, {
      check: {},
      columns: ['title'],
      set: { author_id: 'X-Svc-User-Id' },
      backend_only: true,
    });
  });

  test('update: filter, optional check; delete: filter only', () => {
    const form = { ...formOf('update', undefined, all), columns: ['title'], filter: '{"id":{"_gt":0}}', check: '{"title":{"_neq":""}}' };
    assert.deepEqual(buildPermission('update', form, article, lookup).permission, {
      columns: ['title'],
      filter: { id: { _gt: 0 } },
      set: {},
      check: { title: { _neq: '' } },
    });
    assert.deepEqual(buildPermission('delete', formOf('delete', undefined, all), article, lookup).permission, { filter: {} });
  });

  test('problems of every field are collected, with the field in the path, and no permission is built', () => {
    const form = { ...formOf('select', undefined, all), columns: [], filter: '{"nope":{}}', limit: 'x' };
    const r = buildPermission('select', form, article, lookup);
    assert.equal(r.permission, undefined);
    assert.deepEqual(paths(r.problems).sort(), ['$.columns', '$.filter.nope', '$.limit']);
  });

  test('formOf round-trips an existing permission; "*" means every column', () => {
    const perm = { columns: '*', filter: { id: { _eq: 1 } }, limit: 5, allow_aggregations: true };
    const form = formOf('select', perm, all);
    assert.deepEqual(form.columns, all);
    assert.deepEqual(buildPermission('select', form, article, lookup).permission, {
      columns: all,
      filter: { id: { _eq: 1 } },
      allow_aggregations: true,
      limit: 5,
    });
  });

  test('access level of the matrix', () => {
    assert.equal(accessLevel('select', undefined, all), 'none');
    assert.equal(accessLevel('select', { columns: '*', filter: {} }, all), 'full');
    assert.equal(accessLevel('select', { columns: all, filter: {} }, all), 'full');
    assert.equal(accessLevel('select', { columns: ['id'], filter: {} }, all), 'partial');
    assert.equal(accessLevel('select', { columns: '*', filter: {}, limit: 3 }, all), 'partial');
    assert.equal(accessLevel('insert', { check: { id: { _eq: 1 } }, columns: '*' }, all), 'partial');
    assert.equal(accessLevel('delete', { filter: {} }, all), 'full');
  });
});
