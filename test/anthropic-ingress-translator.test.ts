/**
 * The Anthropic ingress dialect, as plain functions: golden Anthropic requests → OpenAI chat
 * bodies (every 400 path included), OpenAI answers → Anthropic Messages, whole OpenAI streams →
 * the exact Anthropic event list, and error bodies. Streams are also checked against Anthropic's
 * block rules and fed to the official Anthropic SDK, whose accumulated message must equal the
 * non-stream translation of the same answer.
 */
import t from 'tap';
import Anthropic from '@anthropic-ai/sdk';
import { isGatewayError } from '../core/errors.js';
import {
  anthropicIngress,
  anthropicError,
  buildMessage,
  createStreamTranslator,
  type IdFactory,
} from '../core/ingress/anthropic/index.js';
import { serializeSse, type SseEvent } from '../core/sse/sse-parser.js';

type Json = Record<string, unknown>;

/** Deterministic ids: `msg_1`, `toolu_2`, … */
function counter(): IdFactory {
  let n = 0;
  return (prefix) => `${prefix}_${++n}`;
}

const strict = { strict: true };
const loose = { strict: false };

function request(body: Json, options = strict): Json {
  return anthropicIngress.request({ model: 'gpt-4o', max_tokens: 256, ...body }, options);
}

/** What `fn` threw, in the fields a 400 is judged by. */
function thrown(fn: () => unknown): Json {
  try {
    fn();
  } catch (err) {
    if (!isGatewayError(err)) return { notAGatewayError: String(err) };
    return { status: err.status, code: err.code, param: err.param, message: err.message };
  }
  return { threw: false };
}

t.test('request: scalars, system string, stream, metadata; Anthropic-only fields dropped', async (t) => {
  const out = anthropicIngress.request(
    {
      model: 'gpt-4o',
      max_tokens: 1024,
      system: 'You are terse.',
      messages: [{ role: 'user', content: 'Hello' }],
      temperature: 0.3,
      top_p: 0.9,
      stop_sequences: ['\n\nHuman:', 'END'],
      stream: true,
      metadata: { user_id: 'user-42' },
      service_tier: 'standard_only',
      container: 'container_01',
      mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'x' }],
      thinking: { type: 'enabled', budget_tokens: 2048 },
    },
    strict,
  );
  t.same(out, {
    model: 'gpt-4o',
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Hello' },
    ],
    max_tokens: 1024,
    temperature: 0.3,
    top_p: 0.9,
    stop: ['\n\nHuman:', 'END'],
    stream: true,
    stream_options: { include_usage: true },
    user: 'user-42',
  });
  for (const key of ['service_tier', 'container', 'mcp_servers', 'thinking', 'metadata', 'stop_sequences', 'reasoning_effort']) {
    t.notOk(key in out, `${key} is not sent`);
  }
  t.notOk('stream' in request({ messages: [], stream: false }), 'stream: false is the OpenAI default');
});

t.test('request: system blocks become one system message; user text blocks one string', async (t) => {
  const out = request({
    system: [
      { type: 'text', text: 'You are a pirate.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Answer in French.' },
    ],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Part one.' }, { type: 'text', text: 'Part two.', cache_control: { type: 'ephemeral' } }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Arr, ' }, { type: 'text', text: 'bonjour.' }] },
    ],
  });
  t.same(out.messages, [
    { role: 'system', content: 'You are a pirate.\n\nAnswer in French.' },
    { role: 'user', content: 'Part one.\n\nPart two.' },
    { role: 'assistant', content: 'Arr, bonjour.' },
  ]);
  t.same(request({ system: '', messages: [] }).messages, [], 'an empty system prompt adds no message');
});

t.test('request: images from base64 and url sources', async (t) => {
  const out = request({
    messages: [
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          { type: 'text', text: 'What is in these?' },
        ],
      },
    ],
  });
  t.same(out.messages, [
    {
      role: 'user',
      content: [
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
        { type: 'text', text: 'What is in these?' },
      ],
    },
  ]);
});

