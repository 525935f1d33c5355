/**
 * The Bedrock dialect: golden tests from wire fixtures written after AWS's Bedrock Runtime API
 * reference (Converse, ConverseStream and its event payloads, InvokeModel with the Titan Text
 * Embeddings and Cohere Embed bodies, error exceptions): request mapping, every 400 the translator
 * raises, response mapping, the full stream event sequence, usage parity between the two, errors.
 */
import t from 'tap';
import { isGatewayError } from '../core/errors.js';
import { exceptionError, openaiError } from '../core/providers/bedrock/errors.js';
import { finishReason } from '../core/providers/bedrock/finish-reasons.js';
import { buildRequest } from '../core/providers/bedrock/request.js';
import { buildResponse } from '../core/providers/bedrock/response.js';
import { createStreamTranslator } from '../core/providers/bedrock/stream.js';
import type { TranslateContext } from '../core/providers/types.js';
import type { ModelRoute } from '../core/routes.js';
import type { SseEvent } from '../core/sse/sse-parser.js';

const NOW = 1_700_000_000;
const CLAUDE = 'us.anthropic.claude-3-5-sonnet-20241022-v2:0';
const ID = /^chatcmpl-[0-9a-f]{32}$/;

function ctx(request: Record<string, unknown>, strict = true, route: ModelRoute = 'chat.completions'): TranslateContext {
  return { route, target: { provider: 'bedrock', providerOptions: { region: 'us-east-1' } }, request, strict };
}

function embed(request: Record<string, unknown>): TranslateContext {
  return ctx(request, true, 'embeddings');
}

/** A decoded event-stream message as the core hands it over. */
function ev(type: string, payload: Record<string, unknown>): SseEvent {
  return { event: type, data: JSON.stringify(payload) };
}

/** What `fn` threw, as the fields a client sees (or `undefined` when it did not throw). */
function thrown(fn: () => unknown): { status: number; code: string; param: string | null; message: string } | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (!isGatewayError(err)) throw err;
    return { status: err.status, code: err.code, param: err.param, message: err.message };
  }
}

/** A 400 the translator raises: `bad_request` (or `code`) naming `param`, with a clear message. */
function bad(param: string | null, message: RegExp, code = 'bad_request'): Record<string, unknown> {
  return { status: 400, code, param, message };
}

// ── Requests ────────────────────────────────────────────────────────────────────────────────────

t.test('request: system and developer kept in order, merged turns, images, tool calls and results, tools', async (t) => {
  const out = buildRequest(
    ctx({
      model: CLAUDE,
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: 'Hi' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: 'data:image/jpg;base64,/9j/4AAQ' },
          ],
        },
        {
          role: 'assistant',
          content: 'Let me look.',
          tool_calls: [
            { id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', type: 'function', function: { name: 'top_song', arguments: '{"sign":"WZPZ"}' } },
            { id: 'tooluse_2', type: 'function', function: { name: 'get_time', arguments: '{not json' } },
          ],
        },
        { role: 'tool', tool_call_id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', content: '{"song":"Elemental Hotel","artist":"8 Storey Hike"}' },
        { role: 'tool', tool_call_id: 'tooluse_2', content: [{ type: 'text', text: '10:00' }] },
        { role: 'user', content: 'Thanks' },
        { role: 'system', content: 'Late system note.' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'top_song',
            description: 'Get the most popular song played on a radio station.',
            parameters: { type: 'object', properties: { sign: { type: 'string' } }, required: ['sign'] },
          },
        },
        { type: 'function', function: { name: 'get_time' } },
      ],
      tool_choice: { type: 'function', function: { name: 'top_song' } },
      parallel_tool_calls: false,
      max_tokens: 512,
      temperature: 0.5,
      top_p: 0.9,
      stop: ['END'],
      n: 1,
      user: 'user-42',
      seed: 7,
      logprobs: false,
      response_format: { type: 'text' },
      reasoning_effort: 'low',
      stream_options: { include_usage: true },
    }),
  );
  t.equal(out.path, '/model/us.anthropic.claude-3-5-sonnet-20241022-v2%3A0/converse');
  t.equal(out.headers, undefined, 'no headers: content-type is the core’s');
  t.same(out.body, {
    messages: [
      {
        role: 'user',
        content: [
          { text: 'Hi' },
          { text: 'What is in this?' },
          { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } },
          { image: { format: 'jpeg', source: { bytes: '/9j/4AAQ' } } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { text: 'Let me look.' },
          { toolUse: { toolUseId: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', name: 'top_song', input: { sign: 'WZPZ' } } },
          { toolUse: { toolUseId: 'tooluse_2', name: 'get_time', input: {} } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            toolResult: {
              toolUseId: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q',
              content: [{ text: '{"song":"Elemental Hotel","artist":"8 Storey Hike"}' }],
            },
          },
          { toolResult: { toolUseId: 'tooluse_2', content: [{ text: '10:00' }] } },
          { text: 'Thanks' },
        ],
      },
    ],
    system: [{ text: 'You are terse.' }, { text: 'Answer in French.' }, { text: 'Late system note.' }],
    inferenceConfig: { maxTokens: 512, temperature: 0.5, topP: 0.9, stopSequences: ['END'] },
    toolConfig: {
      tools: [
        {
          toolSpec: {
            name: 'top_song',
            description: 'Get the most popular song played on a radio station.',
            inputSchema: { json: { type: 'object', properties: { sign: { type: 'string' } }, required: ['sign'] } },
          },
        },
        { toolSpec: { name: 'get_time', inputSchema: { json: { type: 'object', properties: {} } } } },
      ],
      toolChoice: { tool: { name: 'top_song' } },
    },
  });
  // Bedrock rejects unknown fields: none of OpenAI's extras may leak through.
  for (const key of ['model', 'n', 'user', 'seed', 'logprobs', 'response_format', 'reasoning_effort', 'stream', 'stream_options', 'stop', 'max_tokens']) {
    t.notOk(key in out.body, `${key} is not sent`);
  }
});

