/**
 * The control plane replicated through PostgreSQL, with three real `gateway start` processes (own
 * ports, own data dirs) on one PostgreSQL and one Valkey: a key, a workspace, a config and a
 * virtual key written through one host work on the others at once; a revocation reaches another
 * host within a second; a unique slug written concurrently on two hosts is taken once; the audit
 * record of a write on one host is listed through another.
 */
import t from 'tap';
import { needServices } from './helpers/services.js';
import { distributedBackends, startHosts, type Host } from './helpers/hosts.js';
import { ADMIN_KEY, startMock } from './helpers/gateway.js';
import { call, chat, codeOf, sleep, toMock } from './helpers/control-plane.js';
import { Scopes } from '../core/index.js';

const PIPELINE = 'pipeline: [logging, auth, virtual-keys, config-strategy, admin-org, admin-api-keys, admin-resources, admin-catalog]\n';

t.test('records written through one host hold on every host', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const mock = await startMock(t);
  const [a, b, c] = (await startHosts(t, 3, { backends, yaml: PIPELINE })) as [Host, Host, Host];

  await t.test('an admin key and a workspace key created through A work on B at once', async (t) => {
    const org = await call(a, 'POST', '/v1/api-keys/organisation/service', { name: 'ops', scopes: [...Scopes.DEFAULT_ORGANISATION_SCOPES] });
    t.equal(org.status, 200);
    const orgKey = org.body.key as string;
    // No wait: B may not have had the change notice yet; a miss catches up before it answers.
    const onB = await call(b, 'GET', '/v1/api-keys', undefined, orgKey);
    t.equal(onB.status, 200, 'the new admin key authenticates on B');
    t.equal((await chat(c, orgKey, toMock(mock.url))).status, 200, 'and calls models through C');

    const ws = await call(a, 'POST', '/v1/admin/workspaces', { name: 'Team A', slug: 'team-a' });
    t.equal(ws.status, 200);
    const wsKey = await call(a, 'POST', '/v1/api-keys/workspace/service', { name: 'svc', workspace_id: 'team-a', scopes: [...Scopes.DEFAULT_WORKSPACE_SCOPES] });
    t.equal(wsKey.status, 200);
    const onB2 = await chat(b, wsKey.body.key as string, toMock(mock.url));
    t.equal(onB2.status, 200, 'the workspace key works on B at once');
    const seen = await call(b, 'GET', `/v1/admin/workspaces/${ws.body.id as string}`);
    t.equal(seen.body.slug, 'team-a', 'the workspace is on B');
  });

  await t.test('a key revoked on B is refused on C within a second', async (t) => {
    const created = await call(a, 'POST', '/v1/api-keys/organisation/service', { name: 'short-lived', scopes: [...Scopes.DEFAULT_ORGANISATION_SCOPES] });
    const key = created.body.key as string;
    t.equal((await chat(c, key, toMock(mock.url))).status, 200, 'C knows the key');
    const revoked = await call(b, 'DELETE', `/v1/api-keys/${created.body.id as string}`);
    t.equal(revoked.status, 200);
    const start = performance.now();
    let refused: number | undefined;
    while (performance.now() - start < 3000) {
      const res = await chat(c, key, toMock(mock.url));
      if (res.status === 401) {
        t.equal(codeOf(res), 'invalid_api_key');
        refused = performance.now() - start;
        break;
      }
      await sleep(10);
    }
    t.ok(refused !== undefined, 'C refuses the revoked key');
    t.ok(refused! < 1000, `refused on C ${refused?.toFixed(1)} ms after B answered the revocation`);
    t.comment(`revocation on B refused on C after ${refused?.toFixed(1)} ms`);
    t.equal((await chat(a, key, toMock(mock.url))).status, 401, 'and on A');
  });

  await t.test('a config saved on A routes traffic on C; a virtual key with a sealed provider key made on A works on C', async (t) => {
    const config = { targets: [{ provider: 'openai', custom_host: `${mock.url}/v1`, api_key: 'sk-saved-config-0123' }] };
    const saved = await call(a, 'POST', '/v1/configs', { name: 'primary', config });
    t.equal(saved.status, 200);
    const routed = await chat(c, ADMIN_KEY, { 'x-gateway-config': saved.body.slug as string });
    t.equal(routed.status, 200, 'the saved config routes on C at once');
    t.equal(mock.requests.at(-1)!.headers.authorization, 'Bearer sk-saved-config-0123');

    const vk = await call(a, 'POST', '/v1/virtual-keys', { name: 'main', slug: 'main-vk', provider: 'openai', key: 'sk-vk-SECRET-0123456789', custom_host: `${mock.url}/v1` });
    t.equal(vk.status, 200);
    const viaVk = await chat(c, ADMIN_KEY, { 'x-gateway-virtual-key': 'main-vk' });
    t.equal(viaVk.status, 200, 'the virtual key routes on C at once');
    t.equal(mock.requests.at(-1)!.headers.authorization, 'Bearer sk-vk-SECRET-0123456789', 'C opened the secret sealed on A');
    const unknown = await chat(b, ADMIN_KEY, { 'x-gateway-virtual-key': 'no-such-vk' });
    t.equal(codeOf(unknown), 'invalid_virtual_key', 'an unknown slug is still refused after the catch-up');
  });

  await t.test('the same slug created at once on two hosts: one success, one 409', async (t) => {
    for (let round = 0; round < 5; round++) {
      const slug = `race-${round}`;
      const answers = await Promise.all([a, b].map((h) => call(h, 'POST', '/v1/admin/workspaces', { name: `Race ${round}`, slug })));
      t.same(answers.map((r) => r.status).sort(), [200, 409], `round ${round}: exactly one host created ${slug}`);
      const lost = answers.find((r) => r.status === 409)!;
      t.equal(codeOf(lost), 'conflict');
    }
    const list = await call(c, 'GET', '/v1/admin/workspaces?page_size=100');
    const slugs = (list.body.data as Array<{ slug: string }>).map((w) => w.slug).filter((s) => s.startsWith('race-'));
    t.same(slugs.sort(), ['race-0', 'race-1', 'race-2', 'race-3', 'race-4'], 'C has each workspace once');
  });

  await t.test('the audit record of a write on A is listed through C', async (t) => {
    const res = await call(a, 'POST', '/v1/admin/workspaces', { name: 'Audited', slug: 'audited' });
    t.equal(res.status, 200);
    const requestId = res.headers.get('x-gateway-request-id')!;
    let found: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 100 && found.length === 0; i++) {
      const list = await call(c, 'GET', `/v1/audit-logs?request_id=${requestId}`);
      found = list.body.data as Array<Record<string, unknown>>;
      if (found.length === 0) await sleep(10);
    }
    t.equal(found.length, 1, 'C lists the record');
    t.match(found[0], { request_id: requestId, method: 'POST', resource_type: 'workspace', action: 'create', response_status_code: 200 });
    // A refused write is audited too, and replicated with its scope.
    const refused = await call(a, 'POST', '/v1/admin/workspaces', { name: 'Audited again', slug: 'audited' });
    t.equal(refused.status, 409);
    const refusedId = refused.headers.get('x-gateway-request-id')!;
    let again: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 100 && again.length === 0; i++) {
      again = (await call(b, 'GET', `/v1/audit-logs?request_id=${refusedId}`)).body.data as Array<Record<string, unknown>>;
      if (again.length === 0) await sleep(10);
    }
    t.match(again, [{ response_status_code: 409 }], 'the record of the refused call is on B');
  });
});
