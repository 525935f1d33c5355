/**
 * Nothing dropped in silence on translated providers:
 * - `response_format` to Anthropic and Bedrock Converse is a forced answer tool whose input comes
 *   back as the message text (plain and streamed, finish_reason `stop`); to Gemini it is
 *   responseMimeType + responseJsonSchema;
 * - `n > 1` and `logprobs` where the provider cannot answer them are a 400 `unsupported_parameter`
 *   naming the field (Gemini maps them: candidateCount, responseLogprobs/logprobs);
 * - `top_k` from the Anthropic ingress to an OpenAI-shaped upstream is a 400 under strict
 *   compliance and forwarded without it.
 */
import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { MOCK_AWS_ACCESS_KEY_ID, MOCK_AWS_SECRET_ACCESS_KEY } from '../bench/mock/sigv4.js';
import { anthropic } from '../core/providers/anthropic/index.js';
import { google } from '../core/providers/google/index.js';
import type { TranslateContext } from '../core/providers/types.js';
import { startGateway, startMock } from './helpers/gateway.js';

const schemaFormat = {
  type: 'json_schema' as const,
  json_schema: {
    name: 'city_facts',
    strict: true,
    schema: { type: 'object', properties: { city: { type: 'string' }, population: { type: 'integer' } }, required: ['city', 'population'], additionalProperties: false },
  },
};
const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Facts about Paris' }];

const ctx = (request: Record<string, unknown>, strict = true): TranslateContext => ({ route: 'chat.completions', target: { provider: 'x' }, request, strict });

t.test('Anthropic request: the answer tool, forced alone, `any` beside the caller’s tools', async (t) => {
  const translate = anthropic.translate!;
  const alone = translate.request(ctx({ model: 'c', messages, response_format: schemaFormat })).body;
  t.same(alone.tools, [{ name: 'city_facts', description: 'Respond with JSON that matches this schema.', input_schema: schemaFormat.json_schema.schema }]);
  t.same(alone.tool_choice, { type: 'tool', name: 'city_facts', disable_parallel_tool_use: true });
  t.notOk('response_format' in alone, 'no response_format field goes to Anthropic');

  const object = translate.request(ctx({ model: 'c', messages, response_format: { type: 'json_object' } })).body;
  t.same(object.tools, [{ name: 'json_output', description: 'Respond with a JSON object.', input_schema: { type: 'object' } }]);

  const fn = { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } };
  const beside = translate.request(ctx({ model: 'c', messages, tools: [fn], response_format: schemaFormat })).body;
  t.equal((beside.tools as unknown[]).length, 2);
  t.same(beside.tool_choice, { type: 'any' }, 'a tool call or the answer');
  const named = translate.request(ctx({ model: 'c', messages, tools: [fn], tool_choice: { type: 'function', function: { name: 'lookup' } }, response_format: schemaFormat })).body;
  t.same(named.tool_choice, { type: 'tool', name: 'lookup' }, 'a named function stays forced');

  const text = translate.request(ctx({ model: 'c', messages, response_format: { type: 'text' } })).body;
  t.notOk('tools' in text, 'text format adds nothing');

  // The answer: the tool input is the text, finish `stop`; another tool stays a tool call.
  const answer = translate.response(ctx({ model: 'c', messages, response_format: schemaFormat }), {
    id: 'msg_1',
    model: 'c',
    content: [{ type: 'tool_use', id: 'toolu_1', name: 'city_facts', input: { city: 'Paris', population: 2 } }],
    stop_reason: 'tool_use',
    usage: { input_tokens: 1, output_tokens: 1 },
  }) as { choices: Array<{ message: Record<string, unknown>; finish_reason: string }> };
  t.equal(answer.choices[0]!.message.content, '{"city":"Paris","population":2}');
  t.notOk('tool_calls' in answer.choices[0]!.message);
  t.equal(answer.choices[0]!.finish_reason, 'stop');
});