t.test('request: stream path, ARN model ids, tool results merge before user text', async (t) => {
  const streamed = buildRequest(ctx({ model: 'amazon.nova-lite-v1:0', stream: true, messages: [{ role: 'user', content: 'x' }] }));
  t.equal(streamed.path, '/model/amazon.nova-lite-v1%3A0/converse-stream');
  t.same(streamed.body, { messages: [{ role: 'user', content: [{ text: 'x' }] }] }, 'no empty inferenceConfig or toolConfig');

  const arn = 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.meta.llama3-2-1b-instruct-v1:0';
  t.equal(
    buildRequest(ctx({ model: arn, messages: [{ role: 'user', content: 'x' }] })).path,
    '/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.meta.llama3-2-1b-instruct-v1%3A0/converse',
  );

  const merged = buildRequest(
    ctx({
      model: 'm',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'text', text: '' }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'w', arguments: '' } }] },
        { role: 'user', content: 'Also, hurry.' },
        { role: 'tool', tool_call_id: 't1', content: '' },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'Well?' },
      ],
    }),
  ).body.messages;
  t.same(merged, [
    { role: 'user', content: [{ text: 'Weather?' }] },
    { role: 'assistant', content: [{ toolUse: { toolUseId: 't1', name: 'w', input: {} } }] },
    {
      role: 'user',
      content: [{ toolResult: { toolUseId: 't1', content: [{ text: '' }] } }, { text: 'Also, hurry.' }, { text: 'Well?' }],
    },
  ], 'empty text blocks and empty assistant turns are dropped; same-role turns merge with tool results first');
});

t.test('request: tool_choice, stop, max token precedence', async (t) => {
  const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }];
  const config = (tool_choice: unknown): unknown =>
    buildRequest(ctx({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools, tool_choice })).body.toolConfig;
  const spec = { toolSpec: { name: 'f', inputSchema: { json: { type: 'object', properties: {} } } } };
  t.same(config('auto'), { tools: [spec], toolChoice: { auto: {} } });
  t.same(config('required'), { tools: [spec], toolChoice: { any: {} } });
  t.same(config({ type: 'function', function: { name: 'f' } }), { tools: [spec], toolChoice: { tool: { name: 'f' } } });
  t.same(config('none'), { tools: [spec] }, 'none keeps the tools (history may hold toolUse) but sends no toolChoice');
  t.same(config(undefined), { tools: [spec] });
  t.equal(
    buildRequest(ctx({ model: 'm', messages: [{ role: 'user', content: 'x' }], tool_choice: 'required' })).body.toolConfig,
    undefined,
    'no toolConfig without tools',
  );

  const inference = (extra: Record<string, unknown>): unknown =>
    buildRequest(ctx({ model: 'm', messages: [{ role: 'user', content: 'x' }], ...extra })).body.inferenceConfig;
  t.same(inference({ stop: 'STOP' }), { stopSequences: ['STOP'] });
  t.same(inference({ stop: ['a', 'b'] }), { stopSequences: ['a', 'b'] });
  t.equal(inference({ stop: null }), undefined);
  t.same(inference({ max_tokens: 100 }), { maxTokens: 100 });
  t.same(inference({ max_completion_tokens: 200, max_tokens: 100 }), { maxTokens: 200 });
  t.same(inference({ temperature: 0 }), { temperature: 0 }, 'zero is a value, not absence');
  t.equal(inference({}), undefined, 'Converse has no required inference settings');
});

