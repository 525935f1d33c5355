/**
 * The API key admin API through the auth plugin: every create kind, the spec's role table for key
 * creation, keys that authenticate (and stop) at once, rotation with a transition, masked reads,
 * no secret in any response or audit record, and workspace isolation.
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, ADMIN_KEY, type Teardown } from './helpers/gateway.js';
import apiKeysPlugin from '../plugins/admin-api-keys/index.js';
import { keyScope, KEY_TYPES } from '../plugins/admin-api-keys/permissions.js';
import { hashApiKey, maskApiKey } from '../core/store/api-key-hash.js';
import { uuidv7, nowIso } from '../core/store/ids.js';
import { ALL_SCOPES, DEFAULT_WORKSPACE_SCOPES } from '../core/auth/scopes.js';
import type { PluginDefinition } from '../core/plugin.js';
import type { WorkspaceRole } from '../core/store/records.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

async function setup(t: Teardown) {
  const gw = await startGateway(t, {
    yaml: 'pipeline: [auth, admin-api-keys]\n',
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
    plugins: { 'admin-api-keys': apiKeysPlugin as PluginDefinition<never> },
  });
  const call = async (method: Method, path: string, body?: unknown, key = ADMIN_KEY) => {
    const res = await request(`${gw.url}/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    return { status: res.statusCode, text, body: JSON.parse(text) as Json };
  };
  const orgId = gw.store.meta.get('organisation_id') as string;
  const defaultWs = gw.store.meta.get('default_workspace_id') as string;
  const workspace = (slug: string): string => {
    const now = nowIso();
    const id = uuidv7();
    gw.store.c.workspaces.insert({
      id, slug, name: slug, description: null, organisation_id: orgId, defaults: { metadata: {} },
      usage_limits: [], rate_limits: [], status: 'active', created_at: now, last_updated_at: now,
    });
    return id;
  };
  const user = (email: string, ws?: string, role?: WorkspaceRole): string => {
    const now = nowIso();
    const id = uuidv7();
    gw.store.c.users.insert({ id, email, first_name: null, last_name: null, role: 'member', organisation_id: orgId, created_at: now, last_updated_at: now });
    if (ws !== undefined) gw.store.c.members.insert({ id: `${ws}:${id}`, workspace_id: ws, user_id: id, role: role ?? 'member', created_at: now, last_updated_at: now });
    return id;
  };
  /** Creates a key through the API with the admin key and returns `{id, key}`. */
  const create = async (kind: 'organisation/service' | 'workspace/service' | 'workspace/user', body: Json, key = ADMIN_KEY) => {
    const res = await call('POST', `/api-keys/${kind}`, body, key);
    if (res.status !== 200) throw new Error(`create ${kind} failed: ${res.text}`);
    return res.body as { id: string; key: string };
  };
  return { gw, call, orgId, defaultWs, workspace, user, create };
}

/** Every secret-looking value in a text: raw keys and their hashes. */
function leaks(text: string, raws: string[]): string[] {
  return raws.flatMap((raw) => [raw, hashApiKey(raw)]).filter((s) => text.includes(s));
}

t.test('the scope of every operation is a real wire scope', async (t) => {
  for (const type of KEY_TYPES) {
    for (const action of ['create', 'read', 'update', 'delete', 'list', 'rotate'] as const) {
      t.ok(ALL_SCOPES.includes(keyScope(type, action)), keyScope(type, action));
    }
  }
});

