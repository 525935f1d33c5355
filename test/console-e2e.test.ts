/**
 * The operator's whole loop in the console, in a real browser against the default pipeline and
 * the mock upstream, each step through the UI and checked against what the gateway then does:
 *   1. sign in with the admin key;
 *   2. create a workspace and a workspace key (its secret shown once);
 *   3. send traffic through the gateway with that key;
 *   4. see the records in Logs and the numbers move in Overview;
 *   5. open a record;
 *   6. create a config with a validation error, then fix it;
 *   7. set a rate limit and watch a 429 appear in Logs;
 *   8. revoke the key and see the next call refused.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { ADMIN_KEY, direct, startGateway, startMock, type MockUpstream, type StartedGateway } from './helpers/gateway.js';
import { launchBrowser, signIn } from './helpers/browser.js';
import { REPO } from './helpers/process.js';

/** The repository's default pipeline (what `npm start` runs), on a free loopback port. */
const DEFAULT_YAML = readFileSync(join(REPO, 'config', 'gateway.yaml'), 'utf8').replace(/^server:\n(\s+.*\n)+/m, 'server: {host: 127.0.0.1, port: 0}\n');

async function chat(gw: StartedGateway, mock: MockUpstream, key: string): Promise<{ status: number; code?: string }> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...direct(mock), 'x-gateway-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello from the console test' }] }),
  });
  const body = (await res.json()) as { error?: { code?: string } };
  return { status: res.status, code: body.error?.code };
}

async function go(page: Page, gw: StartedGateway, view: string, heading: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: view, exact: true }).click();
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  t.match(page.url(), `${gw.url}/console/#/`);
}

