/**
 * Request body validation: one row per bound, just inside (passes) and just outside (fails with
 * the expected code and param), for every route.
 */

import t from 'tap';
import { createRequestValidator, type ModelRoute } from '../core/validation/index.js';

const validate = createRequestValidator();

type Body = Record<string, unknown>;

interface Row {
  name: string;
  route: ModelRoute;
  body: unknown;
  /** null: the body must pass. */
  code: string | null;
  param?: string | null;
}

const msg = { role: 'user', content: 'hi' };
const chat = (extra: Body): Body => ({ model: 'gpt-4o', messages: [msg], ...extra });
const completion = (extra: Body): Body => ({ model: 'gpt-3.5-turbo-instruct', prompt: 'hi', ...extra });
const embedding = (extra: Body): Body => ({ model: 'text-embedding-3-small', input: 'hi', ...extra });
const moderation = (extra: Body): Body => ({ input: 'hi', ...extra });
const response = (extra: Body): Body => ({ model: 'gpt-4.1', input: 'hi', ...extra });

const ok = (route: ModelRoute, name: string, body: unknown): Row => ({ name, route, body, code: null });
const bad = (route: ModelRoute, name: string, body: unknown, code: string, param: string | null): Row => ({
  name,
  route,
  body,
  code,
  param,
});

const fn = (name: string): Body => ({ type: 'function', function: { name } });
const many = <T>(count: number, make: (i: number) => T): T[] => Array.from({ length: count }, (_, i) => make(i));
const C = 'chat.completions' as const;
const X = 'completions' as const;
const E = 'embeddings' as const;
const M = 'moderations' as const;
const R = 'responses' as const;

/** Numeric [min, max] bounds shared by chat and completions. */
function rangeRows(route: ModelRoute, wrap: (extra: Body) => Body, field: string, min: number, max: number, step: number): Row[] {
  return [
    ok(route, `${field} = ${min}`, wrap({ [field]: min })),
    ok(route, `${field} = ${max}`, wrap({ [field]: max })),
    ok(route, `${field} = null`, wrap({ [field]: null })),
    bad(route, `${field} below ${min}`, wrap({ [field]: min - step }), 'value_below_minimum', field),
    bad(route, `${field} above ${max}`, wrap({ [field]: max + step }), 'value_above_maximum', field),
    bad(route, `${field} as a string`, wrap({ [field]: String(min) }), 'invalid_type', field),
  ];
}

