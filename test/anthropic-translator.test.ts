/**
 * The Anthropic dialect: golden tests from wire fixtures written after Anthropic's Messages API
 * documentation (request mapping, response mapping, the full stream event sequence, errors),
 * and one round trip through the mock's `/v1/messages`.
 */
import t from 'tap';
import { request as undiciRequest } from 'undici';
import { startMockUpstream } from '../bench/mock-upstream.js';
import { anthropic } from '../core/providers/anthropic/index.js';
import { buildResponse } from '../core/providers/anthropic/response.js';
import { createStreamTranslator } from '../core/providers/anthropic/stream.js';
import type { TranslateContext } from '../core/providers/types.js';
import { SseParser, type SseEvent } from '../core/sse/sse-parser.js';

const NOW = 1_700_000_000;
const translator = anthropic.translate!;

function ctx(request: Record<string, unknown>, strict = true): TranslateContext {
  return { route: 'chat.completions', target: { provider: 'anthropic', apiKey: 'sk-ant-test' }, request, strict };
}

/** An Anthropic SSE event as the parser hands it over. */
function ev(type: string, data: Record<string, unknown>): SseEvent {
  return { event: type, data: JSON.stringify({ type, ...data }) };
}

function chunks(events: SseEvent[]): unknown[] {
  return events.map((e) => (e.data === '[DONE]' ? '[DONE]' : { event: e.event, body: JSON.parse(e.data) }));
}

t.test('adapter: id, base URL, auth headers, routes', async (t) => {
  t.equal(anthropic.id, 'anthropic');
  t.equal(anthropic.baseUrl, 'https://api.anthropic.com/v1');
  t.same(anthropic.authHeaders({ provider: 'anthropic', apiKey: 'sk-ant-1' }), {
    'anthropic-version': '2023-06-01',
    'x-api-key': 'sk-ant-1',
  });
  t.same([...translator.routes], ['chat.completions']);
  t.same([...(anthropic.routes ?? [])], ['chat.completions']);
});

t.test('request: system and developer messages, alternation, images, tools and tool results', async (t) => {
  const out = translator.request(
    ctx({
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: 'Hi' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in these?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Let me look.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{not json' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18C' },
        { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '10:00' }] },
        { role: 'user', content: 'Thanks' },
        { role: 'system', content: 'Late system note.' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather for a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        },
        { type: 'function', function: { name: 'get_time' } },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      stop: 'END',
      temperature: 0.2,
      top_p: 0.9,
      user: 'user-42',
      stream: true,
      stream_options: { include_usage: true },
      n: 1,
      logprobs: false,
      response_format: { type: 'text' },
      frequency_penalty: 0,
    }),
  );
  t.equal(out.path, '/messages');
  t.same(out.body, {
    model: 'claude-sonnet-4-5',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Hi' },
          { type: 'text', text: 'What is in these?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'get_time', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '18C' },
          { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: '10:00' }] },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ],
    system: [
      { type: 'text', text: 'You are terse.' },
      { type: 'text', text: 'Answer in French.' },
      { type: 'text', text: 'Late system note.' },
    ],
    max_tokens: 4096,
    stop_sequences: ['END'],
    temperature: 0.2,
    top_p: 0.9,
    stream: true,
    metadata: { user_id: 'user-42' },
    tools: [
      {
        name: 'get_weather',
        description: 'Weather for a city',
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
      { name: 'get_time', input_schema: { type: 'object', properties: {} } },
    ],
    tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
  });
  // Anthropic rejects unknown fields: none of OpenAI's extras may leak through.
  for (const key of ['n', 'logprobs', 'response_format', 'frequency_penalty', 'stream_options', 'parallel_tool_calls', 'stop', 'user']) {
    t.notOk(key in out.body, `${key} is not sent`);
  }
});

