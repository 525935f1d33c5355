/**
 * A real browser for the console suites: Debian's Chromium driven by playwright-core, headless,
 * with the network features a closed machine refuses turned off. Screenshots go under
 * test-output/console/; every page's console errors and uncaught exceptions are collected so a
 * suite can assert there were none.
 *
 *   const browser = await launchBrowser(t);
 *   if (browser === null) return;      // no Chromium: said plainly (a failure with GATEWAY_REQUIRE_SERVICES=1)
 *   const page = await browser.page(gw.url, { width: 1280, height: 800 });
 *   ...
 *   t.same(browser.problems, []);
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { Teardown } from './gateway.js';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

export function chromiumPath(): string | undefined {
  return process.env.CHROMIUM_PATH || CANDIDATES.find((p) => existsSync(p));
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

/**
 * A browser, or null when no Chromium is installed: then the suite says what to install and ends.
 * With GATEWAY_REQUIRE_SERVICES=1 (CI, which installs it) a missing Chromium fails the run.
 */
export async function launchBrowser(t: Teardown & { fail(message: string): void; comment(message: string): void }): Promise<TestBrowser | null> {
  const executablePath = chromiumPath();
  if (executablePath === undefined) {
    const message = 'this suite needs Chromium (apt-get install -y chromium, or set CHROMIUM_PATH)';
    if (process.env.GATEWAY_REQUIRE_SERVICES === '1') t.fail(`${message} (GATEWAY_REQUIRE_SERVICES=1)`);
    else t.comment(`NOT RUN: ${message}`);
    return null;
  }
  const browser = await chromium.launch({
    executablePath,
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
