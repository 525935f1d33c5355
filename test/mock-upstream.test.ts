/**
 * The mock upstream, driven by the official `openai` SDK over real sockets: if the SDK parses
 * what the mock sends, gateway tests built on the mock exercise real wire formats.
 */

import { createHash } from 'node:crypto';
import OpenAI from 'openai';
import t from 'tap';
import { cosine, mockFileContent, parseDirectives, startMockUpstream, type MockUpstream } from '../bench/mock-upstream.js';

const USER_TEXT = 'What is the capital city of France, and why is it famous?';
const EXPECTED_REPLY = `Mock reply to: ${USER_TEXT.slice(0, 40)}`;

/** A mock on port 0, closed when the calling test ends. */
async function start(t: { teardown(fn: () => unknown): void }): Promise<MockUpstream> {
  const mock = await startMockUpstream({ port: 0 });
  t.teardown(() => mock.close());
  return mock;
}

function client(mock: MockUpstream, directives = ''): OpenAI {
  const prefix = directives === '' ? '' : `/mock/${directives}`;
  return new OpenAI({ baseURL: `${mock.url}${prefix}/v1`, apiKey: 'sk-test', maxRetries: 0 });
}

const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: [{ type: 'text', text: USER_TEXT }] },
];

t.test('chat completion: deterministic reply, usage and n choices', async (t) => {
  const mock = await start(t);
  const res = await client(mock).chat.completions.create({ model: 'gpt-4o-mini', messages, n: 2 });
  t.equal(res.object, 'chat.completion');
  t.equal(res.model, 'gpt-4o-mini');
  t.match(res.id, /^chatcmpl-/);
  t.equal(res.choices.length, 2);
  t.same(res.choices[1], {
    index: 1,
    message: { role: 'assistant', content: EXPECTED_REPLY, refusal: null },
    logprobs: null,
    finish_reason: 'stop',
  });
  const prompt = Math.ceil('You are terse.'.length / 4) + 3 + Math.ceil(USER_TEXT.length / 4) + 3;
  t.equal(res.usage?.prompt_tokens, prompt);
  t.equal(res.usage?.completion_tokens, Math.ceil(EXPECTED_REPLY.length / 4) * 2);
  t.equal(res.usage?.total_tokens, prompt + Math.ceil(EXPECTED_REPLY.length / 4) * 2);
  t.same(res.usage?.prompt_tokens_details, { cached_tokens: 0, audio_tokens: 0 });
});

t.test('chat stream: pieces add up to the non-stream content, same usage', async (t) => {
  const mock = await start(t);
  const openai = client(mock);
  const plain = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages });
  const stream = await openai.chat.completions.create(
    { model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } },
    { headers: { 'x-mock-chunks': '7' } },
  );
  let text = '';
  const deltas: string[] = [];
  const finishes: Array<string | null> = [];
  let usage: OpenAI.CompletionUsage | null | undefined;
  for await (const chunk of stream) {
    t.equal(chunk.object, 'chat.completion.chunk');
    if (chunk.choices.length === 0) usage = chunk.usage;
    else t.equal(chunk.usage, null, 'every choice chunk carries usage:null');
    for (const choice of chunk.choices) {
      if (choice.delta.content) deltas.push(choice.delta.content);
      text += choice.delta.content ?? '';
      finishes.push(choice.finish_reason);
    }
  }
  t.equal(text, plain.choices[0]?.message.content);
  t.equal(deltas.length, 7, 'chunks=7 gives seven content events');
  t.same(finishes.slice(-1), ['stop']);
  t.same(usage, plain.usage);
});

t.test('tool_call=1 answers with a tool call, plain and streamed', async (t) => {
  const mock = await start(t);
  const openai = client(mock, 'tool_call=1');
  const tools: OpenAI.Chat.ChatCompletionTool[] = [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        parameters: { type: 'object', properties: { location: { type: 'string' }, days: { type: 'integer' } } },
      },
    },
  ];
  const plain = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages, tools });
  const call = plain.choices[0]?.message.tool_calls?.[0];
  t.equal(plain.choices[0]?.finish_reason, 'tool_calls');
  t.equal(plain.choices[0]?.message.content, null);
  t.equal(call?.type === 'function' ? call.function.name : undefined, 'get_weather');
  t.same(call?.type === 'function' ? JSON.parse(call.function.arguments) : undefined, { location: 'Paris', days: 1 });

  const stream = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages, tools, stream: true });
  let args = '';
  let name: string | undefined;
  let finish: string | null = null;
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta;
    name ??= delta?.tool_calls?.[0]?.function?.name;
    args += delta?.tool_calls?.[0]?.function?.arguments ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  t.equal(name, 'get_weather');
  t.equal(args, call?.type === 'function' ? call.function.arguments : '');
  t.equal(finish, 'tool_calls');
});

