/**
 * The plugin pipeline over real sockets: hook order, reverse response order, short-circuit,
 * failures, chunk hooks, routes, and onDone.
 */
import t from 'tap';
import { request } from 'undici';
import { definePlugin, PASS, type PluginDefinition, type PluginHooks } from '../core/plugin.js';
import { reply } from '../core/reply.js';
import { defineError } from '../core/errors.js';
import type { Outcome } from '../core/context.js';
import { startGateway, startMock, direct, sdk } from './helpers/gateway.js';

/** A plugin that records every hook call as `hook:name` into a shared journal. */
function recorder(name: string, journal: string[], extra: Partial<PluginHooks> = {}): PluginDefinition<never> {
  return definePlugin({
    name,
    setup() {
      return {
        onRequest: (ctx) => {
          journal.push(`onRequest:${name}`);
          return extra.onRequest?.(ctx);
        },
        onRequestBody: (ctx) => {
          journal.push(`onRequestBody:${name}`);
          return extra.onRequestBody?.(ctx);
        },
        onUpstreamRequest: (ctx, attempt) => {
          journal.push(`onUpstreamRequest:${name}`);
          return extra.onUpstreamRequest?.(ctx, attempt);
        },
        onResponseHeaders: (ctx, head) => {
          journal.push(`onResponseHeaders:${name}`);
          return extra.onResponseHeaders?.(ctx, head);
        },
        onResponseEnd: () => void journal.push(`onResponseEnd:${name}`),
        onDone: (_ctx, outcome) => {
          journal.push(`onDone:${name}:${outcome.status}`);
        },
      };
    },
  }) as PluginDefinition<never>;
}

const chat = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
}

t.test('request hooks in YAML order, response hooks in reverse, onDone for all', async (t) => {
  const mock = await startMock(t);
  const journal: string[] = [];
  const gw = await startGateway(t, {
    yaml: 'pipeline: [a, b, c]\n',
    plugins: { a: recorder('a', journal), b: recorder('b', journal), c: recorder('c', journal) },
  });
  const res = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...direct(mock), 'content-type': 'application/json' }, body: chat });
  t.equal(res.statusCode, 200);
  await res.body.text();
  await waitFor(() => journal.filter((j) => j.startsWith('onDone')).length === 3);
  t.same(journal, [
    'onRequest:a', 'onRequest:b', 'onRequest:c',
    'onRequestBody:a', 'onRequestBody:b', 'onRequestBody:c',
    'onUpstreamRequest:a', 'onUpstreamRequest:b', 'onUpstreamRequest:c',
    'onResponseHeaders:c', 'onResponseHeaders:b', 'onResponseHeaders:a',
    'onResponseEnd:c', 'onResponseEnd:b', 'onResponseEnd:a',
    'onDone:a:200', 'onDone:b:200', 'onDone:c:200',
  ]);
});

t.test('a short-circuit skips later plugins and the upstream; earlier plugins see the reply', async (t) => {
  const mock = await startMock(t);
  const journal: string[] = [];
  const gw = await startGateway(t, {
    yaml: 'pipeline: [a, b, c]\n',
    plugins: {
      a: recorder('a', journal),
      b: recorder('b', journal, { onRequest: (ctx) => (ctx.headers['x-team'] ? undefined : reply(403, { error: { message: 'x-team required', type: 'permission_error', param: null, code: 'team_required' } })) }),
      c: recorder('c', journal),
    },
  });
  const res = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...direct(mock), 'content-type': 'application/json' }, body: chat });
  t.equal(res.statusCode, 403);
  t.equal(((await res.body.json()) as { error: { code: string } }).error.code, 'team_required');
  t.ok(res.headers['x-gateway-request-id'], 'gateway headers on plugin replies');
  await waitFor(() => journal.filter((j) => j.startsWith('onDone')).length === 3);
  t.same(journal, ['onRequest:a', 'onRequest:b', 'onResponseHeaders:b', 'onResponseHeaders:a', 'onResponseEnd:b', 'onResponseEnd:a', 'onDone:a:403', 'onDone:b:403', 'onDone:c:403']);
  t.equal(mock.requests.length, 0, 'the upstream was never called');
});

