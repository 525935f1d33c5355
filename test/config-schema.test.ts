/**
 * The routing config validator: a table of valid and invalid configs with the code and `param`
 * each invalid one must produce.
 */
import t from 'tap';
import { MAX_CONFIG_DEPTH, routingConfigSchema, validateRoutingConfig } from '../core/router/config-schema.js';

const leaf = (extra: Record<string, unknown> = {}) => ({ provider: 'openai', api_key: 'sk-test', ...extra });

const valid: Array<[string, unknown]> = [
  ['a single leaf', leaf()],
  ['a leaf through a virtual key', { virtual_key: 'openai-main' }],
  [
    'the DESIGN.md example',
    {
      strategy: { mode: 'fallback', on_status_codes: [429, 500, 502, 503, 504] },
      retry: { attempts: 2, on_status_codes: [429, 503], use_retry_after_header: true },
      request_timeout: 20000,
      cache: { mode: 'simple', max_age: 300 },
      override_params: { temperature: 0 },
      targets: [
        { strategy: { mode: 'loadbalance' }, targets: [leaf({ weight: 0.7 }), { virtual_key: 'openai-backup', weight: 0.3 }] },
        { provider: 'openai', custom_host: 'http://127.0.0.1:11434/v1', override_params: { model: 'llama3' } },
      ],
    },
  ],
  [
    'conditional routing by name',
    {
      strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.tier': { $eq: 'pro' } }, then: 'pro' }], default: 'free' },
      targets: [leaf({ name: 'pro' }), leaf({ name: 'free' })],
    },
  ],
  ['provider fields on a leaf (leaves are open)', leaf({ provider: 'azure-openai', resource_name: 'r1', deployment_id: 'gpt4o', api_version: '2024-10-21', azure_auth_mode: 'entra' })],
  ['bedrock credentials on a leaf', { provider: 'bedrock', aws_access_key_id: 'AKIA', aws_secret_access_key: 's', aws_region: 'us-east-1' }],
  ['targets without a strategy', { targets: [leaf()] }],
  ['weight 0 beside a positive weight', { strategy: { mode: 'loadbalance' }, targets: [leaf({ weight: 0 }), leaf({ weight: 1 })] }],
  ['retry attempts at the maximum', leaf({ retry: { attempts: 10 } })],
  ['cache max_age 0', leaf({ cache: { mode: 'semantic', max_age: 0 } })],
];

for (const [why, config] of valid) {
  t.equal(validateRoutingConfig(config), null, `valid: ${why}`);
}

/** Built in a loop: the hostile case below is deeper than the JS stack would allow recursively. */
function deep(levels: number): Record<string, unknown> {
  let node: Record<string, unknown> = leaf();
  for (let i = 0; i < levels; i++) node = { targets: [node] };
  return node;
}

/** A conditional group with one condition whose query is `query`. */
function conditional(query: Record<string, unknown>): Record<string, unknown> {
  return { strategy: { mode: 'conditional', conditions: [{ query, then: 'a' }] }, targets: [leaf({ name: 'a' })] };
}

/** `$and` nested `levels` deep, built in a loop. */
function deepQuery(levels: number): Record<string, unknown> {
  let q: Record<string, unknown> = { 'metadata.tier': 'pro' };
  for (let i = 0; i < levels; i++) q = { $and: [q] };
  return q;
}

