/**
 * Routing with stored resources, end to end over real sockets: virtual keys (header, config
 * target, `@slug/model`), saved configs (by slug, pinned on an API key, the override lock),
 * integrations and providers, config validation errors that name the path inside the config, the
 * official OpenAI SDK through a fallback config, and the circuit breakers with their admin routes.
 */
import t from 'tap';
import { request } from 'undici';
import OpenAI from 'openai';
import { startGateway, startMock, ADMIN_KEY, addWorkspace, type MockUpstream, type StartedGateway, type Teardown } from './helpers/gateway.js';
import { resetBreakers, Scopes } from '../core/index.js';

const PIPELINE = 'pipeline: [auth, virtual-keys, config-strategy, admin-resources, admin-api-keys]\n';
const CHAT = { model: 'gpt-4o', messages: [{ role: 'user', content: 'route me' }] };
const VK_SECRET = 'sk-vk-SECRET-0123456789abcdef';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
  text: string;
}

interface CallOptions {
  key?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

type Call = (method: 'GET' | 'POST' | 'PUT', path: string, options?: CallOptions) => Promise<Answer>;

interface Started {
  gw: StartedGateway;
  mock: MockUpstream;
  call: Call;
  /** POST /v1/chat/completions with the admin key and these headers. */
  chat: (headers?: Record<string, string>, body?: unknown) => Promise<Answer>;
  /** An admin call that must succeed; its body. */
  ok: (method: 'POST' | 'PUT', path: string, body: unknown) => Promise<Record<string, unknown>>;
}

async function start(t: Teardown, yaml = PIPELINE): Promise<Started> {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const call: Call = async (method, path, { key = ADMIN_KEY, body, headers = {} } = {}) => {
    const res = await request(`${gw.url}${path}`, {
      method,
      headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    let parsed: Record<string, unknown> = {};
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      /* compared by status only */
    }
    return { status: res.statusCode, headers: res.headers, body: parsed, text };
  };
  const chat = (headers: Record<string, string> = {}, body: unknown = CHAT): Promise<Answer> => call('POST', '/v1/chat/completions', { body, headers });
  const ok = async (method: 'POST' | 'PUT', path: string, body: unknown): Promise<Record<string, unknown>> => {
    const a = await call(method, path, { body });
    if (a.status !== 200) throw new Error(`${method} ${path} → ${a.status} ${a.text}`);
    return a.body;
  };
  return { gw, mock, call, chat, ok };
}

const lastRequest = (mock: MockUpstream): MockUpstream['requests'][number] => {
  const r = mock.requests.at(-1);
  if (r === undefined) throw new Error('the mock saw no request');
  return r;
};

const sentBody = (mock: MockUpstream): Record<string, unknown> => JSON.parse(lastRequest(mock).body.toString('utf8')) as Record<string, unknown>;

const callsWith = (mock: MockUpstream, apiKey: string): number => mock.requests.filter((r) => r.headers.authorization === `Bearer ${apiKey}`).length;

const defaultWorkspace = (gw: StartedGateway): string => gw.store.meta.get('default_workspace_id') as string;

t.test('x-gateway-virtual-key routes with the stored key, headers and host', async (t) => {
  const { gw, mock, chat, ok } = await start(t);
  const { id } = await ok('POST', '/v1/virtual-keys', {
    name: 'main',
    slug: 'main',
    provider: 'openai',
    key: VK_SECRET,
    custom_host: `${mock.url}/v1`,
    custom_headers: { 'x-team': 'blue', 'OpenAI-Organization': 'org-vk' },
  });

  t.test('the mock gets the decrypted key, the custom headers, at the custom host', async (t) => {
    const a = await chat({ 'x-gateway-virtual-key': 'main', authorization: 'Bearer sk-client-should-not-pass' });
    t.equal(a.status, 200, a.status === 200 ? 'answered 200' : a.text);
    t.match(a.body, { object: 'chat.completion', choices: [{ message: { content: 'Mock reply to: route me' } }] });
    const seen = lastRequest(mock);
    t.equal(seen.path, '/v1/chat/completions');
    t.equal(seen.headers.host, `127.0.0.1:${mock.port}`);
    t.equal(seen.headers.authorization, `Bearer ${VK_SECRET}`, 'the virtual key, not the client bearer');
    t.equal(seen.headers['x-team'], 'blue');
    t.equal(seen.headers['openai-organization'], 'org-vk');
    t.equal(seen.headers['x-gateway-virtual-key'], undefined, 'gateway headers stay at the gateway');
    t.notMatch(a.text, VK_SECRET, 'the key is never echoed');
  });

  t.test('the whole custom host is used, path included', async (t) => {
    await ok('POST', '/v1/virtual-keys', { name: 'tools', slug: 'tools', provider: 'openai', key: VK_SECRET, custom_host: `${mock.url}/mock/tool_call/v1` });
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }];
    const a = await chat({ 'x-gateway-virtual-key': 'tools' }, { ...CHAT, tools });
    t.equal(a.status, 200, a.status === 200 ? 'answered 200' : a.text);
    t.match(a.body, { choices: [{ message: { content: null, tool_calls: [{ type: 'function', function: { name: 'lookup' } }] } }] }, 'the tool_call prefix of the host answered');
  });

  t.test('an unknown slug is 400 invalid_virtual_key', async (t) => {
    const before = mock.requests.length;
    const a = await chat({ 'x-gateway-virtual-key': 'no-such-key' });
    t.equal(a.status, 400);
    t.match(a.body, { error: { code: 'invalid_virtual_key', type: 'invalid_request_error', param: 'x-gateway-virtual-key' } });
    t.equal(mock.requests.length, before, 'nothing went upstream');
  });

  t.test('a virtual key of another workspace is unknown', async (t) => {
    const b = addWorkspace(gw.store, 'team-b', Scopes.DEFAULT_WORKSPACE_SCOPES);
    await ok('POST', '/v1/virtual-keys', { name: 'b-only', slug: 'b-only', provider: 'openai', key: 'sk-b-0123456789', custom_host: `${mock.url}/v1`, workspace_id: b.id });
    const fromDefault = await chat({ 'x-gateway-virtual-key': 'b-only' });
    t.equal(fromDefault.status, 400);
    t.match(fromDefault.body, { error: { code: 'invalid_virtual_key', param: 'x-gateway-virtual-key' } });
    const fromB = await chat({ 'x-gateway-api-key': b.key, 'x-gateway-virtual-key': 'main' });
    t.equal(fromB.status, 400, 'B cannot use the default workspace key either');
    t.match(fromB.body, { error: { code: 'invalid_virtual_key' } });
    const own = await chat({ 'x-gateway-api-key': b.key, 'x-gateway-virtual-key': 'b-only' });
    t.equal(own.status, 200, 'B uses its own');
    t.equal(lastRequest(mock).headers.authorization, 'Bearer sk-b-0123456789');
  });

  t.test('an expired key is 403 virtual_key_expired', async (t) => {
    const { id: expiring } = await ok('POST', '/v1/virtual-keys', { name: 'expiring', slug: 'expiring', provider: 'openai', key: VK_SECRET, custom_host: `${mock.url}/v1` });
    t.equal((await chat({ 'x-gateway-virtual-key': 'expiring' })).status, 200, 'usable before');
    gw.store.c.virtualKeys.update(expiring as string, (vk) => ({ ...vk, expires_at: new Date(Date.now() - 1000).toISOString() }));
    const a = await chat({ 'x-gateway-virtual-key': 'expiring' });
    t.equal(a.status, 403);
    t.match(a.body, { error: { code: 'virtual_key_expired', type: 'permission_error', param: 'x-gateway-virtual-key' } });
  });

  t.test('an exhausted key is 429 usage_limit_exceeded', async (t) => {
    gw.store.c.virtualKeys.update(id as string, (vk) => ({ ...vk, status: 'exhausted' }));
    const a = await chat({ 'x-gateway-virtual-key': 'main' });
    t.equal(a.status, 429);
    t.match(a.body, { error: { code: 'usage_limit_exceeded', type: 'rate_limit_error', param: 'x-gateway-virtual-key' } });
    gw.store.c.virtualKeys.update(id as string, (vk) => ({ ...vk, status: 'active' }));
    t.equal((await chat({ 'x-gateway-virtual-key': 'main' })).status, 200, 'usable again once active');
  });
});