t.test('create every kind; reads are masked; validation names the field', async (t) => {
  const { gw, call, defaultWs, workspace, user, create } = await setup(t);
  const teamA = workspace('team-a');
  const alice = user('alice@example.com', teamA, 'member');
  const bob = user('bob@example.com');

  const org = await call('POST', '/api-keys/organisation/service', { name: 'ci', scopes: ['workspaces.list', 'organisation_service_api_keys.list'] });
  t.equal(org.status, 200);
  t.match(org.body, { id: /^[0-9a-f-]{36}$/, key: /^gw-[A-Za-z0-9_-]{43}$/, object: 'api-key' });
  t.same(Object.keys(org.body).sort(), ['id', 'key', 'object']);

  const wsService = await create('workspace/service', {
    name: 'svc',
    description: 'the service',
    workspace_id: 'team-a',
    scopes: ['workspace_service_api_keys.list', 'completions.write', 'completions.write'],
    rate_limits: [{ type: 'requests', unit: 'rps', value: 10 }],
    usage_limits: { credit_limit: 100, type: 'cost', periodic_reset: 'monthly' },
    defaults: { metadata: { team: 'a' } },
    alert_emails: ['ops@example.com'],
    expires_at: new Date(Date.now() + 86_400_000).toISOString(),
  });
  const got = await call('GET', `/api-keys/${wsService.id}`);
  t.equal(got.status, 200);
  t.match(got.body, {
    id: wsService.id,
    key: maskApiKey(wsService.key),
    name: 'svc',
    description: 'the service',
    type: 'workspace-service',
    workspace_id: teamA,
    user_id: null,
    status: 'active',
    scopes: ['workspace_service_api_keys.list', 'completions.write'],
    rate_limits: [{ type: 'requests', unit: 'rps', value: 10 }],
    usage_limits: { credit_limit: 100, type: 'cost', periodic_reset: 'monthly', alert_threshold: null },
    defaults: { metadata: { team: 'a' }, allow_config_override: true },
    alert_emails: ['ops@example.com'],
    creation_mode: 'api',
    object: 'api-key',
  });
  t.equal(got.body.scopes.length, 2, 'duplicate scopes are stored once');
  t.match(got.body.key, /^gw-.\*{7}.{3}$/);
  t.notOk('hash' in got.body);
  t.notOk('previous_hash' in got.body);

  const defaulted = await create('workspace/service', { name: 'default ws', scopes: ['configs.read'] });
  t.equal((await call('GET', `/api-keys/${defaulted.id}`)).body.workspace_id, defaultWs, 'an organisation key without workspace_id creates in the default workspace');

  const bound = await create('workspace/user', { name: 'alice', workspace_id: teamA, user_id: alice, scopes: ['configs.read'] });
  t.match((await call('GET', `/api-keys/${bound.id}`)).body, { type: 'workspace-user', user_id: alice, workspace_id: teamA });
  const unbound = await create('workspace/user', { name: 'nobody', workspace_id: teamA, scopes: ['configs.read'] });
  t.match((await call('GET', `/api-keys/${unbound.id}`)).body, { type: 'workspace-user', user_id: null });

  // Users: unknown (404) and not a member of the workspace (400).
  let res = await call('POST', '/api-keys/workspace/user', { name: 'x', workspace_id: teamA, user_id: uuidv7(), scopes: ['configs.read'] });
  t.equal(res.status, 404);
  t.match(res.body.error, { code: 'not_found', param: 'user_id' });
  res = await call('POST', '/api-keys/workspace/user', { name: 'x', workspace_id: teamA, user_id: bob, scopes: ['configs.read'] });
  t.equal(res.status, 400);
  t.match(res.body.error, { code: 'invalid_value', param: 'user_id' });
  res = await call('POST', '/api-keys/workspace/service', { name: 'x', workspace_id: 'nope', scopes: ['configs.read'] });
  t.equal(res.status, 404);
  t.match(res.body.error, { param: 'workspace_id' });

  // Scopes: unknown and not allowed for the kind, named by index.
  res = await call('POST', '/api-keys/workspace/service', { name: 'x', scopes: ['configs.read', 'configs.fly'] });
  t.equal(res.status, 400);
  t.match(res.body.error, { code: 'invalid_value', param: 'scopes[1]' });
  res = await call('POST', '/api-keys/workspace/service', { name: 'x', scopes: ['organisation_users.read'] });
  t.match(res.body.error, { code: 'invalid_value', param: 'scopes[0]' });
  res = await call('POST', '/api-keys/organisation/service', { name: 'x', scopes: ['workspaces.read', 'logs.write'] });
  t.equal(res.status, 400);
  t.match(res.body.error, { code: 'invalid_value', param: 'scopes[1]' });

  // The rest of the body.
  const cases: Array<[Json, string, string]> = [
    [{ scopes: ['configs.read'] }, 'missing_required_parameter', 'name'],
    [{ name: 'x' }, 'missing_required_parameter', 'scopes'],
    [{ name: 'x', scopes: [] }, 'too_few_items', 'scopes'],
    [{ name: 'x'.repeat(256), scopes: ['configs.read'] }, 'string_too_long', 'name'],
    [{ name: 'x', scopes: ['configs.read'], kind: 'y' }, 'unknown_parameter', 'kind'],
    [{ name: 'x', scopes: ['configs.read'], rate_limits: [{ type: 'requests', unit: 'rpy', value: 1 }] }, 'invalid_value', 'rate_limits[0].unit'],
    [{ name: 'x', scopes: ['configs.read'], alert_emails: ['not-an-email'] }, 'invalid_value', 'alert_emails[0]'],
    [{ name: 'x', scopes: ['configs.read'], expires_at: '2001-01-01T00:00:00Z' }, 'invalid_value', 'expires_at'],
    [{ name: 'x', scopes: ['configs.read'], expires_at: 'tomorrow' }, 'invalid_value', 'expires_at'],
    [{ name: 'x', scopes: ['configs.read'], defaults: { config_id: 'pc-missing' } }, 'not_found', 'defaults.config_id'],
    [{ name: 'x', scopes: ['configs.read'], usage_limits: { periodic_reset: 'weekly', periodic_reset_days: 3 } }, 'invalid_value', 'usage_limits.periodic_reset_days'],
    [{ name: 'x', scopes: ['configs.read'], user_id: alice }, 'unknown_parameter', 'user_id'],
  ];
  for (const [body, code, param] of cases) {
    const r = await call('POST', '/api-keys/workspace/service', body);
    t.equal(r.body.error?.code, code, `${param}: ${code}`);
    t.equal(r.body.error?.param, param);
  }
  t.equal(gw.store.c.apiKeys.list().total, 6, 'no failed create left a key behind (admin + 5)');
});

