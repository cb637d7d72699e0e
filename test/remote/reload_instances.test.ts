/**
 * Issue 30 item 8: `reload_remote_schema` (and `reload_metadata` with `reload_remote_schemas`)
 * reaches every instance, like every other metadata change: two Svc processes on one database and a
 * real remote on 127.0.0.1 whose schema changes; after a reload through one instance the other
 * serves the new schema (it learns of the reload by NOTIFY and refetches the remote because its
 * generation in the catalog changed).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildSchema } from 'graphql';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { cleanEnv, startSvcProcess, type SvcProcess } from '../helpers/process.js';
import { postGraphql, query, waitFor } from '../helpers/server.js';
import { startGraphQLServer, type GraphQLTestServer, type Route } from '../fixtures/remote/server.js';

let db: TestDatabase;
let remote: GraphQLTestServer;
const procs: SvcProcess[] = [];
const routes: Record<string, Route> = {};
const schemaWith = (field: string) => ({ schema: buildSchema(`type Query { ${field}: String }`) });

before(async () => {
  db = await createTestDatabase();
  routes['/graphql'] = schemaWith('v1');
  remote = await startGraphQLServer(routes);
});

after(async () => {
  for (const p of procs) await p.stop(5_000);
  await remote?.close();
  await db?.drop();
});

/** The remote's root fields as an instance's schema shows them. */
const fieldsOn = async (url: string) => {
  const r = await postGraphql(url, { query: '{ __schema { queryType { fields { name } } } }' });
  return (r.body.data.__schema.queryType.fields as Array<{ name: string }>).map((f) => f.name).filter((n) => /^v\d$/.test(n));
};

test('a reload through one instance reaches the other', { timeout: 120_000 }, async () => {
  const env = cleanEnv({ SVC_GRAPHQL_DATABASE_URL: db.url, SVC_GRAPHQL_ENABLED_LOG_TYPES: 'startup' });
  const [a, b] = await Promise.all([startSvcProcess([], env), startSvcProcess([], env)]);
  procs.push(a.proc, b.proc);
  await query(a.url, { type: 'add_remote_schema', args: { name: 'changing', definition: { url: `${remote.url}/graphql` } } });
  await waitFor('the second instance to serve v1', async () => ((await fieldsOn(b.url)).join() === 'v1' ? true : undefined), 10_000);

  routes['/graphql'] = schemaWith('v2');
  await query(a.url, { type: 'reload_remote_schema', args: { name: 'changing' } });
  assert.deepEqual(await fieldsOn(a.url), ['v2']);
  await waitFor('the second instance to serve v2 after reload_remote_schema', async () => ((await fieldsOn(b.url)).join() === 'v2' ? true : undefined), 10_000);

  routes['/graphql'] = schemaWith('v3');
  await query(b.url, { type: 'reload_metadata', args: { reload_remote_schemas: true } });
  assert.deepEqual(await fieldsOn(b.url), ['v3']);
  await waitFor('the first instance to serve v3 after reload_metadata', async () => ((await fieldsOn(a.url)).join() === 'v3' ? true : undefined), 10_000);
});