t.test('a config target with virtual_key uses that key', async (t) => {
  const { mock, chat, ok } = await start(t);
  await ok('POST', '/v1/virtual-keys', { name: 'main', slug: 'main', provider: 'openai', key: VK_SECRET, custom_host: `${mock.url}/v1`, custom_headers: { 'x-team': 'green' } });
  const a = await chat({ 'x-gateway-config': JSON.stringify({ targets: [{ virtual_key: 'main' }] }) });
  t.equal(a.status, 200, a.status === 200 ? 'answered 200' : a.text);
  t.equal(a.headers['x-gateway-last-used-option-index'], 'config.targets[0]');
  t.equal(lastRequest(mock).headers.authorization, `Bearer ${VK_SECRET}`);
  t.equal(lastRequest(mock).headers['x-team'], 'green');

  const unknown = await chat({ 'x-gateway-config': JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'main' }, { virtual_key: 'ghost' }] }) });
  t.equal(unknown.status, 400);
  t.match(unknown.body, { error: { code: 'invalid_virtual_key', param: 'config.targets[1].virtual_key' } });
});

t.test('saved configs: by slug, pinned on an API key, the override lock', async (t) => {
  const { gw, mock, call, chat, ok } = await start(t);
  const primary = { targets: [{ provider: 'openai', custom_host: `${mock.url}/v1`, api_key: 'sk-saved-primary-0123' }] };
  const other = { targets: [{ provider: 'openai', custom_host: `${mock.url}/v1`, api_key: 'sk-saved-other-0123' }] };
  const slug = (await ok('POST', '/v1/configs', { name: 'primary', config: primary })).slug as string;
  const otherSlug = (await ok('POST', '/v1/configs', { name: 'other', config: other })).slug as string;
  const workspace = defaultWorkspace(gw);
  const newKey = async (name: string, defaults: Record<string, unknown>): Promise<string> =>
    (await ok('POST', '/v1/api-keys/workspace/service', { name, workspace_id: workspace, scopes: Scopes.DEFAULT_WORKSPACE_SCOPES, defaults })).key as string;

  t.test('x-gateway-config: <slug>', async (t) => {
    const a = await chat({ 'x-gateway-config': slug });
    t.equal(a.status, 200, a.status === 200 ? 'answered 200' : a.text);
    t.equal(lastRequest(mock).headers.authorization, 'Bearer sk-saved-primary-0123', 'the sealed key, unsealed for the call');
    t.equal(a.headers['x-gateway-last-used-option-index'], 'config.targets[0]');
  });

  t.test('an unknown slug is 400 unknown_config', async (t) => {
    const before = mock.requests.length;
    const a = await chat({ 'x-gateway-config': 'pc-nope' });
    t.equal(a.status, 400);
    t.match(a.body, { error: { code: 'unknown_config', param: 'x-gateway-config' } });
    t.equal(mock.requests.length, before);
  });

  t.test('a key with defaults.config_id routes by it with no header', async (t) => {
    const pinned = await newKey('pinned', { config_id: slug });
    const a = await call('POST', '/v1/chat/completions', { key: pinned, body: CHAT });
    t.equal(a.status, 200, a.status === 200 ? 'answered 200' : a.text);
    t.equal(lastRequest(mock).headers.authorization, 'Bearer sk-saved-primary-0123');
  });

  t.test('allow_config_override: false refuses x-gateway-config with 403', async (t) => {
    const locked = await newKey('locked', { config_id: slug, allow_config_override: false });
    const before = mock.requests.length;
    for (const header of [otherSlug, JSON.stringify(other)]) {
      const a = await call('POST', '/v1/chat/completions', { key: locked, body: CHAT, headers: { 'x-gateway-config': header } });
      t.equal(a.status, 403);
      t.match(a.body, { error: { code: 'config_override_not_allowed', type: 'permission_error', param: 'x-gateway-config' } });
    }
    t.equal(mock.requests.length, before, 'nothing went upstream');
    t.equal((await call('POST', '/v1/chat/completions', { key: locked, body: CHAT })).status, 200, 'without the header it routes by the pinned config');
    t.equal(lastRequest(mock).headers.authorization, 'Bearer sk-saved-primary-0123');
  });

  t.test('with override allowed the header wins', async (t) => {
    const open = await newKey('open', { config_id: slug, allow_config_override: true });
    const bySlug = await call('POST', '/v1/chat/completions', { key: open, body: CHAT, headers: { 'x-gateway-config': otherSlug } });
    t.equal(bySlug.status, 200, bySlug.status === 200 ? 'answered 200' : bySlug.text);
    t.equal(lastRequest(mock).headers.authorization, 'Bearer sk-saved-other-0123');
    const inline = await call('POST', '/v1/chat/completions', {
      key: open,
      body: CHAT,
      headers: { 'x-gateway-config': JSON.stringify({ targets: [{ provider: 'openai', custom_host: `${mock.url}/v1`, api_key: 'sk-inline-0123' }] }) },
    });
    t.equal(inline.status, 200, inline.status === 200 ? 'answered 200' : inline.text);
    t.equal(lastRequest(mock).headers.authorization, 'Bearer sk-inline-0123');
  });
});

