/** Actions from SDL (console/src/actions/sdl.ts): parse, merge custom types, print back, handler sample. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actionToSdl, customTypesToSdl, expressHandler, mergeCustomTypes, parseActionSdl, parseTypesSdl, typesUsed } from '../../../console/src/actions/sdl.ts';

const ACTION = `type Mutation {
  "Log a user in"
  login(username: String!, password: String!, opts: [LoginOpts!]): LoginResult!
}`;
const TYPES = `"what login answers"
type LoginResult { accessToken: String!  user: UserInfo }
type UserInfo { id: Int!  role: Role }
input LoginOpts { remember: Boolean }
enum Role { admin user }
scalar Unused`;

test('an action and its types from SDL', () => {
  assert.deepEqual(parseActionSdl(ACTION), {
    name: 'login',
    type: 'mutation',
    description: 'Log a user in',
    output_type: 'LoginResult!',
    arguments: [
      { name: 'username', type: 'String!' },
      { name: 'password', type: 'String!' },
      { name: 'opts', type: '[LoginOpts!]' },
    ],
  });
  assert.equal(parseActionSdl('type Query { me: UserInfo }').type, 'query');
  const types = parseTypesSdl(TYPES);
  assert.deepEqual(types.objects, [
    {
      name: 'LoginResult',
      description: 'what login answers',
      fields: [
        { name: 'accessToken', type: 'String!' },
        { name: 'user', type: 'UserInfo' },
      ],
    },
    {
      name: 'UserInfo',
      fields: [
        { name: 'id', type: 'Int!' },
        { name: 'role', type: 'Role' },
      ],
    },
  ]);
  assert.deepEqual(types.input_objects, [{ name: 'LoginOpts', fields: [{ name: 'remember', type: 'Boolean' }] }]);
  assert.deepEqual(types.enums, [{ name: 'Role', values: [{ value: 'admin' }, { value: 'user' }] }]);
  assert.deepEqual(types.scalars, [{ name: 'Unused' }]);
  assert.deepEqual(typesUsed(parseActionSdl(ACTION), types), ['LoginOpts', 'LoginResult', 'UserInfo', 'Role']);
});

test('errors name the part, line and column', () => {
  assert.throws(() => parseActionSdl('type Mutation { login(: X }'), /^Error: action definition: Expected Name, found ":". \(line 1, column 23\)$/);
  assert.throws(() => parseActionSdl('type Mutation { a: X b: Y }'), /expected exactly one field in Mutation, found 2/);
  assert.throws(() => parseActionSdl('type Foo { a: X }'), /expected one "type Mutation/);
  assert.throws(() => parseTypesSdl('type A { x(y: Int): Int }'), /fields of A cannot take arguments/);
  assert.throws(() => parseTypesSdl('union U = A | B'), /UnionTypeDefinition U is not a custom type/);
  assert.throws(() => parseTypesSdl('scalar A\nscalar A'), /A is defined twice/);
});

test("merging keeps other types and an object type's relationships; printing gives SDL that parses back", () => {
  const rel = { name: 'owner', type: 'object', remote_table: 'users', field_mapping: { id: 'id' } };
  const existing = { objects: [{ name: 'UserInfo', fields: [{ name: 'id', type: 'Int' }], relationships: [rel] }], scalars: [{ name: 'Keep' }] };
  const merged = mergeCustomTypes(existing, parseTypesSdl(TYPES));
  assert.deepEqual(
    merged.scalars.map((s) => s.name),
    ['Keep', 'Unused'],
  );
  assert.deepEqual(merged.objects.find((o) => o.name === 'UserInfo')!.relationships, [rel]);
  assert.deepEqual(
    merged.objects.find((o) => o.name === 'UserInfo')!.fields.map((f) => f.name),
    ['id', 'role'],
  );
  const parsed = parseActionSdl(ACTION);
  assert.deepEqual(parseActionSdl(actionToSdl(parsed.name, parsed, parsed.description)), parsed);
  const sdl = customTypesToSdl(merged, typesUsed(parsed, merged));
  const back = parseTypesSdl(sdl);
  assert.deepEqual(
    back.objects!.map((o) => o.name),
    ['LoginResult', 'UserInfo'],
  );
  assert.deepEqual(back.enums, merged.enums);
});

test('the Express handler sample: the handler path, the arguments and a response of the output shape', () => {
  const types = parseTypesSdl(TYPES);
  const code = expressHandler('login', { ...parseActionSdl(ACTION), handler: 'http://localhost:3000/auth/login' }, types);
  assert.match(code, /app\.post\("\/auth\/login", async \(req, res\) => \{/);
  assert.match(code, /const \{ username, password, opts \} = req\.body\.input;/);
  assert.match(code, /return res\.json\(\{ accessToken: '<String>', user: \{ id: 0, role: 'admin' \} \}\);/);
  // the sample is JavaScript that parses
  assert.doesNotThrow(() => new Function('require', 'process', code.replace(/app\.listen.*$/m, '')));
});