t.test('refused where the provider cannot answer: n, logprobs, top_logprobs', async (t) => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ n: 2 }, 'n'],
    [{ logprobs: true }, 'logprobs'],
    [{ logprobs: false, top_logprobs: 3 }, 'top_logprobs'],
  ];
  for (const [extra, param] of cases) {
    for (const [name, build] of [
      ['anthropic', () => anthropic.translate!.request(ctx({ model: 'c', messages, ...extra }))],
    ] as const) {
      const err = (() => {
        try {
          build();
          return undefined;
        } catch (e) {
          return e as { status: number; code: string; param: string };
        }
      })();
      t.match(err, { status: 400, code: 'unsupported_parameter', param }, `${name}: ${JSON.stringify(extra)}`);
    }
  }
  // What asks for nothing passes: n 1, logprobs false.
  t.doesNotThrow(() => anthropic.translate!.request(ctx({ model: 'c', messages, n: 1, logprobs: false, top_logprobs: 0 })));
});

t.test('Gemini maps them: responseJsonSchema, candidateCount, logprobs, top_k without strict', async (t) => {
  const translate = google.translate!;
  const config = (request: Record<string, unknown>, strict = true) => translate.request(ctx({ model: 'gemini-x', messages, ...request }, strict)).body.generationConfig as Record<string, unknown>;
  t.same(config({ response_format: schemaFormat }), { responseMimeType: 'application/json', responseJsonSchema: schemaFormat.json_schema.schema });
  t.same(config({ response_format: { type: 'json_object' } }), { responseMimeType: 'application/json' });
  t.same(config({ n: 3 }), { candidateCount: 3 });
  t.same(config({ logprobs: true, top_logprobs: 2 }), { responseLogprobs: true, logprobs: 2 });
  t.equal(translate.request(ctx({ model: 'g', messages, top_k: 5 })).body.generationConfig, undefined, 'top_k: strict sends nothing');
  t.same(config({ top_k: 5 }, false), { topK: 5 });

  const answer = translate.response(ctx({ model: 'g', messages, logprobs: true, top_logprobs: 1 }), {
    candidates: [
      {
        content: { role: 'model', parts: [{ text: 'Hi' }] },
        finishReason: 'STOP',
        logprobsResult: {
          chosenCandidates: [{ token: 'Hi', logProbability: -0.25 }],
          topCandidates: [{ candidates: [{ token: 'Hi', logProbability: -0.25 }, { token: 'Yo', logProbability: -2 }] }],
        },
      },
    ],
  }) as { choices: Array<{ logprobs: unknown }> };
  t.same(answer.choices[0]!.logprobs, {
    content: [
      {
        token: 'Hi',
        logprob: -0.25,
        bytes: [72, 105],
        top_logprobs: [
          { token: 'Hi', logprob: -0.25, bytes: [72, 105] },
          { token: 'Yo', logprob: -2, bytes: [89, 111] },
        ],
      },
    ],
    refusal: null,
  });
});