t.test('request: tool_choice strings, stop arrays, max_tokens precedence', async (t) => {
  const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }];
  const choice = (tool_choice: unknown, extra: Record<string, unknown> = {}): unknown =>
    translator.request(ctx({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools, tool_choice, ...extra })).body.tool_choice;
  t.same(choice('auto'), { type: 'auto' });
  t.same(choice('required'), { type: 'any' });
  t.same(choice('none'), { type: 'none' });
  t.same(choice(undefined, { parallel_tool_calls: false }), { type: 'auto', disable_parallel_tool_use: true });
  t.equal(choice(undefined), undefined);

  const body = (extra: Record<string, unknown>): Record<string, unknown> =>
    translator.request(ctx({ model: 'm', messages: [{ role: 'user', content: 'x' }], ...extra })).body;
  t.same(body({ stop: ['a', 'b'] }).stop_sequences, ['a', 'b']);
  t.equal(body({ stop: null }).stop_sequences, undefined);
  t.equal(body({}).max_tokens, 4096, 'Anthropic requires max_tokens: default when omitted');
  t.equal(body({ max_tokens: 100 }).max_tokens, 100);
  t.equal(body({ max_completion_tokens: 200, max_tokens: 100 }).max_tokens, 200);
  t.equal(body({ tool_choice: 'auto' }).tool_choice, undefined, 'no tool_choice without tools');
});

t.test('request: thinking passes only when strict compliance is off', async (t) => {
  const request = { model: 'm', messages: [{ role: 'user', content: 'x' }], thinking: { type: 'enabled', budget_tokens: 1024 } };
  t.equal(translator.request(ctx(request, true)).body.thinking, undefined);
  t.same(translator.request(ctx(request, false)).body.thinking, { type: 'enabled', budget_tokens: 1024 });
});

const TEXT_MESSAGE = {
  id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5-20250929',
  content: [
    { type: 'thinking', thinking: 'The user greets me.', signature: 'EqQBCgIYAhIM' },
    { type: 'text', text: 'Hello' },
    { type: 'text', text: ' there!' },
  ],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 12, cache_creation_input_tokens: 5, cache_read_input_tokens: 100, output_tokens: 6 },
};

t.test('response: text, usage with cached tokens, thinking strict and not', async (t) => {
  t.same(buildResponse(ctx({ model: 'claude' }), TEXT_MESSAGE, NOW), {
    id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
    object: 'chat.completion',
    created: NOW,
    model: 'claude-sonnet-4-5-20250929',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there!', refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 117, completion_tokens: 6, total_tokens: 123, prompt_tokens_details: { cached_tokens: 100 } },
  });
  const loose = buildResponse(ctx({ model: 'claude' }, false), TEXT_MESSAGE, NOW);
  t.same((loose.choices as { message: unknown }[])[0]?.message, {
    role: 'assistant',
    content: 'Hello there!',
    reasoning_content: 'The user greets me.',
    refusal: null,
  });
  const viaContract = translator.response(ctx({ model: 'claude' }), TEXT_MESSAGE);
  t.type(viaContract.created, 'number');
});

t.test('response: tool use and every finish reason', async (t) => {
  const toolMessage = {
    ...TEXT_MESSAGE,
    content: [
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { location: 'San Francisco, CA' } },
    ],
    stop_reason: 'tool_use',
    usage: { input_tokens: 10, output_tokens: 20 },
  };
  const out = buildResponse(ctx({ model: 'claude' }), toolMessage, NOW);
  t.same(out.choices, [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          {
            id: 'toolu_01A09q90qw90lq917835lq9',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA"}' },
          },
        ],
        refusal: null,
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    },
  ]);
  t.same(out.usage, { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30, prompt_tokens_details: { cached_tokens: 0 } });

  const reasons: [string, string][] = [
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
  ];
  for (const [anthropicReason, openai] of reasons) {
    const r = buildResponse(ctx({}), { ...TEXT_MESSAGE, stop_reason: anthropicReason }, NOW);
    t.equal((r.choices as { finish_reason: string }[])[0]?.finish_reason, openai, `${anthropicReason} → ${openai}`);
  }
});

/** A documented stream: text block, then a tool_use block whose arguments arrive in fragments. */
const TOOL_STREAM: SseEvent[] = [
  ev('message_start', {
    message: {
      id: 'msg_014p7gG3wDgGV9EUtLvnow3U',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5-20250929',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 472, cache_read_input_tokens: 28, cache_creation_input_tokens: 0, output_tokens: 2 },
    },
  }),
  ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  ev('ping', {}),
  ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Okay' } }),
  { data: '', comment: 'keepalive' },
  ev('content_block_stop', { index: 0 }),
  ev('content_block_start', {
    index: 1,
    content_block: { type: 'tool_use', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', input: {} },
  }),
  ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '' } }),
  ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"location":' } }),
  ev('ping', {}),
  ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: ' "Paris"}' } }),
  ev('content_block_stop', { index: 1 }),
  ev('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 89 } }),
  ev('message_stop', {}),
];

