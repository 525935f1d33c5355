/**
 * Bedrock through the gateway: an OpenAI SDK client talks to a Bedrock-speaking upstream (the
 * mock's Converse, ConverseStream and InvokeModel routes, which verify SigV4 signatures by hand
 * and frame streams as AWS event streams), plain and streamed, with tools, usage, errors and
 * embeddings.
 */
import t from 'tap';
import OpenAI from 'openai';
import { MOCK_AWS_ACCESS_KEY_ID, MOCK_AWS_SECRET_ACCESS_KEY } from '../bench/mock/sigv4.js';
import { ADMIN_KEY, startGateway, startMock, usageProbe } from './helpers/gateway.js';

const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';

t.test('Bedrock Converse end to end', async (t) => {
  const mock = await startMock(t);
  const { probe, usages } = usageProbe();
  const gw = await startGateway(t, { yaml: 'pipeline: [probe]\n', plugins: { probe } });
  const aws = {
    'x-gateway-provider': 'bedrock',
    'x-gateway-custom-host': mock.url,
    'x-gateway-aws-region': 'us-west-2',
    'x-gateway-aws-access-key-id': MOCK_AWS_ACCESS_KEY_ID,
    'x-gateway-aws-secret-access-key': MOCK_AWS_SECRET_ACCESS_KEY,
  };
  const client = (headers: Record<string, string> = {}) =>
    new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: { ...aws, ...headers } });
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hello Bedrock' },
  ];

  const plain = await client().chat.completions.create({ model: MODEL, messages });
  t.equal(plain.object, 'chat.completion');
  t.equal(plain.choices[0]?.message.content, 'Mock reply to: Hello Bedrock');
  t.equal(plain.choices[0]?.finish_reason, 'stop');
  const sent = mock.requests.at(-1)!;
  t.equal(sent.path, '/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse', 'the model id is escaped in the path');
  t.match(sent.headers.authorization, /^AWS4-HMAC-SHA256 Credential=AKIAMOCKGATEWAY00001\/\d{8}\/us-west-2\/bedrock\/aws4_request, SignedHeaders=[^,]*host/, 'signed with SigV4 (the mock verified it)');
  t.ok(sent.headers['x-amz-date']);
  const body = JSON.parse(sent.body.toString()) as { system: unknown; messages: unknown };
  t.same(body.system, [{ text: 'Be brief.' }]);
  t.same(body.messages, [{ role: 'user', content: [{ text: 'Hello Bedrock' }] }]);

  const stream = await client().chat.completions.create({ model: MODEL, messages, stream: true, stream_options: { include_usage: true } });
  let text = '';
  let streamUsage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    if (chunk.usage) streamUsage = chunk.usage;
  }
  t.equal(mock.requests.at(-1)!.path, '/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream');
  t.equal(text, plain.choices[0]?.message.content, 'the event stream became the same text');
  t.same(streamUsage, plain.usage, 'stream usage equals plain usage');
  await new Promise((r) => setTimeout(r, 20));
  t.same(usages[1], usages[0], 'and the gateway metered both the same');
  t.equal(usages[0]?.source, 'upstream');

  const cached = await client({ 'x-mock-cache-read': '4' }).chat.completions.create({ model: MODEL, messages });
  t.equal(cached.usage?.prompt_tokens_details?.cached_tokens, 4, 'cache reads are reported');
  t.equal(cached.usage?.prompt_tokens, plain.usage?.prompt_tokens, 'and stay inside the prompt count');

  const tools: OpenAI.ChatCompletionTool[] = [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } } },
  ];
  const call = await client({ 'x-mock-tool-call': '1' }).chat.completions.create({ model: MODEL, messages, tools });
  t.equal(call.choices[0]?.finish_reason, 'tool_calls');
  const toolCall = call.choices[0]?.message.tool_calls?.[0] as OpenAI.ChatCompletionMessageFunctionToolCall | undefined;
  t.equal(toolCall?.function.name, 'get_weather');
  t.match(JSON.parse(mock.requests.at(-1)!.body.toString()), { toolConfig: { tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: { type: 'object' } } } }] } });
  const streamedCall = await client({ 'x-mock-tool-call': '1' }).chat.completions.create({ model: MODEL, messages, tools, stream: true });
  let args = '';
  let finish: string | null | undefined;
  for await (const chunk of streamedCall) {
    for (const tc of chunk.choices[0]?.delta.tool_calls ?? []) args += tc.function?.arguments ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  t.same(JSON.parse(args), JSON.parse(toolCall!.function.arguments), 'streamed argument fragments assemble to the same arguments');
  t.equal(finish, 'tool_calls');

  const throttled = await client({ 'x-mock-status': '429' }).chat.completions.create({ model: MODEL, messages }).catch((e: unknown) => e);
  t.type(throttled, OpenAI.APIError);
  t.equal((throttled as InstanceType<typeof OpenAI.APIError>).status, 429, 'the provider status is kept');
  t.match((throttled as InstanceType<typeof OpenAI.APIError>).error, { code: 'ThrottlingException', type: 'rate_limit_error' });

  const badSecret = await client({ 'x-gateway-aws-secret-access-key': 'not-the-secret-0000' }).chat.completions.create({ model: MODEL, messages }).catch((e: unknown) => e);
  t.equal((badSecret as InstanceType<typeof OpenAI.APIError>).status, 403, 'a wrong secret fails the signature check upstream');
  t.match((badSecret as InstanceType<typeof OpenAI.APIError>).error, { code: 'InvalidSignatureException' });
  t.notMatch(JSON.stringify((badSecret as InstanceType<typeof OpenAI.APIError>).error), /not-the-secret/, 'the secret is not echoed');

  const midStream = await client({ 'x-mock-error-event': '1' }).chat.completions.create({ model: MODEL, messages, stream: true });
  const failure = await (async () => {
    for await (const chunk of midStream) void chunk;
  })().catch((e: unknown) => e);
  t.type(failure, OpenAI.APIError, 'an exception inside the event stream reaches the client as an error event');

  const noRegion = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-provider': 'bedrock', 'x-gateway-aws-access-key-id': MOCK_AWS_ACCESS_KEY_ID, 'x-gateway-aws-secret-access-key': MOCK_AWS_SECRET_ACCESS_KEY },
    body: JSON.stringify({ model: MODEL, messages }),
  });
  t.equal(noRegion.status, 400);
  t.match(await noRegion.json(), { error: { code: 'invalid_header', param: 'x-gateway-aws-region' } }, 'a missing region is named');

  const legacy = await client().completions.create({ model: MODEL, prompt: 'hi' }).catch((e: unknown) => e);
  t.equal((legacy as InstanceType<typeof OpenAI.APIError>).status, 400);
  t.match((legacy as InstanceType<typeof OpenAI.APIError>).error, { code: 'unsupported_route' }, 'a route Bedrock lacks gets a clear code');
});

