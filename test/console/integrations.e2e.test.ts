/**
 * The console's pages for what lives outside the database, in headless Chromium against a real
 * Svc: an action defined from SDL and called through /v1/graphql (its handler a real HTTP server
 * on 127.0.0.1), its Node.js handler sample, then edited; an event trigger edited so that the next
 * delivery goes to the new webhook (real receivers); a cron trigger and a remote schema edited; query
 * collections and the allow-list. Every flow ends in an assertion on the metadata or on what the
 * real servers received.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from '../helpers/db.js';
import { Receiver } from '../helpers/receiver.js';
import { helloSchema } from '../fixtures/remote/schemas.js';
import { startGraphQLServer, type GraphQLTestServer } from '../fixtures/remote/server.js';
import { BROWSER_SKIP, graphqlAs, openConsole, type ConsoleSession } from './browser.js';

describe('console: actions, triggers, remote schemas, allow-list', { skip: BROWSER_SKIP }, () => {
  let s: ConsoleSession;
  let rx1: Receiver;
  let rx2: Receiver;
  let remote: GraphQLTestServer;
  const metadata = () => s.admin('export_metadata', {});

  before(async () => {
    s = await openConsole();
    rx1 = await new Receiver().start();
    rx2 = await new Receiver().start();
    remote = await startGraphQLServer({ '/graphql': { schema: helloSchema() } });
    await s.admin('run_sql', { sql: 'create table note (id serial primary key, body text not null)' });
    await s.admin('track_table', { table: 'note' });
  });
  after(async () => {
    await s?.close();
    await rx1?.close();
    await rx2?.close();
    await remote?.close();
  });

  test('Actions: define one from SDL with a handler; allow a role; the role calls it and the handler answers', async () => {
    const { page } = s;
    rx1.reset((r) => ({ status: 200, body: JSON.stringify({ accessToken: `tok-${r.body.input.username}`, expiresIn: 60 }) }));
    await s.open('/console/actions', () => page.getByRole('form', { name: 'Create an action' }));
    const form = page.getByRole('form', { name: 'Create an action' });
    await form.getByLabel(/^Action definition/).fill('type Mutation {\n  login(username: String!, password: String!): LoginResult\n}');
    await form.getByLabel(/^Type definitions/).fill('type LoginResult {\n  accessToken: String!\n  expiresIn: Int\n}');
    // a mistake in the SDL is named with its line and column, and nothing is sent
    await form.getByLabel(/^Action definition/).fill('type Mutation {\n  login(username: String!, password: String!) LoginResult\n}');
    await s.alert('action definition: Expected ":", found Name "LoginResult". (line 2, column 47)');
    await form.getByLabel(/^Action definition/).fill('type Mutation {\n  login(username: String!, password: String!): LoginResult\n}');
    await form.getByLabel(/^Handler URL/).fill(`${rx1.url}/login`);
    await form.getByRole('button', { name: 'Create action' }).click();
    await s.status('Created action login');
    await page.getByRole('heading', { name: 'Action login' }).waitFor();

    const md = await metadata();
    assert.deepEqual(md.custom_types.objects, [
      {
        name: 'LoginResult',
        fields: [
          { name: 'accessToken', type: 'String!' },
          { name: 'expiresIn', type: 'Int' },
        ],
      },
    ]);
    assert.deepEqual(md.actions[0].definition, {
      arguments: [
        { name: 'username', type: 'String!' },
        { name: 'password', type: 'String!' },
      ],
      output_type: 'LoginResult',
      headers: [],
      forward_client_headers: false,
      handler: `${rx1.url}/login`,
      type: 'mutation',
      kind: 'synchronous',
    });

    await page.getByRole('navigation', { name: 'Action' }).getByRole('link', { name: 'Codegen' }).click();
    const code = (await page.getByLabel('handler code').textContent()) ?? '';
    assert.match(code, /app\.post\("\/login", async \(req, res\) => \{/);
    assert.match(code, /const \{ username, password \} = req\.body\.input;/);
    assert.match(code, /return res\.json\(\{ accessToken: '<String>', expiresIn: 0 \}\);/);
    await s.shot('action-codegen');

    await page.getByRole('navigation', { name: 'Action' }).getByRole('link', { name: 'Permissions' }).click();
    await page.getByLabel('Role', { exact: true }).fill('user');
    await page.getByRole('button', { name: 'Allow role' }).click();
    await s.status('Allowed user');

    const r = await graphqlAs(s, 'mutation { login(username: "ann", password: "pw") { accessToken expiresIn } }', {
      'x-svc-role': 'user',
      'x-svc-user-id': '7',
    });
    assert.deepEqual(r, { data: { login: { accessToken: 'tok-ann', expiresIn: 60 } } });
    const [call] = await rx1.waitFor(1);
    assert.equal(call!.path, '/login');
    assert.deepEqual(call!.body.input, { username: 'ann', password: 'pw' });
    assert.equal(call!.body.session_variables['x-svc-user-id'], '7');
  });

  test('Actions: edit the SDL and the handler; the next call goes to the new handler with the new argument', async () => {
    const { page } = s;
    rx2.reset((r) => ({ status: 200, body: JSON.stringify({ accessToken: `v2-${r.body.input.username}-${r.body.input.remember}` }) }));
    await page.getByRole('navigation', { name: 'Action' }).getByRole('link', { name: 'Definition' }).click();
    const form = page.getByRole('form', { name: 'Edit action login' });
    const sdl = form.getByLabel(/^Action definition/);
    assert.match(await sdl.inputValue(), /login\(\n {4}username: String!\n {4}password: String!\n {2}\): LoginResult/);
    await sdl.fill('type Mutation {\n  login(username: String!, password: String!, remember: Boolean): LoginResult\n}');
    await form.getByLabel(/^Handler URL/).fill(`${rx2.url}/v2/login`);
    await form.getByRole('button', { name: 'Save action' }).click();
    await s.status('Saved action login');
    const r = await graphqlAs(s, 'mutation { login(username: "bob", password: "pw", remember: true) { accessToken } }', { 'x-svc-role': 'user' });
    assert.deepEqual(r, { data: { login: { accessToken: 'v2-bob-true' } } });
    const [call] = await rx2.waitFor(1);
    assert.equal(call!.path, '/v2/login');
    assert.equal(rx1.requests.length, 1, 'nothing more for the old handler');
    assert.deepEqual((await metadata()).actions[0].permissions, [{ role: 'user' }], 'the permission stays');
  });

  test("Events: edit a trigger's webhook; the next delivery goes to the new one", async () => {
    const { page } = s;
    rx1.reset();
    rx2.reset();
    await s.admin('create_event_trigger', { name: 'note_created', table: 'note', webhook: rx1.url, insert: { columns: '*' } });
    await sql(s.server.databaseUrl, "insert into note (body) values ('before the edit')");
    const [before] = await rx1.waitFor(1);
    assert.equal(before!.body.event.data.new.body, 'before the edit');

    await s.open('/console/events/note_created', () => page.getByText('Edit trigger'));
    await page.getByText('Edit trigger').click();
    const form = page.getByRole('form', { name: 'Edit event trigger note_created' });
    await form.getByLabel(/^Webhook URL/).fill(`${rx2.url}/hook`);
    await form.getByLabel('Update').check();
    await form.getByRole('group', { name: 'Header 1' }).waitFor({ state: 'detached' });
    await form.getByRole('button', { name: 'Add header' }).click();
    await form.getByRole('group', { name: 'Header 1' }).getByLabel('Name').fill('X-From');
    await form.getByRole('group', { name: 'Header 1' }).getByLabel('Value').fill('console');
    await form.getByRole('button', { name: 'Save event trigger' }).click();
    await s.status('Saved event trigger note_created');
    await s.shot('event-trigger-edit');

    await sql(s.server.databaseUrl, "insert into note (body) values ('after the edit')");
    const [after] = await rx2.waitFor(1);
    assert.equal(after!.path, '/hook');
    assert.equal(after!.body.event.data.new.body, 'after the edit');
    assert.equal(after!.headers['x-from'], 'console');
    assert.equal(rx1.requests.length, 1, 'the old webhook got nothing more');
    const t = (await metadata()).tables.find((x: any) => x.table.name === 'note');
    assert.equal(t.event_triggers[0].webhook, `${rx2.url}/hook`);
    assert.deepEqual(Object.keys(t.event_triggers[0].definition).sort(), ['enable_manual', 'insert', 'update']);
  });

  test('Schedules: edit a cron trigger (schedule, webhook, comment)', async () => {
    const { page } = s;
    await s.admin('create_cron_trigger', { name: 'nightly', webhook: rx1.url, schedule: '0 3 * * *', include_in_metadata: true, payload: { a: 1 } });
    await s.open('/console/schedules/cron/nightly', () => page.getByText('Edit trigger'));
    await page.getByText('Edit trigger').click();
    const form = page.getByRole('form', { name: 'Edit cron trigger nightly' });
    assert.deepEqual(JSON.parse(await form.getByLabel(/^Payload/).inputValue()), { a: 1 });
    await form.getByLabel(/^Cron schedule/).fill('30 4 * * *');
    await form.getByLabel('Webhook URL').fill(rx2.url);
    await form.getByLabel('Comment').fill('moved');
    await form.getByRole('button', { name: 'Save cron trigger' }).click();
    await s.status('Saved cron trigger nightly');
    const cron = (await metadata()).cron_triggers.find((c: any) => c.name === 'nightly');
    assert.deepEqual(cron, { name: 'nightly', webhook: rx2.url, schedule: '30 4 * * *', include_in_metadata: true, payload: { a: 1 }, comment: 'moved' });
    const times = await sql(
      s.server.databaseUrl,
      "select distinct extract(hour from scheduled_time at time zone 'UTC')::int as h, extract(minute from scheduled_time)::int as m from svc_catalog.hdb_cron_events where trigger_name = 'nightly' and status = 'scheduled'",
    );
    assert.deepEqual(times, [{ h: 4, m: 30 }], 'the upcoming events follow the new schedule');
  });

  test("Remote schemas: the table's columns are labelled; edit one (timeout, a header); the header reaches the remote", async () => {
    const { page } = s;
    await s.admin('add_remote_schema', { name: 'hello', definition: { url: `${remote.url}/graphql` } });
    await s.open('/console/remote-schemas', () => page.getByRole('button', { name: 'Edit hello' }));
    const heads = await page
      .getByRole('region', { name: /remote schema/ })
      .locator('thead th')
      .allTextContents();
    assert.deepEqual(heads, ['Actions', 'name', 'url', 'forwards client headers', 'timeout (s)', 'comment']);
    await page.getByRole('button', { name: 'Edit hello' }).click();
    const form = page.getByRole('form', { name: 'Edit remote schema hello' });
    await form.getByLabel('Timeout (s)').fill('7');
    await form.getByRole('button', { name: 'Add header' }).click();
    await form.getByRole('group', { name: 'Header 1' }).getByLabel('Name').fill('X-Test');
    await form.getByRole('group', { name: 'Header 1' }).getByLabel('Value').fill('yes');
    await form.getByLabel('Comment').fill('edited');
    await form.getByRole('button', { name: 'Save remote schema' }).click();
    await s.status('Saved remote schema hello');
    await s.shot('remote-schemas-edit');
    const rs = (await metadata()).remote_schemas[0];
    assert.deepEqual(rs, {
      name: 'hello',
      definition: { url: `${remote.url}/graphql`, forward_client_headers: false, timeout_seconds: 7, headers: [{ name: 'X-Test', value: 'yes' }] },
      comment: 'edited',
    });
    assert.deepEqual(await graphqlAs(s, '{ echoHeader(name: "X-Test") }', {}), { data: { echoHeader: 'yes' } });
  });

  test('Allow list: a collection in the allow-list with a checked query; removed from the list', async () => {
    const { page } = s;
    await s.open('/console/allow-list', () => page.getByRole('form', { name: 'Create a collection' }));
    await page.getByLabel('Collection name').fill('app');
    await page.getByRole('button', { name: 'Create collection' }).click();
    await s.status('Created collection app');
    const add = page.getByRole('form', { name: 'Add a query to app' });
    await add.getByLabel('Query name').fill('notes');
    await add.getByRole('textbox', { name: /^Query \(/ }).fill('query notes { note { id body }');
    await add.getByRole('button', { name: 'Add query' }).click();
    await s.alert('not valid GraphQL: Expected Name, found <EOF>.');
    assert.deepEqual((await metadata()).query_collections[0].definition.queries, [], 'nothing sent');
    await add.getByRole('textbox', { name: /^Query \(/ }).fill('query notes { note { id body } }');
    await add.getByRole('button', { name: 'Add query' }).click();
    await s.status('Added notes to app');
    await s.shot('allow-list');
    let md = await metadata();
    assert.deepEqual(md.query_collections, [{ name: 'app', definition: { queries: [{ name: 'notes', query: 'query notes { note { id body } }' }] } }]);
    assert.deepEqual(md.allowlist, [{ collection: 'app' }]);
    await page.getByRole('button', { name: 'Remove from allow-list' }).click();
    await s.status('Removed app from the allow-list');
    md = await metadata();
    assert.equal(md.allowlist, undefined);
    assert.equal(md.query_collections.length, 1);
  });

  test('no page error and no request outside the server', () => {
    assert.deepEqual(s.problems, []);
  });
});
