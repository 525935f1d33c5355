/**
 * `POST /v1/prompts/{id}/completions`: a stored prompt rendered and sent through the normal
 * pipeline to its target, with the official OpenAI SDK calling the route by its path: plain and
 * streamed, chat and text templates, a chosen version or label, through a fallback config, a
 * virtual key, a rate limit and a cache hit; logged with prompt_slug and prompt_version_id;
 * workspace isolation, scopes and bad input.
 */
import t from 'tap';
import OpenAI from 'openai';
import { ADMIN_KEY, addWorkspace, insertKey, startGateway, startMock } from './helpers/gateway.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const PIPELINE = 'pipeline: [logging, auth, prompts, virtual-keys, config-strategy, rate-limit, cache, admin-resources, admin-policies]\n';

t.test('prompt completions', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: PIPELINE, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const call = async (method: string, path: string, body?: unknown, key = ADMIN_KEY): Promise<{ status: number; body: Json; headers: Headers }> => {
    const res = await fetch(`${gw.url}${path}`, {
      method,
      headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text.startsWith('{') ? (JSON.parse(text) as Json) : { text }, headers: res.headers };
  };
  const ok = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const r = await call(method, path, body);
    t.equal(r.status, 200, `${method} ${path}: ${JSON.stringify(r.body).slice(0, 200)}`);
    return r.body;
  };

  await ok('POST', '/v1/virtual-keys', { name: 'Main', slug: 'main', provider: 'openai', key: 'sk-main-0123456789', custom_host: `${mock.url}/v1` });
  await ok('POST', '/v1/virtual-keys', { name: 'Broken', slug: 'broken', provider: 'openai', key: 'sk-broken-0123456789', custom_host: `${mock.url}/mock/status=500/v1` });
  await ok('POST', '/v1/configs', { name: 'Fallback', slug: 'fallback', config: { strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'broken' }, { virtual_key: 'main' }] } });
  await ok('POST', '/v1/configs', { name: 'Cached', slug: 'cached', config: { cache: { mode: 'simple', max_age: 60 }, targets: [{ virtual_key: 'main' }] } });
  const welcome = await ok('POST', '/v1/prompts', {
    name: 'Welcome',
    slug: 'welcome',
    model: 'gpt-4o-mini',
    virtual_key: 'main',
    parameters: { temperature: 0.2, max_tokens: 50 },
    template: [
      { role: 'system', content: 'You write for {{company}}.' },
      { role: 'user', content: 'Greet {{name}}.{{#vip}} They are a VIP.{{/vip}}' },
    ],
  });
  t.equal(welcome.version, 1);

  const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY }, maxRetries: 0 });
  const lastSent = (): Json => JSON.parse(mock.requests.at(-1)!.body.toString('utf8')) as Json;

  await t.test('the OpenAI SDK calls the route by its path', async (t) => {
    const answer = (await openai.post('/prompts/welcome/completions', { body: { variables: { company: 'Acme', name: 'Ada', vip: true } } })) as Json;
    t.equal(answer.object, 'chat.completion', 'the provider\'s chat completion');
    t.ok(answer.choices[0].message.content.length > 0);
    const sent = lastSent();
    t.same(sent.messages, [
      { role: 'system', content: 'You write for Acme.' },
      { role: 'user', content: 'Greet Ada. They are a VIP.' },
    ], 'the rendered messages went upstream');
    t.match(sent, { model: 'gpt-4o-mini', temperature: 0.2, max_tokens: 50 });
    t.notOk('variables' in sent, 'not the route\'s own input');
    t.equal(mock.requests.at(-1)!.headers.authorization, 'Bearer sk-main-0123456789', 'through the prompt\'s virtual key');
  });

  await t.test('streamed', async (t) => {
    const res = await fetch(`${gw.url}/v1/prompts/welcome/completions`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ variables: { company: 'Acme', name: 'Bo' }, stream: true }),
    });
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /text\/event-stream/);
    const text = await res.text();
    t.match(text, /"object":"chat.completion.chunk"/);
    t.match(text, /data: \[DONE\]/);
    t.equal(lastSent().stream, true);
  });

  await t.test('versions, publish and labels choose what is sent', async (t) => {
    await ok('PUT', '/v1/prompts/welcome', { template: [{ role: 'user', content: 'Hi {{name}}, v2.' }], version_description: 'shorter' });
    await openai.post('/prompts/welcome/completions', { body: { variables: { company: 'Acme', name: 'Cy' } } });
    t.equal(lastSent().messages.length, 2, 'the default is still version 1');
    await openai.post('/prompts/welcome/completions?version=2', { body: { variables: { name: 'Cy' } } });
    t.same(lastSent().messages, [{ role: 'user', content: 'Hi Cy, v2.' }], '?version=2 renders version 2');
    await ok('PUT', '/v1/prompts/welcome/labels/staging', { version: 2 });
    await openai.post('/prompts/welcome/completions', { body: { variables: { name: 'Di' }, label: 'staging' } });
    t.same(lastSent().messages, [{ role: 'user', content: 'Hi Di, v2.' }], 'a label');
    await ok('PUT', '/v1/prompts/welcome/makeDefault', { version: 2 });
    await openai.post('/prompts/welcome/completions', { body: { variables: { name: 'Ed' } } });
    t.same(lastSent().messages, [{ role: 'user', content: 'Hi Ed, v2.' }], 'published: the default moved');
    await openai.post('/prompts/welcome/completions', { body: { variables: { company: 'Acme', name: 'Fa' }, version: 1 } });
    t.equal(lastSent().messages.length, 2, 'the old version stays callable');
  });

  await t.test('responses.create({prompt}) with a stored prompt renders it into a normal request', async (t) => {
    const answer = await openai.responses.create({ model: 'gpt-4o-mini', prompt: { id: 'welcome', version: '1', variables: { company: 'Acme', name: 'Gi' } }, input: 'Also mention the weather.' });
    t.equal(answer.object, 'response');
    const forwarded = mock.requests.at(-1)!;
    t.match(forwarded.path, /\/v1\/responses$/);
    const sent = lastSent();
    t.notOk('prompt' in sent, 'the stored prompt is not sent to the provider');
    t.same(sent.input, [
      { role: 'developer', content: 'You write for Acme.' },
      { role: 'user', content: 'Greet Gi.' },
      { role: 'user', content: 'Also mention the weather.' },
    ], 'its rendered messages, then the caller\'s input');
    t.match(sent, { model: 'gpt-4o-mini', temperature: 0.2, max_output_tokens: 50 });
    t.equal(forwarded.headers.authorization, 'Bearer sk-main-0123456789', 'through the prompt\'s virtual key');
    const missing = await call('POST', '/v1/responses', { model: 'gpt-4o-mini', prompt: { id: 'welcome', variables: {} } });
    t.match(missing.body.error, { code: 'missing_variable' }, 'a missing variable is a 400 as for completions');
  });

  await t.test('a text template is a completion; a fallback config; a cache hit; a rate limit', async (t) => {
    await ok('POST', '/v1/prompts', { name: 'Tagline', slug: 'tagline', model: 'gpt-3.5-turbo-instruct', config: 'fallback', template: 'Write a tagline for {{product}}.' });
    const answer = (await openai.post('/prompts/tagline/completions', { body: { variables: { product: 'rockets' } } })) as Json;
    t.equal(answer.object, 'text_completion');
    t.equal(lastSent().prompt, 'Write a tagline for rockets.');
    t.equal(mock.requests.at(-1)!.headers.authorization, 'Bearer sk-main-0123456789', 'the fallback config reached its second target');

    await ok('POST', '/v1/prompts', { name: 'Cached', slug: 'cached-prompt', model: 'gpt-4o-mini', config: 'cached', template: [{ role: 'user', content: 'Say {{word}}.' }] });
    const first = await call('POST', '/v1/prompts/cached-prompt/completions', { variables: { word: 'hi' } });
    const second = await call('POST', '/v1/prompts/cached-prompt/completions', { variables: { word: 'hi' } });
    t.equal(first.headers.get('x-gateway-cache-status'), 'MISS');
    t.equal(second.headers.get('x-gateway-cache-status'), 'HIT', 'the same render is a cache hit');
    t.same(second.body.choices, first.body.choices);

    const ws = addWorkspace(gw.store, 'limited', ['completions.write', 'prompts.create', 'prompts.read', 'virtual_keys.create']);
    const wsCall = (path: string, body: unknown): Promise<{ status: number; body: Json; headers: Headers }> => call('POST', path, body, ws.key);
    t.equal((await wsCall('/v1/virtual-keys', { name: 'Own', slug: 'own', provider: 'openai', key: 'sk-own-0123456789', custom_host: `${mock.url}/v1` })).status, 200);
    t.equal((await wsCall('/v1/prompts', { name: 'Limited', slug: 'limited-prompt', model: 'gpt-4o-mini', virtual_key: 'own', template: [{ role: 'user', content: 'x' }] })).status, 200);
    await ok('POST', '/v1/policies/rate-limits', { workspace_id: ws.id, conditions: [{ key: 'workspace_id', value: 'limited' }], group_by: [{ key: 'api_key' }], type: 'requests', unit: 'rpm', value: 2 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await wsCall('/v1/prompts/limited-prompt/completions', {})).status);
    t.same(statuses, [200, 200, 429], 'rate limits apply to prompt completions');

    t.equal((await wsCall('/v1/prompts/welcome/completions', { variables: { name: 'x' } })).status, 404, "another workspace's prompt does not exist for this key");
  });

  await t.test('logged with the prompt; bad input; scopes', async (t) => {
    let records: Json[] = [];
    // Records reach the store in batches: wait for the last calls' batch.
    for (let i = 0; i < 100 && records.length < 8; i++) {
      records = (await call('GET', '/v1/logs?prompt_slug=welcome&page_size=50')).body.data ?? [];
      if (records.length < 8) await new Promise((r) => setTimeout(r, 50));
    }
    t.equal(records.length, 8, 'every welcome call is logged with its prompt: 7 completions and 1 Responses call');
    t.match(records.find((r) => r.route === 'responses'), { prompt_slug: 'welcome', path: '/v1/responses' });
    t.match(records.find((r) => r.route === 'chat.completions'), { prompt_slug: 'welcome', path: '/v1/prompts/welcome/completions' });
    t.ok(typeof records[0]?.prompt_version_id === 'string');

    const missing = await call('POST', '/v1/prompts/welcome/completions', { variables: {} });
    t.equal(missing.status, 400);
    t.match(missing.body.error, { code: 'missing_variable', param: 'variables.name' });
    t.match((await call('POST', '/v1/prompts/welcome/completions', { messages: [] })).body.error, { param: 'messages' });
    t.match((await call('POST', '/v1/prompts/welcome/completions', { version: 'two' })).body.error, { param: 'version' });
    t.match((await call('POST', '/v1/prompts/welcome/completions?version=0', {})).body.error, { param: 'version' });
    t.equal((await call('POST', '/v1/prompts/welcome/completions', { version: 9, variables: { name: 'x' } })).status, 404, 'no such version');
    t.equal((await call('POST', '/v1/prompts/nope/completions', {})).status, 404);
    t.match((await call('POST', '/v1/prompts/welcome/completions', { variables: { name: 'x' }, temperature: 7 })).body.error, { param: 'temperature' }, 'the rendered body is validated like any chat call');
    const doc = (await call('GET', '/v1/openapi.json')).body;
    t.match(doc.paths['/v1/prompts/{slug}/completions']?.post, { 'x-required-scope': 'completions.write' }, 'described in the OpenAPI document');
    const reader = insertKey(gw.store, { workspace_id: gw.store.meta.get('default_workspace_id') as string, scopes: ['prompts.read'], name: 'reader' });
    t.equal((await call('POST', '/v1/prompts/welcome/completions', { variables: { name: 'x' } }, reader)).status, 403, 'a model call needs completions.write');
  });
});
