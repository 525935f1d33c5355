/**
 * Gemini through the gateway: an OpenAI SDK client talks to a Gemini-speaking upstream (the
 * mock's `generateContent` routes), plain and streamed, with tools, usage, errors, and the key
 * kept out of the URL.
 */
import t from 'tap';
import OpenAI from 'openai';
import { startGateway, startMock, usageProbe } from './helpers/gateway.js';

t.test('Gemini dialect end to end', async (t) => {
  const mock = await startMock(t);
  const { probe, usages } = usageProbe();
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

t.test('Gemini embeddings through batchEmbedContents', async (t) => {
  const mock = await startMock(t);
  const { probe, usages } = usageProbe();
  const gw = await startGateway(t, { yaml: 'pipeline: [probe]\n', plugins: { probe } });
  const client = new OpenAI({
    baseURL: `${gw.url}/v1`,
    apiKey: 'AIza-test',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-provider': 'google', 'x-gateway-custom-host': `${mock.url}/v1beta` },
  });

  const res = await client.embeddings.create({ model: 'text-embedding-004', input: ['first text', 'second text'], dimensions: 16 });
  t.equal(res.object, 'list');
  t.equal(res.data.length, 2, 'one vector per input, in order');
  t.same(res.data.map((d) => d.index), [0, 1]);
  t.equal(res.data[0]!.embedding.length, 16, 'dimensions → outputDimensionality');
  t.notSame(res.data[0]!.embedding, res.data[1]!.embedding, 'different texts, different vectors');
  const sent = mock.requests.at(-1)!;
  t.equal(sent.path, '/v1beta/models/text-embedding-004:batchEmbedContents');
  t.same(JSON.parse(sent.body.toString()), {
    requests: [
      { model: 'models/text-embedding-004', content: { parts: [{ text: 'first text' }] }, outputDimensionality: 16 },
      { model: 'models/text-embedding-004', content: { parts: [{ text: 'second text' }] }, outputDimensionality: 16 },
    ],
  });
  await new Promise((r) => setTimeout(r, 20));
  t.equal(usages[0]?.source, 'estimated', 'Gemini reports no tokens: the gateway counts them');
  t.ok((usages[0]?.prompt_tokens ?? 0) > 0);

  // The SDK asks for base64 by default when encoding_format is absent; the floats survive the trip.
  const b64 = await client.embeddings.create({ model: 'text-embedding-004', input: 'first text', dimensions: 16, encoding_format: 'base64' });
  t.equal(typeof b64.data[0]!.embedding, 'string');
  const bytes = Buffer.from(b64.data[0]!.embedding as unknown as string, 'base64');
  const floats = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
  t.same(floats.map((v) => v.toFixed(5)), res.data[0]!.embedding.map((v) => Math.fround(v).toFixed(5)), 'base64 carries the same float32 values');

  const tokens = await fetch(`${gw.url}/v1/embeddings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer AIza-test', 'x-gateway-provider': 'google', 'x-gateway-custom-host': `${mock.url}/v1beta` },
    body: JSON.stringify({ model: 'text-embedding-004', input: [1, 2, 3] }),
  });
  t.equal(tokens.status, 400);
  t.match(await tokens.json(), { error: { code: 'unsupported_parameter', param: 'input' } }, 'token ids cannot be embedded by Gemini');

  const legacy = await fetch(`${gw.url}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer AIza-test', 'x-gateway-provider': 'google', 'x-gateway-custom-host': `${mock.url}/v1beta` },
    body: JSON.stringify({ model: 'gemini-2.5-flash', prompt: 'hi' }),
  });
  t.equal(legacy.status, 400);
  t.match(await legacy.json(), { error: { code: 'unsupported_route' } }, 'a route Gemini lacks gets a clear code');
});