t.test('Bedrock API keys, embeddings and config targets', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: 'pipeline:\n  - config-strategy: {circuit_breaker: false}\n' });
  const bearer = new OpenAI({
    baseURL: `${gw.url}/v1`,
    apiKey: 'bedrock-api-key-0001',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-provider': 'bedrock', 'x-gateway-custom-host': mock.url, 'x-gateway-aws-region': 'us-east-1' },
  });
  const answer = await bearer.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(answer.choices[0]?.message.content, 'Mock reply to: hi');
  t.equal(mock.requests.at(-1)!.headers.authorization, 'Bearer bedrock-api-key-0001', 'without AWS keys, the key is a Bedrock API key');

  const titan = await bearer.embeddings.create({ model: 'amazon.titan-embed-text-v2:0', input: 'embed me', dimensions: 256, encoding_format: 'float' });
  t.equal(titan.data.length, 1);
  t.equal(titan.data[0]!.embedding.length, 256);
  t.ok(titan.usage.prompt_tokens > 0, 'Titan reports its token count');
  t.equal(mock.requests.at(-1)!.path, '/model/amazon.titan-embed-text-v2%3A0/invoke');
  const cohere = await bearer.embeddings.create({ model: 'cohere.embed-english-v3', input: ['one', 'two'], encoding_format: 'float' });
  t.equal(cohere.data.length, 2);
  t.same(JSON.parse(mock.requests.at(-1)!.body.toString()), { texts: ['one', 'two'], input_type: 'search_document' });
  const many = await bearer.embeddings.create({ model: 'amazon.titan-embed-text-v2:0', input: ['a', 'b'] }).catch((e: unknown) => e);
  t.equal((many as InstanceType<typeof OpenAI.APIError>).status, 400, 'Titan embeds one text per call');

  // A routing config carries the AWS fields on its target, like a virtual key would.
  const config = {
    strategy: { mode: 'fallback' },
    targets: [
      { provider: 'bedrock', custom_host: `${mock.url}/mock/status=503`, aws_region: 'eu-west-1', aws_access_key_id: MOCK_AWS_ACCESS_KEY_ID, aws_secret_access_key: MOCK_AWS_SECRET_ACCESS_KEY },
      { provider: 'bedrock', custom_host: mock.url, aws_region: 'eu-west-1', aws_access_key_id: MOCK_AWS_ACCESS_KEY_ID, aws_secret_access_key: MOCK_AWS_SECRET_ACCESS_KEY },
    ],
  };
  const viaConfig = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: { 'x-gateway-config': JSON.stringify(config) } });
  const { data, response } = await viaConfig.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'fallback' }] }).withResponse();
  t.equal(data.choices[0]?.message.content, 'Mock reply to: fallback', 'a signed call through a directive prefix, after a fallback');
  t.equal(response.headers.get('x-gateway-last-used-option-index'), 'config.targets[1]');
  t.match(mock.requests.at(-1)!.headers.authorization, /\/eu-west-1\/bedrock\/aws4_request/);
});

t.test('a Bedrock virtual key: AWS fields stored sealed, the call signed with them', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: 'pipeline: [auth, virtual-keys, config-strategy, admin-resources]\n', env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const admin = async (method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> => {
    const res = await fetch(`${gw.url}/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': ADMIN_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  };
  const created = await admin('POST', '/virtual-keys', {
    name: 'bedrock prod',
    slug: 'bedrock-prod',
    provider: 'bedrock',
    custom_host: mock.url,
    aws_region: 'ap-southeast-2',
    aws_access_key_id: MOCK_AWS_ACCESS_KEY_ID,
    aws_secret_access_key: MOCK_AWS_SECRET_ACCESS_KEY,
  });
  t.equal(created.status, 200, created.text);
  const id = (JSON.parse(created.text) as { id: string }).id;
  const read = await admin('GET', `/virtual-keys/${id}`);
  t.notMatch(read.text, MOCK_AWS_SECRET_ACCESS_KEY, 'the secret access key is never shown');
  t.match(read.text, 'ap-southeast-2', 'the region is');

  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-virtual-key': 'bedrock-prod' } });
  const answer = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'through a virtual key' }] });
  t.equal(answer.choices[0]?.message.content, 'Mock reply to: through a virtual key');
  t.match(mock.requests.at(-1)!.headers.authorization, /Credential=AKIAMOCKGATEWAY00001\/\d{8}\/ap-southeast-2\/bedrock\/aws4_request/, 'signed with the stored keys and region');
});