t.test('completions: plain and streamed text agree', async (t) => {
  const mock = await start(t);
  const openai = client(mock);
  const plain = await openai.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test' });
  t.equal(plain.object, 'text_completion');
  t.same(plain.choices, [{ text: 'Mock completion of: Say this is a test', index: 0, logprobs: null, finish_reason: 'stop' }]);
  const stream = await openai.completions.create({
    model: 'gpt-3.5-turbo-instruct',
    prompt: 'Say this is a test',
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let usage: OpenAI.CompletionUsage | null | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.text ?? '';
    if (chunk.choices.length === 0) usage = chunk.usage;
  }
  t.equal(text, plain.choices[0]?.text);
  t.same(usage, plain.usage);
});

t.test('embeddings: paraphrases are closer than unrelated texts; base64 equals floats', async (t) => {
  const mock = await start(t);
  const openai = client(mock);
  // The SDK asks for base64 by default and decodes it, so this exercises the base64 path.
  const res = await openai.embeddings.create({
    model: 'text-embedding-3-small',
    input: ['What is the capital of France?', "Tell me France's capital city", 'How do I bake sourdough bread?'],
  });
  t.equal(res.data.length, 3);
  t.equal(res.data[0]?.embedding.length, 256);
  const [a = [], b = [], c = []] = res.data.map((d) => d.embedding);
  t.ok(cosine(a, b) > 0.5, `paraphrase cosine ${cosine(a, b)}`);
  t.ok(cosine(a, c) < 0.2, `unrelated cosine ${cosine(a, c)}`);
  t.ok(Math.abs(cosine(a, a) - 1) < 1e-6);

  const floats = await openai.embeddings.create({
    model: 'text-embedding-3-small',
    input: 'What is the capital of France?',
    encoding_format: 'float',
    dimensions: 64,
  });
  t.equal(floats.data[0]?.embedding.length, 64);
  const same = await openai.embeddings.create({ model: 'text-embedding-3-small', input: 'What is the capital of France?' });
  t.same(same.data[0]?.embedding, a, 'the same text always embeds the same');
  t.ok(res.usage.prompt_tokens > 0);
});

t.test('moderations flag violence and hate by keyword', async (t) => {
  const mock = await start(t);
  const res = await client(mock).moderations.create({ input: ['I will attack you', 'I hate Mondays', 'Nice weather'] });
  t.equal(res.model, 'text-moderation-007');
  t.match(res.id, /^modr-/);
  t.same(
    res.results.map((r) => [r.flagged, r.categories.violence, r.categories.hate]),
    [
      [true, true, false],
      [true, false, true],
      [false, false, false],
    ],
  );
  t.equal(Object.keys(res.results[0]?.category_scores ?? {}).length, 11);
});

t.test('responses: plain object and stream event order', async (t) => {
  const mock = await start(t);
  const openai = client(mock);
  const plain = await openai.responses.create({ model: 'gpt-4o-mini', input: USER_TEXT, instructions: 'Be brief.' });
  t.equal(plain.object, 'response');
  t.equal(plain.status, 'completed');
  t.equal(plain.instructions, 'Be brief.');
  t.equal(plain.output_text, EXPECTED_REPLY);
  t.equal(plain.usage?.total_tokens, (plain.usage?.input_tokens ?? 0) + (plain.usage?.output_tokens ?? 0));

  const stream = await openai.responses.create(
    { model: 'gpt-4o-mini', input: [{ role: 'user', content: USER_TEXT }], instructions: 'Be brief.', stream: true },
    { headers: { 'x-mock-chunks': '3' } },
  );
  const types: string[] = [];
  const sequence: number[] = [];
  let text = '';
  let completed: OpenAI.Responses.Response | undefined;
  for await (const event of stream) {
    types.push(event.type);
    sequence.push(event.sequence_number);
    if (event.type === 'response.output_text.delta') text += event.delta;
    if (event.type === 'response.completed') completed = event.response;
  }
  t.same(types, [
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.content_part.added',
    'response.output_text.delta',
    'response.output_text.delta',
    'response.output_text.delta',
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.completed',
  ]);
  t.same(sequence, types.map((_, i) => i));
  t.equal(text, EXPECTED_REPLY);
  t.same(completed?.usage, plain.usage, 'string and one-message input cost the same');
});

t.test('status=429 is a RateLimitError with OpenAI body and retry-after', async (t) => {
  const mock = await start(t);
  const error = await client(mock, 'status=429;retry_after=2')
    .chat.completions.create({ model: 'gpt-4o-mini', messages })
    .catch((e: unknown) => e);
  t.ok(error instanceof OpenAI.RateLimitError);
  if (!(error instanceof OpenAI.APIError)) return;
  t.equal(error.status, 429);
  t.equal(error.code, 'rate_limit_exceeded');
  t.equal(error.type, 'requests');
  t.equal(error.headers?.get('retry-after'), '2');
  t.match(error.requestID, /^req_/);
});

t.test('headers override path directives', async (t) => {
  const mock = await start(t);
  const error = await client(mock, 'status=429')
    .chat.completions.create({ model: 'gpt-4o-mini', messages }, { headers: { 'x-mock-status': '401' } })
    .catch((e: unknown) => e);
  t.ok(error instanceof OpenAI.AuthenticationError);
  t.equal(error instanceof OpenAI.APIError ? error.code : undefined, 'invalid_api_key');
});

t.test('fail_first=N fails the first N requests of a key, reset() starts over', async (t) => {
  const mock = await start(t);
  const outcome = (directives: string): Promise<number> =>
    client(mock, directives)
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .then(
        () => 200,
        (e: unknown) => (e instanceof OpenAI.APIError ? (e.status ?? -1) : -1),
      );
  const k1 = 'fail_first=2;key=k1';
  t.same([await outcome(k1), await outcome(k1), await outcome(k1)], [503, 503, 200]);
  t.same([await outcome('fail_first=1;key=k2;status=500'), await outcome('fail_first=1;key=k2;status=500')], [500, 200]);
  mock.reset();
  t.equal(mock.requests.length, 0);
  t.equal(await outcome(k1), 503, 'counters cleared');
});

t.test('reset=before_headers is a connection error', async (t) => {
  const mock = await start(t);
  const error = await client(mock, 'reset=before_headers')
    .chat.completions.create({ model: 'gpt-4o-mini', messages })
    .catch((e: unknown) => e);
  t.ok(error instanceof OpenAI.APIConnectionError, String(error));
  const after = await client(mock).chat.completions.create({ model: 'gpt-4o-mini', messages });
  t.equal(after.choices[0]?.message.content, EXPECTED_REPLY, 'the mock keeps serving');
});

t.test('reset=mid_stream and error_event break a stream after it started', async (t) => {
  const mock = await start(t);
  const collect = async (directives: string): Promise<{ events: number; error: unknown }> => {
    let events = 0;
    try {
      const stream = await client(mock, directives).chat.completions.create({ model: 'm', messages, stream: true });
      for await (const _chunk of stream) events++;
    } catch (error) {
      return { events, error };
    }
    return { events, error: undefined };
  };
  const reset = await collect('reset=mid_stream;reset_after=3');
  t.equal(reset.events, 3);
  t.ok(reset.error instanceof Error, 'the cut shows as an error');
  const errored = await collect('error_event=1');
  t.equal(errored.events, 3, 'role chunk plus two content chunks');
  t.ok(errored.error instanceof OpenAI.APIError);
});

t.test('delay and hang: timers wait, hung requests end when the client leaves', async (t) => {
  const mock = await start(t);
  const started = Date.now();
  await client(mock, 'delay=120').chat.completions.create({ model: 'm', messages });
  t.ok(Date.now() - started >= 110, 'delayed');
  const hung = await fetch(`${mock.url}/mock/hang=1/v1/chat/completions`, {
    method: 'POST',
    body: '{}',
    signal: AbortSignal.timeout(100),
  }).catch((e: unknown) => e);
  t.ok(hung instanceof Error && hung.name === 'TimeoutError');
});

t.test('stream pacing: first_byte_delay, chunk_delay, and an abort leaves no timers', async (t) => {
  const mock = await start(t);
  const url = `${mock.url}/mock/first_byte_delay=80;chunk_delay=30;chunks=3/v1/chat/completions`;
  const request = JSON.stringify({ model: 'm', messages, stream: true });
  const started = Date.now();
  const res = await fetch(url, { method: 'POST', body: request });
  t.ok(Date.now() - started >= 75, 'headers wait for first_byte_delay');
  t.equal(res.headers.get('content-type'), 'text/event-stream');
  const text = await res.text();
  // role + 3 content + finish = 5 events, 4 gaps of 30 ms after the first byte.
  t.ok(Date.now() - started >= 75 + 4 * 28, 'events are paced by chunk_delay');
  t.equal(text.split('\n\n').filter((e) => e.startsWith('data: {')).length, 5);
  t.ok(text.endsWith('data: [DONE]\n\n'));

  const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = timers();
  const controller = new AbortController();
  const slow = await fetch(`${mock.url}/mock/chunk_delay=1000;chunks=50/v1/chat/completions`, {
    method: 'POST',
    body: request,
    signal: controller.signal,
  });
  const reader = slow.body?.getReader();
  await reader?.read();
  controller.abort();
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(timers(), before, 'the pacing timer died with the connection');
});

t.test('close() resolves while a request hangs', async (t) => {
  const mock = await startMockUpstream({ port: 0 });
  const hung = fetch(`${mock.url}/v1/chat/completions`, { method: 'POST', headers: { 'x-mock-hang': '1' }, body: '{}' }).catch(
    (e: unknown) => e,
  );
  await new Promise((resolve) => setTimeout(resolve, 30));
  t.equal(mock.requests.length, 1, 'the hung request was recorded');
  await mock.close();
  t.ok((await hung) instanceof Error, 'the client sees the connection close');
});

t.test('pass-through echo, file content, models and recording', async (t) => {
  const mock = await start(t);
  const body = Buffer.from('{"purpose":"batch"}');
  const res = await fetch(`${mock.url}/mock/delay=1/v1/files?limit=2&order=asc`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', 'x-custom': 'yes' },
    body,
  });
  t.equal(res.status, 200);
  const echo = (await res.json()) as Record<string, unknown>;
  t.equal(echo.method, 'PUT');
  t.equal(echo.path, '/v1/files');
  t.equal(echo.query, 'limit=2&order=asc');
  t.equal((echo.headers as Record<string, string>)['x-custom'], 'yes');
  t.equal(echo.body_base64, body.toString('base64'));
  t.equal(echo.body_sha256, createHash('sha256').update(body).digest('hex'));
  t.equal(echo.body_length, body.length);

  t.equal(mock.requests.length, 1);
  t.equal(mock.requests[0]?.path, '/v1/files?limit=2&order=asc', 'directive prefix stripped');
  t.same(mock.requests[0]?.body, body);

  const file = await fetch(`${mock.url}/v1/files/file-abc/content`);
  t.equal(file.headers.get('content-type'), 'application/octet-stream');
  const bytes = Buffer.from(await file.arrayBuffer());
  t.equal(bytes.length, 4096);
  t.equal(bytes[5], (5 * 31 + 7) & 255);
  t.same(bytes, mockFileContent());

  const models = await client(mock).models.list();
  t.ok(models.data.some((m) => m.id === 'gpt-4o-mini'));
});

