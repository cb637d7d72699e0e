/**
 * The console in headless Chromium (Debian's /usr/bin/chromium driven by playwright-core) against a
 * real Svc with an admin secret on a fresh database, for the browser tests of test/console/. The
 * console is built first (a hash check when it is up to date); every request that leaves the
 * server is refused and recorded, as are page errors. Screenshots go to test/artifacts/ (not
 * committed). Without Chromium the tests are skipped with BROWSER_SKIP's message.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { ROOT } from '../helpers/process.js';
import { query, startTestServer, type TestServer } from '../helpers/server.js';

export const CHROMIUM = '/usr/bin/chromium';
export const BROWSER_SKIP: string | false = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} not found: install Debian's chromium package (apt-get install -y chromium; .ci/run does) to run the browser tests`;
export const ARTIFACTS = join(ROOT, 'test', 'artifacts');

export interface ConsoleSession {
  server: TestServer;
  /** where the console is served: the server, or the front given to openConsole (svc console) */
  url: string;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** null: a server without an admin secret */
  secret: string | null;
  /** page errors and requests outside the server, in order */
  problems: string[];
  /** a full-page screenshot to test/artifacts/<name>.png */
  shot(name: string): Promise<void>;
  /** waits for a status (role=status) message */
  status(text: string | RegExp): Promise<void>;
  /** waits for an alert (role=alert) with this text */
  alert(text: string | RegExp): Promise<Locator>;
  /** /v1/query as admin */
  admin(type: string, args: unknown): Promise<any>;
  /** opens a console path (signed in already) and waits for `ready` */
  open(path: string, ready?: () => Locator): Promise<void>;
  close(): Promise<void>;
}

export async function openConsole(
  opts: {
    /** the server's admin secret (default console-test-secret); null: none, nothing to sign in to */
    secret?: string | null;
    viewport?: { width: number; height: number };
    server?: Parameters<typeof startTestServer>[0];
    /** false: stay on no page (the caller signs in) */
    signIn?: boolean;
    /** a server in front of Svc that serves the console (svc console), started once Svc is up */
    front?: (server: TestServer) => Promise<{ url: string; close(): Promise<void> }>;
  } = {},
): Promise<ConsoleSession> {
  const built = spawnSync(process.execPath, [join(ROOT, 'scripts', 'console.mjs'), '--quiet'], {
    cwd: ROOT,
    stdio: 'pipe',
    encoding: 'utf8',
    timeout: 300_000,
  });
  assert.equal(built.status, 0, `console build failed:\n${built.stderr}`);
  mkdirSync(ARTIFACTS, { recursive: true });
  const secret = opts.secret === null ? null : (opts.secret ?? 'console-test-secret');
  const server = await startTestServer({ ...(secret === null ? {} : { adminSecret: secret }), enableConsole: true, ...opts.server });
  const adminHeaders: Record<string, string> = secret === null ? {} : { 'x-svc-admin-secret': secret };
  const problems: string[] = [];
  let browser: Browser | undefined;
  let front: { url: string; close(): Promise<void> } | undefined;
  try {
    front = opts.front ? await opts.front(server) : undefined;
    const base = front?.url ?? server.url;
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      timeout: 60_000,
    });
    const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1280, height: 900 } });
    context.setDefaultTimeout(20_000);
    // nothing may leave the server: no CDN, no fonts from elsewhere
    await context.route(
      (url) => !url.href.startsWith(base) && !url.href.startsWith('data:') && !url.href.startsWith('blob:'),
      (route) => {
        problems.push(`request outside the server: ${route.request().url()}`);
        return route.abort();
      },
    );
    const page = await context.newPage();
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    if (opts.signIn !== false && secret !== null) {
      // sign in once: the secret lives in the tab's sessionStorage
      await page.goto(`${base}/console`);
      await page.getByLabel('Admin secret').fill(secret);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('navigation', { name: 'Pages' }).waitFor();
    }
    const b = browser;
    return {
      server,
      url: base,
      browser: b,
      context,
      page,
      secret,
      problems,
      shot: async (name) => {
        await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
      },
      status: async (text) => {
        await page.getByRole('status').filter({ hasText: text }).first().waitFor();
      },
      alert: async (text) => {
        const l = page.getByRole('alert').filter({ hasText: text }).first();
        await l.waitFor();
        return l;
      },
      admin: (type, args) => query(server.url, { type, args }, adminHeaders),
      open: async (path, ready) => {
        await page.goto(base + path);
        await (ready ? ready() : page.locator('#page-title')).first().waitFor();
      },
      close: async () => {
        await b.close();
        await front?.close();
        await server.close();
      },
    };
  } catch (e) {
    await browser?.close();
    await front?.close();
    await server.close();
    throw e;
  }
}

/** GraphQL as a role (with the admin secret, as the console's API explorer sends it). */
export async function graphqlAs(s: ConsoleSession, q: string, headers: Record<string, string>, variables?: unknown): Promise<any> {
  const res = await fetch(`${s.server.url}/v1/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(s.secret === null ? {} : { 'x-svc-admin-secret': s.secret }), ...headers },
    body: JSON.stringify({ query: q, variables }),
  });
  return res.json();
}
