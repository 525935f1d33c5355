/**
 * Usage limits policies through the auth plugin: create with computed reset dates, validation,
 * list and get (with usage), the entities list and resets, archive, workspace isolation, audit.
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, ADMIN_KEY, type StartedGateway, type Teardown, addWorkspace as addStoreWorkspace } from './helpers/gateway.js';
import { nowIso, Scopes, type Records } from '../core/index.js';
import adminPolicies from '../plugins/admin-policies/index.js';
import { nextUsageResetAt } from '../plugins/admin-policies/usage-limits.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A second workspace and a workspace service key in it, written straight into the store. */
function workspaceKey(gw: StartedGateway, slug: string): { key: string; workspaceId: string } {
  const { id, key } = addStoreWorkspace(gw.store, slug, Scopes.DEFAULT_WORKSPACE_SCOPES);
  return { key, workspaceId: id };
}

function entity(policyId: string, valueKey: string, usage: Partial<Records.PolicyUsageEntity> = {}): Records.PolicyUsageEntity {
  const now = nowIso();
  return {
    id: `${policyId}:${valueKey}`,
    policy_id: policyId,
    value_key: valueKey,
    current_usage: 0,
    status: 'active',
    is_threshold_alerts_sent: false,
    is_exhausted_alerts_sent: false,
    created_at: now,
    last_updated_at: now,
    ...usage,
  };
}

