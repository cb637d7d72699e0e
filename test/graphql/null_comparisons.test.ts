/**
 * A comparison with null is dropped, as upstream v1.3 documents (reference
 * queries/query-filters.rst, null_value_evaluation: `{ where: { _eq: null } }` is reduced to
 * `{ where: {} }`): a literal null and a variable that is null alike. Before, Svc compared with
 * NULL (no row matched; found by probing). A plan is for a null or for a value of a nullable
 * variable, never reused for the other: the answers do not depend on which request came first.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postGraphql, startServerWithTables, type TestServer } from '../helpers/server.js';

describe('comparisons with null', () => {
  let s: TestServer;
  before(async () => {
    s = await startServerWithTables("create table nc_item (id int primary key, name text); insert into nc_item values (1, 'a'), (2, 'b'), (3, null)", [
      'nc_item',
    ]);
  });
  after(async () => {
    await s?.close();
  });
  const ids = async (query: string, variables?: Record<string, unknown>): Promise<number[]> => {
    const r = await postGraphql(s.url, { query, variables });
    assert.equal(r.status, 200, r.text);
    assert.ok(r.body.data, r.text);
    return (r.body.data.nc_item as Array<{ id: number }>).map((x) => x.id);
  };

  test('a literal null drops the comparison (and only it)', async () => {
    assert.deepEqual(await ids('{ nc_item(order_by: {id: asc}, where: {id: {_eq: null}}) { id } }'), [1, 2, 3]);
    assert.deepEqual(await ids('{ nc_item(order_by: {id: asc}, where: {id: {_gt: null, _lt: 3}}) { id } }'), [1, 2]);
    assert.deepEqual(await ids('{ nc_item(order_by: {id: asc}, where: {name: {_neq: null, _like: "%"}}) { id } }'), [1, 2]);
    assert.deepEqual(await ids('{ nc_item(order_by: {id: asc}, where: {name: {_is_null: true}}) { id } }'), [3], '_is_null is the way to ask for nulls');
  });

  test('a variable that is null drops it too, whichever request came first', async () => {
    const q = 'query($id: Int) { nc_item(order_by: {id: asc}, where: {id: {_eq: $id}}) { id } }';
    assert.deepEqual(await ids(q, { id: 2 }), [2]);
    assert.deepEqual(await ids(q, { id: null }), [1, 2, 3]);
    assert.deepEqual(await ids(q, {}), [1, 2, 3]);
    assert.deepEqual(await ids(q, { id: 1 }), [1]);
    const q2 = 'query($id: Int) { nc_item(order_by: {id: asc}, where: {id: {_gte: $id}}) { id } }';
    assert.deepEqual(await ids(q2, { id: null }), [1, 2, 3]);
    assert.deepEqual(await ids(q2, { id: 3 }), [3]);
    assert.deepEqual(await ids(q2, { id: null }), [1, 2, 3]);
  });
});