t.test('request: tool_use and tool_result round trip, tools, thinking blocks dropped', async (t) => {
  const out = request({
    tools: [
      {
        name: 'get_weather',
        description: 'Weather for a city',
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        cache_control: { type: 'ephemeral' },
      },
      { type: 'custom', name: 'get_time', input_schema: { type: 'object', properties: {} } },
    ],
    messages: [
      { role: 'user', content: 'Weather and time in Paris?' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Two tools needed.', signature: 'EqQBCgIYAhIM' },
          { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
          { type: 'text', text: 'Checking both.' },
          { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_02', name: 'get_time', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Here you go.' },
          { type: 'tool_result', tool_use_id: 'toolu_01', content: '18C, sunny' },
          { type: 'tool_result', tool_use_id: 'toolu_02', is_error: true, content: [{ type: 'text', text: 'clock' }, { type: 'text', text: 'unavailable' }] },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_03', name: 'get_time', input: { tz: 'CET' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_03' }] },
    ],
  });
  t.same(out.messages, [
    { role: 'user', content: 'Weather and time in Paris?' },
    {
      role: 'assistant',
      content: 'Checking both.',
      tool_calls: [
        { id: 'toolu_01', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'toolu_02', type: 'function', function: { name: 'get_time', arguments: '{}' } },
      ],
    },
    // Tool answers come first, in order, then the rest of the user turn.
    { role: 'tool', tool_call_id: 'toolu_01', content: '18C, sunny' },
    { role: 'tool', tool_call_id: 'toolu_02', content: 'clock\n\nunavailable' },
    { role: 'user', content: 'Here you go.' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'toolu_03', type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } }],
    },
    { role: 'tool', tool_call_id: 'toolu_03', content: '' },
  ]);
  t.same(out.tools, [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Weather for a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    },
    { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
  ]);
  t.same(
    request({ messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 'x', signature: 's' }] }] }).messages,
    [{ role: 'assistant', content: '' }],
    'an assistant turn of only thinking keeps its place with empty content',
  );
});

t.test('request: tool_choice variants and disable_parallel_tool_use', async (t) => {
  const tools = [{ name: 'f', input_schema: { type: 'object', properties: {} } }];
  const pick = (tool_choice: unknown): Json => {
    const out = request({ messages: [{ role: 'user', content: 'x' }], tools, tool_choice });
    return { tool_choice: out.tool_choice, parallel_tool_calls: out.parallel_tool_calls };
  };
  t.same(pick({ type: 'auto' }), { tool_choice: 'auto', parallel_tool_calls: undefined });
  t.same(pick({ type: 'any' }), { tool_choice: 'required', parallel_tool_calls: undefined });
  t.same(pick({ type: 'none' }), { tool_choice: 'none', parallel_tool_calls: undefined });
  t.same(pick({ type: 'tool', name: 'f' }), { tool_choice: { type: 'function', function: { name: 'f' } }, parallel_tool_calls: undefined });
  t.same(pick({ type: 'auto', disable_parallel_tool_use: true }), { tool_choice: 'auto', parallel_tool_calls: false });
  t.same(pick({ type: 'any', disable_parallel_tool_use: false }), { tool_choice: 'required', parallel_tool_calls: undefined });
  t.same(pick(undefined), { tool_choice: undefined, parallel_tool_calls: undefined });

  const noTools = request({ messages: [{ role: 'user', content: 'x' }], tools: [], tool_choice: { type: 'auto' } });
  t.notOk('tools' in noTools || 'tool_choice' in noTools, 'OpenAI rejects empty tools and tool_choice without tools');
});

t.test('request: thinking becomes reasoning_effort only without strict compliance', async (t) => {
  const effort = (budget_tokens: number, options = loose): unknown =>
    request({ messages: [{ role: 'user', content: 'x' }], thinking: { type: 'enabled', budget_tokens } }, options).reasoning_effort;
  t.equal(effort(1024), 'low');
  t.equal(effort(4096), 'low');
  t.equal(effort(4097), 'medium');
  t.equal(effort(16384), 'medium');
  t.equal(effort(16385), 'high');
  t.equal(effort(32000, strict), undefined, 'strict: dropped');
  t.notOk('reasoning_effort' in request({ messages: [], thinking: { type: 'disabled' } }, loose));
});

