/**
 * Variables are coerced against their declared types before any SQL runs, used or not (GraphQL
 * CoerceVariableValues), and literals against their argument's type, with one message builder
 * (src/ir/messages.ts scalarMismatch; the rule: src/ir/input.ts checkScalar). A refused value is a
 * validation-failed error at the variable's path (`$.variableValues.x`), never a database error.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runGraphQL } from '../../src/execute/graphql.js';
import { emptyMetadata, fixture, table, type Fixture } from './helpers.js';

let f: Fixture;

before(async () => {
  const md = emptyMetadata();
  md.tables.push(table('thing'), table('color', { is_enum: true }));
  f = await fixture(
    `create table color (value text primary key, comment text);
     insert into color values ('red', 'Red'), ('blue', 'Blue');
     create table thing (
       id serial primary key, small smallint, big bigint, real_ float4, dbl float8, num numeric, flag boolean,
       name text, uid uuid, doc jsonb, at timestamptz, ts timestamp, day date, tm time, color text references color(value));
     insert into thing (small, big, real_, dbl, num, flag, name, uid, doc, at, ts, day, tm, color)
       values (1, 2, 1.5, 2.5, 3.25, true, 'a', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"k": 1}', '2020-01-01T00:00:00Z', '2020-01-01 10:00', '2020-01-01', '10:00', 'red');`,
    md,
  );
});
after(() => f.close());

async function run(query: string, variables?: Record<string, unknown>) {
  return JSON.parse(await runGraphQL(f.ctx(), { query, variables }));
}

/** the operation's error, asserting it is a validation error (or parse-failed) at `path` with `message` */
async function refused(query: string, variables: Record<string, unknown> | undefined, path: string, message: string | RegExp) {
  const body = await run(query, variables);
  assert.ok(body.errors, `expected an error, got ${JSON.stringify(body)}`);
  const e = body.errors[0];
  assert.equal(e.extensions.path, path, JSON.stringify(e));
  // an integer out of range keeps upstream's aeson message and code (parse-failed)
  const code = typeof message === 'string' && message.startsWith('The value ') ? 'parse-failed' : 'validation-failed';
  assert.equal(e.extensions.code, code, JSON.stringify(e));
  if (typeof message === 'string') assert.equal(e.message, message);
  else assert.match(e.message, message);
}

