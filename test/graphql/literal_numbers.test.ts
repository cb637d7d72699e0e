/**
 * Numerals written in a GraphQL document that a double would change — digits past its precision
 * (9007199254740993), or a spelling json/jsonb keep (1.50, 1.0, 1e3) — are kept as written
 * (JsonNumber): bigint and numeric parameters get the exact text, and json/jsonb values keep them as
 * numbers. Before, they were turned into strings, which bigint/numeric parsed but jsonb stored as
 * JSON strings (`{a: 1.50}` became `{"a": "1.50"}`, found by probing).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { JsonNumber, jsonText } from '../../src/json.js';
import { postGraphql, postQuery, startServerWithTables, type TestServer } from '../helpers/server.js';

describe('jsonText', () => {
  test('as JSON.stringify, but a JsonNumber as written', () => {
    const v = { a: [1, 'x', null, undefined, { b: true }], c: undefined, d: new Date(0), e: 'é"\n', f: [] as unknown[], g: {} };
    assert.equal(jsonText(v), JSON.stringify(v));
    assert.equal(jsonText({ n: new JsonNumber('1.50'), m: [new JsonNumber('9007199254740993')] }), '{"n":1.50,"m":[9007199254740993]}');
    assert.equal(JSON.stringify({ n: new JsonNumber('1.50') }), '{"n":1.5}', 'elsewhere: the nearest double, as a number');
  });
});

describe('numerals of a document', () => {
  let s: TestServer;
  before(async () => {
    s = await startServerWithTables('create table lit_num (id serial primary key, j jsonb, n numeric, b bigint)', ['lit_num']);
  });
  after(async () => {
    await s?.close();
  });
  const sql = async (text: string): Promise<string[][]> => {
    const r = await postQuery(s.url, { type: 'run_sql', args: { sql: text } });
    assert.equal(r.status, 200, r.text);
    return r.body.result.slice(1);
  };

  test('jsonb keeps numbers as numbers (and their digits); bigint and numeric take the exact text', async () => {
    const r = await postGraphql(s.url, {
      query:
        'mutation { insert_lit_num_one(object: {j: {a: 1.0, b: 1.50, c: 1e3, d: 9007199254740993, e: 5, f: [2.50, {g: 12345678901234567890.5}]}, n: 12345678901234567890.123456789, b: 9007199254740993}) { id } }',
    });
    assert.equal(r.status, 200, r.text);
    assert.ok(r.body.data?.insert_lit_num_one?.id, r.text);
    const rows = await sql(
      "select jsonb_typeof(j->'a'), jsonb_typeof(j->'b'), j->>'b', j->>'c', j->>'d', j#>>'{f,0}', j#>>'{f,1,g}', n::text, b::text from lit_num",
    );
    assert.deepEqual(rows, [
      ['number', 'number', '1.50', '1000', '9007199254740993', '2.50', '12345678901234567890.5', '12345678901234567890.123456789', '9007199254740993'],
    ]);
  });

  test('filters: a jsonb literal compares as numbers; a bigint literal compares exactly', async () => {
    const hit = await postGraphql(s.url, { query: '{ lit_num(where: {j: {_contains: {a: 1, b: 1.5}}, b: {_eq: 9007199254740993}}) { b } }' });
    assert.equal(hit.status, 200, hit.text);
    assert.equal(hit.body.data.lit_num.length, 1, hit.text);
    const near = await postGraphql(s.url, { query: '{ lit_num(where: {b: {_eq: 9007199254740992}}) { id } }' });
    assert.deepEqual(near.body, { data: { lit_num: [] } }, 'the neighbouring double is another value');
    const asString = await postGraphql(s.url, { query: '{ lit_num(where: {j: {_contains: {b: "1.50"}}}) { id } }' });
    assert.deepEqual(asString.body, { data: { lit_num: [] } }, 'stored as a number, not as the string "1.50"');
  });

  test('a bigint literal past its range: parse-failed naming the value as written', async () => {
    const r = await postGraphql(s.url, { query: '{ lit_num(where: {b: {_eq: 9223372036854775808}}) { id } }' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.errors?.[0]?.extensions?.code, 'parse-failed', r.text);
    assert.match(r.body.errors[0].message, /9223372036854775808 lies outside the bounds/);
    const max = await postGraphql(s.url, { query: '{ lit_num(where: {b: {_eq: 9223372036854775807}}) { id } }' });
    assert.deepEqual(max.body, { data: { lit_num: [] } }, max.text);
  });
});