t.test('inline config errors name the path inside the config', async (t) => {
  const { mock, chat } = await start(t);
  const good = { provider: 'openai', custom_host: `${mock.url}/v1`, api_key: 'sk-x' };
  const cases: Array<[string, unknown, string, string]> = [
    ['a negative weight', { strategy: { mode: 'loadbalance' }, targets: [good, { ...good, weight: -1 }] }, 'value_below_minimum', 'config.targets[1].weight'],
    ['a wrong type deep down', { strategy: { mode: 'fallback' }, targets: [good, { strategy: { mode: 'single' }, targets: [{ ...good, request_timeout: 'soon' }] }] }, 'invalid_type', 'config.targets[1].targets[0].request_timeout'],
    ['an unknown mode', { strategy: { mode: 'roundrobin' }, targets: [good] }, 'invalid_value', 'config.strategy.mode'],
    ['a typo on a group', { stratgey: { mode: 'fallback' }, targets: [good] }, 'unknown_parameter', 'config.stratgey'],
    ['conditional naming no target', { strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'x' }] }, targets: [{ ...good, name: 'y' }] }, 'invalid_value', 'config.strategy.conditions[0].then'],
  ];
  const before = mock.requests.length;
  for (const [name, config, code, param] of cases) {
    const a = await chat({ 'x-gateway-config': JSON.stringify(config) });
    t.equal(a.status, 400, `${name}: ${a.text}`);
    t.match(a.body, { error: { type: 'invalid_request_error', code, param } }, name);
  }
  const notJson = await chat({ 'x-gateway-config': '{"targets": [' });
  t.equal(notJson.status, 400);
  t.match(notJson.body, { error: { code: 'invalid_config', param: 'x-gateway-config' } });

  const metadata = await chat({ 'x-gateway-config': JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', custom_host: 'http://169.254.169.254' }] }) });
  t.equal(metadata.status, 400);
  t.match(metadata.body, { error: { code: 'invalid_custom_host', param: 'config.targets[0].custom_host' } });
  const onGroup = await chat({ 'x-gateway-config': JSON.stringify({ custom_host: 'http://169.254.169.254/v1', targets: [{ provider: 'openai' }] }) });
  t.equal(onGroup.status, 400);
  t.match(onGroup.body, { error: { code: 'invalid_custom_host', param: 'config.custom_host' } });
  t.equal(mock.requests.length, before, 'no refused config reached the upstream');
});

