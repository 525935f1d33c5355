/**
 * Vertex AI service-account credentials: the key stored sealed in a virtual key (or carried by a
 * config target) is exchanged at its `token_uri` (the mock's OAuth endpoint) for an access token,
 * which is cached until near expiry and shared by concurrent requests; failures are clear gateway
 * errors that never show the private key or a token, and the token URL passes the SSRF guard.
 */
import t from 'tap';
import OpenAI from 'openai';
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:net';
import { generateKeyPair, importSPKI, jwtVerify, SignJWT } from 'jose';
import { ADMIN_KEY, startGateway, startMock, type MockUpstream } from './helpers/gateway.js';
import { AccessTokenCache, type TokenServices } from '../core/providers/vertex/access-token.js';
import { serviceAccountOf } from '../core/providers/vertex/service-account.js';

const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const MODEL_PATH = '/v1/projects/sa-proj/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent';

function newKeyPair(): { privateKey: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

function serviceAccount(privateKey: string, tokenUri: string, email = 'gateway@sa-proj.iam.gserviceaccount.com'): Record<string, string> {
  return { type: 'service_account', project_id: 'sa-proj', private_key_id: 'kid-0001', private_key: privateKey, client_email: email, token_uri: tokenUri };
}

function tokenCalls(mock: MockUpstream): number {
  return mock.requests.filter((r) => r.path.split('?')[0] === '/token').length;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('a service account in a virtual key: one exchange for many calls, again after expiry', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: 'pipeline: [auth, virtual-keys, config-strategy, admin-resources]\n', env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const admin = async (method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> => {
    const res = await fetch(`${gw.url}/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': ADMIN_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  };
  const keys = newKeyPair();
  // Tokens live 4 s, so the gateway refreshes them after 2 s (half the life, under five minutes).
  const tokenUri = `${mock.url}/token?expires_in=4`;
  const created = await admin('POST', '/virtual-keys', {
    name: 'vertex prod',
    slug: 'vertex-prod',
    provider: 'vertex-ai',
    custom_host: `${mock.url}/v1`,
    vertex_project_id: 'sa-proj',
    vertex_region: 'us-central1',
    vertex_service_account_json: serviceAccount(keys.privateKey, tokenUri),
  });
  t.equal(created.status, 200, created.text);
  const id = (JSON.parse(created.text) as { id: string }).id;
  const read = await admin('GET', `/virtual-keys/${id}`);
  t.notMatch(read.text, 'BEGIN PRIVATE KEY', 'the private key is never shown');
  t.notMatch(read.text, keys.privateKey.split('\n')[1]!, 'not even a line of it');

  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-virtual-key': 'vertex-prod' } });
  const ask = (content: string) => client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content }] });

  // A cold start under load: every request waits on the same exchange.
  const burst = await Promise.all([ask('one'), ask('two'), ask('three'), ask('four')]);
  t.same(burst.map((a) => a.choices[0]?.message.content), ['Mock reply to: one', 'Mock reply to: two', 'Mock reply to: three', 'Mock reply to: four']);
  t.equal(tokenCalls(mock), 1, 'concurrent requests share one exchange');
  await ask('five');
  await ask('six');
  t.equal(tokenCalls(mock), 1, 'later calls reuse the cached token');

  const exchange = mock.requests.find((r) => r.path.startsWith('/token'))!;
  t.equal(exchange.headers['content-type'], 'application/x-www-form-urlencoded');
  const form = new URLSearchParams(exchange.body.toString());
  t.equal(form.get('grant_type'), 'urn:ietf:params:oauth:grant-type:jwt-bearer');
  const { payload, protectedHeader } = await jwtVerify(form.get('assertion')!, await importSPKI(keys.publicKey, 'RS256'), { audience: tokenUri });
  t.equal(protectedHeader.alg, 'RS256', 'signed RS256 with the service account key (verified with its public key)');
  t.equal(protectedHeader.kid, 'kid-0001');
  t.equal(payload.iss, 'gateway@sa-proj.iam.gserviceaccount.com');
  t.equal(payload.scope, SCOPE);
  t.equal(payload.exp! - payload.iat!, 3600, 'an hour-long assertion');

  const calls = mock.requests.filter((r) => r.path === MODEL_PATH);
  t.equal(calls.length, 6);
  const token = /^Bearer (ya29\.mock\.\S+)$/.exec(String(calls[0]!.headers.authorization))?.[1];
  t.ok(token, 'the call carries the access token the mock issued');
  t.ok(calls.every((c) => c.headers.authorization === `Bearer ${token}`), 'the same token on every call');

  await sleep(2300);
  await ask('seven');
  t.equal(tokenCalls(mock), 2, 'a token near expiry is exchanged again');
  t.not(mock.requests.at(-1)!.headers.authorization, `Bearer ${token}`, 'and the new one is used');

  const logged = JSON.stringify(gw.logs);
  t.notMatch(logged, 'BEGIN PRIVATE KEY', 'the private key is not logged');
  t.notMatch(logged, token!, 'the token is not logged');
});

t.test('service-account failures are clear errors without secrets', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: 'pipeline: [config-strategy]\n' });
  const keys = newKeyPair();
  const keyLine = keys.privateKey.split('\n')[2]!;
  const call = async (account: unknown): Promise<{ status: number; body: { error: { code: string; param: string | null; message: string } }; text: string }> => {
    const config = { provider: 'vertex-ai', custom_host: `${mock.url}/v1`, vertex_project_id: 'sa-proj', vertex_region: 'us-central1', vertex_service_account_json: account };
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-config': JSON.stringify(config) },
      body: JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text) as { error: { code: string; param: string | null; message: string } }, text };
  };

  await t.test('malformed service-account JSON', async (t) => {
    for (const [what, account] of [
      ['no client_email', { type: 'service_account', private_key: keys.privateKey, token_uri: `${mock.url}/token` }],
      ['not a PEM key', { type: 'service_account', client_email: 'a@b.c', private_key: 'not-a-key-0123456789', token_uri: `${mock.url}/token` }],
      ['a PEM that is no RSA key', { type: 'service_account', client_email: 'a@b.c', private_key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n', token_uri: `${mock.url}/token` }],
      ['a bad token_uri', { type: 'service_account', client_email: 'a@b.c', private_key: keys.privateKey, token_uri: 'not a url' }],
      ['another type', { type: 'authorized_user', client_email: 'a@b.c', private_key: keys.privateKey }],
    ] as const) {
      const res = await call(account);
      t.equal(res.status, 400, what);
      t.equal(res.body.error.code, 'invalid_provider_field', what);
      t.equal(res.body.error.param, 'vertex_service_account_json', what);
      t.notMatch(res.text, keyLine, `${what}: no key material in the error`);
      t.notMatch(res.text, 'not-a-key', `${what}: nor the value`);
    }
    t.equal(tokenCalls(mock), 0, 'nothing was exchanged');
  });

  await t.test('a token endpoint that refuses', async (t) => {
    const res = await call(serviceAccount(keys.privateKey, `${mock.url}/mock/status=400/token`));
    t.equal(res.status, 502);
    t.equal(res.body.error.code, 'provider_auth_failed');
    t.match(res.body.error.message, /HTTP 400 \(invalid_grant\)/, 'says what the endpoint said');
    t.notMatch(res.text, keyLine, 'no key material');
    t.equal(mock.requests.filter((r) => r.path.includes(':generateContent')).length, 0, 'no model call without a token');
    const again = await call(serviceAccount(keys.privateKey, `${mock.url}/mock/status=400/token`));
    t.equal(again.status, 502);
    t.equal(tokenCalls(mock), 2, 'a failure is not cached: the next request tries again');
  });

  await t.test('an unreachable token endpoint', async (t) => {
    const closed = await new Promise<number>((resolve) => {
      const srv = createServer();
      srv.listen(0, '127.0.0.1', () => {
        const { port } = srv.address() as { port: number };
        srv.close(() => resolve(port));
      });
    });
    const res = await call(serviceAccount(keys.privateKey, `http://127.0.0.1:${closed}/token`));
    t.equal(res.status, 502);
    t.equal(res.body.error.code, 'provider_auth_failed');
  });

  await t.test('the token URL passes the SSRF guard', async (t) => {
    for (const uri of ['http://169.254.169.254/computeMetadata/v1/token', 'http://10.0.0.5/token', 'file:///etc/passwd']) {
      const res = await call(serviceAccount(keys.privateKey, uri));
      t.equal(res.status, 400, uri);
      t.equal(res.body.error.code, 'invalid_upstream_url', uri);
      t.equal(res.body.error.param, 'vertex_service_account_json.token_uri');
    }
  });

  await t.test('a JSON string parses like the object', async (t) => {
    const fields = { vertex_service_account_json: JSON.stringify(serviceAccount(keys.privateKey, `${mock.url}/token`)) };
    t.equal(serviceAccountOf(fields)?.clientEmail, 'gateway@sa-proj.iam.gserviceaccount.com');
    t.equal(serviceAccountOf(fields)?.tokenUri, `${mock.url}/token`);
    t.throws(() => serviceAccountOf({ vertex_service_account_json: '{"private_key": "-----BEGIN' }), { code: 'invalid_provider_field', param: 'vertex_service_account_json' });
    t.equal(serviceAccountOf({}), undefined, 'no field, no service account');
    t.notMatch(JSON.stringify(gw.logs), keyLine, 'no key material in the logs');
  });
});

t.test('the token cache: margin, single flight, failures not cached', async (t) => {
  const mock = await startMock(t);
  let now = 1_000_000;
  const cache = new AccessTokenCache(() => now);
  const { Agent } = await import('undici');
  const agent = new Agent();
  t.teardown(() => agent.close());
  const services: TokenServices = { policy: () => ({ allow: [], allow_loopback: true }), dispatcher: agent };
  const account = serviceAccountOf({ vertex_service_account_json: serviceAccount(newKeyPair().privateKey, `${mock.url}/token`) })!;
  const [a, b] = await Promise.all([cache.get(account, services), cache.get(account, services)]);
  t.equal(a, b);
  t.equal(tokenCalls(mock), 1);
  now += 3599_000 - 5 * 60_000 - 1;
  t.equal(await cache.get(account, services), a, 'still cached just before the five-minute margin');
  now += 2;
  const c = await cache.get(account, services);
  t.not(c, a, 'refreshed inside the margin');
  t.equal(tokenCalls(mock), 2);
});

t.test("the mock's token endpoint checks the grant as Google does", async (t) => {
  const mock = await startMock(t);
  const { privateKey } = await generateKeyPair('RS256');
  const url = `${mock.url}/token`;
  const now = Math.floor(Date.now() / 1000);
  const assertion = (claims: Record<string, unknown>, aud = url) =>
    new SignJWT({ scope: SCOPE, ...claims }).setProtectedHeader({ alg: 'RS256' }).setIssuer('sa@p.iam.gserviceaccount.com').setAudience(aud).setIssuedAt(now).setExpirationTime(now + 3600).sign(privateKey);
  const post = async (form: Record<string, string>) => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const good = await post({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: await assertion({}) });
  t.equal(good.status, 200);
  t.equal(good.body.token_type, 'Bearer');
  t.equal(good.body.expires_in, 3599);
  t.match(good.body.access_token, /^ya29\./);
  t.same((await post({ grant_type: 'client_credentials', assertion: await assertion({}) })).body.error, 'unsupported_grant_type');
  t.same((await post({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: await assertion({ scope: 'openid' }) })).body.error, 'invalid_scope');
  t.same((await post({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: await assertion({}, 'https://elsewhere/token') })).status, 400, 'aud must be the endpoint');
  t.same((await post({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: 'not.a-jwt' })).body.error, 'invalid_grant');
});