function samplingRows(route: ModelRoute, wrap: (extra: Body) => Body): Row[] {
  return [
    ...rangeRows(route, wrap, 'temperature', 0, 2, 0.01),
    ...rangeRows(route, wrap, 'top_p', 0, 1, 0.01),
    ...rangeRows(route, wrap, 'frequency_penalty', -2, 2, 0.01),
    ...rangeRows(route, wrap, 'presence_penalty', -2, 2, 0.01),
    ...rangeRows(route, wrap, 'n', 1, 128, 1),
    bad(route, 'n not an integer', wrap({ n: 1.5 }), 'invalid_type', 'n'),
    ok(route, 'stop as a string', wrap({ stop: '\n' })),
    ok(route, 'stop with 4 items', wrap({ stop: ['a', 'b', 'c', 'd'] })),
    bad(route, 'stop with 5 items', wrap({ stop: ['a', 'b', 'c', 'd', 'e'] }), 'too_many_items', 'stop'),
    bad(route, 'stop as a number', wrap({ stop: 4 }), 'invalid_type', 'stop'),
    bad(route, 'stop item not a string', wrap({ stop: ['a', 1] }), 'invalid_type', 'stop[1]'),
    ok(route, 'logit_bias at ±100', wrap({ logit_bias: { '50256': -100, '1': 100 } })),
    bad(route, 'logit_bias below -100', wrap({ logit_bias: { '50256': -101 } }), 'value_below_minimum', 'logit_bias["50256"]'),
    bad(route, 'logit_bias above 100', wrap({ logit_bias: { '1': 100.5 } }), 'value_above_maximum', 'logit_bias["1"]'),
    bad(route, 'logit_bias value not a number', wrap({ logit_bias: { x: '5' } }), 'invalid_type', 'logit_bias.x'),
    bad(route, 'logit_bias not an object', wrap({ logit_bias: [1] }), 'invalid_type', 'logit_bias'),
    ok(route, 'max_tokens = 0', wrap({ max_tokens: 0 })),
    ok(route, 'max_tokens = null', wrap({ max_tokens: null })),
    bad(route, 'max_tokens = -1', wrap({ max_tokens: -1 }), 'value_below_minimum', 'max_tokens'),
    bad(route, 'max_tokens fractional', wrap({ max_tokens: 10.5 }), 'invalid_type', 'max_tokens'),
    ok(route, 'seed integer', wrap({ seed: -42 })),
    bad(route, 'seed fractional', wrap({ seed: 1.5 }), 'invalid_type', 'seed'),
    ok(route, 'stream_options with stream true', wrap({ stream: true, stream_options: { include_usage: true } })),
    bad(route, 'stream_options without stream', wrap({ stream_options: { include_usage: true } }), 'invalid_parameter_combination', 'stream_options'),
    bad(route, 'stream_options with stream false', wrap({ stream: false, stream_options: {} }), 'invalid_parameter_combination', 'stream_options'),
    bad(route, 'model not a string', wrap({ model: 4 }), 'invalid_type', 'model'),
  ];
}

