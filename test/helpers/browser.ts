/**
 * A real browser for the console suites: Debian's Chromium driven by playwright-core, headless,
 * with the network features a closed machine refuses turned off. Screenshots go under
 * test-output/console/; every page's console errors and uncaught exceptions are collected so a
 * suite can assert there were none.
 *
 *   const browser = await launchBrowser(t);
 *   const page = await browser.page(gw.url, { width: 1280, height: 800 });
 *   ...
 *   t.same(browser.problems, []);
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { Teardown } from './gateway.js';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

export function chromiumPath(): string {
  const path = process.env.CHROMIUM_PATH ?? CANDIDATES.find((p) => existsSync(p));
  if (path === undefined) throw new Error('No Chromium found (apt-get install -y chromium, or set CHROMIUM_PATH); .ci/run installs it.');
  return path;
}

/** Where screenshots go (kept by CI as test output, not committed). */
export const SCREENSHOT_DIR = join(process.cwd(), 'test-output', 'console');

export interface TestBrowser {
  browser: Browser;
  /** Console errors and page errors seen on any page, as `url: message`. */
  problems: string[];
  page(viewport?: { width: number; height: number }): Promise<Page>;
  screenshot(page: Page, name: string): Promise<string>;
}

export async function launchBrowser(t: Teardown): Promise<TestBrowser> {
  const browser = await chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  t.teardown(() => browser.close());
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const problems: string[] = [];
  return {
    browser,
    problems,
    async page(viewport = { width: 1280, height: 800 }) {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      page.on('console', (msg) => {
        if (msg.type() === 'error') problems.push(`${page.url()}: ${msg.text()}`);
      });
      page.on('pageerror', (err) => problems.push(`${page.url()}: ${err.message}`));
      page.on('dialog', (d) => void d.accept());
      return page;
    },
    async screenshot(page, name) {
      const path = join(SCREENSHOT_DIR, `${name}.png`);
      await page.screenshot({ path, fullPage: false });
      return path;
    },
  };
}

/** Opens the console at `baseUrl` and signs in with `key`; resolves once the signed-in shell shows (any width). */
export async function signIn(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/console/`);
  await page.getByLabel('API key or JWT').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}
