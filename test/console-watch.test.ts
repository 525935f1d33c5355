/**
 * The console's Watch pages in a real browser, against the default pipeline (bodies kept) and the
 * mock upstream, with real traffic (direct calls, a virtual key, a saved config, an upstream 429):
 *   - Overview: the request total in its tile, a chart per measure (canvases), the top models;
 *     a new range is a link; at phone width the charts fit the screen;
 *   - Logs: the model calls are listed (the admin API's own calls are not, by default); a status
 *     filter narrows them and lives in the hash; a virtual key filter finds its calls; a record
 *     opens with its fields and its stored bodies; "Follow live" picks up a request sent after
 *     the page loaded, once; an export of the filtered records runs and downloads as a file.
 */
import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { ADMIN_KEY, addWorkspace, direct, insertKey, startGateway, startMock, type MockUpstream, type StartedGateway } from './helpers/gateway.js';
import { launchBrowser, signIn } from './helpers/browser.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function call(gw: StartedGateway, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { 'x-gateway-api-key': ADMIN_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Json) };
}

/** The repository's default configuration, request and response bodies kept. */
function watchYaml(): string {
  const yaml = readFileSync(join(process.cwd(), 'config', 'gateway.yaml'), 'utf8');
  const out = yaml.replace(/^ {2}- logging\s*$/m, '  - logging: {flush_ms: 50, bodies: {enabled: true}}');
  if (out === yaml) throw new Error('config/gateway.yaml has no plain `- logging` entry to configure');
  return out;
}

async function chat(gw: StartedGateway, headers: Record<string, string>, content = 'watch me'): Promise<number> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Model calls logged so far (the admin calls are route `plugin`). */
async function callsLogged(gw: StartedGateway): Promise<number> {
  return (await call(gw, 'GET', '/v1/logs?route=chat.completions')).body.total as number;
}

