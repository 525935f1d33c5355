/**
 * Routing configs over real sockets, through the mock upstream's failure modes: fallback, load
 * balance, conditional, nesting, retries and backoff, timeouts, inheritance, and streams.
 * Each target has its own api_key, so the mock's recorded `authorization` tells which one ran.
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, startMock, type MockUpstream } from './helpers/gateway.js';

type Json = Record<string, unknown>;
const chat = (content = 'route me', extra: Json = {}): string => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });

t.test('routing configs', async (t) => {
  const mock = await startMock(t);
  // Breakers off: these tests reuse failing targets on purpose; breakers have their own tests.
  const gw = await startGateway(t, { yaml: 'pipeline:\n  - config-strategy: {circuit_breaker: false}\n' });
  const host = (directives = ''): string => `${mock.url}${directives ? `/mock/${directives}` : ''}/v1`;
  const leaf = (key: string, directives = '', extra: Json = {}): Json => ({ provider: 'openai', api_key: key, custom_host: host(directives), ...extra });
  const used = (m: MockUpstream): string[] => m.requests.map((r) => String(r.headers['authorization']).replace('Bearer ', ''));

  async function send(config: Json, body = chat(), headers: Record<string, string> = {}) {
    mock.reset();
    const started = Date.now();
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-config': JSON.stringify(config), ...headers },
      body,
    });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, text, json: (() => { try { return JSON.parse(text) as Json; } catch { return {}; } })(), ms: Date.now() - started, keys: used(mock) };
  }

  t.test('fallback moves on after a non-2xx and says which target answered', async (t) => {
    const r = await send({ strategy: { mode: 'fallback' }, targets: [leaf('a', 'status=503'), leaf('b')] });
    t.equal(r.status, 200);
    t.same(r.keys, ['a', 'b']);
    t.equal(r.headers['x-gateway-last-used-option-index'], 'config.targets[1]');
    t.equal(r.headers['x-gateway-provider'], 'openai');
  });

  t.test('fallback with on_status_codes moves on only after those', async (t) => {
    const only429 = { strategy: { mode: 'fallback', on_status_codes: [429] } };
    const r = await send({ ...only429, targets: [leaf('a', 'status=500'), leaf('b')] });
    t.equal(r.status, 500, 'the 500 comes back as it came');
    t.equal(r.headers['x-gateway-error-source'], 'upstream');
    t.same(r.keys, ['a']);
    const r2 = await send({ ...only429, targets: [leaf('a', 'status=429'), leaf('b')] });
    t.equal(r2.status, 200);
    t.same(r2.keys, ['a', 'b']);
  });

  t.test('connection errors and timeouts trigger fallback', async (t) => {
    const refused = await send({ strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: 'a', custom_host: 'http://127.0.0.1:9/v1' }, leaf('b')] });
    t.equal(refused.status, 200);
    t.same(refused.keys, ['b']);
    const slow = await send({ strategy: { mode: 'fallback' }, targets: [leaf('a', 'delay=2000', { request_timeout: 200 }), leaf('b')] });
    t.equal(slow.status, 200);
    t.same(slow.keys, ['a', 'b']);
    t.ok(slow.ms < 1500, `gave up on the slow target after its timeout (${slow.ms} ms)`);
  });

  t.test('a gateway-made 4xx never triggers fallback', async (t) => {
    const r = await send({ strategy: { mode: 'fallback' }, targets: [{ provider: 'no-such-provider', api_key: 'a' }, leaf('b')] });
    t.equal(r.status, 400);
    t.equal((r.json.error as Json).code, 'unknown_provider');
    t.same(r.keys, [], 'the second target was not tried');
  });

  t.test('when every target fails, the last upstream answer returns as it came', async (t) => {
    const r = await send({ strategy: { mode: 'fallback' }, targets: [leaf('a', 'status=503'), leaf('b', 'status=502;retry_after=9')] });
    t.equal(r.status, 502);
    t.equal(r.headers['retry-after'], '9', 'with its headers');
    t.equal((r.json.error as Json).type, 'server_error', 'and its body');
    t.equal(r.headers['x-gateway-error-source'], 'upstream');
    t.equal(r.headers['x-gateway-last-used-option-index'], 'config.targets[1]');
    const none = await send({ strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: 'a', custom_host: 'http://127.0.0.1:9/v1' }, { provider: 'openai', api_key: 'b', custom_host: 'http://127.0.0.1:9/v1' }] });
    t.equal(none.status, 502);
    t.equal((none.json.error as Json).code, 'upstream_unreachable');
    t.equal(none.headers['x-gateway-error-source'], 'gateway');
  });

  t.test('load balance follows the weights (statistically), and weight 0 is never chosen', async (t) => {
    const config = { strategy: { mode: 'loadbalance' }, targets: [leaf('a', '', { weight: 0.7 }), leaf('b', '', { weight: 0.3 }), leaf('c', '', { weight: 0 })] };
    const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
    const n = 600;
    for (let i = 0; i < n; i++) {
      const r = await send(config);
      counts[r.keys[0]!]!++;
    }
    // Binomial: sd = sqrt(n·p·(1−p)) ≈ 11.2 for p = 0.7; 5 sd is a flake rate of about 1 in 3.5 million.
    const sd = Math.sqrt(n * 0.7 * 0.3);
    t.ok(Math.abs(counts.a! - 0.7 * n) < 5 * sd, `a: ${counts.a} of ${n} (expected ${0.7 * n} ± ${(5 * sd).toFixed(0)})`);
    t.ok(Math.abs(counts.b! - 0.3 * n) < 5 * sd, `b: ${counts.b} of ${n}`);
    t.equal(counts.c, 0, 'weight 0: never');
  });

  t.test('conditional routing with nested $and / $or / $in / $regex', async (t) => {
    const config = {
      strategy: {
        mode: 'conditional',
        conditions: [
          { query: { $and: [{ 'metadata.tier': { $eq: 'pro' } }, { $or: [{ 'params.model': { $in: ['gpt-4o', 'gpt-4.1'] } }, { 'metadata.region': { $regex: '^eu-' } }] }] }, then: 'premium' },
          { query: { 'params.max_tokens': { $gt: 1000 } }, then: 'long' },
        ],
        default: 'basic',
      },
      targets: [leaf('premium', '', { name: 'premium' }), leaf('long', '', { name: 'long' }), leaf('basic', '', { name: 'basic' })],
    };
    const meta = (m: Json): Record<string, string> => ({ 'x-gateway-metadata': JSON.stringify(m) });
    t.same((await send(config, chat('x', { model: 'gpt-4o' }), meta({ tier: 'pro' }))).keys, ['premium'], '$and + $in');
    t.same((await send(config, chat(), meta({ tier: 'pro', region: 'eu-west-1' }))).keys, ['premium'], '$and + $regex');
    t.same((await send(config, chat(), meta({ tier: 'pro', region: 'us-east-1' }))).keys, ['basic'], 'neither branch of $or: default');
    t.same((await send(config, chat('x', { max_tokens: 2000 }), meta({ tier: 'free' }))).keys, ['long'], '$gt on a param');
    const last = await send(config, chat('x', { max_tokens: 2000 }), meta({ tier: 'free' }));
    t.equal(last.headers['x-gateway-last-used-option-index'], 'config.targets[1]');
    const { default: _ignored, ...noDefault } = config.strategy;
    const none = await send({ ...config, strategy: noDefault }, chat());
    t.equal(none.status, 400);
    t.equal((none.json.error as Json).code, 'no_matching_route');
  });

  t.test('ReDoS: $regex ^(a+)+$ against a long model name answers at once and routes correctly', async (t) => {
    // On V8's backtracking engine this pattern took 9.5 s for 28 characters, doubling with each
    // extra one; 40 would freeze the event loop for hours. RE2 answers in linear time.
    const config = {
      strategy: { mode: 'conditional', conditions: [{ query: { 'params.model': { $regex: '^(a+)+$' } }, then: 'evil' }], default: 'fine' },
      targets: [leaf('evil', '', { name: 'evil' }), leaf('fine', '', { name: 'fine' })],
    };
    const miss = await send(config, chat('x', { model: `${'a'.repeat(40)}!` }));
    t.equal(miss.status, 200);
    t.same(miss.keys, ['fine'], 'no match: the default target');
    t.ok(miss.ms < 2000, `answered at once (${miss.ms} ms; a sanity bound, not a benchmark)`);
    const hit = await send(config, chat('x', { model: 'a'.repeat(40) }));
    t.same(hit.keys, ['evil'], 'a match still routes by it');
  });

  t.test('a $regex the linear-time engine refuses is a 400 naming the field', async (t) => {
    const config = (pattern: string) => ({
      strategy: { mode: 'conditional', conditions: [{ query: { 'params.model': { $regex: pattern } }, then: 'a' }] },
      targets: [leaf('a', '', { name: 'a' })],
    });
    for (const pattern of ['(a)\\1', '^(?=gpt)', 'x'.repeat(513)]) {
      const r = await send(config(pattern));
      t.equal(r.status, 400);
      t.equal((r.json.error as Json).param, 'config.strategy.conditions[0].query.params.model.$regex');
      t.same(r.keys, [], 'nothing was called');
    }
  });

  t.test('nested: fallback over a load balance', async (t) => {
    const failingPool = { strategy: { mode: 'loadbalance' }, targets: [leaf('lb1', 'status=503'), leaf('lb2', 'status=503')] };
    const r = await send({ strategy: { mode: 'fallback' }, targets: [failingPool, leaf('backup')] });
    t.equal(r.status, 200);
    t.equal(r.keys.length, 2);
    t.equal(r.keys[1], 'backup');
    t.equal(r.headers['x-gateway-last-used-option-index'], 'config.targets[1]');
    const healthyPool = { strategy: { mode: 'loadbalance' }, targets: [leaf('lb1', '', { weight: 0 }), leaf('lb2')] };
    const r2 = await send({ strategy: { mode: 'fallback' }, targets: [healthyPool, leaf('backup')] });
    t.equal(r2.headers['x-gateway-last-used-option-index'], 'config.targets[0].targets[1]');
  });

  t.test('retries: count, header, backoff bounds, retry-after', async (t) => {
    const flaky = `fail_first=2;key=flaky-${Date.now()}`;
    const r = await send({ retry: { attempts: 3 }, targets: [leaf('a', flaky)] });
    t.equal(r.status, 200, 'succeeds on the third call');
    t.same(r.keys, ['a', 'a', 'a']);
    t.equal(r.headers['x-gateway-retry-attempt-count'], '2');
    // Full jitter: waits in [0,100) and [0,200) ms.
    t.ok(r.ms < 300 + 400, `two backoffs stayed under their caps (${r.ms} ms)`);

    const always = await send({ retry: { attempts: 2 }, targets: [leaf('a', 'status=503')] });
    t.equal(always.status, 503);
    t.equal(always.keys.length, 3, 'attempts = retries after the first call');
    t.equal(always.headers['x-gateway-retry-attempt-count'], '2');

    const bad = await send({ retry: { attempts: 3 }, targets: [leaf('a', 'status=400')] });
    t.equal(bad.keys.length, 1, 'a 400 is not retried');

    const paced = await send({ retry: { attempts: 1, use_retry_after_header: true }, targets: [leaf('a', `fail_first=1;key=paced-${Date.now()};retry_after_ms=400`)] });
    t.equal(paced.status, 200);
    t.ok(paced.ms >= 400, `waited what retry-after-ms asked (${paced.ms} ms)`);

    const tooLong = await send({ retry: { attempts: 3, use_retry_after_header: true }, targets: [leaf('a', 'status=429;retry_after=120')] });
    t.equal(tooLong.status, 429, 'a retry-after beyond the bound is not waited for');
    t.equal(tooLong.keys.length, 1);
    t.ok(tooLong.ms < 1000);
  });

  t.test('request_timeout per attempt; x-gateway-request-timeout overrides it', async (t) => {
    const config = { request_timeout: 200, targets: [leaf('a', 'delay=600')] };
    const r = await send(config);
    t.equal(r.status, 504);
    t.equal((r.json.error as Json).code, 'upstream_timeout');
    const longer = await send(config, chat(), { 'x-gateway-request-timeout': '3000' });
    t.equal(longer.status, 200);
  });

  t.test('override_params merge down the tree; custom_host and forward_headers are inherited', async (t) => {
    const config = {
      override_params: { temperature: 0.1, top_p: 0.5 },
      custom_host: host(),
      forward_headers: ['x-team'],
      targets: [{ provider: 'openai', api_key: 'a', override_params: { temperature: 0.9 } }],
    };
    const r = await send(config, chat(), { 'x-team': 'blue' });
    t.equal(r.status, 200);
    const seen = mock.requests[0]!;
    const body = JSON.parse(seen.body.toString()) as Json;
    t.equal(body.temperature, 0.9, "the child's value wins");
    t.equal(body.top_p, 0.5, "the parent's value is kept");
    t.equal(seen.headers['x-team'], 'blue', 'forward_headers inherited');
  });

  t.test('one config sent by many clients: each call goes out with its own key and the current policy', async (t) => {
    // The built tree of a config is kept between requests: a leaf without a key of its own must
    // still carry each request's bearer, never the one that built the tree.
    const config = { strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', custom_host: host('status=503') }, { provider: 'openai', custom_host: host() }] };
    for (const key of ['client-a', 'client-b', 'client-a', 'client-c']) {
      const r = await send(config, chat(), { authorization: `Bearer ${key}` });
      t.equal(r.status, 200, key);
      t.same(r.keys, [key, key], `both attempts carry ${key}`);
    }
    // And the same config with a key of its own ignores the bearer, request after request.
    const own = { provider: 'openai', api_key: 'config-key', custom_host: host() };
    for (const key of ['client-a', 'client-b']) t.same((await send(own, chat(), { authorization: `Bearer ${key}` })).keys, ['config-key']);
    // A refused custom host is refused every time (nothing is kept from a failed build).
    for (let i = 0; i < 2; i++) {
      const r = await send({ provider: 'openai', api_key: 'k', custom_host: 'http://169.254.169.254/v1' });
      t.equal(r.status, 400, `attempt ${i + 1}`);
      t.equal((r.json.error as Json | undefined)?.code, 'invalid_custom_host');
      t.same(r.keys, [], 'nothing sent upstream');
    }
  });

  t.test('streams fall back before the first byte, never after it', async (t) => {
    const stream = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'flow' }] });
    const before = await send({ strategy: { mode: 'fallback' }, targets: [leaf('a', 'status=503'), leaf('b', 'chunks=3')] }, stream);
    t.equal(before.status, 200);
    t.same(before.keys, ['a', 'b']);
    t.match(before.text, /data: \[DONE\]\n\n$/);
    const after = await send({ strategy: { mode: 'fallback' }, targets: [leaf('a', 'chunks=8;chunk_delay=20;reset=mid_stream;reset_after=2'), leaf('b')] }, stream);
    t.same(after.keys, ['a'], 'no fallback once bytes reached the client');
    t.match(after.text, /event: error\ndata: .*"code":"upstream_stream_error"/);
    t.notMatch(after.text, /\[DONE\]/);
  });
});
