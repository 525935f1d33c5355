/**
 * Admin reads and resets of usage in distributed mode: a policy's entities report the spend Valkey
 * holds, charged through two hosts; an entity reset and a virtual key's `reset_usage` zero the
 * shared counter, so every host admits again.
 */
import t from 'tap';
import { Redis } from 'ioredis';
import { needServices } from './helpers/services.js';
import { distributedBackends, startHosts, type Host } from './helpers/hosts.js';
import { ADMIN_KEY, direct, startMock, type MockUpstream } from './helpers/gateway.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const SHARED_DATA_DIR = false;
const YAML = `
pipeline:
  - auth
  - virtual-keys
  - config-strategy
  - rate-limit
  - usage-limits: {flush_ms: 20, reservation_cap: 1}
  - admin-api-keys
  - admin-resources
  - admin-policies
`;

async function admin(host: Host, method: string, path: string, body?: unknown): Promise<Json> {
  const res = await fetch(`${host.url}/v1${path}`, {
    method,
    headers: { 'x-gateway-api-key': ADMIN_KEY, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json()) as Json;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function chat(host: Host, headers: Record<string, string>): Promise<{ status: number; code?: string; tokens: number }> {
  const res = await fetch(`${host.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'gpt-4o', max_tokens: 40, messages: [{ role: 'user', content: 'how much have I spent' }] }),
  });
  const json = (await res.json()) as Json;
  return { status: res.status, code: json.error?.code, tokens: json.usage?.total_tokens ?? 0 };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Calls round the hosts until the budget refuses with nothing in flight; returns the tokens spent. */
async function spendAll(hosts: Host[], headers: Record<string, string>): Promise<{ calls: number; tokens: number; code?: string }> {
  let tokens = 0;
  for (let i = 0; i < 50; i++) {
    let x = await chat(hosts[i % hosts.length]!, headers);
    if (x.status !== 200) {
      await sleep(200);
      x = await chat(hosts[i % hosts.length]!, headers);
    }
    if (x.status !== 200) return { calls: i, tokens, code: x.code };
    tokens += x.tokens;
  }
  throw new Error('the budget never refused');
}

t.test('admin usage reads and resets go to Valkey', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const redis = new Redis(backends.redisUrl, { maxRetriesPerRequest: 1 });
  t.teardown(() => redis.disconnect());
  const mock: MockUpstream = await startMock(t);
  const [a, b] = (await startHosts(t, 2, { backends, yaml: YAML, sharedDataDir: SHARED_DATA_DIR })) as [Host, Host];

  t.test('policy entities: read and reset', async (t) => {
    const k = (await admin(a, 'POST', '/api-keys/workspace/service', { name: 'policy', scopes: ['completions.write'] })) as { id: string; key: string };
    const headers = { ...direct(mock), 'x-gateway-api-key': k.key };
    const policy = await admin(a, 'POST', '/policies/usage-limits', {
      conditions: [{ key: 'api_key', value: k.id }],
      group_by: [{ key: 'api_key' }],
      type: 'tokens',
      credit_limit: 200,
    });
    const spent = await spendAll([a, b], headers);
    t.equal(spent.code, 'usage_limit_exceeded');
    t.ok(spent.tokens <= 200 && spent.calls > 0, `${spent.tokens} tokens in ${spent.calls} calls`);
    const counter = `gw:gov:b:${policy.id}:api_key:${k.id}`;
    t.equal(Number(await redis.hget(counter, 'u')), spent.tokens, 'Valkey holds the spend of both hosts');
    await sleep(100);
    const entities = await admin(b, 'GET', `/policies/usage-limits/${policy.id}/entities`);
    t.equal(entities.data.length, 1);
    t.equal(entities.data[0].current_usage, spent.tokens, 'the entity list reports it');
    const withUsage = await admin(a, 'GET', `/policies/usage-limits/${policy.id}?include_usage=true`);
    t.equal(withUsage.value_key_usage_map[`api_key:${k.id}`].current_usage, spent.tokens, 'so does the policy read');
    // Valkey decides: a value written there (another host's settle) shows at once.
    await redis.hincrbyfloat(counter, 'u', 1);
    t.equal((await admin(b, 'GET', `/policies/usage-limits/${policy.id}/entities`)).data[0].current_usage, spent.tokens + 1, 'read from Valkey, not from the mirror');
    await admin(b, 'PUT', `/policies/usage-limits/${policy.id}/entities/${encodeURIComponent(entities.data[0].id)}/reset`);
    t.equal(await redis.hget(counter, 'u'), '0', 'the reset zeroed the shared counter (zero, not deleted: a missing total is seeded from a mirror)');
    t.equal((await chat(a, headers)).status, 200, 'every host admits again');
  });

  t.test('a virtual key reset_usage zeroes its shared budget', async (t) => {
    await admin(a, 'POST', '/virtual-keys', {
      name: 'budgeted',
      slug: 'budgeted',
      provider: 'openai',
      key: 'sk-vk-0123456789',
      custom_host: `${mock.url}/v1`,
      usage_limits: { credit_limit: 150, type: 'tokens' },
    });
    const vk = (await admin(a, 'GET', '/virtual-keys/budgeted')) as { id: string };
    const headers = { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-virtual-key': 'budgeted' };
    const spent = await spendAll([a, b], headers);
    t.ok(spent.calls > 0 && spent.tokens <= 150, `${spent.tokens} tokens in ${spent.calls} calls, then refused`);
    const counter = `gw:gov:b:entity:virtual_key:${vk.id}@start@all`;
    t.equal(Number(await redis.hget(counter, 'u')), spent.tokens);
    await admin(b, 'PUT', '/virtual-keys/budgeted', { reset_usage: true });
    t.equal(await redis.hget(counter, 'u'), '0', 'reset in Valkey');
    t.equal((await chat(a, headers)).status, 200, 'admitted again');
  });
});
