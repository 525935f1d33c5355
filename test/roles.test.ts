/**
 * The spec's role table and its admin-key versus workspace-key operation table, as a matrix:
 * every principal × every operation, with the status each must get. Also workspace isolation
 * across areas, the OpenAPI document, and secrets absent from every response, log and audit record.
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, startMock, direct, ADMIN_KEY } from './helpers/gateway.js';
import { DEFAULT_WORKSPACE_SCOPES } from '../core/auth/scopes.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
interface Answer {
  status: number;
  body: Record<string, unknown>;
  text: string;
}

const PROVIDER_SECRET = 'sk-provider-SECRET-abcdef0123456789';

t.test('role × operation matrix', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: 'pipeline: [auth, admin-org, admin-api-keys, admin-resources, admin-policies, admin-catalog]\n',
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
  });
  const responses: string[] = [];
  async function call(key: string | undefined, method: Method, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const res = await request(`${gw.url}${path}`, {
      method,
      headers: { ...(key ? { 'x-gateway-api-key': key } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    responses.push(text);
    let parsed: Record<string, unknown> = {};
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      /* non-JSON answers are compared by status only */
    }
    return { status: res.statusCode, body: parsed, text };
  }
  async function ok(key: string, method: Method, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const a = await call(key, method, path, body);
    if (a.status !== 200) throw new Error(`${method} ${path} → ${a.status} ${a.text}`);
    return a.body;
  }

  // Two workspaces; users with manager and member roles in A; a key per principal.
  const A = (await ok(ADMIN_KEY, 'POST', '/v1/admin/workspaces', { name: 'Team A' })).id as string;
  const B = (await ok(ADMIN_KEY, 'POST', '/v1/admin/workspaces', { name: 'Team B' })).id as string;
  const manager = (await ok(ADMIN_KEY, 'POST', '/v1/admin/users', { email: 'mgr@example.com', role: 'member', workspaces: [{ id: A, role: 'manager' }] })).id as string;
  const member = (await ok(ADMIN_KEY, 'POST', '/v1/admin/users', { email: 'mem@example.com', role: 'member', workspaces: [{ id: A, role: 'member' }] })).id as string;
  const readOnly = ['configs.read', 'configs.list', 'virtual_keys.list', 'completions.write'];
  const keys = {
    org: ADMIN_KEY,
    wsService: (await ok(ADMIN_KEY, 'POST', '/v1/api-keys/workspace/service', { name: 'svc', workspace_id: A, scopes: DEFAULT_WORKSPACE_SCOPES })).key as string,
    manager: (await ok(ADMIN_KEY, 'POST', '/v1/api-keys/workspace/user', { name: 'mgr', workspace_id: A, user_id: manager, scopes: DEFAULT_WORKSPACE_SCOPES })).key as string,
    member: (await ok(ADMIN_KEY, 'POST', '/v1/api-keys/workspace/user', { name: 'mem', workspace_id: A, user_id: member, scopes: readOnly })).key as string,
    noScopes: (await ok(ADMIN_KEY, 'POST', '/v1/api-keys/workspace/service', { name: 'bare', workspace_id: A, scopes: ['configs.read'] })).key as string,
  };
  const principals = Object.keys(keys) as Array<keyof typeof keys>;

  const config = { strategy: { mode: 'single' }, targets: [{ provider: 'openai', api_key: PROVIDER_SECRET }] };
  const policy = { conditions: [{ key: 'workspace_id', value: A }], group_by: [{ key: 'api_key' }], type: 'requests', unit: 'rpm', value: 10 };
  const chat = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
  let n = 0;
  const uniq = (): string => `x${++n}`;

  // [operation, method, path, body factory, expected status per principal: org, wsService, manager, member, noScopes]
  const matrix: Array<[string, Method, string, (() => unknown) | undefined, number[], Record<string, string>?]> = [
    ['create a workspace', 'POST', '/v1/admin/workspaces', () => ({ name: uniq() }), [200, 403, 403, 403, 403]],
    ['list users', 'GET', '/v1/admin/users', undefined, [200, 403, 403, 403, 403]],
    ['create an organisation key', 'POST', '/v1/api-keys/organisation/service', () => ({ name: uniq(), scopes: ['configs.read'] }), [200, 403, 403, 403, 403]],
    ['create a workspace key in A', 'POST', '/v1/api-keys/workspace/service', () => ({ name: uniq(), workspace_id: A, scopes: ['configs.read'] }), [200, 200, 200, 403, 403]],
    ['create a workspace key in B', 'POST', '/v1/api-keys/workspace/service', () => ({ name: uniq(), workspace_id: B, scopes: ['configs.read'] }), [200, 403, 403, 403, 403]],
    ['create a config in A', 'POST', '/v1/configs', () => ({ name: uniq(), config, workspace_id: A }), [200, 200, 200, 403, 403]],
    ['create a config in B', 'POST', '/v1/configs', () => ({ name: uniq(), config, workspace_id: B }), [200, 403, 403, 403, 403]],
    ['list configs', 'GET', '/v1/configs', undefined, [200, 200, 200, 200, 403]],
    ['create a virtual key in A', 'POST', '/v1/virtual-keys', () => ({ name: uniq(), provider: 'openai', key: PROVIDER_SECRET, workspace_id: A }), [200, 200, 200, 403, 403]],
    ['create a rate limits policy in A', 'POST', '/v1/policies/rate-limits', () => ({ ...policy, workspace_id: A }), [200, 200, 200, 403, 403]],
    ['read the audit log', 'GET', '/v1/audit-logs', undefined, [200, 403, 403, 403, 403]],
    ['set a model price', 'PUT', '/v1/model-pricing/openai/my-model', () => ({ pay_as_you_go: { request_token: { price: 0.0001 }, response_token: { price: 0.0002 } } }), [200, 403, 403, 403, 403]],
    ['call a model', 'POST', '/v1/chat/completions', () => chat, [200, 200, 200, 200, 403], direct(mock)],
  ];

  for (const [name, method, path, body, expected, headers] of matrix) {
    t.test(name, async (t) => {
      const got: number[] = [];
      for (const p of principals) got.push((await call(keys[p], method, path, body?.(), headers)).status);
      t.same(Object.fromEntries(principals.map((p, i) => [p, got[i]])), Object.fromEntries(principals.map((p, i) => [p, expected[i]])));
    });
  }

  t.test('no key at all: 401 on admin and model routes, public routes open', async (t) => {
    t.equal((await call(undefined, 'GET', '/v1/configs')).status, 401);
    t.equal((await call(undefined, 'POST', '/v1/chat/completions', chat, direct(mock))).status, 401);
    t.equal((await call(undefined, 'GET', '/model-configs/pricing/openai/gpt-4o')).status, 200);
    const doc = await call(undefined, 'GET', '/v1/openapi.json');
    t.equal(doc.status, 200);
    t.equal(doc.body.openapi, '3.1.0');
    const paths = doc.body.paths as Record<string, Record<string, { requestBody?: unknown; responses: unknown }>>;
    for (const p of ['/v1/policies/rate-limits', '/v1/api-keys/{id}/rotate', '/v1/admin/workspaces', '/v1/configs/{slug}/versions', '/v1/virtual-keys', '/v1/audit-logs', '/model-configs/pricing/{provider}/{model}']) {
      t.ok(paths[p], `documents ${p}`);
    }
    t.ok(paths['/v1/policies/rate-limits']!.post!.requestBody, 'with request schemas');
  });

  t.test('workspace isolation across areas: B is invisible to A keys', async (t) => {
    const cfg = (await ok(ADMIN_KEY, 'POST', '/v1/configs', { name: 'b-only', config, workspace_id: B })).slug as string;
    const vk = (await ok(ADMIN_KEY, 'POST', '/v1/virtual-keys', { name: 'b-vk', provider: 'openai', key: PROVIDER_SECRET, workspace_id: B })).slug as string;
    const pol = (await ok(ADMIN_KEY, 'POST', '/v1/policies/rate-limits', { ...policy, workspace_id: B })).id as string;
    for (const path of [`/v1/configs/${cfg}`, `/v1/virtual-keys/${vk}`, `/v1/policies/rate-limits/${pol}`]) {
      t.equal((await call(keys.wsService, 'GET', path)).status, 404, `GET ${path}`);
      t.equal((await call(keys.wsService, 'DELETE', path)).status, 404, `DELETE ${path}`);
    }
    for (const path of ['/v1/configs', '/v1/virtual-keys', '/v1/policies/rate-limits', '/v1/api-keys']) {
      const list = await call(keys.wsService, 'GET', path);
      t.notMatch(list.text, B, `${path} shows nothing of B`);
    }
    t.equal((await call(keys.wsService, 'GET', `/v1/configs?workspace_id=${B}`)).status, 403);
  });

  t.test('no secret in any response, log line or audit record', async (t) => {
    const all = responses.join('\n');
    t.notMatch(all, PROVIDER_SECRET, 'responses');
    t.notMatch(JSON.stringify(gw.logs), PROVIDER_SECRET, 'logs');
    t.notMatch(JSON.stringify(gw.logs), ADMIN_KEY, 'logs: the admin key');
    const audit = JSON.stringify(gw.store.c.audit.list().items);
    t.ok(audit.length > 100, 'there are audit records');
    t.notMatch(audit, PROVIDER_SECRET, 'audit records');
    for (const raw of Object.values(keys)) t.notMatch(audit + JSON.stringify(gw.logs), raw, 'no API key in audit or logs');
  });
});