const invalid: Array<[string, unknown, string, string]> = [
  ['not an object', [leaf()], 'invalid_type', 'config'],
  ['a negative weight in the second target', { strategy: { mode: 'loadbalance' }, targets: [leaf(), leaf({ weight: -1 })] }, 'value_below_minimum', 'config.targets[1].weight'],
  ['a weight that is a string', { targets: [leaf({ weight: 'heavy' })] }, 'invalid_type', 'config.targets[0].weight'],
  ['an unknown mode', { strategy: { mode: 'random' }, targets: [leaf()] }, 'invalid_value', 'config.strategy.mode'],
  ['a strategy without mode', { strategy: {}, targets: [leaf()] }, 'missing_required_parameter', 'config.strategy.mode'],
  ['a typo at a group level', { stratgey: { mode: 'fallback' }, targets: [leaf()] }, 'unknown_parameter', 'config.stratgey'],
  ['a provider on a group', { provider: 'openai', targets: [leaf()] }, 'unknown_parameter', 'config.provider'],
  ['a typo inside retry', leaf({ retry: { attempt: 2 } }), 'unknown_parameter', 'config.retry.attempt'],
  ['too many retries', leaf({ retry: { attempts: 11 } }), 'value_above_maximum', 'config.retry.attempts'],
  ['a status code out of range', { strategy: { mode: 'fallback', on_status_codes: [429, 600] }, targets: [leaf()] }, 'value_above_maximum', 'config.strategy.on_status_codes[1]'],
  ['a fractional status code', leaf({ retry: { attempts: 1, on_status_codes: [429.5] } }), 'invalid_type', 'config.retry.on_status_codes[0]'],
  ['a zero request_timeout', leaf({ request_timeout: 0 }), 'value_below_minimum', 'config.request_timeout'],
  ['an unknown cache mode', leaf({ cache: { mode: 'fuzzy' } }), 'invalid_value', 'config.cache.mode'],
  ['a negative max_age', leaf({ cache: { mode: 'simple', max_age: -1 } }), 'value_below_minimum', 'config.cache.max_age'],
  ['a custom_host that is not a URL', leaf({ custom_host: 'not a url' }), 'invalid_value', 'config.custom_host'],
  ['forward_headers that is a string', leaf({ forward_headers: 'x-a' }), 'invalid_type', 'config.forward_headers'],
  ['an empty targets array', { strategy: { mode: 'fallback' }, targets: [] }, 'too_few_items', 'config.targets'],
  ['a target that is a string', { targets: ['openai'] }, 'invalid_type', 'config.targets[0]'],
  ['a nested leaf with an empty api_key', { targets: [{ targets: [leaf(), leaf({ api_key: '' })] }] }, 'invalid_value', 'config.targets[0].targets[1].api_key'],
  ['a leaf with nothing to call', { retry: { attempts: 1 } }, 'missing_required_parameter', 'config.provider'],
  ['a nested leaf with nothing to call', { targets: [leaf(), { weight: 1 }] }, 'missing_required_parameter', 'config.targets[1].provider'],
  ['loadbalance without targets', { strategy: { mode: 'loadbalance' }, provider: 'openai' }, 'missing_required_parameter', 'config.targets'],
  ['conditional without conditions', { strategy: { mode: 'conditional' }, targets: [leaf({ name: 'a' })] }, 'missing_required_parameter', 'config.strategy.conditions'],
  [
    'a condition naming no target',
    { strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'a' }, { query: {}, then: 'b' }] }, targets: [leaf({ name: 'a' })] },
    'invalid_value',
    'config.strategy.conditions[1].then',
  ],
  [
    'a default naming no target',
    { strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'a' }], default: 'z' }, targets: [leaf({ name: 'a' })] },
    'invalid_value',
    'config.strategy.default',
  ],
  ['a condition without then', { strategy: { mode: 'conditional', conditions: [{ query: {} }] }, targets: [leaf({ name: 'a' })] }, 'missing_required_parameter', 'config.strategy.conditions[0].then'],
  ['two siblings with one name', { targets: [leaf({ name: 'a' }), leaf({ name: 'a' })] }, 'invalid_value', 'config.targets[1].name'],
  ['a loadbalance that can pick nothing', { strategy: { mode: 'loadbalance' }, targets: [leaf({ weight: 0 }), leaf({ weight: 0 })] }, 'invalid_value', 'config.targets'],
  ['a tree nested too deep', deep(MAX_CONFIG_DEPTH + 1), 'invalid_value', `config${'.targets[0]'.repeat(MAX_CONFIG_DEPTH)}.targets`],
  ['a strategy: null on a leaf (was a 500 TypeError)', leaf({ strategy: null }), 'invalid_type', 'config.strategy'],
  ['a strategy: null on a group', { strategy: null, targets: [leaf()] }, 'invalid_type', 'config.strategy'],
  ['a null mode', { strategy: { mode: null }, targets: [leaf()] }, 'invalid_type', 'config.strategy.mode'],
  ['null targets', { targets: null }, 'invalid_type', 'config.targets'],
  ['a null target', { targets: [null] }, 'invalid_type', 'config.targets[0]'],
  ['a null retry', leaf({ retry: null }), 'invalid_type', 'config.retry'],
  ['a null provider', { provider: null }, 'invalid_type', 'config.provider'],
  ['null conditions', { strategy: { mode: 'conditional', conditions: null }, targets: [leaf({ name: 'a' })] }, 'invalid_type', 'config.strategy.conditions'],
  ['a null query', { strategy: { mode: 'conditional', conditions: [{ query: null, then: 'a' }] }, targets: [leaf({ name: 'a' })] }, 'invalid_type', 'config.strategy.conditions[0].query'],
  ['a $regex with a backreference', conditional({ 'params.model': { $regex: '(a)\\1' } }), 'invalid_value', 'config.strategy.conditions[0].query.params.model.$regex'],
  ['a $regex with lookahead', conditional({ $or: [{ 'metadata.x': { $regex: '^(?!a)' } }] }), 'invalid_value', 'config.strategy.conditions[0].query.$or[0].metadata.x.$regex'],
  ['a $regex with lookbehind', conditional({ 'params.model': { $regex: '(?<=a)b' } }), 'invalid_value', 'config.strategy.conditions[0].query.params.model.$regex'],
  ['a $regex that does not parse', conditional({ 'params.model': { $regex: '([' } }), 'invalid_value', 'config.strategy.conditions[0].query.params.model.$regex'],
  ['a $regex over 512 characters', conditional({ 'params.model': { $regex: 'a'.repeat(513) } }), 'string_too_long', 'config.strategy.conditions[0].query.params.model.$regex'],
  ['a $regex that is not a string', conditional({ 'params.model': { $regex: 5 } }), 'invalid_type', 'config.strategy.conditions[0].query.params.model.$regex'],
  ['a $regex under a non-conditional mode', { strategy: { mode: 'fallback', conditions: [{ query: { x: { $regex: '\\1' } }, then: 'a' }] }, targets: [leaf({ name: 'a' })] }, 'invalid_value', 'config.strategy.conditions[0].query.x.$regex'],
  ['a query nested too deep', conditional(deepQuery(40)), 'invalid_value', 'config.strategy.conditions[0].query'],
  ['a $regex under a key that is not a plain path (the key is not echoed)', conditional({ ['<script>'.repeat(20)]: { $regex: '\\1' } }), 'invalid_value', 'config.strategy.conditions[0].query.[key].$regex'],
];