t.test('request: input that cannot be mapped is a 400 naming the param', async (t) => {
  const rejects = (fn: () => unknown, param: string, message: RegExp, code = 'bad_request'): void => {
    t.match(thrown(fn), { status: 400, code, param, message }, param);
  };
  // Input Anthropic accepts but OpenAI's chat API has no way to express.
  const inexpressible = (fn: () => unknown, param: string, message: RegExp): void => rejects(fn, param, message, 'unsupported_parameter');
  const user = (content: unknown): Json => ({ messages: [{ role: 'user', content: 'Hi' }, { role: 'user', content }] });
  rejects(() => request({ messages: 'Hi' }), 'messages', /messages/);
  rejects(() => request({ messages: [{ role: 'system', content: 'x' }] }), 'messages[0].role', /"user" or "assistant"/);
  inexpressible(
    () => request(user([{ type: 'text', text: 'Read this' }, { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } }])),
    'messages[1].content[1]',
    /content block type that cannot be sent/,
  );
  inexpressible(() => request(user([{ type: 'search_result', source: 'x', title: 't', content: [] }])), 'messages[1].content[0]', /content block type that cannot be sent/);
  inexpressible(
    () =>
      request(
        user([
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01',
            content: [{ type: 'text', text: 'chart:' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA==' } }],
          },
        ]),
      ),
    'messages[1].content[0].content[1]',
    /images inside a tool_result/,
  );
  rejects(() => request(user([{ type: 'tool_result', content: 'x' }])), 'messages[1].content[0].tool_use_id', /tool_use_id/);
  rejects(() => request(user([{ type: 'image', source: { type: 'file', file_id: 'file_01' } }])), 'messages[1].content[0].source', /base64 or url/);
  inexpressible(() => request(user([{ type: 'tool_use', id: 'toolu_01', name: 'f', input: {} }])), 'messages[1].content[0]', /cannot be sent to this provider in user messages/);
  rejects(() => request(user(42)), 'messages[1].content', /string or an array/);
  rejects(() => request(user(['text'])), 'messages[1].content[0]', /content block/);
  inexpressible(
    () => request({ messages: [{ role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: {} }] }] }),
    'messages[0].content[0]',
    /cannot be sent to this provider in assistant messages/,
  );
  rejects(() => request({ messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', input: {} }] }] }), 'messages[0].content[0].name', /name/);
  rejects(() => request({ messages: [], system: [{ type: 'image', source: {} }] }), 'system[0]', /text block/);
  inexpressible(
    () =>
      request({
        messages: [],
        tools: [
          { name: 'f', input_schema: { type: 'object' } },
          { type: 'web_search_20250305', name: 'web_search', max_uses: 5 },
        ],
      }),
    'tools[1]',
    /tools\[1\] is a server tool/,
  );
  rejects(() => request({ messages: [], tools: [{ name: 'f' }] }), 'tools[0].input_schema', /JSON Schema/);
  rejects(() => request({ messages: [], tools: [{ name: 'f', input_schema: {} }], tool_choice: { type: 'sometimes' } }), 'tool_choice.type', /"auto", "any"/);
  rejects(() => request({ messages: [], tools: [{ name: 'f', input_schema: {} }], tool_choice: { type: 'tool' } }), 'tool_choice.name', /name/);
  rejects(() => request({ messages: [], stop_sequences: 'END' }), 'stop_sequences', /array/);
  rejects(() => request({ messages: [], thinking: { type: 'enabled' } }, loose), 'thinking.budget_tokens', /number/);
});

/** An OpenAI answer as OpenAI documents it. */
function completion(message: Json, finish_reason: string, extra: Json = {}): Json {
  return {
    id: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT',
    object: 'chat.completion',
    created: 1_741_569_952,
    model: 'gpt-4o-2024-08-06',
    choices: [{ index: 0, message: { role: 'assistant', refusal: null, annotations: [], ...message }, logprobs: null, finish_reason }],
    usage: {
      prompt_tokens: 1117,
      completion_tokens: 46,
      total_tokens: 1163,
      prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    },
    service_tier: 'default',
    ...extra,
  };
}

t.test('response: text with cached usage', async (t) => {
  t.same(anthropicIngress.response(completion({ content: 'Hello there!' }, 'stop'), { model: 'gpt-4o' }, strict), {
    id: 'msg_B9MBs8CjcvOU2jLn4n570S5qMJKcT',
    type: 'message',
    role: 'assistant',
    model: 'gpt-4o-2024-08-06',
    content: [{ type: 'text', text: 'Hello there!' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 93, output_tokens: 46, cache_read_input_tokens: 1024, cache_creation_input_tokens: 0 },
  });
});

t.test('response: tool calls, reasoning strict and not, ids when missing', async (t) => {
  const body = completion(
    {
      content: null,
      reasoning_content: 'Need the weather tool.',
      tool_calls: [
        { id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { type: 'function', function: { name: 'get_time', arguments: '{not json' } },
      ],
    },
    'tool_calls',
    { id: undefined, usage: undefined, model: undefined },
  );
  const out = buildMessage(body, { model: 'my-alias' }, { strict: false, newId: counter() });
  t.same(out, {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'my-alias',
    content: [
      { type: 'thinking', thinking: 'Need the weather tool.', signature: '' },
      { type: 'tool_use', id: 'call_abc', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  });
  const strictOut = buildMessage(body, {}, { strict: true, newId: counter() });
  t.same(
    (strictOut.content as Json[]).map((b) => b.type),
    ['tool_use', 'tool_use'],
    'strict: no thinking block',
  );
  const random = anthropicIngress.response({ ...body, id: '' }, {}, strict);
  t.match(random.id, /^msg_[A-Za-z0-9_-]{24}$/, 'a random id when upstream sent none');
});

t.test('response: stop reasons, empty answers, refusals, legacy function_call', async (t) => {
  const reasons: [string, string][] = [
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['function_call', 'tool_use'],
    ['content_filter', 'refusal'],
    ['something_new', 'end_turn'],
  ];
  for (const [finish, stop] of reasons) {
    t.equal(anthropicIngress.response(completion({ content: 'x' }, finish), {}, strict).stop_reason, stop, `${finish} → ${stop}`);
  }
  const empty = anthropicIngress.response(completion({ content: '' }, 'stop'), {}, strict);
  t.same([empty.content, empty.stop_reason], [[], 'end_turn'], 'no text, no tools: content [] like Anthropic');

  const stopWithTools = completion({ content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, 'stop');
  t.equal(anthropicIngress.response(stopWithTools, {}, strict).stop_reason, 'tool_use', 'tool calls win over a plain stop');

  const refusal = anthropicIngress.response(completion({ content: null, refusal: "I'm sorry, I can't help with that." }, 'stop'), {}, strict);
  t.same([refusal.content, refusal.stop_reason], [[{ type: 'text', text: "I'm sorry, I can't help with that." }], 'refusal']);

  const legacy = buildMessage(completion({ content: null, function_call: { name: 'f', arguments: '{"a":1}' } }, 'function_call'), {}, { strict: true, newId: counter() });
  t.same(legacy.content, [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } }]);

  try {
    anthropicIngress.response({ object: 'chat.completion', choices: [] }, {}, strict);
    t.fail('expected a throw');
  } catch (err) {
    t.match(err, { status: 502, code: 'upstream_invalid_response' }, 'an answer without a choice is not passed off as empty');
  }
});

/** An OpenAI chunk as OpenAI sends it. */
function chunk(delta: Json | null, finish_reason: string | null = null, extra: Json = {}): SseEvent {
  const choices = delta === null ? [] : [{ index: 0, delta, logprobs: null, finish_reason }];
  return {
    data: JSON.stringify({
      id: 'chatcmpl-stream1',
      object: 'chat.completion.chunk',
      created: 1_741_569_952,
      model: 'gpt-4o-2024-08-06',
      system_fingerprint: 'fp_1',
      choices,
      usage: null,
      ...extra,
    }),
  };
}

const DONE: SseEvent = { data: '[DONE]' };

const USAGE_CHUNK = chunk(null, null, {
  usage: { prompt_tokens: 120, completion_tokens: 40, total_tokens: 160, prompt_tokens_details: { cached_tokens: 100 } },
});

/** Text, then two tool calls whose arguments arrive in fragments, finish, usage, [DONE]. */
const TOOL_STREAM: SseEvent[] = [
  chunk({ role: 'assistant', content: '', refusal: null }),
  chunk({ content: 'Let me ' }),
  { data: '', comment: 'keepalive' },
  chunk({ content: 'check.' }),
  chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
  chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } }] }),
  chunk({ tool_calls: [{ index: 1, function: { arguments: '{"tz":"CET"}' } }] }),
  chunk({}, 'tool_calls'),
  USAGE_CHUNK,
  DONE,
];

