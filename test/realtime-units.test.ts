/**
 * The realtime plugin's machinery as plain functions: usage summed from `response.done` events
 * (and nothing else), the order in which a plan's targets are tried, and the upstream URL and
 * headers per provider.
 */
import t from 'tap';
import { GatewayContext, createLogger, type CustomHostPolicy, type RoutePlan } from '../core/index.js';
import { UsageMeter } from '../plugins/realtime/usage.js';
import { candidates, upstreamCall } from '../plugins/realtime/target.js';

const event = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

t.test('usage: summed over response.done events only; malformed or other events are ignored', async (t) => {
  const meter = new UsageMeter();
  t.equal(meter.usage, undefined, 'no usage before a response');
  meter.observe(event({ type: 'response.output_text.delta', delta: 'mentions "response.done" in text' }));
  meter.observe(Buffer.from('{"type":"response.done", broken'));
  meter.observe(event({ type: 'response.done', response: { usage: null } }));
  t.equal(meter.usage, undefined, 'still none');
  meter.observe(event({ type: 'response.done', response: { usage: { total_tokens: 18, input_tokens: 11, output_tokens: 7, input_token_details: { cached_tokens: 3 } } } }));
  meter.observe(event({ type: 'response.done', response: { usage: { input_tokens: 5, output_tokens: -2, output_token_details: { reasoning_tokens: 4 } } } }));
  t.same(meter.usage, { prompt_tokens: 16, completion_tokens: 7, total_tokens: 23, cached_tokens: 3, reasoning_tokens: 4, source: 'upstream' });
  t.equal(meter.responses, 2);
});

function ctx(url = '/v1/realtime?model=gpt-realtime', headers: Record<string, string> = {}): GatewayContext {
  return new GatewayContext({ method: 'GET', url, headers, httpVersion: '1.1', route: { kind: 'passthrough', upstreamPath: '/realtime' }, log: createLogger({ level: 'silent' }), start: 0 });
}

const POLICY: CustomHostPolicy = { allow: ['127.0.0.1'], allow_loopback: true };

t.test('plan order: fallback tries each leaf in order; inherited custom host and override model', async (t) => {
  const c = ctx();
  c.plan = {
    root: {
      strategy: { mode: 'fallback' },
      custom_host: 'http://127.0.0.1:1/v1',
      override_params: { model: 'a' },
      targets: [{ target: { provider: 'openai', apiKey: 'k1' } }, { override_params: { model: 'b' }, target: { provider: 'openai', apiKey: 'k2', customHost: 'http://127.0.0.1:2/v1' } }],
    },
  } satisfies RoutePlan;
  const list = candidates(c, () => {
    throw new Error('no direct mode with a plan');
  });
  t.same(
    list.map((x) => [x.path, x.target.customHost, x.target.overrideParams?.model]),
    [
      ['config.targets[0]', 'http://127.0.0.1:1/v1', 'a'],
      ['config.targets[1]', 'http://127.0.0.1:2/v1', 'b'],
    ],
  );
  c.plan = { root: { strategy: { mode: 'loadbalance' }, targets: [{ weight: 0, target: { provider: 'openai' } }, { target: { provider: 'azure-openai' } }] } };
  for (let i = 0; i < 20; i++) t.equal(candidates(c, () => ({ provider: 'x' }))[0]!.target.provider, 'azure-openai', 'weight 0 is never chosen');
});

t.test('upstream URL and headers per provider; the guard and provider fields are checked', async (t) => {
  const openai = upstreamCall(ctx('/v1/realtime?model=gpt-realtime&foo=1', { 'openai-beta': 'realtime=v2' }), { provider: 'openai', apiKey: 'sk-1', overrideParams: { model: 'gpt-x' } }, POLICY);
  t.equal(openai.url, 'wss://api.openai.com/v1/realtime?foo=1&model=gpt-x');
  t.same(openai.headers, { 'openai-beta': 'realtime=v2', authorization: 'Bearer sk-1' }, "the client's OpenAI-Beta wins over the default");
  const azure = upstreamCall(ctx('/v1/realtime?deployment=dep1'), { provider: 'azure-openai', apiKey: 'az', providerOptions: { resource_name: 'myres' } }, POLICY);
  t.equal(azure.url, 'wss://myres.openai.azure.com/openai/realtime?api-version=2024-10-01-preview&deployment=dep1');
  t.same(azure.headers, { 'api-key': 'az' });
  t.throws(() => upstreamCall(ctx(), { provider: 'azure-openai', providerOptions: { resource_name: '127.0.0.1:9/x' } }, POLICY), { code: 'invalid_provider_field' });
  t.throws(() => upstreamCall(ctx(), { provider: 'openai', customHost: 'http://10.0.0.5/v1' }, POLICY), { code: 'invalid_upstream_url' }, 'a private address is refused');
  t.throws(() => upstreamCall(ctx('/v1/realtime'), { provider: 'openai' }, POLICY), { code: 'realtime_missing_model' });
  t.throws(() => upstreamCall(ctx(), { provider: 'anthropic' }, POLICY), { code: 'realtime_unsupported_provider' });
});
