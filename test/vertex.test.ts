/**
 * Vertex AI through the gateway: the official OpenAI and Anthropic SDKs talk to a Vertex-speaking
 * upstream (the mock's `/v1/projects/…/publishers/{google,anthropic}/models/…` routes, which
 * accept only bearer tokens it issued, and its OAuth token endpoint). Gemini plain, streamed and
 * embeddings; Claude plain and streamed (and through `/v1/messages`); direct mode with a bearer
 * token; usage metered from the providers' answers.
 */
import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { VERTEX_DIRECT_TOKEN } from '../bench/mock/vertex.js';
import { startGateway, startMock, usageProbe } from './helpers/gateway.js';

const PROJECT = 'my-proj';
const REGION = 'us-east5';
const BASE = `/v1/projects/${PROJECT}/locations/${REGION}`;

t.test('Vertex AI in direct mode: Gemini and Claude, plain, streamed, embeddings', async (t) => {
  const mock = await startMock(t);
  const { probe, usages } = usageProbe();
  const gw = await startGateway(t, { yaml: 'pipeline: [probe]\n', plugins: { probe } });
  const vertex = {
    'x-gateway-provider': 'vertex-ai',
    'x-gateway-custom-host': `${mock.url}/v1`,
    'x-gateway-vertex-project-id': PROJECT,
    'x-gateway-vertex-region': REGION,
  };
  const client = (apiKey = VERTEX_DIRECT_TOKEN) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries: 0, defaultHeaders: vertex });
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hello Vertex' },
  ];

  await t.test('Gemini', async (t) => {
    const plain = await client().chat.completions.create({ model: 'gemini-2.5-flash', messages });
    t.equal(plain.choices[0]?.message.content, 'Mock reply to: Hello Vertex');
    t.equal(plain.choices[0]?.finish_reason, 'stop');
    const sent = mock.requests.at(-1)!;
    t.equal(sent.path, `${BASE}/publishers/google/models/gemini-2.5-flash:generateContent`);
    t.equal(sent.headers.authorization, `Bearer ${VERTEX_DIRECT_TOKEN}`, 'the bearer token the client passed');
    t.notOk(sent.headers['x-goog-api-key'], 'no API-key header on Vertex');
    const body = JSON.parse(sent.body.toString()) as Record<string, unknown>;
    t.same(body.systemInstruction, { parts: [{ text: 'Be brief.' }] }, 'a Gemini body');
    t.notOk('model' in body);

    const stream = await client().chat.completions.create({ model: 'gemini-2.5-flash', messages, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    t.equal(text, plain.choices[0]?.message.content, 'the stream says the same');
    t.same(usage, plain.usage, 'with the same usage');
    t.equal(mock.requests.at(-1)!.path, `${BASE}/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse`);
  });

  await t.test('embeddings', async (t) => {
    const res = await client().embeddings.create({ model: 'text-embedding-005', input: ['first text', 'second text here'], dimensions: 64, encoding_format: 'float' });
    t.equal(res.data.length, 2);
    t.equal(res.data[1]!.index, 1);
    t.equal(res.data[0]!.embedding.length, 64);
    t.equal(res.usage.prompt_tokens, 3 + 4, 'token counts come from the predictions');
    const sent = mock.requests.at(-1)!;
    t.equal(sent.path, `${BASE}/publishers/google/models/text-embedding-005:predict`);
    t.same(JSON.parse(sent.body.toString()), { instances: [{ content: 'first text' }, { content: 'second text here' }], parameters: { outputDimensionality: 64 } });
    const ids = await client().embeddings.create({ model: 'text-embedding-005', input: [[1, 2, 3]] }).catch((e: unknown) => e);
    t.equal((ids as InstanceType<typeof OpenAI.APIError>).status, 400);
    t.equal((ids as InstanceType<typeof OpenAI.APIError>).code, 'unsupported_parameter', 'token ids cannot be embedded');
  });

  await t.test('Claude', async (t) => {
    const model = 'claude-sonnet-4@20250514';
    const plain = await client().chat.completions.create({ model, messages });
    t.equal(plain.choices[0]?.message.content, 'Mock reply to: Hello Vertex');
    const sent = mock.requests.at(-1)!;
    t.equal(sent.path, `${BASE}/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict`, 'the publisher path, @ kept');
    const body = JSON.parse(sent.body.toString()) as Record<string, unknown>;
    t.equal(body.anthropic_version, 'vertex-2023-10-16', 'the version in the body');
    t.notOk('model' in body, 'no model in the body');
    t.notOk(sent.headers['anthropic-version'], 'no anthropic-version header');
    t.notOk(sent.headers['x-api-key'], 'no Anthropic key header');
    t.same(body.system, [{ type: 'text', text: 'Be brief.' }], 'an Anthropic Messages body');

    const stream = await client().chat.completions.create({ model, messages, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    t.equal(text, plain.choices[0]?.message.content);
    t.same(usage, plain.usage);
    t.equal(mock.requests.at(-1)!.path, `${BASE}/publishers/anthropic/models/claude-sonnet-4@20250514:streamRawPredict`);
    t.equal((JSON.parse(mock.requests.at(-1)!.body.toString()) as Record<string, unknown>).stream, true);

    const embed = await client().embeddings.create({ model, input: 'x' }).catch((e: unknown) => e);
    t.equal((embed as InstanceType<typeof OpenAI.APIError>).status, 400, 'Claude has no embeddings');
  });

  await t.test('the Anthropic SDK on /v1/messages reaches Claude on Vertex natively', async (t) => {
    const anthropic = new Anthropic({ baseURL: gw.url, apiKey: VERTEX_DIRECT_TOKEN, maxRetries: 0, defaultHeaders: vertex });
    const params = {
      model: 'claude-sonnet-4@20250514',
      max_tokens: 2048,
      system: [{ type: 'text' as const, text: 'Be brief.', cache_control: { type: 'ephemeral' as const } }],
      thinking: { type: 'enabled' as const, budget_tokens: 1024 },
      messages: [{ role: 'user' as const, content: 'Hello from Anthropic SDK' }],
    };
    const plain = await anthropic.messages.create(params);
    t.same(plain.content, [{ type: 'text', text: 'Mock reply to: Hello from Anthropic SDK' }]);
    t.ok(plain.usage.input_tokens > 0 && plain.usage.output_tokens > 0);
    const sent = mock.requests.at(-1)!;
    t.equal(sent.path, `${BASE}/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict`);
    const { model: _model, ...rest } = params;
    t.same(JSON.parse(sent.body.toString()), { anthropic_version: 'vertex-2023-10-16', ...rest }, "the client's own Messages body, as Vertex wants it: thinking and cache_control arrive");
    t.equal(sent.headers.authorization, `Bearer ${VERTEX_DIRECT_TOKEN}`, "the SDK's x-api-key is the bearer token");
    let text = '';
    for await (const ev of await anthropic.messages.create({ ...params, stream: true })) {
      if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    }
    t.equal(text, 'Mock reply to: Hello from Anthropic SDK');
  });

  await t.test('usage is metered from the answers', async (t) => {
    await new Promise((r) => setTimeout(r, 20));
    t.ok(usages.length >= 6);
    t.same(usages[1], usages[0], 'Gemini: stream and plain agree');
    t.equal(usages[0]?.source, 'upstream');
    t.equal(usages[2]?.source, 'upstream', 'embeddings: reported by Vertex');
    t.equal(usages[2]?.prompt_tokens, 7);
  });

  await t.test('a token Vertex does not know gets its 401', async (t) => {
    const err = await client('ya29.not-a-token-the-mock-issued').chat.completions.create({ model: 'gemini-2.5-flash', messages }).catch((e: unknown) => e);
    t.equal((err as InstanceType<typeof OpenAI.APIError>).status, 401);
    t.equal((err as InstanceType<typeof OpenAI.APIError>).code, 'UNAUTHENTICATED');
    const claude = await client('ya29.not-a-token-the-mock-issued').chat.completions.create({ model: 'claude-sonnet-4@20250514', messages }).catch((e: unknown) => e);
    t.equal((claude as InstanceType<typeof OpenAI.APIError>).code, 'UNAUTHENTICATED', "Vertex's own refusal of a Claude call reads in Google's shape");
  });

  await t.test('provider errors keep their status and read in the OpenAI shape; tools translate', async (t) => {
    const faulty = (status: number) =>
      new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: VERTEX_DIRECT_TOKEN, maxRetries: 0, defaultHeaders: { ...vertex, 'x-mock-status': String(status) } });
    const quota = (await faulty(429).chat.completions.create({ model: 'gemini-2.5-flash', messages }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    t.equal(quota.status, 429);
    t.equal(quota.code, 'RESOURCE_EXHAUSTED', "Gemini's status names it");
    const busy = (await faulty(529).chat.completions.create({ model: 'claude-sonnet-4@20250514', messages }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    t.equal(busy.status, 529);
    t.equal(busy.code, 'overloaded_error', "Claude's errors are Anthropic's");

    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } },
    ];
    const withTools = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: VERTEX_DIRECT_TOKEN, maxRetries: 0, defaultHeaders: { ...vertex, 'x-mock-tool-call': '1' } });
    for (const model of ['gemini-2.5-flash', 'claude-sonnet-4@20250514']) {
      const answer = await withTools.chat.completions.create({ model, messages, tools });
      t.equal(answer.choices[0]?.finish_reason, 'tool_calls', model);
      const call = answer.choices[0]?.message.tool_calls?.[0];
      t.equal(call?.type === 'function' ? call.function.name : undefined, 'get_weather', `${model}: the tool call comes back`);
    }
  });

  await t.test('missing project or region is a clear 400', async (t) => {
    for (const [drop, param] of [
      ['x-gateway-vertex-project-id', 'vertex_project_id'],
      ['x-gateway-vertex-region', 'vertex_region'],
    ] as const) {
      const headers: Record<string, string | null> = { ...vertex, [drop]: null };
      const res = await new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: VERTEX_DIRECT_TOKEN, maxRetries: 0, defaultHeaders: headers })
        .chat.completions.create({ model: 'gemini-2.5-flash', messages })
        .catch((e: unknown) => e);
      const err = res as InstanceType<typeof OpenAI.APIError>;
      t.equal(err.status, 400, drop);
      t.equal(err.code, 'invalid_provider_field');
      t.equal(err.param, param);
    }
    const bad = await new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: VERTEX_DIRECT_TOKEN, maxRetries: 0, defaultHeaders: { ...vertex, 'x-gateway-vertex-region': 'evil.com/' } })
      .chat.completions.create({ model: 'gemini-2.5-flash', messages })
      .catch((e: unknown) => e);
    t.equal((bad as InstanceType<typeof OpenAI.APIError>).code, 'invalid_provider_field', 'a region outside its grammar');
  });
});

t.test('region global uses the global host', async (t) => {
  const { vertexUrl } = await import('../core/providers/vertex/location.js');
  const target = { provider: 'vertex-ai', providerOptions: { vertex_project_id: 'p1', vertex_region: 'global' } };
  t.equal(
    vertexUrl({ target, route: 'chat.completions', upstreamPath: '/publishers/google/models/gemini-2.5-pro:generateContent', search: '' }),
    'https://aiplatform.googleapis.com/v1/projects/p1/locations/global/publishers/google/models/gemini-2.5-pro:generateContent',
  );
  const regional = { provider: 'vertex-ai', providerOptions: { vertex_project_id: 'p1', vertex_region: 'europe-west4' } };
  t.equal(
    vertexUrl({ target: regional, route: 'chat.completions', upstreamPath: '/publishers/anthropic/models/claude-opus-4@20250514:rawPredict', search: '' }),
    'https://europe-west4-aiplatform.googleapis.com/v1/projects/p1/locations/europe-west4/publishers/anthropic/models/claude-opus-4@20250514:rawPredict',
  );
});
