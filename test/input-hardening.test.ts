/**
 * Issue 11's input defects over real sockets, with the standard pipeline: request content is never
 * echoed in an error (canaries), oversized ids, slugs and lookup headers are a 400 before the store
 * sees them (they were 500s), non-finite numbers (`1e999`) are refused wherever numbers are stored
 * (they were stored and read back as null), and `"strategy": null` is a 400 naming the field.
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, startMock, direct, ADMIN_KEY } from './helpers/gateway.js';

const PIPELINE = [
  'logging', 'auth', 'virtual-keys', 'config-strategy', 'rate-limit', 'usage-limits', 'cache',
  'admin-org', 'admin-api-keys', 'admin-resources', 'admin-policies', 'admin-catalog',
];
const CANARY = 'cAnArY7f3e9d';

interface Answer {
  status: number;
  text: string;
  code: string | undefined;
  param: string | null | undefined;
}

t.test('input hardening', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: `pipeline: [${PIPELINE.join(', ')}]\n`, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });

  async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH', path: string, options: { headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
    const res = await request(`${gw.url}${path}`, {
      method,
      headers: { 'x-gateway-api-key': ADMIN_KEY, ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
      body: options.body,
    });
    const text = await res.body.text();
    let error: { code?: string; param?: string | null } | undefined;
    try {
      error = (JSON.parse(text) as { error?: { code?: string; param?: string | null } }).error;
    } catch {
      error = undefined;
    }
    return { status: res.statusCode, text, code: error?.code, param: error?.param };
  }
  const chat = (extra: Record<string, unknown> = {}): string => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], ...extra });

  t.test('regression: error messages never echo request content (canaries in every place)', async (t) => {
    const leaf = { provider: 'openai', api_key: 'sk-x', custom_host: `${mock.url}/v1` };
    const cases: Array<[string, () => Promise<Answer>, number, string]> = [
      ['unknown provider header', () => call('POST', '/v1/chat/completions', { headers: { 'x-gateway-provider': CANARY, authorization: 'Bearer sk-x' }, body: chat() }), 400, 'unknown_provider'],
      ['unknown provider in an inline config', () => call('POST', '/v1/chat/completions', { headers: { 'x-gateway-config': JSON.stringify({ ...leaf, provider: CANARY }) }, body: chat() }), 400, 'unknown_provider'],
      ['unknown virtual-key slug', () => call('POST', '/v1/chat/completions', { headers: { 'x-gateway-virtual-key': CANARY }, body: chat() }), 400, 'invalid_virtual_key'],
      ['unknown config slug', () => call('POST', '/v1/chat/completions', { headers: { 'x-gateway-config': CANARY }, body: chat() }), 400, 'unknown_config'],
      ['unknown @slug model', () => call('POST', '/v1/chat/completions', { headers: direct(mock), body: chat({ model: `@${CANARY}/gpt-4o` }) }), 400, 'unknown_provider_slug'],
      ['unknown workspace_id in a query', () => call('GET', `/v1/configs?workspace_id=${CANARY}`), 404, 'not_found'],
      ['unknown workspace_id in a body', () => call('POST', '/v1/configs', { body: JSON.stringify({ name: 'c', workspace_id: CANARY, config: leaf }) }), 404, 'not_found'],
      ['unknown config path id', () => call('GET', `/v1/configs/${CANARY}`), 404, 'not_found'],
      ['unknown virtual-key path id', () => call('GET', `/v1/virtual-keys/${CANARY}`), 404, 'not_found'],
      ['unknown workspace path id', () => call('GET', `/v1/admin/workspaces/${CANARY}/users`), 404, 'not_found'],
      ['unknown user path id', () => call('GET', `/v1/admin/users/${CANARY}`), 404, 'not_found'],
      ['unknown route', () => call('GET', `/${CANARY}`), 404, 'route_not_found'],
      ['unknown method', () => call('PATCH', `/v1/chat/completions?${CANARY}`), 405, 'method_not_allowed'],
      ['a metadata key with a non-string value', () => call('POST', '/v1/chat/completions', { headers: { ...direct(mock), 'x-gateway-metadata': JSON.stringify({ [CANARY]: { a: 1 } }) }, body: chat() }), 400, 'invalid_header'],
      ['a conflicting slug', async () => {
        const body = JSON.stringify({ name: 'vk', slug: CANARY.toLowerCase(), provider: 'openai', key: 'sk-canary-test' });
        await call('POST', '/v1/virtual-keys', { body });
        return call('POST', '/v1/virtual-keys', { body });
      }, 409, 'conflict'],
    ];
    for (const [what, send, status, code] of cases) {
      const r = await send();
      t.equal(r.status, status, `${what}: ${status}`);
      t.equal(r.code, code, `${what}: ${code}`);
      t.notOk(r.text.toLowerCase().includes(CANARY.toLowerCase()), `${what}: the canary is not in the answer`);
    }
  });

  t.test('regression: oversized ids, slugs and lookup headers are a 400 before the store (were 500s)', async (t) => {
    const huge = 'x'.repeat(5000);
    const cases: Array<[string, () => Promise<Answer>, string, string]> = [
      ['a config path id', () => call('GET', `/v1/configs/${huge}`), 'string_too_long', 'slug'],
      ['a virtual-key path id on delete', () => call('DELETE', `/v1/virtual-keys/${huge}`), 'string_too_long', 'slug'],
      ['a path id just over 255', () => call('GET', `/v1/configs/${'y'.repeat(256)}`), 'string_too_long', 'slug'],
      ['workspace_id in a query', () => call('GET', `/v1/configs?workspace_id=${huge}`), 'string_too_long', 'workspace_id'],
      ['workspace_id of the wrong type', () => call('POST', '/v1/configs', { body: JSON.stringify({ name: 'c', workspace_id: 5, config: { provider: 'openai' } }) }), 'invalid_type', 'workspace_id'],
      ['x-gateway-virtual-key', () => call('POST', '/v1/chat/completions', { headers: { 'x-gateway-virtual-key': huge }, body: chat() }), 'string_too_long', 'x-gateway-virtual-key'],
      ['x-gateway-config as a slug', () => call('POST', '/v1/chat/completions', { headers: { 'x-gateway-config': huge }, body: chat() }), 'string_too_long', 'x-gateway-config'],
      ['x-gateway-api-key', () => call('POST', '/v1/chat/completions', { headers: { 'x-gateway-api-key': 'k'.repeat(9000) }, body: chat() }), 'string_too_long', 'x-gateway-api-key'],
      ['x-gateway-provider', () => call('POST', '/v1/chat/completions', { headers: { 'x-gateway-provider': huge }, body: chat() }), 'string_too_long', 'x-gateway-provider'],
    ];
    for (const [what, send, code, param] of cases) {
      const r = await send();
      t.equal(r.status, 400, `${what}: 400`);
      t.equal(r.code, code, `${what}: ${code}`);
      t.equal(r.param, param, `${what}: names ${param}`);
    }
    const ok = await call('GET', `/v1/configs/${'z'.repeat(255)}`);
    t.equal(ok.status, 404, 'exactly 255 characters is looked up (and not found)');
    t.equal(gw.store.c.configs.get('q'.repeat(3000)), undefined, 'the store itself answers "not found" for a key over its limit');
    t.equal(gw.store.c.configs.getBy('slug', 'q'.repeat(3000)), undefined);
  });

  t.test('regression: non-finite numbers (1e999) are refused wherever numbers are stored', async (t) => {
    const rate = '{"name":"r","conditions":[{"key":"workspace_id","value":"default"}],"group_by":[{"key":"api_key"}],"type":"requests","unit":"rpm","value":1e999}';
    const usage = '{"name":"u","conditions":[{"key":"workspace_id","value":"default"}],"group_by":[{"key":"api_key"}],"type":"cost","credit_limit":1e999}';
    const usageNegative = '{"name":"u","conditions":[{"key":"workspace_id","value":"default"}],"group_by":[{"key":"api_key"}],"type":"cost","credit_limit":100,"alert_threshold":-1e999}';
    const pricing = '{"pay_as_you_go":{"request_token":{"price":1e999},"response_token":{"price":0}}}';
    const config = '{"name":"c","config":{"strategy":{"mode":"loadbalance"},"targets":[{"provider":"openai","weight":1e999},{"provider":"openai"}]}}';
    const cases: Array<[string, () => Promise<Answer>, string]> = [
      ['a rate-limit value', () => call('POST', '/v1/policies/rate-limits', { body: rate }), 'value'],
      ['a credit_limit', () => call('POST', '/v1/policies/usage-limits', { body: usage }), 'credit_limit'],
      ['an alert_threshold of -1e999', () => call('POST', '/v1/policies/usage-limits', { body: usageNegative }), 'alert_threshold'],
      ['a price', () => call('PUT', '/v1/model-pricing/openai/gpt-4o', { body: pricing }), 'pay_as_you_go.request_token.price'],
      ['a saved config weight', () => call('POST', '/v1/configs', { body: config }), 'config.targets[0].weight'],
      ['an inline config weight', () => call('POST', '/v1/chat/completions', { headers: { 'x-gateway-config': '{"strategy":{"mode":"loadbalance"},"targets":[{"provider":"openai","weight":1e999},{"provider":"openai"}]}' }, body: chat() }), 'config.targets[0].weight'],
      ['a query number', () => call('GET', '/v1/policies/usage-limits?current_page=1e999'), 'current_page'],
    ];
    for (const [what, send, param] of cases) {
      const r = await send();
      t.equal(r.status, 400, `${what}: 400`);
      t.match(r.code, /^(invalid_value|invalid_type)$/, `${what}: a validation code (${r.code})`);
      t.equal(r.param, param, `${what}: names ${param}`);
    }
    const policies = await call('GET', '/v1/policies/rate-limits');
    t.notMatch(policies.text, /"value":null/, 'nothing was stored as null');
  });

  t.test('regression: "strategy": null in a saved config is a 400 naming it (was a 500 TypeError)', async (t) => {
    const r = await call('POST', '/v1/configs', { body: JSON.stringify({ name: 'c', config: { provider: 'openai', strategy: null } }) });
    t.equal(r.status, 400);
    t.equal(r.code, 'invalid_type');
    t.equal(r.param, 'config.strategy');
    const inline = await call('POST', '/v1/chat/completions', { headers: { 'x-gateway-config': '{"strategy":null,"targets":[{"provider":"openai"}]}' }, body: chat() });
    t.equal(inline.status, 400);
    t.equal(inline.param, 'config.strategy');
  });

  t.test('a saved config with a $regex RE2 refuses is a 400 at save time', async (t) => {
    const config = { strategy: { mode: 'conditional', conditions: [{ query: { 'params.model': { $regex: '(a)\\1' } }, then: 'a' }] }, targets: [{ name: 'a', provider: 'openai' }] };
    const r = await call('POST', '/v1/configs', { body: JSON.stringify({ name: 'c', config }) });
    t.equal(r.status, 400);
    t.equal(r.code, 'invalid_value');
    t.equal(r.param, 'config.strategy.conditions[0].query.params.model.$regex');
  });

  t.test('audit-logs pages up to 500 items, as the README says', async (t) => {
    t.equal((await call('GET', '/v1/audit-logs?page_size=500')).status, 200);
    const over = await call('GET', '/v1/audit-logs?page_size=501');
    t.equal(over.status, 400);
    t.equal(over.code, 'value_above_maximum');
  });

  t.test('no 5xx was answered and the process is healthy', async (t) => {
    t.notOk(gw.logs.some((l) => l.msg === 'unexpected error' || l.msg === 'request handler failed'), 'nothing unexpected was logged');
    const res = await request(`${gw.url}/health`);
    t.equal(res.statusCode, 200);
    await res.body.text();
  });
});
