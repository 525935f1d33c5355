/**
 * The resources admin API (configs, virtual keys, integrations, providers) through the auth
 * plugin: happy paths, 4xx, config versioning, secrets that never leave sealed (responses, audit
 * records, stored records), the SSRF guard on custom hosts, and workspace isolation.
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, ADMIN_KEY, type StartedGateway, type Teardown, addWorkspace as addStoreWorkspace } from './helpers/gateway.js';
import { uuidv7, Scopes } from '../core/index.js';
import { MAX_CONFIG_DEPTH } from '../core/router/config-schema.js';
import adminResources, { resolveConfig, resolveProvider, resolveVirtualKey } from '../plugins/admin-resources/index.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
interface Answer {
  status: number;
  body: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

async function start(t: Teardown): Promise<{ gw: StartedGateway; call: (method: Method, path: string, body?: unknown, key?: string) => Promise<Answer> }> {
  const gw = await startGateway(t, {
    yaml: 'pipeline: [auth, admin-resources]\n',
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
    plugins: { 'admin-resources': adminResources },
  });
  const call = async (method: Method, path: string, body?: unknown, key = ADMIN_KEY): Promise<Answer> => {
    const res = await request(`${gw.url}/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: JSON.parse(text) as Record<string, unknown>, text };
  };
  return { gw, call };
}

/** A second workspace and a workspace service key for it, written straight into the store. */
function addWorkspace(gw: StartedGateway, slug: string, scopes: ReadonlyArray<string> = Scopes.DEFAULT_WORKSPACE_SCOPES): { id: string; key: string } {
  return addStoreWorkspace(gw.store, slug, scopes);
}

const defaultWorkspaceId = (gw: StartedGateway): string => gw.store.meta.get('default_workspace_id') as string;

async function auditText(gw: StartedGateway): Promise<string> {
  await gw.store.flush();
  return JSON.stringify(gw.store.c.audit.list().items);
}

const CONFIG_KEY = 'sk-config-SECRET-0123456789abcdef';
const fallbackConfig = {
  strategy: { mode: 'fallback' },
  retry: { attempts: 2 },
  targets: [
    { strategy: { mode: 'loadbalance' }, targets: [{ provider: 'openai', api_key: CONFIG_KEY, weight: 0.7 }, { virtual_key: 'openai-backup', weight: 0.3 }] },
    { provider: 'openai', custom_host: 'http://127.0.0.1:11434/v1', override_params: { model: 'llama3' } },
  ],
};