t.test('stream: full event sequence with a tool-call argument delta, exact chunks', async (t) => {
  const s = createStreamTranslator(ctx({ model: 'claude', stream: true, stream_options: { include_usage: true } }), NOW);
  const out = [...TOOL_STREAM.flatMap((e) => s.event(e)), ...s.end()];
  const head = { id: 'msg_014p7gG3wDgGV9EUtLvnow3U', object: 'chat.completion.chunk', created: NOW, model: 'claude-sonnet-4-5-20250929' };
  const choice = (delta: unknown, finish: string | null = null): unknown => ({
    event: undefined,
    body: { ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null },
  });
  t.same(chunks(out), [
    choice({ role: 'assistant', content: '' }),
    choice({ content: 'Okay' }),
    choice({ tool_calls: [{ index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
    choice({ tool_calls: [{ index: 0, function: { arguments: '{"location":' } }] }),
    choice({ tool_calls: [{ index: 0, function: { arguments: ' "Paris"}' } }] }),
    choice({}, 'tool_calls'),
    {
      event: undefined,
      body: {
        ...head,
        choices: [],
        usage: { prompt_tokens: 500, completion_tokens: 89, total_tokens: 589, prompt_tokens_details: { cached_tokens: 28 } },
      },
    },
    '[DONE]',
  ]);
  t.equal(out.filter((e) => e.data === '[DONE]').length, 1, 'end() after message_stop adds nothing');
  const args = out
    .filter((e) => e.data !== '[DONE]')
    .map((e) => JSON.parse(e.data).choices[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? '')
    .join('');
  t.same(JSON.parse(args), { location: 'Paris' }, 'argument fragments concatenate to valid JSON');
});

t.test('stream: no usage chunk without include_usage; thinking only when not strict; pings dropped', async (t) => {
  const thinkingStream: SseEvent[] = [
    ev('message_start', { message: { id: 'msg_1', model: 'claude-x', usage: { input_tokens: 3, output_tokens: 1 } } }),
    ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }),
    ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm.' } }),
    ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'EqQB' } }),
    ev('ping', {}),
    ev('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Hi' } }),
    ev('message_delta', { delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 4 } }),
    ev('message_stop', {}),
  ];
  const deltas = (strict: boolean): unknown[] => {
    const s = createStreamTranslator(ctx({ model: 'claude', stream: true }, strict), NOW);
    return thinkingStream.flatMap((e) => s.event(e)).map((e) => (e.data === '[DONE]' ? '[DONE]' : JSON.parse(e.data).choices[0]));
  };
  t.same(deltas(true), [
    { index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
    { index: 0, delta: { content: 'Hi' }, logprobs: null, finish_reason: null },
    { index: 0, delta: {}, logprobs: null, finish_reason: 'length' },
    '[DONE]',
  ]);
  t.same(deltas(false)[1], { index: 0, delta: { reasoning_content: 'Hmm.' }, logprobs: null, finish_reason: null });
});

t.test('stream: [DONE] from end() when message_stop never came', async (t) => {
  const s = createStreamTranslator(ctx({ model: 'claude', stream: true }), NOW);
  s.event(TOOL_STREAM[0]!);
  s.event(TOOL_STREAM[3]!);
  t.same(s.end(), [{ data: '[DONE]' }]);
  t.same(s.end(), [], 'only once');
});