const rows: Row[] = [
  // Body shape
  bad(C, 'body is an array', [], 'invalid_body', null),
  bad(C, 'body is a string', 'hi', 'invalid_body', null),
  bad(E, 'body is null', null, 'invalid_body', null),

  // Chat completions
  ok(C, 'minimal chat', chat({})),
  bad(C, 'missing model', { messages: [msg] }, 'missing_required_parameter', 'model'),
  bad(C, 'missing messages', { model: 'm' }, 'missing_required_parameter', 'messages'),
  bad(C, 'messages empty', chat({ messages: [] }), 'too_few_items', 'messages'),
  bad(C, 'messages not an array', chat({ messages: 'hi' }), 'invalid_type', 'messages'),
  bad(C, 'message not an object', chat({ messages: [msg, 'hi'] }), 'invalid_type', 'messages[1]'),
  bad(C, 'message without role', chat({ messages: [msg, msg, { content: 'x' }] }), 'missing_required_parameter', 'messages[2].role'),
  bad(C, 'message with unknown role', chat({ messages: [msg, msg, { role: 'robot' }] }), 'invalid_value', 'messages[2].role'),
  ...['system', 'developer', 'user', 'assistant', 'tool', 'function'].map((role) =>
    ok(C, `role ${role}`, chat({ messages: [{ role, content: 'x' }] })),
  ),
  ok(C, 'content as parts', chat({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }] })),
  ok(C, 'content null', chat({ messages: [{ role: 'assistant', content: null, tool_calls: [] }] })),
  bad(C, 'content a number', chat({ messages: [{ role: 'user', content: 5 }] }), 'invalid_type', 'messages[0].content'),
  ...samplingRows(C, chat),
  ok(C, 'max_completion_tokens = 0', chat({ max_completion_tokens: 0 })),
  ok(C, 'max_completion_tokens = null', chat({ max_completion_tokens: null })),
  bad(C, 'max_completion_tokens = -1', chat({ max_completion_tokens: -1 }), 'value_below_minimum', 'max_completion_tokens'),
  ok(C, 'top_logprobs 0 with logprobs', chat({ logprobs: true, top_logprobs: 0 })),
  ok(C, 'top_logprobs 20 with logprobs', chat({ logprobs: true, top_logprobs: 20 })),
  bad(C, 'top_logprobs 21', chat({ logprobs: true, top_logprobs: 21 }), 'value_above_maximum', 'top_logprobs'),
  bad(C, 'top_logprobs -1', chat({ logprobs: true, top_logprobs: -1 }), 'value_below_minimum', 'top_logprobs'),
  bad(C, 'top_logprobs fractional', chat({ logprobs: true, top_logprobs: 1.5 }), 'invalid_type', 'top_logprobs'),
  bad(C, 'top_logprobs without logprobs', chat({ top_logprobs: 5 }), 'invalid_parameter_combination', 'top_logprobs'),
  bad(C, 'top_logprobs with logprobs false', chat({ logprobs: false, top_logprobs: 5 }), 'invalid_parameter_combination', 'top_logprobs'),
  ok(C, 'top_logprobs null without logprobs', chat({ top_logprobs: null })),
  ok(C, '128 tools', chat({ tools: many(128, (i) => fn(`f${i}`)) })),
  bad(C, '129 tools', chat({ tools: many(129, (i) => fn(`f${i}`)) }), 'too_many_items', 'tools'),
  bad(C, 'tool without function name', chat({ tools: [{ type: 'function', function: {} }] }), 'missing_required_parameter', 'tools[0].function.name'),
  bad(C, 'tool name not a string', chat({ tools: [fn('a'), { type: 'function', function: { name: 3 } }] }), 'invalid_type', 'tools[1].function.name'),
  bad(C, 'tool of another type', chat({ tools: [{ type: 'retrieval', function: { name: 'a' } }] }), 'invalid_value', 'tools[0].type'),
  bad(C, 'tool without function', chat({ tools: [{ type: 'function' }] }), 'missing_required_parameter', 'tools[0].function'),
  ok(C, 'tool_choice required', chat({ tool_choice: 'required' })),
  ok(C, 'tool_choice object', chat({ tool_choice: { type: 'function', function: { name: 'a' } } })),
  bad(C, 'tool_choice unknown mode', chat({ tool_choice: 'always' }), 'invalid_value', 'tool_choice'),
  bad(C, 'tool_choice a number', chat({ tool_choice: 1 }), 'invalid_type', 'tool_choice'),
  // Regression (issue 11): tool_choice {} and a function without a name used to pass.
  bad(C, 'tool_choice {}', chat({ tool_choice: {} }), 'missing_required_parameter', 'tool_choice.type'),
  bad(C, 'tool_choice of an unknown type', chat({ tool_choice: { type: 'retrieval' } }), 'invalid_value', 'tool_choice.type'),
  bad(C, 'tool_choice function without function', chat({ tool_choice: { type: 'function' } }), 'missing_required_parameter', 'tool_choice.function'),
  bad(C, 'tool_choice function without a name', chat({ tool_choice: { type: 'function', function: {} } }), 'missing_required_parameter', 'tool_choice.function.name'),
  bad(C, 'tool_choice function with an empty name', chat({ tool_choice: { type: 'function', function: { name: '' } } }), 'invalid_value', 'tool_choice.function.name'),
  ok(C, 'tool_choice custom', chat({ tool_choice: { type: 'custom', custom: { name: 'grammar' } } })),
  ok(C, 'tool_choice allowed_tools', chat({ tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [fn('a')] } } })),
  ok(C, 'function_call object', chat({ function_call: { name: 'a' } })),
  bad(C, 'function_call {}', chat({ function_call: {} }), 'missing_required_parameter', 'function_call.name'),
  // Regression (issue 11): content part types were not checked.
  ok(C, 'user parts: text, image_url, input_audio, file', chat({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }, { type: 'input_audio', input_audio: { data: 'AA', format: 'wav' } }, { type: 'file', file: { file_id: 'f' } }] }] })),
  ok(C, 'assistant parts: text, refusal', chat({ messages: [msg, { role: 'assistant', content: [{ type: 'text', text: 'x' }, { type: 'refusal', refusal: 'no' }] }] })),
  ok(C, 'system text part', chat({ messages: [{ role: 'system', content: [{ type: 'text', text: 'x' }] }, msg] })),
  bad(C, 'a part of an unknown type', chat({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'image', source: {} }] }] }), 'invalid_value', 'messages[0].content[1].type'),
  bad(C, 'an image part in a system message', chat({ messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'x' } }] }, msg] }), 'invalid_value', 'messages[0].content[0].type'),
  bad(C, 'a refusal part from the user', chat({ messages: [{ role: 'user', content: [{ type: 'refusal', refusal: 'x' }] }] }), 'invalid_value', 'messages[0].content[0].type'),
  bad(C, 'an image part in a tool message', chat({ messages: [msg, { role: 'tool', tool_call_id: 'c', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }), 'invalid_value', 'messages[1].content[0].type'),
  bad(C, 'a part without a type', chat({ messages: [{ role: 'user', content: [{ text: 'x' }] }] }), 'missing_required_parameter', 'messages[0].content[0].type'),
  bad(C, 'a part that is a string', chat({ messages: [{ role: 'user', content: ['x'] }] }), 'invalid_type', 'messages[0].content[0]'),
  // Regression (issue 11): chat metadata was not bounded.
  ok(C, 'metadata 16 pairs', chat({ metadata: Object.fromEntries(many(16, (i) => [`k${i}`, 'v'])) })),
  ok(C, 'metadata null', chat({ metadata: null })),
  bad(C, 'metadata 17 pairs', chat({ metadata: Object.fromEntries(many(17, (i) => [`k${i}`, 'v'])) }), 'too_many_properties', 'metadata'),
  bad(C, 'metadata key of 65', chat({ metadata: { ['k'.repeat(65)]: 'v' } }), 'string_too_long', 'metadata'),
  bad(C, 'metadata value of 513', chat({ metadata: { some_key: 'v'.repeat(513) } }), 'string_too_long', 'metadata.some_key'),
  bad(C, 'metadata value not a string', chat({ metadata: { some_key: 1 } }), 'invalid_type', 'metadata.some_key'),
  bad(C, 'metadata an array', chat({ metadata: ['x'] }), 'invalid_type', 'metadata'),
  ok(C, '1 function', chat({ functions: [{ name: 'a' }] })),
  ok(C, '128 functions', chat({ functions: many(128, (i) => ({ name: `f${i}` })) })),
  bad(C, '0 functions', chat({ functions: [] }), 'too_few_items', 'functions'),
  bad(C, '129 functions', chat({ functions: many(129, (i) => ({ name: `f${i}` })) }), 'too_many_items', 'functions'),

  // Completions
  ok(X, 'minimal completion', completion({})),
  bad(X, 'missing prompt', { model: 'm' }, 'missing_required_parameter', 'prompt'),
  bad(X, 'missing model', { prompt: 'x' }, 'missing_required_parameter', 'model'),
  ok(X, 'prompt strings', completion({ prompt: ['a', 'b'] })),
  ok(X, 'prompt tokens', completion({ prompt: [1, 2, 3] })),
  ok(X, 'prompt token arrays', completion({ prompt: [[1, 2], [3]] })),
  bad(X, 'prompt mixed', completion({ prompt: ['a', 1] }), 'invalid_type', 'prompt'),
  bad(X, 'prompt a number', completion({ prompt: 5 }), 'invalid_type', 'prompt'),
  bad(X, 'prompt an object', completion({ prompt: { text: 'x' } }), 'invalid_type', 'prompt'),
  ...samplingRows(X, completion),
  ok(X, 'logprobs 0', completion({ logprobs: 0 })),
  ok(X, 'logprobs 5', completion({ logprobs: 5 })),
  bad(X, 'logprobs 6', completion({ logprobs: 6 }), 'value_above_maximum', 'logprobs'),
  bad(X, 'logprobs -1', completion({ logprobs: -1 }), 'value_below_minimum', 'logprobs'),
  bad(X, 'logprobs boolean', completion({ logprobs: true }), 'invalid_type', 'logprobs'),
  ok(X, 'best_of 0', completion({ best_of: 0 })),
  ok(X, 'best_of 20', completion({ best_of: 20 })),
  bad(X, 'best_of 21', completion({ best_of: 21 }), 'value_above_maximum', 'best_of'),
  bad(X, 'best_of -1', completion({ best_of: -1 }), 'value_below_minimum', 'best_of'),
  ok(X, 'best_of > n', completion({ best_of: 3, n: 2 })),
  bad(X, 'best_of == n', completion({ best_of: 2, n: 2 }), 'invalid_parameter_combination', 'best_of'),
  bad(X, 'best_of < n', completion({ best_of: 2, n: 3 }), 'invalid_parameter_combination', 'best_of'),
  ok(X, 'best_of without stream', completion({ best_of: 3, stream: false })),
  bad(X, 'best_of with stream', completion({ best_of: 3, stream: true }), 'invalid_parameter_combination', 'best_of'),
  ok(X, 'best_of null with stream', completion({ best_of: null, stream: true })),

  // Embeddings
  ok(E, 'minimal embedding', embedding({})),
  ok(E, 'input strings', embedding({ input: ['a', 'b'] })),
  ok(E, 'input tokens', embedding({ input: [1, 2] })),
  ok(E, 'input token arrays', embedding({ input: [[1], [2, 3]] })),
  bad(E, 'missing input', { model: 'm' }, 'missing_required_parameter', 'input'),
  bad(E, 'missing model', { input: 'x' }, 'missing_required_parameter', 'model'),
  bad(E, 'input empty string', embedding({ input: '' }), 'invalid_value', 'input'),
  bad(E, 'input empty array', embedding({ input: [] }), 'too_few_items', 'input'),
  bad(E, 'input mixed', embedding({ input: [[1], 'a'] }), 'invalid_type', 'input'),
  bad(E, 'input a number', embedding({ input: 3 }), 'invalid_type', 'input'),
  ok(E, 'dimensions 1', embedding({ dimensions: 1 })),
  bad(E, 'dimensions 0', embedding({ dimensions: 0 }), 'value_below_minimum', 'dimensions'),
  bad(E, 'dimensions fractional', embedding({ dimensions: 1.5 }), 'invalid_type', 'dimensions'),
  ok(E, 'encoding_format float', embedding({ encoding_format: 'float' })),
  ok(E, 'encoding_format base64', embedding({ encoding_format: 'base64' })),
  bad(E, 'encoding_format int8', embedding({ encoding_format: 'int8' }), 'invalid_value', 'encoding_format'),

  // Moderations
  ok(M, 'minimal moderation', moderation({})),
  ok(M, 'input strings', moderation({ input: ['a', 'b'] })),
  ok(M, 'input objects', moderation({ input: [{ type: 'text', text: 'a' }] })),
  ok(M, 'any model name', moderation({ model: 'omni-moderation-2099-01-01' })),
  bad(M, 'missing input', { model: 'x' }, 'missing_required_parameter', 'input'),
  bad(M, 'input a number', moderation({ input: 1 }), 'invalid_type', 'input'),
  bad(M, 'input mixed', moderation({ input: ['a', { type: 'text' }] }), 'invalid_type', 'input'),
  bad(M, 'model not a string', moderation({ model: 1 }), 'invalid_type', 'model'),

  // Responses
  ok(R, 'minimal response', response({})),
  ok(R, 'input array', response({ input: [{ role: 'user', content: 'hi' }] })),
  ok(R, 'any model name', response({ model: 'gpt-5-brand-new' })),
  bad(R, 'missing model', { input: 'x' }, 'missing_required_parameter', 'model'),
  bad(R, 'missing input', { model: 'm' }, 'missing_required_parameter', 'input'),
  ok(R, 'no input with a prompt (the prompt supplies it)', { model: 'm', prompt: { id: 'pmpt_123', variables: { name: 'Ada' } } }),
  ok(R, 'a prompt with a version', { model: 'm', prompt: { id: 'pmpt_123', version: '2' }, input: 'and more' }),
  bad(R, 'a prompt without id', { model: 'm', prompt: { version: '2' } }, 'missing_required_parameter', 'prompt.id'),
  bad(R, 'a prompt that is a string', { model: 'm', prompt: 'pmpt_123' }, 'invalid_type', 'prompt'),
  bad(R, 'input a number', response({ input: 1 }), 'invalid_type', 'input'),
  ok(R, 'metadata 16 pairs', response({ metadata: Object.fromEntries(many(16, (i) => [`k${i}`, 'v'])) })),
  bad(R, 'metadata 17 pairs', response({ metadata: Object.fromEntries(many(17, (i) => [`k${i}`, 'v'])) }), 'too_many_properties', 'metadata'),
  ok(R, 'metadata key of 64', response({ metadata: { ['k'.repeat(64)]: 'v' } })),
  bad(R, 'metadata key of 65', response({ metadata: { ['k'.repeat(65)]: 'v' } }), 'string_too_long', 'metadata'),
  ok(R, 'metadata value of 512', response({ metadata: { some_key: 'v'.repeat(512) } })),
  bad(R, 'metadata value of 513', response({ metadata: { some_key: 'v'.repeat(513) } }), 'string_too_long', 'metadata.some_key'),
  bad(R, 'metadata value not a string', response({ metadata: { some_key: 1 } }), 'invalid_type', 'metadata.some_key'),
  bad(R, 'metadata an array', response({ metadata: [] }), 'invalid_type', 'metadata'),
  ...rangeRows(R, response, 'temperature', 0, 2, 0.01),
  ...rangeRows(R, response, 'top_p', 0, 1, 0.01),
  ok(R, 'max_output_tokens 1', response({ max_output_tokens: 1 })),
  ok(R, 'max_output_tokens null', response({ max_output_tokens: null })),
  bad(R, 'max_output_tokens 0', response({ max_output_tokens: 0 }), 'value_below_minimum', 'max_output_tokens'),
  bad(R, 'max_output_tokens fractional', response({ max_output_tokens: 1.5 }), 'invalid_type', 'max_output_tokens'),
  ok(R, 'truncation auto', response({ truncation: 'auto' })),
  ok(R, 'truncation disabled', response({ truncation: 'disabled' })),
  ok(R, 'truncation null', response({ truncation: null })),
  bad(R, 'truncation other', response({ truncation: 'middle' }), 'invalid_value', 'truncation'),
  ok(R, 'tool_choice none', response({ tool_choice: 'none' })),
  ok(R, 'tool_choice object', response({ tool_choice: { type: 'file_search' } })),
  bad(R, 'tool_choice unknown mode', response({ tool_choice: 'any' }), 'invalid_value', 'tool_choice'),
  bad(R, 'tool_choice an array', response({ tool_choice: [] }), 'invalid_type', 'tool_choice'),
  ok(R, 'include strings', response({ include: ['file_search_call.results'] })),
  ok(R, 'include null', response({ include: null })),
  bad(R, 'include a string', response({ include: 'x' }), 'invalid_type', 'include'),
  bad(R, 'include item a number', response({ include: ['a', 2] }), 'invalid_type', 'include[1]'),
];

t.test('bounds table', async (t) => {
  for (const row of rows) {
    const err = validate(row.route, row.body);
    if (row.code === null) {
      t.equal(err, null, `${row.route}: ${row.name} passes`, { found: err?.message });
      continue;
    }
    t.ok(err, `${row.route}: ${row.name} fails`);
    if (!err) continue;
    t.match(
      { status: err.status, type: err.type, code: err.code, param: err.param },
      { status: 400, type: 'invalid_request_error', code: row.code, param: row.param },
      `${row.route}: ${row.name} → ${row.code} at ${row.param}`,
    );
  }
});

t.test('unknown fields pass through and the body is not modified', async (t) => {
  const body = chat({
    vendor_extension: { deep: [1, 2, 3] },
    messages: [{ role: 'user', content: 'x', cache_control: { type: 'ephemeral' } }],
    tools: [{ type: 'function', function: { name: 'a', strict: true, parameters: { type: 'object' } }, extra: 1 }],
    temperature: 1,
  });
  const before = JSON.stringify(body);
  t.equal(validate('chat.completions', body), null);
  t.equal(JSON.stringify(body), before, 'no defaults, coercion or removal');
  const numericString = completion({ temperature: '1' });
  t.equal(validate('completions', numericString)?.code, 'invalid_type');
  t.equal(numericString.temperature, '1', 'no type coercion written back');
  for (const route of ['embeddings', 'moderations', 'responses'] as const) {
    const extra = { input: 'x', model: 'm', unknown_field: { a: 1 } };
    t.equal(validate(route, extra), null, `${route} accepts unknown fields`);
  }
});

t.test('messages are human sentences naming the field and bound', async (t) => {
  t.equal(validate('chat.completions', chat({ temperature: 3 }))?.message, 'temperature must be <= 2.');
  t.equal(validate('chat.completions', chat({ top_p: -1 }))?.message, 'top_p must be >= 0.');
  t.equal(validate('chat.completions', { messages: [msg] })?.message, 'model is required.');
  t.equal(validate('chat.completions', chat({ stop: [1, 2, 3, 4, 5] }))?.message, 'stop must have at most 4 items.');
  t.equal(validate('chat.completions', chat({ temperature: 'hot' }))?.message, 'temperature must be a number or null.');
  t.equal(
    validate('embeddings', embedding({ input: { text: 'x' } }))?.message,
    'input must be a string, an array of strings, an array of integers, or an array of integer arrays.',
  );
  t.match(validate('chat.completions', chat({ messages: [{ role: 'robot' }] }))?.message, /^messages\[0\]\.role must be one of "system"/);
  t.match(validate('chat.completions', chat({ tool_choice: 'always' }))?.message, /^tool_choice must be one of "none"/, 'the real error, not the if/then summary');
  t.match(validate('chat.completions', chat({ messages: [{ role: 'user', content: [{ type: 'image' }] }] }))?.message, /^messages\[0\]\.content\[0\]\.type must be one of "text", "image_url"/);
});

t.test('large client values are never echoed', async (t) => {
  const hugeKey = 'k'.repeat(10_000);
  const keyErr = validate('responses', response({ metadata: { [hugeKey]: 'v' } }));
  t.equal(keyErr?.code, 'string_too_long');
  t.equal(keyErr?.message, 'Keys of metadata must be at most 64 characters long.');
  const valueErr = validate('responses', response({ metadata: { a: 'v'.repeat(100_000) } }));
  t.ok((valueErr?.message.length ?? Infinity) < 100, 'value not in message');
  const biasErr = validate('chat.completions', chat({ logit_bias: { [hugeKey]: 1000 } }));
  t.equal(biasErr?.code, 'value_above_maximum');
  t.ok((biasErr?.param?.length ?? Infinity) < 100, 'long key capped in param');
  t.notOk(biasErr?.message.includes(hugeKey));
});

t.test('deeply nested params use JS-path form', async (t) => {
  const body = chat({ tools: [fn('a'), fn('b'), { type: 'function', function: { name: ['x'] } }] });
  t.equal(validate('chat.completions', body)?.param, 'tools[2].function.name');
  const odd = chat({ logit_bias: { 'a/b~c': 500 } });
  t.equal(validate('chat.completions', odd)?.param, 'logit_bias["a/b~c"]', 'JSON-pointer escapes are undone');
});
