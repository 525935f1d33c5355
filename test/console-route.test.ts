/**
 * The console's Configs, Guardrails and Policies pages in a real browser against the full default
 * pipeline and the mock upstream:
 *   - a config with a validation error shows the error with its path and Save stays disabled;
 *     fixed, it saves, is listed and held by the API; an edit is version 2 and the diff shows
 *     the changed line;
 *   - a guardrail whose parameter the API refuses shows the 400's message, code and path; fixed,
 *     it saves with a webhook header typed in a password field that is never shown back;
 *   - a rate-limit and a usage-limit policy are created through the forms; traffic from a
 *     workspace key shows as the entity's usage bar, and Reset zeroes it.
 * Screenshots: configs, config-diff, guardrails, policies, configs-phone (390x844).
 */
import t from 'tap';
import { request } from 'undici';
import type { Page } from 'playwright-core';
import { Scopes } from '../core/index.js';
import { ADMIN_KEY, addWorkspace, direct, insertKey, startGateway, startMock } from './helpers/gateway.js';
import { launchBrowser, signIn } from './helpers/browser.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const PIPELINE =
  'pipeline: [logging, analytics, metrics, otel, auth, virtual-keys, config-strategy, guardrails, rate-limit, usage-limits, cache, admin-org, admin-api-keys, admin-resources, admin-policies, admin-catalog, console]\n';

/** Replaces the text of the labelled editor (fill fires one input event, as typing would). */
async function setEditor(page: Page, label: string, value: unknown): Promise<void> {
  await page.getByLabel(label, { exact: true }).fill(typeof value === 'string' ? value : JSON.stringify(value, null, 2));
}

