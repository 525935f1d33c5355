/**
 * The console's organisation pages in a real browser against the default pipeline and the mock
 * upstream: workspaces and members, users and invites, virtual keys (the provider secret never
 * reaches the page or a read, and a model call with the key works), integrations and providers,
 * the audit log (the creates are listed; a resource filter narrows them), pricing (list and
 * edit). A workspace key with few scopes sees only its pages, and they render without errors.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import type { Page } from 'playwright-core';
import { ADMIN_KEY, insertKey, startGateway, startMock, type StartedGateway } from './helpers/gateway.js';
import { launchBrowser, signIn } from './helpers/browser.js';

const VK_SECRET = 'sk-vk-SECRET-console-0123456789abcdef';
const INT_SECRET = 'sk-int-SECRET-console-fedcba9876543210';
const AWS_SECRET = 'aws-SECRET-console-abcdefghijklmnop';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function call(gw: StartedGateway, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Json; text: string }> {
  const res = await request(`${gw.url}${path}`, {
    method: method as 'GET',
    headers: { 'x-gateway-api-key': ADMIN_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text === '' ? {} : (JSON.parse(text) as Json), text };
}

/** The repository's default configuration, on a free loopback port. */
function defaultYaml(): string {
  return readFileSync(join(process.cwd(), 'config', 'gateway.yaml'), 'utf8');
}

const navLinks = async (page: Page): Promise<string[]> => page.getByRole('navigation', { name: 'Console' }).getByRole('link').allInnerTexts();

async function open(page: Page, url: string, path: string, heading: string): Promise<void> {
  await page.goto(`${url}/console/#${path}`);
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  // Every section has loaded (the CSP forbids waitForFunction's eval).
  for (let i = 0; i < 100 && (await page.locator('.loading').count()) > 0; i++) await page.waitForTimeout(50);
}