t.test('who may create which key (the spec role table)', async (t) => {
  const { call, workspace, user, create } = await setup(t);
  const teamA = workspace('team-a');
  const teamB = workspace('team-b');
  const manageScopes = [...DEFAULT_WORKSPACE_SCOPES];
  const roleKey = async (role: WorkspaceRole) => {
    const id = user(`${role}@example.com`, teamA, role);
    return (await create('workspace/user', { name: role, workspace_id: teamA, user_id: id, scopes: manageScopes })).key;
  };
  const service = (await create('workspace/service', { name: 'svc', workspace_id: teamA, scopes: manageScopes })).key;
  const admin = await roleKey('admin');
  const manager = await roleKey('manager');
  const member = await roleKey('member');
  const unbound = (await create('workspace/user', { name: 'unbound', workspace_id: teamA, scopes: manageScopes })).key;
  const narrow = (await create('workspace/service', { name: 'narrow', workspace_id: teamA, scopes: ['workspaces.read'] })).key;
  const orgNarrow = (await create('organisation/service', { name: 'org narrow', scopes: ['workspaces.read'] })).key;

  const body = { name: 'made', scopes: ['configs.read'] };
  const expect = async (caller: string, kind: string, status: number, code: string | null, extra: Json = {}) => {
    const res = await call('POST', `/api-keys/${kind}`, { ...body, ...extra }, caller);
    t.equal(res.status, status, `${kind} ${JSON.stringify(extra)} → ${status}`);
    if (code !== null) t.equal(res.body.error.code, code);
    return res;
  };

  // Organisation key: every kind, any workspace.
  await expect(ADMIN_KEY, 'organisation/service', 200, null);
  await expect(ADMIN_KEY, 'workspace/service', 200, null, { workspace_id: 'team-b' });
  await expect(ADMIN_KEY, 'workspace/user', 200, null, { workspace_id: teamB });

  // Workspace service key: workspace kinds in its own workspace only, never an organisation key.
  await expect(service, 'workspace/service', 200, null);
  await expect(service, 'workspace/user', 200, null, { workspace_id: 'team-a' });
  const elsewhere = await expect(service, 'workspace/service', 403, 'forbidden', { workspace_id: teamB });
  t.equal(elsewhere.body.error.param, 'workspace_id');
  await expect(service, 'organisation/service', 403, 'forbidden');

  // Workspace-user keys: the user's workspace role decides.
  for (const [key, status] of [[admin, 200], [manager, 200], [member, 403], [unbound, 403]] as const) {
    await expect(key, 'workspace/service', status, status === 200 ? null : 'forbidden');
    await expect(key, 'workspace/user', status, status === 200 ? null : 'forbidden');
    await expect(key, 'organisation/service', 403, 'forbidden');
  }
  const made = await expect(manager, 'workspace/service', 200, null);
  t.equal((await call('GET', `/api-keys/${made.body.id}`)).body.workspace_id, teamA, 'a manager creates keys in the workspace it manages');

  // Lacking the scope.
  await expect(narrow, 'workspace/service', 403, 'insufficient_scope');
  await expect(orgNarrow, 'organisation/service', 403, 'insufficient_scope');
  await expect(orgNarrow, 'workspace/service', 403, 'insufficient_scope');

  // A workspace key cannot grant a scope it does not hold.
  const creator = (await create('workspace/service', { name: 'creator', workspace_id: teamA, scopes: ['workspace_service_api_keys.create', 'configs.read'] })).key;
  await expect(creator, 'workspace/service', 200, null);
  const escalate = await expect(creator, 'workspace/service', 403, 'forbidden', { scopes: ['configs.read', 'configs.delete'] });
  t.equal(escalate.body.error.param, 'scopes[1]');
});

