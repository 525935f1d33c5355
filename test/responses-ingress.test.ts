/**
 * The Responses API on every provider: the official OpenAI SDK calls `/v1/responses` through a
 * real gateway, and Anthropic, Gemini, Bedrock and an OpenAI-compatible preset (groq) answer
 * through the mock, translated to chat completions and back (core/ingress/responses). Plain and
 * streamed answers, function calls and their outputs, usage, errors, the 4xx for what cannot be
 * expressed, and OpenAI targets keeping the route native.
 */
import t from 'tap';
import OpenAI from 'openai';
import { MOCK_AWS_ACCESS_KEY_ID, MOCK_AWS_SECRET_ACCESS_KEY } from '../bench/mock/sigv4.js';
import { startGateway, startMock, usageProbe, type MockUpstream } from './helpers/gateway.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type ApiError = { error: unknown; message: string };

interface Provider {
  name: string;
  model: string;
  headers(mock: MockUpstream): Record<string, string>;
  /** The upstream path a plain call goes to. */
  path: RegExp;
  /** The tool result as the provider received it, from its request body. */
  toolResult(body: Json): unknown;
}

const PROVIDERS: Provider[] = [
  {
    name: 'anthropic',
    model: 'claude-sonnet-4',
    headers: (mock) => ({ 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': `${mock.url}/v1` }),
    path: /^\/v1\/messages$/,
    toolResult: (body) => body.messages.at(-1).content.find((b: Json) => b.type === 'tool_result'),
  },
  {
    name: 'google',
    model: 'gemini-2.5-flash',
    headers: (mock) => ({ 'x-gateway-provider': 'google', 'x-gateway-custom-host': `${mock.url}/v1beta` }),
    path: /^\/v1beta\/models\/gemini-2\.5-flash:generateContent$/,
    toolResult: (body) => body.contents.at(-1).parts.find((p: Json) => p.functionResponse !== undefined),
  },
  {
    name: 'bedrock',
    model: 'anthropic.claude-3-5-sonnet-20240620-v1:0',
    headers: (mock) => ({
      'x-gateway-provider': 'bedrock',
      'x-gateway-custom-host': mock.url,
      'x-gateway-aws-region': 'us-west-2',
      'x-gateway-aws-access-key-id': MOCK_AWS_ACCESS_KEY_ID,
      'x-gateway-aws-secret-access-key': MOCK_AWS_SECRET_ACCESS_KEY,
    }),
    path: /^\/model\/.*\/converse$/,
    toolResult: (body) => body.messages.at(-1).content.find((b: Json) => b.toolResult !== undefined),
  },
  {
    name: 'groq (OpenAI-compatible preset)',
    model: 'llama-3.3-70b',
    headers: (mock) => ({ 'x-gateway-provider': 'groq', 'x-gateway-custom-host': `${mock.url}/v1` }),
    path: /^\/v1\/chat\/completions$/,
    toolResult: (body) => body.messages.find((m: Json) => m.role === 'tool'),
  },
];

const tools: OpenAI.Responses.FunctionTool[] = [
  { type: 'function', name: 'get_weather', description: 'Weather by city', strict: false, parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } },
];

/** The event types in order, with consecutive repeats (deltas) folded into one. */
function shape(events: OpenAI.Responses.ResponseStreamEvent[]): string[] {
  const out: string[] = [];
  for (const e of events) if (out.at(-1) !== e.type) out.push(e.type);
  return out;
}

for (const provider of PROVIDERS) {
  t.test(`${provider.name}: Responses through a translating target`, async (t) => {
    const mock = await startMock(t);
    const { probe, usages } = usageProbe();
    const gw = await startGateway(t, { yaml: 'pipeline: [probe]\n', plugins: { probe } });
    const client = (headers: Record<string, string> = {}) =>
      new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-provider-key', maxRetries: 0, timeout: 10_000, defaultHeaders: { ...provider.headers(mock), ...headers } });

    const plain = await client().responses.create({ model: provider.model, instructions: 'Be brief.', input: 'Hello there', max_output_tokens: 200, metadata: { run: 'r1' } });
    t.match(plain.id, /^resp_[0-9a-f]{48}$/, 'a Responses id');
    t.equal(plain.object, 'response');
    t.equal(plain.status, 'completed');
    t.equal(plain.output_text, 'Mock reply to: Hello there', 'the SDK reads the text');
    t.equal(plain.output.length, 1);
    t.match(plain.output[0], { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Mock reply to: Hello there', annotations: [] }] });
    t.match(plain.output[0]!.id, /^msg_/);
    t.equal(plain.instructions, 'Be brief.', 'settings are echoed');
    t.equal(plain.max_output_tokens, 200);
    t.same(plain.metadata, { run: 'r1' });
    t.ok(plain.usage!.input_tokens > 0 && plain.usage!.output_tokens > 0, 'usage is reported');
    t.equal(plain.usage!.total_tokens, plain.usage!.input_tokens + plain.usage!.output_tokens);
    const sent = mock.requests.at(-1)!;
    t.match(sent.path, provider.path, 'the provider got its own dialect');
    t.notOk(JSON.stringify(JSON.parse(sent.body.toString())).includes('"instructions"'), 'no Responses field leaks upstream');

    const stream = client().responses.stream({ model: provider.model, instructions: 'Be brief.', input: 'Hello there', max_output_tokens: 200 });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of stream) events.push(e);
    const final = await stream.finalResponse();
    t.same(shape(events), [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ], 'events in the order the SDK expects');
    t.same(events.map((e) => e.sequence_number), events.map((_, i) => i), 'sequence numbers count up from 0');
    t.equal(final.output_text, plain.output_text, 'the streamed text equals the plain one');
    t.same(final.usage, plain.usage, 'stream usage equals plain usage');
    const created = events[0] as OpenAI.Responses.ResponseCreatedEvent;
    t.equal(created.response.id, final.id, 'one id from created to completed');
    t.equal(created.response.status, 'in_progress');
    await new Promise((r) => setTimeout(r, 20));
    t.equal(usages.length, 2);
    t.equal(usages[0]?.source, 'upstream', 'the meter read the translated usage');
    t.equal(usages[0]?.prompt_tokens, plain.usage!.input_tokens);
    t.same(usages[1], usages[0], 'and metered the stream the same');

    // A function call, then its output sent back.
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const call = await client({ 'x-mock-tool-call': '1' }).responses.create({ model: provider.model, input, tools });
    const fc = call.output.find((o) => o.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall | undefined;
    t.ok(fc, 'a function_call item');
    t.equal(fc?.name, 'get_weather');
    t.match(fc?.id, /^fc_/);
    t.ok(fc?.call_id && fc.call_id.length > 0, 'with a call_id');
    t.type(JSON.parse(fc!.arguments).location, 'string', 'arguments are JSON text');
    const upstreamTools = JSON.stringify(JSON.parse(mock.requests.at(-1)!.body.toString()));
    t.match(upstreamTools, /get_weather/, 'the tool reached the provider');

    const answered = await client().responses.create({
      model: provider.model,
      tools,
      input: [...input, ...call.output.map((o) => o as OpenAI.Responses.ResponseInputItem), { type: 'function_call_output', call_id: fc!.call_id, output: '{"sky":"sunny"}' }],
    });
    t.equal(answered.status, 'completed');
    t.match(answered.output_text, /^Mock reply to: /, 'a text answer after the tool output');
    const result = provider.toolResult(JSON.parse(mock.requests.at(-1)!.body.toString()) as Json);
    t.ok(result, 'the function output reached the provider as its tool result');
    t.match(JSON.stringify(result), /sunny/);

    const toolStream = client({ 'x-mock-tool-call': '1' }).responses.stream({ model: provider.model, input, tools });
    const toolEvents: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of toolStream) toolEvents.push(e);
    const toolFinal = await toolStream.finalResponse();
    const types = shape(toolEvents);
    t.ok(types.includes('response.function_call_arguments.delta') && types.includes('response.function_call_arguments.done'), 'argument deltas are streamed');
    t.equal(types.at(-1), 'response.completed');
    const streamedCall = toolFinal.output.find((o) => o.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    t.equal(streamedCall.name, 'get_weather');
    t.same(JSON.parse(streamedCall.arguments), JSON.parse(fc!.arguments), 'the streamed arguments equal the plain ones');

    // Upstream errors keep their status, in OpenAI's error shape.
    const failed = await client({ 'x-mock-status': '429' }).responses.create({ model: provider.model, input: 'Hello' }).catch((e: unknown) => e);
    t.ok(failed instanceof OpenAI.RateLimitError, 'a 429 reads as the SDK\'s RateLimitError');
    t.type((failed as ApiError).message, 'string');
  });
}

t.test('mid-stream failures and cut streams, as the SDK reads them', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: 'pipeline: []\n' });
  const client = (headers: Record<string, string> = {}) =>
    new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk', maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': `${mock.url}/v1`, ...headers } });

  const stream = client({ 'x-mock-error-event': '1' }).responses.stream({ model: 'claude-sonnet-4', input: 'Hello' });
  const seen: string[] = [];
  const error = await (async () => {
    for await (const e of stream) seen.push(e.type);
  })().catch((e: unknown) => e);
  t.ok(error instanceof OpenAI.APIError, `the SDK throws an APIError (${String(error)})`);
  t.notOk(seen.includes('response.completed'), 'and never saw a completed response');
  t.ok(seen.includes('response.created'), 'after the events that came before it');

  // The socket dies after two events: the stream ends visibly, never as a completed response.
  const reset = client({ 'x-mock-reset': 'mid_stream' }).responses.stream({ model: 'claude-sonnet-4', input: 'Hello' });
  const cutSeen: string[] = [];
  const cutError = await (async () => {
    for await (const e of reset) cutSeen.push(e.type);
  })().catch((e: unknown) => e);
  t.ok(cutError instanceof Error, `a cut stream is an error to the SDK (${String(cutError)})`);
  t.notOk(cutSeen.includes('response.completed'), 'not a completed response');
});