t.test('the operator loop: workspace, key, traffic, logs, overview, config, rate limit, revoke', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: DEFAULT_YAML, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const browser = await launchBrowser(t);
  if (browser === null) return;
  const page = await browser.page();

  // 1. Sign in.
  await signIn(page, gw.url, ADMIN_KEY);
  await page.getByRole('heading', { name: 'Start', level: 1 }).waitFor();

  // Overview before any traffic: the empty state says what to do.
  await go(page, gw, 'Overview', 'Overview');
  await page.getByText('No traffic in this range.').waitFor();

  // 2. A workspace, then a key in it.
  await go(page, gw, 'Workspaces', 'Workspaces');
  await page.getByRole('button', { name: 'Create workspace' }).click();
  let dialog = page.getByRole('dialog', { name: 'Create a workspace' });
  await dialog.getByLabel('Name', { exact: true }).fill('Search team');
  await dialog.getByLabel('Slug').fill('search');
  await dialog.getByRole('button', { name: 'Create' }).click();
  dialog = page.getByRole('dialog', { name: 'Workspace' });
  await dialog.getByRole('heading', { name: 'Search team' }).waitFor();
  await dialog.getByRole('button', { name: 'Close' }).click();
  const workspace = gw.store.c.workspaces.list({ filter: (w) => w.slug === 'search' }).items[0];
  t.ok(workspace, 'the gateway holds the workspace');

  await go(page, gw, 'API keys', 'API keys');
  await page.getByRole('button', { name: 'Create key' }).click();
  dialog = page.getByRole('dialog', { name: 'Create an API key' });
  await dialog.getByLabel('Name', { exact: true }).fill('search-app');
  await dialog.getByLabel('Kind', { exact: true }).selectOption('workspace-service');
  await dialog.getByLabel('Workspace', { exact: true }).selectOption({ label: 'search' });
  await dialog.getByRole('button', { name: 'Model calls only' }).click();
  await dialog.getByRole('group', { name: 'Logs' }).getByLabel('list').check();
  await dialog.getByRole('button', { name: 'Create', exact: true }).click();
  const secret = (await page.getByTestId('secret').innerText()).trim();
  t.match(secret, /^\S{20,}$/, 'the new key is shown once');
  const stored = gw.store.c.apiKeys.list({ filter: (k) => k.name === 'search-app' }).items[0]!;
  t.equal(stored.workspace_id, workspace!.id, 'in the workspace');
  t.same([...stored.scopes].sort(), ['completions.write', 'logs.list'], 'with the scopes ticked');
  await page.getByRole('cell', { name: 'search-app' }).waitFor();
  await browser.screenshot(page, 'api-keys');
  t.notMatch(await page.locator('table').innerText(), secret, 'the list shows the key masked');

  // 3. Traffic through the gateway with the new key.
  for (let i = 0; i < 3; i++) t.equal((await chat(gw, mock, secret)).status, 200, `call ${i + 1} answered`);

  // 4. The records in Logs, the numbers in Overview.
  await go(page, gw, 'Logs', 'Logs');
  const rows = page.getByRole('table', { name: 'Request logs' }).locator('tbody tr');
  // Records reach the log store in batches: refresh until the batch has landed.
  for (let i = 0; i < 100 && (await rows.count()) < 3; i++) {
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.waitForTimeout(100);
  }
  t.equal(await rows.count(), 3, 'the three calls are listed');
  t.match(await rows.first().innerText(), /200[\s\S]*gpt-4o-mini/);

  await go(page, gw, 'Overview', 'Overview');
  const requests = page.getByRole('list', { name: 'Totals' }).getByRole('listitem').filter({ hasText: 'Requests' });
  await requests.waitFor();
  t.match(await requests.innerText(), /Requests\s*3\b/, 'the overview counts them');

  // 5. Open a record.
  await go(page, gw, 'Logs', 'Logs');
  await rows.first().getByRole('link').first().click();
  await page.waitForURL(/#\/logs\/[0-9a-f-]{36}/);
  await page.locator('main').getByText(stored.id).first().waitFor();
  const record = await page.locator('main').innerText();
  t.match(record, /gpt-4o-mini/, 'the record shows its model');
  t.match(record, stored.id, 'and the key that sent it');
  await browser.screenshot(page, 'e2e-record');

  // 6. A config with a validation error, then fixed.
  await go(page, gw, 'Configs', 'Configs');
  await page.getByRole('link', { name: 'New config' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Search routing');
  await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'search' });
  const editor = page.getByLabel('Config JSON', { exact: true });
  await editor.fill(JSON.stringify({ strategy: { mode: 'fastest' }, targets: [{ provider: 'openai', api_key: 'sk-x' }] }, null, 2));
  const problems = page.getByRole('list', { name: 'Problems' });
  await problems.getByText('config.strategy.mode', { exact: true }).waitFor();
  const save = page.getByRole('button', { name: 'Save config' });
  t.ok(await save.isDisabled(), 'an invalid config cannot be saved');
  await editor.fill(JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: 'sk-x' }] }, null, 2));
  await page.getByTestId('check-status').getByText('✓ Valid').waitFor();
  await save.click();
  await page.getByRole('heading', { name: 'Search routing', level: 1 }).waitFor();
  t.equal(gw.store.c.configs.list({ filter: (c) => c.name === 'Search routing' }).items.length, 1, 'the fixed config is saved');

  // 7. A rate limit on the workspace; the next calls pass it and a 429 shows in Logs.
  await go(page, gw, 'Policies', 'Policies');
  await page.getByRole('button', { name: 'New rate limit' }).click();
  dialog = page.getByRole('dialog', { name: 'New rate limit' });
  await dialog.getByLabel('Name').fill('Search: 2 a minute');
  await dialog.getByLabel('Workspace', { exact: true }).selectOption({ label: 'search' });
  await dialog.getByLabel('Group by 1', { exact: true }).fill('api_key');
  await dialog.getByLabel('Limit').fill('2');
  await dialog.getByLabel('Per').selectOption('rpm');
  await dialog.getByRole('button', { name: 'Create rate limit' }).click();
  await page.getByRole('cell', { name: '2 requests per minute' }).waitFor();
  const answers = [];
  for (let i = 0; i < 4; i++) answers.push(await chat(gw, mock, secret));
  t.ok(answers.some((a) => a.status === 429), `the limit refuses calls past it (${answers.map((a) => a.status).join(', ')})`);

  await go(page, gw, 'Logs', 'Logs');
  await page.getByLabel('Status', { exact: true }).fill('429');
  const limited = page.getByRole('table', { name: 'Request logs' }).locator('tbody tr');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  for (let i = 0; i < 50 && !page.url().includes('status=429'); i++) await page.waitForTimeout(100);
  // Rows as they are now (no waiting): a refresh may empty the table while the record is written.
  const shows429 = async (): Promise<boolean> => (await limited.allInnerTexts()).some((row) => /\b429\b/.test(row));
  let seen = await shows429();
  for (let i = 0; i < 100 && !seen; i++) {
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.waitForTimeout(100);
    seen = await shows429();
  }
  t.ok(seen, 'the 429 is in Logs');
  // The last refresh may still be re-rendering the table: read it once it shows the row again.
  await limited.filter({ hasText: /\b429\b/ }).first().waitFor({ timeout: 5000 }).catch(() => undefined);
  const statuses = await page.getByRole('table', { name: 'Request logs' }).locator('tbody tr .badge').allInnerTexts();
  t.ok(statuses.length >= 1 && statuses.every((s) => s === '429'), `only 429s are listed (${statuses.join(', ')})`);
  t.match(page.url(), /status=429/, 'the filter is in the address');
  await browser.screenshot(page, 'e2e-429');

  // 8. Revoke the key; the next call is refused.
  await go(page, gw, 'API keys', 'API keys');
  await page.getByRole('button', { name: 'search-app' }).click();
  dialog = page.getByRole('dialog', { name: 'Key “search-app”' });
  await dialog.getByRole('button', { name: 'Revoke' }).click(); // the confirm is accepted
  await dialog.waitFor({ state: 'detached' });
  const refused = await chat(gw, mock, secret);
  t.equal(refused.status, 401, 'the revoked key is refused');
  t.ok(refused.code, `with a code (${refused.code})`);

  t.same(browser.problems, [], 'no page logged a console error');
});