t.test('a plugin that throws gives a 500 in the error shape, logged with its name; the process survives', async (t) => {
  const mock = await startMock(t);
  const Limited = defineError(429, 'rate_limit_error', 'team_quota', 'Team quota used up.');
  const gw = await startGateway(t, {
    yaml: 'pipeline: [boom, quota]\n',
    plugins: {
      boom: definePlugin({
        name: 'boom',
        setup: () => ({
          onRequestBody(ctx) {
            if (ctx.headers['x-boom']) throw new TypeError('kaboom');
          },
        }),
      }) as PluginDefinition<never>,
      quota: definePlugin({
        name: 'quota',
        setup: () => ({
          onRequest(ctx) {
            if (ctx.headers['x-quota']) throw Limited(undefined, { headers: { 'retry-after': '30' } });
          },
        }),
      }) as PluginDefinition<never>,
    },
  });
  const boom = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...direct(mock), 'content-type': 'application/json', 'x-boom': '1' }, body: chat });
  t.equal(boom.statusCode, 500);
  const body = (await boom.body.json()) as { error: { code: string; message: string } };
  t.equal(body.error.code, 'plugin_error');
  t.notMatch(body.error.message, 'kaboom', 'internals stay in the log');
  t.equal(boom.headers['x-gateway-error-source'], 'gateway');
  const logged = gw.logs.find((l) => l.msg === 'plugin hook failed');
  t.equal(logged?.plugin, 'boom');
  t.match(JSON.stringify(logged), 'kaboom');

  const quota = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...direct(mock), 'content-type': 'application/json', 'x-quota': '1' }, body: chat });
  t.equal(quota.statusCode, 429, 'a thrown gateway error keeps its status');
  t.equal(quota.headers['retry-after'], '30');
  t.equal(((await quota.body.json()) as { error: { code: string } }).error.code, 'team_quota');

  const ok = await sdk(gw, mock).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'still alive' }] });
  t.equal(ok.choices[0]?.message.content, 'Mock reply to: still alive');
});

t.test('a hook that returns PASS: the plugin\'s later hooks skip that request, the others run, the answer is whole', async (t) => {
  const mock = await startMock(t);
  const journal: string[] = [];
  // `idle` has every hook; its onRequestBody passes when the request says so (`x-idle: sync|async`).
  const idle = definePlugin({
    name: 'idle',
    setup: () => ({
      onRequest: () => void journal.push('onRequest:idle'),
      onRequestBody(ctx) {
        journal.push('onRequestBody:idle');
        const how = ctx.headers['x-idle'];
        if (how === 'sync') return PASS;
        if (how === 'async') return Promise.resolve(PASS);
        return undefined;
      },
      onUpstreamRequest: () => void journal.push('onUpstreamRequest:idle'),
      onUpstreamResponse: () => void journal.push('onUpstreamResponse:idle'),
      onResponseHeaders: () => void journal.push('onResponseHeaders:idle'),
      onResponseChunk: () => void journal.push('onResponseChunk:idle'),
      onResponseStreamEnd: () => void journal.push('onResponseStreamEnd:idle'),
      onResponseBody: () => void journal.push('onResponseBody:idle'),
      onResponseEnd: () => void journal.push('onResponseEnd:idle'),
      onDone: () => void journal.push('onDone:idle'),
    }),
  }) as PluginDefinition<never>;
  const gw = await startGateway(t, { yaml: 'pipeline: [a, idle, c]\n', plugins: { a: recorder('a', journal), idle, c: recorder('c', journal) } });
  const call = async (headers: Record<string, string>, body = chat): Promise<{ text: string; hooks: string[] }> => {
    journal.length = 0;
    const res = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...direct(mock), 'content-type': 'application/json', ...headers }, body });
    t.equal(res.statusCode, 200);
    const text = await res.body.text();
    await waitFor(() => journal.filter((j) => j.startsWith('onDone:c')).length === 1);
    await new Promise((r) => setTimeout(r, 20)); // an onDone of idle would have run in the same batch
    return { text, hooks: journal.filter((j) => j.endsWith(':idle')) };
  };
  const everyHook = ['onRequest:idle', 'onRequestBody:idle', 'onUpstreamRequest:idle', 'onUpstreamResponse:idle', 'onResponseHeaders:idle', 'onResponseBody:idle', 'onResponseEnd:idle', 'onDone:idle'];
  t.same((await call({})).hooks, everyHook, 'without PASS every hook runs');
  for (const how of ['sync', 'async']) {
    const passed = await call({ 'x-idle': how });
    t.same(passed.hooks, ['onRequest:idle', 'onRequestBody:idle'], `${how} PASS: none of the plugin's later hooks ran`);
    t.match(passed.text, /Mock reply to: hi/, `${how} PASS: the answer is whole`);
    t.ok(journal.includes('onResponseEnd:a') && journal.includes('onResponseEnd:c') && journal.includes('onDone:a:200'), `${how} PASS: the other plugins' hooks ran`);
  }
  t.same((await call({})).hooks, everyHook, 'the next request without PASS runs every hook again');
  const streamed = await call({ 'x-idle': 'sync' }, JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }));
  t.same(streamed.hooks, ['onRequest:idle', 'onRequestBody:idle'], 'a stream: no onResponseChunk or onResponseStreamEnd after PASS');
  t.match(streamed.text, /data: \[DONE\]/, 'and the stream reached its end');
  const full = await call({}, JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }));
  t.ok(full.hooks.includes('onResponseChunk:idle') && full.hooks.includes('onResponseStreamEnd:idle'), 'a stream without PASS shows its events');
});

