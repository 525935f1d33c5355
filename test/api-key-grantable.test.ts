/**
 * `GET /v1/api-keys/grantable-scopes`: what the caller may give each kind of key it may create,
 * checked against what a create then accepts. An organisation admin gets every kind with every
 * scope that kind may hold; a workspace key gets workspace kinds narrowed to its own scopes; a
 * key without a create scope gets nothing.
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, ADMIN_KEY, addWorkspace, insertKey } from './helpers/gateway.js';
import { Scopes } from '../core/index.js';

interface Kind {
  type: string;
  scopes: string[];
}

t.test('grantable scopes match what a create accepts', async (t) => {
  const gw = await startGateway(t, { yaml: 'pipeline: [auth, admin-api-keys]\n', env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const own = ['workspace_service_api_keys.create', 'completions.write', 'logs.list'];
  const team = addWorkspace(gw.store, 'team-a', own);
  const reader = insertKey(gw.store, { workspace_id: team.id, scopes: ['logs.list'], name: 'reader' });

  const call = async (key: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await request(`${gw.url}${path}`, {
      method,
      headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
  };
  const grantable = async (key: string): Promise<Kind[]> => {
    const res = await call(key, 'GET', '/v1/api-keys/grantable-scopes');
    t.equal(res.status, 200);
    return res.body.data as Kind[];
  };

  const admin = await grantable(ADMIN_KEY);
  t.same(admin.map((k) => k.type), ['organisation-service', 'workspace-service', 'workspace-user'], 'the admin creates every kind');
  for (const kind of admin) t.same(kind.scopes, [...Scopes.allowedScopes(kind.type as never)].sort(), `${kind.type}: every scope the kind may hold`);
  const org = await call(ADMIN_KEY, 'POST', '/v1/api-keys/organisation/service', { name: 'all of it', scopes: admin[0]!.scopes });
  t.equal(org.status, 200, 'a create with every listed scope is accepted');
  const ws = await call(ADMIN_KEY, 'POST', '/v1/api-keys/workspace/service', { name: 'ws all', workspace_id: team.id, scopes: admin[1]!.scopes });
  t.equal(ws.status, 200);
  const wrongKind = await call(ADMIN_KEY, 'POST', '/v1/api-keys/organisation/service', { name: 'x', scopes: ['logs.write'] });
  t.equal(wrongKind.status, 400, 'a scope missing from the kind\'s list is refused');
  t.notOk(admin[0]!.scopes.includes('logs.write'));

  const narrowed = await grantable(team.key);
  t.same(narrowed, [{ type: 'workspace-service', scopes: ['completions.write', 'logs.list', 'workspace_service_api_keys.create'] }], 'a workspace key: its kinds, its own scopes');
  const made = await call(team.key, 'POST', '/v1/api-keys/workspace/service', { name: 'child', scopes: narrowed[0]!.scopes });
  t.equal(made.status, 200, 'the narrowed list is accepted');
  const beyond = await call(team.key, 'POST', '/v1/api-keys/workspace/service', { name: 'child2', scopes: ['configs.read'] });
  t.equal(beyond.status, 403, 'a scope outside it is refused');

  t.same(await grantable(reader), [], 'no create scope: nothing to grant');
});