t.test('through the gateway with the official SDKs', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t);

  const claude = new OpenAI({
    baseURL: `${gw.url}/v1`,
    apiKey: 'sk-ant',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': `${mock.url}/v1`, 'x-mock-tool-call': '1' },
  });
  const plain = await claude.chat.completions.create({ model: 'claude', messages, response_format: schemaFormat });
  t.same(JSON.parse(plain.choices[0]!.message.content!), { city: 'Paris', population: 1 }, 'Anthropic: the JSON is the content');
  t.equal(plain.choices[0]!.finish_reason, 'stop');
  t.notOk(plain.choices[0]!.message.tool_calls, 'no tool call shows');
  const sent = JSON.parse(mock.requests.at(-1)!.body.toString()) as { tool_choice: unknown };
  t.same(sent.tool_choice, { type: 'tool', name: 'city_facts', disable_parallel_tool_use: true });

  let streamed = '';
  let finish: string | null = null;
  let toolDeltas = 0;
  for await (const c of await claude.chat.completions.create({ model: 'claude', messages, response_format: schemaFormat, stream: true })) {
    streamed += c.choices[0]?.delta.content ?? '';
    if (c.choices[0]?.delta.tool_calls) toolDeltas++;
    finish = c.choices[0]?.finish_reason ?? finish;
  }
  t.same(JSON.parse(streamed), { city: 'Paris', population: 1 }, 'Anthropic streamed: the JSON is the content');
  t.equal(finish, 'stop');
  t.equal(toolDeltas, 0);

  // The SDK's parse helper reads it like an OpenAI answer.
  const parsed = await claude.chat.completions.parse({ model: 'claude', messages, response_format: schemaFormat });
  t.same(parsed.choices[0]!.message.parsed, { city: 'Paris', population: 1 });

  const refused = await claude.chat.completions.create({ model: 'claude', messages, n: 2 }).catch((e: unknown) => e);
  t.type(refused, OpenAI.BadRequestError);
  t.match((refused as InstanceType<typeof OpenAI.APIError>).error, { code: 'unsupported_parameter', param: 'n' });

  // Bedrock Converse, the same way.
  const bedrock = new OpenAI({
    baseURL: `${gw.url}/v1`,
    apiKey: 'unused',
    maxRetries: 0,
    defaultHeaders: {
      'x-gateway-provider': 'bedrock',
      'x-gateway-custom-host': mock.url,
      'x-gateway-aws-region': 'us-west-2',
      'x-gateway-aws-access-key-id': MOCK_AWS_ACCESS_KEY_ID,
      'x-gateway-aws-secret-access-key': MOCK_AWS_SECRET_ACCESS_KEY,
      'x-mock-tool-call': '1',
    },
  });
  const model = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
  const converse = await bedrock.chat.completions.create({ model, messages, response_format: schemaFormat });
  t.same(JSON.parse(converse.choices[0]!.message.content!), { city: 'Paris', population: 1 }, 'Bedrock: the JSON is the content');
  t.equal(converse.choices[0]!.finish_reason, 'stop');
  const converseSent = JSON.parse(mock.requests.at(-1)!.body.toString()) as { toolConfig: { toolChoice: unknown } };
  t.same(converseSent.toolConfig.toolChoice, { tool: { name: 'city_facts' } });
  let bedrockText = '';
  let bedrockFinish: string | null = null;
  for await (const c of await bedrock.chat.completions.create({ model, messages, response_format: schemaFormat, stream: true })) {
    bedrockText += c.choices[0]?.delta.content ?? '';
    bedrockFinish = c.choices[0]?.finish_reason ?? bedrockFinish;
  }
  t.same(JSON.parse(bedrockText), { city: 'Paris', population: 1 }, 'Bedrock streamed: the JSON is the content');
  t.equal(bedrockFinish, 'stop');
  const logprobs = await bedrock.chat.completions.create({ model, messages, logprobs: true }).catch((e: unknown) => e);
  t.match((logprobs as InstanceType<typeof OpenAI.APIError>).error, { code: 'unsupported_parameter', param: 'logprobs' });

  // Anthropic SDK → an OpenAI-shaped upstream: top_k is refused under strict compliance, forwarded without it.
  const ingress = (strict: boolean) =>
    new Anthropic({
      baseURL: gw.url,
      apiKey: 'sk-x',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${mock.url}/v1`, 'x-gateway-strict-provider-compliance': String(strict) },
    });
  const params = { model: 'gpt-4o', max_tokens: 20, top_k: 5, messages: [{ role: 'user' as const, content: 'hi' }] };
  const strictErr = await ingress(true).messages.create(params).catch((e: unknown) => e);
  t.type(strictErr, Anthropic.BadRequestError);
  t.match((strictErr as InstanceType<typeof Anthropic.APIError>).error, { error: { code: 'unsupported_parameter', param: 'top_k' } });
  const before = mock.requests.length;
  await ingress(false).messages.create(params);
  t.equal(mock.requests.length, before + 1);
  t.equal((JSON.parse(mock.requests.at(-1)!.body.toString()) as { top_k?: number }).top_k, 5, 'forwarded without strict compliance');
});