t.test('body edits reach the upstream; chunk hooks edit and drop stream events', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: 'pipeline: [shout]\n',
    plugins: {
      shout: definePlugin({
        name: 'shout',
        setup: () => ({
          onRequestBody(ctx) {
            ctx.setBody({ ...ctx.body, temperature: 0 });
          },
          onResponseChunk(_ctx, event) {
            if (event.data === '[DONE]') return;
            const chunk = JSON.parse(event.data) as { choices: Array<{ delta: { content?: string; role?: string } }> };
            const delta = chunk.choices[0]?.delta;
            if (delta?.role !== undefined) return null; // drop the role-only first event
            if (delta?.content) delta.content = delta.content.toUpperCase();
            return { ...event, data: JSON.stringify(chunk) };
          },
        }),
      }) as PluginDefinition<never>,
    },
  });
  const stream = await sdk(gw, mock).chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'quiet words' }] });
  let text = '';
  let first = true;
  for await (const chunk of stream) {
    if (first) t.equal(chunk.choices[0]?.delta.role, undefined, 'the role event was dropped');
    first = false;
    text += chunk.choices[0]?.delta.content ?? '';
  }
  t.equal(text, 'MOCK REPLY TO: QUIET WORDS');
  t.equal((JSON.parse(mock.requests.at(-1)!.body.toString()) as { temperature: number }).temperature, 0, 'the edited body was sent');
});

t.test('plugin routes, upstream replies, and outcomes', async (t) => {
  const mock = await startMock(t);
  const outcomes: Outcome[] = [];
  const gw = await startGateway(t, {
    yaml: 'pipeline: [api, canned]\n',
    plugins: {
      api: definePlugin({
        name: 'api',
        setup: () => ({
          routes: [
            { method: 'GET', path: '/v1/echo/:id', handler: (ctx, params) => reply(200, { id: params.id, q: ctx.search }) },
            { method: 'POST', path: '/v1/echo', handler: (ctx) => reply(201, { got: ctx.body }) },
          ],
          onDone: (_ctx, outcome) => void outcomes.push(outcome),
        }),
      }) as PluginDefinition<never>,
      canned: definePlugin({
        name: 'canned',
        setup: () => ({
          onUpstreamRequest(ctx, attempt) {
            if (ctx.headers['x-canned']) return reply(200, { canned: true, url: attempt.url.pathname });
          },
        }),
      }) as PluginDefinition<never>,
    },
  });
  const get = await request(`${gw.url}/v1/echo/a%20b?x=1`);
  t.same(await get.body.json(), { id: 'a b', q: '?x=1' });
  const post = await request(`${gw.url}/v1/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":1}' });
  t.equal(post.statusCode, 201);
  t.same(await post.body.json(), { got: { n: 1 } });
  const bad = await request(`${gw.url}/v1/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{oops' });
  t.equal(bad.statusCode, 400, 'plugin routes get the same body checks');
  await bad.body.text();

  const canned = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...direct(mock), 'content-type': 'application/json', 'x-canned': '1' }, body: chat });
  t.same(await canned.body.json(), { canned: true, url: '/v1/chat/completions' });
  t.equal(canned.headers['x-gateway-provider'], 'openai', 'a reply for the upstream is a proxied answer');
  t.equal(mock.requests.length, 0);

  await waitFor(() => outcomes.length === 4);
  t.same(outcomes.map((o) => [o.status, o.source]), [[200, 'plugin'], [201, 'plugin'], [400, 'gateway'], [200, 'plugin']]);
  t.equal(outcomes[2]!.error?.code, 'invalid_json');
  t.ok(outcomes.every((o) => o.durationMs > 0));
});

t.test('onDone runs when the client goes away mid-stream', async (t) => {
  const mock = await startMock(t);
  const outcomes: Outcome[] = [];
  const gw = await startGateway(t, {
    yaml: 'pipeline: [watch]\n',
    plugins: { watch: definePlugin({ name: 'watch', setup: () => ({ onDone: (_c, o) => void outcomes.push(o) }) }) as PluginDefinition<never> },
  });
  const controller = new AbortController();
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    signal: controller.signal,
    headers: { ...direct(mock, 'chunks=50;chunk_delay=20'), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'x' }] }),
  });
  await res.body!.getReader().read();
  controller.abort();
  await waitFor(() => outcomes.length === 1);
  t.equal(outcomes[0]?.aborted, true);
  t.equal(outcomes[0]?.status, 200);
});

t.test('an async onResponseHeaders hook holds the body until it settles (regression: a short body ending first)', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: 'pipeline: [slowhead]\n',
    plugins: {
      slowhead: definePlugin({
        name: 'slowhead',
        setup: () => ({
          async onResponseHeaders(_ctx, head) {
            await new Promise((r) => setTimeout(r, 50)); // the upstream body has ended by now
            head.headers['x-checked'] = 'yes';
          },
        }),
      }) as PluginDefinition<never>,
    },
  });
  const client = sdk(gw, mock);
  const { data, response } = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'held' }] }).withResponse();
  t.equal(response.headers.get('x-checked'), 'yes');
  t.equal(data.choices[0]?.message.content, 'Mock reply to: held');
  const stream = await client.chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'held stream' }] });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  t.equal(text, 'Mock reply to: held stream');
  const failing = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...direct(mock, 'status=500'), 'content-type': 'application/json' }, body: chat });
  t.equal(failing.statusCode, 500, 'an upstream error also passes the hook');
  t.equal(failing.headers['x-checked'], 'yes');
  t.equal(failing.headers['x-gateway-error-source'], 'upstream');
  t.match(await failing.body.json(), { error: { type: 'server_error' } });
});