t.test('what a chat completion cannot express is a 400 naming it', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: 'pipeline: []\n' });
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk', maxRetries: 0, defaultHeaders: { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': `${mock.url}/v1` } });
  const before = mock.requests.length;
  const cases: Array<[string, Json, string]> = [
    ['a built-in tool', { tools: [{ type: 'web_search' }] }, 'tools[0].type'],
    ['truncation auto', { truncation: 'auto' }, 'truncation'],
    ['include', { include: ['message.output_text.logprobs'] }, 'include'],
    ['a file input', { input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-1' }] }] }, 'input[0].content[0].type'],
    ['reasoning summaries', { reasoning: { effort: 'low', summary: 'auto' } }, 'reasoning.summary'],
    ['background', { background: true }, 'background'],
  ];
  for (const [name, extra, param] of cases) {
    const err = await client.responses.create({ model: 'claude-sonnet-4', input: 'Hi', ...extra } as OpenAI.Responses.ResponseCreateParamsNonStreaming).catch((e: unknown) => e);
    t.ok(err instanceof OpenAI.BadRequestError, `${name}: 400`);
    t.match((err as ApiError).error, { code: 'unsupported_parameter', param }, `${name}: names ${param}`);
  }
  const unknownPrevious = await client.responses.create({ model: 'claude-sonnet-4', input: 'Hi', previous_response_id: 'resp_not_held' }).catch((e: unknown) => e);
  t.ok(unknownPrevious instanceof OpenAI.NotFoundError, 'an unknown previous_response_id is a 404 on a provider that cannot look it up');
  t.match((unknownPrevious as ApiError).error, { code: 'previous_response_not_found', param: 'previous_response_id' });
  t.equal(mock.requests.length, before, 'none of them reached the provider');

  // What does map reaches the provider mapped.
  await client.responses.create({
    model: 'claude-sonnet-4',
    input: 'Hi',
    temperature: 0.2,
    top_p: 0.9,
    max_output_tokens: 50,
    tool_choice: { type: 'function', name: 'get_weather' },
    tools,
    parallel_tool_calls: false,
  });
  const body = JSON.parse(mock.requests.at(-1)!.body.toString()) as Json;
  t.match(body, { model: 'claude-sonnet-4', max_tokens: 50, temperature: 0.2, top_p: 0.9, tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true } });
});

t.test('OpenAI targets serve Responses natively', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: 'pipeline: []\n' });
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk', maxRetries: 0, defaultHeaders: { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${mock.url}/v1` } });
  const params = { model: 'gpt-4o-mini', input: 'Hello', tools: [{ type: 'web_search' as const }], previous_response_id: 'resp_openai_own' };
  await client.responses.create(params);
  const sent = mock.requests.at(-1)!;
  t.equal(sent.path, '/v1/responses', 'the Responses path');
  t.same(JSON.parse(sent.body.toString()), params, 'the body untouched, built-in tools and OpenAI\'s own ids included');
});