t.test('keys authenticate at once, deleted keys stop at once', async (t) => {
  const { call, gw, workspace, create } = await setup(t);
  const teamA = workspace('team-a');
  const k = await create('workspace/service', { name: 'k', workspace_id: teamA, scopes: ['workspace_service_api_keys.list', 'workspace_service_api_keys.delete'] });
  const listed = await call('GET', '/api-keys', undefined, k.key);
  t.equal(listed.status, 200, 'a created key authenticates immediately');
  t.same(listed.body.data.map((d: Json) => d.id), [k.id]);

  const other = await create('workspace/service', { name: 'other', workspace_id: teamA, scopes: ['workspace_service_api_keys.list'] });
  t.same(await (await call('DELETE', `/api-keys/${other.id}`)).body, {});
  const gone = await call('GET', '/api-keys', undefined, other.key);
  t.equal(gone.status, 401, 'a deleted key is refused on the next request');
  t.equal(gone.body.error.code, 'invalid_api_key');
  t.equal((await call('GET', `/api-keys/${other.id}`)).status, 404);
  t.equal((await call('DELETE', `/api-keys/${other.id}`)).status, 404);
  t.equal((await call('PUT', `/api-keys/${other.id}`, { name: 'y' })).status, 404);
  t.equal((await call('POST', `/api-keys/${other.id}/rotate`, {})).status, 404);
  t.notOk((await call('GET', '/api-keys')).body.data.some((d: Json) => d.id === other.id), 'deleted keys are never listed');
  t.type(gw.store.c.apiKeys.get(other.id)!.deleted_at, 'string', 'the record stays for the audit trail');

  // Deleting the key one calls with.
  const self = await call('DELETE', `/api-keys/${k.id}`, undefined, k.key);
  t.equal(self.status, 200);
  t.equal((await call('GET', '/api-keys', undefined, k.key)).status, 401);
});

t.test('update: fields, immutability, reset_usage, scope changes apply at once', async (t) => {
  const { call, gw, create } = await setup(t);
  const k = await create('workspace/service', { name: 'k', scopes: ['workspace_service_api_keys.list', 'configs.read'], expires_at: new Date(Date.now() + 3_600_000).toISOString() });
  t.equal((await call('GET', '/api-keys', undefined, k.key)).status, 200);

  const put = await call('PUT', `/api-keys/${k.id}`, {
    name: 'renamed',
    description: 'now described',
    scopes: ['configs.read'],
    rate_limits: [{ type: 'tokens', unit: 'rpw', value: 1000 }],
    usage_limits: null,
    alert_emails: [],
    expires_at: null,
    defaults: { metadata: { env: 'prod' }, allow_config_override: false },
  });
  t.equal(put.status, 200);
  t.same(put.body, {});
  t.match((await call('GET', `/api-keys/${k.id}`)).body, {
    name: 'renamed',
    description: 'now described',
    scopes: ['configs.read'],
    rate_limits: [{ type: 'tokens', unit: 'rpw', value: 1000 }],
    usage_limits: null,
    expires_at: null,
    defaults: { metadata: { env: 'prod' }, allow_config_override: false },
    type: 'workspace-service',
  });
  const denied = await call('GET', '/api-keys', undefined, k.key);
  t.equal(denied.status, 403, 'a removed scope stops working on the next request');
  t.equal(denied.body.error.code, 'insufficient_scope');

  for (const field of ['type', 'user_id', 'workspace_id']) {
    const r = await call('PUT', `/api-keys/${k.id}`, { [field]: 'x' });
    t.equal(r.status, 400);
    t.match(r.body.error, { code: 'unknown_parameter', param: field });
  }
  t.match((await call('PUT', `/api-keys/${k.id}`, { scopes: ['feedback.fly'] })).body.error, { code: 'invalid_value', param: 'scopes[0]' });
  t.match((await call('PUT', `/api-keys/${k.id}`, { expires_at: '2000-01-01T00:00:00Z' })).body.error, { param: 'expires_at' });

  gw.store.c.apiKeys.update(k.id, (r) => ({ ...r, status: 'exhausted' }));
  t.same((await call('PUT', `/api-keys/${k.id}`, { reset_usage: true })).body, {});
  const reset = (await call('GET', `/api-keys/${k.id}`)).body;
  t.equal(reset.status, 'active');
  t.match(reset.last_reset_at, /^\d{4}-\d\d-\d\dT/);
  t.equal((await call('PUT', '/api-keys/0190a0a0-0000-7000-8000-000000000000', { name: 'x' })).status, 404);
});

