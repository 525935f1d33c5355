/**
 * Fuzz: the admin routes (api-keys, workspaces, configs, virtual-keys, policies, audit-logs, logs)
 * over real HTTP with the admin key, against one gateway with the standard pipeline: random and
 * near-valid bodies, random query strings, and hostile path ids (very long, encoded, unicode).
 * Every answer keeps the contract of test/helpers/fuzz.ts `checkAnswer`; the gateway stays healthy.
 */
import t from 'tap';
import fc from 'fast-check';
import {
  applyMutations,
  canary,
  exchangeAndCheck,
  hostileNumber,
  hostileString,
  jsonValue,
  mutations,
  percentEncode,
  property,
  startFuzzTarget,
  toJsonText,
  type Exchange,
  type Fuzzed,
  type Mutation,
} from './helpers/fuzz.js';

type Method = Exchange['method'];
type Path = ReadonlyArray<string | number>;

/** Routes that take a body, with a body they accept and the fields worth breaking. */
interface Writable {
  method: Method;
  path: string;
  valid: Fuzzed;
  fields: Path[];
}

const WRITABLE: Writable[] = [
  {
    method: 'POST',
    path: '/v1/api-keys/organisation/service',
    valid: { name: 'fuzz', scopes: ['workspaces.list'] },
    fields: [['name'], ['scopes'], ['scopes', 0], ['description'], ['expires_at'], ['rate_limits'], ['usage_limits'], ['defaults'], ['defaults', 'metadata', 'k']],
  },
  {
    method: 'POST',
    path: '/v1/api-keys/workspace/service',
    valid: { name: 'fuzz', scopes: ['configs.read'] },
    fields: [['name'], ['scopes'], ['workspace_id'], ['rate_limits', 0, 'value'], ['usage_limits', 'credit_limit'], ['expires_at']],
  },
  {
    method: 'POST',
    path: '/v1/admin/workspaces',
    valid: { name: 'fuzz' },
    fields: [['name'], ['slug'], ['description'], ['defaults'], ['defaults', 'metadata'], ['defaults', 'metadata', 'k'], ['rate_limits'], ['rate_limits', 0, 'value'], ['usage_limits', 0, 'credit_limit']],
  },
  {
    method: 'POST',
    path: '/v1/configs',
    valid: { name: 'fuzz', config: { provider: 'openai', custom_host: 'http://127.0.0.1:9/v1' } },
    fields: [['name'], ['slug'], ['workspace_id'], ['is_default'], ['config'], ['config', 'strategy'], ['config', 'strategy', 'mode'], ['config', 'targets'], ['config', 'targets', 0], ['config', 'retry', 'attempts'], ['config', 'request_timeout'], ['config', 'custom_host'], ['config', 'provider']],
  },
  {
    method: 'POST',
    path: '/v1/virtual-keys',
    valid: { name: 'fuzz', provider: 'openai', key: 'sk-fuzz-provider-key' },
    fields: [['name'], ['provider'], ['key'], ['slug'], ['note'], ['custom_host'], ['custom_headers'], ['custom_headers', 'x-k'], ['workspace_id'], ['usage_limits', 'credit_limit'], ['usage_limits', 'alert_threshold'], ['rate_limits', 'value'], ['aws_region'], ['resource_name'], ['expires_at']],
  },
  {
    method: 'POST',
    path: '/v1/policies/rate-limits',
    valid: { name: 'fuzz', conditions: [{ key: 'workspace_id', value: 'default' }], group_by: [{ key: 'api_key' }], type: 'requests', unit: 'rpm', value: 1_000_000 },
    fields: [['name'], ['conditions'], ['conditions', 0, 'key'], ['conditions', 0, 'value'], ['group_by'], ['group_by', 0, 'key'], ['type'], ['unit'], ['value'], ['workspace_id']],
  },
  {
    method: 'POST',
    path: '/v1/policies/usage-limits',
    valid: { name: 'fuzz', conditions: [{ key: 'workspace_id', value: 'default' }], group_by: [{ key: 'metadata._user' }], type: 'cost', credit_limit: 1_000_000, alert_threshold: 80, periodic_reset: 'monthly' },
    fields: [['name'], ['conditions', 0, 'value'], ['group_by', 0, 'key'], ['type'], ['credit_limit'], ['alert_threshold'], ['periodic_reset'], ['workspace_id']],
  },
  {
    method: 'POST',
    path: '/v1/logs',
    valid: { request: { url: 'https://api.example.com/v1/chat/completions', method: 'POST', body: { model: 'm' } }, response: { status: 200, body: { ok: true }, response_time: 3 }, metadata: { k: 'v' } },
    fields: [['request'], ['request', 'url'], ['request', 'method'], ['request', 'headers'], ['request', 'body'], ['response', 'status'], ['response', 'body'], ['response', 'response_time'], ['metadata'], ['metadata', 'trace_id'], ['metadata', 'k']],
  },
  {
    method: 'POST',
    path: '/v1/logs/exports',
    valid: { filters: {}, requested_data: ['id'] },
    fields: [['filters'], ['filters', 'metadata'], ['filters', 'page_size'], ['filters', 'current_page'], ['filters', 'time_of_generation_min'], ['requested_data'], ['requested_data', 0], ['description'], ['workspace_id']],
  },
];