async function until(check: () => Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function open(page: Page, url: string, path: string, heading: string): Promise<void> {
  await page.goto(`${url}/console/#${path}`);
  try {
    await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  } catch (err) {
    // Say what the page shows instead (this wait timed out once in many CI runs, unexplained).
    const shown = await page.locator('h1').allInnerTexts().catch(() => []);
    const main = (await page.locator('body').innerText().catch(() => '')).slice(0, 600);
    throw new Error(`no "${heading}" heading at ${page.url()}: h1 ${JSON.stringify(shown)}; the page reads: ${JSON.stringify(main)}`, { cause: err });
  }
  const deadline = Date.now() + 10_000;
  while ((await page.locator('.loading').count()) > 0 && Date.now() < deadline) await page.waitForTimeout(50);
}

/** The data rows of the logs table. */
const logRows = (page: Page) => page.getByRole('table', { name: 'Request logs' }).locator('tbody tr');

async function traffic(t: Test, gw: StartedGateway, mock: MockUpstream): Promise<{ configSlug: string }> {
  t.equal((await call(gw, 'POST', '/v1/virtual-keys', { name: 'Watch VK', slug: 'watch-vk', provider: 'openai', key: 'sk-vk-watch-0123456789', custom_host: `${mock.url}/v1` })).status, 200);
  const cfg = await call(gw, 'POST', '/v1/configs', { name: 'watch', config: { targets: [{ provider: 'openai', api_key: 'sk-cfg-watch-0123', custom_host: `${mock.url}/v1` }] } });
  t.equal(cfg.status, 200);
  const statuses = [
    await chat(gw, direct(mock)),
    await chat(gw, direct(mock)),
    await chat(gw, direct(mock)),
    await chat(gw, { 'x-gateway-virtual-key': 'watch-vk' }),
    await chat(gw, { 'x-gateway-virtual-key': 'watch-vk' }),
    await chat(gw, { 'x-gateway-config': cfg.body.slug as string }),
    await chat(gw, direct(mock, 'status=429')),
  ];
  t.same(statuses, [200, 200, 200, 200, 200, 200, 429], 'the traffic: six answers and an upstream 429');
  await until(async () => (await callsLogged(gw)) === 7, 'seven logged calls');
  return { configSlug: cfg.body.slug as string };
}

t.test('Overview and Logs: charts from real traffic, filters, a record, follow live, export', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: watchYaml(), env: { GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_HOST: '127.0.0.1', GATEWAY_PORT: '0' } });
  await traffic(t, gw, mock);
  const browser = await launchBrowser(t);
  if (browser === null) return;
  const page = await browser.page();
  await signIn(page, gw.url, ADMIN_KEY);

  // ── Overview ──
  await open(page, gw.url, '/overview', 'Overview');
  const totals = page.getByRole('list', { name: 'Totals' });
  await totals.waitFor();
  const requestsTile = totals.getByRole('listitem').filter({ hasText: 'Requests' });
  t.match(await requestsTile.innerText(), /Requests\s*7\b/, 'the requests tile counts the seven calls');
  t.match(await totals.getByRole('listitem').filter({ hasText: 'Error rate' }).innerText(), /14\.3 %|14 %/, 'one error in seven');
  t.match(await totals.getByRole('listitem').filter({ hasText: 'Tokens' }).innerText(), /Tokens\s*[1-9]/, 'tokens are counted');
  for (const chart of ['Requests', 'Error rate', 'Latency', 'Tokens', 'Cost']) await page.getByRole('img', { name: new RegExp(`^${chart}: `) }).waitFor();
  t.ok((await page.locator('.chart canvas').count()) >= 5, 'five charts drawn on canvases');
  const models = page.getByRole('table', { name: 'Top models' });
  t.match(await models.innerText(), /gpt-4o\s+7/, 'the top models table');
  t.match(await page.getByRole('table', { name: 'Top providers' }).innerText(), /openai\s+7\s+1/, 'providers: requests and errors');
  await page.getByRole('table', { name: 'Top API keys' }).waitFor();
  await page.getByRole('table', { name: 'Top workspaces' }).waitFor();
  await browser.screenshot(page, 'overview');
  await page.getByLabel('Range', { exact: true }).selectOption('7d');
  await page.waitForURL(/#\/overview\?range=7d$/);
  await totals.waitFor();
  t.match(await requestsTile.innerText(), /Requests\s*7\b/, 'the 7-day range holds them too');

  // Phone width: the charts drawn at 1280 px follow the window down to a phone's width.
  const phone = await browser.page();
  await signIn(phone, gw.url, ADMIN_KEY);
  await open(phone, gw.url, '/overview?range=1h', 'Overview');
  await phone.locator('.chart canvas').first().waitFor();
  await phone.setViewportSize({ width: 390, height: 844 });
  await phone.waitForTimeout(300);
  const widths = await phone.locator('.chart .uplot').evaluateAll((els) => els.map((e) => (e as unknown as { offsetWidth: number }).offsetWidth));
  t.ok(widths.length >= 5 && widths.every((w) => w > 200 && w <= 370), `the charts fit a phone (${widths.join(', ')} px)`);
  await browser.screenshot(phone, 'overview-phone');
  await open(phone, gw.url, '/logs', 'Logs');
  await logRows(phone).first().waitFor();
  t.equal(await logRows(phone).count(), 7, 'the list at phone width');
  await browser.screenshot(phone, 'logs-phone');

  // ── Logs ──
  await open(page, gw.url, '/logs', 'Logs');
  await logRows(page).first().waitFor();
  t.equal(await logRows(page).count(), 7, 'the model calls, without the admin API calls');
  t.match(await page.getByRole('status').filter({ hasText: 'record' }).innerText(), /^7 records/);
  await browser.screenshot(page, 'logs');

  await page.getByLabel('Status', { exact: true }).fill('429');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.waitForURL(/#\/logs\?status=429$/);
  await page.getByRole('status').filter({ hasText: '1 record' }).waitFor();
  t.equal(await logRows(page).count(), 1, 'status 429: one record');
  t.match(await logRows(page).first().innerText(), /429/);

  // The filtered view is a link: opened afresh, the same record.
  await page.goto(`${gw.url}/console/#/logs?virtual_key=watch-vk`);
  await page.getByRole('status').filter({ hasText: '2 records' }).waitFor();
  t.equal(await page.getByLabel('Virtual key').inputValue(), 'watch-vk', 'the form shows the filter of the link');
  t.equal(await logRows(page).count(), 2, 'the virtual key filter: its two calls');

  // A record: every field, the bodies.
  await open(page, gw.url, '/logs?status=429', 'Logs');
  await logRows(page).first().getByRole('link', { name: /Open the record/ }).click();
  await page.getByRole('heading', { name: 'Log record', level: 1 }).waitFor();
  await page.getByRole('heading', { name: 'Request body' }).waitFor();
  t.match(page.url(), /#\/logs\/[0-9a-f-]{36}\?status=429$/, 'the record has its own address, the filters kept for the way back');
  const request = await page.getByRole('heading', { name: 'Request', exact: true }).locator('xpath=../..').innerText();
  t.match(request, /Status\s*429/, 'the status');
  t.match(request, /POST \/v1\/chat\/completions/, 'the call');
  const routing = await page.getByRole('heading', { name: 'Routing and identity' }).locator('xpath=../..').innerText();
  t.match(routing, /Provider\s*openai/);
  t.match(routing, /Model\s*gpt-4o/);
  t.match(await page.getByLabel('Request body').innerText(), /"content": "watch me"/, 'the stored request body, pretty');
  t.match(await page.getByLabel('Response body').innerText(), /error|rate/i, 'the stored error answer');
  await browser.screenshot(page, 'log-record');
  await page.getByRole('link', { name: 'Back to the list' }).click();
  await page.waitForURL(/#\/logs\?status=429$/);
  await page.getByRole('status').filter({ hasText: '1 record' }).waitFor();

  // ── Follow live ──
  await page.getByRole('button', { name: 'Reset' }).click();
  await page.getByRole('status').filter({ hasText: '7 records' }).waitFor();
  await page.getByLabel('Follow live').check();
  await page.getByRole('status').filter({ hasText: 'following live' }).waitFor();
  t.equal(await chat(gw, { ...direct(mock), 'x-gateway-metadata': JSON.stringify({ live: 'yes' }) }, 'sent while watching'), 200);
  await page.getByRole('status').filter({ hasText: '8 records' }).waitFor({ timeout: 10_000 });
  t.equal(await logRows(page).count(), 8, 'the new call is prepended');
  await page.waitForTimeout(4500); // two more polls: nothing is added twice
  t.equal(await logRows(page).count(), 8, 'and only once');
  await page.getByLabel('Follow live').uncheck();

  // ── Export ──
  await page.getByLabel('Model', { exact: true }).fill('gpt-4o');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.waitForURL(/model=gpt-4o/);
  await page.getByRole('status').filter({ hasText: '8 records' }).waitFor();
  await page.getByRole('button', { name: 'Export' }).click();
  const dialog = page.getByRole('dialog', { name: 'Export logs' });
  const downloaded = page.waitForEvent('download');
  await dialog.getByRole('button', { name: 'Start export' }).click();
  const file = await downloaded;
  t.match(file.suggestedFilename(), /^log-export-[0-9a-f-]{36}\.jsonl$/, 'saved as a .jsonl file');
  const lines = readFileSync(await file.path(), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);
  t.equal(lines.length, 8, 'the export holds the eight filtered records');
  t.ok(lines.every((l) => l.ai_model === 'gpt-4o' && typeof l.id === 'string'), 'with the requested fields');
  t.same(lines.map((l) => l.response_status_code).sort(), [200, 200, 200, 200, 200, 200, 200, 429]);
  await dialog.getByRole('status').filter({ hasText: 'Done: 8 records exported and saved.' }).waitFor();
  t.equal(await dialog.getByLabel('Export progress').getAttribute('value'), '1', 'the progress bar is full');
  const exports = await call(gw, 'GET', '/v1/logs/exports');
  t.match(exports.body.data[0], { status: 'success', total: 8, filters: { ai_model: 'gpt-4o', route: /chat\.completions/ } }, 'the API holds the finished export with the filters');
  await dialog.getByRole('button', { name: 'Done' }).click();
  await dialog.waitFor({ state: 'detached' });

  // A workspace without traffic: both pages say what to do next.
  const quiet = addWorkspace(gw.store, 'quiet', ['analytics.view', 'logs.list', 'logs.view']);
  const other = await browser.page();
  await signIn(other, gw.url, quiet.key);
  await open(other, gw.url, '/overview', 'Overview');
  await other.getByText('No traffic in this range.').waitFor();
  t.match(await other.locator('.empty').innerText(), /Start page/, 'the empty Overview points to the Start page');
  t.equal(await other.locator('.tiles').count(), 0, 'no tiles without traffic');
  await open(other, gw.url, '/logs', 'Logs');
  await other.getByText('No request logged yet.').waitFor();
  t.equal(await other.getByRole('button', { name: 'Export' }).count(), 0, 'no export without logs.export');

  // A key that may read records but not list them: a lookup by id instead of a broken list.
  const failedId = ((await call(gw, 'GET', '/v1/logs?status=429')).body.data[0] as Json).id as string;
  const reader = await browser.page();
  await signIn(reader, gw.url, insertKey(gw.store, { workspace_id: null, scopes: ['logs.view'], name: 'reader' }));
  await open(reader, gw.url, '/logs', 'Logs');
  t.equal(await reader.locator('table').count(), 0, 'no list without logs.list');
  await reader.getByLabel('Record id').fill(failedId);
  await reader.getByRole('button', { name: 'Open' }).click();
  await reader.getByRole('heading', { name: 'Log record', level: 1 }).waitFor();
  t.match(await reader.getByRole('heading', { name: 'Request', exact: true }).locator('xpath=../..').innerText(), /Status\s*429/, 'the record opens by its id');

  t.same(browser.problems, [], 'no console errors');
});