t.test('rotation: both secrets work during the transition, then only the new one', async (t) => {
  const { call, gw, create } = await setup(t);
  const k = await create('workspace/service', { name: 'k', scopes: ['workspace_service_api_keys.list'] });
  const before = Date.now();
  const rotated = await call('POST', `/api-keys/${k.id}/rotate`, {});
  t.equal(rotated.status, 200);
  t.match(rotated.body, { id: k.id, key: /^gw-[A-Za-z0-9_-]{43}$/ });
  t.not(rotated.body.key, k.key);
  const until = Date.parse(rotated.body.key_transition_expires_at);
  t.ok(until >= before + 1_800_000 && until <= Date.now() + 1_800_000, 'the default transition is 30 minutes');
  const fresh = rotated.body.key as string;

  t.equal((await call('GET', '/api-keys', undefined, k.key)).status, 200, 'the old secret works during the transition');
  t.equal((await call('GET', '/api-keys', undefined, fresh)).status, 200, 'the new secret works at once');
  t.equal((await call('GET', `/api-keys/${k.id}`)).body.key, maskApiKey(fresh), 'reads show the new secret, masked');

  const again = await call('POST', `/api-keys/${k.id}/rotate`, { key_transition_period_ms: 3_600_000 });
  t.equal(again.status, 409);
  t.equal(again.body.error.code, 'conflict');
  const short = await call('POST', `/api-keys/${k.id}/rotate`, { key_transition_period_ms: 1000 });
  t.equal(short.status, 400);
  t.match(short.body.error, { code: 'value_below_minimum', param: 'key_transition_period_ms' });

  // The transition ends (moved into the past rather than waiting 30 minutes).
  gw.store.c.apiKeys.update(k.id, (r) => ({ ...r, previous_expires_at: new Date(Date.now() - 1000).toISOString() }));
  const old = await call('GET', '/api-keys', undefined, k.key);
  t.equal(old.status, 401);
  t.equal(old.body.error.code, 'expired_api_key');
  t.equal((await call('GET', '/api-keys', undefined, fresh)).status, 200);

  const third = await call('POST', `/api-keys/${k.id}/rotate`, { key_transition_period_ms: 3_600_000 });
  t.equal(third.status, 200, 'a finished transition allows the next rotation');
  t.ok(Date.parse(third.body.key_transition_expires_at) > Date.now() + 3_500_000);
  t.equal((await call('GET', '/api-keys', undefined, k.key)).status, 401, 'the first secret is gone for good');
  t.equal((await call('GET', '/api-keys', undefined, fresh)).status, 200);
  t.equal((await call('GET', '/api-keys', undefined, third.body.key)).status, 200);

  // The rotate scope of the key's kind.
  const noRotate = (await create('workspace/service', { name: 'nr', scopes: ['workspace_service_api_keys.list'] })).key;
  const r = await call('POST', `/api-keys/${k.id}/rotate`, {}, noRotate);
  t.equal(r.status, 403);
  t.equal(r.body.error.code, 'insufficient_scope');
});

t.test('no raw key or hash in list, get or audit records', async (t) => {
  const { call, gw, create } = await setup(t);
  const a = await create('workspace/service', { name: 'a', scopes: ['configs.read'] });
  const b = await create('organisation/service', { name: 'b', scopes: ['workspaces.read'] });
  const rotated = (await call('POST', `/api-keys/${a.id}/rotate`, {})).body.key as string;
  await call('PUT', `/api-keys/${b.id}`, { name: 'b2' });
  await call('DELETE', `/api-keys/${b.id}`);
  const raws = [a.key, b.key, rotated, ADMIN_KEY];

  const list = await call('GET', '/api-keys');
  t.equal(list.body.total, 2, 'admin key and a (b is deleted)');
  for (const item of list.body.data as Json[]) t.match(item.key, /^gw-.\*{7}.{3}$/);
  t.same(leaks(list.text, raws), []);
  t.same(leaks((await call('GET', `/api-keys/${a.id}`)).text, raws), []);

  await gw.store.flush();
  const audit = gw.store.c.audit.list().items.filter((r) => r.resource_type === 'api_key');
  t.same(audit.map((r) => r.action).sort(), ['create', 'create', 'delete', 'rotate', 'update']);
  t.ok(audit.every((r) => r.response_status_code === 200));
  t.same(leaks(JSON.stringify(gw.store.c.audit.list().items), raws), []);
});

