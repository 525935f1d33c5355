/**
 * Gemini through the gateway: an OpenAI SDK client talks to a Gemini-speaking upstream (the
 * mock's `generateContent` routes), plain and streamed, with tools, usage, errors, and the key
 * kept out of the URL.
 */
import t from 'tap';
import OpenAI from 'openai';
import { definePlugin, type PluginDefinition } from '../core/plugin.js';
import type { Usage } from '../core/usage/types.js';
import { startGateway, startMock } from './helpers/gateway.js';

t.test('Gemini dialect end to end', async (t) => {
  const mock = await startMock(t);
  const usages: Array<Usage | undefined> = [];
  // The metering probe also makes the gateway parse SSE: without a meter or chunk hook, a translated
  // stream is currently forwarded untranslated (core/upstream/attempt.ts #prepareBody).
  const probe = definePlugin({ name: 'probe', setup: () => ({ meterUsage: true, onResponseEnd: (ctx) => void usages.push(ctx.usage) }) }) as PluginDefinition<never>;
  const gw = await startGateway(t, { yaml: 'pipeline: [probe]\n', plugins: { probe } });
  const client = (headers: Record<string, string> = {}) =>
    new OpenAI({
      baseURL: `${gw.url}/v1`,
      apiKey: 'AIza-test',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-provider': 'google', 'x-gateway-custom-host': `${mock.url}/v1beta`, ...headers },
    });
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hello Gemini' },
  ];

  const plain = await client().chat.completions.create({ model: 'gemini-2.5-flash', messages });
  t.equal(plain.object, 'chat.completion');
  t.equal(plain.choices[0]?.message.content, 'Mock reply to: Hello Gemini');
  t.equal(plain.choices[0]?.finish_reason, 'stop');
  const sent = mock.requests.at(-1)!;
  t.equal(sent.path, '/v1beta/models/gemini-2.5-flash:generateContent');
  t.notMatch(sent.path, /key=/, 'no key in the URL');
  t.equal(sent.headers['x-goog-api-key'], 'AIza-test', 'the key travels as x-goog-api-key');
  t.notOk(sent.headers.authorization, 'and not as a bearer token');
  const body = JSON.parse(sent.body.toString()) as { systemInstruction: unknown };
  t.same(body.systemInstruction, { parts: [{ text: 'Be brief.' }] });

  const stream = await client().chat.completions.create({ model: 'gemini-2.5-flash', messages, stream: true, stream_options: { include_usage: true } });
  let text = '';
  let streamUsage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    if (chunk.usage) streamUsage = chunk.usage;
  }
  t.equal(text, plain.choices[0]?.message.content, 'the streamed text equals the plain one');
  t.same(streamUsage, plain.usage, 'stream usage equals plain usage');
  await new Promise((r) => setTimeout(r, 20));
  t.same(usages[1], usages[0], 'and the gateway metered both the same');
  const streamed = mock.requests.at(-1)!;
  t.equal(streamed.path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
  t.notMatch(streamed.path, /key=/);

  const tools: OpenAI.ChatCompletionTool[] = [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } } },
  ];
  const call = await client({ 'x-mock-tool-call': '1' }).chat.completions.create({ model: 'gemini-2.5-flash', messages, tools });
  t.equal(call.choices[0]?.finish_reason, 'tool_calls');
  const toolCall = call.choices[0]?.message.tool_calls?.[0] as OpenAI.ChatCompletionMessageFunctionToolCall | undefined;
  t.equal(toolCall?.function.name, 'get_weather');
  t.same(JSON.parse(toolCall!.function.arguments), { location: 'Paris' });

  const err = await client({ 'x-mock-status': '429' }).chat.completions.create({ model: 'gemini-2.5-flash', messages }).catch((e: unknown) => e);
  t.type(err, OpenAI.APIError);
  t.equal((err as InstanceType<typeof OpenAI.APIError>).status, 429, 'the provider status is kept');
  t.match((err as InstanceType<typeof OpenAI.APIError>).error, { type: 'RESOURCE_EXHAUSTED', code: 'RESOURCE_EXHAUSTED' });
});
