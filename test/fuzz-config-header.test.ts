/**
 * Fuzz: the `x-gateway-config` header (random JSON, slugs, and routing configs with hostile
 * fields: nulls, wrong types, deep nesting, regexes) and the other routing headers
 * (`x-gateway-virtual-key`, `-provider`, `-custom-host`, `-metadata`, `-request-timeout`), on
 * chat completions, against one gateway with the standard pipeline. Every target a generated
 * config names carries a custom host: the mock, or one the SSRF guard refuses before connecting.
 * Every answer keeps the contract of test/helpers/fuzz.ts `checkAnswer`; the gateway stays healthy.
 */
import t from 'tap';
import fc from 'fast-check';
import {
  applyMutations,
  canary,
  exchangeAndCheck,
  headerSafe,
  hostileNumber,
  hostileString,
  jsonObject,
  jsonValue,
  leaf,
  mutations,
  property,
  startFuzzTarget,
  toJsonText,
  type Fuzzed,
} from './helpers/fuzz.js';

/** Strings in headers stay short: a header block over 16 KB is a 431, not a deeper test. */
const SHORT = 2_000;

const CHAT = '/v1/chat/completions';
const VALID_CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] };

t.test('fuzz: x-gateway-config and the routing headers', async (t) => {
  const target = await startFuzzTarget(t);
  const mockHost = `${target.mock.url}/v1`;
  const base = { 'x-gateway-api-key': target.headers['x-gateway-api-key']!, 'content-type': 'application/json' };

  /** Hosts that reach the mock, or that the guard refuses before any connection (never the internet). */
  const customHost: fc.Arbitrary<string> = fc.oneof(
    { arbitrary: fc.constant(mockHost), weight: 4 },
    fc.constantFrom(`${target.mock.url}/v1/`, `${target.mock.url}`, `http://localhost:${target.mock.port}/v1`, `${target.mock.url}/mock/status=200/v1`),
    fc.constantFrom(
      'http://169.254.169.254/latest/meta-data',
      'http://10.0.0.1/v1',
      'http://[fe80::1]/v1',
      'ftp://127.0.0.1/v1',
      'file:///etc/passwd',
      `http://user:pass@127.0.0.1:${target.mock.port}/v1`,
      'http://metadata.google.internal/',
      '',
      '/v1',
    ),
    hostileString(200),
  );
  const provider = fc.oneof(fc.constantFrom('openai', 'anthropic', 'google', 'bedrock', 'azure-openai', 'groq', 'ollama'), hostileString(200));
  const regex = fc.oneof(
    fc.constantFrom('(', '[', '\\', '^(a+)+$', '(a|a)*$', 'a{1,99999}', '(?<=x)y', '\\p{L}+', '(?i)tier', '.*'.repeat(50)),
    hostileString(500),
  );
  // Subjects stay short: catastrophic backtracking is issue 11's ReDoS item with its own test.
  const metadataValue = fc.oneof(fc.constantFrom('pro', 'free', `${'a'.repeat(18)}!`), hostileString(200));
  const operand: fc.Arbitrary<Fuzzed> = fc.oneof(metadataValue, hostileNumber, fc.array(metadataValue, { maxLength: 3 }), jsonValue(200));
  const field = fc.constantFrom('metadata.tier', 'params.model', 'params.temperature', 'url.pathname', 'metadata', 'params', '');
  const { query } = fc.letrec<{ query: Fuzzed }>((tie) => ({
    query: fc.oneof(
      { depthSize: 'small' },
      fc.dictionary(field, fc.record({ $eq: operand }, { requiredKeys: [] }), { minKeys: 1, maxKeys: 2 }),
      fc.dictionary(field, fc.constantFrom('$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists', '$where').chain((op) => operand.map((v) => ({ [op]: v }))), { minKeys: 1, maxKeys: 2 }),
      fc.dictionary(field, regex.map((r) => ({ $regex: r })), { minKeys: 1, maxKeys: 1 }),
      fc.record({ $and: fc.array(tie('query'), { maxLength: 3 }) }),
      fc.record({ $or: fc.array(tie('query'), { maxLength: 3 }) }),
      jsonValue(200),
    ),
  }));
  const name = fc.oneof(fc.constantFrom('a', 'b', 'c'), hostileString(100));
  const strategy: fc.Arbitrary<Fuzzed> = fc.oneof(
    fc.constant(null),
    leaf(200),
    fc.record(
      {
        mode: fc.oneof(fc.constantFrom('single', 'fallback', 'loadbalance', 'conditional'), leaf(200)),
        on_status_codes: fc.oneof(fc.array(fc.oneof(fc.constantFrom(429, 500, 502), hostileNumber), { maxLength: 4 }), leaf(200)),
        conditions: fc.oneof(fc.array(fc.record({ query, then: name }, { requiredKeys: [] }), { maxLength: 3 }), leaf(200)),
        default: name,
      },
      { requiredKeys: [] },
    ),
  );
  const common = {
    retry: fc.oneof(leaf(200), fc.record({ attempts: fc.oneof(fc.integer({ min: -1, max: 3 }), hostileNumber), on_status_codes: fc.array(hostileNumber, { maxLength: 3 }), use_retry_after_header: leaf(200) }, { requiredKeys: [] })),
    request_timeout: fc.oneof(fc.integer({ min: -1, max: 5_000 }), hostileNumber, leaf(200)),
    cache: fc.oneof(leaf(200), fc.record({ mode: fc.oneof(fc.constantFrom('simple', 'semantic'), leaf(200)), max_age: hostileNumber }, { requiredKeys: [] })),
    override_params: fc.oneof(jsonObject(SHORT), leaf(200)),
    forward_headers: fc.oneof(fc.array(fc.oneof(fc.constantFrom('host', 'authorization', 'connection', 'x-gateway-api-key', 'content-length'), hostileString(100)), { maxLength: 3 }), leaf(200)),
    weight: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), hostileNumber, leaf(200)),
    name,
    strategy,
  };
  const { config } = fc.letrec<{ config: Fuzzed; target: Fuzzed }>((tie) => ({
    config: fc.record(
      { ...common, provider, targets: fc.oneof({ depthSize: 'small' }, fc.array(tie('target'), { maxLength: 3 }), leaf(200)), custom_host: customHost },
      // custom_host is inherited, so with it on every config no target can reach a real provider.
      { requiredKeys: ['custom_host'] },
    ),
    target: fc.oneof(
      { depthSize: 'small' },
      // Every provider target names its host, so nothing it inherits can send it elsewhere.
      fc.record({ ...common, provider, custom_host: customHost, api_key: hostileString(200) }, { requiredKeys: ['provider', 'custom_host'] }),
      fc.record({ virtual_key: hostileString(200), weight: common.weight, name }, { requiredKeys: ['virtual_key'] }),
      tie('config'),
      leaf(200),
    ),
  }));
  const send = (headers: Record<string, string>, body: Fuzzed = VALID_CHAT): Promise<void> =>
    exchangeAndCheck(target, { method: 'POST', path: CHAT, headers: { ...base, ...headers }, body: toJsonText(body) }, true);

  await property(t, 'random JSON and slugs as x-gateway-config', { target }, fc.oneof(jsonValue(SHORT).map(toJsonText), hostileString(SHORT)), (text) =>
    send({ 'x-gateway-config': headerSafe(text) }),
  );

  const body = fc.oneof(
    { arbitrary: fc.constant<Fuzzed>(VALID_CHAT), weight: 4 },
    fc.record({ model: fc.oneof(fc.constantFrom('gpt-4o-mini', '@openai/gpt-4o-mini'), canary.map((c) => `@${c}/gpt`)), messages: fc.constant<Fuzzed>(VALID_CHAT.messages) }),
  );
  const metadata = fc.oneof(fc.constant(undefined), fc.dictionary(fc.constantFrom('tier', 'user', '_user'), metadataValue, { maxKeys: 2 }).map(toJsonText));
  await property(t, 'routing configs with hostile fields', { target, weight: 4 }, fc.tuple(config, body, metadata), ([cfg, b, meta]) =>
    send({ 'x-gateway-config': headerSafe(toJsonText(cfg)), ...(meta === undefined ? {} : { 'x-gateway-metadata': headerSafe(meta) }) }, b),
  );

  // Near-valid configs: one valid config, one to three fields broken, so each field's checks are
  // reached (a config with many broken fields stops at the first one the validator looks at).
  const provider0 = { provider: 'openai', custom_host: mockHost, api_key: 'sk-fuzz-a' };
  const provider1 = { provider: 'openai', custom_host: mockHost, api_key: 'sk-fuzz-b', override_params: { model: 'gpt-4o-mini' } };
  const validConfigs: Fuzzed[] = [
    { custom_host: mockHost, strategy: { mode: 'fallback', on_status_codes: [429, 503] }, retry: { attempts: 1 }, targets: [provider0, provider1] },
    {
      custom_host: mockHost,
      strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.tier': { $eq: 'pro' } }, then: 'a' }], default: 'b' },
      targets: [{ ...provider0, name: 'a' }, { ...provider1, name: 'b' }],
    },
    { custom_host: mockHost, strategy: { mode: 'loadbalance' }, targets: [{ ...provider0, weight: 0.5 }, { strategy: { mode: 'single' }, targets: [provider1] }] },
    { ...provider0, strategy: { mode: 'single' }, cache: { mode: 'simple', max_age: 60 }, request_timeout: 5_000 },
  ];
  // Never the root custom_host: every target inherits it, so no mutation can send one to a real provider.
  const configPaths: Array<ReadonlyArray<string | number>> = [
    ['strategy'], ['strategy', 'mode'], ['strategy', 'on_status_codes'], ['strategy', 'on_status_codes', 0], ['strategy', 'conditions'],
    ['strategy', 'conditions', 0], ['strategy', 'conditions', 0, 'query'], ['strategy', 'conditions', 0, 'query', 'metadata.tier'],
    ['strategy', 'conditions', 0, 'then'], ['strategy', 'default'], ['retry'], ['retry', 'attempts'], ['retry', 'on_status_codes'],
    ['retry', 'use_retry_after_header'], ['request_timeout'], ['cache'], ['cache', 'mode'], ['cache', 'max_age'], ['override_params'],
    ['override_params', 'temperature'], ['override_params', 'model'], ['override_params', 'messages'], ['targets'], ['targets', 0],
    ['targets', 0, 'strategy'], ['targets', 0, 'provider'], ['targets', 0, 'api_key'], ['targets', 0, 'weight'], ['targets', 0, 'name'],
    ['targets', 0, 'override_params'], ['targets', 0, 'retry', 'attempts'], ['targets', 0, 'request_timeout'], ['targets', 0, 'forward_headers'],
    ['targets', 0, 'custom_host'], ['targets', 0, 'virtual_key'], ['targets', 0, 'cache', 'max_age'], ['targets', 1, 'targets'],
    ['targets', 1, 'strategy'], ['targets', 1, 'targets', 0, 'strategy'], ['weight'], ['forward_headers'],
  ];
  const configValue = fc.oneof({ arbitrary: jsonValue(SHORT), weight: 3 }, query, strategy, regex.map((r): Fuzzed => ({ $regex: r })));
  const nearValid = fc.tuple(fc.constantFrom(...validConfigs), mutations(configPaths, SHORT, configValue)).map(([cfg, changes]) => applyMutations(cfg, changes));
  await property(t, 'valid configs with hostile fields', { target, weight: 4 }, nearValid, (cfg) =>
    send({ 'x-gateway-config': headerSafe(toJsonText(cfg)), 'x-gateway-metadata': '{"tier":"pro"}' }),
  );

  const headerValue = (arb: fc.Arbitrary<string>): fc.Arbitrary<string | undefined> => fc.option(arb.map(headerSafe), { nil: undefined });
  const routing = fc.record({
    'x-gateway-virtual-key': headerValue(fc.oneof(hostileString(SHORT), jsonValue(SHORT).map(toJsonText))),
    'x-gateway-provider': headerValue(provider),
    'x-gateway-custom-host': headerValue(customHost),
    'x-gateway-metadata': headerValue(fc.oneof(jsonValue(SHORT).map(toJsonText), hostileString(SHORT), metadata.map((m) => m ?? '{}'))),
    'x-gateway-request-timeout': headerValue(fc.oneof(hostileNumber.map(toJsonText), hostileString(100), fc.constantFrom('1', '0', '-5', '10.5', '1e3', ' 100 ', '0x10'))),
    authorization: headerValue(fc.oneof(fc.constant('Bearer sk-test-provider-key'), hostileString(200))),
  });
  await property(t, 'routing headers with hostile values', { target, weight: 3 }, fc.tuple(routing, body), ([headers, b]) => {
    const sent: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) if (v !== undefined) sent[k] = v;
    // A provider always comes with a host: without one the gateway would call the real provider.
    if (sent['x-gateway-provider'] !== undefined && sent['x-gateway-custom-host'] === undefined) sent['x-gateway-custom-host'] = mockHost;
    return send(sent, b);
  });
});
