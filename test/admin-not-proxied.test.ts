/**
 * Admin mistakes are not proxied: a wrong method or an unknown path in an admin area (derived from
 * the routes the pipeline registers) answers 405/404 in the error shape, and the provider never
 * sees it; the provider's own paths (`/v1/models`, `/v1/files`, `GET /v1/responses/{id}`, …) stay
 * pass-through.
 */
import t from 'tap';
import { buildRouteTable } from '../core/routes.js';
import { reply } from '../core/reply.js';
import type { RouteDefinition } from '../core/plugin.js';
import { startGateway, startMock, direct, ADMIN_KEY } from './helpers/gateway.js';

t.test('the route table: admin areas come from plugin routes, provider areas never do', async (t) => {
  const route = (method: RouteDefinition['method'], path: string): { plugin: string; route: RouteDefinition } => ({
    plugin: 'p',
    route: { method, path, handler: () => reply(200, {}) },
  });
  const table = buildRouteTable([
    route('GET', '/v1/admin/users'),
    route('POST', '/v1/admin/users'),
    route('DELETE', '/v1/admin/users/:id'),
    route('GET', '/v1/widgets/:id/parts'),
    route('GET', '/v1/models/extra'), // a plugin route on a provider path: the area stays the provider's
    route('GET', '/console/app'),
  ]);
  const cases: Array<[string, string, string, string?]> = [
    ['GET', '/v1/admin/users', 'plugin'],
    ['PUT', '/v1/admin/users', 'method_not_allowed', 'GET, POST'],
    ['GET', '/v1/admin/users/u1', 'method_not_allowed', 'DELETE'],
    ['POST', '/v1/admin/nothing', 'not_found'],
    ['GET', '/v1/admin', 'not_found'],
    ['GET', '/v1/widgets/w1', 'not_found'],
    ['POST', '/v1/widgets/w1/parts', 'method_not_allowed', 'GET'],
    ['GET', '/v1/models', 'passthrough'],
    ['GET', '/v1/models/gpt-4o', 'passthrough'],
    ['GET', '/v1/models/extra', 'plugin'],
    ['GET', '/v1/files', 'passthrough'],
    ['POST', '/v1/batches', 'passthrough'],
    ['GET', '/v1/responses/resp_1', 'passthrough'],
    ['GET', '/v1/chat/completions', 'passthrough'],
    ['POST', '/v1/chat/completions', 'model'],
    ['GET', '/v1/adminx/users', 'passthrough'],
  ];
  for (const [method, path, kind, allow] of cases) {
    const match = table.match(method, path);
    t.equal(match.kind, kind, `${method} ${path} → ${kind}`);
    if (allow !== undefined) t.equal((match as { allow?: string }).allow, allow, `${method} ${path} allows ${allow}`);
  }
  const bare = buildRouteTable([]);
  t.equal(bare.match('GET', '/v1/admin/users').kind, 'passthrough', 'without admin plugins nothing is an admin area');
});

t.test('through a gateway with the admin plugins', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: 'pipeline: [auth, admin-org, admin-api-keys, admin-policies, logging, analytics]\n',
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
  });
  const headers = { ...direct(mock), 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json' };
  const before = mock.requests.length;

  for (const [method, path, status] of [
    ['PUT', '/v1/admin/users', 405],
    ['PATCH', '/v1/admin/users', 405],
    ['GET', '/v1/admin/no-such-thing', 404],
    ['DELETE', '/v1/admin/users/u1/extra/segments', 404],
    ['GET', '/v1/policies/no-such-policy-kind', 404],
    ['GET', '/v1/api-keys/a/b/c/d', 404],
    ['GET', '/v1/logs/x/y/z', 404],
    ['GET', '/v1/analytics/no-such-report', 404],
  ] as const) {
    const res = await fetch(`${gw.url}${path}`, { method, headers, ...(method === 'GET' || method === 'DELETE' ? {} : { body: '{}' }) });
    t.equal(res.status, status, `${method} ${path} → ${status}`);
    t.equal(res.headers.get('x-gateway-error-source'), 'gateway');
    const body = (await res.json()) as { error: { code: string } };
    t.equal(body.error.code, status === 404 ? 'route_not_found' : 'method_not_allowed');
    if (status === 405) t.match(res.headers.get('allow'), /GET/, 'Allow names the methods the path has');
  }
  t.equal(mock.requests.length, before, 'the provider saw none of them');

  // The admin API itself still answers, and the provider's paths still pass through.
  const users = await fetch(`${gw.url}/v1/admin/users`, { headers });
  t.equal(users.status, 200, 'GET /v1/admin/users is the admin API');
  for (const [method, path] of [
    ['GET', '/v1/models'],
    ['GET', '/v1/files'],
    ['GET', '/v1/responses/resp_123'],
    ['POST', '/v1/batches'],
  ] as const) {
    const n = mock.requests.length;
    await fetch(`${gw.url}${path}`, { method, headers, ...(method === 'POST' ? { body: '{}' } : {}) }).then((r) => r.arrayBuffer());
    t.equal(mock.requests.length, n + 1, `${method} ${path} reached the provider`);
    t.equal(mock.requests.at(-1)!.path, path, `as ${path}`);
  }
});
