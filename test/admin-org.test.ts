/**
 * The organisation admin API (`admin-org`): users, invites (with the public accept), workspaces and
 * workspace members, through the auth plugin over plain HTTP.
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, ADMIN_KEY, type StartedGateway, type Teardown, insertKey as insertStoreKey } from './helpers/gateway.js';
import { hashApiKey, nowIso, uuidv7, type Records } from '../core/index.js';
import adminOrg from '../plugins/admin-org/index.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

const MISSING = '0190a0a0-0000-7000-8000-000000000000';

interface Client {
  gw: StartedGateway;
  /** Every response body, for the "no secret leaves" checks. */
  seen: Array<{ path: string; text: string }>;
  call(method: Method, path: string, body?: unknown, key?: string | null): Promise<{ status: number; body: Json }>;
}

async function start(t: Teardown): Promise<Client> {
  const gw = await startGateway(t, {
    yaml: 'pipeline: [auth, admin-org]\n',
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
    plugins: { 'admin-org': adminOrg },
  });
  const seen: Client['seen'] = [];
  return {
    gw,
    seen,
    async call(method, path, body, key = ADMIN_KEY) {
      const res = await request(`${gw.url}/v1${path}`, {
        method,
        headers: { ...(key === null ? {} : { 'x-gateway-api-key': key }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.body.text();
      seen.push({ path, text });
      return { status: res.statusCode, body: JSON.parse(text) as Json };
    },
  };
}

/** A key written straight into the store (the key API is another plugin's). Returns the raw secret. */
function insertKey(gw: StartedGateway, opts: { workspaceId: string; scopes: string[]; type?: Records.ApiKeyType; userId?: string }): string {
  return insertStoreKey(gw.store, { type: opts.type ?? 'workspace-service', workspace_id: opts.workspaceId, scopes: opts.scopes, user_id: opts.userId ?? null });
}

const WS_SCOPES = ['workspaces.read', 'workspaces.list', 'workspaces.update', 'workspace_users.create', 'workspace_users.read', 'workspace_users.update', 'workspace_users.delete', 'workspace_users.list'];

t.test('users: create, list, get, role change, delete', async (t) => {
  const { gw, call } = await start(t);
  const ws = (await call('POST', '/admin/workspaces', { name: 'Team A', slug: 'team-a' })).body;

  const created = await call('POST', '/admin/users', { email: 'Ann@Example.com', first_name: 'Ann', role: 'admin', workspaces: [{ id: 'team-a', role: 'manager' }] });
  t.equal(created.status, 200);
  t.match(created.body, { id: /^[0-9a-f-]{36}$/, object: 'user' });
  const ann = created.body.id as string;
  const bob = (await call('POST', '/admin/users', { email: 'bob@example.com' })).body.id as string;

  const got = await call('GET', `/admin/users/${ann}`);
  t.same(Object.keys(got.body).sort(), ['created_at', 'email', 'first_name', 'id', 'last_name', 'last_updated_at', 'object', 'role', 'workspace_ids']);
  t.match(got.body, { object: 'user', id: ann, email: 'Ann@Example.com', first_name: 'Ann', last_name: null, role: 'admin', workspace_ids: [ws.id] });
  t.match((await call('GET', `/admin/users/${bob}`)).body, { role: 'member', workspace_ids: [] }, 'role defaults to member');

  const dup = await call('POST', '/admin/users', { email: 'ann@example.COM' });
  t.equal(dup.status, 409, 'emails are unique regardless of case');
  t.match(dup.body.error, { code: 'conflict', param: 'email' });
  const badEmail = await call('POST', '/admin/users', { email: 'not-an-email' });
  t.equal(badEmail.status, 400);
  t.match(badEmail.body.error, { code: 'invalid_value', param: 'email' });
  const badRole = await call('POST', '/admin/users', { email: 'x@example.com', role: 'owner' });
  t.match(badRole.body.error, { code: 'invalid_value', param: 'role' });
  const noWs = await call('POST', '/admin/users', { email: 'x@example.com', workspaces: [{ id: 'team-a', role: 'member' }, { id: 'nope', role: 'member' }] });
  t.equal(noWs.status, 404);
  t.match(noWs.body.error, { code: 'not_found', param: 'workspaces[1].id' });
  t.equal(gw.store.c.users.getBy('email', 'x@example.com'), undefined, 'a failed create writes nothing');

  const list = await call('GET', '/admin/users');
  t.match(list.body, { object: 'list', total: 2 });
  t.equal((await call('GET', '/admin/users?role=admin')).body.data[0].id, ann);
  t.equal((await call('GET', '/admin/users?email=BOB@example.com')).body.data[0].id, bob);
  const page = await call('GET', '/admin/users?page_size=1&current_page=1');
  t.equal(page.body.total, 2);
  t.equal(page.body.data.length, 1);
  t.match((await call('GET', '/admin/users?pageSize=1')).body.error, { code: 'unknown_parameter', param: 'pageSize' }, 'camelCase paging is not ours: refused, naming it');

  t.same((await call('PUT', `/admin/users/${bob}`, { role: 'admin' })).body, {});
  t.equal((await call('GET', `/admin/users/${bob}`)).body.role, 'admin');
  t.match((await call('PUT', `/admin/users/${bob}`, { role: 'owner' })).body.error, { code: 'invalid_value', param: 'role' });
  t.match((await call('PUT', `/admin/users/${bob}`, {})).body.error, { code: 'missing_required_parameter', param: 'role' });
  t.equal((await call('PUT', `/admin/users/${MISSING}`, { role: 'admin' })).status, 404);
  t.equal((await call('GET', `/admin/users/${MISSING}`)).status, 404);

  // The owner (there is no API to make one: it comes from provisioning).
  const now = nowIso();
  const owner = uuidv7();
  gw.store.c.users.insert({ id: owner, email: 'owner@example.com', first_name: null, last_name: null, role: 'owner', organisation_id: gw.store.meta.get('organisation_id') as string, created_at: now, last_updated_at: now });
  const demote = await call('PUT', `/admin/users/${owner}`, { role: 'member' });
  t.equal(demote.status, 400);
  t.match(demote.body.error, { code: 'invalid_value', param: 'role' });
  const lastOwner = await call('DELETE', `/admin/users/${owner}`);
  t.equal(lastOwner.status, 409);
  t.equal(lastOwner.body.error.code, 'conflict');

  // Deleting a user removes their memberships and revokes their workspace-user keys.
  const annKey = insertKey(gw, { workspaceId: ws.id, scopes: ['workspaces.read'], type: 'workspace-user', userId: ann });
  t.equal((await call('GET', `/admin/workspaces/${ws.id}`, undefined, annKey)).status, 200);
  t.same((await call('DELETE', `/admin/users/${ann}`)).body, {});
  t.equal((await call('GET', `/admin/users/${ann}`)).status, 404);
  t.equal(gw.store.c.members.get(`${ws.id}:${ann}`), undefined, 'membership removed');
  const revoked = await call('GET', `/admin/workspaces/${ws.id}`, undefined, annKey);
  t.equal(revoked.status, 401, "the user's key stops working");
  t.equal(revoked.body.error.code, 'invalid_api_key');
  t.equal((await call('DELETE', `/admin/users/${ann}`)).status, 404);

  // Organisation-only: a workspace key is refused even with the scope.
  const wsKey = insertKey(gw, { workspaceId: ws.id, scopes: ['organisation_users.list'] });
  const refused = await call('GET', '/admin/users', undefined, wsKey);
  t.equal(refused.status, 403);
  t.equal(refused.body.error.code, 'forbidden');
  t.equal((await call('GET', '/admin/users', undefined, null)).status, 401);
});

t.test('invites: the full flow, over plain HTTP', async (t) => {
  const { gw, call, seen } = await start(t);
  const ws = (await call('POST', '/admin/workspaces', { name: 'Team A', slug: 'team-a' })).body;
  const other = (await call('POST', '/admin/workspaces', { name: 'Team B', slug: 'team-b' })).body;

  const created = await call('POST', '/admin/users/invites', {
    email: 'cat@example.com',
    role: 'member',
    workspaces: [{ id: 'team-a', role: 'admin' }],
    workspace_api_key_details: { scopes: ['workspaces.read', 'workspace_users.list'] },
  });
  t.equal(created.status, 200);
  t.same(Object.keys(created.body).sort(), ['id', 'invite_link']);
  const link = new URL(created.body.invite_link as string);
  t.equal(`${link.protocol}//${link.host}`, gw.url, 'the link points back at the host the admin used');
  t.equal(link.pathname, '/v1/admin/users/invites/accept');
  const token = link.searchParams.get('token')!;
  t.ok(token.length >= 40, 'a long random token');
  const inviteId = created.body.id as string;

  const got = await call('GET', `/admin/users/invites/${inviteId}`);
  t.match(got.body, { object: 'invite', id: inviteId, email: 'cat@example.com', role: 'member', status: 'pending', workspaces: [{ id: ws.id, role: 'admin' }], workspace_api_key_details: { scopes: ['workspaces.read', 'workspace_users.list'] }, accepted_at: null });
  t.match(got.body.expires_at, /^\d{4}-\d\d-\d\dT/);
  t.ok(Date.parse(got.body.expires_at) - Date.now() > 6.9 * 24 * 3600 * 1000, 'valid for 7 days');
  t.notOk('token_hash' in got.body);

  const again = await call('POST', '/admin/users/invites', { email: 'CAT@example.com', role: 'admin', workspaces: [] });
  t.equal(again.status, 409, 'one pending invite per address');
  t.match(again.body.error, { code: 'conflict', param: 'email' });

  // Accept: no API key at all; the token is the credential.
  const accepted = await call('POST', '/admin/users/invites/accept', { token, first_name: 'Cat', last_name: 'Doe' }, null);
  t.equal(accepted.status, 200);
  t.match(accepted.body, { user_id: /^[0-9a-f-]{36}$/, object: 'user' });
  t.equal(accepted.body.api_keys.length, 1);
  t.equal(accepted.body.api_keys[0].workspace_id, ws.id);
  const userKey = accepted.body.api_keys[0].key as string;
  const userId = accepted.body.user_id as string;

  t.match((await call('GET', `/admin/users/${userId}`)).body, { email: 'cat@example.com', first_name: 'Cat', last_name: 'Doe', role: 'member', workspace_ids: [ws.id] });
  t.match((await call('GET', `/admin/workspaces/${ws.id}/users/${userId}`)).body, { object: 'workspace-user', id: userId, role: 'admin', org_role: 'member' });
  t.match((await call('GET', `/admin/users/invites/${inviteId}`)).body, { status: 'accepted', accepted_at: /^\d{4}-/ });

  // The new key works on the admin API, in its own workspace only.
  const own = await call('GET', `/admin/workspaces/${ws.id}`, undefined, userKey);
  t.equal(own.status, 200);
  t.equal(own.body.slug, 'team-a');
  t.equal((await call('GET', `/admin/workspaces/${other.id}`, undefined, userKey)).status, 403);
  const stored = gw.store.c.apiKeys.list({ filter: (k) => k.user_id === userId }).items;
  t.match(stored, [{ type: 'workspace-user', workspace_id: ws.id, hash: hashApiKey(userKey) }]);
  t.notOk(JSON.stringify(stored).includes(userKey), 'the raw key is not stored');

  const twice = await call('POST', '/admin/users/invites/accept', { token }, null);
  t.equal(twice.status, 400, 'a used token');
  t.match(twice.body.error, { code: 'invalid_invite', param: 'token' });
  t.match((await call('POST', '/admin/users/invites/accept', { token: 'inv-nope' }, null)).body.error, { code: 'invalid_invite' });
  t.match((await call('POST', '/admin/users/invites/accept', {}, null)).body.error, { code: 'missing_required_parameter', param: 'token' });
  t.equal((await call('DELETE', `/admin/users/invites/${inviteId}`)).status, 409, 'an accepted invite cannot be cancelled');
  t.equal((await call('POST', '/admin/users/invites', { email: 'cat@example.com', role: 'member', workspaces: [] })).status, 409, 'already a user');

  // Without key details: memberships, no keys.
  const plain = await call('POST', '/admin/users/invites', { email: 'dan@example.com', role: 'admin', workspaces: [{ id: ws.id, role: 'member' }, { id: 'team-b', role: 'manager' }] });
  const plainToken = new URL(plain.body.invite_link as string).searchParams.get('token')!;
  const dan = await call('POST', '/admin/users/invites/accept', { token: plainToken }, null);
  t.equal(dan.status, 200);
  t.notOk('api_keys' in dan.body);
  t.same((await call('GET', `/admin/users/${dan.body.user_id}`)).body.workspace_ids.sort(), [ws.id, other.id].sort());
  t.equal((await call('GET', `/admin/users/${dan.body.user_id}`)).body.role, 'admin');

  // Validation names the field.
  const badScope = await call('POST', '/admin/users/invites', { email: 'e@example.com', role: 'member', workspaces: [], workspace_api_key_details: { scopes: ['organisation_users.create'] } });
  t.equal(badScope.status, 400);
  t.match(badScope.body.error, { code: 'invalid_value', param: 'workspace_api_key_details.scopes[0]' });
  t.match((await call('POST', '/admin/users/invites', { email: 'e@example.com', role: 'member' })).body.error, { code: 'missing_required_parameter', param: 'workspaces' });
  t.match((await call('POST', '/admin/users/invites', { email: 'e@example.com', role: 'member', workspaces: [{ id: 'team-a', role: 'boss' }] })).body.error, { code: 'invalid_value', param: 'workspaces[0].role' });
  const noWs = await call('POST', '/admin/users/invites', { email: 'e@example.com', role: 'member', workspaces: [{ id: 'nope', role: 'member' }] });
  t.equal(noWs.status, 404);
  t.match(noWs.body.error, { param: 'workspaces[0].id' });
  const twiceWs = await call('POST', '/admin/users/invites', { email: 'e@example.com', role: 'member', workspaces: [{ id: ws.id, role: 'member' }, { id: 'team-a', role: 'admin' }] });
  t.match(twiceWs.body.error, { code: 'invalid_value', param: 'workspaces[1].id' });

  // Lists and filters.
  const pending = await call('POST', '/admin/users/invites', { email: 'eve@example.com', role: 'member', workspaces: [] });
  const all = await call('GET', '/admin/users/invites');
  t.match(all.body, { object: 'list', total: 3 });
  t.equal((await call('GET', '/admin/users/invites?status=accepted')).body.total, 2);
  t.equal((await call('GET', '/admin/users/invites?status=pending')).body.data[0].id, pending.body.id);
  t.equal((await call('GET', '/admin/users/invites?role=admin')).body.total, 1);
  t.equal((await call('GET', '/admin/users/invites?email=EVE@example.com')).body.total, 1);
  t.match((await call('GET', '/admin/users/invites?status=lost')).body.error, { code: 'invalid_value', param: 'status' });
  t.equal((await call('GET', `/admin/users/invites/${MISSING}`)).status, 404);

  // Expiry is computed: a pending invite past expires_at reads (and filters) as expired and cannot be accepted.
  const eveToken = new URL(pending.body.invite_link as string).searchParams.get('token')!;
  gw.store.c.invites.update(pending.body.id, (i) => ({ ...i, expires_at: new Date(Date.now() - 1000).toISOString() }));
  t.equal((await call('GET', `/admin/users/invites/${pending.body.id}`)).body.status, 'expired');
  t.equal((await call('GET', '/admin/users/invites?status=expired')).body.total, 1);
  t.match((await call('POST', '/admin/users/invites/accept', { token: eveToken }, null)).body.error, { code: 'invalid_invite' });

  // Resend: a new token replaces the old one (and revives an expired invite).
  const resent = await call('POST', `/admin/users/invites/${pending.body.id}/resend`);
  t.equal(resent.status, 200);
  t.same(Object.keys(resent.body), ['invite_link']);
  const newToken = new URL(resent.body.invite_link as string).searchParams.get('token')!;
  t.not(newToken, eveToken);
  t.equal((await call('GET', `/admin/users/invites/${pending.body.id}`)).body.status, 'pending');
  const old = await call('POST', '/admin/users/invites/accept', { token: eveToken }, null);
  t.equal(old.status, 400, 'the old token is dead');
  t.equal(old.body.error.code, 'invalid_invite');
  t.equal((await call('POST', '/admin/users/invites/accept', { token: newToken }, null)).status, 200, 'the new one works');

  // Cancel.
  const frank = await call('POST', '/admin/users/invites', { email: 'frank@example.com', role: 'member', workspaces: [] });
  const frankToken = new URL(frank.body.invite_link as string).searchParams.get('token')!;
  t.same((await call('DELETE', `/admin/users/invites/${frank.body.id}`)).body, {});
  t.equal((await call('GET', `/admin/users/invites/${frank.body.id}`)).body.status, 'cancelled');
  t.match((await call('POST', '/admin/users/invites/accept', { token: frankToken }, null)).body.error, { code: 'invalid_invite' });
  t.equal((await call('POST', `/admin/users/invites/${frank.body.id}/resend`)).status, 409, 'a cancelled invite is settled');
  t.equal((await call('DELETE', `/admin/users/invites/${MISSING}`)).status, 404);
  t.equal((await call('POST', `/admin/users/invites/${MISSING}/resend`)).status, 404);

  // A workspace key cannot invite.
  const wsKey = insertKey(gw, { workspaceId: ws.id, scopes: ['organisation_users.create'] });
  t.equal((await call('POST', '/admin/users/invites', { email: 'g@example.com', role: 'member', workspaces: [] }, wsKey)).status, 403);

  // No token or token hash anywhere but the create and resend answers; none in the audit trail.
  const tokens = [token, plainToken, eveToken, newToken, frankToken];
  const hashes = gw.store.c.invites.list().items.map((i) => i.token_hash);
  const linkAnswers = seen.filter((s) => s.text.includes('invite_link'));
  for (const s of seen.filter((x) => !linkAnswers.includes(x))) {
    for (const secret of [...tokens, ...hashes]) if (s.text.includes(secret)) t.fail(`a token or hash leaked in the answer to ${s.path}`);
    t.notOk(/token_hash/.test(s.text), `no token_hash field in ${s.path}`);
  }
  await gw.store.flush();
  const audit = gw.store.c.audit.list().items;
  t.ok(audit.some((a) => a.resource_type === 'invite' && a.action === 'create'));
  t.ok(audit.some((a) => a.resource_type === 'invite' && a.action === 'accept' && a.user_id === userId), 'an acceptance is audited');
  const trail = JSON.stringify(audit);
  for (const secret of [...tokens, ...hashes, userKey]) t.notOk(trail.includes(secret), 'no token, hash or key in the audit trail');
  const logs = JSON.stringify(gw.logs);
  for (const secret of [...tokens, ...hashes, userKey]) t.notOk(logs.includes(secret), 'no token, hash or key in the logs');
});

t.test('workspaces: create, list, get, update, delete', async (t) => {
  const { gw, call } = await start(t);
  const created = await call('POST', '/admin/workspaces', {
    name: 'Research',
    description: 'R&D',
    defaults: { metadata: { team: 'r' } },
    usage_limits: [{ credit_limit: 100, type: 'cost', periodic_reset: 'monthly' }],
    rate_limits: [{ type: 'requests', unit: 'rpm', value: 60 }],
  });
  t.equal(created.status, 200);
  t.match(created.body, {
    object: 'workspace',
    id: /^[0-9a-f-]{36}$/,
    slug: /^research-[0-9a-f]{6}$/,
    name: 'Research',
    description: 'R&D',
    status: 'active',
    defaults: { metadata: { team: 'r' }, is_default: 0, object: 'workspace' },
    usage_limits: [{ credit_limit: 100, type: 'cost', periodic_reset: 'monthly', alert_threshold: null }],
    rate_limits: [{ type: 'requests', unit: 'rpm', value: 60 }],
  });
  const id = created.body.id as string;
  const ops = (await call('POST', '/admin/workspaces', { name: 'Ops', slug: 'ops' })).body;

  const taken = await call('POST', '/admin/workspaces', { name: 'Ops 2', slug: 'ops' });
  t.equal(taken.status, 409);
  t.match(taken.body.error, { code: 'conflict', param: 'slug' });
  t.match((await call('POST', '/admin/workspaces', { name: 'x', slug: 'no spaces' })).body.error, { code: 'invalid_value', param: 'slug' });
  t.match((await call('POST', '/admin/workspaces', { name: 'x', slug: MISSING })).body.error, { code: 'invalid_value', param: 'slug' });
  t.match((await call('POST', '/admin/workspaces', {})).body.error, { code: 'missing_required_parameter', param: 'name' });
  t.match((await call('POST', '/admin/workspaces', { name: 'x', defaults: { metadata: { a: 1 } } })).body.error, { code: 'invalid_type', param: 'defaults.metadata.a' });
  t.match((await call('POST', '/admin/workspaces', { name: 'x', users: [] })).body.error, { code: 'unknown_parameter', param: 'users' });
  t.match((await call('POST', '/admin/workspaces', { name: 'x', rate_limits: [{ type: 'requests', unit: 'rpm', value: -1 }] })).body.error, { param: 'rate_limits[0].value' });

  const list = await call('GET', '/admin/workspaces');
  t.match(list.body, { object: 'list', total: 3 }, 'default + 2');
  t.equal((await call('GET', '/admin/workspaces?name=sear')).body.data[0].id, id);
  t.equal((await call('GET', '/admin/workspaces?name=SEAR')).body.total, 0, 'name is case-sensitive');
  t.equal((await call('GET', '/admin/workspaces?exact_name=Ops')).body.data[0].id, ops.id);
  t.equal((await call('GET', '/admin/workspaces?exact_name=Op')).body.total, 0);
  t.equal((await call('GET', '/admin/workspaces?page_size=1&current_page=2')).body.data.length, 1);
  t.match((await call('GET', '/admin/workspaces?status=gone')).body.error, { code: 'invalid_value', param: 'status' });

  const byslug = await call('GET', '/admin/workspaces/ops');
  t.equal(byslug.body.id, ops.id, 'by slug');
  t.same(byslug.body.users, []);
  t.equal((await call('GET', '/admin/workspaces/nope')).status, 404);

  t.same((await call('PUT', `/admin/workspaces/${id}`, { name: 'Research 2', description: null, defaults: { metadata: { team: 's' } }, rate_limits: [] })).body, {});
  t.match((await call('GET', `/admin/workspaces/${id}`)).body, { name: 'Research 2', description: null, defaults: { metadata: { team: 's' } }, rate_limits: [], usage_limits: [{ credit_limit: 100 }] });
  t.match((await call('PUT', `/admin/workspaces/${id}`, { slug: 'x' })).body.error, { code: 'unknown_parameter', param: 'slug' });
  t.match((await call('PUT', `/admin/workspaces/${id}`, { name: '' })).body.error, { code: 'invalid_value', param: 'name' });
  const noConfig = await call('PUT', `/admin/workspaces/${id}`, { defaults: { user_api_key_config: 'pc-nope' } });
  t.equal(noConfig.status, 404);
  t.match(noConfig.body.error, { param: 'defaults.user_api_key_config' });
  t.equal((await call('PUT', `/admin/workspaces/nope`, { name: 'y' })).status, 404);

  // The default workspace is never deleted.
  const def = (await call('GET', '/admin/workspaces/default')).body;
  t.equal(def.defaults.is_default, 1);
  const defDelete = await call('DELETE', `/admin/workspaces/${def.id}`);
  t.equal(defDelete.status, 409);
  t.equal(defDelete.body.error.code, 'conflict');

  // A workspace with a live API key needs force_delete; forcing revokes the key.
  const opsKey = insertKey(gw, { workspaceId: ops.id, scopes: ['workspaces.read'] });
  t.equal((await call('GET', '/admin/workspaces/ops', undefined, opsKey)).status, 200);
  const blocked = await call('DELETE', '/admin/workspaces/ops');
  t.equal(blocked.status, 409);
  t.match(blocked.body.error, { code: 'conflict', message: /API keys/ });
  t.equal((await call('GET', '/admin/workspaces/ops')).body.status, 'active', 'nothing changed');
  t.match((await call('DELETE', '/admin/workspaces/ops', { force_delete: 'yes' })).body.error, { code: 'invalid_type', param: 'force_delete' });
  t.same((await call('DELETE', '/admin/workspaces/ops', { force_delete: true })).body, {});
  t.equal((await call('GET', '/admin/workspaces/ops')).body.status, 'archived');
  t.equal((await call('GET', '/admin/workspaces/ops', undefined, opsKey)).status, 401, 'its keys are revoked');
  t.ok(gw.store.c.apiKeys.list({ index: 'workspace', value: ops.id }).items.every((k) => k.deleted_at !== null));

  // A workspace without dependents is archived without force.
  t.same((await call('DELETE', `/admin/workspaces/${id}`)).body, {});
  t.equal((await call('GET', '/admin/workspaces')).body.total, 1, 'archived workspaces leave the default (active) list');
  t.equal((await call('GET', '/admin/workspaces?status=archived')).body.total, 2);
  t.equal((await call('GET', '/admin/workspaces?status=active,archived')).body.total, 3);
  t.equal((await call('DELETE', '/admin/workspaces/nope')).status, 404);
  t.equal((await call('POST', '/admin/users', { email: 'z@example.com', workspaces: [{ id: 'ops', role: 'member' }] })).status, 404, 'nobody joins an archived workspace');

  await gw.store.flush();
  const audit = gw.store.c.audit.list().items.filter((a) => a.resource_type === 'workspace');
  t.ok(audit.some((a) => a.action === 'delete' && a.response_status_code === 409), 'refused deletes are audited too');
});

t.test('workspace isolation and members', async (t) => {
  const { gw, call } = await start(t);
  const a = (await call('POST', '/admin/workspaces', { name: 'A', slug: 'ws-a' })).body;
  const b = (await call('POST', '/admin/workspaces', { name: 'B', slug: 'ws-b' })).body;
  const keyA = insertKey(gw, { workspaceId: a.id, scopes: [...WS_SCOPES, 'workspaces.create', 'workspaces.delete'] });

  // A workspace key sees, reads and updates only its own workspace.
  const listed = await call('GET', '/admin/workspaces?status=active,archived', undefined, keyA);
  t.equal(listed.body.total, 1);
  t.equal(listed.body.data[0].id, a.id);
  t.equal((await call('GET', `/admin/workspaces/${a.id}`, undefined, keyA)).status, 200);
  t.equal((await call('GET', '/admin/workspaces/ws-a', undefined, keyA)).status, 200, 'by slug too');
  for (const ref of [b.id, 'ws-b', 'default', 'does-not-exist']) {
    const read = await call('GET', `/admin/workspaces/${ref}`, undefined, keyA);
    t.equal(read.status, 403, `cannot read ${ref}`);
    t.equal(read.body.error.code, 'forbidden');
    t.equal((await call('PUT', `/admin/workspaces/${ref}`, { name: 'pwned' }, keyA)).status, 403, `cannot update ${ref}`);
    t.equal((await call('GET', `/admin/workspaces/${ref}/users`, undefined, keyA)).status, 403, `cannot list members of ${ref}`);
  }
  t.equal((await call('GET', '/admin/workspaces/ws-b')).body.name, 'B', 'unchanged');
  t.same((await call('PUT', '/admin/workspaces/ws-a', { description: 'mine' }, keyA)).body, {});
  const limits = await call('PUT', '/admin/workspaces/ws-a', { usage_limits: [] }, keyA);
  t.equal(limits.status, 403, 'a workspace key cannot change its own limits');
  t.match(limits.body.error, { code: 'forbidden', param: 'usage_limits' });
  // Create and delete are organisation business, whatever the key's scopes.
  t.equal((await call('POST', '/admin/workspaces', { name: 'C' }, keyA)).status, 403);
  t.equal((await call('DELETE', `/admin/workspaces/${a.id}`, undefined, keyA)).status, 403);
  const unscoped = insertKey(gw, { workspaceId: a.id, scopes: ['workspaces.list'] });
  const noScope = await call('GET', `/admin/workspaces/${a.id}`, undefined, unscoped);
  t.equal(noScope.status, 403);
  t.equal(noScope.body.error.code, 'insufficient_scope');

  // Members.
  const u1 = (await call('POST', '/admin/users', { email: 'u1@example.com', first_name: 'U' })).body.id as string;
  const u2 = (await call('POST', '/admin/users', { email: 'u2@example.com' })).body.id as string;
  t.same((await call('POST', `/admin/workspaces/${a.id}/users`, { users: [{ id: u1, role: 'admin' }, { id: u2, role: 'member' }] })).body, {});
  const missing = await call('POST', `/admin/workspaces/${a.id}/users`, { users: [{ id: u1, role: 'admin' }, { id: MISSING, role: 'member' }] });
  t.equal(missing.status, 404);
  t.match(missing.body.error, { code: 'not_found', param: 'users[1].id' });
  t.match((await call('POST', `/admin/workspaces/${a.id}/users`, { users: [{ id: u1, role: 'owner' }] })).body.error, { code: 'invalid_value', param: 'users[0].role' });
  t.match((await call('POST', `/admin/workspaces/${a.id}/users`, { users: [{ id: u1 }] })).body.error, { code: 'missing_required_parameter', param: 'users[0].role' });
  t.match((await call('POST', `/admin/workspaces/${a.id}/users`, { users: [] })).body.error, { param: 'users' });
  t.equal((await call('POST', '/admin/workspaces/nope/users', { users: [{ id: u1, role: 'admin' }] })).status, 404);

  const members = await call('GET', `/admin/workspaces/${a.id}/users`);
  t.match(members.body, { object: 'list', total: 2 });
  const m1 = members.body.data.find((m: Json) => m.id === u1);
  t.same(Object.keys(m1).sort(), ['created_at', 'email', 'first_name', 'id', 'last_name', 'last_updated_at', 'object', 'org_role', 'role', 'status', 'workspace_id']);
  t.match(m1, { object: 'workspace-user', id: u1, first_name: 'U', last_name: null, email: 'u1@example.com', org_role: 'member', role: 'admin', status: 'active', workspace_id: a.id });
  t.equal((await call('GET', `/admin/workspaces/${a.id}/users?role=member`)).body.data[0].id, u2);
  t.equal((await call('GET', `/admin/workspaces/${a.id}/users?email=U2@EXAMPLE.com`)).body.data[0].id, u2);
  t.equal((await call('GET', `/admin/workspaces/${a.id}/users?page_size=1`)).body.data.length, 1);
  t.equal((await call('GET', `/admin/workspaces/${a.id}`)).body.users.length, 2, 'the workspace detail lists its members');
  t.same(gw.store.c.members.get(`${a.id}:${u1}`)?.id, `${a.id}:${u1}`, 'member ids are workspace:user');

  // Adding an existing member changes the role.
  await call('POST', `/admin/workspaces/${a.id}/users`, { users: [{ id: u2, role: 'manager' }] });
  t.equal((await call('GET', `/admin/workspaces/${a.id}/users/${u2}`)).body.role, 'manager');
  t.same((await call('PUT', `/admin/workspaces/${a.id}/users/${u2}`, { role: 'member' })).body, {});
  t.equal((await call('GET', `/admin/workspaces/${a.id}/users/${u2}`)).body.role, 'member');
  t.match((await call('PUT', `/admin/workspaces/${a.id}/users/${u2}`, { role: 'king' })).body.error, { param: 'role' });
  t.equal((await call('PUT', `/admin/workspaces/${b.id}/users/${u2}`, { role: 'member' })).status, 404, 'not a member there');
  t.equal((await call('GET', `/admin/workspaces/${a.id}/users/${MISSING}`)).status, 404);

  // The workspace key manages its own members, and no one else's.
  t.equal((await call('GET', '/admin/workspaces/ws-a/users', undefined, keyA)).body.total, 2);
  t.same((await call('POST', '/admin/workspaces/ws-a/users', { users: [{ id: u2, role: 'manager' }] }, keyA)).body, {});
  t.equal((await call('POST', `/admin/workspaces/${b.id}/users`, { users: [{ id: u1, role: 'admin' }] }, keyA)).status, 403);
  t.equal((await call('GET', `/admin/workspaces/${b.id}/users/${u1}`, undefined, keyA)).status, 403);
  t.equal((await call('PUT', `/admin/workspaces/${b.id}/users/${u1}`, { role: 'admin' }, keyA)).status, 403);
  t.equal((await call('DELETE', `/admin/workspaces/${b.id}/users/${u1}`, undefined, keyA)).status, 403);
  t.equal(gw.store.c.members.get(`${b.id}:${u1}`), undefined, 'nothing was written in B');

  // A member's own workspace-user key reads, but a plain member cannot manage.
  const memberKey = insertKey(gw, { workspaceId: a.id, scopes: WS_SCOPES, type: 'workspace-user', userId: u1 });
  await call('PUT', `/admin/workspaces/${a.id}/users/${u1}`, { role: 'member' });
  t.equal((await call('GET', `/admin/workspaces/${a.id}/users`, undefined, memberKey)).status, 200);
  const notManager = await call('PUT', `/admin/workspaces/${a.id}/users/${u2}`, { role: 'admin' }, memberKey);
  t.equal(notManager.status, 403);
  t.equal(notManager.body.error.code, 'forbidden');

  // Removing a member revokes their key in that workspace.
  t.same((await call('DELETE', `/admin/workspaces/${a.id}/users/${u1}`)).body, {});
  t.equal((await call('GET', `/admin/workspaces/${a.id}/users/${u1}`)).status, 404);
  t.equal((await call('GET', `/admin/workspaces/${a.id}/users`, undefined, memberKey)).status, 401);
  t.equal((await call('DELETE', `/admin/workspaces/${a.id}/users/${u1}`)).status, 404);
  t.same((await call('GET', `/admin/users/${u1}`)).body.workspace_ids, [], 'still an organisation member');
});
