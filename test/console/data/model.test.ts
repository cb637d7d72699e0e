/** Pure helpers of the console's Data page (console/src/data/model.ts). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { rowIdentity, suggestRelationships, valueForColumn, type Metadata, type TableInfo } from '../../../console/src/data/model.ts';

const col = (name: string, type = 'integer') => ({ name, type, nullable: true, default: null });
const author: TableInfo = { schema: 'public', name: 'author', kind: 'r', columns: [col('id'), col('name', 'text')], primary_key: ['id'], foreign_keys: [] };
const article: TableInfo = {
  schema: 'public',
  name: 'article',
  kind: 'r',
  columns: [col('id'), col('author_id'), col('editor_id')],
  primary_key: ['id'],
  foreign_keys: [
    { name: 'article_author_id_fkey', columns: ['author_id'], ref_schema: 'public', ref_table: 'author', ref_columns: ['id'] },
    { name: 'article_editor_id_fkey', columns: ['editor_id'], ref_schema: 'public', ref_table: 'author', ref_columns: ['id'] },
  ],
};
const tracked = (...names: string[]): Metadata => ({ version: 2, tables: names.map((name) => ({ table: { schema: 'public', name } })) });

describe('suggested relationships', () => {
  test('one object and one array relationship per foreign key, with names that do not clash', () => {
    const s = suggestRelationships([author, article], tracked('author', 'article'));
    assert.deepEqual(
      s.map((r) => `${r.kind} ${r.table.name}.${r.name}`),
      ['object article.author', 'array author.articles', 'object article.editor', 'array author.articles_by_editor_id'],
    );
    assert.deepEqual(s[0]!.op, {
      type: 'create_object_relationship',
      args: { table: { schema: 'public', name: 'article' }, name: 'author', using: { foreign_key_constraint_on: 'author_id' } },
    });
    assert.deepEqual(s[1]!.op, {
      type: 'create_array_relationship',
      args: {
        table: { schema: 'public', name: 'author' },
        name: 'articles',
        using: { foreign_key_constraint_on: { table: { schema: 'public', name: 'article' }, column: 'author_id' } },
      },
    });
  });

  test('nothing for untracked tables or foreign keys already used by a relationship', () => {
    assert.deepEqual(suggestRelationships([author, article], tracked('article')), []);
    const md = tracked('author', 'article');
    md.tables[1]!.object_relationships = [{ name: 'writer', using: { foreign_key_constraint_on: 'author_id' } }];
    md.tables[0]!.array_relationships = [{ name: 'articles', using: { foreign_key_constraint_on: { table: 'article', column: 'author_id' } } }];
    assert.deepEqual(
      suggestRelationships([author, article], md).map((r) => r.name),
      ['editor', 'articles_by_editor_id'],
    );
  });

  test('multi-column foreign keys use a manual configuration', () => {
    const child: TableInfo = {
      ...article,
      foreign_keys: [{ name: 'fk', columns: ['a', 'b'], ref_schema: 'public', ref_table: 'author', ref_columns: ['x', 'y'] }],
    };
    const [obj, arr] = suggestRelationships([author, child], tracked('author', 'article'));
    assert.deepEqual((obj!.op.args as any).using, {
      manual_configuration: { remote_table: { schema: 'public', name: 'author' }, column_mapping: { a: 'x', b: 'y' } },
    });
    assert.deepEqual((arr!.op.args as any).using, {
      manual_configuration: { remote_table: { schema: 'public', name: 'article' }, column_mapping: { x: 'a', y: 'b' } },
    });
  });
});

describe('values typed into row forms', () => {
  test('by column type', () => {
    assert.equal(valueForColumn('integer', ' 42 '), 42);
    assert.equal(valueForColumn('bigint', '9007199254740993'), '9007199254740993');
    assert.equal(valueForColumn('numeric(10,2)', '1.50'), '1.50'); // exact: PostgreSQL casts the text
    assert.equal(valueForColumn('double precision', '1.50'), 1.5);
    assert.equal(valueForColumn('boolean', 'f'), false);
    assert.deepEqual(valueForColumn('jsonb', '{"a":[1]}'), { a: [1] });
    assert.deepEqual(valueForColumn('integer[]', '[1,2]'), [1, 2]);
    assert.equal(valueForColumn('text', ' spaced '), ' spaced ');
    assert.equal(valueForColumn('timestamp with time zone', '2020-01-01'), '2020-01-01');
    assert.throws(() => valueForColumn('integer', 'x'), /not a number/);
    assert.throws(() => valueForColumn('boolean', 'maybe'), /not a boolean/);
    assert.throws(() => valueForColumn('json', '{'), /not JSON/);
  });

  test('a row is identified by its primary key, else by its non-json columns', () => {
    assert.deepEqual(rowIdentity(article, { id: 3, author_id: 1, editor_id: null }), { id: { _eq: 3 } });
    const nopk: TableInfo = { ...article, primary_key: [], columns: [col('a'), col('b', 'text'), col('j', 'jsonb')] };
    assert.deepEqual(rowIdentity(nopk, { a: 1, b: null, j: {} }), { a: { _eq: 1 }, b: { _is_null: true } });
  });
});

describe('row browser conditions', () => {
  test('typed by column, lists split on commas, all conditions must hold', async () => {
    const { filtersWhere } = await import('../../../console/src/data/model.ts');
    const cols = [col('id'), col('name', 'text')];
    assert.deepEqual(filtersWhere([], cols), {});
    assert.deepEqual(filtersWhere([{ column: 'id', op: '_gt', value: '3' }], cols), { id: { _gt: 3 } });
    assert.deepEqual(
      filtersWhere(
        [
          { column: 'id', op: '_in', value: '1, 2,' },
          { column: 'name', op: '_ilike', value: '%a%' },
          { column: '', op: '_eq', value: '' },
        ],
        cols,
      ),
      { _and: [{ id: { _in: [1, 2] } }, { name: { _ilike: '%a%' } }] },
    );
    assert.deepEqual(filtersWhere([{ column: 'name', op: '_is_null', value: '' }], cols), { name: { _is_null: true } });
    assert.throws(() => filtersWhere([{ column: 'id', op: '_eq', value: 'x' }], cols), /condition 1 \(id\): not a number/);
  });
});

describe('remote relationship field', () => {
  test('a path with arguments on its last field; $column joins, JSON values parsed, other text kept', async () => {
    const { remoteFieldOf } = await import('../../../console/src/data/model.ts');
    assert.deepEqual(
      remoteFieldOf('user', [
        { name: 'id', value: '$author_id' },
        { name: 'limit', value: '2' },
        { name: 'tag', value: 'a b' },
        { name: '', value: 'x' },
      ]),
      {
        user: { arguments: { id: '$author_id', limit: 2, tag: 'a b' } },
      },
    );
    assert.deepEqual(remoteFieldOf(' shop . product ', [{ name: 'sku', value: '$sku' }]), {
      shop: { arguments: {}, field: { product: { arguments: { sku: '$sku' } } } },
    });
  });
});
