/**
 * Streams that stay alive: `: ping` comments during silences after the first byte too (OpenAI
 * chunks passed through, events read by a plugin, Anthropic ingress events, a translated
 * provider), never inside an event and never shown to a plugin; and an upstream silent past
 * `upstream.stream_idle_timeout` ends the stream visibly (`upstream_idle_timeout`, in the client's
 * dialect) and has its call closed.
 */
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { definePlugin, type PluginDefinition } from '../core/plugin.js';
import type { SseEvent } from '../core/sse/sse-parser.js';
import { startGateway, startMock, type Teardown } from './helpers/gateway.js';

const chunk = (content: string, finish: string | null = null): string =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;

/**
 * An OpenAI-style upstream that sends `parts` with a pause before each (`[ms, text]`), then ends;
 * `hang` leaves it open after the parts. It records when its answer was closed.
 */
async function scriptedUpstream(t: Teardown, script: Array<[number, string]>, hang = false) {
  const state = { closed: false, requests: 0 };
  const server = http.createServer((req, res) => {
    state.requests++;
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const timers: NodeJS.Timeout[] = [];
    res.on('close', () => {
      state.closed = true;
      for (const timer of timers) clearTimeout(timer);
    });
    let at = 0;
    for (const [pause, text] of script) {
      at += pause;
      timers.push(setTimeout(() => res.write(text), at));
    }
    if (!hang) timers.push(setTimeout(() => res.end(), at + 10));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, state };
}

async function readAll(res: Response): Promise<string> {
  return new TextDecoder().decode(await res.arrayBuffer());
}

/** The blank-line-separated blocks of a stream that do not match `whole` (none when every event and ping arrived whole). */
function brokenBlocks(text: string, whole: RegExp): string[] {
  return text.split('\n\n').filter((block) => block.length > 0 && !whole.test(block));
}

const SILENT_SCRIPT: Array<[number, string]> = [
  [0, chunk('Hello')],
  [450, chunk(' world')],
  [0, chunk('', 'stop')],
  [0, 'data: [DONE]\n\n'],
];

const YAML = 'server: {host: 127.0.0.1, port: 0, stream_ping_interval: 100}\nupstream: {stream_idle_timeout: 2s}\n';

t.test('pings fill a silence after the first byte, and the stream completes', async (t) => {
  const up = await scriptedUpstream(t, SILENT_SCRIPT);
  const gw = await startGateway(t, { yaml: YAML });
  const headers = { 'content-type': 'application/json', 'x-gateway-custom-host': `${up.url}/v1` };
  const body = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });
  const text = await readAll(await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers, body }));
  const first = text.indexOf(' world');
  const between = text.slice(text.indexOf('Hello'), first);
  const pings = between.split(': ping\n\n').length - 1;
  t.ok(pings >= 2, `${pings} pings between the first and second event`);
  t.match(text, /data: \[DONE\]\n\n$/, 'the stream ends normally');
  // Every block is a whole event or a whole ping: none was cut.
  t.same(brokenBlocks(text, /^(: ping|data: .+)$/s), [], 'every block is a whole event or ping');

  // The official SDK reads the same stream (comments are skipped).
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-x', maxRetries: 0, defaultHeaders: { 'x-gateway-custom-host': `${up.url}/v1` } });
  let content = '';
  for await (const c of await client.chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] })) {
    content += c.choices[0]?.delta.content ?? '';
  }
  t.equal(content, 'Hello world');
});

t.test('a ping never splits an event the upstream sent in pieces', async (t) => {
  const whole = chunk('split');
  const up = await scriptedUpstream(t, [
    [0, chunk('a')],
    [0, whole.slice(0, 20)],
    [400, whole.slice(20)],
    [300, 'data: [DONE]\n\n'],
  ]);
  const gw = await startGateway(t, { yaml: YAML });
  const headers = { 'content-type': 'application/json', 'x-gateway-custom-host': `${up.url}/v1` };
  const body = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });
  const text = await readAll(await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers, body }));
  t.ok(text.includes(whole), 'the split event arrives whole');
  const after = text.slice(text.indexOf(whole) + whole.length, text.indexOf('data: [DONE]'));
  t.ok(after.split(': ping\n\n').length - 1 >= 1, 'the silence after it is pinged');
});

t.test('a plugin reading events never sees the pings', async (t) => {
  const up = await scriptedUpstream(t, SILENT_SCRIPT);
  const seen: SseEvent[] = [];
  const reader = definePlugin({ name: 'reader', setup: () => ({ onResponseChunk: (_ctx, event) => void seen.push(event) }) }) as PluginDefinition<never>;
  const gw = await startGateway(t, { yaml: `${YAML}pipeline: [reader]\n`, plugins: { reader } });
  const headers = { 'content-type': 'application/json', 'x-gateway-custom-host': `${up.url}/v1` };
  const body = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });
  const text = await readAll(await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers, body }));
  t.ok(text.split(': ping\n\n').length - 1 >= 2, 'the client got pings');
  t.equal(seen.length, 4, 'the plugin saw the four upstream events');
  t.notOk(seen.some((e) => e.comment !== undefined), 'and no comment among them');
});