/** The same answer, non-streamed. */
const TOOL_COMPLETION = {
  id: 'chatcmpl-stream1',
  object: 'chat.completion',
  model: 'gpt-4o-2024-08-06',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'Let me check.',
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } },
        ],
      },
      finish_reason: 'tool_calls',
    },
  ],
  usage: { prompt_tokens: 120, completion_tokens: 40, total_tokens: 160, prompt_tokens_details: { cached_tokens: 100 } },
};

function events(out: SseEvent[]): unknown[] {
  return out.map((e) => {
    const data = JSON.parse(e.data) as Json;
    return { event: e.event, ...data };
  });
}

/**
 * Anthropic's block rules: message_start first; blocks numbered 0, 1, 2… each started once and
 * stopped once, deltas only inside the open block; message_delta then message_stop last; or an
 * error event last.
 */
function protocolProblems(out: SseEvent[]): string[] {
  const list = events(out) as { event: string; type: string; index?: number }[];
  let open: number | undefined;
  let next = 0;
  const problems: string[] = [];
  list.forEach((e, i) => {
    if (e.event !== e.type) problems.push(`${i}: event name ${e.event} ≠ type ${e.type}`);
    if (i === 0 && e.type !== 'message_start' && e.type !== 'error') problems.push('does not start with message_start');
    if (e.type === 'error' && i !== list.length - 1) problems.push('events after an error');
    if (e.type === 'content_block_start') {
      if (open !== undefined) problems.push(`${i}: block ${e.index} starts while ${open} is open`);
      if (e.index !== next) problems.push(`${i}: block ${e.index} out of sequence`);
      open = e.index;
      next++;
    }
    if (e.type === 'content_block_delta' && e.index !== open) problems.push(`${i}: delta for block ${e.index}, open ${open}`);
    if (e.type === 'content_block_stop') {
      if (e.index !== open) problems.push(`${i}: stop for block ${e.index}, open ${open}`);
      open = undefined;
    }
    if (e.type === 'message_delta' && open !== undefined) problems.push(`${i}: message_delta with block ${open} open`);
  });
  const types = list.map((e) => e.type);
  if (types.at(-1) !== 'error' && types.slice(-2).join() !== 'message_delta,message_stop') problems.push('does not end with message_delta, message_stop');
  return problems;
}

