/**
 * Rate limits policies, exactly as the spec gives them, through the auth plugin.
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, ADMIN_KEY } from './helpers/gateway.js';

t.test('rate limits policies', async (t) => {
  const gw = await startGateway(t, { yaml: 'pipeline: [auth, admin-policies]\n', env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const call = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, key = ADMIN_KEY) => {
    const res = await request(`${gw.url}/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.statusCode, body: (await res.body.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  const valid = { name: 'per key', conditions: [{ key: 'workspace_id', value: 'default' }], group_by: [{ key: 'api_key' }], type: 'requests', unit: 'rpm', value: 60 };

  const created = await call('POST', '/policies/rate-limits', valid);
  t.equal(created.status, 200);
  t.match(created.body, { id: /^[0-9a-f-]{36}$/, object: 'policy_rate_limits' });
  const id = created.body.id as string;
  await call('POST', '/policies/rate-limits', { ...valid, type: 'tokens', unit: 'rpd', value: 100000 });

  const got = await call('GET', `/policies/rate-limits/${id}`);
  t.match(got.body, { id, name: 'per key', type: 'requests', unit: 'rpm', value: 60, status: 'active', object: 'policy_rate_limits', conditions: [{ key: 'workspace_id', value: 'default' }], group_by: [{ key: 'api_key' }] });
  t.match(got.body.created_at, /^\d{4}-\d\d-\d\dT/);

  const all = await call('GET', '/policies/rate-limits');
  t.equal(all.body.object, 'list');
  t.equal(all.body.total, 2);
  t.equal((await call('GET', '/policies/rate-limits?type=tokens')).body.total, 1);
  t.equal((await call('GET', '/policies/rate-limits?unit=rpm')).body.data[0].id, id);
  const page = await call('GET', '/policies/rate-limits?page_size=1&current_page=1');
  t.equal(page.body.total, 2);
  t.equal(page.body.data.length, 1);

  t.same((await call('PUT', `/policies/rate-limits/${id}`, { value: 120, unit: 'rph' })).body, {});
  t.match((await call('GET', `/policies/rate-limits/${id}`)).body, { value: 120, unit: 'rph' });

  const tooLong = await call('PUT', `/policies/rate-limits/${id}`, { name: 'x'.repeat(256) });
  t.equal(tooLong.status, 400);
  t.match(tooLong.body.error, { code: 'string_too_long', param: 'name' });
  const badEnum = await call('POST', '/policies/rate-limits', { ...valid, unit: 'rps' });
  t.equal(badEnum.status, 400);
  t.match(badEnum.body.error, { code: 'invalid_value', param: 'unit' });
  const missing = await call('POST', '/policies/rate-limits', { ...valid, group_by: undefined });
  t.match(missing.body.error, { code: 'missing_required_parameter', param: 'group_by' });
  t.equal((await call('PUT', '/policies/rate-limits/0190a0a0-0000-7000-8000-000000000000', { value: 1 })).status, 404);
  t.equal((await call('GET', '/policies/rate-limits/nope')).status, 404);

  t.same((await call('DELETE', `/policies/rate-limits/${id}`)).body, {});
  t.equal((await call('GET', '/policies/rate-limits')).body.total, 1, 'an archived policy leaves the default (active) list');
  const archived = await call('GET', '/policies/rate-limits?status=archived');
  t.equal(archived.body.total, 1);
  t.equal(archived.body.data[0].status, 'archived');

  t.equal((await call('GET', '/policies/rate-limits', undefined, 'gw-wrong')).status, 401);
  const none = await request(`${gw.url}/v1/policies/rate-limits`);
  t.equal(none.statusCode, 401);
  t.equal(((await none.body.json()) as { error: { code: string } }).error.code, 'missing_api_key');
});
