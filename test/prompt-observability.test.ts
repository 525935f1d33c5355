/**
 * The stored-prompt reference a request carries (`promptRef`, set by the `prompts` plugin when
 * it renders a prompt into a model call) as logs and analytics see it: the record's
 * `prompt_slug` and `prompt_version_id`, the logs filter `prompt_slug`, the analytics filter
 * `prompt_slug` and the group `/v1/analytics/groups/prompts`. A stand-in plugin sets the
 * reference from a test header, so these run before the prompts plugin's completions route.
 */
import t from 'tap';
import { runExport } from './helpers/log-export.js';
import { request } from 'undici';
import { definePlugin } from '../core/index.js';
import { ADMIN_KEY, direct, startGateway, startMock } from './helpers/gateway.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Sets `promptRef` from `x-test-prompt: <slug>:<version>` on model calls. */
const promptStandIn = definePlugin({
  name: 'prompt-stand-in',
  setup() {
    return {
      onRequestBody(ctx) {
        const header = ctx.headers['x-test-prompt'];
        if (typeof header !== 'string') return;
        const [slug, version] = header.split(':');
        ctx.set('promptRef', { slug: slug!, version: Number(version), version_id: `${slug}-v${version}` });
      },
    };
  },
});

t.test('prompt_slug and prompt_version_id in logs and analytics', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: 'pipeline:\n  - logging\n  - analytics: {flush_ms: 20}\n  - auth\n  - prompt-stand-in\n  - admin-catalog\n',
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
    plugins: { 'prompt-stand-in': promptStandIn },
  });
  const start = Date.now();
  async function chat(prompt?: string): Promise<void> {
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...direct(mock), 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json', 'x-gateway-metadata': '{"env":"test"}', ...(prompt ? { 'x-test-prompt': prompt } : {}) },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'from a prompt' }] }),
    });
    t.equal(res.statusCode, 200);
    await res.body.text();
  }
  await chat('welcome:1');
  await chat('welcome:2');
  await chat('welcome:2');
  await chat('summary:1');
  await chat();

  async function get(path: string): Promise<Json> {
    const res = await request(`${gw.url}${path}`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
    return (await res.body.json()) as Json;
  }
  let logs: Json = {};
  for (let i = 0; i < 100; i++) {
    logs = await get('/v1/logs?route=chat.completions');
    if (logs.data?.length === 5) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.equal(logs.data.length, 5);
  const plain = logs.data.find((r: Json) => r.prompt_slug === undefined);
  t.ok(plain, 'a request from no prompt has no prompt fields');
  t.notOk('prompt_version_id' in plain);
  const welcome = await get('/v1/logs?prompt_slug=welcome');
  t.equal(welcome.data.length, 3, 'the logs filter');
  t.same(welcome.data.map((r: Json) => r.prompt_version_id).sort(), ['welcome-v1', 'welcome-v2', 'welcome-v2']);
  const one = await get(`/v1/logs/${welcome.data[0].id}`);
  t.equal(one.prompt_slug, 'welcome', 'GET /v1/logs/:id carries it');

  const exported = await runExport(gw.url, ADMIN_KEY, { prompt_slug: 'welcome' }, ['id', 'prompt_slug']);
  t.equal(exported.total, 3, 'an export by prompt_slug counts the prompt\'s requests');
  t.same(exported.lines.map((l) => l.prompt_slug), ['welcome', 'welcome', 'welcome'], 'and its lines carry the slug');
  t.equal((await runExport(gw.url, ADMIN_KEY, { prompt_slug: 'summary,welcome' }, ['id'])).total, 4, 'a comma list');

  const range = `time_of_generation_min=${new Date(start - 60_000).toISOString()}&time_of_generation_max=${new Date(Date.now() + 60_000).toISOString()}`;
  const filtered = await get(`/v1/analytics/graphs/requests?${range}&prompt_slug=welcome`);
  t.equal(filtered.summary.total, 3, 'analytics filters by prompt_slug');
  const withMetadata = await get(`/v1/analytics/graphs/requests?${range}&prompt_slug=summary&metadata=${encodeURIComponent('{"env":"test"}')}`);
  t.equal(withMetadata.summary.total, 1, 'together with a metadata filter');
  const all = await get(`/v1/analytics/graphs/requests?${range}&metadata=${encodeURIComponent('{"env":"test"}')}`);
  t.equal(all.summary.total, 5, "the caller's own metadata still matches requests from prompts");
  const groups = await get(`/v1/analytics/groups/prompts?${range}`);
  t.match(groups.data, [{ requests: 3 }, { requests: 1 }], 'grouped by prompt, most requests first');
  t.match(JSON.stringify(groups.data), /welcome[\s\S]*summary/);
  const openapi = await get('/v1/openapi.json');
  t.ok(openapi.paths['/v1/analytics/groups/prompts'], 'in the OpenAPI document');
});