t.test('stream: an error event becomes event: error with an OpenAI body, and no [DONE]', async (t) => {
  const s = createStreamTranslator(ctx({ model: 'claude', stream: true }), NOW);
  s.event(TOOL_STREAM[0]!);
  const out = s.event(ev('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }));
  t.same(chunks(out), [
    { event: 'error', body: { error: { message: 'Overloaded', type: 'overloaded_error', param: null, code: 'overloaded_error' } } },
  ]);
  t.same(s.event(TOOL_STREAM[3]!), [], 'nothing after the error');
  t.same(s.end(), [], 'the stream does not pretend to have succeeded');

  const bad = createStreamTranslator(ctx({ model: 'claude', stream: true }), NOW);
  t.equal(bad.event({ data: '{not json' })[0]?.event, 'error', 'a malformed event is a visible error too');
});

t.test('error: Anthropic error bodies map to the OpenAI shape', async (t) => {
  const c = ctx({ model: 'claude' });
  t.same(translator.error(c, 429, { type: 'error', error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' } }), {
    error: {
      message: 'Number of request tokens has exceeded your per-minute rate limit',
      type: 'rate_limit_error',
      param: null,
      code: 'rate_limit_error',
    },
  });
  t.same(translator.error(c, 529, 'upstream html'), {
    error: { message: 'upstream html', type: 'overloaded_error', param: null, code: 'overloaded_error' },
  });
  t.same(translator.error(c, 401, undefined), {
    error: { message: 'Anthropic answered HTTP 401', type: 'authentication_error', param: null, code: 'authentication_error' },
  });
});

t.test('mock: a translated request streams back through the stream translator', async (t) => {
  const mock = await startMockUpstream({ port: 0 });
  t.teardown(() => mock.close());
  const target = { provider: 'anthropic', apiKey: 'sk-ant-mock' };
  const c: TranslateContext = {
    route: 'chat.completions',
    target,
    strict: true,
    request: {
      model: 'claude-sonnet-4-5',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Tell me about the weather in Paris today please' },
      ],
    },
  };
  const call = translator.request(c);
  const post = (headers: Record<string, string>, extra: Record<string, string> = {}) =>
    undiciRequest(`${mock.url}/v1${call.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers, ...(call.headers ?? {}), ...extra },
      body: JSON.stringify(call.body),
    });

  const res = await post(anthropic.authHeaders(target), { 'x-mock-cache-read': '7', 'x-mock-chunks': '3' });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /text\/event-stream/);
  const parser = new SseParser();
  const s = translator.stream(c);
  const out: SseEvent[] = [];
  const upstream: string[] = [];
  for await (const piece of res.body) {
    for (const e of parser.push(piece as Buffer)) {
      upstream.push(e.event ?? '');
      out.push(...s.event(e));
    }
  }
  for (const e of parser.end()) out.push(...s.event(e));
  out.push(...s.end());

  t.same(upstream, [
    'message_start',
    'content_block_start',
    'ping',
    'content_block_delta',
    'content_block_delta',
    'content_block_delta',
    'content_block_stop',
    'message_delta',
    'message_stop',
  ]);
  t.equal(out.at(-1)?.data, '[DONE]');
  const bodies = out.slice(0, -1).map((e) => JSON.parse(e.data));
  const text = bodies.map((b) => b.choices[0]?.delta?.content ?? '').join('');
  t.equal(text, 'Mock reply to: Tell me about the weather in Paris today');
  t.equal(bodies.at(-2).choices[0].finish_reason, 'stop');
  const usage = bodies.at(-1).usage;
  t.equal(usage.prompt_tokens_details.cached_tokens, 7);
  t.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
  t.ok(bodies.every((b) => b.object === 'chat.completion.chunk' && b.id.startsWith('msg_') && b.model === 'claude-sonnet-4-5'));

  const denied = await post({ 'anthropic-version': '2023-06-01' });
  t.equal(denied.statusCode, 401);
  const deniedBody = await denied.body.json();
  t.same(deniedBody, { type: 'error', error: { type: 'authentication_error', message: 'x-api-key header is required' } });
  t.same(translator.error(c, 401, deniedBody).error, {
    message: 'x-api-key header is required',
    type: 'authentication_error',
    param: null,
    code: 'authentication_error',
  });
});

t.test('mock: non-stream tool_use and an injected 529 map back through the translator', async (t) => {
  const mock = await startMockUpstream({ port: 0 });
  t.teardown(() => mock.close());
  const target = { provider: 'anthropic', apiKey: 'sk-ant-mock' };
  const c = ctx({
    model: 'claude-haiku-4-5',
    messages: [{ role: 'user', content: 'Weather?' }],
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
  });
  const call = translator.request(c);
  const post = (extra: Record<string, string>) =>
    undiciRequest(`${mock.url}/v1${call.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...anthropic.authHeaders(target), ...extra },
      body: JSON.stringify(call.body),
    });

  const res = await post({ 'x-mock-tool-call': '1' });
  t.equal(res.statusCode, 200);
  const out = translator.response(c, await res.body.json());
  const choice = (out.choices as { message: { tool_calls: { function: unknown }[] }; finish_reason: string }[])[0];
  t.equal(choice?.finish_reason, 'tool_calls');
  t.same(choice?.message.tool_calls[0]?.function, { name: 'get_weather', arguments: '{"city":"Paris"}' });

  const overloaded = await post({ 'x-mock-status': '529' });
  t.equal(overloaded.statusCode, 529);
  t.same(translator.error(c, 529, await overloaded.body.json()), {
    error: { message: 'Overloaded', type: 'overloaded_error', param: null, code: 'overloaded_error' },
  });
});
