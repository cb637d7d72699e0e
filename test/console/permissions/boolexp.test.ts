/** The visual row-permission builder's tree (console/src/permissions/boolexp.ts): JSON → tree → JSON. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fromJson, operandValue, operatorsFor, toJson, updateAt, type Cond } from '../../../console/src/permissions/boolexp.ts';
import { checkBoolExp, type TableContext, type TableLookup } from '../../../console/src/permissions/validate.ts';

const article: TableContext = {
  columns: [
    { name: 'id', type: 'integer' },
    { name: 'title', type: 'text' },
    { name: 'author_id', type: 'integer' },
    { name: 'meta', type: 'jsonb' },
    { name: 'rating', type: 'numeric' },
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
const lookup: TableLookup = (t) => (t.name === 'author' ? author : t.name === 'article' ? article : undefined);
const roundTrip = (exp: Record<string, unknown>) => toJson(fromJson(exp, article, lookup), article, lookup);

describe('row-permission builder', () => {
  test('expressions survive the round trip through the tree', () => {
    for (const exp of [
      {},
      { author_id: { _eq: 'X-Svc-User-Id' } },
      { id: { _gt: 1, _lt: 9 }, title: { _ilike: '%a%' } },
      { _or: [{ author_id: { _eq: 'X-Svc-User-Id' } }, { author: { name: { _eq: 'public' } } }] },
      { _not: { id: { _in: [1, 2, 3] } } },
      { _exists: { _table: { schema: 'public', name: 'author' }, _where: { id: { _eq: 'X-Svc-User-Id' } } } },
      { author_id: { _ceq: 'id' }, meta: { _contains: { a: 1 } }, rating: { _is_null: false } },
      { _and: [{ _or: [{ id: { _eq: 1 } }, { id: { _eq: 2 } }] }, { _or: [{ title: { _eq: 'x' } }, { title: { _eq: 'y' } }] }] },
    ]) {
      assert.deepEqual(roundTrip(exp), exp, JSON.stringify(exp));
      assert.deepEqual(checkBoolExp(roundTrip(exp), article, lookup), []);
    }
  });

  test('the tree of a nested expression', () => {
    const t = fromJson({ _or: [{ author_id: { _eq: 'X-Svc-User-Id' } }, { author: { name: { _in: ['a', 'b, c'] } } }] }, article, lookup);
    assert.deepEqual(t, {
      kind: 'group',
      op: '_or',
      children: [
        { kind: 'column', column: 'author_id', op: '_eq', operand: { kind: 'session', name: 'X-Svc-User-Id' } },
        {
          kind: 'rel',
          name: 'author',
          where: { kind: 'group', op: '_and', children: [{ kind: 'column', column: 'name', op: '_in', operand: { kind: 'value', text: 'a, "b, c"' } }] },
        },
      ],
    });
    assert.deepEqual(toJson(t, article, lookup), { _or: [{ author_id: { _eq: 'X-Svc-User-Id' } }, { author: { name: { _in: ['a', 'b, c'] } } }] });
  });

  test('shorthand equality and unknown keys: kept (unknown keys as JSON nodes)', () => {
    assert.deepEqual(roundTrip({ id: 3 }), { id: { _eq: 3 } });
    const t = fromJson({ nope: { _eq: 1 }, id: { _eq: 2 } }, article, lookup);
    assert.deepEqual(t.kind === 'group' && t.children[0], { kind: 'json', text: '{"nope":{"_eq":1}}' });
    assert.deepEqual(toJson(t, article, lookup), { nope: { _eq: 1 }, id: { _eq: 2 } });
  });

  test('operands are typed by column: numbers, lists, booleans; text that is not one stays text (the checks name it)', () => {
    assert.equal(operandValue('_eq', '42', 'integer'), 42);
    assert.equal(operandValue('_eq', '4x', 'integer'), '4x');
    assert.equal(operandValue('_eq', '42', 'text'), '42');
    assert.deepEqual(operandValue('_in', '1, 2,3', 'integer'), [1, 2, 3]);
    assert.deepEqual(operandValue('_in', '[1, 2]', 'integer'), [1, 2]);
    assert.equal(operandValue('_is_null', 'false', 'integer'), false);
    assert.deepEqual(operandValue('_has_keys_any', 'a, b', 'jsonb'), ['a', 'b']);
    assert.equal(operandValue('_like', '%1%', 'text'), '%1%');
  });

  test('editing the tree: set, add and remove conditions by path', () => {
    let t: Cond = fromJson({ _or: [{ id: { _eq: 1 } }, { _not: { title: { _eq: 'x' } } }] }, article, lookup);
    t = updateAt(t, [1, 0, 0], (c) => (c.kind === 'column' ? { ...c, operand: { kind: 'session', name: 'X-Svc-Title' } } : c));
    assert.deepEqual(toJson(t, article, lookup), { _or: [{ id: { _eq: 1 } }, { _not: { title: { _eq: 'X-Svc-Title' } } }] });
    t = updateAt(t, [0], () => null);
    assert.deepEqual(toJson(t, article, lookup), { _or: [{ _not: { title: { _eq: 'X-Svc-Title' } } }] });
    t = updateAt(t, [], (c) =>
      c.kind === 'group' ? { ...c, children: [...c.children, { kind: 'column', column: 'id', op: '_gte', operand: { kind: 'value', text: '5' } }] } : c,
    );
    assert.deepEqual(toJson(t, article, lookup), { _or: [{ _not: { title: { _eq: 'X-Svc-Title' } } }, { id: { _gte: 5 } }] });
  });

  test('operators by type: text patterns for text, JSON operators for jsonb, column comparisons for all', () => {
    const ops = (type: string) => operatorsFor(type).map((o) => o.op);
    assert.ok(ops('text').includes('_ilike') && !ops('integer').includes('_ilike'));
    assert.ok(ops('jsonb').includes('_contains') && !ops('text').includes('_contains'));
    assert.ok(ops('integer').includes('_ceq'));
  });
});