t.test('configs, guardrails and policies through the console', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: PIPELINE, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const team = addWorkspace(gw.store, 'team-a', Scopes.DEFAULT_WORKSPACE_SCOPES);
  const api = async (method: 'GET' | 'POST', path: string, body?: unknown, key = ADMIN_KEY, headers: Record<string, string> = {}): Promise<{ status: number; body: Json }> => {
    const res = await request(`${gw.url}${path}`, {
      method,
      headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.statusCode, body: (await res.body.json()) as Json };
  };

  const browser = await launchBrowser(t);

  if (browser === null) return;
  const page = await browser.page({ width: 1280, height: 800 });
  await signIn(page, gw.url, ADMIN_KEY);

  await t.test('a config with a validation error, fixed, saved, edited, diffed', async (t) => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Configs' }).click();
    await page.getByRole('heading', { name: 'Configs', level: 1 }).waitFor();
    await page.getByText('No configs yet.').waitFor();
    await page.getByRole('link', { name: 'New config' }).click();
    await page.getByRole('heading', { name: 'New config' }).waitFor();

    await page.getByLabel('Name', { exact: true }).fill('Prod chat');
    await page.getByLabel('Slug (optional)').fill('prod-chat');
    await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'team-a' });
    const save = page.getByRole('button', { name: 'Save config' });
    const status = page.getByTestId('check-status');
    // The starter template is valid as it is.
    await t.resolves(status.getByText('✓ Valid').waitFor(), 'the starter config is valid');

    await setEditor(page, 'Config JSON', '{\n  "strategy": {"mode": "fallback"},\n  "targets": [\n');
    await page.getByText('line 4, column 1').waitFor();
    t.ok(await save.isDisabled(), 'Save is disabled while the JSON does not parse');

    const bad = { strategy: { mode: 'roundrobin' }, targets: [{ virtual_key: 'openai-main' }, { virtual_key: 'openai-backup' }] };
    await setEditor(page, 'Config JSON', bad);
    const problems = page.getByRole('list', { name: 'Problems' });
    await problems.getByText('config.strategy.mode', { exact: true }).waitFor();
    t.match(await problems.textContent(), /must be one of.*invalid_value/, 'the message and code show beside the path');
    t.equal(await page.getByLabel('Config JSON', { exact: true }).getAttribute('aria-invalid'), 'true');
    t.ok(await save.isDisabled(), 'Save is disabled while the gateway finds a problem');
    await browser.screenshot(page, 'config-error');

    const good = { ...bad, strategy: { mode: 'fallback' } };
    await setEditor(page, 'Config JSON', good);
    await status.getByText('✓ Valid').waitFor();
    t.equal(await problems.count(), 0, 'the problems are gone');
    t.notOk(await save.isDisabled(), 'Save is enabled once valid');
    await save.click();
    await page.getByRole('heading', { name: 'Prod chat', level: 1 }).waitFor();
    t.match(page.url(), /#\/configs\/prod-chat$/);

    const held = await api('GET', '/v1/configs/prod-chat');
    t.equal(held.status, 200);
    t.same(held.body.config, good, 'the API holds the config as saved');
    t.equal(held.body.workspace_id, team.id, 'in the chosen workspace');

    await page.getByRole('link', { name: 'Back to configs' }).click();
    await page.getByRole('link', { name: 'Prod chat' }).waitFor();
    t.ok(await page.getByRole('cell', { name: 'prod-chat' }).isVisible(), 'the list shows the slug');
    await browser.screenshot(page, 'configs');

    // Edit: a new version; the diff of the previous against the current shows the changed line.
    await page.getByRole('link', { name: 'Prod chat' }).click();
    await page.getByRole('heading', { name: 'Prod chat', level: 1 }).waitFor();
    const edited = { ...good, strategy: { mode: 'loadbalance' } };
    await setEditor(page, 'Config JSON', edited);
    await status.getByText('✓ Valid').waitFor();
    await page.getByRole('button', { name: 'Save new version' }).click();
    await page.getByText('Saved as a new version.').waitFor();
    const versions = await api('GET', '/v1/configs/prod-chat/versions');
    t.equal(versions.body.total, 2, 'the edit is version 2');
    t.same(versions.body.data[0].config, edited);

    await page.getByRole('cell', { name: 'v2 (current)' }).waitFor();
    const diff = page.getByTestId('diff');
    await diff.locator('del').first().waitFor();
    const removed = await diff.locator('del').allTextContents();
    const added = await diff.locator('ins').allTextContents();
    t.same(removed.map((l) => l.replace(/\s+/g, ' ').trim()), ['- "mode": "fallback"'], 'the old line is marked removed');
    t.same(added.map((l) => l.replace(/\s+/g, ' ').trim()), ['+ "mode": "loadbalance"'], 'the new line is marked added');
    t.equal(await page.getByLabel('Compare version').inputValue(), '1', 'the diff compares the previous version');
    t.equal(await page.getByLabel('With version').inputValue(), '0', 'with the current one');
    await diff.scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'config-diff');

    // An old version opens in full.
    await page.getByRole('button', { name: 'View version 1' }).click();
    const dialog = page.getByRole('dialog', { name: /Version 1 of/ });
    t.match(await dialog.locator('pre').textContent(), /"mode": "fallback"/);
    await dialog.getByRole('button', { name: 'Close' }).click();
  });

  await t.test('a guardrail: API error with code and path, then saved with a write-only header', async (t) => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Guardrails' }).click();
    await page.getByText('No guardrails yet.').waitFor();
    await page.getByRole('link', { name: 'New guardrail' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Short answers');
    await page.getByLabel('Slug (optional)').fill('short-answers');
    await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'team-a' });
    await setEditor(page, 'Checks JSON', [{ 'default.wordCount': { max: 'ten' }, deny: true }]);
    const save = page.getByRole('button', { name: 'Save guardrail' });
    await page.getByTestId('check-status').getByText('✓ Valid').waitFor();
    await save.click();
    const problems = page.getByRole('list', { name: 'Problems' });
    await problems.getByText('checks[0]["default.wordCount"].max', { exact: true }).waitFor();
    t.match(await problems.textContent(), /must be an integer.*invalid_type/, 'the 400 shows its message and code by its path');

    const secret = 'Bearer s3cret-value-123';
    const checks = [
      { 'default.wordCount': { max: 300 }, deny: true },
      { 'default.webhook': { webhookURL: 'http://127.0.0.1:9/verdict', headers: { Authorization: '[secret]' } } },
    ];
    await setEditor(page, 'Checks JSON', checks);
    const header = page.getByLabel('Authorization header of default.webhook (guardrail 2)');
    await header.waitFor();
    t.equal(await header.getAttribute('type'), 'password', 'a header value is typed in a password field');
    await problems.getByText('checks[1]["default.webhook"].headers.Authorization').waitFor();
    t.ok(await save.isDisabled(), 'a header without a value blocks the save');
    await header.fill(secret);
    await page.getByTestId('check-status').getByText('✓ Valid').waitFor();
    await save.click();
    await page.getByRole('heading', { name: 'Short answers', level: 1 }).waitFor();

    const held = await api('GET', '/v1/guardrails/short-answers');
    t.equal(held.status, 200);
    t.equal(held.body.checks[0]['default.wordCount'].max, 300);
    const mask = held.body.checks[1]['default.webhook'].headers.Authorization as string;
    t.not(mask, secret, 'the API shows the header masked');
    const text = await page.getByLabel('Checks JSON', { exact: true }).inputValue();
    t.notMatch(text, /s3cret/, 'the editor never shows the header value');
    t.notOk(text.includes(mask), 'nor its mask');
    t.match(text, /"Authorization": "\[secret\]"/);
    t.equal(await page.getByLabel('Authorization header of default.webhook (guardrail 2)').inputValue(), '', 'the password field starts empty');

    // A change elsewhere keeps the stored header (the mask goes back, which the API keeps).
    await setEditor(page, 'Checks JSON', text.replace('300', '400'));
    await page.getByTestId('check-status').getByText('✓ Valid').waitFor();
    await page.getByRole('button', { name: 'Save new version' }).click();
    await page.getByText('Saved as a new version.').waitFor();
    const again = await api('GET', '/v1/guardrails/short-answers');
    t.equal(again.body.checks[0]['default.wordCount'].max, 400);
    t.equal(again.body.checks[1]['default.webhook'].headers.Authorization, mask, 'the stored header is kept');

    await page.getByRole('link', { name: 'Back to guardrails' }).click();
    await page.getByRole('link', { name: 'Short answers' }).waitFor();
    await browser.screenshot(page, 'guardrails');
  });

  await t.test('rate-limit and usage-limit policies through the forms; usage bar and reset', async (t) => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Policies' }).click();
    await page.getByRole('tab', { name: 'Rate limits' }).waitFor();
    await page.getByText('No rate limits.').waitFor();
    await page.getByRole('button', { name: 'New rate limit' }).click();
    let dialog = page.getByRole('dialog', { name: 'New rate limit' });
    await dialog.getByLabel('Name').fill('Per key');
    await dialog.getByLabel('Workspace', { exact: true }).selectOption({ label: 'team-a' });
    await dialog.getByLabel('Group by 1', { exact: true }).fill('api_key');
    await dialog.getByLabel('Limit').fill('120');
    await dialog.getByLabel('Per').selectOption('rpm');
    await dialog.getByRole('button', { name: 'Create rate limit' }).click();
    await page.getByRole('cell', { name: '120 requests per minute' }).waitFor();
    const rates = await api('GET', `/v1/policies/rate-limits?workspace_id=${team.id}`);
    t.equal(rates.body.total, 1);
    t.match(rates.body.data[0], { name: 'Per key', type: 'requests', unit: 'rpm', value: 120, conditions: [{ key: 'workspace_id', value: '*' }], group_by: [{ key: 'api_key' }] });

    // Keyboard: the arrow key moves to the other tab.
    await page.getByRole('tab', { name: 'Rate limits' }).focus();
    await page.keyboard.press('ArrowRight');
    await page.getByRole('tab', { name: 'Usage limits', selected: true }).waitFor();
    await page.getByText('No usage limits.').waitFor();
    await page.getByRole('button', { name: 'New usage limit' }).click();
    dialog = page.getByRole('dialog', { name: 'New usage limit' });
    await dialog.getByLabel('Name').fill('Token budget');
    await dialog.getByLabel('Workspace', { exact: true }).selectOption({ label: 'team-a' });
    await dialog.getByLabel('Condition 1 value', { exact: true }).fill('team-a');
    await dialog.getByLabel('Counts').selectOption('tokens');
    await dialog.getByLabel('Budget').fill('5');
    await dialog.getByLabel('Alert threshold (optional)').fill('10');
    await dialog.getByRole('button', { name: 'Create usage limit' }).click();
    // The API refuses a threshold at or above the budget: its message and code show in the form.
    await dialog.getByText('alert_threshold must be less than credit_limit.').waitFor();
    t.match(await dialog.getByRole('alert').textContent(), /HTTP 400/);
    await dialog.getByLabel('Budget').fill('1000');
    await dialog.getByRole('button', { name: 'Create usage limit' }).click();
    await page.getByRole('cell', { name: '1,000 tokens' }).waitFor();
    const budgets = await api('GET', `/v1/policies/usage-limits?workspace_id=${team.id}`);
    t.equal(budgets.body.total, 1);
    const policy = budgets.body.data[0] as Json;
    t.match(policy, { name: 'Token budget', type: 'tokens', credit_limit: 1000, alert_threshold: 10, periodic_reset: null, conditions: [{ key: 'workspace_id', value: 'team-a' }] });

    // Traffic from the workspace's key spends its tokens.
    for (let i = 0; i < 3; i++) {
      const r = await api('POST', '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] }, team.key, direct(mock));
      t.equal(r.status, 200);
    }
    let usage = 0;
    for (let i = 0; i < 50 && usage === 0; i++) {
      const entities = await api('GET', `/v1/policies/usage-limits/${policy.id}/entities`);
      usage = (entities.body.data[0]?.current_usage as number | undefined) ?? 0;
      if (usage === 0) await new Promise((r) => setTimeout(r, 100));
    }
    t.ok(usage > 0, 'the policy counted the tokens');

    await page.getByRole('button', { name: 'Usage of Token budget' }).click();
    dialog = page.getByRole('dialog', { name: 'Usage of “Token budget”' });
    const meter = dialog.getByRole('meter');
    await meter.waitFor();
    t.equal(Number(await meter.getAttribute('value')), usage, 'the bar shows the usage');
    t.equal(Number(await meter.getAttribute('max')), 1000, 'against the budget');
    t.match(await dialog.textContent(), new RegExp(`${usage} / 1,000 tokens`));
    await browser.screenshot(page, 'policies');

    await dialog.getByRole('button', { name: /^Reset api_key:/ }).click(); // the confirm is accepted
    await dialog.getByText('0 / 1,000 tokens').waitFor();
    t.equal(Number(await meter.getAttribute('value')), 0);
    const after = await api('GET', `/v1/policies/usage-limits/${policy.id}/entities`);
    t.equal(after.body.data[0].current_usage, 0, 'the API holds the reset');
    await dialog.getByRole('button', { name: 'Close' }).click();
  });

  await t.test('phone width', async (t) => {
    // signIn waits for the navigation, which a phone keeps folded behind "Menu": sign in wide, then narrow.
    const phone = await browser.page({ width: 1280, height: 800 });
    await signIn(phone, gw.url, ADMIN_KEY);
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(`${gw.url}/console/#/configs`);
    await phone.getByRole('link', { name: 'Prod chat' }).waitFor();
    await browser.screenshot(phone, 'configs-phone');
    await phone.getByRole('link', { name: 'Prod chat' }).click();
    await phone.getByLabel('Config JSON', { exact: true }).waitFor();
    const width = await phone.evaluate<number>('document.documentElement.scrollWidth');
    t.ok(width <= 390, `the editor page fits the phone (${width} px)`);
    await phone.goto(`${gw.url}/console/#/policies?tab=usage`);
    await phone.getByRole('button', { name: 'Usage of Token budget' }).waitFor();
    t.ok((await phone.evaluate<number>('document.documentElement.scrollWidth')) <= 390, 'the policies page fits the phone');
  });

  await t.test('a read-only workspace key sees the pages without the controls it may not use', async (t) => {
    const key = insertKey(gw.store, { workspace_id: team.id, scopes: ['configs.list', 'configs.read', 'policies.list', 'policies.read'], name: 'reader' });
    const reader = await browser.page({ width: 1280, height: 800 });
    await signIn(reader, gw.url, key);
    const nav = reader.getByRole('navigation', { name: 'Console' });
    t.equal(await nav.getByRole('link', { name: 'Guardrails' }).count(), 0, 'no Guardrails page without its scopes');
    await nav.getByRole('link', { name: 'Configs' }).click();
    await reader.getByRole('link', { name: 'Prod chat' }).waitFor();
    t.equal(await reader.getByRole('link', { name: 'New config' }).count(), 0, 'no New config');
    t.equal(await reader.getByRole('button', { name: 'Delete Prod chat' }).count(), 0, 'no Delete');
    await reader.getByRole('link', { name: 'Prod chat' }).click();
    const editor = reader.getByLabel('Config JSON', { exact: true });
    await editor.waitFor();
    t.equal(await editor.getAttribute('readonly'), '', 'the editor is read-only');
    t.match(await editor.inputValue(), /"mode": "loadbalance"/, 'and shows the current version');
    t.equal(await reader.getByRole('button', { name: 'Save new version' }).count(), 0, 'no Save');
    await reader.getByRole('cell', { name: 'v2 (current)' }).waitFor();

    await nav.getByRole('link', { name: 'Policies' }).click();
    await reader.getByRole('tab', { name: 'Usage limits' }).click();
    await reader.getByRole('button', { name: 'Usage of Token budget' }).click();
    const dialog = reader.getByRole('dialog', { name: 'Usage of “Token budget”' });
    await dialog.getByRole('meter').waitFor();
    t.equal(await dialog.getByRole('button', { name: /^Reset / }).count(), 0, 'no Reset without policies.update');
    await dialog.getByRole('button', { name: 'Close' }).click();
    t.equal(await reader.getByRole('button', { name: 'New usage limit' }).count(), 0, 'no New usage limit');
    t.equal(await reader.getByRole('button', { name: 'Edit Token budget' }).count(), 0, 'no Edit');
  });

  // The two 400s provoked on purpose (the guardrail's parameter, the usage limit's threshold).
  const provoked = browser.problems.filter((p) => /Failed to load resource: the server responded with a status of 400/.test(p));
  t.equal(provoked.length, 2, 'exactly the provoked API errors');
  t.same(
    browser.problems.filter((p) => !provoked.includes(p)),
    [],
    'no other console errors',
  );
});