t.test('request: top_k and thinking only when not strict; Bedrock fields always pass through', async (t) => {
  const base = {
    model: CLAUDE,
    messages: [{ role: 'user', content: 'x' }],
    top_k: 40,
    thinking: { type: 'enabled', budget_tokens: 1024 },
  };
  t.equal(buildRequest(ctx(base, true)).body.additionalModelRequestFields, undefined, 'strict: ignored');
  t.same(buildRequest(ctx(base, false)).body.additionalModelRequestFields, {
    top_k: 40,
    thinking: { type: 'enabled', budget_tokens: 1024 },
  });

  const extras = {
    additionalModelRequestFields: { top_k: 5, anthropic_beta: ['token-efficient-tools-2025-02-19'] },
    additionalModelResponseFieldPaths: ['/stop_sequence'],
    guardrailConfig: { guardrailIdentifier: 'gr-1', guardrailVersion: '1', trace: 'enabled' },
    performanceConfig: { latency: 'optimized' },
    promptVariables: { genre: { text: 'pop' } },
    requestMetadata: { tenant: 'acme' },
  };
  const strict = buildRequest(ctx({ ...base, ...extras }, true)).body;
  for (const [key, value] of Object.entries(extras)) t.same(strict[key], value, `${key} passes unchanged in strict mode`);
  t.same(
    buildRequest(ctx({ ...base, ...extras }, false)).body.additionalModelRequestFields,
    { top_k: 5, thinking: { type: 'enabled', budget_tokens: 1024 }, anthropic_beta: ['token-efficient-tools-2025-02-19'] },
    'the explicit object wins over top_k it is merged with',
  );
});