for (const [why, config, code, param] of invalid) {
  const err = validateRoutingConfig(config);
  t.ok(err, `invalid: ${why}`);
  t.match({ status: err?.status, code: err?.code, param: err?.param }, { status: 400, code, param }, `invalid: ${why} → ${code} ${param}`);
  t.ok(err?.message.startsWith('config'), `the message names the path (${err?.message})`);
}

t.test('linear-time patterns that V8 would backtrack on are accepted', async (t) => {
  t.equal(validateRoutingConfig(conditional({ 'params.model': { $regex: '^(a+)+$' } })), null);
  t.equal(validateRoutingConfig(conditional({ 'params.model': { $regex: '(?i)^gpt-4o(-mini)?$' } })), null);
  t.equal(validateRoutingConfig(conditional({ 'params.model': { $regex: 'a'.repeat(512) } })), null, 'exactly the bound');
});

t.test('the deepest allowed tree is valid', async (t) => {
  t.equal(validateRoutingConfig(deep(MAX_CONFIG_DEPTH)), null);
});

t.test('a hostile, very deep tree is refused before ajv recurses into it', async (t) => {
  const err = validateRoutingConfig(deep(20_000));
  t.equal(err?.code, 'invalid_value');
});

t.test('another root name for the x-gateway-config header', async (t) => {
  t.equal(validateRoutingConfig({ targets: [leaf({ weight: -1 })] }, 'x-gateway-config')?.param, 'x-gateway-config.targets[0].weight');
});

t.test('the schema is a standalone draft-07 document', async (t) => {
  t.equal(routingConfigSchema.$schema, 'http://json-schema.org/draft-07/schema#');
  t.equal(routingConfigSchema.definitions.group.additionalProperties, false);
  t.equal(routingConfigSchema.definitions.leaf.additionalProperties, true);
});
