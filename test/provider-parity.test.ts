/**
 * Stream and plain calls of the same answer agree on usage and cost, for every provider the
 * gateway ships: the client's view (the usage chunk against the body's usage) and the gateway's
 * (the metered usage and the priced cost in the request's log record).
 */
import t from 'tap';
import OpenAI from 'openai';
import { definePlugin, type PluginDefinition } from '../core/plugin.js';
import { buildLogRecord, type LogRecord } from '../core/observability/log-record.js';
import { optionalService } from '../core/services.js';
import { BUILT_IN_ADAPTERS } from '../core/providers/registry.js';
import { MOCK_AWS_ACCESS_KEY_ID, MOCK_AWS_SECRET_ACCESS_KEY } from '../bench/mock/sigv4.js';
import { VERTEX_DIRECT_TOKEN } from '../bench/mock/vertex.js';
import { startGateway, startMock } from './helpers/gateway.js';

interface Case {
  provider: string;
  model: string;
  /** Path after the mock's URL for the custom host. */
  base: string;
  headers?: Record<string, string>;
  /** The model has a price in the shipped table, so cost must be non-zero. */
  priced: boolean;
  /** The provider key the client sends (default: any key the mock accepts). */
  apiKey?: string;
}

const VERTEX = { 'x-gateway-vertex-project-id': 'parity-proj', 'x-gateway-vertex-region': 'us-east5' };

const OPENAI_FAMILY = BUILT_IN_ADAPTERS.filter((a) => a.translate === undefined && a.id !== 'azure-openai').map((a) => a.id);

const CASES: Case[] = [
  ...OPENAI_FAMILY.map((provider) => ({ provider, model: provider === 'openai' ? 'gpt-4o-mini' : 'some-model', base: '/v1', priced: provider === 'openai' })),
  { provider: 'azure-openai', model: 'gpt-4o-mini', base: '', headers: { 'x-gateway-azure-deployment-id': 'prod', 'x-gateway-azure-api-version': '2024-10-21' }, priced: false },
  { provider: 'anthropic', model: 'claude-sonnet-4-20250514', base: '/v1', headers: { 'x-mock-cache-read': '2' }, priced: true },
  { provider: 'google', model: 'gemini-2.5-flash', base: '/v1beta', priced: true },
  {
    provider: 'bedrock',
    model: 'us.anthropic.claude-3-5-sonnet-20240620-v1:0',
    base: '',
    headers: { 'x-gateway-aws-region': 'us-east-1', 'x-gateway-aws-access-key-id': MOCK_AWS_ACCESS_KEY_ID, 'x-gateway-aws-secret-access-key': MOCK_AWS_SECRET_ACCESS_KEY, 'x-mock-cache-read': '2' },
    priced: true,
  },
  // Vertex AI takes an access token in direct mode (the mock accepts only tokens it knows); priced as vertex-ai entries.
  { provider: 'vertex-ai', model: 'gemini-2.5-flash', base: '/v1', headers: VERTEX, apiKey: VERTEX_DIRECT_TOKEN, priced: true },
  { provider: 'vertex-ai', model: 'claude-sonnet-4@20250514', base: '/v1', headers: { ...VERTEX, 'x-mock-cache-read': '2' }, apiKey: VERTEX_DIRECT_TOKEN, priced: true },
];

t.test('every built-in provider is covered', async (t) => {
  t.same(new Set(CASES.map((c) => c.provider)), new Set(BUILT_IN_ADAPTERS.map((a) => a.id)));
});

t.test('stream and plain usage and cost agree, per provider', async (t) => {
  const mock = await startMock(t);
  const records: LogRecord[] = [];
  const probe = definePlugin({
    name: 'probe',
    setup: (app) => {
      const pricing = optionalService(app, 'pricing', 'costs are zero');
      return { meterUsage: true, onDone: (ctx, outcome) => void records.push(buildLogRecord(ctx, outcome, pricing())) };
    },
  }) as PluginDefinition<never>;
  const gw = await startGateway(t, { yaml: 'pipeline: [probe, admin-catalog]\n', plugins: { probe } });

  for (const c of CASES) {
    await t.test(`${c.provider} ${c.model}`, async (t) => {
      const client = new OpenAI({
        baseURL: `${gw.url}/v1`,
        apiKey: c.apiKey ?? 'provider-key-0001',
        maxRetries: 0,
        defaultHeaders: { 'x-gateway-provider': c.provider, 'x-gateway-custom-host': mock.url + c.base, ...c.headers },
      });
      const messages: OpenAI.ChatCompletionMessageParam[] = [
        { role: 'system', content: 'Answer in one line.' },
        { role: 'user', content: `Parity check for ${c.provider}` },
      ];
      const plain = await client.chat.completions.create({ model: c.model, messages });
      const stream = await client.chat.completions.create({ model: c.model, messages, stream: true, stream_options: { include_usage: true } });
      let text = '';
      let streamUsage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (chunk.usage) streamUsage = chunk.usage;
      }
      t.equal(text, plain.choices[0]?.message.content, 'same text');
      t.ok(plain.usage && plain.usage.prompt_tokens > 0 && plain.usage.completion_tokens > 0, 'the plain answer has usage');
      t.same(streamUsage, plain.usage, 'the client sees the same usage');

      await new Promise((r) => setTimeout(r, 20));
      const [a, b] = records.splice(0);
      t.ok(a && b, 'both requests were recorded');
      t.ok(a!.usage, 'the plain call was metered');
      t.same(b!.usage, a!.usage, 'metered usage agrees (tokens, cached tokens, source)');
      t.equal(a!.usage?.prompt_tokens, plain.usage?.prompt_tokens, 'and matches what the client was told');
      t.equal(a!.cost_cents, b!.cost_cents, 'and so does the cost');
      if (c.priced) t.ok(a!.cost_cents > 0, `${c.model} is priced`);
    });
  }
});