t.test('@slug/model: a provider on an integration, a virtual key, an unknown slug', async (t) => {
  const { mock, chat, ok } = await start(t);
  await ok('POST', '/v1/integrations', {
    name: 'OpenAI Prod',
    slug: 'openai-prod',
    ai_provider_id: 'openai',
    key: 'sk-integration-0123456789',
    configurations: { custom_host: `${mock.url}/v1`, custom_headers: { 'x-integration': 'prod' } },
  });
  const provider = (await ok('POST', '/v1/providers', { name: 'Prod', slug: 'prod', integration_id: 'openai-prod' })).slug as string;
  t.equal(provider, 'prod');

  const a = await chat({}, { ...CHAT, model: '@prod/gpt-4o' });
  t.equal(a.status, 200, a.status === 200 ? 'answered 200' : a.text);
  t.equal(sentBody(mock).model, 'gpt-4o', 'the provider sees the plain model name');
  t.same(sentBody(mock).messages, CHAT.messages, 'the rest of the body is kept');
  t.equal(lastRequest(mock).headers.authorization, 'Bearer sk-integration-0123456789');
  t.equal(lastRequest(mock).headers['x-integration'], 'prod');

  const slashed = await chat({}, { ...CHAT, model: '@prod/org/model-with/slashes' });
  t.equal(slashed.status, 200);
  t.equal(sentBody(mock).model, 'org/model-with/slashes', 'only the first segment is the slug');

  await ok('POST', '/v1/virtual-keys', { name: 'vk', slug: 'my-vk', provider: 'openai', key: VK_SECRET, custom_host: `${mock.url}/v1` });
  const viaVk = await chat({}, { ...CHAT, model: '@my-vk/gpt-4o-mini' });
  t.equal(viaVk.status, 200, viaVk.status === 200 ? 'answered 200' : viaVk.text);
  t.equal(sentBody(mock).model, 'gpt-4o-mini');
  t.equal(lastRequest(mock).headers.authorization, `Bearer ${VK_SECRET}`);

  const viaConfig = await chat({ 'x-gateway-config': JSON.stringify({ targets: [{ provider: '@prod' }] }) });
  t.equal(viaConfig.status, 200, viaConfig.status === 200 ? 'answered 200' : viaConfig.text);
  t.equal(lastRequest(mock).headers.authorization, 'Bearer sk-integration-0123456789', 'a config leaf may name the provider as @slug');

  const before = mock.requests.length;
  const unknown = await chat({}, { ...CHAT, model: '@nope/gpt-4o' });
  t.equal(unknown.status, 400);
  t.match(unknown.body, { error: { code: 'unknown_provider_slug', param: 'model' } });
  const unknownInConfig = await chat({ 'x-gateway-config': JSON.stringify({ targets: [{ provider: '@nope' }] }) });
  t.equal(unknownInConfig.status, 400);
  t.match(unknownInConfig.body, { error: { code: 'unknown_provider_slug', param: 'config.targets[0].provider' } });
  t.equal(mock.requests.length, before);
});

