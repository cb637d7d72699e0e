/**
 * Backend-only insert permissions (reference: auth/authorization/permission-rules,
 * "Backend only"; Hasura v1.3 RoleContext frontend/backend): a `backend_only`
 * insert permission exists for a request only when `x-svc-use-backend-only-permissions`
 * is true and the request is authenticated with the admin secret (or no
 * authentication is configured); such a request sees only the backend-only insert
 * permissions (upstream test_graphql_mutations.py::TestGraphqlInsertPermission::
 * test_user_with_no_backend_privilege: a role whose insert permission is not backend-only,
 * sending the header, has no insert field). Both endpoints, over HTTP, with and without an
 * admin secret.
 */
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { after, before, describe, test } from 'node:test';
import { postGraphql, postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';

const SECRET = 'backend-only-secret';
const JWT_KEY = 'a-very-long-hmac-secret-of-at-least-32-bytes!!';
const BACKEND_ONLY = 'x-svc-use-backend-only-permissions';

const SETUP = {
  type: 'bulk',
  args: [
    { type: 'run_sql', args: { sql: 'create table items (id serial primary key, name text); create table notes (id serial primary key, body text);' } },
    { type: 'track_table', args: { name: 'items' } },
    { type: 'track_table', args: { name: 'notes' } },
    { type: 'create_select_permission', args: { table: 'items', role: 'backend', permission: { columns: ['id', 'name'], filter: {} } } },
    { type: 'create_select_permission', args: { table: 'notes', role: 'backend', permission: { columns: ['id', 'body'], filter: {} } } },
    { type: 'create_insert_permission', args: { table: 'items', role: 'backend', permission: { columns: ['name'], check: {}, backend_only: true } } },
    { type: 'create_insert_permission', args: { table: 'notes', role: 'backend', permission: { columns: ['body'], check: {} } } },
  ],
};

const INSERT_ITEMS = 'mutation { insert_items(objects: [{name: "x"}]) { affected_rows } }';
const INSERT_NOTES = 'mutation { insert_notes(objects: [{body: "x"}]) { affected_rows } }';
const MUTATIONS = '{ __schema { mutationType { fields { name } } } }';

type Headers = Record<string, string>;

/** What one request sees: the backend-only insert (both endpoints), the other insert, the mutation fields. */
async function observe(s: TestServer, headers: Headers) {
  const gItems = await postGraphql(s.url, { query: INSERT_ITEMS }, headers);
  const gNotes = await postGraphql(s.url, { query: INSERT_NOTES }, headers);
  const qItems = await postQuery(s.url, { type: 'insert', args: { table: 'items', objects: [{ name: 'y' }] } }, headers);
  const qNotes = await postQuery(s.url, { type: 'insert', args: { table: 'notes', objects: [{ body: 'y' }] } }, headers);
  const fields = await postGraphql(s.url, { query: MUTATIONS }, headers);
  return {
    graphqlItems: gItems.body.data ? 'allowed' : gItems.body.errors[0].extensions.code,
    graphqlNotes: gNotes.body.data ? 'allowed' : gNotes.body.errors[0].extensions.code,
    queryItems: qItems.status === 200 ? 'allowed' : qItems.body.code,
    queryNotes: qNotes.status === 200 ? 'allowed' : qNotes.body.code,
    mutationFields: fields.body.data.__schema.mutationType.fields.map((f: { name: string }) => f.name).filter((n: string) => n.startsWith('insert_')),
    errors: [gItems.body.errors?.[0]?.message, qItems.status === 200 ? undefined : qItems.body.error],
  };
}

const BACKEND = ['insert_items', 'insert_items_one'];
const FRONTEND = ['insert_notes', 'insert_notes_one'];
const usable = {
  graphqlItems: 'allowed',
  graphqlNotes: 'validation-failed',
  queryItems: 'allowed',
  queryNotes: 'permission-denied',
  mutationFields: BACKEND,
  errors: [undefined, undefined],
};
const hidden = {
  graphqlItems: 'validation-failed',
  graphqlNotes: 'allowed',
  queryItems: 'permission-denied',
  queryNotes: 'allowed',
  mutationFields: FRONTEND,
  errors: ['field "insert_items" not found in type: \'mutation_root\'', 'insert on "items" for role "backend" is not allowed. '],
};

describe('no authentication configured: the header decides', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    await query(s.url, SETUP);
  });
  after(() => s?.close());

  test('header true: only the backend-only inserts exist', async () => {
    assert.deepEqual(await observe(s, { 'x-svc-role': 'backend', [BACKEND_ONLY]: 'true' }), usable);
    assert.deepEqual(await observe(s, { 'x-svc-role': 'backend', [BACKEND_ONLY]: 'Y' }), usable);
  });

  test('header absent or false: backend-only inserts do not exist (after the same queries were planned with it)', async () => {
    assert.deepEqual(await observe(s, { 'x-svc-role': 'backend' }), hidden);
    assert.deepEqual(await observe(s, { 'x-svc-role': 'backend', [BACKEND_ONLY]: 'false' }), hidden);
  });
});

describe('admin secret configured: the header counts only with the secret', () => {
  let s: TestServer;
  const jwt = () =>
    new SignJWT({ 'https://svc.io/jwt/claims': { 'x-svc-allowed-roles': ['backend'], 'x-svc-default-role': 'backend' } })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(JWT_KEY));
  before(async () => {
    s = await startTestServer({ adminSecret: SECRET, unauthorizedRole: 'backend', jwtSecret: { type: 'HS256', key: JWT_KEY } });
    await query(s.url, SETUP, { 'x-svc-admin-secret': SECRET });
  });
  after(() => s?.close());

  test('admin secret and header true: only the backend-only inserts exist', async () => {
    assert.deepEqual(await observe(s, { 'x-svc-admin-secret': SECRET, 'x-svc-role': 'backend', [BACKEND_ONLY]: 'true' }), usable);
  });

  test('admin secret without the header: hidden', async () => {
    assert.deepEqual(await observe(s, { 'x-svc-admin-secret': SECRET, 'x-svc-role': 'backend' }), hidden);
    assert.deepEqual(await observe(s, { 'x-svc-admin-secret': SECRET, 'x-svc-role': 'backend', [BACKEND_ONLY]: 'false' }), hidden);
  });

  test('header true without the admin secret (unauthorized role, JWT): hidden', async () => {
    assert.deepEqual(await observe(s, { [BACKEND_ONLY]: 'true' }), hidden);
    assert.deepEqual(await observe(s, { authorization: `Bearer ${await jwt()}`, [BACKEND_ONLY]: 'true' }), hidden);
  });

  test('nothing was inserted into items by the requests that could not see the permission', async () => {
    const r = await query(s.url, { type: 'count', args: { table: 'items' } }, { 'x-svc-admin-secret': SECRET });
    // two inserts (GraphQL and /v1/query) by the one request that could
    assert.deepEqual(r, { count: 2 });
  });
});
