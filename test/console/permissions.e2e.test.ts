/**
 * Permissions in the console, in headless Chromium against a real Svc: a row permission built with
 * the visual builder (an _or of a session-variable comparison, a value and a condition through a
 * relationship), the JSON view kept in step both ways, then checked as that role through
 * /v1/graphql; copying the permission to another role; the roles × tables × operations overview;
 * and a fresh form that does not complain before it is touched.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BROWSER_SKIP, graphqlAs, openConsole, type ConsoleSession } from './browser.js';

describe('console: permissions', { skip: BROWSER_SKIP }, () => {
  let s: ConsoleSession;
  const FILTER = { _or: [{ owner_id: { _eq: 'X-Svc-User-Id' } }, { public: { _eq: true } }, { owner: { name: { _eq: 'cyd' } } }] };
  const docsAs = async (role: string, user: string) => {
    const r = await graphqlAs(s, '{ doc(order_by: {id: asc}) { id } }', { 'x-svc-role': role, 'x-svc-user-id': user });
    assert.ok(r.data, JSON.stringify(r));
    return r.data.doc.map((d: { id: number }) => d.id);
  };
  const selectPermission = async (role: string) => {
    const md = await s.admin('export_metadata', {});
    return md.tables.find((t: any) => t.table.name === 'doc').select_permissions?.find((p: any) => p.role === role)?.permission;
  };

  before(async () => {
    s = await openConsole();
    await s.admin('run_sql', {
      sql: `
      create table owner (id int primary key, name text not null);
      create table doc (id serial primary key, owner_id int not null references owner (id), title text not null, public boolean not null default false);
      insert into owner values (1, 'ann'), (2, 'bob'), (3, 'cyd');
      insert into doc (owner_id, title, public) values (1, 'mine', false), (2, 'theirs', false), (2, 'shared', true), (3, 'cyds', false);`,
    });
    await s.admin('bulk', [
      { type: 'track_table', args: { table: 'owner' } },
      { type: 'track_table', args: { table: 'doc' } },
      { type: 'create_object_relationship', args: { table: 'doc', name: 'owner', using: { foreign_key_constraint_on: 'owner_id' } } },
    ]);
  });
  after(async () => {
    await s?.close();
  });

  test("a new role's form says nothing is wrong before it is touched", async () => {
    const { page } = s;
    await s.open('/console/permissions/public/doc', () => page.getByLabel('New role'));
    await page.getByLabel('New role').fill('reader');
    await page.getByRole('button', { name: 'Add role' }).click();
    await page.getByRole('heading', { name: 'select permission of role reader on doc' }).waitFor();
    assert.equal(await page.getByText('choose at least one column').count(), 0);
    assert.equal(await page.getByRole('alert').count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Save permission' }).isDisabled(), false);
    await s.shot('permission-form-fresh');
  });

  test('build a row filter visually; the JSON view follows; saved; as the role the right rows come back', async () => {
    const { page } = s;
    await page.getByLabel('How the conditions of the top group combine').selectOption('_or');
    const addTop = page.getByRole('button', { name: 'Add a condition to the top group' });

    await addTop.click();
    await page.getByLabel('Field of condition 1', { exact: true }).selectOption('col:owner_id');
    await page.getByLabel('Operator of condition 1', { exact: true }).selectOption('_eq');
    await page.getByLabel('Value kind of condition 1', { exact: true }).selectOption('session');
    await page.getByLabel('Session variable of condition 1', { exact: true }).fill('X-Svc-User-Id');

    await addTop.click();
    await page.getByLabel('Field of condition 2', { exact: true }).selectOption('col:public');
    await page.getByLabel('Value of condition 2', { exact: true }).fill('true');

    await addTop.click();
    await page.getByLabel('Field of condition 3', { exact: true }).selectOption('rel:owner');
    await page.getByRole('button', { name: 'Add a condition to the group 3' }).click();
    await page.getByLabel('Field of condition 3.1', { exact: true }).selectOption('col:name');
    await page.getByLabel('Value of condition 3.1', { exact: true }).fill('cyd');

    const json = page.getByRole('textbox', { name: /^Row filter \(JSON\)/ });
    assert.deepEqual(JSON.parse(await json.inputValue()), FILTER);
    await page.getByRole('button', { name: 'Select all' }).click();
    await s.shot('permission-builder');
    await page.getByRole('button', { name: 'Save permission' }).click();
    await s.status('Saved the select permission of reader');

    assert.deepEqual((await selectPermission('reader')).filter, FILTER);
    assert.deepEqual(await docsAs('reader', '1'), [1, 3, 4]);
    assert.deepEqual(await docsAs('reader', '2'), [2, 3, 4]);
  });

  test('JSON typed into the JSON view shows in the builder', async () => {
    const { page } = s;
    const json = page.getByRole('textbox', { name: /^Row filter \(JSON\)/ });
    await json.fill('{"_not": {"title": {"_ilike": "%s"}}}');
    const field = page.getByLabel('Field of condition 1', { exact: true });
    assert.equal(await field.inputValue(), '_not');
    assert.equal(await page.getByLabel('Field of condition 1.1', { exact: true }).inputValue(), 'col:title');
    assert.equal(await page.getByLabel('Operator of condition 1.1', { exact: true }).inputValue(), '_ilike');
    assert.equal(await page.getByLabel('Value of condition 1.1', { exact: true }).inputValue(), '%s');
    await page.getByRole('button', { name: 'Close' }).click();
    // closed without saving: the saved permission is unchanged
    assert.deepEqual((await selectPermission('reader')).filter, FILTER);
  });

  test('copy the permission to another role; that role sees the same rows', async () => {
    const { page } = s;
    await page.getByRole('button', { name: 'select permission of reader: partial. Edit' }).click();
    await page.getByLabel(/^Other roles/).fill('auditor');
    await page.getByRole('button', { name: 'Copy to auditor' }).click();
    await s.status('Copied the select permission of reader to auditor');
    assert.deepEqual(await selectPermission('auditor'), await selectPermission('reader'));
    assert.deepEqual(await docsAs('auditor', '1'), [1, 3, 4]);
  });

  test("the overview: roles × tables × operations; a cell opens that permission's form", async () => {
    const { page } = s;
    await s.open('/console/permissions', () => page.getByRole('table', { name: 'Permissions by role, table and operation' }));
    const grid = page.getByRole('table', { name: 'Permissions by role, table and operation' });
    assert.deepEqual(await grid.locator('thead th[scope=colgroup]').allTextContents(), ['auditor', 'reader']);
    await grid.getByRole('link', { name: 'select permission of reader on doc: partial' }).waitFor();
    await grid.getByRole('link', { name: 'select permission of auditor on owner: none' }).waitFor();
    await s.shot('permissions-overview');
    await grid.getByRole('link', { name: 'update permission of auditor on doc: none' }).click();
    await page.getByRole('heading', { name: 'update permission of role auditor on doc' }).waitFor();
    // a one-click update permission: every column, rows of the user
    await page.getByLabel('Field of condition 1', { exact: true }).waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Add a condition to the top group' }).click();
    await page.getByLabel('Field of condition 1', { exact: true }).selectOption('col:owner_id');
    await page.getByLabel('Value kind of condition 1', { exact: true }).selectOption('session');
    await page.getByLabel('title', { exact: true }).check();
    await page.getByRole('button', { name: 'Save permission' }).click();
    await s.status('Saved the update permission of auditor');
    const md = await s.admin('export_metadata', {});
    const [upd] = md.tables.find((t: any) => t.table.name === 'doc').update_permissions;
    assert.equal(upd.role, 'auditor');
    assert.deepEqual(
      { columns: upd.permission.columns, filter: upd.permission.filter },
      { columns: ['title'], filter: { owner_id: { _eq: 'X-Svc-User-Id' } } },
    );
  });

  test('no page error and no request outside the server', () => {
    assert.deepEqual(s.problems, []);
  });
});
