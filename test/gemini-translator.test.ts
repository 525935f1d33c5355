/**
 * The Gemini dialect: golden tests from wire fixtures written after Google's `generateContent`
 * documentation (request mapping, response mapping, the SSE stream, errors), and round trips
 * through the mock's `/v1beta/models/<model>:…` routes.
 */
import t from 'tap';
import { request as undiciRequest } from 'undici';
import { startMockUpstream } from '../bench/mock-upstream.js';
import { google } from '../core/providers/google/index.js';
import { buildResponse } from '../core/providers/google/response.js';
import { createStreamTranslator } from '../core/providers/google/stream.js';
import type { TranslateContext } from '../core/providers/types.js';
import { SseParser, type SseEvent } from '../core/sse/sse-parser.js';

const NOW = 1_700_000_000;
const translator = google.translate!;

function ctx(request: Record<string, unknown>, strict = true): TranslateContext {
  return { route: 'chat.completions', target: { provider: 'google', apiKey: 'AIza-test' }, request, strict };
}

function ev(data: Record<string, unknown>): SseEvent {
  return { data: JSON.stringify(data) };
}

t.test('adapter: id, base URL, auth header, routes', async (t) => {
  t.equal(google.id, 'google');
  t.equal(google.baseUrl, 'https://generativelanguage.googleapis.com/v1beta');
  t.same(google.authHeaders({ provider: 'google', apiKey: 'AIza-1' }), { 'x-goog-api-key': 'AIza-1' });
  t.same(google.authHeaders({ provider: 'google' }), {});
  t.same([...translator.routes], ['chat.completions', 'embeddings']);
});

t.test('request: system, roles, merging, images, tool calls and responses, tools, config', async (t) => {
  const out = translator.request(
    ctx({
      model: 'gemini-2.5-flash',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: 'Hi' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Let me look.',
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{not json' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '18C' },
        { role: 'tool', tool_call_id: 'call_b', content: [{ type: 'text', text: '10:00' }] },
        { role: 'user', content: 'Thanks' },
        { role: 'system', content: 'Late note.' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        },
        { type: 'function', function: { name: 'get_time' } },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      temperature: 0.2,
      top_p: 0.9,
      max_tokens: 100,
      stop: 'END',
      n: 2,
      seed: 7,
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
      user: 'u-1',
      logprobs: false,
    }),
  );
  t.equal(out.path, '/models/gemini-2.5-flash:generateContent');
  t.same(out.body, {
    contents: [
      {
        role: 'user',
        parts: [{ text: 'Hi' }, { text: 'What is this?' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }],
      },
      {
        role: 'model',
        parts: [
          { text: 'Let me look.' },
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
          { functionCall: { name: 'get_time', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { content: '18C' } } },
          { functionResponse: { name: 'get_time', response: { content: '10:00' } } },
          { text: 'Thanks' },
        ],
      },
    ],
    systemInstruction: { parts: [{ text: 'You are terse.' }, { text: 'Answer in French.' }, { text: 'Late note.' }] },
    tools: [
      {
        functionDeclarations: [
          { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
          { name: 'get_time' },
        ],
      },
    ],
    toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
    generationConfig: {
      temperature: 0.2,
      topP: 0.9,
      maxOutputTokens: 100,
      stopSequences: ['END'],
      candidateCount: 2,
      seed: 7,
      responseMimeType: 'application/json',
      responseJsonSchema: { type: 'object' },
    },
  });
});

t.test('request: stream path, tool_choice strings, json_object, max_completion_tokens', async (t) => {
  const tools = [{ type: 'function', function: { name: 'f' } }];
  const body = (extra: Record<string, unknown>) =>
    translator.request(ctx({ model: 'models/gemini-2.0-flash', messages: [{ role: 'user', content: 'x' }], ...extra }));
  t.equal(body({ stream: true }).path, '/models/gemini-2.0-flash:streamGenerateContent?alt=sse');
  t.notMatch(body({ stream: true }).path, /key=/);
  const mode = (tool_choice: unknown) => (body({ tools, tool_choice }).body.toolConfig as { functionCallingConfig: unknown } | undefined)?.functionCallingConfig;
  t.same(mode('auto'), { mode: 'AUTO' });
  t.same(mode('required'), { mode: 'ANY' });
  t.same(mode('none'), { mode: 'NONE' });
  t.equal(mode(undefined), undefined);
  t.equal(body({ tool_choice: 'auto' }).body.toolConfig, undefined, 'no toolConfig without tools');
  t.same(body({ response_format: { type: 'json_object' }, max_completion_tokens: 50, max_tokens: 10, stop: ['a', 'b'] }).body.generationConfig, {
    maxOutputTokens: 50,
    stopSequences: ['a', 'b'],
    responseMimeType: 'application/json',
  });
  t.equal(body({}).body.generationConfig, undefined);
  t.equal(body({ response_format: { type: 'text' } }).body.generationConfig, undefined);
});

const TEXT_RESPONSE = {
  candidates: [
    {
      content: { parts: [{ text: 'Let me think.', thought: true }, { text: 'Hello' }, { text: ' there!' }], role: 'model' },
      finishReason: 'STOP',
      index: 0,
    },
  ],
  usageMetadata: { promptTokenCount: 120, candidatesTokenCount: 6, thoughtsTokenCount: 4, totalTokenCount: 130, cachedContentTokenCount: 100 },
  modelVersion: 'gemini-2.5-flash',
  responseId: 'mUv5aOmRBtDEz7IP4Zmb4QE',
};

t.test('response: text, thoughts, usage with thoughts and cache', async (t) => {
  t.same(buildResponse(ctx({ model: 'gemini' }), TEXT_RESPONSE, NOW), {
    id: 'mUv5aOmRBtDEz7IP4Zmb4QE',
    object: 'chat.completion',
    created: NOW,
    model: 'gemini-2.5-flash',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there!', refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 120, completion_tokens: 10, total_tokens: 130, prompt_tokens_details: { cached_tokens: 100 } },
  });
  const loose = buildResponse(ctx({ model: 'gemini' }, false), TEXT_RESPONSE, NOW);
  t.equal((loose.choices as { message: { reasoning_content: string } }[])[0]?.message.reasoning_content, 'Let me think.');
});

t.test('response: function calls, several candidates, every finish reason', async (t) => {
  const out = buildResponse(
    ctx({ model: 'gemini-2.5-pro' }),
    {
      candidates: [
        {
          content: {
            role: 'model',
            parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_time', args: {} } }],
          },
          finishReason: 'STOP',
        },
        { content: { role: 'model', parts: [{ text: 'Cut' }] }, finishReason: 'MAX_TOKENS', index: 1 },
      ],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 20, totalTokenCount: 30 },
    },
    NOW,
  );
  t.equal(out.model, 'gemini-2.5-pro', 'the requested model when modelVersion is absent');
  t.same(out.choices, [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_1', type: 'function', function: { name: 'get_time', arguments: '{}' } },
        ],
        refusal: null,
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    },
    { index: 1, message: { role: 'assistant', content: 'Cut', refusal: null }, logprobs: null, finish_reason: 'length' },
  ]);
  t.same(out.usage, { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30, prompt_tokens_details: { cached_tokens: 0 } });

  const reasons: [string, string][] = [
    ['STOP', 'stop'],
    ['MAX_TOKENS', 'length'],
    ['SAFETY', 'content_filter'],
    ['RECITATION', 'content_filter'],
    ['BLOCKLIST', 'content_filter'],
    ['PROHIBITED_CONTENT', 'content_filter'],
    ['SPII', 'content_filter'],
    ['OTHER', 'stop'],
  ];
  for (const [gemini, openai] of reasons) {
    const r = buildResponse(ctx({}), { candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: gemini }] }, NOW);
    t.equal((r.choices as { finish_reason: string }[])[0]?.finish_reason, openai, `${gemini} → ${openai}`);
  }
});

