/**
 * The core's dialect machinery, with a toy dialect a plugin registers: requests built by the
 * translator, answers and errors translated (status kept), streams translated event by event,
 * unsupported routes refused, usage metered on the translated answer, fallback intact.
 */
import t from 'tap';
import { request } from 'undici';
import { definePlugin, type PluginDefinition } from '../core/plugin.js';
import type { Translator } from '../core/providers/types.js';
import type { Usage } from '../core/usage/types.js';
import { startGateway, startMock } from './helpers/gateway.js';

type Json = Record<string, unknown>;

/** "Shout": an OpenAI-compatible upstream behind a dialect that upper-cases answers and renames errors. */
const shout: Translator = {
  routes: new Set(['chat.completions']),
  request: (ctx) => ({ path: '/chat/completions', body: { ...ctx.request, shouted: true }, headers: { 'x-dialect': 'shout' } }),
  response: (_ctx, body) => {
    const b = body as { choices: Array<{ message: { content: string } }> } & Json;
    return { ...b, choices: b.choices.map((c) => ({ ...c, message: { ...c.message, content: c.message.content.toUpperCase() } })), dialect: 'shout' };
  },
  stream: () => ({
    event(ev) {
      if (ev.data === '[DONE]') return []; // the translator ends the stream itself
      const chunk = JSON.parse(ev.data) as { choices: Array<{ delta: { content?: string } }> };
      for (const c of chunk.choices) if (c.delta.content) c.delta.content = c.delta.content.toUpperCase();
      return [{ data: JSON.stringify(chunk) }];
    },
    end: () => [{ data: '[DONE]' }],
  }),
  error: (_ctx, status, body) => ({ error: { message: `shout says ${status}`, type: 'shout_error', param: null, code: 'shouted', original: body } }),
};

t.test('dialect translation in the core', async (t) => {
  const mock = await startMock(t);
  const seen: Array<Usage | undefined> = [];
  const plugin = definePlugin({
    name: 'shout-dialect',
    setup(app) {
      app.registerProvider({ id: 'shout', baseUrl: `${mock.url}/v1`, authHeaders: (target) => ({ 'x-shout-key': target.apiKey ?? '' }), translate: shout });
      return { meterUsage: true, onResponseEnd: (ctx) => void seen.push(ctx.usage) };
    },
  }) as PluginDefinition<never>;
  const gw = await startGateway(t, { yaml: 'pipeline:\n  - shout-dialect\n  - config-strategy: {circuit_breaker: false}\n', plugins: { 'shout-dialect': plugin } });
  const send = async (headers: Record<string, string>, body: Json, path = '/v1/chat/completions') => {
    mock.reset();
    const res = await request(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  };
  const chat = { model: 'm', messages: [{ role: 'user', content: 'quiet please' }] };
  const direct = { 'x-gateway-provider': 'shout', authorization: 'Bearer k1' };

  t.test('request built by the translator, answer translated, usage metered', async (t) => {
    const r = await send(direct, chat);
    t.equal(r.status, 200);
    const body = JSON.parse(r.text) as { dialect: string; choices: Array<{ message: { content: string } }> };
    t.equal(body.dialect, 'shout');
    t.equal(body.choices[0]!.message.content, 'MOCK REPLY TO: QUIET PLEASE');
    const sent = mock.requests[0]!;
    t.equal(JSON.parse(sent.body.toString()).shouted, true);
    t.equal(sent.headers['x-dialect'], 'shout');
    t.equal(sent.headers['x-shout-key'], 'k1');
    t.notOk(sent.headers['authorization'], 'the client bearer is not forwarded');
    t.equal(r.headers['content-length'], String(Buffer.byteLength(r.text)), 'content-length of the translated body');
    await new Promise((res) => setTimeout(res, 20));
    t.match(seen.at(-1), { source: 'upstream', total_tokens: Number });
  });

  t.test('streams translated event by event, ending as the translator says', async (t) => {
    const r = await send(direct, { ...chat, stream: true });
    const deltas = r.text.split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => (JSON.parse(e.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '');
    t.equal(deltas.join(''), 'MOCK REPLY TO: QUIET PLEASE');
    t.match(r.text, /data: \[DONE\]\n\n$/);
    t.equal(r.text.split('[DONE]').length - 1, 1, 'exactly one [DONE]');
  });

  t.test('errors translated with their status kept', async (t) => {
    const r = await send({ ...direct, 'x-gateway-custom-host': `${mock.url}/mock/status=429/v1` }, chat);
    t.equal(r.status, 429);
    t.equal(r.headers['x-gateway-error-source'], 'upstream');
    t.match(JSON.parse(r.text), { error: { code: 'shouted', message: 'shout says 429', original: { error: { code: 'rate_limit_exceeded' } } } });
  });

  t.test('a translated failure still falls back, and the last answer is in the client dialect', async (t) => {
    const leaf = (d: string) => ({ provider: 'shout', api_key: 'k', custom_host: `${mock.url}/mock/${d}/v1` });
    const fb = await send({ 'x-gateway-config': JSON.stringify({ strategy: { mode: 'fallback' }, targets: [leaf('status=503'), { provider: 'openai', api_key: 'k', custom_host: `${mock.url}/v1` }] }) }, chat);
    t.equal(fb.status, 200);
    t.equal(JSON.parse(fb.text).choices[0].message.content, 'Mock reply to: quiet please', 'answered by the second (OpenAI) target');
    const all = await send({ 'x-gateway-config': JSON.stringify({ strategy: { mode: 'fallback' }, targets: [leaf('status=503'), leaf('status=502')] }) }, chat);
    t.equal(all.status, 502);
    t.match(JSON.parse(all.text), { error: { code: 'shouted', message: 'shout says 502' } });
  });

  t.test('a route the dialect lacks is a 400', async (t) => {
    const r = await send(direct, { model: 'e', input: 'x' }, '/v1/embeddings');
    t.equal(r.status, 400);
    t.equal((JSON.parse(r.text) as { error: { code: string } }).error.code, 'unsupported_route');
  });
});

t.test('regression: a translated stream is translated even when nothing meters or reads events', async (t) => {
  const mock = await startMock(t);
  const bare = definePlugin({
    name: 'shout-only',
    setup(app) {
      app.registerProvider({ id: 'shout', baseUrl: `${mock.url}/v1`, authHeaders: () => ({}), translate: shout });
    },
  }) as PluginDefinition<never>;
  const gw = await startGateway(t, { yaml: 'pipeline: [shout-only]\n', plugins: { 'shout-only': bare } });
  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-provider': 'shout' },
    body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'quiet' }] }),
  });
  const text = await res.body.text();
  t.match(text, /MOCK/, 'the dialect upper-cased the deltas');
  t.notMatch(text, /"content":"Mock/, 'no untranslated provider event reached the client');
});
