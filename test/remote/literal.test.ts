/**
 * Join values from the database become GraphQL literals in the remote document: they are never
 * spliced as syntax (enum values only when they are names, object keys only when they are names).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseValue, type IntrospectionInputTypeRef, type IntrospectionType } from 'graphql';
import { graphqlLiteral } from '../../src/remote/execute.js';
import type { RemoteSchemaModel } from '../../src/model/remote.js';

const types = new Map<string, IntrospectionType>([
  ['Tone', { kind: 'ENUM', name: 'Tone', description: null, enumValues: [{ name: 'HAPPY', description: null, isDeprecated: false, deprecationReason: null }] }],
  [
    'Where',
    {
      kind: 'INPUT_OBJECT',
      name: 'Where',
      description: null,
      inputFields: [{ name: 'tone', description: null, type: { kind: 'ENUM', name: 'Tone' }, defaultValue: null }],
    } as unknown as IntrospectionType,
  ],
]);
const m = { types } as unknown as RemoteSchemaModel;
const named = (name: string, kind = 'ENUM') => ({ kind, name }) as IntrospectionInputTypeRef;

test('values are literals of their type', () => {
  assert.equal(graphqlLiteral('HAPPY', named('Tone'), m), 'HAPPY');
  assert.equal(graphqlLiteral({ tone: 'HAPPY' }, named('Where', 'INPUT_OBJECT'), m), '{tone: HAPPY}');
  assert.equal(graphqlLiteral([1, 2], { kind: 'LIST', ofType: named('Int', 'SCALAR') } as IntrospectionInputTypeRef, m), '[1, 2]');
  assert.equal(graphqlLiteral('a "b"\n', named('String', 'SCALAR'), m), '"a \\"b\\"\\n"');
  assert.equal(graphqlLiteral(null, named('Int', 'SCALAR'), m), 'null');
});

test('data is never spliced as syntax', () => {
  const evil = 'HAPPY) { __typename } x: message(id: 1';
  const lit = graphqlLiteral(evil, named('Tone'), m);
  assert.equal(parseValue(lit).kind, 'StringValue', 'a string the remote refuses, not syntax');
  assert.throws(() => graphqlLiteral({ 'a) { b': 1 }, undefined, m), /not a valid GraphQL name/);
});