t.test('list: filters, pagination, scopes per kind, workspace isolation', async (t) => {
  const { call, workspace, user, create } = await setup(t);
  const teamA = workspace('team-a');
  const teamB = workspace('team-b');
  const listAll = ['workspace_service_api_keys.list', 'workspace_user_api_keys.list', 'workspace_service_api_keys.read', 'workspace_service_api_keys.update', 'workspace_service_api_keys.delete', 'workspace_service_api_keys.rotate'];
  const a1 = await create('workspace/service', { name: 'a1', workspace_id: teamA, scopes: listAll });
  const a2 = await create('workspace/user', { name: 'a2', workspace_id: teamA, user_id: user('m@example.com', teamA, 'member'), scopes: ['configs.read'] });
  const b1 = await create('workspace/service', { name: 'b1', workspace_id: teamB, scopes: listAll });

  const all = await call('GET', '/api-keys');
  t.equal(all.body.object, 'list');
  t.equal(all.body.total, 4, 'an organisation key sees every workspace and the organisation keys');
  t.equal((await call('GET', '/api-keys?workspace_id=team-a')).body.total, 2);
  t.same((await call('GET', `/api-keys?workspace_id=${teamB}`)).body.data.map((d: Json) => d.id), [b1.id]);
  t.same((await call('GET', '/api-keys?type=workspace-user')).body.data.map((d: Json) => d.id), [a2.id]);
  t.equal((await call('GET', '/api-keys?type=organisation-service')).body.total, 1);
  const page = await call('GET', '/api-keys?page_size=1&current_page=1');
  t.equal(page.body.total, 4);
  t.equal(page.body.data.length, 1);
  t.match((await call('GET', '/api-keys?type=robot')).body.error, { code: 'invalid_value', param: 'type' });

  // A workspace key sees only its workspace.
  const inA = await call('GET', '/api-keys', undefined, a1.key);
  t.same(inA.body.data.map((d: Json) => d.id).sort(), [a1.id, a2.id].sort());
  const foreign = await call('GET', `/api-keys?workspace_id=${teamB}`, undefined, a1.key);
  t.equal(foreign.status, 403);
  t.match(foreign.body.error, { code: 'forbidden', param: 'workspace_id' });
  for (const [method, path, body] of [
    ['GET', `/api-keys/${b1.id}`, undefined],
    ['PUT', `/api-keys/${b1.id}`, { name: 'x' }],
    ['DELETE', `/api-keys/${b1.id}`, undefined],
    ['POST', `/api-keys/${b1.id}/rotate`, {}],
  ] as const) {
    t.equal((await call(method, path, body, a1.key)).status, 404, `${method} ${path}: another workspace's key does not exist`);
  }
  const adminKeyId = (await call('GET', '/api-keys?type=organisation-service')).body.data[0].id as string;
  t.equal((await call('GET', `/api-keys/${adminKeyId}`, undefined, a1.key)).status, 404, "an organisation key is invisible to a workspace key");
  t.equal((await call('GET', `/api-keys/${b1.id}`)).status, 200);

  // Each list scope shows its own kind.
  const usersOnly = (await create('organisation/service', { name: 'uo', scopes: ['workspace_user_api_keys.list'] })).key;
  t.same((await call('GET', '/api-keys', undefined, usersOnly)).body.data.map((d: Json) => d.id), [a2.id]);
  t.match((await call('GET', '/api-keys?type=workspace-service', undefined, usersOnly)).body.error, { code: 'insufficient_scope' });
  const noList = (await create('organisation/service', { name: 'nl', scopes: ['workspaces.read'] })).key;
  t.equal((await call('GET', '/api-keys', undefined, noList)).status, 403);
  // The read scope follows the target's kind.
  t.match((await call('GET', `/api-keys/${a2.id}`, undefined, a1.key)).body.error, { code: 'insufficient_scope' });
});
