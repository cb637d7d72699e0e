/**
 * The remote relationship tests of the upstream suite that were python code (`kind: python` in the
 * conformance manifest, so the runner cannot replay them), replayed here from their case files with
 * the same steps (test_remote_relationships.py: setup, `v1q_f setup_*.yaml`, `check_query_f *.yaml`)
 * against the upstream remote fixtures (test/fixtures/remote/upstream.ts, ports 5000/4000).
 * Responses compare as JSON values (key order aside); error locations, which depend on the
 * document Svc sends, are not compared.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { post, postQuery, startConformanceServer, type TestServer } from '../helpers/server.js';
import { startUpstreamRemoteFixtures, type UpstreamRemoteFixtures } from '../fixtures/remote/upstream.js';

const CASES = join(fileURLToPath(new URL('.', import.meta.url)), '..', 'conformance', 'cases', 'remote_schemas');
/** a case file of remote_relationships/, or of remote_schemas/ (`../name`) */
const load = (name: string): any => JSON.parse(readFileSync(join(CASES, 'remote_relationships', `${name}.json`), 'utf8'));

let svc: TestServer;
let fixtures: UpstreamRemoteFixtures | null;

before(async () => {
  svc = await startConformanceServer();
  fixtures = await startUpstreamRemoteFixtures();
});
after(async () => {
  await svc?.close();
  await fixtures?.close();
});

async function v1q(name: string, status = 200): Promise<void> {
  const r = await postQuery(svc.url, load(name));
  assert.equal(r.status, status, `${name}: ${r.text}`);
}

const dropLocations = (v: any): any =>
  Array.isArray(v)
    ? v.map(dropLocations)
    : v && typeof v === 'object'
      ? Object.fromEntries(
          Object.entries(v)
            .filter(([k]) => k !== 'locations')
            .map(([k, x]) => [k, dropLocations(x)]),
        )
      : v;

async function check(name: string): Promise<void> {
  const file = load(name);
  for (const c of Array.isArray(file) ? file : [file]) {
    const r = await post(svc.url, c.url, c.query, c.headers ?? {});
    assert.equal(r.status, c.status, `${name} (${c.description}): ${r.text}`);
    if (c.response && !(Array.isArray(c.response) && c.response.length === 0))
      assert.deepEqual(dropLocations(r.body), dropLocations(c.response), `${name} (${c.description})`);
  }
}

/** One upstream test: its class setup/teardown (case files, or /v1/query bodies) around the steps. */
function flow(title: string, steps: () => Promise<void>, setup: Array<string | object> = ['setup'], teardown: Array<string | object> = ['teardown']) {
  test(title, async (t) => {
    if (!fixtures) {
      t.skip('ports 5000/4000 are taken');
      return;
    }
    await postQuery(svc.url, { type: 'clear_metadata', args: {} });
    for (const s of setup) {
      if (typeof s === 'string') await v1q(s);
      else assert.equal((await postQuery(svc.url, s)).status, 200);
    }
    try {
      await steps();
    } finally {
      for (const s of teardown) await postQuery(svc.url, typeof s === 'string' ? load(s) : s);
    }
  });
}

/** test_schema_stitching.py's mk_add_remote_q */
const addRemote = (name: string, url: string, timeout?: number) => ({
  type: 'add_remote_schema',
  args: { name, comment: `testing ${name}`, definition: { url, forward_client_headers: false, ...(timeout ? { timeout_seconds: timeout } : {}) } },
});
async function expect(q: object, status: number, code?: string): Promise<void> {
  const r = await postQuery(svc.url, q);
  assert.equal(r.status, status, r.text);
  if (code) assert.equal(r.body.code, code, r.text);
}

describe('TestCreateRemoteRelationship', () => {
  flow('test_create_valid', async () => {
    for (const s of [
      'setup_remote_rel_basic',
      'setup_remote_rel_nested_args',
      'setup_remote_rel_array',
      'setup_remote_rel_nested_fields',
      'setup_remote_rel_multiple_fields',
    ])
      await v1q(s);
  });
  flow('test_create_invalid', async () => {
    for (const s of ['hasura_field', 'literal', 'variable', 'remote_args', 'remote_schema', 'remote_field', 'type', 'nested_args', 'array'])
      await v1q(`setup_invalid_remote_rel_${s}`, 400);
  });
  flow('test_generation', async () => {
    await v1q('setup_remote_rel_basic');
    await v1q('setup_remote_rel_nested_args');
    await check('select_remote_fields');
  });
});

describe('TestDeleteRemoteRelationship / TestUpdateRemoteRelationship', () => {
  flow('test_delete', async () => {
    await v1q('setup_remote_rel_basic');
    await v1q('delete_remote_rel');
  });
  flow('test_delete_dependencies', async () => {
    await v1q('setup_remote_rel_basic');
    await v1q('remove_remote_schema', 400);
    await v1q('delete_remote_rel');
  });
  flow('test_update', async () => {
    await v1q('setup_remote_rel_basic');
    await check('basic_relationship');
    await v1q('update_remote_rel_basic');
    await check('update_basic_query');
  });
});