describe('variables are coerced against their declared type', () => {
  test('an Int! variable given a non-numeric string: a validation error naming it, before SQL', async () => {
    await refused('query ($x: Int!) { thing(where: {id: {_eq: $x}}) { id } }', { x: 'abc' }, '$.variableValues.x', 'expected Int32, encountered String "abc"');
  });

  test('an unused variable is coerced too', async () => {
    await refused('query ($x: Int!) { __typename }', { x: 'str' }, '$.variableValues.x', 'expected Int32, encountered String "str"');
    await refused('query ($x: uuid) { __typename }', { x: 'nope' }, '$.variableValues.x', 'expected UUID, encountered String "nope"');
    await refused('query ($x: Boolean) { __typename }', { x: 'true' }, '$.variableValues.x', 'expected Bool, encountered String');
  });

  const cases: Array<[string, string, unknown, string]> = [
    ['Int', 'id', 1.5, 'The value 1.5 lies outside the bounds or is not an integer.  Maybe it is a float, or is there integer overflow?'],
    ['Int', 'id', '99999999999', 'The value 99999999999 lies outside the bounds or is not an integer.  Maybe it is a float, or is there integer overflow?'],
    ['Int', 'id', true, 'expected Int32, encountered Boolean'],
    ['smallint', 'small', 40000, 'The value 40000.0 lies outside the bounds or is not an integer.  Maybe it is a float, or is there integer overflow?'],
    ['bigint', 'big', '12x', 'expected Int64, encountered String "12x"'],
    ['Float', 'real_', 'one', 'expected Float, encountered String "one"'],
    ['float8', 'dbl', [1], 'expected Double, encountered Array'],
    ['numeric', 'num', '1.2.3', 'expected Scientific, encountered String "1.2.3"'],
    ['Boolean', 'flag', 1, 'expected Bool, encountered Number'],
    ['String', 'name', 5, 'expected Text, encountered Number'],
    ['uuid', 'uid', 'a0eebc99', 'expected UUID, encountered String "a0eebc99"'],
    ['timestamptz', 'at', 'yesterday-ish', 'expected UTCTime, encountered String "yesterday-ish"'],
    ['timestamp', 'ts', 12, 'expected LocalTime, encountered Number'],
    ['date', 'day', 'soon', 'expected Day, encountered String "soon"'],
    ['time', 'tm', {}, 'expected TimeOfDay, encountered Object'],
  ];
  for (const [type, column, value, message] of cases) {
    test(`${type}: ${JSON.stringify(value)} is refused as a variable and as a literal`, async () => {
      await refused(`query ($x: ${type}) { thing(where: {${column}: {_eq: $x}}) { id } }`, { x: value }, '$.variableValues.x', message);
      // the same value written in the query (GraphQL literals exist for scalars, lists and objects only)
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
        const literal = JSON.stringify(value);
        const body = await run(`{ thing(where: {${column}: {_eq: ${literal}}}) { id } }`);
        assert.equal(body.errors?.[0]?.message, message, JSON.stringify(body));
        assert.equal(body.errors[0].extensions.path, `$.selectionSet.thing.args.where.${column}._eq`);
      }
    });
  }

  test('integer variables at and past their bounds (number and BigInt comparisons agree)', async () => {
    const msg = (shown: string) => `The value ${shown} lies outside the bounds or is not an integer.  Maybe it is a float, or is there integer overflow?`;
    const passes = async (type: string, value: unknown) => {
      const body = await run(`query ($x: ${type}) { __typename }`, { x: value });
      assert.equal(body.errors, undefined, `${type} ${JSON.stringify(value)}: ${JSON.stringify(body)}`);
    };
    for (const v of [2147483647, -2147483648, 0]) await passes('Int', v);
    for (const v of [32767, -32768]) await passes('smallint', v);
    // bigint: safe integers, and numbers beyond 2^53 that still lie inside int8
    for (const v of [9007199254740991, -9007199254740991, 9007199254740993, 9.2e18, -9.2e18]) await passes('bigint', v);
    await refused('query ($x: Int) { __typename }', { x: 2147483648 }, '$.variableValues.x', msg('2.147483648e9'));
    await refused('query ($x: Int) { __typename }', { x: -2147483649 }, '$.variableValues.x', msg('-2.147483649e9'));
    await refused('query ($x: smallint) { __typename }', { x: 32768 }, '$.variableValues.x', msg('32768.0'));
    await refused('query ($x: smallint) { __typename }', { x: -32769 }, '$.variableValues.x', msg('-32769.0'));
    await refused('query ($x: bigint) { __typename }', { x: 9.3e18 }, '$.variableValues.x', msg('9.3e18'));
  });

  test('values the database accepts pass and match', async () => {
    const ok: Array<[string, string, unknown]> = [
      ['Int', 'id', ' 1 '],
      ['Int', 'id', 1],
      ['smallint', 'small', '+1'],
      ['bigint', 'big', '2'],
      ['Float', 'real_', '1.5'],
      ['float8', 'dbl', 2.5],
      ['numeric', 'num', '3.25'],
      ['Boolean', 'flag', true],
      ['String', 'name', 'a'],
      ['uuid', 'uid', '{A0EEBC99-9C0B4EF8-BB6D6BB9-BD380A11}'],
      ['timestamptz', 'at', '2020-01-01 00:00:00+00'],
      ['timestamp', 'ts', '2020-01-01T10:00:00'],
      ['date', 'day', 'Jan 1, 2020'],
      ['time', 'tm', '10:00:00'],
    ];
    for (const [type, column, value] of ok) {
      const body = await run(`query ($x: ${type}) { thing(where: {${column}: {_eq: $x}}) { id } }`, { x: value });
      assert.deepEqual(body, { data: { thing: [{ id: 1 }] } }, `${type} ${JSON.stringify(value)}`);
    }
    assert.deepEqual(await run('query ($x: jsonb) { thing(where: {doc: {_contains: $x}}) { id } }', { x: { k: 1 } }), { data: { thing: [{ id: 1 }] } });
    assert.deepEqual(await run('query ($x: timestamptz) { thing(where: {at: {_lt: $x}}) { id } }', { x: 'now' }), { data: { thing: [{ id: 1 }] } });
  });

  test('enums, input objects, lists and nullability', async () => {
    await refused('query ($c: color_enum) { __typename }', { c: 'green' }, '$.variableValues.c', 'unexpected value "green" for enum: \'color_enum\'');
    await refused('query ($c: color_enum) { __typename }', { c: 1 }, '$.variableValues.c', 'expecting a JSON string for Enum');
    await refused(
      'query ($w: thing_bool_exp) { __typename }',
      { w: { id: { _eq: 'x' } } },
      '$.variableValues.w.id._eq',
      'expected Int32, encountered String "x"',
    );
    await refused('query ($w: thing_bool_exp) { __typename }', { w: [] }, '$.variableValues.w', 'expecting a JSON object');
    await refused(
      'query ($ids: [Int!]) { thing(where: {id: {_in: $ids}}) { id } }',
      { ids: [1, 'b'] },
      '$.variableValues.ids[1]',
      'expected Int32, encountered String "b"',
    );
    await refused('query ($ids: [Int!]) { __typename }', { ids: [1, null] }, '$.variableValues.ids[1]', 'null value found for non-nullable type: Int!');
    await refused('query ($x: Int!) { __typename }', { x: null }, '$.variableValues.x', 'null value found for non-nullable type: Int!');
    assert.deepEqual(
      await run('query ($c: color_enum, $ids: [Int!]) { thing(where: {color: {_eq: $c}, id: {_in: $ids}}) { id } }', { c: 'red', ids: [1, '2'] }),
      { data: { thing: [{ id: 1 }] } },
    );
  });
});