t.test('request: every 400 the chat translator raises names its param', async (t) => {
  const user = { role: 'user', content: 'x' };
  const chat = (request: Record<string, unknown>) => () => buildRequest(ctx({ model: 'm', ...request }));
  const cases: [string, () => unknown, Record<string, unknown>][] = [
    ['n > 1', chat({ n: 2, messages: [user] }), bad('n', /one choice per call; n must be 1/, 'unsupported_parameter')],
    [
      'an http image URL',
      chat({
        messages: [
          { role: 'system', content: 's' },
          user,
          { role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } }] },
        ],
      }),
      bad('messages[2].content[1].image_url', /cannot fetch image URLs.*base64 data URL/, 'unsupported_parameter'),
    ],
    [
      'an image format Converse lacks',
      chat({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,Qk0=' } }] }] }),
      bad('messages[0].content[0].image_url', /png, jpeg, gif or webp images only/, 'unsupported_parameter'),
    ],
    [
      'an audio part',
      chat({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAA=', format: 'wav' } }] }] }),
      bad('messages[0].content[0].type', /text and image_url content parts; other types cannot be translated/, 'unsupported_parameter'),
    ],
    [
      'an assistant turn first',
      chat({ messages: [{ role: 'system', content: 's' }, { role: 'assistant', content: 'Hello!' }, user] }),
      bad('messages[1]', /start with a user message/),
    ],
    ['a custom tool', chat({ messages: [user], tools: [{ type: 'custom', custom: { name: 'grammar' } }] }), bad('tools[0].type', /function tools only/, 'unsupported_parameter')],
    ['no model', () => buildRequest(ctx({ messages: [user] })), bad('model', /Bedrock model id or ARN/)],
    [
      'another route',
      () => buildRequest(ctx({ model: 'm', input: 'x' }, true, 'moderations')),
      bad(null, /chat.completions and embeddings, not moderations/, 'unsupported_route'),
    ],
  ];
  for (const [name, fn, expected] of cases) t.match(thrown(fn), expected, name);
});

t.test('request: embeddings for Titan v1/v2 and Cohere v3/v4', async (t) => {
  t.same(buildRequest(embed({ model: 'amazon.titan-embed-text-v2:0', input: 'Hello world', dimensions: 512 })), {
    path: '/model/amazon.titan-embed-text-v2%3A0/invoke',
    body: { inputText: 'Hello world', dimensions: 512, normalize: true },
  });
  t.same(buildRequest(embed({ model: 'amazon.titan-embed-text-v2:0', input: ['one text'], normalize: false })).body, {
    inputText: 'one text',
    normalize: false,
  });
  t.same(buildRequest(embed({ model: 'amazon.titan-embed-text-v1', input: 'Hi' })), {
    path: '/model/amazon.titan-embed-text-v1/invoke',
    body: { inputText: 'Hi' },
  });
  const arn = 'arn:aws:bedrock:us-east-1::foundation-model/amazon.titan-embed-text-v2:0';
  t.same(buildRequest(embed({ model: arn, input: 'Hi' })).body, { inputText: 'Hi', normalize: true }, 'the family is read inside an ARN');

  t.same(buildRequest(embed({ model: 'cohere.embed-english-v3', input: ['a', 'b'] })), {
    path: '/model/cohere.embed-english-v3/invoke',
    body: { texts: ['a', 'b'], input_type: 'search_document' },
  });
  t.same(buildRequest(embed({ model: 'cohere.embed-multilingual-v3', input: 'q', input_type: 'search_query', truncate: 'END' })).body, {
    texts: ['q'],
    input_type: 'search_query',
    truncate: 'END',
  });
  t.same(buildRequest(embed({ model: 'us.cohere.embed-v4:0', input: 'a', dimensions: 256 })).body, {
    texts: ['a'],
    input_type: 'search_document',
    output_dimension: 256,
  });
});

t.test('request: every 400 the embeddings translator raises names its param', async (t) => {
  const call = (request: Record<string, unknown>) => () => buildRequest(embed(request));
  const cases: [string, () => unknown, Record<string, unknown>][] = [
    ['a batch for Titan', call({ model: 'amazon.titan-embed-text-v2:0', input: ['a', 'b'] }), bad('input', /one text per call; input has 2/, 'unsupported_parameter')],
    ['tokens', call({ model: 'amazon.titan-embed-text-v2:0', input: [1, 2, 3] }), bad('input', /take text.*not tokens/, 'unsupported_parameter')],
    ['token arrays', call({ model: 'cohere.embed-english-v3', input: [[1, 2], [3]] }), bad('input', /not tokens/, 'unsupported_parameter')],
    ['dimensions on Titan v1', call({ model: 'amazon.titan-embed-text-v1', input: 'a', dimensions: 256 }), bad('dimensions', /fixed size/, 'unsupported_parameter')],
    ['dimensions on Cohere v3', call({ model: 'cohere.embed-english-v3', input: 'a', dimensions: 256 }), bad('dimensions', /fixed size/, 'unsupported_parameter')],
    [
      'another family',
      call({ model: 'amazon.titan-embed-image-v1', input: 'a' }),
      bad('model', /amazon\.titan-embed-text-\*.*cohere\.embed-\*.* models only/, 'unsupported_parameter'),
    ],
  ];
  for (const [name, fn, expected] of cases) t.match(thrown(fn), expected, name);
});

// ── Responses ───────────────────────────────────────────────────────────────────────────────────

/** A Converse answer as the API reference shows it, with reasoning and prompt-cache counts. */
const TEXT_ANSWER = {
  output: {
    message: {
      role: 'assistant',
      content: [
        { reasoningContent: { reasoningText: { text: 'The user greets me.', signature: 'EqQBCgIYAhIM' } } },
        { reasoningContent: { redactedContent: 'c2VjcmV0' } },
        { text: 'Hello' },
        { text: ' there!' },
      ],
    },
  },
  stopReason: 'end_turn',
  usage: { inputTokens: 12, outputTokens: 6, totalTokens: 123, cacheReadInputTokens: 100, cacheWriteInputTokens: 5 },
  metrics: { latencyMs: 412 },
};

const CACHED_USAGE = { prompt_tokens: 117, completion_tokens: 6, total_tokens: 123, prompt_tokens_details: { cached_tokens: 100 } };

t.test('response: text, cached-token usage, reasoning strict and not', async (t) => {
  const out = buildResponse(ctx({ model: CLAUDE }), TEXT_ANSWER, NOW);
  t.match(out.id, ID, 'a made-up OpenAI-style id');
  t.same(
    { ...out, id: 'x' },
    {
      id: 'x',
      object: 'chat.completion',
      created: NOW,
      model: CLAUDE,
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there!', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: CACHED_USAGE,
    },
  );
  t.not(buildResponse(ctx({ model: CLAUDE }), TEXT_ANSWER, NOW).id, out.id, 'ids are unique per answer');

  const loose = buildResponse(ctx({ model: CLAUDE }, false), TEXT_ANSWER, NOW);
  t.same((loose.choices as { message: unknown }[])[0]?.message, {
    role: 'assistant',
    content: 'Hello there!',
    reasoning_content: 'The user greets me.',
    refusal: null,
  });
  t.type(buildResponse(ctx({ model: CLAUDE }), TEXT_ANSWER).created, 'number');
});

t.test('response: tool use only, and every stop reason', async (t) => {
  const toolAnswer = {
    output: {
      message: {
        role: 'assistant',
        content: [{ toolUse: { toolUseId: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', name: 'top_song', input: { sign: 'WZPZ' } } }],
      },
    },
    stopReason: 'tool_use',
    usage: { inputTokens: 375, outputTokens: 36, totalTokens: 411 },
    metrics: { latencyMs: 2189 },
  };
  const out = buildResponse(ctx({ model: CLAUDE }), toolAnswer, NOW);
  t.same(out.choices, [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', type: 'function', function: { name: 'top_song', arguments: '{"sign":"WZPZ"}' } }],
        refusal: null,
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    },
  ]);
  t.same(out.usage, { prompt_tokens: 375, completion_tokens: 36, total_tokens: 411, prompt_tokens_details: { cached_tokens: 0 } });

  const reasons: [unknown, string][] = [
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['guardrail_intervened', 'content_filter'],
    ['content_filtered', 'content_filter'],
    ['malformed_model_output', 'stop'],
    ['something_new', 'stop'],
    [undefined, 'stop'],
  ];
  for (const [bedrock, openai] of reasons) {
    t.equal(finishReason(bedrock), openai, `${String(bedrock)} → ${openai}`);
    const r = buildResponse(ctx({}), { ...TEXT_ANSWER, stopReason: bedrock }, NOW);
    t.equal((r.choices as { finish_reason: string }[])[0]?.finish_reason, openai);
  }
});

t.test('response: embeddings from Titan and Cohere, floats and base64', async (t) => {
  const titan = { embedding: [0.5, -0.25, 1], inputTextTokenCount: 3, embeddingsByType: { float: [0.5, -0.25, 1] } };
  t.same(buildResponse(embed({ model: 'amazon.titan-embed-text-v2:0', input: 'Hi' }), titan), {
    object: 'list',
    data: [{ object: 'embedding', index: 0, embedding: [0.5, -0.25, 1] }],
    model: 'amazon.titan-embed-text-v2:0',
    usage: { prompt_tokens: 3, total_tokens: 3 },
  });

  const packed = buildResponse(embed({ model: 'amazon.titan-embed-text-v2:0', input: 'Hi', encoding_format: 'base64' }), titan);
  const b64 = (packed.data as { embedding: string }[])[0]?.embedding ?? '';
  t.equal(b64, 'AAAAPwAAgL4AAIA/', 'float32 little-endian bytes, base64');
  const bytes = Buffer.from(b64, 'base64');
  t.same([0, 1, 2].map((i) => bytes.readFloatLE(i * 4)), [0.5, -0.25, 1]);

  const cohere = {
    id: 'da6e3b9f-1a4c-4b1e-9d8f-2c6a7f0e1b2c',
    texts: ['a', 'b'],
    embeddings: [
      [0.1, 0.2],
      [0.3, 0.4],
    ],
    response_type: 'embeddings_floats',
  };
  const listed = buildResponse(embed({ model: 'cohere.embed-english-v3', input: ['a', 'b'] }), cohere);
  t.same(listed, {
    object: 'list',
    data: [
      { object: 'embedding', index: 0, embedding: [0.1, 0.2] },
      { object: 'embedding', index: 1, embedding: [0.3, 0.4] },
    ],
    model: 'cohere.embed-english-v3',
  });
  t.notOk('usage' in listed, 'Cohere reports no tokens: usage is left to the gateway');

  const typed = { id: 'x', texts: ['a'], embeddings: { float: [[0.5]] }, response_type: 'embeddings_by_type' };
  t.same(buildResponse(embed({ model: 'cohere.embed-v4:0', input: 'a' }), typed).data, [{ object: 'embedding', index: 0, embedding: [0.5] }]);

  try {
    buildResponse(embed({ model: 'cohere.embed-v4:0', input: 'a' }), { message: 'odd' });
    t.fail('expected an error');
  } catch (err) {
    t.match(err, { status: 502, code: 'upstream_invalid_response' }, 'an unreadable 2xx body is the upstream’s fault');
  }
});

// ── Stream ──────────────────────────────────────────────────────────────────────────────────────

/**
 * ConverseStream for the AWS tool-use example: a text block, then a toolUse block whose input
 * arrives in fragments, then messageStop and metadata (with cache counts).
 */
const TOOL_STREAM: SseEvent[] = [
  ev('messageStart', { role: 'assistant' }),
  ev('contentBlockDelta', { delta: { text: 'Let me check' }, contentBlockIndex: 0 }),
  ev('contentBlockDelta', { delta: { text: ' the station.' }, contentBlockIndex: 0 }),
  ev('contentBlockStop', { contentBlockIndex: 0 }),
  ev('contentBlockStart', { start: { toolUse: { toolUseId: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', name: 'top_song' } }, contentBlockIndex: 1 }),
  ev('contentBlockDelta', { delta: { toolUse: { input: '' } }, contentBlockIndex: 1 }),
  ev('contentBlockDelta', { delta: { toolUse: { input: '{"sign": ' } }, contentBlockIndex: 1 }),
  ev('contentBlockDelta', { delta: { toolUse: { input: '"WZPZ"}' } }, contentBlockIndex: 1 }),
  ev('contentBlockStop', { contentBlockIndex: 1 }),
  ev('contentBlockStart', { start: { toolUse: { toolUseId: 'tooluse_2', name: 'get_time' } }, contentBlockIndex: 2 }),
  ev('contentBlockDelta', { delta: { toolUse: { input: '{}' } }, contentBlockIndex: 2 }),
  ev('contentBlockStop', { contentBlockIndex: 2 }),
  ev('messageStop', { stopReason: 'tool_use' }),
  ev('metadata', {
    usage: { inputTokens: 12, outputTokens: 6, totalTokens: 123, cacheReadInputTokens: 100, cacheWriteInputTokens: 5 },
    metrics: { latencyMs: 1210 },
  }),
];

function bodies(events: SseEvent[]): unknown[] {
  return events.map((e) => (e.data === '[DONE]' ? '[DONE]' : { event: e.event, body: JSON.parse(e.data) }));
}

t.test('stream: full event sequence with tool-call argument deltas and usage, exact chunks', async (t) => {
  const s = createStreamTranslator(ctx({ model: CLAUDE, stream: true, stream_options: { include_usage: true } }), NOW);
  const out = [...TOOL_STREAM.flatMap((e) => s.event(e)), ...s.end()];
  const id = (JSON.parse(out[0]!.data) as { id: string }).id;
  t.match(id, ID);
  const head = { id, object: 'chat.completion.chunk', created: NOW, model: CLAUDE };
  const choice = (delta: unknown, finish: string | null = null): unknown => ({
    event: undefined,
    body: { ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null },
  });
  t.same(bodies(out), [
    choice({ role: 'assistant', content: '' }),
    choice({ content: 'Let me check' }),
    choice({ content: ' the station.' }),
    choice({ tool_calls: [{ index: 0, id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', type: 'function', function: { name: 'top_song', arguments: '' } }] }),
    choice({ tool_calls: [{ index: 0, function: { arguments: '{"sign": ' } }] }),
    choice({ tool_calls: [{ index: 0, function: { arguments: '"WZPZ"}' } }] }),
    choice({ tool_calls: [{ index: 1, id: 'tooluse_2', type: 'function', function: { name: 'get_time', arguments: '' } }] }),
    choice({ tool_calls: [{ index: 1, function: { arguments: '{}' } }] }),
    choice({}, 'tool_calls'),
    { event: undefined, body: { ...head, choices: [], usage: CACHED_USAGE } },
    '[DONE]',
  ]);
  t.equal(out.filter((e) => e.data === '[DONE]').length, 1, 'end() after metadata adds nothing');
  t.same(s.event(TOOL_STREAM[1]!), [], 'events after the end are ignored');
  const args = out
    .filter((e) => e.data !== '[DONE]')
    .map((e) => JSON.parse(e.data).choices[0]?.delta?.tool_calls?.[0])
    .filter((c) => c?.index === 0)
    .map((c) => c.function.arguments)
    .join('');
  t.same(JSON.parse(args), { sign: 'WZPZ' }, 'argument fragments concatenate to valid JSON');
});

t.test('stream: usage equals the plain call’s usage for the same answer', async (t) => {
  const request = { model: CLAUDE, stream: true, stream_options: { include_usage: true } };
  const s = createStreamTranslator(ctx(request), NOW);
  const streamed = TOOL_STREAM.flatMap((e) => s.event(e)).filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data));
  const plain = buildResponse(ctx(request), TEXT_ANSWER, NOW);
  t.same(streamed.at(-1).usage, plain.usage);
  t.same(plain.usage, CACHED_USAGE);
});

t.test('stream: no usage without include_usage; reasoning only when not strict', async (t) => {
  const reasoning: SseEvent[] = [
    ev('messageStart', { role: 'assistant' }),
    ev('contentBlockDelta', { delta: { reasoningContent: { text: 'Hmm.' } }, contentBlockIndex: 0 }),
    ev('contentBlockDelta', { delta: { reasoningContent: { signature: 'EqQB' } }, contentBlockIndex: 0 }),
    ev('contentBlockStop', { contentBlockIndex: 0 }),
    ev('contentBlockDelta', { delta: { text: 'Hi' }, contentBlockIndex: 1 }),
    ev('messageStop', { stopReason: 'max_tokens' }),
    ev('metadata', { usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 }, metrics: { latencyMs: 5 } }),
  ];
  const run = (strict: boolean): unknown[] => {
    const s = createStreamTranslator(ctx({ model: 'm', stream: true }, strict), NOW);
    return reasoning.flatMap((e) => s.event(e)).map((e) => (e.data === '[DONE]' ? '[DONE]' : JSON.parse(e.data)));
  };
  const strict = run(true);
  t.same(
    strict.map((b) => (b === '[DONE]' ? b : (b as { choices: unknown[] }).choices[0])),
    [
      { index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
      { index: 0, delta: { content: 'Hi' }, logprobs: null, finish_reason: null },
      { index: 0, delta: {}, logprobs: null, finish_reason: 'length' },
      '[DONE]',
    ],
  );
  t.notOk(strict.some((b) => typeof b === 'object' && b !== null && 'usage' in b), 'no usage field at all without include_usage');
  t.same((run(false)[1] as { choices: unknown[] }).choices[0], { index: 0, delta: { reasoning_content: 'Hmm.' }, logprobs: null, finish_reason: null });
});

t.test('stream: [DONE] from end() when metadata never came; role chunk even without messageStart', async (t) => {
  const s = createStreamTranslator(ctx({ model: 'm', stream: true }), NOW);
  const out = [TOOL_STREAM[1]!, TOOL_STREAM[12]!].flatMap((e) => s.event(e));
  t.same(
    out.map((e) => JSON.parse(e.data).choices[0].delta),
    [{ role: 'assistant', content: '' }, { content: 'Let me check' }, {}],
  );
  t.same(s.end(), [{ data: '[DONE]' }]);
  t.same(s.end(), [], 'only once');
});

t.test('stream: an exception becomes event: error with the OpenAI body, and nothing after it', async (t) => {
  const s = createStreamTranslator(ctx({ model: 'm', stream: true, stream_options: { include_usage: true } }), NOW);
  s.event(TOOL_STREAM[0]!);
  s.event(TOOL_STREAM[1]!);
  const out = s.event({ event: 'exception', data: '{"type":"throttlingException","message":"Too many tokens, please wait before trying again."}' });
  t.same(bodies(out), [
    {
      event: 'error',
      body: {
        error: {
          message: 'Too many tokens, please wait before trying again.',
          type: 'rate_limit_error',
          param: null,
          code: 'ThrottlingException',
        },
      },
    },
  ]);
  t.same(s.event(TOOL_STREAM[2]!), [], 'nothing after the error');
  t.same(s.event(TOOL_STREAM[13]!), [], 'not even usage');
  t.same(s.end(), [], 'no [DONE]: the stream does not pretend to have succeeded');

  const bad = createStreamTranslator(ctx({ model: 'm', stream: true }), NOW);
  bad.event(TOOL_STREAM[0]!);
  const broken = bad.event({ event: 'contentBlockDelta', data: '{"delta":{"text":' });
  t.same(bodies(broken), [
    {
      event: 'error',
      body: {
        error: {
          message: 'Bedrock sent a contentBlockDelta event whose payload is not JSON.',
          type: 'upstream_error',
          param: null,
          code: 'upstream_invalid_response',
        },
      },
    },
  ]);
  t.same(bad.end(), []);
});

// ── Errors ──────────────────────────────────────────────────────────────────────────────────────

t.test('errors: the exception named by x-amzn-errortype is the code, the type is OpenAI’s', async (t) => {
  t.same(
    openaiError(400, { message: 'The model returned the following errors: messages: roles must alternate' }, {
      'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/',
    }),
    {
      error: {
        message: 'The model returned the following errors: messages: roles must alternate',
        type: 'invalid_request_error',
        param: null,
        code: 'ValidationException',
      },
    },
  );
  const cases: [number, string, string, string][] = [
    [403, 'AccessDeniedException:http://internal.amazon.com/coral/com.amazon.bedrock/', 'AccessDeniedException', 'permission_error'],
    [403, 'UnrecognizedClientException:http://internal.amazon.com/coral/com.amazon.coral.service/', 'UnrecognizedClientException', 'authentication_error'],
    [404, 'ResourceNotFoundException:', 'ResourceNotFoundException', 'not_found_error'],
    [408, 'ModelTimeoutException', 'ModelTimeoutException', 'timeout_error'],
    [424, 'ModelErrorException:x', 'ModelErrorException', 'api_error'],
    [429, 'ThrottlingException:x', 'ThrottlingException', 'rate_limit_error'],
    [429, 'ModelNotReadyException:x', 'ModelNotReadyException', 'rate_limit_error'],
    [400, 'ServiceQuotaExceededException:x', 'ServiceQuotaExceededException', 'rate_limit_error'],
    [500, 'InternalServerException:x', 'InternalServerException', 'api_error'],
    [503, 'ServiceUnavailableException:x', 'ServiceUnavailableException', 'overloaded_error'],
    [418, 'TeapotException:x', 'TeapotException', 'invalid_request_error'],
  ];
  for (const [status, header, code, type] of cases) {
    t.same(openaiError(status, { message: 'm' }, { 'x-amzn-errortype': header }).error, { message: 'm', type, param: null, code }, `${status} ${code}`);
  }
  t.same(openaiError(403, { Message: 'User is not authorized' }, { 'x-amzn-errortype': ['AccessDeniedException:x'] }).error, {
    message: 'User is not authorized',
    type: 'permission_error',
    param: null,
    code: 'AccessDeniedException',
  }, 'capitalised Message, repeated header');
  t.same(openaiError(400, { __type: 'com.amazon.coral.service#ExpiredTokenException', message: 'expired' }).error.code, 'ExpiredTokenException');
});

t.test('errors: without a named exception the status picks one', async (t) => {
  const fallbacks: [number, string, string][] = [
    [400, 'ValidationException', 'invalid_request_error'],
    [403, 'AccessDeniedException', 'permission_error'],
    [404, 'ResourceNotFoundException', 'not_found_error'],
    [408, 'ModelTimeoutException', 'timeout_error'],
    [424, 'ModelErrorException', 'api_error'],
    [429, 'ThrottlingException', 'rate_limit_error'],
    [500, 'InternalServerException', 'api_error'],
    [503, 'ServiceUnavailableException', 'overloaded_error'],
    [502, 'InternalServerException', 'api_error'],
  ];
  for (const [status, code, type] of fallbacks) {
    t.same(openaiError(status, undefined).error, { message: `Bedrock answered HTTP ${status}`, type, param: null, code }, `${status} → ${code}`);
  }
  t.same(openaiError(502, '<html>Bad Gateway</html>').error.message, '<html>Bad Gateway</html>', 'a non-JSON body is the message');
});

t.test('errors: stream exception types are normalised to the UpperCamel exception name', async (t) => {
  t.same(exceptionError({ type: 'modelStreamErrorException', message: 'Model stream failed', originalStatusCode: 500 }), {
    error: { message: 'Model stream failed', type: 'api_error', param: null, code: 'ModelStreamErrorException' },
  });
  t.same(exceptionError({ type: 'validationException', message: 'bad' }).error.type, 'invalid_request_error');
  t.same(exceptionError({ type: 'serviceUnavailableException', message: 'later' }).error.code, 'ServiceUnavailableException');
  t.same(exceptionError({ message: 'odd' }).error, { message: 'odd', type: 'api_error', param: null, code: 'InternalServerException' });
});
