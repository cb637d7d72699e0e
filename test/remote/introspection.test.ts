/**
 * Issue 28 item 5: introspection of a schema with a remote schema shows the remote's types and root
 * fields as the remote itself introspects them (upstream's TestAddRemoteSchemaCompareRootQueryFields
 * compares each root field's type, arguments and default values with the remote's own introspection):
 * descriptions (scalars' too), deprecations, argument and input-field types, and default values as the
 * remote wrote them, including literals graphql-js would print differently (`1.0`, field order) or
 * cannot print back at all (an object for a custom scalar). Lists are compared by name: Svc lists
 * fields, arguments, input fields and enum values sorted by name, as upstream v1.3 does.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildSchema, getIntrospectionQuery, graphqlSync, type IntrospectionQuery } from 'graphql';
import { postGraphql, postQuery, startTestServer, type TestServer } from '../helpers/server.js';
import { startGraphQLServer, type GraphQLTestServer } from '../fixtures/remote/server.js';

const SDL = `
"a JSON value" scalar JSON
"an enum" enum Color { "red!" RED GREEN @deprecated(reason: "use RED") BLUE @deprecated }
"a filter" input Filter { "min" min: Int = 3 max: Float = 2.5 color: Color = GREEN tags: [String!] = ["a", "b\\"c"] nested: Inner = {x: 1, ys: [RED]} j: JSON s: String = "q\\nw" }
input Inner { x: Int! ys: [Color] = [] }
"iface" interface Node { id: ID! }
"""Obj"""
type Thing implements Node { id: ID! "name!" name(upper: Boolean = false, f: Filter = {min: 1}): String old: Int @deprecated(reason: "gone") }
union Any = Thing | Other
type Other { x: Int }
type Query { "thing" thing(id: ID! = "1", c: Color = RED, f: Filter, l: [Int] = [1, 2], n: Int = null, w: Float, o: Filter): Thing any: [Any!]! nodes: [Node] }
type Mutation { setThing(f: Filter = {max: 1.0}): Thing }
`;
const QUERY = getIntrospectionQuery({ descriptions: true, inputValueDeprecation: true });

// the remote's introspection, with default literals as another GraphQL implementation prints them
const remoteIntrospection = graphqlSync({ schema: buildSchema(SDL), source: QUERY }).data as unknown as IntrospectionQuery;
const literals: Record<string, string> = { w: '1.0', o: '{max: 1.5, min: 2}' };
const filter = remoteIntrospection.__schema.types.find((t) => t.name === 'Filter') as unknown as {
  inputFields: Array<{ name: string; defaultValue: string | null }>;
};
filter.inputFields.find((f) => f.name === 'j')!.defaultValue = '{a: 1, b: [true]}';
const thing = (
  remoteIntrospection.__schema.types.find((t) => t.name === 'Query') as unknown as {
    fields: Array<{ name: string; args: Array<{ name: string; defaultValue: string | null }> }>;
  }
).fields[0]!;
for (const a of thing.args) if (literals[a.name]) a.defaultValue = literals[a.name]!;

let svc: TestServer;
let remote: GraphQLTestServer;

before(async () => {
  svc = await startTestServer();
  remote = await startGraphQLServer({ '/r': { json: { data: remoteIntrospection } } });
  const add = await postQuery(svc.url, { type: 'add_remote_schema', args: { name: 'r', definition: { url: `${remote.url}/r` } } });
  assert.equal(add.status, 200, add.text);
});

after(async () => {
  await svc?.close();
  await remote?.close();
});

/** a JSON value with every list of named things sorted by name */
function byName(v: unknown): unknown {
  if (Array.isArray(v)) {
    const xs = v.map(byName);
    return xs.every((x) => x && typeof x === 'object' && typeof (x as { name?: unknown }).name === 'string')
      ? [...xs].sort((a, b) => ((a as { name: string }).name < (b as { name: string }).name ? -1 : 1))
      : xs;
  }
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, byName(x)]));
  return v;
}

test("the remote's types and root fields introspect as the remote's own introspection", async () => {
  const r = await postGraphql(svc.url, { query: QUERY });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.errors, undefined, r.text);
  const mine = new Map<string, unknown>((r.body.data as IntrospectionQuery).__schema.types.map((t) => [t.name, t]));
  const theirs = remoteIntrospection.__schema.types.filter((t) => !t.name.startsWith('__'));
  for (const t of theirs) {
    if (t.name === 'Query' || t.name === 'Mutation') continue;
    assert.deepEqual(byName(mine.get(t.name)), byName(t), `type ${t.name}`);
  }
  for (const [root, svcRoot] of [
    ['Query', 'query_root'],
    ['Mutation', 'mutation_root'],
  ] as const) {
    const rootFields = (mine.get(svcRoot) as { fields: Array<{ name: string }> }).fields;
    for (const f of (theirs.find((t) => t.name === root) as unknown as { fields: Array<{ name: string }> }).fields) {
      assert.deepEqual(byName(rootFields.find((x) => x.name === f.name)), byName(f), `${root}.${f.name}`);
    }
  }
});

test("a custom scalar's object default shows as the remote wrote it (graphql-js cannot print it back)", async () => {
  const r = await postGraphql(svc.url, { query: '{ __type(name: "Filter") { inputFields { name defaultValue } } }' });
  const j = r.body.data.__type.inputFields.find((f: { name: string }) => f.name === 'j');
  assert.equal(j.defaultValue, '{a: 1, b: [true]}');
});
