/**
 * Provider adapters that need no translation: the OpenAI-compatible presets and Azure OpenAI
 * (URL and auth), in direct mode against the mock.
 */
import t from 'tap';
import { request } from 'undici';
import { ProviderRegistry, BUILT_IN_ADAPTERS } from '../core/providers/registry.js';
import { OPENAI_COMPATIBLE_PRESETS } from '../core/providers/presets.js';
import { startGateway, startMock } from './helpers/gateway.js';

t.test('every preset is registered with its base URL and bearer auth', async (t) => {
  const registry = new ProviderRegistry();
  for (const [id, base] of Object.entries(OPENAI_COMPATIBLE_PRESETS)) {
    const adapter = registry.get(id);
    t.equal(adapter?.baseUrl, base, id);
    t.same(adapter?.authHeaders({ provider: id, apiKey: 'k' }), { authorization: 'Bearer k' });
  }
  for (const id of ['groq', 'together-ai', 'mistral-ai', 'deepseek', 'fireworks-ai', 'openrouter', 'perplexity-ai', 'x-ai', 'cerebras', 'deepinfra', 'ollama', 'vllm', 'lm-studio', 'openai', 'azure-openai']) {
    t.ok(BUILT_IN_ADAPTERS.some((a) => a.id === id), `${id} ships`);
  }
});

t.test('presets and Azure over real sockets', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t);
  const body = '{"model":"llama-3.3-70b","messages":[{"role":"user","content":"hi"}],"provider_specific":{"x":1}}';
  async function send(headers: Record<string, string>, payload = body) {
    mock.reset();
    const res = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: payload });
    const text = await res.body.text();
    return { status: res.statusCode, text, seen: mock.requests[0] };
  }

  t.test('a preset with a custom host: bearer auth, unknown parameters untouched', async (t) => {
    const r = await send({ 'x-gateway-provider': 'groq', 'x-gateway-custom-host': `${mock.url}/v1`, authorization: 'Bearer gsk-1' });
    t.equal(r.status, 200);
    t.equal(r.seen?.headers['authorization'], 'Bearer gsk-1');
    t.equal(r.seen?.body.toString(), body, 'the original bytes, extra fields included');
  });

  t.test('Azure: deployment URL with api-version and the api-key header', async (t) => {
    const r = await send({
      'x-gateway-provider': 'azure-openai',
      'x-gateway-custom-host': mock.url,
      'x-gateway-azure-deployment-id': 'gpt4o-prod',
      'x-gateway-azure-api-version': '2024-10-21',
      authorization: 'Bearer az-key',
    });
    t.equal(r.status, 200);
    t.equal(r.seen?.path, '/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21');
    t.equal(r.seen?.headers['api-key'], 'az-key');
    t.notOk(r.seen?.headers['authorization'], 'no bearer alongside the api-key');
  });

  t.test('Azure: the v1 form, and an Entra ID bearer token', async (t) => {
    const r = await send({
      'x-gateway-provider': 'azure-openai',
      'x-gateway-custom-host': mock.url,
      'x-gateway-azure-api-version': 'v1',
      'x-gateway-azure-auth-mode': 'entra',
      authorization: 'Bearer entra-token',
    });
    t.equal(r.seen?.path, '/openai/v1/chat/completions');
    t.equal(r.seen?.headers['authorization'], 'Bearer entra-token');
    t.notOk(r.seen?.headers['api-key']);
  });

  t.test('Azure without a resource or a host: a clear 400', async (t) => {
    const r = await send({ 'x-gateway-provider': 'azure-openai', 'x-gateway-azure-deployment-id': 'd', authorization: 'Bearer k' });
    t.equal(r.status, 400);
    t.match(JSON.parse(r.text), { error: { code: 'invalid_header', param: 'x-gateway-azure-resource-name' } });
    t.equal(r.seen, undefined, 'nothing was sent');
  });
});
