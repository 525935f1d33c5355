/**
 * The admin-catalog plugin through the auth plugin: model pricing (public lookup, defaults,
 * prefix match, overrides), MCP integrations and servers (CRUD, workspace isolation, sealed
 * headers), and the audit log (filters, masking, organisation keys only).
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, ADMIN_KEY, type StartedGateway, type Teardown, insertKey as insertStoreKey, addWorkspace as addStoreWorkspace } from './helpers/gateway.js';
import { Scopes, type Records } from '../core/index.js';
import adminCatalog from '../plugins/admin-catalog/index.js';
import adminPolicies from '../plugins/admin-policies/index.js';
import { priceFor } from '../plugins/admin-catalog/pricing.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

const organisationOf = (gw: StartedGateway): string => gw.store.meta.get('organisation_id') as string;

/** An API key written straight into the store (there is no key API in this pipeline). */
function insertKey(gw: StartedGateway, fields: Pick<Records.ApiKeyRecord, 'type' | 'workspace_id' | 'scopes'>): string {
  return insertStoreKey(gw.store, fields);
}

/** A workspace and a workspace service key in it. */
function workspaceKey(gw: StartedGateway, slug: string): { key: string; workspaceId: string } {
  const { id, key } = addStoreWorkspace(gw.store, slug, Scopes.DEFAULT_WORKSPACE_SCOPES);
  return { key, workspaceId: id };
}

