/**
 * Usage metering: every answer's usage is known to plugins, streams included, and the client sees
 * exactly what it asked for. A streamed call and a plain call of the same answer meter the same.
 */
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { definePlugin, type PluginDefinition } from '../core/plugin.js';
import type { Usage } from '../core/usage/types.js';
import { startGateway, startMock, direct, sdk } from './helpers/gateway.js';

function meterPlugin(seen: Array<Usage | undefined>): PluginDefinition<never> {
  return definePlugin({
    name: 'meter-probe',
    setup: () => ({
      meterUsage: true,
      onResponseEnd: (ctx) => void seen.push(ctx.usage),
    }),
  }) as PluginDefinition<never>;
}

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
}

t.test('usage metering', async (t) => {
  const mock = await startMock(t);
  const seen: Array<Usage | undefined> = [];
  const gw = await startGateway(t, { yaml: 'pipeline: [meter-probe]\n', plugins: { 'meter-probe': meterPlugin(seen) } });
  const client = sdk(gw, mock);
  const messages = [{ role: 'user' as const, content: 'meter this answer please' }];

  await client.chat.completions.create({ model: 'gpt-4o-mini', messages });
  await waitFor(() => seen.length === 1);
  const plain = seen[0]!;
  t.match(plain, { source: 'upstream' });
  t.ok(plain.total_tokens > 0);

  t.test('a stream the client asked no usage for: metered, and the client sees none', async (t) => {
    seen.length = 0;
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...direct(mock), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages }),
    });
    const text = await res.text();
    t.notMatch(text, /"usage"/, 'no usage chunk and no usage fields reach the client');
    t.match(text, /data: \[DONE\]\n\n$/);
    const sent = JSON.parse(mock.requests.at(-1)!.body.toString()) as { stream_options?: { include_usage?: boolean } };
    t.equal(sent.stream_options?.include_usage, true, 'the upstream was asked for usage');
    await waitFor(() => seen.length === 1);
    t.same(seen[0], plain, 'stream usage equals plain usage');
  });

  t.test("the usage request is spliced into the client's bytes: the rest reaches the upstream as written", async (t) => {
    seen.length = 0;
    // Key order, spacing and escapes a re-serialisation would change.
    const raw = '{ "stream" : true,\n  "messages": [{"content": "caf\\u00e9 \u00e9t\u00e9", "role": "user"}],\n  "model": "gpt-4o-mini" }\n';
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...direct(mock), 'content-type': 'application/json' }, body: raw });
    t.notMatch(await res.text(), /"usage"/);
    t.equal(mock.requests.at(-1)!.body.toString(), raw.trimEnd().slice(0, -1) + ',"stream_options":{"include_usage":true}}');
    await waitFor(() => seen.length === 1);
    t.ok(seen[0]!.total_tokens > 0, 'metered');
  });

  t.test('a stream with stream_options of its own gets include_usage added to them', async (t) => {
    seen.length = 0;
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...direct(mock), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, stream_options: { include_obfuscation: false }, messages }),
    });
    t.notMatch(await res.text(), /"usage"/);
    t.same((JSON.parse(mock.requests.at(-1)!.body.toString()) as Record<string, unknown>).stream_options, { include_obfuscation: false, include_usage: true });
    await waitFor(() => seen.length === 1);
    t.ok(seen[0]!.total_tokens > 0, 'metered');
  });

  t.test('a stream that asked for usage keeps its usage chunk', async (t) => {
    seen.length = 0;
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } });
    let usage: unknown;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    t.ok(usage, 'the client got its usage chunk');
    await waitFor(() => seen.length === 1);
    t.same(seen[0], plain);
  });

  t.test('completions and responses streams meter the same as plain calls', async (t) => {
    seen.length = 0;
    await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'count me' });
    const s = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'count me', stream: true });
    for await (const _ of s) void _;
    await client.responses.create({ model: 'gpt-4o-mini', input: 'count me too' });
    const r = await client.responses.create({ model: 'gpt-4o-mini', input: 'count me too', stream: true });
    for await (const _ of r) void _;
    await waitFor(() => seen.length === 4);
    t.same(seen[1], seen[0], 'completions');
    t.same(seen[3], seen[2], 'responses');
    t.ok(seen[2]!.total_tokens > 0);
  });

  t.test('an upstream that reports no usage is estimated', async (t) => {
    seen.length = 0;
    const bare = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'four words of answer' }, finish_reason: 'stop' }] }));
    });
    await new Promise<void>((r) => bare.listen(0, '127.0.0.1', r));
    t.teardown(() => new Promise<void>((r) => bare.close(() => r())));
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-custom-host': `http://127.0.0.1:${(bare.address() as AddressInfo).port}/v1` },
      body: JSON.stringify({ model: 'gpt-4o', messages }),
    });
    await res.body.text();
    await waitFor(() => seen.length === 1);
    t.match(seen[0], { source: 'estimated' });
    t.ok(seen[0]!.prompt_tokens > 0 && seen[0]!.completion_tokens > 0);
  });
});

t.test('without a metering plugin, nothing is injected: the original bytes go upstream', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t);
  const raw = '{"model":"m","stream":true,"messages":[{"role":"user","content":"as is"}]}';
  const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...direct(mock), 'content-type': 'application/json' }, body: raw });
  await res.text();
  t.equal(mock.requests.at(-1)!.body.toString(), raw);
});

t.test('per-request metering: only the requests a plugin marks with ctx.meterUsage are metered', async (t) => {
  // A plugin that counts only some requests (a token limit, a budget that applies) asks per
  // request; the others are neither parsed for usage nor asked for a usage chunk.
  const seen: Array<Usage | undefined> = [];
  const probe = definePlugin({
    name: 'meter-some',
    setup: () => ({
      onRequestBody: (ctx) => {
        if (ctx.headers['x-meter'] === 'yes') ctx.meterUsage = true;
      },
      onResponseEnd: (ctx) => void seen.push(ctx.usage),
    }),
  }) as PluginDefinition<never>;
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: 'pipeline: [meter-some]\n', plugins: { 'meter-some': probe } });
  const messages = [{ role: 'user', content: 'meter me only when asked' }];
  const call = async (meter: boolean, stream: boolean): Promise<string> => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...direct(mock), 'content-type': 'application/json', ...(meter ? { 'x-meter': 'yes' } : {}) },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages, stream }),
    });
    return res.text();
  };
  const sentUsageRequest = (): boolean | undefined => (JSON.parse(mock.requests.at(-1)!.body.toString()) as { stream_options?: { include_usage?: boolean } }).stream_options?.include_usage;

  await call(false, false);
  await waitFor(() => seen.length === 1);
  t.equal(seen[0], undefined, 'an unmarked answer is not metered');
  await call(true, false);
  await waitFor(() => seen.length === 2);
  t.match(seen[1], { source: 'upstream' }, 'a marked answer is metered');
  t.ok(seen[1]!.total_tokens > 0);

  const plainStream = await call(false, true);
  t.equal(sentUsageRequest(), undefined, 'an unmarked stream goes upstream as sent: no usage chunk asked for');
  await waitFor(() => seen.length === 3);
  t.equal(seen[2], undefined, 'and is not metered');
  t.match(plainStream, /data: \[DONE\]\n\n$/);
  const markedStream = await call(true, true);
  t.equal(sentUsageRequest(), true, 'a marked stream asks the upstream for its usage');
  t.notMatch(markedStream, /"usage"/, 'which the client, who did not ask for it, does not see');
  await waitFor(() => seen.length === 4);
  t.same(seen[3], seen[1], 'a marked stream meters the same as the plain call');
});