t.test('the OpenAI SDK through a fallback config: chat and stream', async (t) => {
  const { gw, mock } = await start(t);
  const config = {
    strategy: { mode: 'fallback' },
    targets: [
      { provider: 'openai', custom_host: `${mock.url}/mock/status=503/v1`, api_key: 'sk-first-0123' },
      { provider: 'openai', custom_host: `${mock.url}/v1`, api_key: 'sk-second-0123' },
    ],
  };
  const client = new OpenAI({
    baseURL: `${gw.url}/v1`,
    apiKey: 'x',
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-config': JSON.stringify(config) },
  });

  const { data, response } = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello there' }] }).withResponse();
  t.equal(data.choices[0]?.message.content, 'Mock reply to: hello there');
  t.equal(response.headers.get('x-gateway-last-used-option-index'), 'config.targets[1]');
  t.equal(callsWith(mock, 'sk-first-0123'), 1, 'the first target was tried');
  t.equal(callsWith(mock, 'sk-second-0123'), 1, 'and the second answered');

  const streamed = await client.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hello there' }] }).withResponse();
  t.equal(streamed.response.headers.get('x-gateway-last-used-option-index'), 'config.targets[1]');
  t.match(streamed.response.headers.get('content-type') ?? '', /^text\/event-stream/);
  let text = '';
  let chunks = 0;
  for await (const chunk of streamed.data) {
    chunks++;
    text += chunk.choices[0]?.delta.content ?? '';
  }
  t.ok(chunks > 1, `streamed in ${chunks} chunks`);
  t.equal(text, 'Mock reply to: hello there', 'the same content, streamed');
  t.equal(callsWith(mock, 'sk-first-0123'), 2);
  t.equal(callsWith(mock, 'sk-second-0123'), 2);
});