async function start(t: Teardown) {
  const gw = await startGateway(t, {
    yaml: 'pipeline: [auth, admin-policies, admin-catalog]\n',
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
    plugins: { 'admin-catalog': adminCatalog, 'admin-policies': adminPolicies },
  });
  /** Every response text, for the "no secret anywhere" checks. */
  const seen: string[] = [];
  const raw = async (method: Method, path: string, body?: unknown, key: string | null = ADMIN_KEY) => {
    const res = await request(`${gw.url}${path}`, {
      method,
      headers: { ...(key === null ? {} : { 'x-gateway-api-key': key }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    seen.push(text);
    return { status: res.statusCode, body: JSON.parse(text) as Json };
  };
  const call = (method: Method, path: string, body?: unknown, key: string | null = ADMIN_KEY) => raw(method, `/v1${path}`, body, key);
  return { gw, call, raw, seen };
}

const cents = (usdPerMillion: number): number => Number(((usdPerMillion * 100) / 1e6).toPrecision(12));

t.test('model pricing: public lookup, prefix match, overrides', async (t) => {
  const { gw, call, raw } = await start(t);

  const gpt4o = await raw('GET', '/model-configs/pricing/openai/gpt-4o', undefined, null);
  t.equal(gpt4o.status, 200, 'public: no key needed');
  t.same(gpt4o.body, {
    pay_as_you_go: {
      request_token: { price: 0.00025 },
      response_token: { price: 0.001 },
      cache_read_input_token: { price: 0.000125 },
      cache_write_input_token: { price: 0.00025 },
    },
    currency: 'USD',
  });
  t.equal((await raw('GET', '/model-configs/pricing/openai/gpt-4o', undefined, 'gw-not-a-key')).status, 200, 'a bad key does not matter either');
  t.same((await raw('GET', '/model-configs/pricing/openai/gpt-4o-2024-08-06', undefined, null)).body, gpt4o.body, 'a dated snapshot resolves by prefix');
  t.equal(
    (await raw('GET', '/model-configs/pricing/openai/gpt-4o-mini-2024-07-18', undefined, null)).body.pay_as_you_go.request_token.price,
    cents(0.15),
    'the longest prefix wins',
  );
  t.match((await raw('GET', '/model-configs/pricing/anthropic/claude-3-5-sonnet-20241022', undefined, null)).body.pay_as_you_go, {
    request_token: { price: cents(3) },
    response_token: { price: cents(15) },
    cache_write_input_token: { price: cents(3.75) },
    cache_read_input_token: { price: cents(0.3) },
  });
  t.equal((await raw('GET', '/model-configs/pricing/together-ai/meta-llama%2FLlama-3.3-70B-Instruct-Turbo', undefined, null)).status, 200);
  for (const path of ['/model-configs/pricing/openai/gpt-99', '/model-configs/pricing/openai/gpt-4ox', '/model-configs/pricing/nobody/gpt-4o']) {
    const miss = await raw('GET', path, undefined, null);
    t.equal(miss.status, 404, path);
    t.equal(miss.body.error.code, 'model_not_found', path);
  }

  const anthropic = await call('GET', '/model-pricing?provider=anthropic');
  t.equal(anthropic.status, 200);
  t.equal(anthropic.body.total, 9);
  // A newer model whose id extends an older one's has its own entry, not the prefix's price.
  const opus45 = anthropic.body.data.find((p: Json) => p.model === 'claude-opus-4-5');
  t.equal(opus45.pay_as_you_go.request_token.price, cents(5), 'claude-opus-4-5 is not priced as claude-opus-4');
  t.ok(anthropic.body.data.every((p: Json) => p.provider === 'anthropic' && p.source === 'default' && p.currency === 'USD'));
  t.same(anthropic.body.data[0], { ...anthropic.body.data[0], id: 'anthropic/claude-3-5-haiku', model: 'claude-3-5-haiku', last_updated_at: null });
  const all = await call('GET', '/model-pricing?page_size=500');
  t.ok(all.body.total >= 35);
  t.equal((await call('GET', '/model-pricing?page_size=2&current_page=1')).body.data.length, 2);
  t.equal((await call('GET', '/model-pricing', undefined, null)).status, 401, 'the list needs a key');
  const { key: wsKey } = workspaceKey(gw, 'team-a');
  t.equal((await call('GET', '/model-pricing', undefined, wsKey)).status, 200, 'any key may list');

  // Override, read back (also through the prefix), remove, default again.
  const override = { pay_as_you_go: { request_token: { price: 0.0002 }, response_token: { price: 0.0008 }, additional_units: { web_search: { price: 2.5 } } } };
  t.same((await call('PUT', '/model-pricing/openai/gpt-4o', override)).body, {});
  const custom = await raw('GET', '/model-configs/pricing/openai/gpt-4o', undefined, null);
  t.same(custom.body, { ...override, currency: 'USD' });
  t.same((await raw('GET', '/model-configs/pricing/openai/gpt-4o-2024-08-06', undefined, null)).body, custom.body, 'snapshots follow the override');
  t.match(priceFor(gw.store, 'openai', 'gpt-4o-2024-08-06'), { model: 'gpt-4o', source: 'custom' }, 'priceFor sees the override at once');
  t.match((await call('GET', '/model-pricing?provider=openai')).body.data.find((p: Json) => p.model === 'gpt-4o'), { source: 'custom', last_updated_at: /^\d{4}-/ });
  t.same((await call('PUT', '/model-pricing/openai/gpt-4o', { pay_as_you_go: { request_token: { price: 0.0003 }, response_token: { price: 0.0009 } } })).body, {}, 'replace');
  t.equal((await raw('GET', '/model-configs/pricing/openai/gpt-4o', undefined, null)).body.pay_as_you_go.request_token.price, 0.0003);

  t.same((await call('PUT', '/model-pricing/acme/acme-1', { pay_as_you_go: { request_token: { price: 0 }, response_token: { price: 0 } }, currency: 'USD' })).body, {});
  t.equal((await raw('GET', '/model-configs/pricing/acme/acme-1', undefined, null)).status, 200, 'a model the table does not know');

  t.same((await call('DELETE', '/model-pricing/openai/gpt-4o')).body, {});
  t.same((await raw('GET', '/model-configs/pricing/openai/gpt-4o', undefined, null)).body, gpt4o.body, 'the default applies again');
  t.equal(priceFor(gw.store, 'openai', 'gpt-4o')?.source, 'default');
  t.equal((await call('DELETE', '/model-pricing/openai/gpt-4o')).status, 404, 'no override left to remove');

  const invalid: Array<[Json, string, string]> = [
    [{ pay_as_you_go: { request_token: { price: -1 }, response_token: { price: 0 } } }, 'value_below_minimum', 'pay_as_you_go.request_token.price'],
    [{ pay_as_you_go: { request_token: { price: '1' }, response_token: { price: 0 } } }, 'invalid_type', 'pay_as_you_go.request_token.price'],
    [{ pay_as_you_go: { request_token: { price: 1 } } }, 'missing_required_parameter', 'pay_as_you_go.response_token'],
    [{}, 'missing_required_parameter', 'pay_as_you_go'],
    [{ pay_as_you_go: override.pay_as_you_go, currency: 'EUR' }, 'invalid_value', 'currency'],
  ];
  for (const [body, code, param] of invalid) {
    const res = await call('PUT', '/model-pricing/openai/gpt-4o', body);
    t.equal(res.status, 400, param);
    t.match(res.body.error, { code, param });
  }
  t.match((await call('PUT', '/model-pricing/OpenAI/gpt-4o', override)).body.error, { code: 'invalid_value', param: 'provider' });

  // Writes are organisation-level and need model_pricing.update.
  const wsPut = await call('PUT', '/model-pricing/openai/gpt-4o', override, wsKey);
  t.equal(wsPut.status, 403);
  t.equal(wsPut.body.error.code, 'forbidden');
  t.equal((await call('DELETE', '/model-pricing/acme/acme-1', undefined, wsKey)).status, 403);
  const readOnlyOrgKey = insertKey(gw, { type: 'organisation-service', workspace_id: null, scopes: [...Scopes.SHARED_SCOPES] });
  const noScope = await call('PUT', '/model-pricing/openai/gpt-4o', override, readOnlyOrgKey);
  t.equal(noScope.status, 403);
  t.equal(noScope.body.error.code, 'insufficient_scope');
  t.equal(priceFor(gw.store, 'openai', 'gpt-4o')?.source, 'default', 'no rejected write landed');
});

t.test('MCP integrations and servers: CRUD, sealed headers, workspace isolation', async (t) => {
  const { gw, call, seen } = await start(t);
  const secret = 'Bearer mcp-secret-token-0123456789abcdefghij';
  const a = workspaceKey(gw, 'team-a');
  const b = workspaceKey(gw, 'team-b');

  const orgInt = await call('POST', '/mcp-integrations', {
    name: 'Linear',
    slug: 'linear',
    url: 'https://mcp.linear.app/sse',
    auth_type: 'headers',
    transport: 'sse',
    description: 'Issues',
    configurations: { custom_headers: { Authorization: secret }, passthrough_header: { 'x-user': { type: 'string', example: 'alice' } } },
  });
  t.equal(orgInt.status, 200);
  t.match(orgInt.body, { id: /^[0-9a-f-]{36}$/, slug: 'linear' });
  const stored = gw.store.c.mcpIntegrations.get(orgInt.body.id)!;
  t.notOk(JSON.stringify(stored).includes('mcp-secret-token'), 'stored sealed only');
  t.equal(JSON.parse(gw.store.secrets.decrypt(stored.configurations_sealed!)).Authorization, secret);

  const bySlug = await call('GET', '/mcp-integrations/linear');
  t.match(bySlug.body, {
    id: orgInt.body.id,
    slug: 'linear',
    name: 'Linear',
    type: 'organisation',
    workspace_id: null,
    url: 'https://mcp.linear.app/sse',
    auth_type: 'headers',
    transport: 'sse',
    status: 'active',
    configurations: { masked_custom_headers: { Authorization: 'Bear*******hij' }, passthrough_header: { 'x-user': { type: 'string', example: 'alice' } } },
  });
  t.notOk('custom_headers' in bySlug.body.configurations);
  t.same((await call('GET', `/mcp-integrations/${orgInt.body.id}`)).body, bySlug.body, 'by id or slug');

  const aInt = await call('POST', '/mcp-integrations', { name: 'A tools', url: 'http://tools.internal/mcp', auth_type: 'none', transport: 'http' }, a.key);
  t.equal(aInt.status, 200);
  t.match(aInt.body.slug, /^a-tools-[0-9a-f]{6}$/, 'slug from the name');
  const bInt = await call('POST', '/mcp-integrations', { name: 'B tools', url: 'http://b.internal/mcp', auth_type: 'none', transport: 'http', workspace_id: 'team-b' });
  t.equal(bInt.status, 200, 'an organisation key creates in a named workspace');
  t.equal((await call('GET', `/mcp-integrations/${bInt.body.id}`)).body.type, 'workspace');

  // Lists: a workspace key sees organisation integrations and its own, never another workspace's.
  const names = (res: { body: Json }): string[] => res.body.data.map((i: Json) => i.name).sort();
  t.same(names(await call('GET', '/mcp-integrations', undefined, a.key)), ['A tools', 'Linear']);
  t.same(names(await call('GET', '/mcp-integrations?type=workspace', undefined, a.key)), ['A tools']);
  t.same(names(await call('GET', '/mcp-integrations')), ['A tools', 'B tools', 'Linear']);
  t.same(names(await call('GET', '/mcp-integrations?type=organisation')), ['Linear']);
  t.same(names(await call('GET', '/mcp-integrations?workspace_id=team-b')), ['B tools', 'Linear']);
  t.same(names(await call('GET', '/mcp-integrations?search=LIN')), ['Linear']);
  const listed = await call('GET', '/mcp-integrations?page_size=1');
  t.equal(listed.body.object, 'list');
  t.equal(listed.body.total, 3);
  t.equal(listed.body.data.length, 1);
  t.equal((await call('GET', '/mcp-integrations?workspace_id=team-b', undefined, a.key)).status, 403);

  for (const ref of [aInt.body.id, aInt.body.slug]) {
    t.equal((await call('GET', `/mcp-integrations/${ref}`, undefined, b.key)).status, 404, "another workspace's integration is invisible");
    t.equal((await call('PUT', `/mcp-integrations/${ref}`, { name: 'mine' }, b.key)).status, 404);
    t.equal((await call('DELETE', `/mcp-integrations/${ref}`, undefined, b.key)).status, 404);
  }
  t.equal((await call('GET', '/mcp-integrations/linear', undefined, b.key)).status, 200, 'organisation integrations are readable');
  const wsEdit = await call('PUT', '/mcp-integrations/linear', { name: 'mine' }, b.key);
  t.equal(wsEdit.status, 403, 'but only organisation keys change them');
  t.equal(wsEdit.body.error.code, 'forbidden');
  t.equal((await call('DELETE', '/mcp-integrations/linear', undefined, b.key)).status, 403);

  const bad: Array<[Json, string, string]> = [
    [{ name: 'x', url: 'not a url', auth_type: 'none', transport: 'http' }, 'invalid_value', 'url'],
    [{ name: 'x', url: 'https://x.test', auth_type: 'basic', transport: 'http' }, 'invalid_value', 'auth_type'],
    [{ name: 'x', url: 'https://x.test', auth_type: 'none', transport: 'ws' }, 'invalid_value', 'transport'],
    [{ url: 'https://x.test', auth_type: 'none', transport: 'http' }, 'missing_required_parameter', 'name'],
    [{ name: 'x', url: 'https://x.test', auth_type: 'none', transport: 'http', slug: 'no spaces' }, 'invalid_value', 'slug'],
    [{ name: 'x', url: 'https://x.test', auth_type: 'none', transport: 'http', configurations: { oauth: {} } }, 'unknown_parameter', 'configurations.oauth'],
  ];
  for (const [body, code, param] of bad) {
    const res = await call('POST', '/mcp-integrations', body);
    t.equal(res.status, 400, param);
    t.match(res.body.error, { code, param }, param);
  }
  const taken = await call('POST', '/mcp-integrations', { name: 'again', slug: 'linear', url: 'https://x.test', auth_type: 'none', transport: 'http' });
  t.equal(taken.status, 409);

  const newSecret = 'Bearer rotated-secret-9876543210zyxwvuts';
  t.same((await call('PUT', '/mcp-integrations/linear', { name: 'Linear 2', description: null, configurations: { custom_headers: { Authorization: newSecret } } })).body, {});
  t.match((await call('GET', '/mcp-integrations/linear')).body, {
    name: 'Linear 2',
    description: null,
    configurations: { masked_custom_headers: { Authorization: 'Bear*******uts' }, passthrough_header: { 'x-user': {} } },
  });

  // Servers: built on the workspace's own or an organisation integration, never another workspace's.
  const aServer = await call('POST', '/mcp-servers', { name: 'A server', mcp_integration_id: aInt.body.slug, slug: 'a-server', description: 'tools for A' }, a.key);
  t.equal(aServer.status, 200);
  t.same(aServer.body, { id: aServer.body.id, slug: 'a-server' });
  const aLinear = await call('POST', '/mcp-servers', { name: 'A linear', mcp_integration_id: orgInt.body.id }, a.key);
  t.equal(aLinear.status, 200);
  const stolen = await call('POST', '/mcp-servers', { name: 'B on A', mcp_integration_id: aInt.body.id }, b.key);
  t.equal(stolen.status, 404);
  t.equal(stolen.body.error.param, 'mcp_integration_id');

  const server = await call('GET', '/mcp-servers/a-server', undefined, a.key);
  t.match(server.body, {
    id: aServer.body.id,
    slug: 'a-server',
    name: 'A server',
    description: 'tools for A',
    status: 'active',
    workspace_id: a.workspaceId,
    mcp_integration_id: aInt.body.id,
    url: `${gw.url}/a-server/mcp`,
    mcp_integration_details: { id: aInt.body.id, slug: aInt.body.slug, status: 'active', url: 'http://tools.internal/mcp', transport: 'http', auth_type: 'none' },
  });
  t.same((await call('GET', `/mcp-servers/${aServer.body.id}`, undefined, a.key)).body, server.body, 'by id or slug');
  t.equal((await call('GET', '/mcp-servers/a-server', undefined, b.key)).status, 404);
  t.equal((await call('PUT', '/mcp-servers/a-server', { name: 'x' }, b.key)).status, 404);
  t.equal((await call('DELETE', '/mcp-servers/a-server', undefined, b.key)).status, 404);
  t.equal((await call('GET', '/mcp-servers', undefined, b.key)).body.total, 0);
  t.equal((await call('GET', '/mcp-servers', undefined, a.key)).body.total, 2);
  t.equal((await call('GET', '/mcp-servers')).body.total, 2, 'an organisation key lists across workspaces');
  t.equal((await call('GET', '/mcp-servers?workspace_id=team-b')).body.total, 0);
  t.same((await call('GET', `/mcp-servers?id=${aServer.body.id}`)).body.data.map((s: Json) => s.slug), ['a-server']);
  t.same((await call('GET', '/mcp-servers?search=linear')).body.data.map((s: Json) => s.name), ['A linear']);

  t.match((await call('POST', '/mcp-servers', { name: 'x', mcp_integration_id: 'linear', slug: 'ab' }, a.key)).body.error, { code: 'invalid_value', param: 'slug' });
  // A slug whose /<slug>/mcp is one of the gateway's own paths (`v1` is too short to be a slug at all).
  for (const slug of ['console', 'Health', 'metrics']) {
    const reserved = await call('POST', '/mcp-servers', { name: 'x', mcp_integration_id: 'linear', slug }, a.key);
    t.equal(reserved.status, 400, slug);
    t.match(reserved.body.error, { code: 'invalid_value', param: 'slug', message: /reserved/ });
  }
  t.match((await call('POST', '/mcp-servers', { name: '', mcp_integration_id: 'linear' }, a.key)).body.error, { code: 'invalid_value', param: 'name' });
  t.match((await call('PUT', '/mcp-servers/a-server', { description: 'd'.repeat(501) }, a.key)).body.error, { code: 'string_too_long', param: 'description' });
  t.same((await call('PUT', '/mcp-servers/a-server', { name: 'A server 2', description: null }, a.key)).body, {});
  t.match((await call('GET', '/mcp-servers/a-server', undefined, a.key)).body, { name: 'A server 2', description: null });

  t.same((await call('DELETE', '/mcp-servers/a-server', undefined, a.key)).body, {});
  t.equal((await call('GET', '/mcp-servers', undefined, a.key)).body.total, 1, 'archived servers leave the list');
  t.equal((await call('GET', '/mcp-servers/a-server', undefined, a.key)).body.status, 'archived');

  t.same((await call('DELETE', '/mcp-integrations/linear')).body, {});
  t.equal((await call('GET', '/mcp-integrations/linear')).body.status, 'archived');
  t.same(names(await call('GET', '/mcp-integrations?type=organisation')), []);
  t.equal((await call('POST', '/mcp-servers', { name: 'late', mcp_integration_id: 'linear' }, a.key)).status, 404, 'not on an archived integration');

  await gw.store.flush();
  const everything = [...seen, ...gw.store.c.audit.list().items.map((r) => JSON.stringify(r))].join('\n');
  t.notOk(everything.includes('mcp-secret-token'), 'the first header secret is in no response and no audit record');
  t.notOk(everything.includes('rotated-secret'), 'nor the second');
});

t.test('audit logs: filters, masking, organisation keys only', async (t) => {
  const { gw, call } = await start(t);
  const a = workspaceKey(gw, 'team-a');
  const before = new Date(Date.now() - 1000).toISOString();

  const policy = {
    conditions: [{ key: 'api_key', value: 'k1' }],
    group_by: [{ key: 'api_key' }],
    type: 'cost',
    credit_limit: 10,
  };
  const created = await call('POST', '/policies/usage-limits', policy);
  t.equal(created.status, 200);
  await call('PUT', `/policies/usage-limits/${created.body.id}`, { credit_limit: 20 });
  await call('DELETE', `/policies/usage-limits/${created.body.id}`);
  const secret = 'Bearer audit-secret-abcdefghijklmnopqrstuvwxyz';
  await call('POST', '/mcp-integrations', { name: 'S', slug: 'sealed', url: 'https://s.test/mcp', auth_type: 'headers', transport: 'http', configurations: { custom_headers: { Authorization: secret } } });
  await call('POST', '/mcp-integrations', { name: 'S', slug: 'sealed', url: 'https://s.test/mcp', auth_type: 'headers', transport: 'http' });
  await call('POST', '/mcp-integrations', { name: 'A', url: 'https://a.test/mcp', auth_type: 'none', transport: 'http' }, a.key);
  await gw.store.flush();

  const all = await call('GET', '/audit-logs');
  t.equal(all.status, 200);
  t.equal(all.body.object, 'list', 'our list envelope, not the reference\'s `records`');
  t.equal(all.body.total, 6);
  t.same(all.body.data.map((r: Json) => `${r.method} ${r.resource_type} ${r.action} ${r.response_status_code}`), [
    'POST mcp_integration create 200',
    'POST mcp_integration create 409',
    'POST mcp_integration create 200',
    'DELETE usage_limits_policy delete 200',
    'PUT usage_limits_policy update 200',
    'POST usage_limits_policy create 200',
  ], 'newest first, failures included');
  const first = all.body.data.at(-1) as Json;
  t.match(first, {
    id: /^[0-9a-f-]{36}$/,
    timestamp: /^\d{4}-\d\d-\d\dT/,
    uri: '/v1/policies/usage-limits',
    request_id: /.+/,
    user_type: 'api_key',
    api_key_id: /^[0-9a-f-]{36}$/,
    user_id: null,
    organisation_id: organisationOf(gw),
    workspace_id: gw.store.meta.get('default_workspace_id'),
    client_ip: /.+/,
    query_params: '{}',
  });
  t.same(JSON.parse(first.request_body).credit_limit, 10);

  const sealed = all.body.data[2] as Json;
  t.same(JSON.parse(sealed.request_body).configurations, { custom_headers: '[masked]' }, 'header values masked in the stored body');
  t.notOk(JSON.stringify(gw.store.c.audit.list().items).includes('audit-secret'), 'the secret is in no audit record');

  const filter = async (qs: string): Promise<Json[]> => {
    const res = await call('GET', `/audit-logs?${qs}`);
    t.equal(res.status, 200, qs);
    return res.body.data as Json[];
  };
  t.equal((await filter('resource_type=usage_limits_policy')).length, 3);
  t.same((await filter('action=update')).map((r) => r.uri), [`/v1/policies/usage-limits/${created.body.id}`]);
  t.same((await filter('method=DELETE')).map((r) => r.action), ['delete']);
  t.equal((await filter('response_status_code=409')).length, 1);
  t.equal((await filter('resource_type=mcp_integration&action=create&response_status_code=200')).length, 2);
  t.equal((await filter(`workspace_id=team-a`)).length, 1, 'workspace by slug');
  t.equal((await filter(`workspace_id=${a.workspaceId}`)).length, 1, 'workspace by id');
  t.equal((await filter('user_type=api_key')).length, 6);
  t.equal((await filter('user_type=user')).length, 0);
  t.equal((await filter(`api_key_id=${first.api_key_id}`)).length, 5, "the admin key's writes");
  t.equal((await filter(`request_id=${first.request_id}`)).length, 1);
  t.equal((await filter(`uri=${encodeURIComponent('/v1/mcp-integrations')}`)).length, 3);
  t.equal((await filter(`start_time=${encodeURIComponent(before)}`)).length, 6);
  t.equal((await filter(`start_time=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).length, 0, 'nothing in the future');
  t.equal((await filter(`end_time=${encodeURIComponent(before)}`)).length, 0, 'nothing before the first write');
  t.equal((await filter(`start_time=${encodeURIComponent(first.timestamp)}&end_time=${encodeURIComponent(first.timestamp)}`)).length >= 1, true);
  const page = await call('GET', '/audit-logs?page_size=2&current_page=1');
  t.equal(page.body.total, 6);
  t.same(page.body.data.map((r: Json) => r.id), all.body.data.slice(2, 4).map((r: Json) => r.id));

  t.match((await call('GET', '/audit-logs?page_size=501')).body.error, { code: 'value_above_maximum', param: 'page_size' });
  t.match((await call('GET', '/audit-logs?start_time=yesterday')).body.error, { code: 'invalid_value', param: 'start_time' });
  t.match((await call('GET', `/audit-logs?start_time=${encodeURIComponent(new Date().toISOString())}&end_time=${encodeURIComponent(before)}`)).body.error, {
    code: 'invalid_value',
    param: 'start_time',
  });
  t.match((await call('GET', '/audit-logs?user_type=robot')).body.error, { param: 'user_type' });

  const wsRead = await call('GET', '/audit-logs', undefined, a.key);
  t.equal(wsRead.status, 403, 'a workspace key may not read the audit log');
  t.equal(wsRead.body.error.code, 'forbidden');
  const noScope = insertKey(gw, { type: 'organisation-service', workspace_id: null, scopes: ['workspaces.read'] });
  t.equal((await call('GET', '/audit-logs', undefined, noScope)).body.error.code, 'insufficient_scope');
  t.equal((await call('GET', '/audit-logs', undefined, null)).status, 401);
});