t.test('Anthropic ingress and a translated provider are pinged too', async (t) => {
  const up = await scriptedUpstream(t, SILENT_SCRIPT);
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: YAML });

  // Anthropic SDK → /v1/messages → an OpenAI-shaped upstream with a silence.
  const res = await fetch(`${gw.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${up.url}/v1`, 'x-api-key': 'sk-x' },
    body: JSON.stringify({ model: 'm', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const text = await readAll(res);
  t.ok(text.split(': ping\n\n').length - 1 >= 2, 'pings between Anthropic events');
  t.match(text, /event: message_stop\n/, 'the Anthropic stream completes');
  t.same(brokenBlocks(text, /^(: ping|event: \w+\ndata: .+)$/s), [], 'whole events only');
  const anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'sk-x', maxRetries: 0, defaultHeaders: { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${up.url}/v1` } });
  const message = await anthropic.messages.stream({ model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
  t.same(message.content, [{ type: 'text', text: 'Hello world' }], 'the SDK reads it whole');

  // OpenAI SDK → Anthropic provider (translated), whose events come 300 ms apart.
  const client = new OpenAI({
    baseURL: `${gw.url}/v1`,
    apiKey: 'sk-ant',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': `${mock.url}/mock/chunks=2;chunk_delay=300/v1` },
  });
  const raw = await client.chat.completions
    .create({ model: 'claude', stream: true, messages: [{ role: 'user', content: 'slow' }] })
    .asResponse();
  const translated = await readAll(raw);
  t.ok(translated.split(': ping\n\n').length - 1 >= 2, 'pings between translated chunks');
  t.match(translated, /data: \[DONE\]\n\n$/);
});

t.test('an upstream silent past stream_idle_timeout ends the stream with an error event and is closed', async (t) => {
  const yaml = 'server: {host: 127.0.0.1, port: 0, stream_ping_interval: 100}\nupstream: {stream_idle_timeout: 400ms}\n';
  const gw = await startGateway(t, { yaml });

  const up = await scriptedUpstream(t, [[0, chunk('Hello')]], true);
  const started = performance.now();
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-custom-host': `${up.url}/v1` },
    body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const text = await readAll(res);
  const took = performance.now() - started;
  t.ok(took >= 400 && took < 1500, `ended after ${Math.round(took)} ms`);
  t.match(text, /: ping\n\n/, 'pinged while it waited');
  const tail = text.trimEnd().split('\n\n').at(-1)!;
  t.match(tail, /^event: error\ndata: /, 'ends with an error event');
  const error = JSON.parse(tail.split('\n')[1]!.slice(6)) as { error: { code: string; type: string } };
  t.equal(error.error.code, 'upstream_idle_timeout');
  t.notMatch(text, /\[DONE\]/);
  for (let i = 0; i < 50 && !up.state.closed; i++) await new Promise((r) => setTimeout(r, 10));
  t.ok(up.state.closed, 'the upstream call was closed');
  t.ok(
    gw.logs.some((l) => l['msg'] === 'upstream stream idle: closed' && l['code'] === 'upstream_idle_timeout'),
    'the outcome is logged',
  );

  // The OpenAI SDK raises it.
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-x', maxRetries: 0, defaultHeaders: { 'x-gateway-custom-host': `${up.url}/v1` } });
  const err = await (async () => {
    for await (const _ of await client.chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] })) void _;
  })().catch((e: unknown) => e);
  t.type(err, OpenAI.APIError);
  t.match((err as InstanceType<typeof OpenAI.APIError>).error, { code: 'upstream_idle_timeout' });

  // Anthropic's dialect: `event: error` with Anthropic's top-level type.
  const msgs = await readAll(
    await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${up.url}/v1`, 'x-api-key': 'sk-x' },
      body: JSON.stringify({ model: 'm', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    }),
  );
  const last = msgs.trimEnd().split('\n\n').at(-1)!;
  t.match(last, /^event: error\ndata: /);
  t.match(JSON.parse(last.split('\n')[1]!.slice(6)), { type: 'error', error: { code: 'upstream_idle_timeout' } });
  const anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'sk-x', maxRetries: 0, defaultHeaders: { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${up.url}/v1` } });
  const aerr = await anthropic.messages.stream({ model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }).finalMessage().catch((e: unknown) => e);
  t.type(aerr, Anthropic.APIError, 'the Anthropic SDK raises it');
});

t.test('a busy stream is not cut by the idle timeout', async (t) => {
  const yaml = 'server: {host: 127.0.0.1, port: 0, stream_ping_interval: 0}\nupstream: {stream_idle_timeout: 300ms}\n';
  const gw = await startGateway(t, { yaml });
  const script: Array<[number, string]> = [];
  for (let i = 0; i < 8; i++) script.push([150, chunk(String(i))]);
  script.push([0, 'data: [DONE]\n\n']);
  const up = await scriptedUpstream(t, script);
  const text = await readAll(
    await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-custom-host': `${up.url}/v1` },
      body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    }),
  );
  t.match(text, /data: \[DONE\]\n\n$/, '1.2 s of events 150 ms apart outlive a 300 ms idle timeout');
  t.notMatch(text, /: ping/, 'no pings when they are off');
});
