/**
 * Every console page, in a real browser, for what an operator without a mouse or on a phone
 * needs: each page has its heading, every control in it has an accessible name (read from the
 * accessibility tree), the skip link and the menu work from the keyboard, and at a phone's width
 * no page scrolls sideways. Pages render with data in them (a workspace, a virtual key, a config,
 * a policy, traffic), and none logs a console error.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { ADMIN_KEY, direct, startGateway, startMock } from './helpers/gateway.js';
import { launchBrowser, signIn } from './helpers/browser.js';
import { REPO } from './helpers/process.js';

const DEFAULT_YAML = readFileSync(join(REPO, 'config', 'gateway.yaml'), 'utf8').replace(/^server:\n(\s+.*\n)+/m, 'server: {host: 127.0.0.1, port: 0}\n');

/** Every view: its address and its heading. */
const VIEWS: Array<[path: string, heading: string]> = [
  ['/', 'Start'],
  ['/overview', 'Overview'],
  ['/logs', 'Logs'],
  ['/api-keys', 'API keys'],
  ['/workspaces', 'Workspaces'],
  ['/users', 'Users & invites'],
  ['/virtual-keys', 'Virtual keys'],
  ['/integrations', 'Integrations'],
  ['/providers', 'Providers'],
  ['/configs', 'Configs'],
  ['/policies', 'Policies'],
  ['/guardrails', 'Guardrails'],
  ['/audit', 'Audit log'],
  ['/pricing', 'Pricing & models'],
];

/** Controls in an aria snapshot with no name: `- textbox` rather than `- textbox "Status"`. */
const UNNAMED = /^\s*- (textbox|combobox|checkbox|button|spinbutton|radio|slider|switch|searchbox|link|tab|meter)( \[[^\]]*\])*:?\s*$/gm;

async function open(page: Page, url: string, path: string, heading: string): Promise<void> {
  await page.goto(`${url}/console/#${path}`);
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  for (let i = 0; i < 200 && (await page.locator('.loading').count()) > 0; i++) await page.waitForTimeout(50);
}

t.test('every page: named controls, keyboard, phone width, no console errors', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: DEFAULT_YAML, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const admin = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<number> => {
    const res = await fetch(`${gw.url}${path}`, {
      method,
      headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    await res.arrayBuffer();
    return res.status;
  };
  t.equal(await admin('POST', '/v1/admin/workspaces', { name: 'Team', slug: 'team' }), 200);
  t.equal(await admin('POST', '/v1/virtual-keys', { name: 'Main', slug: 'main', provider: 'openai', key: 'sk-a11y-0123456789', custom_host: `${mock.url}/v1` }), 200);
  t.equal(await admin('POST', '/v1/configs', { name: 'Fallback', config: { strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'main' }] } }), 200);
  t.equal(await admin('POST', '/v1/policies/usage-limits', { name: 'Budget', conditions: [{ key: 'workspace_id', value: '*' }], group_by: [{ key: 'api_key' }], type: 'tokens', credit_limit: 1000 }), 200);
  for (let i = 0; i < 3; i++) {
    t.equal(await admin('POST', '/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, direct(mock)), 200);
  }

  const browser = await launchBrowser(t);

  if (browser === null) return;
  const page = await browser.page({ width: 1280, height: 800 });
  await signIn(page, gw.url, ADMIN_KEY);

  for (const [path, heading] of VIEWS) {
    await open(page, gw.url, path, heading);
    const tree = await page.locator('body').ariaSnapshot();
    const unnamed = [...tree.matchAll(UNNAMED)].map((m) => m[0].trim());
    t.same(unnamed, [], `${heading}: every control has a name`);
    t.equal(await page.getByRole('heading', { level: 1 }).count(), 1, `${heading}: one page heading`);
  }

  // Keyboard: the first Tab reaches the skip link, Enter moves focus into the page.
  await open(page, gw.url, '/configs', 'Configs');
  await page.keyboard.press('Tab');
  t.equal(await page.evaluate('document.activeElement && document.activeElement.textContent'), 'Skip to content', 'the first stop is the skip link');
  await page.keyboard.press('Enter');
  t.equal(await page.evaluate('document.activeElement && document.activeElement.id'), 'main', 'Enter moves focus to the page');
  // From the navigation, a page opens with Enter.
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Logs' }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Logs', level: 1 }).waitFor();
  t.pass('a navigation link opens its page from the keyboard');

  // A phone: the navigation folds behind Menu, and no page scrolls sideways.
  const phone = await browser.page({ width: 390, height: 844 });
  await signIn(phone, gw.url, ADMIN_KEY);
  const menu = phone.getByRole('button', { name: 'Menu' });
  const nav = phone.getByRole('navigation', { name: 'Console' });
  t.notOk(await nav.isVisible(), 'the navigation is folded');
  t.equal(await menu.getAttribute('aria-expanded'), 'false');
  await menu.click();
  t.ok(await nav.isVisible(), 'Menu shows it');
  t.equal(await menu.getAttribute('aria-expanded'), 'true');
  await nav.getByRole('link', { name: 'Policies' }).click();
  await phone.getByRole('heading', { name: 'Policies', level: 1 }).waitFor();
  // The menu folds once the new page has rendered (an effect after paint): wait for it.
  await t.resolves(nav.waitFor({ state: 'hidden', timeout: 5000 }), 'choosing a page folds it again');
  for (const [path, heading] of VIEWS) {
    await open(phone, gw.url, path, heading);
    const overflow = (await phone.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
    t.ok(overflow <= 0, `${heading}: no sideways scroll at 390 px (${overflow} px over)`);
  }
  await browser.screenshot(phone, 'pricing-phone');

  t.same(browser.problems, [], 'no page logged a console error');
});
