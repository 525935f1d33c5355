/**
 * The log filters the console needs besides the reference's: `virtual_key`, `config` and `route`
 * on GET /v1/logs (exact matches; no index, so a walk or a WHERE on the record), and the same in
 * log exports (`virtual_keys`, `configs`, our `provider`, `api_key_id`, `route`). Run against the
 * embedded LMDB driver and, when PostgreSQL and Valkey are installed, the distributed one: the
 * same traffic must answer the same.
 */
import t, { type Test } from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { startGateway, startMock, ADMIN_KEY, direct, type MockUpstream } from './helpers/gateway.js';
import { needServices } from './helpers/services.js';
import { distributedBackends, startHosts } from './helpers/hosts.js';

const PIPELINE = 'pipeline:\n  - logging: {flush_ms: 50}\n  - auth\n  - virtual-keys\n  - config-strategy\n  - admin-resources\n';
const CHAT = { model: 'gpt-4o', messages: [{ role: 'user', content: 'filter me' }] };

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test JSON
type Json = any;

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Json; text: string }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'x-gateway-api-key': ADMIN_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: Json;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text };
}

const ids = (list: { body: { data: Array<{ id: string }> } }): string[] => list.body.data.map((r) => r.id).sort();

/** Traffic with a virtual key, a saved config, direct mode and an error; then every filter. */
async function scenario(t: Test, base: string, mock: MockUpstream): Promise<void> {
  const vk = await call(base, 'POST', '/v1/virtual-keys', { name: 'Filters VK', slug: 'filters-vk', provider: 'openai', key: 'sk-vk-0123456789abcdef', custom_host: `${mock.url}/v1` });
  t.equal(vk.status, 200, vk.text);
  const cfg = await call(base, 'POST', '/v1/configs', { name: 'filters', config: { targets: [{ provider: 'openai', api_key: 'sk-cfg-0123456789', custom_host: `${mock.url}/v1` }] } });
  t.equal(cfg.status, 200, cfg.text);
  const slug = cfg.body.slug as string;
  const run = { 'x-gateway-metadata': JSON.stringify({ run: 'filters' }) };
  const chat = async (headers: Record<string, string>): Promise<string> => {
    const r = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json', ...run, ...headers },
      body: JSON.stringify(CHAT),
    });
    await r.arrayBuffer();
    return r.headers.get('x-gateway-request-id') ?? '';
  };
  const viaVk = [await chat({ 'x-gateway-virtual-key': 'filters-vk' }), await chat({ 'x-gateway-virtual-key': 'filters-vk' })];
  const viaConfig = await chat({ 'x-gateway-config': slug });
  const viaDirect = await chat(direct(mock));
  const failed = await chat(direct(mock, 'status=429'));
  const all = [...viaVk, viaConfig, viaDirect, failed];
  const byRun = `/v1/logs?metadata=${encodeURIComponent('{"run":"filters"}')}`;
  const deadline = Date.now() + 15_000;
  while ((await call(base, 'GET', byRun)).body?.total !== 5 && Date.now() < deadline) await sleep(50);

  const list = (q: string): Promise<{ status: number; body: Json; text: string }> => call(base, 'GET', `${byRun}&${q}`);
  t.same(ids(await list('route=chat.completions')), [...all].sort(), 'route: every model call');
  t.same(ids(await list('virtual_key=filters-vk')), [...viaVk].sort(), 'virtual_key: the calls that named it');
  t.same(ids(await list('virtual_key=other')), [], 'virtual_key: another slug matches nothing');
  t.same(ids(await list(`config=${slug}`)), [viaConfig], 'config: a bare saved config slug');
  t.same(ids(await list(`config=${encodeURIComponent(`config:${slug}`)}`)), [viaConfig], 'config: the recorded source');
  t.same(ids(await list('config=virtual-key:filters-vk')), [...viaVk].sort(), 'config: a virtual key source');
  t.same(ids(await list('virtual_key=filters-vk&status=429')), [], 'with the other filters');
  t.same(ids(await list('status=429&route=chat.completions')), [failed]);

  // The admin API calls are logged too (route `plugin`): a route list tells them apart.
  const admin = await call(base, 'GET', '/v1/logs?route=plugin&page_size=100');
  t.ok(admin.body.total >= 2, 'the admin calls are listed under route=plugin');
  t.ok(admin.body.data.every((r: { route: string }) => r.route === 'plugin'), 'and only they');
  const both = await call(base, 'GET', '/v1/logs?route=plugin,chat.completions&page_size=100');
  t.ok(all.every((id) => both.body.data.some((r: { id: string }) => r.id === id)), 'a comma list: either route');
  const bad = await call(base, 'GET', '/v1/logs?route=Chat!');
  t.equal(bad.status, 400, 'a malformed route list is a 400');

  // The OpenAPI document describes them.
  const doc = await call(base, 'GET', '/v1/openapi.json');
  const params = (doc.body.paths['/v1/logs'].get.parameters as Array<{ name: string; description?: string }>).filter((p) => ['virtual_key', 'config', 'route'].includes(p.name));
  t.same(params.map((p) => p.name).sort(), ['config', 'route', 'virtual_key'], 'GET /v1/logs documents the new filters');
  t.ok(params.every((p) => (p.description ?? (p as Json).schema?.description ?? '').length > 20), 'each with a description');

  // Pages with an unindexed filter: the cursor continues.
  const p1 = await list('virtual_key=filters-vk&page_size=1');
  t.equal(p1.body.data.length, 1);
  t.equal(p1.body.has_more, true);
  const p2 = await list(`virtual_key=filters-vk&page_size=1&cursor=${p1.body.next_cursor}`);
  t.same([p1.body.data[0].id, p2.body.data[0].id].sort(), [...viaVk].sort(), 'page two holds the other one');

  // Exports select the same.
  const exported = async (filters: Record<string, unknown>): Promise<number> => {
    const r = await call(base, 'POST', '/v1/logs/exports', { filters: { metadata: { run: 'filters' }, ...filters }, requested_data: ['id'] });
    t.equal(r.status, 200, r.text);
    return r.body.total as number;
  };
  t.equal(await exported({ virtual_keys: 'filters-vk' }), 2, 'export: virtual_keys');
  t.equal(await exported({ configs: slug }), 1, 'export: a bare config slug');
  t.equal(await exported({ configs: `config:${slug},virtual-key:filters-vk` }), 3, 'export: recorded sources');
  t.equal(await exported({ route: 'chat.completions' }), 5, 'export: route');
  t.equal(await exported({ route: 'plugin' }), 0);
  t.equal(await exported({ provider: 'openai', status_code: '429' }), 1, 'export: provider');
  const keyId = (await call(base, 'GET', `/v1/logs/${viaDirect}`)).body.api_key_id as string;
  t.equal(await exported({ api_key_id: keyId }), 5, 'export: api_key_id');
  t.equal(await exported({ api_key_id: 'nope' }), 0);
}

t.test('virtual_key, config and route filters: embedded (LMDB)', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: PIPELINE, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  await scenario(t, gw.url, mock);
});

t.test('virtual_key, config and route filters: distributed (PostgreSQL)', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const mock = await startMock(t);
  const [host] = await startHosts(t, 1, { backends, yaml: PIPELINE });
  await scenario(t, host!.url, mock);
});