function run(input: SseEvent[], options = strict): { out: SseEvent[]; end: SseEvent[] } {
  const s = createStreamTranslator({ model: 'gpt-4o', stream: true }, { ...options, newId: counter() });
  const out = input.flatMap((e) => s.event(e));
  const end = s.end();
  return { out: [...out, ...end], end };
}

t.test('stream: text then two tool calls with argument fragments, usage, [DONE]: exact events', async (t) => {
  const { out, end } = run(TOOL_STREAM);
  t.same(events(out), [
    {
      event: 'message_start',
      type: 'message_start',
      message: {
        id: 'msg_stream1',
        type: 'message',
        role: 'assistant',
        model: 'gpt-4o-2024-08-06',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0 },
      },
    },
    { event: 'content_block_start', type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { event: 'content_block_delta', type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me ' } },
    { event: 'content_block_delta', type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'check.' } },
    { event: 'content_block_stop', type: 'content_block_stop', index: 0 },
    {
      event: 'content_block_start',
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: 'call_a', name: 'get_weather', input: {} },
    },
    { event: 'content_block_delta', type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":' } },
    { event: 'content_block_delta', type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } },
    { event: 'content_block_stop', type: 'content_block_stop', index: 1 },
    {
      event: 'content_block_start',
      type: 'content_block_start',
      index: 2,
      content_block: { type: 'tool_use', id: 'call_b', name: 'get_time', input: {} },
    },
    { event: 'content_block_delta', type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"tz":"CET"}' } },
    { event: 'content_block_stop', type: 'content_block_stop', index: 2 },
    {
      event: 'message_delta',
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { input_tokens: 20, output_tokens: 40, cache_read_input_tokens: 100, cache_creation_input_tokens: 0 },
    },
    { event: 'message_stop', type: 'message_stop' },
  ]);
  t.same(end, [], 'end() after [DONE] adds nothing');
  t.same(protocolProblems(out), [], 'Anthropic stream rules hold');
});

