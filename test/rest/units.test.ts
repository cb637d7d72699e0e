/** REST endpoints without a server: reading parameter text by variable type, and the router. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse, type OperationDefinitionNode } from 'graphql';
import { matchRest, resolveRestEndpoints } from '../../src/rest/endpoints.js';
import { restVariables } from '../../src/rest/variables.js';
import { emptyMetadata } from '../../src/model/metadata.js';
import type { InconsistentObject } from '../../src/model/tables.js';

const op = (q: string) => parse(q).definitions[0] as OperationDefinitionNode;

test('parameter text is read by the declared type', () => {
  const o = op(
    'query ($b: Boolean, $c: Boolean!, $i: Int, $f: float8!, $big: bigint!, $j: jsonb, $s: String, $n: String, $l: [Int!], $e: order_by, $bad: Int) { x }',
  );
  const v = restVariables(
    o,
    {
      path: { big: '9007199254740993' },
      query: [
        ['b', ''],
        ['c', 'false'],
        ['i', '-12'],
        ['f', '1.5e3'],
        ['j', '{"a":[1]}'],
        ['s', '007'],
        ['n', ''],
        ['l', '[1,2]'],
        ['e', 'asc'],
        ['bad', '1.5'],
      ],
    },
    10,
  );
  assert.deepEqual(v, { big: '9007199254740993', b: true, c: false, i: -12, f: 1500, j: { a: [1] }, s: '007', n: null, l: [1, 2], e: 'asc', bad: '1.5' });
  // a body's values pass as they are
  assert.deepEqual(restVariables(o, { path: {}, query: [], body: { i: '3', j: [1] } }, 10), { i: '3', j: [1] });
  assert.throws(() => restVariables(o, { path: {}, query: [['zz', '1']] }, 10), /Unexpected variable zz/);
  assert.throws(() => restVariables(o, { path: {}, query: [['i', '1']], body: { i: 2 } }, 10), /variable i is given more than once/);
  assert.throws(() => restVariables(o, { path: {}, query: [['j', '{']] }, 10), /variable j is not valid JSON/);
  assert.throws(() => restVariables(o, { path: {}, query: [['j', '[[[[1]]]]']] }, 3), /nested deeper than 3 levels/);
});

test('the router: literal and variable segments, methods, ambiguity refused at build', () => {
  const md = emptyMetadata();
  md.query_collections = [{ name: 'c', definition: { queries: [{ name: 'q', query: 'query ($id: Int!, $x: Int) { a }' }] } }];
  const ep = (name: string, url: string, methods: string[]) => ({ name, url, methods, definition: { query: { collection_name: 'c', query_name: 'q' } } });
  md.rest_endpoints = [ep('one', 'a/:id', ['GET']), ep('two', 'a/:id', ['POST']), ep('three', 'a/top', ['GET']), ep('four', 'a/:id/b/:x', ['GET'])];
  const inconsistent: InconsistentObject[] = [];
  const r = resolveRestEndpoints(md, inconsistent);
  assert.deepEqual(
    inconsistent.map((o) => o.reason),
    ['Ambiguous URL paths: a/:id, a/top'],
  );
  assert.deepEqual(
    r.endpoints.map((e) => e.name),
    ['one', 'two', 'four'],
  );
  const m = matchRest(r, ['a', '5'], 'POST');
  assert.equal(m.kind, 'found');
  assert.equal(m.kind === 'found' && m.endpoint.name, 'two');
  assert.deepEqual(m.kind === 'found' && m.params, { id: '5' });
  assert.deepEqual(matchRest(r, ['a', '5'], 'PATCH'), { kind: 'method', allowed: ['GET', 'POST'] });
  assert.deepEqual(matchRest(r, ['a', '5', 'b', '6'], 'GET').kind, 'found');
  assert.deepEqual(matchRest(r, ['a', '5', 'c', '6'], 'GET'), { kind: 'none' });
  assert.deepEqual(matchRest(r, ['b'], 'GET'), { kind: 'none' });
});