/** Routes with an id or slug in the path (`:id` is replaced by the generated id). */
const WITH_ID: Array<{ method: Method; path: string }> = [
  { method: 'GET', path: '/v1/api-keys/:id' },
  { method: 'PUT', path: '/v1/api-keys/:id' },
  { method: 'DELETE', path: '/v1/api-keys/:id' },
  { method: 'POST', path: '/v1/api-keys/:id/rotate' },
  { method: 'GET', path: '/v1/admin/workspaces/:id' },
  { method: 'PUT', path: '/v1/admin/workspaces/:id' },
  { method: 'DELETE', path: '/v1/admin/workspaces/:id' },
  { method: 'GET', path: '/v1/admin/workspaces/:id/users' },
  { method: 'GET', path: '/v1/configs/:id' },
  { method: 'PUT', path: '/v1/configs/:id' },
  { method: 'DELETE', path: '/v1/configs/:id' },
  { method: 'GET', path: '/v1/configs/:id/versions' },
  { method: 'GET', path: '/v1/virtual-keys/:id' },
  { method: 'PUT', path: '/v1/virtual-keys/:id' },
  { method: 'DELETE', path: '/v1/virtual-keys/:id' },
  { method: 'GET', path: '/v1/policies/rate-limits/:id' },
  { method: 'PUT', path: '/v1/policies/rate-limits/:id' },
  { method: 'DELETE', path: '/v1/policies/rate-limits/:id' },
  { method: 'GET', path: '/v1/policies/usage-limits/:id' },
  { method: 'DELETE', path: '/v1/policies/usage-limits/:id' },
  { method: 'GET', path: '/v1/policies/usage-limits/:id/entities' },
  { method: 'GET', path: '/v1/logs/:id' },
  { method: 'GET', path: '/v1/logs/exports/:id' },
  { method: 'POST', path: '/v1/logs/exports/:id/start' },
  { method: 'GET', path: '/v1/logs/exports/:id/download' },
];

/** List routes and the query parameters they read. */
const LISTS: Array<{ path: string; params: string[] }> = [
  { path: '/v1/api-keys', params: ['workspace_id', 'page_size', 'current_page'] },
  { path: '/v1/admin/workspaces', params: ['name', 'page_size', 'current_page'] },
  { path: '/v1/configs', params: ['workspace_id', 'page_size', 'current_page'] },
  { path: '/v1/virtual-keys', params: ['workspace_id', 'page_size', 'current_page'] },
  { path: '/v1/policies/rate-limits', params: ['workspace_id', 'page_size', 'current_page', 'status'] },
  { path: '/v1/policies/usage-limits', params: ['workspace_id', 'page_size', 'current_page', 'status'] },
  { path: '/v1/audit-logs', params: ['workspace_id', 'page_size', 'current_page', 'start_time', 'end_time', 'method', 'uri', 'request_id', 'organisation_id', 'user_id', 'resource_type', 'response_status', 'client_ip', 'country'] },
  { path: '/v1/logs', params: ['workspace_id', 'page_size', 'current_page', 'start_time', 'end_time', 'status', 'model', 'provider', 'api_key_id', 'trace_id', 'metadata', 'cursor', 'time_of_generation_min', 'time_of_generation_max'] },
];