t.test('stream: events after the end are ignored', async (t) => {
  const s = createStreamTranslator({ model: 'gpt-4o' }, strict);
  TOOL_STREAM.forEach((e) => s.event(e));
  t.same(s.event(chunk({ content: 'late' })), []);
  t.same(s.event(DONE), []);
  t.same(s.end(), []);
});

/** An Anthropic SDK client whose every call is answered with these events. */
function sdkOver(out: SseEvent[]): Anthropic {
  const body = out.map(serializeSse).join('');
  return new Anthropic({
    apiKey: 'sk-test',
    baseURL: 'http://gateway.invalid',
    maxRetries: 0,
    fetch: async () => new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
  });
}

const SDK_PARAMS = { model: 'gpt-4o', max_tokens: 256, messages: [{ role: 'user' as const, content: 'Weather?' }] };

t.test('stream: the official Anthropic SDK accumulates the same message as the non-stream answer', async (t) => {
  const stream = sdkOver(run(TOOL_STREAM).out).messages.stream(SDK_PARAMS);
  const texts: string[] = [];
  stream.on('text', (text) => texts.push(text));
  // The SDK adds its own `parsed_output` (structured outputs) to what it accumulated.
  const { parsed_output: _parsed, ...final } = (await stream.finalMessage()) as unknown as Json;
  t.same(texts, ['Let me ', 'check.']);
  const expected = anthropicIngress.response(TOOL_COMPLETION, { model: 'gpt-4o' }, strict);
  t.same(final, expected, 'stream and non-stream translations agree');

  const reasoning = [chunk({ role: 'assistant', reasoning_content: 'Hmm.' }), chunk({ content: 'Hi' }), chunk({}, 'stop'), USAGE_CHUNK, DONE];
  const { parsed_output: _p, ...thought } = (await sdkOver(run(reasoning, loose).out).messages.stream(SDK_PARAMS).finalMessage()) as unknown as Json;
  const same = { ...TOOL_COMPLETION, choices: [{ index: 0, message: { role: 'assistant', content: 'Hi', reasoning_content: 'Hmm.' }, finish_reason: 'stop' }] };
  t.same(thought, anthropicIngress.response(same, {}, loose), 'thinking blocks agree too (empty signature)');
});

t.test('stream: the official Anthropic SDK raises the translated error event', async (t) => {
  const s = createStreamTranslator({ model: 'gpt-4o' }, strict);
  const out = [...s.event(TOOL_STREAM[1]!), ...s.event({ event: 'error', data: JSON.stringify({ error: { message: 'slow down', type: 'rate_limit_error' } }) })];
  const failure = await sdkOver(out).messages.stream(SDK_PARAMS).finalMessage().then(
    () => 'no error',
    (err: unknown) => err,
  );
  t.match(failure, { error: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } } }, 'the SDK reads our error body');
});