const BREAKER_PIPELINE = [
  'pipeline:',
  '  - auth',
  '  - virtual-keys',
  '  - config-strategy: {circuit_breaker: {failure_threshold: 3, failure_rate: 1, min_requests: 100, window_ms: 60000, cooldown_ms: 400}}',
  '  - admin-resources',
  '  - admin-api-keys',
  '',
].join('\n');
const COOLDOWN_MS = 400;
const pastCooldown = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, COOLDOWN_MS + 100));

interface BreakerRow {
  key: string;
  label: string;
  state: string;
  failures: number;
  requests: number;
  opened_at: string | null;
  opens: number;
}

async function breakers(call: Call): Promise<BreakerRow[]> {
  const a = await call('GET', '/v1/admin/routing/breakers');
  if (a.status !== 200) throw new Error(`breakers → ${a.status} ${a.text}`);
  return a.body.data as BreakerRow[];
}


t.test('circuit breaker: opens, skips, probes, closes (config targets with custom_host)', async (t) => {
  resetBreakers();
  const { gw, mock, call, chat } = await start(t, BREAKER_PIPELINE);
  const failing = {
    strategy: { mode: 'fallback' },
    targets: [
      { name: 'flaky', provider: 'openai', custom_host: `${mock.url}/mock/status=500/v1`, api_key: 'sk-bad-0123' },
      { name: 'steady', provider: 'openai', custom_host: `${mock.url}/v1`, api_key: 'sk-good-0123' },
    ],
  };
  const send = async (config: unknown): Promise<Answer> => {
    const a = await chat({ 'x-gateway-config': JSON.stringify(config) });
    t.equal(a.status, 200, a.status === 200 ? 'answered 200' : a.text);
    return a;
  };
  const flaky = (rows: BreakerRow[]): BreakerRow | undefined => rows.find((r) => r.label === 'flaky');

  t.test('three failures open the circuit', async (t) => {
    for (let i = 0; i < 3; i++) t.equal((await send(failing)).headers['x-gateway-last-used-option-index'], 'config.targets[1]');
    t.equal(callsWith(mock, 'sk-bad-0123'), 3);
    const row = flaky(await breakers(call));
    t.match(row, { label: 'flaky', state: 'open', failures: 3, opens: 1 });
    t.ok(row?.opened_at !== null && Date.parse(row?.opened_at ?? '') > 0, 'opened_at is a date');
    t.notMatch(JSON.stringify(await breakers(call)), 'sk-bad-0123', 'no key in the breaker list');
    t.match((await breakers(call)).find((r) => r.label === 'steady'), { state: 'closed', failures: 0 });
  });

  t.test('while open the failing target is skipped', async (t) => {
    for (let i = 0; i < 3; i++) t.equal((await send(failing)).headers['x-gateway-last-used-option-index'], 'config.targets[1]', 'answered by targets[1]');
    t.equal(callsWith(mock, 'sk-bad-0123'), 3, 'no more calls to the failing target');
    t.equal(callsWith(mock, 'sk-good-0123'), 6);
  });

  t.test('after the cooldown exactly one probe; it fails and the circuit reopens', async (t) => {
    await pastCooldown();
    const before = callsWith(mock, 'sk-bad-0123');
    await send(failing);
    t.equal(callsWith(mock, 'sk-bad-0123'), before + 1, 'the probe');
    t.match(flaky(await breakers(call)), { state: 'open', opens: 2 });
    await send(failing);
    await send(failing);
    t.equal(callsWith(mock, 'sk-bad-0123'), before + 1, 'reopened: skipped again');
  });

  t.test('a target that heals: the probe succeeds and closes the circuit', async (t) => {
    const healing = {
      strategy: { mode: 'fallback' },
      targets: [
        { name: 'healing', provider: 'openai', custom_host: `${mock.url}/mock/fail_first=3;key=heal;status=500/v1`, api_key: 'sk-heal-0123' },
        { name: 'steady', provider: 'openai', custom_host: `${mock.url}/v1`, api_key: 'sk-good-0123' },
      ],
    };
    for (let i = 0; i < 3; i++) t.equal((await send(healing)).headers['x-gateway-last-used-option-index'], 'config.targets[1]');
    t.match((await breakers(call)).find((r) => r.label === 'healing'), { state: 'open', failures: 3 });
    const opened = callsWith(mock, 'sk-heal-0123');
    t.equal((await send(healing)).headers['x-gateway-last-used-option-index'], 'config.targets[1]', 'skipped while open');
    t.equal(callsWith(mock, 'sk-heal-0123'), opened, 'not called while open');
    await pastCooldown();
    const probe = await send(healing);
    t.equal(probe.headers['x-gateway-last-used-option-index'], 'config.targets[0]', 'the probe answered');
    t.match((await breakers(call)).find((r) => r.label === 'healing'), { state: 'closed', opened_at: null });
    t.equal((await send(healing)).headers['x-gateway-last-used-option-index'], 'config.targets[0]', 'closed: used again');
  });

  t.test('reset closes everything; a workspace key may not see or reset breakers', async (t) => {
    const ws = addWorkspace(gw.store, 'team-w', Scopes.DEFAULT_WORKSPACE_SCOPES);
    const list = await call('GET', '/v1/admin/routing/breakers', { key: ws.key });
    t.equal(list.status, 403, list.text);
    const denied = await call('POST', '/v1/admin/routing/breakers/reset', { key: ws.key });
    t.equal(denied.status, 403);
    t.ok((await breakers(call)).some((r) => r.state === 'open'), 'the workspace key changed nothing');

    const reset = await call('POST', '/v1/admin/routing/breakers/reset');
    t.equal(reset.status, 200, reset.status === 200 ? 'answered 200' : reset.text);
    t.same((await breakers(call)).filter((r) => r.state !== 'closed'), [], 'no open circuit');
    const before = callsWith(mock, 'sk-bad-0123');
    await send(failing);
    t.equal(callsWith(mock, 'sk-bad-0123'), before + 1, 'the failing target is tried again');
    t.match(flaky(await breakers(call)), { state: 'closed', failures: 1 });
  });
});

