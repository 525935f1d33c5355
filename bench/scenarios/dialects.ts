/**
 * Dialects: the plain gateway (empty pipeline, direct mode) calling the mock in each provider's
 * wire format, against the OpenAI pass-through in the same run. What it isolates is the cost of
 * translation: building the provider's request, translating the answer (and, for Bedrock, SigV4
 * signing every call; for Vertex, the regional URL and its token), and for the client-dialect
 * ingresses (Anthropic's Messages, OpenAI's Responses on Anthropic) the second translation on top.
 */
import { MOCK_AWS_ACCESS_KEY_ID, MOCK_AWS_SECRET_ACCESS_KEY } from '../mock/sigv4.js';
import { VERTEX_DIRECT_TOKEN } from '../mock/vertex.js';
import { endpointRounds, errorNotes, type LoadEndpoint } from '../lib/load-rounds.js';
import { targetNamed, type Scenario } from '../lib/scenario.js';
import { sendOnce } from '../lib/send-once.js';
import { round } from '../lib/stats.js';
import { fmt } from '../lib/table.js';
import { CHAT_BODY_JSON, type BenchRequest } from '../lib/targets.js';

type Name = 'openai' | 'anthropic' | 'google' | 'bedrock' | 'vertex gemini' | 'vertex claude' | 'messages→openai' | 'responses→anthropic';

const ANTHROPIC_BODY_JSON = JSON.stringify({
  model: 'gpt-4o-mini',
  max_tokens: 16,
  system: 'You are terse.',
  messages: [{ role: 'user', content: 'Say hello to the benchmark in one short line.' }],
});

const RESPONSES_BODY_JSON = JSON.stringify({
  model: 'claude-sonnet-4',
  max_output_tokens: 16,
  instructions: 'You are terse.',
  input: 'Say hello to the benchmark in one short line.',
});

/** Direct-mode Vertex: the mock's fixed access token, project and region; the custom host stands for the regional host. */
const VERTEX = { authorization: `Bearer ${VERTEX_DIRECT_TOKEN}`, 'x-gateway-vertex-project-id': 'bench-project', 'x-gateway-vertex-region': 'us-central1' };

function request(provider: string, host: string, extra: Record<string, string> = {}, path = '/v1/chat/completions', body = CHAT_BODY_JSON): BenchRequest {
  return {
    path,
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench', 'x-gateway-provider': provider, 'x-gateway-custom-host': host, ...extra },
    body,
  };
}

export const dialects: Scenario = {
  name: 'dialects',
  isolates: 'translation cost per provider dialect (and the Anthropic-style ingress) against OpenAI pass-through, on the plain gateway',
  async run(ctx) {
    const tool = ctx.tools.load;
    if (tool === null) return { name: this.name, isolates: this.isolates, skipped: 'no HTTP/1.1 load tool', notes: [], checks: [], data: null };
    const mock = targetNamed(ctx, 'direct').origin;
    const gateway = targetNamed(ctx, 'gateway');
    const endpoints: Array<LoadEndpoint<Name>> = [
      { name: 'openai', origin: gateway.origin, request: gateway.chatRequest() },
      { name: 'anthropic', origin: gateway.origin, request: request('anthropic', `${mock}/v1`) },
      { name: 'google', origin: gateway.origin, request: request('google', `${mock}/v1beta`) },
      {
        name: 'bedrock',
        origin: gateway.origin,
        request: request('bedrock', mock, {
          'x-gateway-aws-region': 'us-east-1',
          'x-gateway-aws-access-key-id': MOCK_AWS_ACCESS_KEY_ID,
          'x-gateway-aws-secret-access-key': MOCK_AWS_SECRET_ACCESS_KEY,
        }),
      },
      { name: 'vertex gemini', origin: gateway.origin, request: request('vertex-ai', `${mock}/v1`, VERTEX, '/v1/chat/completions', CHAT_BODY_JSON.replace(/"model":"[^"]*"/, '"model":"gemini-2.5-flash"')) },
      { name: 'vertex claude', origin: gateway.origin, request: request('vertex-ai', `${mock}/v1`, VERTEX, '/v1/chat/completions', CHAT_BODY_JSON.replace(/"model":"[^"]*"/, '"model":"claude-sonnet-4@20250514"')) },
      { name: 'messages→openai', origin: gateway.origin, request: request('openai', `${mock}/v1`, {}, '/v1/messages', ANTHROPIC_BODY_JSON) },
      { name: 'responses→anthropic', origin: gateway.origin, request: request('anthropic', `${mock}/v1`, {}, '/v1/responses', RESPONSES_BODY_JSON) },
    ];
    for (const e of endpoints) {
      const answer = await sendOnce(e.origin, e.request);
      if (answer.status !== 200) throw new Error(`${e.name} probe answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    }
    const c = ctx.options.connections;
    const { rounds, summary } = await endpointRounds(ctx, tool, { label: `${this.name} c=${c}`, connections: c, endpoints });
    const base = summary.openai.rps;
    const rows = endpoints.map(({ name }) => [name, fmt(summary[name].rps, 0), fmt(summary[name].p50, 3), fmt(summary[name].p99, 3), fmt(summary[name].rps / base), String(summary[name].errors)]);
    const ratios = Object.fromEntries(endpoints.map(({ name }) => [name, round(summary[name].rps / base)]));
    const errors = endpoints.reduce((sum, { name }) => sum + summary[name].errors, 0);
    return {
      name: this.name,
      isolates: this.isolates,
      table: { title: `Dialects (${tool.name} -c${c}, ${ctx.options.duration}s × ${ctx.options.rounds} rounds, median)`, columns: ['dialect', 'req/s', 'p50 ms', 'p99 ms', '÷ openai', 'errors'], rows },
      notes: errorNotes(summary),
      headlines: [['dialects ÷ openai pass-through', endpoints.slice(1).map(({ name }) => `${name} ${fmt(ratios[name]!)}×`).join(', ')]],
      checks: [{ name: 'dialects: every translated call answered', value: errors, target: '= 0', unit: 'errors', pass: errors === 0 }],
      data: { tool: tool.name, connections: c, rounds, summary, ratios },
    };
  },
};