t.test('stream: reasoning becomes a thinking block only without strict compliance', async (t) => {
  const input = [
    chunk({ role: 'assistant', content: null, reasoning_content: 'Think' }),
    chunk({ reasoning_content: 'ing.' }),
    chunk({ content: 'Answer.' }),
    chunk({}, 'length'),
    DONE,
  ];
  const types = (out: SseEvent[]): unknown[] =>
    events(out).map((e) => {
      const x = e as { type: string; index?: number; delta?: Json; content_block?: Json };
      return [x.type, x.index, x.delta ?? x.content_block ?? null];
    });
  const { out } = run(input, loose);
  t.same(types(out), [
    ['message_start', undefined, null],
    ['content_block_start', 0, { type: 'thinking', thinking: '', signature: '' }],
    ['content_block_delta', 0, { type: 'thinking_delta', thinking: 'Think' }],
    ['content_block_delta', 0, { type: 'thinking_delta', thinking: 'ing.' }],
    ['content_block_stop', 0, null],
    ['content_block_start', 1, { type: 'text', text: '' }],
    ['content_block_delta', 1, { type: 'text_delta', text: 'Answer.' }],
    ['content_block_stop', 1, null],
    ['message_delta', undefined, { stop_reason: 'max_tokens', stop_sequence: null }],
    ['message_stop', undefined, null],
  ]);
  t.same(protocolProblems(out), [], 'Anthropic stream rules hold');
  const strictOut = run(input, strict).out;
  t.same(
    types(strictOut).map((e) => (e as unknown[])[0]),
    ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'],
    'strict: the text block alone, at index 0',
  );
  t.same(protocolProblems(strictOut), [], 'Anthropic stream rules hold');
});

t.test('stream: without [DONE], end() closes the message when a finish_reason came', async (t) => {
  const { out, end } = run([chunk({ role: 'assistant', content: 'Hi' }), chunk({}, 'stop'), USAGE_CHUNK]);
  t.same(
    events(end),
    [
      {
        event: 'message_delta',
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { input_tokens: 20, output_tokens: 40, cache_read_input_tokens: 100, cache_creation_input_tokens: 0 },
      },
      { event: 'message_stop', type: 'message_stop' },
    ],
    'the block was already closed by finish_reason: no second stop',
  );
  t.same(protocolProblems(out), [], 'Anthropic stream rules hold');
});

t.test('stream: a stream cut short (no finish_reason, no [DONE]) ends with an error, not message_stop', async (t) => {
  const { out, end } = run([chunk({ role: 'assistant', content: 'Hal' })]);
  t.same(events(end), [
    { event: 'error', type: 'error', error: { type: 'api_error', message: 'The upstream stream ended before the answer was complete.' } },
  ]);
  t.same(protocolProblems(out), [], 'Anthropic stream rules hold');
});

t.test('stream: an upstream error event mid-stream becomes an Anthropic error and nothing follows', async (t) => {
  const s = createStreamTranslator({ model: 'gpt-4o' }, strict);
  s.event(TOOL_STREAM[0]!);
  s.event(TOOL_STREAM[1]!);
  const failure = {
    event: 'error',
    data: JSON.stringify({ error: { message: 'The upstream failed in the middle of the response.', type: 'upstream_error', param: null, code: 'upstream_stream_error' } }),
  };
  t.same(events(s.event(failure)), [
    { event: 'error', type: 'error', error: { type: 'api_error', message: 'The upstream failed in the middle of the response.' } },
  ]);
  t.same(s.event(TOOL_STREAM[3]!), [], 'nothing after the error');
  t.same(s.event(DONE), []);
  t.same(s.end(), [], 'no message_stop pretending success');

  const overloaded = createStreamTranslator({ model: 'gpt-4o' }, strict);
  t.same(events(overloaded.event({ event: 'error', data: JSON.stringify({ error: { message: 'busy', type: 'overloaded_error' } }) })), [
    { event: 'error', type: 'error', error: { type: 'overloaded_error', message: 'busy' } },
  ]);
  const inData = createStreamTranslator({ model: 'gpt-4o' }, strict);
  t.same(events(inData.event({ data: JSON.stringify({ error: { message: 'Rate limited', type: 'rate_limit_error' } }) })), [
    { event: 'error', type: 'error', error: { type: 'rate_limit_error', message: 'Rate limited' } },
  ], 'an error sent as a data chunk');
  const garbage = createStreamTranslator({ model: 'gpt-4o' }, strict);
  t.same((events(garbage.event({ data: '{not json' }))[0] as Json).type, 'error', 'a malformed chunk is a visible error');
});