async function start(t: Teardown) {
  const gw = await startGateway(t, {
    yaml: 'pipeline: [auth, admin-policies]\n',
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
    plugins: { 'admin-policies': adminPolicies },
  });
  const call = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, key = ADMIN_KEY) => {
    const res = await request(`${gw.url}/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.statusCode, body: (await res.body.json()) as Json };
  };
  return { gw, call };
}

const valid = {
  name: 'per user',
  conditions: [{ key: 'workspace_id', value: 'default' }],
  group_by: [{ key: 'metadata._user' }],
  type: 'cost',
  credit_limit: 100,
  alert_threshold: 80,
  periodic_reset: 'monthly',
};

t.test('next_usage_reset_at: next UTC month start, next Monday 00:00 UTC, never for cumulative', async (t) => {
  t.equal(nextUsageResetAt('monthly', new Date('2025-01-31T23:59:59Z')), '2025-02-01T00:00:00.000Z');
  t.equal(nextUsageResetAt('monthly', new Date('2025-12-15T10:00:00Z')), '2026-01-01T00:00:00.000Z', 'across a year');
  t.equal(nextUsageResetAt('weekly', new Date('2025-06-04T12:00:00Z')), '2025-06-09T00:00:00.000Z', 'Wednesday → next Monday');
  t.equal(nextUsageResetAt('weekly', new Date('2025-06-08T23:00:00Z')), '2025-06-09T00:00:00.000Z', 'Sunday → tomorrow');
  t.equal(nextUsageResetAt('weekly', new Date('2025-06-09T00:00:00Z')), '2025-06-16T00:00:00.000Z', 'Monday → the Monday after');
  t.equal(nextUsageResetAt(null), null);
});

t.test('usage limits policies: create, read, list, validation', async (t) => {
  const { call } = await start(t);

  const created = await call('POST', '/policies/usage-limits', valid);
  t.equal(created.status, 200);
  t.match(created.body, { id: /^[0-9a-f-]{36}$/, object: 'policy_usage_limits' });
  const id = created.body.id as string;

  const got = await call('GET', `/policies/usage-limits/${id}`);
  t.equal(got.status, 200);
  t.match(got.body, {
    id,
    name: 'per user',
    type: 'cost',
    credit_limit: 100,
    alert_threshold: 80,
    periodic_reset: 'monthly',
    status: 'active',
    object: 'policy_usage_limits',
    last_reset_at: null,
    conditions: [{ key: 'workspace_id', value: 'default' }],
    group_by: [{ key: 'metadata._user' }],
  });
  t.equal(got.body.next_usage_reset_at, nextUsageResetAt('monthly'));
  t.notOk('value_key_usage_map' in got.body, 'usage only on request');

  const weekly = await call('POST', '/policies/usage-limits', { ...valid, type: 'tokens', credit_limit: 1e6, alert_threshold: undefined, periodic_reset: 'weekly' });
  const weeklyReset = new Date((await call('GET', `/policies/usage-limits/${weekly.body.id}`)).body.next_usage_reset_at as string);
  t.equal(weeklyReset.getUTCDay(), 1, 'a Monday');
  t.equal(weeklyReset.getTime() % 86_400_000, 0, 'at 00:00 UTC');
  t.ok(weeklyReset.getTime() > Date.now() && weeklyReset.getTime() <= Date.now() + 7 * 86_400_000);

  const cumulative = await call('POST', '/policies/usage-limits', { ...valid, periodic_reset: undefined, alert_threshold: null });
  t.match((await call('GET', `/policies/usage-limits/${cumulative.body.id}`)).body, { periodic_reset: null, next_usage_reset_at: null, alert_threshold: null });

  const list = await call('GET', '/policies/usage-limits');
  t.equal(list.body.object, 'list');
  t.equal(list.body.total, 3);
  t.equal(list.body.data[0].id, cumulative.body.id, 'newest first');
  t.equal((await call('GET', '/policies/usage-limits?type=tokens')).body.total, 1);
  const page = await call('GET', '/policies/usage-limits?page_size=1&current_page=2');
  t.equal(page.body.total, 3);
  t.same(page.body.data.map((p: Json) => p.id), [id]);

  const cases: Array<[string, Json, number, string, string]> = [
    ['alert at the limit', { ...valid, alert_threshold: 100 }, 400, 'invalid_value', 'alert_threshold'],
    ['alert above the limit', { ...valid, alert_threshold: 150 }, 400, 'invalid_value', 'alert_threshold'],
    ['name too long', { ...valid, name: 'x'.repeat(256) }, 400, 'string_too_long', 'name'],
    ['bad type', { ...valid, type: 'dollars' }, 400, 'invalid_value', 'type'],
    ['bad periodic_reset', { ...valid, periodic_reset: 'daily' }, 400, 'invalid_value', 'periodic_reset'],
    ['negative credit', { ...valid, credit_limit: -1 }, 400, 'value_below_minimum', 'credit_limit'],
    ['no credit_limit', { ...valid, credit_limit: undefined }, 400, 'missing_required_parameter', 'credit_limit'],
    ['no conditions', { ...valid, conditions: [] }, 400, 'too_few_items', 'conditions'],
    ['no group_by', { ...valid, group_by: [] }, 400, 'too_few_items', 'group_by'],
    ['unknown field', { ...valid, colour: 'red' }, 400, '', ''],
  ];
  for (const [name, body, status, code, param] of cases) {
    const res = await call('POST', '/policies/usage-limits', body);
    t.equal(res.status, status, name);
    if (code) t.match(res.body.error, { code, param }, name);
  }
  t.equal((await call('GET', '/policies/usage-limits')).body.total, 3, 'no rejected create was stored');
  t.equal((await call('GET', '/policies/usage-limits/0190a0a0-0000-7000-8000-000000000000')).status, 404);
  t.equal((await call('GET', '/policies/usage-limits?status=deleted')).status, 400);
});

t.test('usage limits policies: usage, entities, resets, update, archive, audit', async (t) => {
  const { gw, call } = await start(t);
  const id = (await call('POST', '/policies/usage-limits', valid)).body.id as string;
  const other = (await call('POST', '/policies/usage-limits', valid)).body.id as string;
  gw.store.c.policyUsage.insert(entity(id, 'metadata._user:alice', { current_usage: 42.5 }));
  gw.store.c.policyUsage.insert(
    entity(id, 'metadata._user:bob', { current_usage: 100, status: 'exhausted', is_threshold_alerts_sent: true, is_exhausted_alerts_sent: true }),
  );
  gw.store.c.policyUsage.insert(entity(other, 'metadata._user:carol', { current_usage: 7 }));

  const withUsage = await call('GET', `/policies/usage-limits/${id}?include_usage=true`);
  t.same(withUsage.body.value_key_usage_map, {
    'metadata._user:alice': { current_usage: 42.5, status: 'active', is_threshold_alerts_sent: false, is_exhausted_alerts_sent: false },
    'metadata._user:bob': { current_usage: 100, status: 'exhausted', is_threshold_alerts_sent: true, is_exhausted_alerts_sent: true },
  });
  t.notOk('value_key_usage_map' in (await call('GET', `/policies/usage-limits/${id}?include_usage=false`)).body);

  const entities = await call('GET', `/policies/usage-limits/${id}/entities`);
  t.equal(entities.status, 200);
  t.equal(entities.body.total, 2, "another policy's entities are not listed");
  t.match(entities.body.data, [
    { id: `${id}:metadata._user:alice`, value_key: 'metadata._user:alice', current_usage: 42.5, status: 'active', object: 'policy_usage_entity' },
    { value_key: 'metadata._user:bob', current_usage: 100, status: 'exhausted' },
  ]);
  t.same((await call('GET', `/policies/usage-limits/${id}/entities?status=exhausted`)).body.data.map((e: Json) => e.value_key), ['metadata._user:bob']);
  t.same((await call('GET', `/policies/usage-limits/${id}/entities?search=ALI`)).body.data.map((e: Json) => e.value_key), ['metadata._user:alice']);
  const paged = await call('GET', `/policies/usage-limits/${id}/entities?page_size=1&current_page=1`);
  t.equal(paged.body.total, 2);
  t.equal(paged.body.data.length, 1);
  t.match((await call('GET', `/policies/usage-limits/${id}/entities?page_size=-1`)).body.error, { code: 'value_below_minimum', param: 'page_size' });
  t.match((await call('GET', `/policies/usage-limits/${id}/entities?page_size=501`)).body.error, { code: 'value_above_maximum', param: 'page_size' });
  t.match((await call('GET', `/policies/usage-limits/${id}/entities?status=archived`)).body.error, { code: 'invalid_value', param: 'status' });

  // Entity reset: usage, status and alert flags back to a fresh start.
  const bob = encodeURIComponent(`${id}:metadata._user:bob`);
  const reset = await call('PUT', `/policies/usage-limits/${id}/entities/${bob}/reset`);
  t.equal(reset.status, 200);
  t.same(reset.body, {});
  t.match(gw.store.c.policyUsage.get(`${id}:metadata._user:bob`), { current_usage: 0, status: 'active', is_threshold_alerts_sent: false, is_exhausted_alerts_sent: false });
  t.equal((await call('PUT', `/policies/usage-limits/${id}/entities/${encodeURIComponent(`${id}:nobody`)}/reset`)).status, 404);
  const carol = encodeURIComponent(`${other}:metadata._user:carol`);
  t.equal((await call('PUT', `/policies/usage-limits/${id}/entities/${carol}/reset`)).status, 404, "another policy's entity");

  // PUT: a rejected threshold writes nothing, not even the requested usage reset.
  const badUpdate = await call('PUT', `/policies/usage-limits/${id}`, { credit_limit: 50, reset_usage_for_value: 'metadata._user:alice' });
  t.equal(badUpdate.status, 400);
  t.match(badUpdate.body.error, { code: 'invalid_value', param: 'alert_threshold' });
  t.equal(gw.store.c.policyUsage.get(`${id}:metadata._user:alice`)!.current_usage, 42.5, 'usage untouched');
  t.equal((await call('GET', `/policies/usage-limits/${id}`)).body.credit_limit, 100);

  const resetValue = await call('PUT', `/policies/usage-limits/${id}`, { reset_usage_for_value: 'metadata._user:alice' });
  t.same(resetValue.body, {});
  t.equal(gw.store.c.policyUsage.get(`${id}:metadata._user:alice`)!.current_usage, 0);
  t.equal(gw.store.c.policyUsage.get(`${other}:metadata._user:carol`)!.current_usage, 7, 'other policies untouched');
  const unknownValue = await call('PUT', `/policies/usage-limits/${id}`, { reset_usage_for_value: 'metadata._user:nobody' });
  t.equal(unknownValue.status, 404);
  t.equal(unknownValue.body.error.param, 'reset_usage_for_value');

  t.same((await call('PUT', `/policies/usage-limits/${id}`, { name: 'renamed', credit_limit: 50, alert_threshold: null, periodic_reset: 'weekly' })).body, {});
  const updated = (await call('GET', `/policies/usage-limits/${id}`)).body;
  t.match(updated, { name: 'renamed', credit_limit: 50, alert_threshold: null, periodic_reset: 'weekly', next_usage_reset_at: nextUsageResetAt('weekly') });
  t.same((await call('PUT', `/policies/usage-limits/${id}`, { periodic_reset: null })).body, {});
  t.match((await call('GET', `/policies/usage-limits/${id}`)).body, { periodic_reset: null, next_usage_reset_at: null });
  t.match((await call('PUT', `/policies/usage-limits/${id}`, { name: 'y'.repeat(256) })).body.error, { code: 'string_too_long', param: 'name' });
  t.match((await call('PUT', `/policies/usage-limits/${id}`, { type: 'tokens' })).body.error, { param: 'type' });

  t.same((await call('DELETE', `/policies/usage-limits/${id}`)).body, {});
  t.equal((await call('GET', '/policies/usage-limits')).body.total, 1, 'archived leaves the default list');
  const archived = await call('GET', '/policies/usage-limits?status=archived');
  t.same(archived.body.data.map((p: Json) => [p.id, p.status]), [[id, 'archived']]);
  t.equal((await call('GET', `/policies/usage-limits/${id}?status=active`)).status, 404);

  await gw.store.flush();
  const audit = gw.store.c.audit.list().items.filter((a) => a.resource_type === 'usage_limits_policy');
  const actions = audit.map((a) => `${a.action} ${a.response_status_code}`);
  for (const expected of ['create 200', 'reset 200', 'reset 404', 'update 400', 'update 200', 'delete 200']) t.ok(actions.includes(expected), expected);
});

t.test('usage limits policies: workspace isolation', async (t) => {
  const { gw, call } = await start(t);
  const orgPolicy = (await call('POST', '/policies/usage-limits', valid)).body.id as string;
  gw.store.c.policyUsage.insert(entity(orgPolicy, 'api_key:k1', { current_usage: 3 }));
  const { key, workspaceId } = workspaceKey(gw, 'team-b');

  const own = await call('POST', '/policies/usage-limits', valid, key);
  t.equal(own.status, 200);
  t.equal((await call('GET', `/policies/usage-limits/${own.body.id}`, undefined, key)).body.workspace_id, workspaceId);

  const seen = await call('GET', '/policies/usage-limits', undefined, key);
  t.same(seen.body.data.map((p: Json) => p.id), [own.body.id], 'a workspace key lists only its workspace');
  t.equal((await call('GET', '/policies/usage-limits', undefined, ADMIN_KEY)).body.total, 2, 'an organisation key lists across workspaces');
  t.equal((await call('GET', '/policies/usage-limits?workspace_id=team-b')).body.total, 1);

  for (const [method, path] of [
    ['GET', `/policies/usage-limits/${orgPolicy}`],
    ['PUT', `/policies/usage-limits/${orgPolicy}`],
    ['DELETE', `/policies/usage-limits/${orgPolicy}`],
    ['GET', `/policies/usage-limits/${orgPolicy}/entities`],
    ['PUT', `/policies/usage-limits/${orgPolicy}/entities/${encodeURIComponent(`${orgPolicy}:api_key:k1`)}/reset`],
  ] as const) {
    const res = await call(method, path, method === 'PUT' && !path.endsWith('reset') ? { name: 'mine' } : undefined, key);
    t.equal(res.status, 404, `${method} ${path.replaceAll(orgPolicy, ':id')} from another workspace`);
  }
  t.equal(gw.store.c.policyUsage.get(`${orgPolicy}:api_key:k1`)!.current_usage, 3, 'nothing was reset');
  t.equal((await call('GET', '/policies/usage-limits?workspace_id=default', undefined, key)).status, 403);
});
