/**
 * Every console page at 1280 and 800 px wide, in headless Chromium, with data on every page: a
 * screenshot of each (test/artifacts/layout-<page>-<width>.png), no horizontal overflow
 * (document.scrollWidth <= innerWidth) and a header on one line (every part of it inside the 48 px
 * bar, the admin-secret status on one line); at 800 px the navigation is a menu that works.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { helloSchema } from '../fixtures/remote/schemas.js';
import { startGraphQLServer, type GraphQLTestServer } from '../fixtures/remote/server.js';
import { ARTIFACTS, BROWSER_SKIP, openConsole, type ConsoleSession } from './browser.js';

const PAGES: Array<[name: string, path: string]> = [
  ['api-explorer', '/console/api-explorer'],
  ['data-schema', '/console/data/schema/public'],
  ['data-create-table', '/console/data/schema/public/create'],
  ['data-browse', '/console/data/schema/public/tables/article/browse'],
  ['data-insert', '/console/data/schema/public/tables/article/insert'],
  ['data-modify', '/console/data/schema/public/tables/article/modify'],
  ['data-relationships', '/console/data/schema/public/tables/article/relationships'],
  ['data-sql', '/console/data/sql'],
  ['permissions-overview', '/console/permissions'],
  ['permissions-form', '/console/permissions/public/article?role=user&op=select'],
  ['events', '/console/events'],
  ['events-trigger', '/console/events/article_created'],
  ['schedules', '/console/schedules'],
  ['schedules-cron', '/console/schedules/cron/hourly'],
  ['schedules-one-off', '/console/schedules/one-off'],
  ['actions', '/console/actions'],
  ['actions-definition', '/console/actions/login'],
  ['actions-codegen', '/console/actions/login/codegen'],
  ['remote-schemas', '/console/remote-schemas'],
  ['allow-list', '/console/allow-list'],
  ['metadata', '/console/metadata'],
];

interface Measure {
  scrollWidth: number;
  innerWidth: number;
  barHeight: number;
  /** parts of the header outside its bar */
  outside: string[];
  serverHeight: number;
  wrapped: string[];
}