t.test('stream: comments, [DONE] before any chunk, ids and repeated ids, interleaved arguments', async (t) => {
  const s = createStreamTranslator({ model: 'gpt-4o' }, { strict: true, newId: counter() });
  t.same(s.event({ data: '', comment: 'ping' }), [], 'pings send nothing');
  const onlyDone = events(s.event(DONE)) as { type: string; message?: Json }[];
  t.same(onlyDone.map((e) => e.type), ['message_start', 'message_delta', 'message_stop'], 'an empty answer is still a whole message');
  t.same(onlyDone[0]?.message?.id, 'msg_1');
  t.same(onlyDone[0]?.message?.model, 'gpt-4o', 'the requested model when no chunk named one');

  // Some servers repeat the id on every fragment and omit `index`; some send a whole call per chunk.
  const { out } = run([
    chunk({ tool_calls: [{ id: 'call_x', function: { name: 'f', arguments: '{"a":' } }] }),
    chunk({ tool_calls: [{ id: 'call_x', function: { arguments: '1}' } }] }),
    chunk({ tool_calls: [{ function: { name: 'g', arguments: '{}' } }, { function: { name: 'h', arguments: '{}' } }] }),
    chunk({}, 'stop'),
    DONE,
  ]);
  const starts = (events(out) as { type: string; content_block?: Json }[]).filter((e) => e.type === 'content_block_start').map((e) => e.content_block);
  t.same(starts, [
    { type: 'tool_use', id: 'call_x', name: 'f', input: {} },
    { type: 'tool_use', id: 'toolu_1', name: 'h', input: {} },
  ], 'same id continues a call; a new index without id starts one with a made-up id');
  t.equal((events(out).at(-2) as { delta: Json }).delta.stop_reason, 'tool_use', 'tool calls win over a plain stop');
  t.same(protocolProblems(out), [], 'Anthropic stream rules hold');

  const interleaved = run([
    chunk({ tool_calls: [{ index: 0, id: 'call_1', function: { name: 'f', arguments: '{"a":' } }] }),
    chunk({ tool_calls: [{ index: 1, id: 'call_2', function: { name: 'g', arguments: '{}' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
    chunk({}, 'tool_calls'),
    DONE,
  ]).out;
  t.match(events(interleaved).at(-1), { type: 'error', error: { type: 'api_error', message: /interleaved/ } }, 'arguments are never dropped silently');
  t.same(protocolProblems(interleaved), [], 'Anthropic stream rules hold');
});

t.test('stream: refusal deltas are text with stop_reason refusal', async (t) => {
  const { out } = run([chunk({ role: 'assistant', content: null, refusal: 'I cannot ' }), chunk({ refusal: 'help.' }), chunk({}, 'stop'), DONE]);
  const list = events(out) as { type: string; delta?: Json }[];
  t.same(list.filter((e) => e.type === 'content_block_delta').map((e) => e.delta!.text), ['I cannot ', 'help.']);
  t.equal(list.at(-2)!.delta!.stop_reason, 'refusal');
  t.same(protocolProblems(out), [], 'Anthropic stream rules hold');
});

t.test('error: status decides the Anthropic type; message from the body or the status', async (t) => {
  const body = (message: string): Json => ({ error: { message, type: 'whatever', param: null, code: 'x' } });
  const table: [number, string][] = [
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [402, 'billing_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [408, 'invalid_request_error'],
    [413, 'request_too_large'],
    [422, 'invalid_request_error'],
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [502, 'api_error'],
    [503, 'overloaded_error'],
    [504, 'timeout_error'],
    [529, 'overloaded_error'],
  ];
  for (const [status, type] of table) {
    t.same(anthropicIngress.error(status, body(`m${status}`)), { type: 'error', error: { type, message: `m${status}` } }, `${status} → ${type}`);
  }
  t.same(anthropicError(500, '<html>Bad Gateway</html>'), { type: 'error', error: { type: 'api_error', message: 'The upstream answered HTTP 500.' } });
  t.same(anthropicError(401, undefined).error.message, 'The upstream answered HTTP 401.');
  t.same(anthropicError(400, { object: 'error', message: 'max_tokens is too large', type: 'BadRequestError', code: 400 }).error, {
    type: 'invalid_request_error',
    message: 'max_tokens is too large',
  }, 'vLLM puts the message at the top level');
  t.same(anthropicError(429, { error: 'Too many requests' }).error.message, 'Too many requests');
});
