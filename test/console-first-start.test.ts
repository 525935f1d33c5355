/**
 * The console's first-start flow and sign-in, in a real browser against the real CLI:
 *   - `npm start` on a fresh data dir prints the first admin key and where the console is;
 *   - a wrong key is refused with the API's message and code; the printed key signs in and the
 *     start page says where to go (and how to send a first request);
 *   - the credential lives in session storage only: never in the URL or a cookie, and the
 *     gateway's logs never contain it; a reload stays signed in, sign-out forgets it;
 *   - a JWT signs in when JWT auth is configured, and the navigation shows only what its scopes allow.
 */
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { startCli, REPO } from './helpers/process.js';
import { startGateway, tempDir, ADMIN_KEY } from './helpers/gateway.js';
import { launchBrowser, signIn } from './helpers/browser.js';

const navLinks = async (page: import('playwright-core').Page): Promise<string[]> =>
  page.getByRole('navigation', { name: 'Console' }).getByRole('link').allInnerTexts();

t.test('first start: the printed admin key signs in to the console and the start page says where to go', async (t) => {
  const cli = await startCli(t, ['start', '--config', join(REPO, 'config', 'gateway.yaml')], {
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_PORT: '0',
    GATEWAY_DATA_DIR: join(tempDir(), 'data'),
    GATEWAY_ADMIN_KEY: '',
  });
  const out = cli.stdout();
  const key = /shown once, store it now\):\s+(\S+)/.exec(out)?.[1];
  t.ok(key, 'the first admin key is printed');
  t.match(out, 'Sign in to the console with it', 'the key banner points at the console');
  t.match(out, new RegExp(`console at ${cli.url.replace(/[.]/g, '\\.')}/console/`), 'and so does the listening line');

  const browser = await launchBrowser(t);

  if (browser === null) return;
  const page = await browser.page();
  await page.goto(cli.url); // `/` redirects to the console
  t.match(page.url(), /\/console\/$/);
  await page.getByLabel('API key or JWT').fill('gw-not-a-real-key-0000000000000000000000000');
  await page.getByRole('button', { name: 'Sign in' }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor();
  t.match(await alert.innerText(), /invalid_api_key/, 'a wrong key shows the API error code');
  t.match(await alert.innerText(), /HTTP 401/);

  await page.getByLabel('API key or JWT').fill(key!);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Start', level: 1 }).waitFor();
  await page.getByRole('heading', { name: 'Send a first request' }).waitFor();
  const where = await page.getByRole('heading', { name: 'Where to go' }).locator('xpath=../..').innerText();
  for (const name of ['Overview', 'Logs', 'Workspaces', 'Virtual keys', 'Configs', 'Policies']) t.match(where, name, `the start page points to ${name}`);
  t.ok((await navLinks(page)).includes('API keys'), 'an admin key sees every page');
  await browser.screenshot(page, 'start');

  // Evaluated as text: the test build has no DOM types.
  const stored = (await page.evaluate('({ session: Object.entries(sessionStorage), local: Object.keys(localStorage), cookie: document.cookie, url: location.href })')) as {
    session: Array<[string, string]>;
    local: string[];
    cookie: string;
    url: string;
  };
  t.same(stored.session.map(([, v]) => v), [key], 'the key is in session storage');
  t.same(stored.local, [], 'and not in local storage');
  t.equal(stored.cookie, '', 'nor in a cookie');
  t.notMatch(stored.url, key!, 'nor in the URL');

  await page.reload();
  await page.getByRole('heading', { name: 'Start', level: 1 }).waitFor();
  t.pass('a reload stays signed in');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('API key or JWT').waitFor();
  t.same(await page.evaluate('sessionStorage.length'), 0, 'sign-out forgets the key');

  t.equal(cli.stdout().split(key!).length - 1, 1, 'the key appears on stdout once, in the banner');
  t.notMatch(cli.stderr(), key!, 'and never in the logs');
  t.same(browser.problems.filter((p) => !/status of 401/.test(p)), [], 'no console errors but the refused sign-in');
});

t.test('a JWT signs in, and the navigation shows only what its scopes allow', async (t) => {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const jwks = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => jwks.close(() => r())));
  const jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
  const gw = await startGateway(t, {
    yaml: `pipeline:\n  - logging\n  - auth:\n      jwt: {jwks_url: "${jwksUrl}", issuer: "https://idp.test/", audience: gateway, scopes_claim: perms}\n  - admin-resources\n  - admin-api-keys\n  - console\n`,
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
  });
  const token = await new SignJWT({ perms: 'configs.list configs.read logs.list logs.view', workspace: 'default' })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuer('https://idp.test/')
    .setAudience('gateway')
    .setSubject('user-42')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(privateKey);

  const browser = await launchBrowser(t);

  if (browser === null) return;
  const page = await browser.page();
  await signIn(page, gw.url, token);
  const links = await navLinks(page);
  t.ok(links.includes('Configs'), 'configs: the token holds configs.list');
  t.ok(links.includes('Logs'), 'logs: the token holds logs.list');
  t.notOk(links.includes('API keys'), 'no API keys page without a key scope');
  t.notOk(links.includes('Policies'), 'no policies page: neither the scope nor the plugin');
  t.notOk(links.includes('Overview'), 'no overview: no analytics.view');
  await page.goto(`${gw.url}/console/#/api-keys`);
  await page.getByRole('heading', { name: 'Not here' }).waitFor();
  t.pass('a page the scopes do not allow says so instead of breaking');
  t.same(browser.problems, [], 'no console errors');
  t.notMatch(JSON.stringify(gw.logs), token, 'the token is never logged');
});
