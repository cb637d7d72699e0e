/**
 * A permission's filter/check is parsed to IR once, at schema build: the model carries the IR that
 * requests use, the dependencies are read off it (columns, relationships and computed fields at
 * any depth, tables reached through relationships and `_exists`, columns compared with literals),
 * and an expression the builder rejects makes the permission inconsistent at build time.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Metadata } from '../../src/model/metadata.js';
import { permissionExpUses } from '../../src/permissions/filter.js';
import type { SchemaCache } from '../../src/schema/model.js';
import { blogCache } from '../sql/fake.js';

function withArticlePermission(permission: Record<string, unknown>, kind: 'select' | 'update' = 'select'): SchemaCache {
  return blogCache((md: Metadata) => {
    const article = md.tables.find((t) => t.table.name === 'article')!;
    if (kind === 'select') article.select_permissions = [{ role: 'editor', permission: permission as never }];
    else article.update_permissions = [{ role: 'editor', permission: permission as never }];
  });
}

const depsOf = (cache: SchemaCache, dependent: string) =>
  cache.dependencies
    .filter((d) => d.dependent === dependent)
    .map(
      (d) =>
        `${d.on.kind}:${'column' in d.on ? `${d.on.table.name}.${d.on.column}` : 'name' in d.on ? `${(d.on as { table: { name: string } }).table.name}.${d.on.name}` : (d.on as { table: { name: string } }).table.name}${d.onType ? ' (type)' : ''}`,
    )
    .sort();

test('the IR is on the model; dependencies come from it', () => {
  const filter = {
    _and: [
      { author_id: 'X-Svc-User-Id' },
      { title: { _ilike: '%news%' } },
      { author: { name: { _eq: 'Ada' }, rating: { _gt: 'x-svc-min' } } },
      { _exists: { _table: 'author', _where: { rating: { _eq: 5 } } } },
      { id: { _ceq: 'author_id' } },
    ],
  };
  const cache = withArticlePermission({ columns: ['id'], filter });
  assert.deepEqual(cache.inconsistent, []);
  const perm = cache.tables.get('public.article')!.permissions.get('editor')!.select!;
  assert.equal(perm.filterExp.kind, 'and');
  assert.deepEqual(depsOf(cache, 'permission article.editor.select'), [
    'column:article.author_id',
    'column:article.id',
    'column:article.title',
    'column:article.title (type)',
    'column:author.name',
    'column:author.name (type)',
    'column:author.rating',
    'column:author.rating',
    'relationship:article.author',
    'relationship:article.author',
    'table:author',
    'table:author',
  ]);
});

test('permissionExpUses: literal columns, not session variables, is_null or column comparisons', () => {
  const cache = withArticlePermission({
    columns: ['id'],
    filter: { author_id: 'x-svc-user-id', is_published: { _is_null: false }, id: { _cgt: 'author_id' }, title: { _in: ['a', 'x-svc-t'] } },
  });
  const table = cache.tables.get('public.article')!;
  const uses = permissionExpUses(table.permissions.get('editor')!.select!.filterExp, table);
  assert.deepEqual(
    uses.literalColumns.map((c) => c.column),
    ['title'],
  );
  assert.deepEqual([...uses.columns].sort(), ['author_id', 'id', 'is_published', 'title']);
});

test('update permission: filter and check both parsed; check null stays null', () => {
  const cache = withArticlePermission({ columns: ['title'], filter: { author_id: 'X-Svc-User-Id' }, check: { title: { _neq: '' } } }, 'update');
  const upd = cache.tables.get('public.article')!.permissions.get('editor')!.update!;
  assert.equal(upd.filterExp.kind, 'column');
  assert.equal(upd.checkExp?.kind, 'column');
  const noCheck = withArticlePermission({ columns: ['title'], filter: {} }, 'update')
    .tables.get('public.article')!
    .permissions.get('editor')!.update!;
  assert.equal(noCheck.checkExp, null);
  assert.deepEqual(noCheck.filterExp, { kind: 'and', items: [] });
});

for (const [name, filter, reason] of [
  ['unknown operator', { title: { _like_ish: 'x' } }, 'Unknown operator : _like_ish'],
  ['_is_null not a boolean', { title: { _is_null: 'yes' } }, 'expected Bool'],
  ['_exists on a missing table', { _exists: { _table: { schema: 'other', name: 'nope' }, _where: {} } }, 'table "other.nope" does not exist'],
  ['_exists not an object', { _exists: 3 }, 'expecting an object for _exists'],
  ['missing column', { nope: { _eq: 1 } }, '"nope" does not exist'],
] as const) {
  test(`an invalid expression is inconsistent at build: ${name}`, () => {
    const cache = withArticlePermission({ columns: ['id'], filter });
    assert.equal(cache.inconsistent.length, 1);
    assert.match(cache.inconsistent[0]!.reason, new RegExp(reason.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    assert.equal(cache.tables.get('public.article')!.permissions.get('editor'), undefined);
  });
}