t.test('organisation pages: workspaces, users, virtual keys, integrations, providers, audit, pricing', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: defaultYaml(), env: { GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_HOST: '127.0.0.1', GATEWAY_PORT: '0' } });
  const browser = await launchBrowser(t);
  if (browser === null) return;
  const page = await browser.page();
  await signIn(page, gw.url, ADMIN_KEY);

  // ── workspaces ──
  await open(page, gw.url, '/workspaces', 'Workspaces');
  await page.getByRole('button', { name: 'Create workspace' }).click();
  let dialog = page.getByRole('dialog', { name: 'Create a workspace' });
  await dialog.getByLabel('Name', { exact: true }).fill('Billing team');
  await dialog.getByLabel('Slug').fill('billing');
  await dialog.getByLabel('Description').fill('Invoices and payments');
  await dialog.getByRole('button', { name: 'Create' }).click();
  dialog = page.getByRole('dialog', { name: 'Workspace' });
  await dialog.getByRole('heading', { name: 'Billing team' }).waitFor();
  t.match(page.url(), /#\/workspaces\/[0-9a-f-]{36}$/, 'the new workspace opens at its own address');
  await dialog.getByRole('heading', { name: 'Members' }).waitFor();
  await dialog.getByText('No members yet.').waitFor();
  await dialog.getByRole('button', { name: 'Close' }).click();
  await page.getByRole('cell', { name: 'Billing team', exact: true }).waitFor();
  const workspaces = await call(gw, 'GET', '/v1/admin/workspaces?exact_name=Billing%20team');
  t.equal(workspaces.body.total, 1, 'the API holds the workspace');
  const ws = workspaces.body.data[0] as Json;
  t.match(ws, { slug: 'billing', description: 'Invoices and payments', status: 'active' });

  // A taken slug: the API's message and code in the dialog.
  await page.getByRole('button', { name: 'Create workspace' }).click();
  dialog = page.getByRole('dialog', { name: 'Create a workspace' });
  await dialog.getByLabel('Name', { exact: true }).fill('Billing again');
  await dialog.getByLabel('Slug').fill('billing');
  await dialog.getByRole('button', { name: 'Create' }).click();
  t.match(await dialog.getByRole('alert').innerText(), /conflict[\s\S]*HTTP 409/, 'a refused create shows the code and status');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await browser.screenshot(page, 'workspaces');

  // Members: a user of the organisation is added with a role, then the role changes.
  const bob = await call(gw, 'POST', '/v1/admin/users', { email: 'bob@example.com', first_name: 'Bob', role: 'member' });
  t.equal(bob.status, 200);
  await page.getByRole('link', { name: 'Billing team' }).click();
  dialog = page.getByRole('dialog', { name: 'Workspace' });
  await dialog.getByLabel('User to add').selectOption({ label: 'bob@example.com (Bob)' });
  await dialog.getByLabel('Role for the new member').selectOption('member');
  await dialog.getByRole('button', { name: 'Add member' }).click();
  await dialog.getByRole('cell', { name: 'bob@example.com · Bob', exact: true }).waitFor();
  await dialog.getByLabel('Role of bob@example.com').selectOption('manager');
  await t.resolves(async () => {
    for (let i = 0; i < 50; i++) {
      const m = await call(gw, 'GET', `/v1/admin/workspaces/${ws.id}/users`);
      if (m.body.data?.[0]?.role === 'manager') return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the role did not change');
  }, 'the member is a manager in the API');
  const members = await call(gw, 'GET', `/v1/admin/workspaces/${ws.id}/users`);
  t.same(members.body.data.map((m: Json) => [m.email, m.role]), [['bob@example.com', 'manager']]);
  await dialog.getByRole('button', { name: 'Close' }).click();

  // ── users & invites ──
  await open(page, gw.url, '/users', 'Users & invites');
  await page.getByRole('cell', { name: 'bob@example.com', exact: true }).waitFor();
  await page.getByText('No invites with this status.').waitFor();
  await page.getByRole('button', { name: 'Invite a user' }).click();
  dialog = page.getByRole('dialog', { name: 'Invite a user' });
  await dialog.getByLabel('Email').fill('ada@example.com');
  await dialog.getByLabel('Organisation role').selectOption('admin');
  await dialog.getByLabel('Role in billing').selectOption('admin');
  await dialog.getByRole('button', { name: 'Send invite' }).click();
  const link = await page.getByTestId('secret').innerText();
  t.match(link, /^http:\/\/.*invite/i, 'the invite link is shown once');
  await page.getByRole('cell', { name: 'ada@example.com', exact: true }).waitFor();
  const invites = await call(gw, 'GET', '/v1/admin/users/invites?email=ada@example.com');
  t.match(invites.body.data, [{ email: 'ada@example.com', role: 'admin', status: 'pending', workspaces: [{ id: ws.id, role: 'admin' }] }], 'the API holds the invite');
  await browser.screenshot(page, 'users');

  // ── virtual keys ──
  await open(page, gw.url, '/virtual-keys', 'Virtual keys');
  await page.getByText('No virtual keys yet.').waitFor();
  await page.getByRole('button', { name: 'Create virtual key' }).click();
  dialog = page.getByRole('dialog', { name: 'Create a virtual key' });
  await dialog.getByLabel('Name', { exact: true }).fill('Mock OpenAI');
  await dialog.getByLabel('Slug').fill('mock-openai');
  await dialog.getByLabel('Provider', { exact: true }).selectOption('openai');
  t.equal(await dialog.getByLabel('Provider API key').getAttribute('type'), 'password', 'the secret is a password input');
  await dialog.getByLabel('Provider API key').fill(VK_SECRET);
  await dialog.getByLabel('Custom host').fill(`${mock.url}/v1`);
  await dialog.getByLabel('OpenAI organization').fill('org-console');
  await dialog.getByLabel('Rate limit', { exact: true }).fill('100');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.getByRole('cell', { name: 'mock-openai', exact: true }).waitFor();
  t.notMatch(await page.content(), VK_SECRET, 'the secret is not in the page after creating');
  await page.getByRole('button', { name: 'Mock OpenAI' }).click();
  dialog = page.getByRole('dialog', { name: 'Virtual key “Mock OpenAI”' });
  t.equal(await dialog.getByLabel('Provider API key').inputValue(), '', 'the secret input is never prefilled');
  t.equal(await dialog.getByLabel('OpenAI organization').inputValue(), 'org-console', 'readable provider fields are');
  t.equal(await dialog.getByLabel('Rate limit', { exact: true }).inputValue(), '100');
  t.notMatch(await page.content(), VK_SECRET, 'nor in the edit dialog');
  // An update leaving the secret blank keeps it.
  await dialog.getByLabel('Note').fill('through the console');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.waitFor({ state: 'detached' });
  await browser.screenshot(page, 'virtual-keys');
  const vk = await call(gw, 'GET', '/v1/virtual-keys/mock-openai');
  t.match(vk.body, { slug: 'mock-openai', provider: 'openai', custom_host: `${mock.url}/v1`, note: 'through the console', model_config: { openai_organization: 'org-console' }, rate_limits: [{ type: 'requests', unit: 'rpm', value: 100 }] });
  t.notMatch(vk.text, VK_SECRET, 'the API read does not return the secret');
  const viaVk = await call(gw, 'POST', '/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, { 'x-gateway-virtual-key': 'mock-openai' });
  t.equal(viaVk.status, 200, 'a model call with the virtual key succeeds');
  t.equal(mock.requests.at(-1)?.headers.authorization, `Bearer ${VK_SECRET}`, 'with the stored secret (kept by the update)');

  // ── integrations and providers ──
  await open(page, gw.url, '/integrations', 'Integrations');
  await page.getByRole('button', { name: 'Create integration' }).click();
  dialog = page.getByRole('dialog', { name: 'Create an integration' });
  await dialog.getByLabel('Name', { exact: true }).fill('Company Bedrock');
  await dialog.getByLabel('Slug').fill('company-bedrock');
  await dialog.getByLabel('Provider', { exact: true }).selectOption('bedrock');
  await dialog.getByLabel('AWS region').fill('eu-west-1');
  await dialog.getByLabel('AWS access key id').fill('AKIACONSOLE');
  t.equal(await dialog.getByLabel('AWS secret access key').getAttribute('type'), 'password');
  await dialog.getByLabel('AWS secret access key').fill(AWS_SECRET);
  await dialog.getByRole('button', { name: 'Create' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.getByRole('button', { name: 'Create integration' }).click();
  dialog = page.getByRole('dialog', { name: 'Create an integration' });
  await dialog.getByLabel('Name', { exact: true }).fill('Mock OpenAI shared');
  await dialog.getByLabel('Slug').fill('mock-shared');
  await dialog.getByLabel('Provider API key').fill(INT_SECRET);
  await dialog.getByLabel('Custom host').fill(`${mock.url}/v1`);
  await dialog.getByRole('button', { name: 'Create' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.getByRole('button', { name: 'Company Bedrock' }).click();
  dialog = page.getByRole('dialog', { name: 'Integration “Company Bedrock”' });
  t.equal(await dialog.getByLabel('AWS region').inputValue(), 'eu-west-1');
  t.equal(await dialog.getByLabel('AWS secret access key').inputValue(), '');
  t.match(await dialog.innerText(), /A value is set; leave blank to keep it/, 'the form says the secret is set, without showing it');
  const content = await page.content();
  t.notMatch(content, AWS_SECRET);
  t.notMatch(content, INT_SECRET);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await browser.screenshot(page, 'integrations');
  const bedrock = await call(gw, 'GET', '/v1/integrations/company-bedrock');
  t.match(bedrock.body, { ai_provider_id: 'bedrock', workspace_id: null, configurations: { aws_region: 'eu-west-1', aws_access_key_id: 'AKIACONSOLE' } });
  t.notMatch(bedrock.text, AWS_SECRET, 'the API read masks the AWS secret');

  await open(page, gw.url, '/providers', 'Providers');
  await page.getByText('No providers yet.').waitFor();
  await page.getByRole('button', { name: 'Add provider' }).click();
  dialog = page.getByRole('dialog', { name: 'Add a provider' });
  await dialog.getByLabel('Name', { exact: true }).fill('Shared mock');
  await dialog.getByLabel('Slug').fill('shared-mock');
  await dialog.getByLabel('Integration', { exact: true }).selectOption('mock-shared');
  await dialog.getByRole('button', { name: 'Add' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.getByRole('cell', { name: '@shared-mock/', exact: true }).waitFor();
  await browser.screenshot(page, 'providers');
  const viaProvider = await call(gw, 'POST', '/v1/chat/completions', { model: '@shared-mock/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(viaProvider.status, 200, 'a model call through the provider succeeds');
  t.equal(mock.requests.at(-1)?.headers.authorization, `Bearer ${INT_SECRET}`);

  // ── audit log ──
  await open(page, gw.url, '/audit', 'Audit log');
  const rows = page.getByRole('table', { name: 'Audit log entries' }).locator('tbody tr');
  const resources = async (): Promise<string[]> => page.locator('td[data-label="Resource"]').allInnerTexts();
  const all = await resources();
  for (const r of ['workspace', 'workspace_member', 'invite', 'virtual_key', 'integration', 'provider']) t.ok(all.includes(r), `the audit log lists the ${r} writes`);
  await browser.screenshot(page, 'audit');
  await page.getByLabel('Resource type').selectOption('virtual_key');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.getByRole('status').filter({ hasText: /^2 entries$/ }).waitFor();
  t.same(await resources(), ['virtual_key', 'virtual_key'], 'filtering by resource type narrows the list (create, update)');
  t.ok((await rows.count()) < all.length);
  await page.getByRole('button', { name: /^Open the entry of .*create virtual_key/ }).click();
  dialog = page.getByRole('dialog', { name: 'Audit log entry' });
  const entry = await dialog.innerText();
  t.match(entry, /"slug": "mock-openai"/, 'an entry shows its request body');
  t.match(entry, /"key": "\[masked\]"/, 'with the secret masked');
  await dialog.getByRole('button', { name: 'Close' }).click();

  // ── pricing ──
  await open(page, gw.url, '/pricing', 'Pricing & models');
  await page.getByLabel('Provider', { exact: true }).selectOption('openai');
  await page.getByLabel('Model', { exact: true }).fill('gpt-4o');
  await page.getByRole('cell', { name: 'gpt-4o-mini', exact: true }).waitFor();
  t.notOk(await page.getByRole('cell', { name: 'claude', exact: true }).count(), 'the provider filter holds');
  await page.getByRole('button', { name: 'Edit the price of openai/gpt-4o', exact: true }).click();
  dialog = page.getByRole('dialog', { name: 'Price of openai/gpt-4o' });
  t.equal(await dialog.getByLabel('Input (USD per 1M tokens)').inputValue(), '2.5', 'the edit form shows the price per million tokens');
  await dialog.getByLabel('Input (USD per 1M tokens)').fill('3');
  await dialog.getByRole('button', { name: 'Save price' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.getByRole('row', { name: /gpt-4o \$3 .*override/ }).waitFor();
  await browser.screenshot(page, 'pricing');
  const priced = await call(gw, 'GET', '/model-configs/pricing/openai/gpt-4o');
  t.match(priced.body.pay_as_you_go, { request_token: { price: 0.0003 }, response_token: { price: 0.001 } }, 'the API holds the new price');

  // ── a phone ──
  const phone = await browser.page({ width: 390, height: 844 });
  // signIn waits for the navigation, which a phone keeps behind the Menu button.
  await phone.goto(`${gw.url}/console/`);
  await phone.getByLabel('API key or JWT').fill(ADMIN_KEY);
  await phone.getByRole('button', { name: 'Sign in' }).click();
  await phone.getByRole('button', { name: 'Menu' }).waitFor();
  await open(phone, gw.url, '/virtual-keys', 'Virtual keys');
  await phone.getByRole('button', { name: 'Mock OpenAI' }).waitFor();
  const width = (await phone.evaluate('document.documentElement.scrollWidth')) as number;
  t.ok(width <= 390, `no sideways scrolling on a phone (${width} px)`);
  await browser.screenshot(phone, 'virtual-keys-phone');

  t.same(browser.problems.filter((p) => !/Failed to load resource: the server responded with a status of 409/.test(p)), [], 'no console errors but the provoked 409');
});

t.test('a workspace key with few scopes sees only its pages, and they work', async (t) => {
  const gw = await startGateway(t, { yaml: defaultYaml(), env: { GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_HOST: '127.0.0.1', GATEWAY_PORT: '0' } });
  const made = await call(gw, 'POST', '/v1/admin/workspaces', { name: 'Team', slug: 'team' });
  await call(gw, 'POST', '/v1/virtual-keys', { name: 'Team OpenAI', slug: 'team-openai', provider: 'openai', key: VK_SECRET, workspace_id: 'team' });
  const key = insertKey(gw.store, { workspace_id: made.body.id as string, scopes: ['workspaces.list', 'workspaces.read', 'virtual_keys.list', 'virtual_keys.read', 'providers.list'], name: 'reader' });
  const browser = await launchBrowser(t);
  if (browser === null) return;
  const page = await browser.page();
  await signIn(page, gw.url, key);
  const links = await navLinks(page);
  for (const absent of ['Users & invites', 'Audit log', 'Integrations', 'API keys', 'Configs', 'Policies']) t.notOk(links.includes(absent), `no ${absent} in the navigation`);
  for (const present of ['Workspaces', 'Virtual keys', 'Providers', 'Pricing & models']) t.ok(links.includes(present), `${present} is there`);

  await open(page, gw.url, '/workspaces', 'Workspaces');
  t.equal(await page.getByRole('button', { name: 'Create workspace' }).count(), 0, 'no create without workspaces.create');
  await page.getByRole('link', { name: 'Team' }).click();
  const dialog = page.getByRole('dialog', { name: 'Workspace' });
  await dialog.getByRole('heading', { name: 'Members' }).waitFor();
  t.equal(await dialog.getByRole('button', { name: 'Add member' }).count(), 0);
  t.equal(await dialog.getByRole('button', { name: 'Archive workspace' }).count(), 0);
  t.equal(await dialog.getByRole('form', { name: 'Edit workspace' }).count(), 0);

  await open(page, gw.url, '/virtual-keys', 'Virtual keys');
  await page.getByRole('cell', { name: 'team-openai', exact: true }).waitFor();
  t.equal(await page.getByRole('button', { name: 'Create virtual key' }).count(), 0, 'no create without virtual_keys.create');
  t.equal(await page.getByRole('button', { name: 'Team OpenAI' }).count(), 0, 'no edit dialog without update or delete');
  await open(page, gw.url, '/providers', 'Providers');
  await page.getByText('No providers yet.').waitFor();
  t.equal(await page.getByRole('button', { name: 'Add provider' }).count(), 0);
  await open(page, gw.url, '/pricing', 'Pricing & models');
  await page.getByRole('cell', { name: 'gpt-4o-mini', exact: true }).waitFor();
  t.equal(await page.getByRole('button', { name: 'Price a model' }).count(), 0, 'no price edits without model_pricing.update');
  t.equal(await page.getByRole('button', { name: /^Edit the price/ }).count(), 0);
  await page.goto(`${gw.url}/console/#/audit`);
  await page.getByRole('heading', { name: 'Not here', level: 1 }).waitFor();
  t.equal(await page.getByRole('alert').count(), 1, 'a page outside the scopes says so instead of breaking');
  t.same(browser.problems, [], 'no console errors');
});