describe('console layout at 1280 and 800 px', { skip: BROWSER_SKIP }, () => {
  let s: ConsoleSession;
  let remote: GraphQLTestServer;
  const report: Array<{ page: string; width: number } & Measure> = [];

  before(async () => {
    s = await openConsole();
    remote = await startGraphQLServer({ '/graphql': { schema: helloSchema() } });
    await s.admin('run_sql', {
      sql: `
      create table author (id serial primary key, name text not null);
      create table article (id serial primary key, title text not null, body text, author_id int references author (id), published_at timestamptz default now());
      insert into author (name) values ('Ada Lovelace'), ('Brian Kernighan');
      insert into article (title, body, author_id) select 'Article number ' || g, repeat('A long body of text. ', 12), 1 + g % 2 from generate_series(1, 40) g;`,
    });
    await s.admin('bulk', [
      { type: 'track_table', args: { table: 'author' } },
      { type: 'track_table', args: { table: 'article' } },
      { type: 'create_object_relationship', args: { table: 'article', name: 'author', using: { foreign_key_constraint_on: 'author_id' } } },
      {
        type: 'create_array_relationship',
        args: { table: 'author', name: 'articles', using: { foreign_key_constraint_on: { table: 'article', column: 'author_id' } } },
      },
      {
        type: 'create_select_permission',
        args: { table: 'article', role: 'user', permission: { columns: ['id', 'title'], filter: { author_id: { _eq: 'X-Svc-User-Id' } } } },
      },
      { type: 'create_select_permission', args: { table: 'author', role: 'editor-with-a-long-role-name', permission: { columns: '*', filter: {} } } },
      {
        type: 'create_event_trigger',
        args: { name: 'article_created', table: 'article', webhook: 'http://127.0.0.1:9/a-rather-long-webhook-path/that/goes/on', insert: { columns: '*' } },
      },
      { type: 'create_cron_trigger', args: { name: 'hourly', webhook: 'http://127.0.0.1:9/hourly', schedule: '0 * * * *', include_in_metadata: true } },
      { type: 'set_custom_types', args: { objects: [{ name: 'LoginResult', fields: [{ name: 'accessToken', type: 'String!' }] }] } },
      {
        type: 'create_action',
        args: {
          name: 'login',
          definition: { handler: 'http://127.0.0.1:9/login', output_type: 'LoginResult', arguments: [{ name: 'username', type: 'String!' }] },
        },
      },
      { type: 'add_remote_schema', args: { name: 'hello', definition: { url: `${remote.url}/graphql` } } },
      {
        type: 'create_query_collection',
        args: { name: 'app', definition: { queries: [{ name: 'articles', query: 'query articles { article { id title } }' }] } },
      },
      { type: 'add_collection_to_allowlist', args: { collection: 'app' } },
    ]);
  });
  after(async () => {
    if (report.length) writeFileSync(join(ARTIFACTS, 'layout.json'), `${JSON.stringify(report, null, 2)}\n`);
    await s?.close();
    await remote?.close();
  });

  const measure = () =>
    s.page.evaluate((): Measure => {
      const bar = document.querySelector('.topbar')!.getBoundingClientRect();
      const outside: string[] = [];
      for (const el of document.querySelectorAll<HTMLElement>('.topbar > *, .topbar nav > button, .topbar nav li, .server > *')) {
        const r = el.getBoundingClientRect();
        if (r.width === 0 && r.height === 0) continue; // hidden (the menu's list when it is closed)
        if (r.top < bar.top - 0.5 || r.bottom > bar.bottom + 0.5)
          outside.push(`${el.tagName.toLowerCase()}.${el.className}: ${el.textContent?.trim().slice(0, 30)}`);
      }
      // text that breaks onto a second line inside the header
      const wrapped = [...document.querySelectorAll<HTMLElement>('.topbar a, .topbar button, .topbar .server, .topbar .brand')]
        .filter((el) => el.getClientRects().length > 0 && el.getBoundingClientRect().height > 36)
        .map((el) => el.textContent?.trim() ?? '');
      return {
        scrollWidth: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
        innerWidth: window.innerWidth,
        barHeight: bar.height,
        outside,
        serverHeight: document.querySelector('.server')!.getBoundingClientRect().height,
        wrapped,
      };
    });

  for (const width of [1280, 800]) {
    test(`every page at ${width} px: no sideways scroll, the header on one line; screenshots`, async () => {
      const { page } = s;
      await page.setViewportSize({ width, height: 900 });
      const problems: string[] = [];
      for (const [name, path] of PAGES) {
        await s.open(path, () => page.locator('#page-title'));
        // the page's data is in (no "Loading …" left), then measure
        await page.waitForFunction(() => !document.querySelector('.loading'));
        if (name === 'api-explorer') await page.locator('.graphiql-query-editor .monaco-editor').waitFor();
        const m = await measure();
        report.push({ page: name, width, ...m });
        await s.shot(`layout-${name}-${width}`);
        if (m.scrollWidth > m.innerWidth) problems.push(`${name}: scrollWidth ${m.scrollWidth} > ${m.innerWidth}`);
        if (m.barHeight > 49) problems.push(`${name}: header ${m.barHeight} px high`);
        if (m.outside.length) problems.push(`${name}: outside the header bar: ${m.outside.join('; ')}`);
        if (m.wrapped.length) problems.push(`${name}: wrapped in the header: ${m.wrapped.join('; ')}`);
        if (m.serverHeight > 26) problems.push(`${name}: the server status is ${m.serverHeight} px high`);
      }
      assert.deepEqual(problems, []);
    });
  }

  test('at 800 px the navigation is a menu: it opens, lists every page, and goes where chosen', async () => {
    const { page } = s;
    await page.setViewportSize({ width: 800, height: 900 });
    await s.open('/console/data/schema/public');
    const toggle = page.getByRole('button', { name: 'Data' });
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    assert.equal(await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Events' }).isVisible(), false);
    await toggle.click();
    assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
    const links = await page.getByRole('navigation', { name: 'Pages' }).getByRole('link').allTextContents();
    assert.deepEqual(links, ['API explorer', 'Data', 'Permissions', 'Events', 'Schedules', 'Actions', 'Remote schemas', 'Allow list', 'Metadata']);
    await s.shot('layout-menu-800');
    const m = await measure();
    assert.ok(m.scrollWidth <= m.innerWidth, 'the open menu does not widen the page');
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Events' }).click();
    await page.getByRole('heading', { name: 'Event triggers', exact: true, level: 1 }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Events' }).getAttribute('aria-expanded'), 'false', 'closed after navigating');
    await page.getByRole('button', { name: 'Events' }).click();
    await page.keyboard.press('Escape');
    assert.equal(await page.getByRole('button', { name: 'Events' }).getAttribute('aria-expanded'), 'false', 'Escape closes it');
  });

  test('the sign-in page at 800 px', async () => {
    const page = await s.context.newPage();
    try {
      await page.setViewportSize({ width: 800, height: 900 });
      await page.goto(`${s.server.url}/console`);
      await page.getByLabel('Admin secret').waitFor();
      await page.screenshot({ path: join(ARTIFACTS, 'layout-signin-800.png'), fullPage: true });
      const w = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
      assert.ok(w[0]! <= w[1]!, `scrollWidth ${w[0]} > ${w[1]}`);
    } finally {
      await page.close();
    }
  });

  test('without an admin secret: the warning sits in the one-line header at 800 px', async () => {
    const open = await openConsole({ secret: null, viewport: { width: 800, height: 900 } });
    try {
      await open.open('/console/data/schema/public');
      const badge = open.page.locator('.server .warn');
      assert.equal(await badge.textContent(), 'no admin secret');
      const m = await open.page.evaluate(() => ({
        bar: document.querySelector('.topbar')!.getBoundingClientRect().height,
        server: document.querySelector('.server')!.getBoundingClientRect().height,
        scroll: document.documentElement.scrollWidth,
        width: window.innerWidth,
      }));
      assert.ok(m.bar <= 49 && m.server <= 26, JSON.stringify(m));
      assert.ok(m.scroll <= m.width, JSON.stringify(m));
      await open.shot('layout-no-secret-800');
      assert.deepEqual(open.problems, []);
    } finally {
      await open.close();
    }
  });

  test('no page error and no request outside the server', () => {
    assert.deepEqual(s.problems, []);
  });
});