t.test('invalid JSON on a model route is an OpenAI 400', async (t) => {
  const mock = await start(t);
  const res = await fetch(`${mock.url}/v1/chat/completions`, { method: 'POST', body: '{"model":' });
  t.equal(res.status, 400);
  const body = (await res.json()) as { error: Record<string, unknown> };
  t.equal(body.error.type, 'invalid_request_error');
  t.equal(body.error.param, null);
});

t.test('parseDirectives merges prefix and headers, headers win', async (t) => {
  const d = parseDirectives('status=503;retry_after=2;chunks=3;bogus=1', ['X-Mock-Status', '429', 'x-mock-chunk-delay', '5']);
  t.equal(d.status, 429);
  t.equal(d.retryAfter, '2');
  t.equal(d.chunks, 3);
  t.equal(d.chunkDelay, 5);
  t.equal(parseDirectives('', ['content-type', 'application/json']).chunks, 5, 'defaults');
  t.equal(parseDirectives('delay=abc', []).delay, 0, 'unparsable values are ignored');
});

t.test('parseDirectives ignores an unpaired trailing header name instead of crashing', async (t) => {
  const d = parseDirectives('', ['X-Mock-Status', '503', 'X-Mock-Delay']);
  t.equal(d.status, 503, 'the complete pair still counts');
  t.equal(d.delay, 0, 'the name without a value sets nothing');
});

t.test('cosine refuses vectors of different lengths', async (t) => {
  t.throws(() => cosine([1, 0, 0], [1, 0]), RangeError);
  t.equal(cosine([3, 4], [3, 4]), 1);
  t.equal(cosine([1, 0], [0, 1]), 0);
  t.equal(cosine([0, 0], [1, 0]), 0, 'a zero vector has no direction');
});