t.test('configs: create, read, versions, archive', async (t) => {
  const { gw, call } = await start(t);

  const created = await call('POST', '/configs', { name: 'Prod routing', config: fallbackConfig });
  t.equal(created.status, 200);
  t.match(created.body, { id: /^[0-9a-f-]{36}$/, slug: /^pc-prod-routing-[0-9a-f]{6}$/, version_id: /^[0-9a-f-]{36}$/, object: 'config' });
  const { id, slug } = created.body as { id: string; slug: string };

  const got = await call('GET', `/configs/${slug}`);
  t.equal(got.status, 200);
  t.match(got.body, { id, slug, name: 'Prod routing', status: 'active', is_default: 0, version_id: created.body.version_id, object: 'config' });
  t.equal(got.body.config.targets[0].targets[0].api_key, 'sk-c*******def', 'the provider key is masked in reads');
  t.same(got.body.config.targets[1], fallbackConfig.targets[1], 'the rest of the config comes back as sent');
  t.equal((await call('GET', `/configs/${id}`)).body.slug, slug, 'a config is found by id too');

  const stored = gw.store.c.configs.get(id)!;
  t.match((stored.config as any).targets[0].targets[0].api_key, { sealed: /^v1:/ }, 'stored sealed'); // eslint-disable-line @typescript-eslint/no-explicit-any
  t.notOk(JSON.stringify(stored).includes(CONFIG_KEY), 'no clear key in the stored record');
  const resolved = resolveConfig(gw.store, slug, defaultWorkspaceId(gw));
  t.equal((resolved as any).targets[0].targets[0].api_key, CONFIG_KEY, 'resolveConfig unseals for the router'); // eslint-disable-line @typescript-eslint/no-explicit-any
  t.ok(Object.isFrozen(resolved), 'the resolved config is shared, so frozen');
  t.equal((resolveConfig(gw.store, id, defaultWorkspaceId(gw)) as any)?.strategy.mode, 'fallback', 'resolveConfig takes an id too'); // eslint-disable-line @typescript-eslint/no-explicit-any
  t.equal(resolveConfig(gw.store, slug, uuidv7()), undefined, 'another workspace resolves nothing');

  // Three updates (a rename alone counts): four versions, newest first.
  const v2 = await call('PUT', `/configs/${slug}`, { name: 'Prod routing v2' });
  t.equal(v2.status, 200);
  t.match(v2.body, { version_id: /^[0-9a-f-]{36}$/ });
  t.same(Object.keys(v2.body), ['version_id']);
  const v3 = await call('PUT', `/configs/${slug}`, { config: { provider: 'anthropic', api_key: 'sk-ant-SECRET-0123456789' } });
  const v4 = await call('PUT', `/configs/${slug}`, { name: 'Prod routing v4', status: 'active' });
  const versions = await call('GET', `/configs/${slug}/versions`);
  t.equal(versions.status, 200);
  t.equal(versions.body.object, 'list');
  t.equal(versions.body.total, 4);
  t.same(
    versions.body.data.map((v: { version_id: string }) => v.version_id),
    [v4.body.version_id, v3.body.version_id, v2.body.version_id, created.body.version_id],
    'newest first',
  );
  t.match(versions.body.data[0], { id, slug, name: 'Prod routing v4', format: 'json', object: 'config', config: { provider: 'anthropic', api_key: 'sk-a*******789' } });
  t.match(versions.body.data[3], { name: 'Prod routing', config: { strategy: { mode: 'fallback' } } });
  t.equal(versions.body.data[3].config.targets[0].targets[0].api_key, 'sk-c*******def', 'old versions are masked too');
  const page = await call('GET', `/configs/${slug}/versions?page_size=1&current_page=1`);
  t.equal(page.body.data[0].version_id, v3.body.version_id);
  const latest = await call('GET', `/configs/${slug}`);
  t.match(latest.body, { name: 'Prod routing v4', version_id: v4.body.version_id, config: { provider: 'anthropic' } });
  t.equal((resolveConfig(gw.store, slug, defaultWorkspaceId(gw)) as any).api_key, 'sk-ant-SECRET-0123456789'); // eslint-disable-line @typescript-eslint/no-explicit-any

  // A config read (keys masked) and sent back keeps its keys; a new key replaces the old one.
  await call('POST', '/configs', { name: 'round trip', slug: 'pc-round', config: fallbackConfig });
  const read = (await call('GET', '/configs/pc-round')).body.config;
  read.retry.attempts = 3;
  t.equal((await call('PUT', '/configs/pc-round', { config: read })).status, 200);
  const kept = resolveConfig(gw.store, 'pc-round', defaultWorkspaceId(gw)) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
  t.equal(kept.targets[0].targets[0].api_key, CONFIG_KEY, 'the masked key sent back keeps the stored key');
  t.equal(kept.retry.attempts, 3);
  read.targets[0].targets[0].api_key = 'sk-c*******xyz';
  await call('PUT', '/configs/pc-round', { config: read });
  t.equal((resolveConfig(gw.store, 'pc-round', defaultWorkspaceId(gw)) as any).targets[0].targets[0].api_key, 'sk-c*******xyz', 'a different value is a new key'); // eslint-disable-line @typescript-eslint/no-explicit-any
  t.same((await call('DELETE', '/configs/pc-round')).body, {});

  // Validation names the path inside the config.
  const badWeight = await call('POST', '/configs', {
    name: 'bad',
    config: { strategy: { mode: 'loadbalance' }, targets: [{ provider: 'openai' }, { provider: 'openai', weight: -1 }] },
  });
  t.equal(badWeight.status, 400);
  t.match(badWeight.body.error, { code: 'value_below_minimum', param: 'config.targets[1].weight' });
  const badThen = await call('PUT', `/configs/${slug}`, {
    config: { strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.tier': 'pro' }, then: 'nope' }] }, targets: [{ name: 'pro', provider: 'openai' }] },
  });
  t.match(badThen.body.error, { code: 'invalid_value', param: 'config.strategy.conditions[0].then' });
  t.equal((await call('GET', `/configs/${slug}/versions`)).body.total, 4, 'a refused update writes no version');
  t.match((await call('POST', '/configs', { name: 'x', config: { targets: [{ weight: 1 }] } })).body.error, { code: 'missing_required_parameter', param: 'config.targets[0].provider' });
  t.match((await call('POST', '/configs', { name: 'x', config: 'openai' })).body.error, { code: 'invalid_type', param: 'config' });
  t.match((await call('POST', '/configs', { config: fallbackConfig })).body.error, { code: 'missing_required_parameter', param: 'name' });
  t.match((await call('POST', '/configs', { name: 'x', config: fallbackConfig, isDefault: 1 })).body.error, { code: 'unknown_parameter', param: 'isDefault' });
  t.match((await call('PUT', `/configs/${slug}`, {})).body.error, { code: 'invalid_value' });
  const clash = await call('POST', '/configs', { name: 'again', slug, config: fallbackConfig });
  t.equal(clash.status, 409);
  t.match(clash.body.error, { code: 'conflict', param: 'slug' });
  t.equal((await call('GET', '/configs/pc-nope')).status, 404);
  t.equal((await call('PUT', '/configs/pc-nope', { name: 'x' })).status, 404);

  // One default per workspace.
  const d1 = await call('POST', '/configs', { name: 'd1', slug: 'pc-d1', is_default: 1, config: { provider: 'openai' } });
  t.equal(d1.status, 200);
  await call('POST', '/configs', { name: 'd2', slug: 'pc-d2', is_default: 1, config: { provider: 'openai' } });
  t.equal((await call('GET', '/configs/pc-d1')).body.is_default, 0, 'a new default takes the flag');
  t.equal((await call('GET', '/configs/pc-d2')).body.is_default, 1);

  const list = await call('GET', '/configs');
  t.equal(list.body.object, 'list');
  t.equal(list.body.total, 3);
  t.notOk('config' in list.body.data[0], 'list items leave the config body out');
  t.equal((await call('GET', '/configs?page_size=1')).body.data.length, 1);

  t.same((await call('DELETE', `/configs/${slug}`)).body, {});
  t.equal((await call('GET', `/configs/${slug}`)).body.status, 'archived');
  t.equal((await call('GET', '/configs')).body.total, 2, 'archived configs leave the default list');
  t.ok((await call('GET', '/configs?status=archived')).body.data.some((c: { slug: string }) => c.slug === slug), 'listed with status=archived');
  t.equal(resolveConfig(gw.store, slug, defaultWorkspaceId(gw)), undefined, 'an archived config no longer resolves');

  // The deepest config accepted: its innermost key is masked in the audit record like any other.
  let deepest: Record<string, unknown> = { provider: 'openai', api_key: 'sk-deepest-SECRET-0123' };
  for (let i = 0; i < MAX_CONFIG_DEPTH; i++) deepest = { targets: [deepest] };
  t.equal((await call('POST', '/configs', { name: 'deep', config: deepest })).status, 200);
  let tooDeep: Record<string, unknown> = { provider: 'openai', api_key: 'sk-too-deep-SECRET-0123' };
  for (let i = 0; i <= MAX_CONFIG_DEPTH + 1; i++) tooDeep = { targets: [tooDeep] };
  t.match((await call('POST', '/configs', { name: 'too deep', config: tooDeep })).body.error, { code: 'invalid_value', param: /^config(\.targets\[0\])+\.targets$/ });
  const audit = await auditText(gw);
  t.ok(audit.includes('"resource_type":"config"'), 'writes are audited');
  t.notOk(audit.includes(CONFIG_KEY) || audit.includes('sk-ant-SECRET') || audit.includes('sk-deepest-SECRET'), 'no provider key in the audit records');
  // A refused body is audited too; whatever lies below the masking depth is masked whole.
  t.notOk(audit.includes('sk-too-deep-SECRET'), 'no key from a refused, too deep config in the audit records');
});

const VK_KEY = 'sk-vk-SECRET-raw-provider-key-0123456789';
const HEADER_VALUE = 'hdr-SECRET-value-0042';
const AWS_SECRET = 'aws-SECRET-access-key-abcdef';

t.test('virtual keys: secrets stay sealed', async (t) => {
  const { gw, call } = await start(t);
  const body = {
    name: 'Bedrock main',
    provider: 'bedrock',
    key: VK_KEY,
    note: 'primary',
    custom_host: 'http://127.0.0.1:9/v1',
    custom_headers: { 'x-api-tenant': HEADER_VALUE },
    aws_region: 'us-east-1',
    aws_access_key_id: 'AKIAEXAMPLE',
    aws_secret_access_key: AWS_SECRET,
    usage_limits: { credit_limit: 100, type: 'cost', alert_threshold: 80, periodic_reset: 'monthly' },
    rate_limits: { type: 'requests', unit: 'rpm', value: 60 },
    slug: 'bedrock-main',
  };
  const created = await call('POST', '/virtual-keys', body);
  t.equal(created.status, 200);
  t.same(created.body, { id: created.body.id, slug: 'bedrock-main', object: 'virtual-key' });
  const id = created.body.id as string;

  const got = await call('GET', '/virtual-keys/bedrock-main');
  t.equal(got.status, 200);
  t.match(got.body, {
    id,
    slug: 'bedrock-main',
    name: 'Bedrock main',
    note: 'primary',
    provider: 'bedrock',
    status: 'active',
    masked_key: 'sk-v*******789',
    custom_host: 'http://127.0.0.1:9/v1',
    custom_header_names: ['x-api-tenant'],
    model_config: { aws_region: 'us-east-1', aws_access_key_id: 'AKIAEXAMPLE' },
    usage_limits: { credit_limit: 100, type: 'cost' },
    rate_limits: [{ type: 'requests', unit: 'rpm', value: 60 }],
    expires_at: null,
    object: 'virtual-key',
  });
  t.notOk('aws_secret_access_key' in got.body.model_config, 'secret provider fields are not shown');
  await call('POST', '/virtual-keys', { name: 'OpenAI', provider: 'openai', key: 'sk-other-0123456789' });
  const list = await call('GET', '/virtual-keys');
  t.equal(list.body.total, 2);
  t.equal(list.body.data[1].slug, 'bedrock-main', 'newest first');
  t.equal((await call('GET', '/virtual-keys?page_size=1&current_page=1')).body.data[0].slug, 'bedrock-main');

  const secrets = [VK_KEY, HEADER_VALUE, AWS_SECRET];
  for (const answer of [created, got, list]) for (const s of secrets) t.notOk(answer.text.includes(s), `no secret in a response (${s.slice(0, 12)})`);
  const stored = JSON.stringify(gw.store.c.virtualKeys.get(id));
  for (const s of secrets) t.notOk(stored.includes(s), `no secret in clear in the stored record (${s.slice(0, 12)})`);
  const record = gw.store.c.virtualKeys.get(id)!;
  t.match(record, { key_sealed: /^v1:/, custom_headers_sealed: /^v1:/, model_config_sealed: /^v1:/, masked_key: 'sk-v*******789' });

  const resolved = resolveVirtualKey(gw.store, 'bedrock-main', defaultWorkspaceId(gw));
  t.same(resolved, {
    provider: 'bedrock',
    apiKey: VK_KEY,
    customHost: 'http://127.0.0.1:9/v1',
    headers: { 'x-api-tenant': HEADER_VALUE },
    providerOptions: { aws_region: 'us-east-1', aws_access_key_id: 'AKIAEXAMPLE', aws_secret_access_key: AWS_SECRET },
    expiresAt: null,
    status: 'active',
  });
  t.equal(resolveVirtualKey(gw.store, 'bedrock-main', uuidv7()), undefined, 'another workspace resolves nothing');

  // Updates: the key rotates, secret fields merge inside the seal, headers are replaced as a set.
  const NEW_KEY = 'sk-vk-SECRET-rotated-9876543210';
  t.same((await call('PUT', '/virtual-keys/bedrock-main', { key: NEW_KEY, aws_region: 'eu-west-1', custom_headers: { 'x-b': 'hdr-SECRET-b' }, note: null })).body, {});
  const after = await call('GET', '/virtual-keys/bedrock-main');
  t.match(after.body, { masked_key: 'sk-v*******210', note: null, custom_header_names: ['x-b'], model_config: { aws_region: 'eu-west-1' } });
  t.match(resolveVirtualKey(gw.store, 'bedrock-main', defaultWorkspaceId(gw)), {
    apiKey: NEW_KEY,
    headers: { 'x-b': 'hdr-SECRET-b' },
    providerOptions: { aws_region: 'eu-west-1', aws_secret_access_key: AWS_SECRET },
  });
  await call('PUT', '/virtual-keys/bedrock-main', { model_config: { aws_secret_access_key: null } });
  t.notOk('aws_secret_access_key' in resolveVirtualKey(gw.store, 'bedrock-main', defaultWorkspaceId(gw))!.providerOptions, 'null removes a secret field');
  await call('PUT', '/virtual-keys/bedrock-main', { rate_limits: [{ type: 'tokens', unit: 'rpd', value: 1000 }], expires_at: '2099-01-01T00:00:00Z' });
  t.match((await call('GET', '/virtual-keys/bedrock-main')).body, { rate_limits: [{ type: 'tokens', unit: 'rpd', value: 1000 }], expires_at: '2099-01-01T00:00:00Z' });

  const audit = await auditText(gw);
  t.ok(audit.includes('"resource_type":"virtual_key"'));
  // The AWS secret is checked in the test below (a known gap of the core audit masking).
  for (const s of [VK_KEY, HEADER_VALUE, NEW_KEY, 'hdr-SECRET-b']) t.notOk(audit.includes(s), `no secret in the audit records (${s.slice(0, 12)})`);

  // 4xx
  const ssrf = await call('POST', '/virtual-keys', { name: 'meta', provider: 'openai', custom_host: 'http://169.254.169.254/latest' });
  t.equal(ssrf.status, 400);
  t.match(ssrf.body.error, { code: 'invalid_custom_host', param: 'custom_host' });
  t.match((await call('POST', '/virtual-keys', { name: 'lan', provider: 'openai', custom_host: 'http://10.1.2.3/v1' })).body.error, { code: 'invalid_custom_host', param: 'custom_host' });
  t.match((await call('PUT', '/virtual-keys/bedrock-main', { custom_host: 'http://192.168.1.1/' })).body.error, { code: 'invalid_custom_host', param: 'custom_host' });
  t.match((await call('POST', '/virtual-keys', { name: 'x', provider: 'Open AI' })).body.error, { code: 'invalid_value', param: 'provider' });
  t.match((await call('POST', '/virtual-keys', { name: 'x' })).body.error, { code: 'missing_required_parameter', param: 'provider' });
  t.match((await call('POST', '/virtual-keys', { name: 'x', provider: 'openai', custom_headers: { 'x-a': 'one\r\nx-injected: two' } })).body.error, { code: 'invalid_value', param: 'custom_headers["x-a"]' });
  t.match((await call('POST', '/virtual-keys', { name: 'x', provider: 'openai', rate_limits: { type: 'requests', unit: 'rps', value: 1 } })).body.error, { code: 'invalid_type', param: 'rate_limits' });
  t.match((await call('POST', '/virtual-keys', { name: 'x', provider: 'openai', expires_at: '2001-01-01T00:00:00Z' })).body.error, { code: 'invalid_value', param: 'expires_at' });
  t.match((await call('POST', '/virtual-keys', { name: 'x', provider: 'openai', model_config: { aws_regoin: 'x' } })).body.error, { code: 'unknown_parameter', param: 'model_config.aws_regoin' });
  t.equal((await call('POST', '/virtual-keys', { name: 'dup', provider: 'openai', slug: 'bedrock-main' })).status, 409);
  t.equal((await call('PUT', '/virtual-keys/nope', { name: 'x' })).status, 404);
  t.match((await call('PUT', '/virtual-keys/bedrock-main', { provider: 'openai' })).body.error, { code: 'unknown_parameter', param: 'provider' });
  t.equal(gw.store.c.virtualKeys.list().total, 2, 'no refused request wrote anything');

  t.same((await call('DELETE', '/virtual-keys/bedrock-main')).body, {});
  t.equal((await call('GET', '/virtual-keys/bedrock-main')).status, 404);
  t.equal((await call('DELETE', '/virtual-keys/bedrock-main')).status, 404);
  t.equal(resolveVirtualKey(gw.store, 'bedrock-main', defaultWorkspaceId(gw)), undefined);
});

t.test('virtual keys: AWS credentials stay out of the audit records', async (t) => {
  const { gw, call } = await start(t);
  const created = await call('POST', '/virtual-keys', { name: 'sts', provider: 'bedrock', aws_secret_access_key: AWS_SECRET, aws_session_token: 'aws-session-SECRET-token' });
  t.equal(created.status, 200);
  t.notOk(created.text.includes(AWS_SECRET) || JSON.stringify(gw.store.c.virtualKeys.get(created.body.id)).includes(AWS_SECRET), 'sealed in the store');
  const audit = await auditText(gw);
  // core/admin/audit.ts masks `secret_access_key` and `session_token` only as whole names, so the
  // `aws_`-prefixed fields the reference uses pass through: to be fixed there (not this plugin's file).
  t.notOk(audit.includes(AWS_SECRET), 'no AWS secret key in the audit records');
  t.notOk(audit.includes('aws-session-SECRET-token'), 'no AWS session token in the audit records');
});

t.test('integrations and providers', async (t) => {
  const { gw, call } = await start(t);
  const teamB = addWorkspace(gw, 'team-b');
  const integrationBody = {
    name: 'Azure prod',
    ai_provider_id: 'azure-openai',
    slug: 'azure-prod',
    key: 'az-SECRET-key-0123456789',
    description: 'shared',
    configurations: {
      azure_auth_mode: 'entra',
      azure_resource_name: 'r1',
      azure_entra_client_secret: 'entra-SECRET-value',
      custom_host: 'https://azure.example.com/openai',
      custom_headers: { 'x-tenant': 'hdr-int-SECRET' },
    },
  };
  const created = await call('POST', '/integrations', integrationBody);
  t.equal(created.status, 200);
  t.same(Object.keys(created.body).sort(), ['id', 'slug']);
  t.equal(created.body.slug, 'azure-prod');

  const got = await call('GET', '/integrations/azure-prod');
  t.match(got.body, {
    slug: 'azure-prod',
    ai_provider_id: 'azure-openai',
    workspace_id: null,
    status: 'active',
    masked_key: 'az-S*******789',
    object: 'integration',
    configurations: {
      azure_auth_mode: 'entra',
      azure_resource_name: 'r1',
      custom_host: 'https://azure.example.com/openai',
      masked_azure_entra_client_secret: 'entr*******lue',
      masked_custom_headers: { 'x-tenant': 'hdr-*******RET' },
    },
  });
  const secrets = ['az-SECRET-key-0123456789', 'entra-SECRET-value', 'hdr-int-SECRET'];
  const stored = JSON.stringify(gw.store.c.integrations.get(created.body.id));
  for (const s of secrets) {
    t.notOk(got.text.includes(s), `no secret in the integration read (${s.slice(0, 10)})`);
    t.notOk(stored.includes(s), `no secret in clear in the stored integration (${s.slice(0, 10)})`);
  }
  t.equal((await call('GET', '/integrations')).body.total, 1);
  t.match((await call('POST', '/integrations', { name: 'x', ai_provider_id: 'openai', configurations: { custom_host: 'http://169.254.169.254/' } })).body.error, {
    code: 'invalid_custom_host',
    param: 'configurations.custom_host',
  });
  t.match((await call('POST', '/integrations', { name: 'x' })).body.error, { code: 'missing_required_parameter', param: 'ai_provider_id' });
  t.match((await call('POST', '/integrations', { name: 'x', ai_provider_id: 'openai', configurations: { nope: 1 } })).body.error, { code: 'unknown_parameter', param: 'configurations.nope' });

  // A workspace key sees organisation-wide integrations (masked) but cannot change them.
  const seen = await call('GET', '/integrations/azure-prod', undefined, teamB.key);
  t.equal(seen.status, 200);
  t.equal(seen.body.masked_key, 'az-S*******789');
  const refused = await call('PUT', '/integrations/azure-prod', { name: 'mine' }, teamB.key);
  t.equal(refused.status, 403);
  t.match(refused.body.error, { code: 'forbidden' });
  t.equal((await call('DELETE', '/integrations/azure-prod', undefined, teamB.key)).status, 403);
  const own = await call('POST', '/integrations', { name: 'B openai', ai_provider_id: 'openai', slug: 'b-openai', key: 'sk-b-0123456789' }, teamB.key);
  t.equal(own.status, 200);
  t.equal(gw.store.c.integrations.get(own.body.id)!.workspace_id, teamB.id, 'a workspace key creates in its own workspace');
  const wsLevel = await call('POST', '/integrations', { name: 'Default only', ai_provider_id: 'openai', slug: 'default-only', workspace_id: 'default', key: 'sk-d-0123456789' });
  t.equal(wsLevel.status, 200);
  t.equal((await call('GET', '/integrations/default-only', undefined, teamB.key)).status, 404, "another workspace's integration is invisible");
  t.equal((await call('GET', '/integrations', undefined, teamB.key)).body.total, 2, 'team B lists its own and the organisation-wide one');
  t.equal((await call('GET', '/integrations')).body.total, 3);
  t.equal((await call('GET', '/integrations?type=organisation')).body.total, 1);
  t.equal((await call('GET', '/integrations?workspace_id=team-b')).body.total, 2);

  // Update merges configurations; null removes.
  t.same((await call('PUT', '/integrations/azure-prod', { configurations: { azure_resource_name: 'r2', azure_entra_client_secret: null } })).body, {});
  const updated = await call('GET', '/integrations/azure-prod');
  t.equal(updated.body.configurations.azure_resource_name, 'r2');
  t.notOk('masked_azure_entra_client_secret' in updated.body.configurations);
  t.ok('masked_custom_headers' in updated.body.configurations, 'untouched secret fields stay');

  // Providers: a workspace's instance of an integration.
  const provider = await call('POST', '/providers', { name: 'Azure', integration_id: 'azure-prod', slug: 'azure-main', rate_limits: { type: 'requests', unit: 'rpm', value: 10 } });
  t.equal(provider.status, 200);
  t.match(provider.body, { id: /^[0-9a-f-]{36}$/, slug: 'azure-main' });
  const pGot = await call('GET', '/providers/azure-main');
  t.match(pGot.body, {
    slug: 'azure-main',
    name: 'Azure',
    integration_id: 'azure-prod',
    ai_provider_id: 'azure-openai',
    workspace_id: defaultWorkspaceId(gw),
    status: 'active',
    rate_limits: [{ type: 'requests', unit: 'rpm', value: 10 }],
    object: 'provider',
  });
  t.same(resolveProvider(gw.store, 'azure-main', defaultWorkspaceId(gw)), {
    provider: 'azure-openai',
    apiKey: 'az-SECRET-key-0123456789',
    customHost: 'https://azure.example.com/openai',
    headers: { 'x-tenant': 'hdr-int-SECRET' },
    providerOptions: { azure_auth_mode: 'entra', azure_resource_name: 'r2' },
    expiresAt: null,
    status: 'active',
  });
  t.equal(resolveProvider(gw.store, 'azure-main', teamB.id), undefined);
  t.match((await call('POST', '/providers', { name: 'x', integration_id: 'nope' })).body.error, { code: 'not_found', param: 'integration_id' });
  t.match((await call('POST', '/providers', { name: 'x', integration_id: 'default-only' }, teamB.key)).body.error, { code: 'not_found', param: 'integration_id' });
  const bProvider = await call('POST', '/providers', { name: 'B azure', integration_id: 'azure-prod', slug: 'b-azure' }, teamB.key);
  t.equal(bProvider.status, 200, 'an organisation-wide integration serves every workspace');
  t.equal(resolveProvider(gw.store, 'b-azure', teamB.id)?.apiKey, 'az-SECRET-key-0123456789');
  await call('POST', '/virtual-keys', { name: 'vk', provider: 'openai', slug: 'taken-slug' });
  t.match((await call('POST', '/providers', { name: 'x', integration_id: 'azure-prod', slug: 'taken-slug' })).body.error, { code: 'conflict', param: 'slug' });
  t.match((await call('POST', '/virtual-keys', { name: 'x', provider: 'openai', slug: 'azure-main' })).body.error, { code: 'conflict', param: 'slug' });
  t.equal((await call('GET', '/providers')).body.total, 2);
  t.equal((await call('GET', '/providers', undefined, teamB.key)).body.total, 1);
  t.equal((await call('GET', '/providers/azure-main', undefined, teamB.key)).status, 404);

  t.same((await call('PUT', '/providers/azure-main', { name: 'Azure 2', note: 'n', expires_at: '2099-01-01T00:00:00Z' })).body, {});
  t.match((await call('GET', '/providers/azure-main')).body, { name: 'Azure 2', note: 'n', expires_at: '2099-01-01T00:00:00Z' });
  t.equal(resolveProvider(gw.store, 'azure-main', defaultWorkspaceId(gw))?.expiresAt, '2099-01-01T00:00:00Z');
  t.match((await call('PUT', '/providers/azure-main', { integration_id: 'b-openai' })).body.error, { code: 'unknown_parameter', param: 'integration_id' });
  t.same((await call('DELETE', '/providers/azure-main')).body, {});
  t.equal((await call('GET', '/providers/azure-main')).status, 404);

  // Archiving the integration stops its providers from resolving.
  t.same((await call('DELETE', '/integrations/azure-prod')).body, {});
  t.equal((await call('GET', '/integrations/azure-prod')).body.status, 'archived');
  t.equal(resolveProvider(gw.store, 'b-azure', teamB.id), undefined);
  t.equal((await call('GET', '/integrations?type=organisation')).body.total, 0);

  const audit = await auditText(gw);
  t.ok(audit.includes('"resource_type":"integration"') && audit.includes('"resource_type":"provider"'));
  for (const s of secrets) t.notOk(audit.includes(s), `no secret in the audit records (${s.slice(0, 10)})`);
});

t.test('workspace isolation and authorisation', async (t) => {
  const { gw, call } = await start(t);
  const teamB = addWorkspace(gw, 'team-b');
  const config = await call('POST', '/configs', { name: 'default ws', slug: 'pc-default', config: { provider: 'openai', api_key: 'sk-0123456789' } });
  const vk = await call('POST', '/virtual-keys', { name: 'default ws', provider: 'openai', slug: 'vk-default', key: 'sk-0123456789' });
  t.equal(config.status, 200);
  t.equal(vk.status, 200);
  const bConfig = await call('POST', '/configs', { name: 'team b', slug: 'pc-b', config: { provider: 'openai' } }, teamB.key);
  t.equal(bConfig.status, 200);
  t.equal(gw.store.c.configs.get(bConfig.body.id)!.workspace_id, teamB.id);

  for (const path of ['/configs/pc-default', `/configs/${config.body.id}`, '/configs/pc-default/versions', '/virtual-keys/vk-default']) {
    t.equal((await call('GET', path, undefined, teamB.key)).status, 404, `GET ${path} from another workspace is 404`);
  }
  t.equal((await call('PUT', '/configs/pc-default', { name: 'x' }, teamB.key)).status, 404);
  t.equal((await call('DELETE', '/configs/pc-default', undefined, teamB.key)).status, 404);
  t.equal((await call('PUT', '/virtual-keys/vk-default', { name: 'x' }, teamB.key)).status, 404);
  t.equal((await call('DELETE', '/virtual-keys/vk-default', undefined, teamB.key)).status, 404);
  t.equal((await call('GET', '/configs/pc-default')).body.name, 'default ws', 'nothing changed');

  const bList = await call('GET', '/configs', undefined, teamB.key);
  t.same(bList.body.data.map((c: { slug: string }) => c.slug), ['pc-b']);
  t.equal((await call('GET', '/virtual-keys', undefined, teamB.key)).body.total, 0);
  t.equal((await call('GET', '/configs')).body.total, 2, 'an organisation key lists across workspaces');
  t.equal((await call('GET', '/configs?workspace_id=team-b')).body.total, 1);
  const elsewhere = await call('POST', '/configs', { name: 'x', workspace_id: 'default', config: { provider: 'openai' } }, teamB.key);
  t.equal(elsewhere.status, 403);
  t.match(elsewhere.body.error, { param: 'workspace_id' });

  const readOnly = addWorkspace(gw, 'read-only', ['configs.read', 'configs.list']);
  const noScope = await call('POST', '/configs', { name: 'x', config: { provider: 'openai' } }, readOnly.key);
  t.equal(noScope.status, 403);
  t.match(noScope.body.error, { code: 'insufficient_scope' });
  t.equal((await call('GET', '/virtual-keys', undefined, readOnly.key)).status, 403);
  t.equal((await call('GET', '/integrations', undefined, readOnly.key)).status, 403);
  t.equal((await call('GET', '/configs', undefined, 'gw-wrong')).status, 401);
  const none = await request(`${gw.url}/v1/virtual-keys`);
  t.equal(none.statusCode, 401);
  await none.body.dump();
});