const STREAM: SseEvent[] = [
  ev({
    candidates: [{ content: { parts: [{ text: 'The weather' }], role: 'model' }, index: 0 }],
    usageMetadata: { promptTokenCount: 30, totalTokenCount: 30 },
    modelVersion: 'gemini-2.5-flash',
    responseId: 'resp_1',
  }),
  ev({
    candidates: [{ content: { parts: [{ text: ' is' }, { functionCall: { name: 'get_weather', args: { city: 'Paris' } } }], role: 'model' }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 30, candidatesTokenCount: 8, totalTokenCount: 38, cachedContentTokenCount: 5 },
    modelVersion: 'gemini-2.5-flash',
    responseId: 'resp_1',
  }),
];

t.test('stream: role first, text deltas, whole tool call, finish, usage chunk, [DONE]', async (t) => {
  const s = createStreamTranslator(ctx({ model: 'gemini', stream: true, stream_options: { include_usage: true } }), NOW);
  const out = [...STREAM.flatMap((e) => s.event(e)), ...s.end()];
  const head = { id: 'resp_1', object: 'chat.completion.chunk', created: NOW, model: 'gemini-2.5-flash' };
  const choice = (delta: unknown, finish: string | null = null) => ({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null });
  t.same(
    out.map((e) => (e.data === '[DONE]' ? '[DONE]' : JSON.parse(e.data))),
    [
      choice({ role: 'assistant', content: '' }),
      choice({ content: 'The weather' }),
      choice({ content: ' is' }),
      choice({ tool_calls: [{ index: 0, id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }),
      choice({}, 'tool_calls'),
      { ...head, choices: [], usage: { prompt_tokens: 30, completion_tokens: 8, total_tokens: 38, prompt_tokens_details: { cached_tokens: 5 } } },
      '[DONE]',
    ],
  );
  t.same(s.end(), [], 'only once');
});

t.test('stream: no usage chunk without include_usage; errors are visible and final', async (t) => {
  const s = createStreamTranslator(ctx({ model: 'gemini', stream: true }), NOW);
  const out = [...STREAM.flatMap((e) => s.event(e)), ...s.end()];
  t.notOk(out.some((e) => e.data !== '[DONE]' && JSON.parse(e.data).choices.length === 0), 'no usage chunk');
  t.equal(out.at(-1)?.data, '[DONE]');

  const f = createStreamTranslator(ctx({ model: 'gemini', stream: true }), NOW);
  f.event(STREAM[0]!);
  const err = f.event(ev({ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }));
  t.same(err, [{ event: 'error', data: JSON.stringify({ error: { message: 'The model is overloaded.', type: 'UNAVAILABLE', param: null, code: 'UNAVAILABLE' } }) }]);
  t.same(f.event(STREAM[1]!), [], 'nothing after the error');
  t.same(f.end(), [], 'no [DONE] after an error');
  t.equal(createStreamTranslator(ctx({}), NOW).event({ data: '{oops' })[0]?.event, 'error');
});

t.test('error: Google error bodies map to the OpenAI shape', async (t) => {
  const c = ctx({ model: 'gemini' });
  t.same(translator.error(c, 429, { error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } }), {
    error: { message: 'Resource has been exhausted (e.g. check quota).', type: 'RESOURCE_EXHAUSTED', param: null, code: 'RESOURCE_EXHAUSTED' },
  });
  t.same(translator.error(c, 400, [{ error: { code: 400, message: 'bad', status: 'INVALID_ARGUMENT' } }]).error, {
    message: 'bad',
    type: 'INVALID_ARGUMENT',
    param: null,
    code: 'INVALID_ARGUMENT',
  });
  t.same(translator.error(c, 503, 'upstream html'), { error: { message: 'upstream html', type: 'UNAVAILABLE', param: null, code: 'UNAVAILABLE' } });
  t.same(translator.error(c, 401, undefined), {
    error: { message: 'Gemini answered HTTP 401', type: 'UNAUTHENTICATED', param: null, code: 'UNAUTHENTICATED' },
  });
});

t.test('mock: CRLF stream through the parser and translator; key rules; tool call; errors', async (t) => {
  const mock = await startMockUpstream({ port: 0 });
  t.teardown(() => mock.close());
  const target = { provider: 'google', apiKey: 'AIza-mock' };
  const c = ctx({
    model: 'gemini-2.5-flash',
    stream: true,
    stream_options: { include_usage: true },
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Tell me about the weather in Paris today please' },
    ],
  });
  const call = translator.request(c);
  const post = (path: string, headers: Record<string, string>, body: unknown = call.body) =>
    undiciRequest(`${mock.url}/v1beta${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  const res = await post(call.path, { ...google.authHeaders(target), 'x-mock-chunks': '3' });
  t.equal(res.statusCode, 200);
  const raw = Buffer.concat(await (async () => { const b: Buffer[] = []; for await (const p of res.body) b.push(p as Buffer); return b; })());
  t.match(raw.toString(), /^data: \{.*\}\r\n\r\n/, 'frames end in CRLF CRLF');
  const parser = new SseParser();
  const s = translator.stream(c);
  const out = [...parser.push(raw), ...parser.end()].flatMap((e) => s.event(e));
  out.push(...s.end());
  t.equal(out.at(-1)?.data, '[DONE]');
  const bodies = out.slice(0, -1).map((e) => JSON.parse(e.data));
  t.equal(bodies.map((b) => b.choices[0]?.delta?.content ?? '').join(''), 'Mock reply to: Tell me about the weather in Paris today');
  t.equal(bodies.at(-2).choices[0].finish_reason, 'stop');
  const usage = bodies.at(-1).usage;
  t.ok(usage.completion_tokens > 0);
  t.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);

  const plain = translator.request({ ...c, request: { ...c.request, stream: false } });
  const noKey = await post(plain.path, {});
  t.equal(noKey.statusCode, 403);
  t.match(await noKey.body.json(), { error: { code: 403, status: 'PERMISSION_DENIED' } });
  const keyInUrl = await post(`${plain.path}?key=AIza-mock`, google.authHeaders(target));
  t.equal(keyInUrl.statusCode, 400);
  await keyInUrl.body.dump();

  const tc = ctx({
    model: 'gemini-2.5-flash',
    messages: [{ role: 'user', content: 'Weather?' }],
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
  });
  const tcall = translator.request(tc);
  const toolRes = await post(tcall.path, { ...google.authHeaders(target), 'x-mock-tool-call': '1' }, tcall.body);
  const mapped = translator.response(tc, await toolRes.body.json());
  const choice = (mapped.choices as { message: { tool_calls: { function: unknown }[] }; finish_reason: string }[])[0];
  t.equal(choice?.finish_reason, 'tool_calls');
  t.same(choice?.message.tool_calls[0]?.function, { name: 'get_weather', arguments: '{"city":"Paris"}' });

  const failed = await post(tcall.path, { ...google.authHeaders(target), 'x-mock-status': '429' }, tcall.body);
  t.equal(failed.statusCode, 429);
  t.same(translator.error(tc, 429, await failed.body.json()).error, {
    message: 'Resource has been exhausted (e.g. check quota).',
    type: 'RESOURCE_EXHAUSTED',
    param: null,
    code: 'RESOURCE_EXHAUSTED',
  });
});