t.test('regression: an open circuit on a virtual-key target is skipped', async (t) => {
  // Virtual keys carry their custom host inside the target, so the key the skip check computes
  // is the one the attempt recorded under: this is the path that works today.
  resetBreakers();
  const { mock, call, chat, ok } = await start(t, BREAKER_PIPELINE);
  await ok('POST', '/v1/virtual-keys', { name: 'bad', slug: 'bad', provider: 'openai', key: 'sk-vk-bad-0123', custom_host: `${mock.url}/mock/status=500/v1` });
  await ok('POST', '/v1/virtual-keys', { name: 'good', slug: 'good', provider: 'openai', key: 'sk-vk-good-0123', custom_host: `${mock.url}/v1` });
  const config = JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'bad' }, { virtual_key: 'good' }] });
  for (let i = 0; i < 3; i++) t.equal((await chat({ 'x-gateway-config': config })).status, 200);
  t.match((await breakers(call)).find((r) => r.label === 'virtual-key:bad'), { state: 'open', failures: 3 });
  for (let i = 0; i < 3; i++) {
    const a = await chat({ 'x-gateway-config': config });
    t.equal(a.headers['x-gateway-last-used-option-index'], 'config.targets[1]');
  }
  t.equal(callsWith(mock, 'sk-vk-bad-0123'), 3, 'skipped while open');
  await pastCooldown();
  await chat({ 'x-gateway-config': config });
  await chat({ 'x-gateway-config': config });
  t.equal(callsWith(mock, 'sk-vk-bad-0123'), 4, 'exactly one probe after the cooldown');
  t.match((await breakers(call)).find((r) => r.label === 'virtual-key:bad'), { state: 'open', opens: 2 });
});

