/**
 * The Anthropic-style ingress: the official Anthropic SDK talks to the gateway's `/v1/messages`.
 * With an Anthropic target the call goes through unchanged; with an OpenAI-compatible target (or
 * Gemini, translated twice) it is answered in Anthropic's shapes, plain and streamed, with tools,
 * usage, errors and `count_tokens`.
 */
import t from 'tap';
import Anthropic from '@anthropic-ai/sdk';
import { startGateway, startMock, usageProbe } from './helpers/gateway.js';


const tools: Anthropic.Tool[] = [
  { name: 'get_weather', description: 'Weather by city', input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } },
];

async function collect(stream: AsyncIterable<Anthropic.RawMessageStreamEvent>): Promise<Anthropic.RawMessageStreamEvent[]> {
  const events: Anthropic.RawMessageStreamEvent[] = [];
  for await (const ev of stream) events.push(ev);
  return events;
}

t.test('an Anthropic target gets the call unchanged', async (t) => {
  const mock = await startMock(t);
  const { probe, usages } = usageProbe();
  const gw = await startGateway(t, { yaml: 'pipeline: [probe]\n', plugins: { probe } });
  const client = new Anthropic({
    baseURL: gw.url,
    apiKey: 'sk-ant-test',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': `${mock.url}/v1`, 'x-mock-cache-read': '3' },
  });
  const params = { model: 'claude-sonnet-4', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user' as const, content: 'Hello Claude' }] };

  const plain = await client.messages.create(params);
  t.equal(plain.type, 'message');
  t.same(plain.content, [{ type: 'text', text: 'Mock reply to: Hello Claude' }]);
  const sent = mock.requests.at(-1)!;
  t.equal(sent.path, '/v1/messages', 'the same path');
  t.same(JSON.parse(sent.body.toString()), params, 'the same body');
  t.equal(sent.headers['x-api-key'], 'sk-ant-test', 'the key the SDK sent as x-api-key is the provider key');

  const events = await collect(await client.messages.create({ ...params, stream: true }));
  t.same(
    [...new Set(events.map((e) => e.type))],
    ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'],
    'Anthropic events pass through',
  );
  await new Promise((r) => setTimeout(r, 20));
  t.equal(usages.length, 2);
  t.same(usages[1], usages[0], 'a native stream is metered like the plain call');
  t.equal(usages[0]?.source, 'upstream');
  t.equal(usages[0]?.cached_tokens, 3, 'cache reads are read from Anthropic usage');
  t.equal(usages[0]?.prompt_tokens, plain.usage.input_tokens + 3, 'and counted into the prompt');

  const counted = await client.messages.countTokens({ model: 'claude-sonnet-4', messages: params.messages });
  t.equal(mock.requests.at(-1)!.path, '/v1/messages/count_tokens', 'count_tokens goes to Anthropic');
  t.type(counted.input_tokens, 'number');
});

t.test('an OpenAI-compatible target answers in Anthropic shapes', async (t) => {
  const mock = await startMock(t);
  const { probe, usages } = usageProbe();
  const gw = await startGateway(t, { yaml: 'pipeline: [probe]\n', plugins: { probe } });
  const client = (headers: Record<string, string> = {}) =>
    new Anthropic({
      baseURL: gw.url,
      apiKey: 'sk-openai-test',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${mock.url}/v1`, ...headers },
    });
  const params = { model: 'gpt-4o-mini', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user' as const, content: 'Hello GPT' }] };

  const plain = await client().messages.create(params);
  t.equal(plain.type, 'message');
  t.equal(plain.role, 'assistant');
  t.same(plain.content, [{ type: 'text', text: 'Mock reply to: Hello GPT' }]);
  t.equal(plain.stop_reason, 'end_turn');
  t.ok(plain.usage.input_tokens > 0 && plain.usage.output_tokens > 0);
  const sent = mock.requests.at(-1)!;
  t.equal(sent.path, '/v1/chat/completions', 'sent as a chat completion');
  t.equal(sent.headers.authorization, 'Bearer sk-openai-test', 'with the key as a bearer token');
  t.match(JSON.parse(sent.body.toString()), { model: 'gpt-4o-mini', max_tokens: 100, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello GPT' }] });

  const stream = client().messages.stream(params);
  const final = await stream.finalMessage();
  t.same(final.content, plain.content, 'the streamed message equals the plain one');
  t.equal(final.stop_reason, 'end_turn');
  t.equal(final.usage.output_tokens, plain.usage.output_tokens, 'stream usage equals plain usage');
  t.equal(final.usage.input_tokens, plain.usage.input_tokens);
  await new Promise((r) => setTimeout(r, 20));
  t.same(usages[1], usages[0], 'and the gateway metered both the same');
  t.equal(usages[0]?.source, 'upstream');

  const call = await client({ 'x-mock-tool-call': '1' }).messages.create({ ...params, tools });
  t.equal(call.stop_reason, 'tool_use');
  const use = call.content.find((b) => b.type === 'tool_use');
  t.equal(use?.name, 'get_weather');
  t.type(use?.input, 'object');
  t.match(JSON.parse(mock.requests.at(-1)!.body.toString()), { tools: [{ type: 'function', function: { name: 'get_weather' } }] });

  const streamedCall = await client({ 'x-mock-tool-call': '1' }).messages.stream({ ...params, tools }).finalMessage();
  t.same(streamedCall.content.find((b) => b.type === 'tool_use')?.input, use?.input, 'streamed tool arguments assemble to the same input');

  // The tool result goes back as a `tool` message.
  await client().messages.create({
    ...params,
    tools,
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny' }] },
    ],
  });
  t.match(JSON.parse(mock.requests.at(-1)!.body.toString()).messages, [
    { role: 'system' },
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', tool_calls: [{ id: 'toolu_1', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }] },
    { role: 'tool', tool_call_id: 'toolu_1', content: 'Sunny' },
  ]);

  const err = await client({ 'x-mock-status': '429' }).messages.create(params).catch((e: unknown) => e);
  t.type(err, Anthropic.RateLimitError, 'the SDK sees its own error class');
  t.equal((err as InstanceType<typeof Anthropic.APIError>).status, 429, 'the provider status is kept');
  t.match((err as InstanceType<typeof Anthropic.APIError>).error, { type: 'error', error: { type: 'rate_limit_error' } });

  const counted = await client().messages.countTokens({ model: 'gpt-4o-mini', messages: params.messages, system: 'Be brief.' });
  t.ok(counted.input_tokens > 0, 'count_tokens is answered by the gateway');
  t.not(mock.requests.at(-1)!.path, '/v1/messages/count_tokens');

  const beta = await fetch(`${gw.url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${mock.url}/v1`, 'x-api-key': 'sk-openai-test' },
    body: JSON.stringify(params),
  });
  t.equal(beta.status, 200);
  t.equal(mock.requests.at(-1)!.path, '/v1/chat/completions', "the Anthropic SDK's ?beta=true stays with the Anthropic call");

  const invalid = await fetch(`${gw.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-provider': 'openai', authorization: 'Bearer k' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(invalid.status, 400);
  t.match(
    await invalid.json(),
    { type: 'error', error: { type: 'invalid_request_error', code: 'missing_required_parameter', param: 'max_tokens' } },
    'Anthropic requires max_tokens, and so does the gateway, in a shape both dialects read',
  );
});

t.test('a Gemini target: Anthropic in, Gemini out, translated both ways', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t);
  const client = new Anthropic({
    baseURL: gw.url,
    apiKey: 'AIza-test',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-provider': 'google', 'x-gateway-custom-host': `${mock.url}/v1beta` },
  });
  const params = { model: 'gemini-2.5-flash', max_tokens: 100, messages: [{ role: 'user' as const, content: 'Hello Gemini' }] };
  const plain = await client.messages.create(params);
  t.same(plain.content, [{ type: 'text', text: 'Mock reply to: Hello Gemini' }]);
  t.equal(mock.requests.at(-1)!.path, '/v1beta/models/gemini-2.5-flash:generateContent');
  const streamed = await client.messages.stream(params).finalMessage();
  t.same(streamed.content, plain.content);
  t.same(streamed.usage.output_tokens, plain.usage.output_tokens);
});