describe("graphql-js 16's introspection query", () => {
  test('getIntrospectionQuery with every option answers, and builds a client schema', async () => {
    const { buildClientSchema, getIntrospectionQuery } = await import('graphql');
    const query = getIntrospectionQuery({
      oneOf: true,
      specifiedByUrl: true,
      inputValueDeprecation: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      descriptions: true,
    });
    const body = await run(query);
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    const s = body.data.__schema;
    assert.equal(s.description, null);
    const boolExp = s.types.find((t: { name: string }) => t.name === 'thing_bool_exp');
    assert.equal(boolExp.isOneOf, false);
    assert.ok(
      boolExp.inputFields.every((f: { isDeprecated: boolean; deprecationReason: unknown }) => f.isDeprecated === false && f.deprecationReason === null),
    );
    const obj = s.types.find((t: { name: string }) => t.name === 'thing');
    assert.equal(obj.isOneOf, null);
    assert.equal(obj.specifiedByURL, null);
    const field = s.types.find((t: { name: string }) => t.name === 'query_root').fields.find((x: { name: string }) => x.name === 'thing');
    assert.ok(field.args.every((a: { isDeprecated: boolean }) => a.isDeprecated === false));
    assert.deepEqual(
      s.directives.map((d: { name: string; isRepeatable: boolean }) => [d.name, d.isRepeatable]),
      [
        ['include', false],
        ['skip', false],
        ['cached', false],
      ],
    );
    const schema = buildClientSchema(body.data);
    assert.ok(schema.getType('thing_bool_exp'));
  });
});
