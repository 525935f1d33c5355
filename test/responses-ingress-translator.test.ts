/**
 * Golden tests of the Responses ingress translation (core/ingress/responses), as plain functions:
 * a Responses request → the chat completions body, a chat.completion → the response object, and
 * chat chunks → the exact Responses event sequence, with ids and times fixed.
 */
import t from 'tap';
import { buildChatRequest, buildResponse, createStreamTranslator, inputItems, responsesError, withHistory, type IdFactory } from '../core/ingress/responses/index.js';
import type { SseEvent } from '../core/sse/sse-parser.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function ids(): IdFactory {
  const counts = new Map<string, number>();
  return (prefix) => {
    const n = (counts.get(prefix) ?? 0) + 1;
    counts.set(prefix, n);
    return `${prefix}_${n}`;
  };
}

const fixed = () => ({ strict: true, newId: ids(), now: () => 1_700_000_000 });

function codeOf(fn: () => unknown): { code?: string; param?: string; status?: number } {
  try {
    fn();
    return {};
  } catch (err) {
    return err as { code: string; param: string; status: number };
  }
}

t.test('request: input, instructions, tools, formats, parameters', async (t) => {
  t.same(buildChatRequest({ model: 'm', input: 'Hi' }), { model: 'm', messages: [{ role: 'user', content: 'Hi' }] }, 'a string input is one user message');

  const chat = buildChatRequest({
    model: 'm',
    instructions: 'Be brief.',
    input: [
      { role: 'developer', content: 'Answer in French.' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is ' }, { type: 'input_text', text: 'this?' }] },
      { role: 'user', content: [{ type: 'input_text', text: 'Look:' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' }] },
      { type: 'message', role: 'assistant', id: 'msg_1', status: 'completed', content: [{ type: 'output_text', text: 'Checking.', annotations: [] }] },
      { type: 'function_call', id: 'fc_1', call_id: 'call_a', name: 'lookup', arguments: '{"q":"x"}' },
      { type: 'function_call', call_id: 'call_b', name: 'lookup', arguments: '{"q":"y"}' },
      { type: 'reasoning', id: 'rs_1', summary: [] },
      { type: 'function_call_output', call_id: 'call_a', output: 'A' },
      { type: 'function_call_output', call_id: 'call_b', output: [{ type: 'input_text', text: 'B' }] },
    ],
    tools: [{ type: 'function', name: 'lookup', description: 'Look up', parameters: { type: 'object' }, strict: true }],
    tool_choice: 'required',
    text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
    max_output_tokens: 64,
    temperature: 0.5,
    top_p: 0.8,
    user: 'u-1',
    parallel_tool_calls: false,
    reasoning: { effort: 'low' },
    stream: true,
    store: true,
    metadata: { a: 'b' },
    truncation: 'disabled',
  });
  t.same(chat, {
    model: 'm',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: 'What is this?' },
      { role: 'user', content: [{ type: 'text', text: 'Look:' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } }] },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } },
          { id: 'call_b', type: 'function', function: { name: 'lookup', arguments: '{"q":"y"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'A' },
      { role: 'tool', tool_call_id: 'call_b', content: 'B' },
    ],
    max_tokens: 64,
    temperature: 0.5,
    top_p: 0.8,
    user: 'u-1',
    parallel_tool_calls: false,
    stream: true,
    stream_options: { include_usage: true },
    response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
    reasoning_effort: 'low',
    tools: [{ type: 'function', function: { name: 'lookup', description: 'Look up', parameters: { type: 'object' }, strict: true } }],
    tool_choice: 'required',
  });

  t.same(buildChatRequest({ model: 'm', input: 'x', text: { format: { type: 'json_object' } } }).response_format, { type: 'json_object' });
  t.notOk('response_format' in buildChatRequest({ model: 'm', input: 'x', text: { format: { type: 'text' } } }));
  t.same(buildChatRequest({ model: 'm', input: 'x', tools: [{ type: 'function', name: 'f' }], tool_choice: { type: 'function', name: 'f' } }).tool_choice, { type: 'function', function: { name: 'f' } });
  t.same(buildChatRequest({ model: 'm', input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' }] }).messages, [
    { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
  ], 'a call with no text before it is an assistant turn of its own');
});

t.test('request: what cannot be expressed is a 4xx naming it, never dropped', async (t) => {
  const cases: Array<[Json, string, string]> = [
    [{ tools: [{ type: 'file_search', vector_store_ids: ['vs'] }] }, 'tools[0].type', 'unsupported_parameter'],
    [{ tools: [{ type: 'function', name: 'f' }], tool_choice: { type: 'web_search_preview' } }, 'tool_choice', 'unsupported_parameter'],
    [{ input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0].type', 'unsupported_parameter'],
    [{ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] }] }, 'input[0].content[0].image_url', 'unsupported_parameter'],
    [{ input: [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_image', image_url: 'x' }] }] }, 'input[0].output[0]', 'unsupported_parameter'],
    [{ truncation: 'auto' }, 'truncation', 'unsupported_parameter'],
    [{ include: ['reasoning.encrypted_content'] }, 'include', 'unsupported_parameter'],
    [{ text: { verbosity: 'low' } }, 'text.verbosity', 'unsupported_parameter'],
    [{ reasoning: { summary: 'auto' } }, 'reasoning.summary', 'unsupported_parameter'],
    [{ top_logprobs: 2 }, 'top_logprobs', 'unsupported_parameter'],
    [{ max_tool_calls: 3 }, 'max_tool_calls', 'unsupported_parameter'],
    [{ service_tier: 'flex' }, 'service_tier', 'unsupported_parameter'],
    [{ previous_response_id: 'resp_x' }, 'previous_response_id', 'previous_response_not_found'],
    [{ input: [{ role: 'robot', content: 'x' }] }, 'input[0].role', 'bad_request'],
    [{ input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'input[0].call_id', 'bad_request'],
    [{ text: { format: { type: 'json_schema', schema: {} } } }, 'text.format.name', 'bad_request'],
    [{ input: [] }, 'input', 'bad_request'],
  ];
  for (const [extra, param, code] of cases) {
    const err = codeOf(() => buildChatRequest({ model: 'm', input: 'x', ...extra }));
    t.match(err, { code, param }, `${JSON.stringify(extra)} → ${code} ${param}`);
  }
  t.equal(codeOf(() => buildChatRequest({ model: 'm', input: 'x', previous_response_id: 'resp_x' })).status, 404);
});

t.test('response: text, refusal, function calls, incomplete, usage', async (t) => {
  const request = { model: 'm', input: 'Hi', instructions: 'Be brief.', tools: [{ type: 'function', name: 'f' }], metadata: { k: 'v' }, store: false };
  const response = buildResponse(
    {
      id: 'chatcmpl-1',
      model: 'm-2025',
      choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: 'Let me check.', tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] } }],
      usage: { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27, prompt_tokens_details: { cached_tokens: 5 }, completion_tokens_details: { reasoning_tokens: 2 } },
    },
    request,
    fixed(),
  );
  t.same(response, {
    id: 'resp_1',
    object: 'response',
    created_at: 1_700_000_000,
    status: 'completed',
    background: false,
    error: null,
    incomplete_details: null,
    instructions: 'Be brief.',
    max_output_tokens: null,
    model: 'm-2025',
    output: [
      { id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Let me check.', annotations: [], logprobs: [] }] },
      { id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'call_9', name: 'f', arguments: '{"a":1}' },
    ],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [{ type: 'function', name: 'f' }],
    top_p: 1,
    truncation: 'disabled',
    usage: { input_tokens: 20, input_tokens_details: { cached_tokens: 5 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 2 }, total_tokens: 27 },
    user: null,
    metadata: { k: 'v' },
  });

  const cut = buildResponse({ choices: [{ finish_reason: 'length', message: { content: 'Once upon' } }] }, { model: 'm', input: 'x', max_output_tokens: 3 }, fixed());
  t.equal(cut.status, 'incomplete');
  t.same(cut.incomplete_details, { reason: 'max_output_tokens' });
  t.equal((cut.output as Json[])[0]!.status, 'incomplete');
  t.same(cut.usage, { input_tokens: 0, input_tokens_details: { cached_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 }, 'no usage reads as zeros, not a crash');

  const refused = buildResponse({ choices: [{ finish_reason: 'stop', message: { content: null, refusal: 'I cannot.' } }] }, { model: 'm', input: 'x' }, fixed());
  t.same((refused.output as Json[])[0]!.content, [{ type: 'refusal', refusal: 'I cannot.' }]);

  const seen: Json[] = [];
  const told = buildResponse({ choices: [{ finish_reason: 'stop', message: { content: 'ok' } }] }, { model: 'm', input: 'x' }, { ...fixed(), onAnswer: (r) => seen.push(r) });
  t.same(seen, [told], 'the store is told the answer once');
});

function run(chunks: Array<Json | string>, request: Json = { model: 'm', input: 'Hi', stream: true }, options: Json = {}): Json[] {
  const tr = createStreamTranslator(request, { ...fixed(), ...options });
  const events: SseEvent[] = [];
  for (const c of chunks) events.push(...tr.event(typeof c === 'string' ? { data: c } : { data: JSON.stringify(c) }));
  events.push(...tr.end());
  return events.map((e) => {
    const data = JSON.parse(e.data) as Json;
    if (e.event !== undefined && e.event !== 'error') t.equal(e.event, data.type, 'the SSE event name is the type');
    return data;
  });
}

const chunk = (delta: Json, extra: Json = {}): Json => ({ id: 'chatcmpl-1', model: 'm-2025', choices: [{ index: 0, delta, finish_reason: null }], ...extra });

t.test('stream: a text answer, event by event', async (t) => {
  const events = run([
    chunk({ role: 'assistant', content: '' }),
    chunk({ content: 'Hel' }),
    chunk({ content: 'lo' }),
    { id: 'chatcmpl-1', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    { id: 'chatcmpl-1', choices: [], usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 } },
    '[DONE]',
  ]);
  t.same(events.map((e) => e.sequence_number), events.map((_, i) => i));
  const strip = events.map(({ sequence_number: _s, response: _r, ...rest }) => rest);
  t.same(strip, [
    { type: 'response.created' },
    { type: 'response.in_progress' },
    { type: 'response.output_item.added', output_index: 0, item: { id: 'msg_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] } },
    { type: 'response.content_part.added', item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } },
    { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hel', logprobs: [] },
    { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'lo', logprobs: [] },
    { type: 'response.output_text.done', item_id: 'msg_1', output_index: 0, content_index: 0, text: 'Hello', logprobs: [] },
    { type: 'response.content_part.done', item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'output_text', text: 'Hello', annotations: [], logprobs: [] } },
    { type: 'response.output_item.done', output_index: 0, item: { id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello', annotations: [], logprobs: [] }] } },
    { type: 'response.completed' },
  ]);
  t.match(events[0]!.response, { id: 'resp_1', status: 'in_progress', output: [], model: 'm-2025', usage: null });
  const done = events.at(-1)!.response as Json;
  t.match(done, { id: 'resp_1', status: 'completed', output: [{ id: 'msg_1', content: [{ text: 'Hello' }] }] });
  t.same(done.usage, { input_tokens: 4, input_tokens_details: { cached_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 6 });
});

t.test('stream: text then two interleaved tool calls, cut by length', async (t) => {
  const told: Json[] = [];
  const events = run(
    [
      chunk({ content: 'Checking.' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{"b"' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: ':2}' } }] }),
      { choices: [{ index: 0, delta: {}, finish_reason: 'length' }] },
      '[DONE]',
    ],
    undefined,
    { onAnswer: (r: Json) => told.push(r) },
  );
  t.same(events.map((e) => e.type), [
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.content_part.added',
    'response.output_text.delta',
    'response.output_item.added',
    'response.output_item.added',
    'response.function_call_arguments.delta',
    'response.function_call_arguments.delta',
    'response.function_call_arguments.delta',
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.function_call_arguments.done',
    'response.output_item.done',
    'response.function_call_arguments.done',
    'response.output_item.done',
    'response.incomplete',
  ]);
  t.match(events[5], { output_index: 1, item: { type: 'function_call', id: 'fc_1', call_id: 'call_a', name: 'f', arguments: '', status: 'in_progress' } });
  t.match(events[8], { item_id: 'fc_1', output_index: 1, delta: '{"a":1}' }, 'arguments go to their own item, interleaved or not');
  t.match(events[15], { item_id: 'fc_2', output_index: 2, arguments: '{"b":2}' });
  const final = events.at(-1)!.response as Json;
  t.match(final, { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
  t.same((final.output as Json[]).map((o) => [o.type, o.status]), [['message', 'incomplete'], ['function_call', 'completed'], ['function_call', 'completed']]);
  t.same(told, [final], 'the store is told the final response');
});

t.test('stream: failures end with an error event the SDK throws on', async (t) => {
  const failed = run([chunk({ content: 'Hi' }), { error: { message: 'overloaded', type: 'server_error', code: 'overloaded' } }]);
  const last = failed.at(-1)!;
  t.match(last, { type: 'error', code: 'overloaded', message: 'overloaded', error: { message: 'overloaded', code: 'overloaded' } });
  t.equal(last.sequence_number, failed.length - 1);
  t.notOk(failed.some((e) => e.type === 'response.completed'));

  const cut = run([chunk({ content: 'Hi' })]);
  t.match(cut.at(-1), { type: 'error', error: { message: /ended before the answer was complete/ } }, 'no finish_reason and no [DONE]: not a success');

  const notJson = run(['{oops']);
  t.match(notJson.at(-1), { type: 'error', error: { message: /not JSON/ } });

  const finishedWithoutDone = run([chunk({ content: 'Hi' }), { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }]);
  t.equal(finishedWithoutDone.at(-1)!.type, 'response.completed', 'a finish_reason without [DONE] still completes');
});

t.test('errors, stored input items and history expansion', async (t) => {
  t.same(responsesError(429, { error: { message: 'slow', type: 'requests', code: 'rate_limit_exceeded', param: null } }), { error: { message: 'slow', type: 'requests', param: null, code: 'rate_limit_exceeded' } });
  t.same(responsesError(502, { message: 'vllm says no' }), { error: { message: 'vllm says no', type: 'server_error', param: null, code: null } });
  t.same(responsesError(404, '<html>'), { error: { message: 'The upstream answered HTTP 404.', type: 'not_found_error', param: null, code: null } });

  const items = inputItems([{ role: 'user', content: 'Hi' }, { type: 'function_call_output', call_id: 'c', output: 'x' }], ids());
  t.same(items, [
    { id: 'msg_1', type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'Hi' }] },
    { type: 'function_call_output', call_id: 'c', output: 'x' },
  ]);

  const expanded = withHistory({ model: 'm', previous_response_id: 'resp_1', input: 'And?', store: false }, { items: [...items, { id: 'msg_2', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Yes', annotations: [] }] }] });
  t.same(expanded, {
    model: 'm',
    store: false,
    input: [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] },
      { type: 'function_call_output', call_id: 'c', output: 'x' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Yes', annotations: [] }] },
      { type: 'message', role: 'user', content: 'And?' },
    ],
  }, 'the held items first, without their ids, and no previous_response_id');
  t.same(buildChatRequest(expanded).messages, [
    { role: 'user', content: 'Hi' },
    { role: 'tool', tool_call_id: 'c', content: 'x' },
    { role: 'assistant', content: 'Yes' },
    { role: 'user', content: 'And?' },
  ], 'which any provider can take as chat messages');
});

t.test('request: any junk in any field is a 4xx GatewayError, never a crash', async (t) => {
  const junk: unknown[] = [null, 0, -1, 1.5, '', 'x', true, [], [null], [1], [{}], [{ type: 5 }], {}, { type: 'function' }, { type: 'message', role: 'user', content: [{}] }, { format: [] }];
  const fields = ['input', 'instructions', 'tools', 'tool_choice', 'text', 'reasoning', 'include', 'truncation', 'previous_response_id', 'background', 'service_tier'];
  let thrown = 0;
  let passed = 0;
  for (const field of fields) {
    for (const value of junk) {
      for (const wrap of [(v: unknown) => v, (v: unknown) => [v], (v: unknown) => [{ type: 'message', role: 'user', content: [v] }]]) {
        const body: Json = { model: 'm', input: 'x', [field]: field === 'input' ? wrap(value) : value };
        try {
          buildChatRequest(body);
          passed++;
        } catch (err) {
          thrown++;
          const e = err as { status?: number; code?: string; param?: string };
          if (!(typeof e.status === 'number' && e.status >= 400 && e.status < 500 && typeof e.code === 'string')) {
            t.fail(`${field}=${JSON.stringify(body[field])} threw ${String(err)}`);
          }
        }
      }
    }
  }
  t.ok(thrown > 50 && passed > 10, `${thrown} refused with a 4xx, ${passed} accepted, none crashed`);
});