/** Path ids: canaries plain, percent-encoded, very long (past the store's key limit), unicode, traversal. */
const pathId: fc.Arbitrary<string> = fc.oneof(
  canary.map(percentEncode),
  hostileString(5_000).map(percentEncode),
  fc.tuple(canary, fc.constantFrom(600, 4_000, 5_000, 8_000)).map(([c, n]) => `${c}${'x'.repeat(n)}`),
  canary.map((c) => `${c}%E0%A4%A`),
  canary.map((c) => `..%2F${c}`),
  fc.constantFrom('%00', '%2F', '.', '..', 'default', 'null', 'undefined', '__proto__', '00000000-0000-0000-0000-000000000000'),
);

/** A query value: hostile strings and numbers, as text. */
const queryValue: fc.Arbitrary<string> = fc.oneof(
  hostileString(5_000),
  hostileNumber.map((n) => (typeof n === 'number' ? String(n) : n.text)),
  fc.constantFrom('', '-1', '0', '1e999', 'NaN', 'Infinity', '99999999999999999999', 'true', '[]', '{}', '2026-13-45T99:99:99Z'),
);

t.test('fuzz: admin routes', async (t) => {
  const target = await startFuzzTarget(t);
  const json = { ...target.headers, 'content-type': 'application/json' };
  const writable = fc.constantFrom(...WRITABLE);
  const anyWrite = fc.oneof(
    writable.map((w) => ({ method: w.method, path: w.path })),
    fc.constantFrom(...WITH_ID.filter((r) => r.method === 'PUT' || r.method === 'POST')),
  );

  await property(t, 'random JSON bodies', { target }, fc.tuple(anyWrite, pathId, jsonValue(100_000)), ([route, id, body]) =>
    exchangeAndCheck(target, { method: route.method, path: route.path.replace(':id', id), headers: json, body: toJsonText(body) }),
  );

  const mutated = writable.chain((w) => mutations(w.fields, 100_000).map((m): [Writable, Mutation[]] => [w, m]));
  await property(t, 'valid bodies with hostile fields', { target, weight: 3 }, mutated, ([w, changes]) =>
    exchangeAndCheck(target, { method: w.method, path: w.path, headers: json, body: toJsonText(applyMutations(w.valid, changes)) }),
  );

  const query = fc.constantFrom(...LISTS).chain((list) =>
    fc
      .array(fc.tuple(fc.oneof(fc.constantFrom(...list.params), fc.string({ maxLength: 8 })), queryValue), { minLength: 1, maxLength: 4 })
      .map((pairs) => `${list.path}?${pairs.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join('&')}`),
  );
  await property(t, 'random query strings on lists', { target }, query, (path) =>
    exchangeAndCheck(target, { method: 'GET', path, headers: target.headers }),
  );

  const byId = fc.tuple(fc.constantFrom(...WITH_ID), pathId, fc.option(jsonValue(10_000), { nil: undefined }));
  await property(t, 'hostile path ids and slugs', { target, weight: 3 }, byId, ([route, id, body]) => {
    const withBody = body !== undefined && route.method !== 'GET' && route.method !== 'DELETE';
    return exchangeAndCheck(target, {
      method: route.method,
      path: route.path.replace(':id', id),
      headers: withBody ? json : target.headers,
      body: withBody ? toJsonText(body) : undefined,
    });
  });
});
