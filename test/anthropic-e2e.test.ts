/**
 * Anthropic through the gateway: an OpenAI SDK client talks to an Anthropic-speaking upstream
 * (the mock's Messages API), plain and streamed, with tools, usage and errors.
 */
import t from 'tap';
import OpenAI from 'openai';
import { startGateway, startMock, usageProbe } from './helpers/gateway.js';

t.test('Anthropic dialect end to end', async (t) => {
  const mock = await startMock(t);
  const { probe, usages } = usageProbe();
  const gw = await startGateway(t, { yaml: 'pipeline: [probe]\n', plugins: { probe } });
  const client = (headers: Record<string, string> = {}) =>
    new OpenAI({
      baseURL: `${gw.url}/v1`,
      apiKey: 'sk-ant-test',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': `${mock.url}/v1`, ...headers },
    });
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hello Claude' },
  ];

  const plain = await client().chat.completions.create({ model: 'claude-sonnet-4', messages });
  t.equal(plain.object, 'chat.completion');
  t.equal(plain.choices[0]?.message.content, 'Mock reply to: Hello Claude');
  t.equal(plain.choices[0]?.finish_reason, 'stop');
  const sent = mock.requests.at(-1)!;
  t.equal(sent.path, '/v1/messages');
  t.equal(sent.headers['x-api-key'], 'sk-ant-test', 'the key travels as x-api-key');
  t.ok(sent.headers['anthropic-version']);
  const body = JSON.parse(sent.body.toString()) as { system: unknown; max_tokens: number; messages: unknown[] };
  t.ok(body.system, 'the system message became `system`');
  t.equal(body.max_tokens, 4096, 'max_tokens defaulted');

  const stream = await client().chat.completions.create({ model: 'claude-sonnet-4', messages, stream: true, stream_options: { include_usage: true } });
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

  const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } } }];
  const call = await client({ 'x-mock-tool-call': '1' }).chat.completions.create({ model: 'claude-sonnet-4', messages, tools });
  t.equal(call.choices[0]?.finish_reason, 'tool_calls');
  const toolCall = call.choices[0]?.message.tool_calls?.[0] as OpenAI.ChatCompletionMessageFunctionToolCall | undefined;
  t.equal(toolCall?.function.name, 'get_weather');
  t.type(JSON.parse(toolCall!.function.arguments), 'object');

  const err = await client({ 'x-mock-status': '529' }).chat.completions.create({ model: 'claude-sonnet-4', messages }).catch((e: unknown) => e);
  t.type(err, OpenAI.APIError);
  t.equal((err as InstanceType<typeof OpenAI.APIError>).status, 529, 'the provider status is kept');
  t.match((err as InstanceType<typeof OpenAI.APIError>).error, { type: 'overloaded_error' });
});

t.test('after pings, a translated upstream error becomes an error event in OpenAI shape', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: 'server: {host: 127.0.0.1, port: 0, stream_ping_interval: 100}\n' });
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer sk-ant-test',
      'x-gateway-provider': 'anthropic',
      'x-gateway-custom-host': `${mock.url}/mock/delay=400;status=529/v1`,
    },
    body: JSON.stringify({ model: 'claude-sonnet-4', stream: true, messages: [{ role: 'user', content: 'late' }] }),
  });
  t.equal(res.status, 200, 'the pings sent the head');
  const text = await res.text();
  t.match(text, /^: ping\n\n/);
  const data = /event: error\ndata: (.*)\n\n$/.exec(text)?.[1];
  t.ok(data, 'it ends with an error event');
  t.match(JSON.parse(data!), { error: { type: 'overloaded_error', message: 'Overloaded' } }, 'Anthropic\'s error, translated, not raw bytes');
});