describe('TestExecution', () => {
  flow('test_basic_relationship', async () => {
    await v1q('setup_remote_rel_basic');
    await check('basic_relationship');
  });
  flow('test_basic_relationship_on_object', async () => {
    await v1q('setup_remote_rel_basic');
    await check('query_with_object_rel');
    await v1q('setup_remote_rel_nested_args');
    await check('query_with_arr_rel');
  });
  flow('test_basic_array', async () => {
    await v1q('setup_remote_rel_array');
    await check('basic_array');
  });
  flow('test_basic_array_without_join_key', async () => {
    await v1q('setup_remote_rel_array');
    await check('basic_array_without_join_key');
  });
  flow('test_multiple_fields', async () => {
    await v1q('setup_remote_rel_multiple_fields');
    await check('basic_multiple_fields');
  });
  flow('test_nested_fields', async () => {
    await v1q('setup_remote_rel_nested_fields');
    await check('basic_nested_fields');
  });
  flow('test_arguments', async () => {
    await v1q('setup_remote_rel_nested_args');
    await check('query_with_arguments');
  });
  flow('test_with_errors', async () => {
    await v1q('setup_remote_rel_basic');
    await check('query_with_errors_obj');
    await v1q('setup_remote_rel_nested_args');
    await check('query_with_errors_arr');
  });
  flow('test_with_scalar_relationship', async () => {
    await v1q('setup_remote_rel_scalar');
    await check('query_with_scalar_rel');
  });
  flow('test_renaming_column_with_remote_relationship_dependency', async () => {
    await v1q('setup_remote_rel_nested_args');
    await check('rename_col_with_remote_rel_dependency');
  });
  flow('test_renaming_table_with_remote_relationship_dependency', async () => {
    await v1q('setup_remote_rel_nested_args');
    await check('rename_table_with_remote_rel_dependency');
  });
});

describe('TestDeepExecution', () => {
  const deep = (title: string, setup: string, checks: string[]) =>
    flow(
      title,
      async () => {
        await v1q(setup);
        for (const c of checks) await check(c);
      },
      ['setup', 'setup_address'],
      ['teardown_address', 'teardown'],
    );
  deep('test_with_deep_object', 'setup_remote_rel_basic', ['query_with_deep_nesting_obj']);
  deep('test_with_deep_array', 'setup_remote_rel_nested_args', ['query_with_deep_nesting_arr']);
  deep('test_with_complex_path_object', 'setup_remote_rel_basic', ['query_with_deep_nesting_complex_path_obj', 'query_with_deep_nesting_complex_path_obj2']);
  deep('test_with_complex_path_array', 'setup_remote_rel_basic', ['query_with_deep_nesting_complex_path_arr', 'query_with_deep_nesting_complex_path_arr2']);
});

// TestWithRelay is left out: Svc has no /v1beta1/relay endpoint.
describe('TestExecutionWithPermissions', () => {
  const perms = (title: string, setup: string, checks: string[]) =>
    flow(title, async () => {
      await v1q(setup);
      for (const c of checks) await check(c);
    }, ['setup_with_permissions']);
  perms('test_basic_relationship', 'setup_remote_rel_basic', ['basic_relationship_with_permissions1', 'basic_relationship_with_permissions2']);
  perms('test_complex_multiple_joins', 'setup_multiple_remote_rel', ['complex_multiple_joins']);
});

describe('test_schema_stitching.py', () => {
  const hello = 'http://localhost:5000/hello-graphql';
  const basic = (title: string, steps: () => Promise<void>) => flow(title, steps, [addRemote('simple 1', hello)], [{ type: 'clear_metadata', args: {} }]);
  basic('TestRemoteSchemaBasic::test_add_schema_conflicts', () => expect(addRemote('simple 2', hello), 400, 'unexpected'));
  basic('TestRemoteSchemaBasic::test_remove_schema_error', () => expect({ type: 'remove_remote_schema', args: { name: 'random name' } }, 400, 'not-exists'));
  basic('TestRemoteSchemaBasic::test_reload_remote_schema', () => expect({ type: 'reload_remote_schema', args: { name: 'simple 1' } }, 200));
  basic('TestRemoteSchemaBasic::test_add_second_remote_schema', async () => {
    await expect(addRemote('my remote', 'http://localhost:5000/user-graphql'), 200);
    await expect({ type: 'remove_remote_schema', args: { name: 'my remote' } }, 200);
  });
  basic('TestRemoteSchemaBasic::test_add_remote_schema_with_interfaces', async () => {
    await expect(addRemote('my remote interface one', 'http://localhost:5000/character-iface-graphql'), 200);
    await check('../character_interface_query');
  });
  basic('TestRemoteSchemaBasic::test_add_remote_schema_with_union', async () => {
    await expect(addRemote('my remote union one', 'http://localhost:5000/union-graphql'), 200);
    await check('../search_union_type_query');
  });
  basic('TestRemoteSchemaBasic::test_bulk_remove_add_remote_schema', () => v1q('../basic_bulk_remove_add'));

  const tbls = (title: string, steps: () => Promise<void>) => flow(title, steps, ['../tbls_setup'], ['../tbls_teardown']);
  tbls('TestAddRemoteSchemaTbls::test_add_schema_conflicts_with_tables', () => expect(addRemote('simple2', hello), 400, 'constraint-violation'));
  tbls('TestAddRemoteSchemaTbls::test_add_second_remote_schema', async () => {
    await expect(addRemote('my remote2', 'http://localhost:5000/character-iface-graphql'), 200);
    await expect({ type: 'remove_remote_schema', args: { name: 'my remote2' } }, 200);
  });
  tbls('TestAddRemoteSchemaTbls::test_add_conflicting_table', async () => {
    const r = await postQuery(svc.url, load('../create_conflicting_table'));
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'remote-schema-conflicts');
  });
  tbls('TestAddRemoteSchemaTbls::test_add_schema_duplicate_name', () =>
    expect(addRemote('simple2-graphql', 'http://localhost:5000/user-graphql'), 400, 'already-exists'),
  );

  flow(
    'TestRemoteSchemaTimeout::test_remote_query_timeout',
    () => check('../basic_timeout_query'),
    [addRemote('simple 1', hello, 5)],
    [{ type: 'clear_metadata', args: {} }],
  );
});