t.test('regression: the last option\'s 5xx counts as a failure', async (t) => {
  resetBreakers();
  const { mock, call, chat, ok } = await start(t, BREAKER_PIPELINE);
  await ok('POST', '/v1/virtual-keys', { name: 'sick', slug: 'sick', provider: 'openai', key: 'sk-vk-sick-0123', custom_host: `${mock.url}/mock/status=500/v1` });
  const only = JSON.stringify({ targets: [{ virtual_key: 'sick' }] });
  for (let i = 0; i < 3; i++) {
    const a = await chat({ 'x-gateway-config': only });
    t.equal(a.status, 500, 'the upstream error goes back as it came');
    t.equal(a.headers['x-gateway-error-source'], 'upstream');
  }
  t.equal(callsWith(mock, 'sk-vk-sick-0123'), 3);
  t.match(
    (await breakers(call)).find((r) => r.label === 'virtual-key:sick'),
    { state: 'open', failures: 3 },
    'three 500s open the circuit',
  );
});

t.test('regression: a probe the client abandoned does not close the circuit', async (t) => {
  resetBreakers();
  const { gw, mock, call, chat, ok } = await start(t, BREAKER_PIPELINE);
  await ok('POST', '/v1/virtual-keys', { name: 'sick', slug: 'sick', provider: 'openai', key: 'sk-vk-sick-0123', custom_host: `${mock.url}/mock/status=500/v1` });
  await ok('POST', '/v1/virtual-keys', { name: 'good', slug: 'good', provider: 'openai', key: 'sk-vk-good-0123', custom_host: `${mock.url}/v1` });
  const config = JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'sick' }, { virtual_key: 'good' }] });
  for (let i = 0; i < 3; i++) t.equal((await chat({ 'x-gateway-config': config })).status, 200);
  t.match((await breakers(call)).find((r) => r.label === 'virtual-key:sick'), { state: 'open' });
  await pastCooldown();
  // The probe hangs upstream (x-mock-* headers pass through to the mock) and the client gives up.
  const abandoned = request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json', 'x-mock-hang': '1', 'x-gateway-config': config },
    body: JSON.stringify(CHAT),
    signal: AbortSignal.timeout(300),
  });
  await t.rejects(abandoned, 'the client gave up');
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal(callsWith(mock, 'sk-vk-sick-0123'), 4, 'the probe reached the upstream');
  t.not(
    (await breakers(call)).find((r) => r.label === 'virtual-key:sick')?.state,
    'closed',
    'an unanswered probe is no evidence of health',
  );
});
