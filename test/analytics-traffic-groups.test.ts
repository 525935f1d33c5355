/**
 * The analytics traffic groups: requests, errors, cost, tokens and last seen per provider
 * (`/groups/providers`), per API key (`/groups/api-keys`) and per workspace (`/groups/workspaces`),
 * over known traffic through `[analytics, auth, admin-catalog]` to the mock: two providers, three
 * keys, two workspaces. Rows add up to the graphs' totals; most requests first, paged; the common
 * filters apply; a workspace key sees its own workspace only, and the names of its own keys only.
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, startMock, ADMIN_KEY, addWorkspace, insertKey, type MockUpstream } from './helpers/gateway.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

t.test('traffic per provider, API key and workspace', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: 'pipeline:\n  - analytics: {flush_ms: 20}\n  - auth\n  - admin-catalog\n',
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
  });
  const store = gw.store;
  const defaultWs = store.meta.get('default_workspace_id') as string;
  const adminKeyId = store.c.apiKeys.list({ filter: (k) => k.workspace_id === null }).items[0]!.id;
  const teamB = addWorkspace(store, 'team-b', ['completions.write', 'analytics.view']);
  const svc = insertKey(store, { workspace_id: defaultWs, scopes: ['completions.write', 'analytics.view'], name: 'default svc' });
  const blind = insertKey(store, { workspace_id: defaultWs, scopes: ['completions.write'], name: 'no analytics' });
  const idOf = (name: string): string => store.c.apiKeys.list({ filter: (k) => k.name === name }).items[0]!.id;
  const teamBKeyId = idOf('team-b key');
  const svcId = idOf('default svc');

  const headers = (m: MockUpstream, provider: string, directives: string): Record<string, string> => ({
    'x-gateway-provider': provider,
    'x-gateway-custom-host': `${m.url}${directives ? `/mock/${directives}` : ''}/v1`,
    authorization: 'Bearer sk-test-provider-key',
    'content-type': 'application/json',
  });
  const start = Date.now();
  let tokens = 0;
  async function chat(key: string, provider = 'openai', directives = '', expect = 200): Promise<void> {
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...headers(mock, provider, directives), 'x-gateway-api-key': key },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'count me by dimension' }] }),
    });
    t.equal(res.statusCode, expect, `traffic: ${provider} ${directives}`);
    const body = (await res.body.json()) as Json;
    if (body.usage) tokens += body.usage.prompt_tokens + body.usage.completion_tokens;
  }
  // Default workspace: 3 + 1 failed openai calls and 2 groq calls with the organisation key, one
  // openai call with a workspace key; team-b: one openai call.
  for (let i = 0; i < 3; i++) await chat(ADMIN_KEY);
  await chat(ADMIN_KEY, 'openai', 'status=500', 500);
  await chat(ADMIN_KEY, 'groq');
  await chat(ADMIN_KEY, 'groq');
  await chat(svc);
  await chat(teamB.key);
  t.ok(tokens > 0, 'the mock reports usage');

  const range = { time_of_generation_min: new Date(start - 60_000).toISOString(), time_of_generation_max: new Date(Date.now() + 60_000).toISOString() };
  async function get(path: string, params: Json = {}, key = ADMIN_KEY): Promise<{ status: number; body: Json }> {
    const qs = new URLSearchParams({ ...range, ...params } as Record<string, string>).toString();
    const res = await request(`${gw.url}/v1/analytics/${path}?${qs}`, { headers: { 'x-gateway-api-key': key } });
    return { status: res.statusCode, body: (await res.body.json()) as Json };
  }
  const group = async (name: string, params: Json = {}, key = ADMIN_KEY): Promise<Json> => {
    const r = await get(`groups/${name}`, params, key);
    if (r.status !== 200) throw new Error(`${name}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const graphTotal = async (name: string): Promise<number> => {
    const r = await get(`graphs/${name}`);
    if (r.status !== 200) throw new Error(`${name}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.summary.total as number;
  };
  const dims = (list: Json, field: string): Array<[string, number]> => list.data.map((r: Json) => [r[field], r.requests]);

  t.test('per provider: counts, and rows that add up to the graphs', async (t) => {
    const list = await group('providers');
    t.equal(list.object, 'list');
    t.equal(list.total, 2);
    t.same(dims(list, 'provider'), [['openai', 6], ['groq', 2]], 'most requests first');
    const [openai, groq] = list.data;
    t.match(openai, { errors: 1, object: 'analytics-group' });
    t.equal(groq.errors, 0);
    t.ok(openai.cost > 0, 'gpt-4o is priced (cents)');
    t.equal(openai.total_tokens, openai.prompt_tokens + openai.completion_tokens);
    const sum = (f: string): number => list.data.reduce((n: number, r: Json) => n + r[f], 0);
    t.equal(sum('requests'), await graphTotal('requests'), 'requests add up to the requests graph');
    t.equal(sum('errors'), await graphTotal('errors'), 'errors to the errors graph');
    t.equal(sum('total_tokens'), tokens, 'tokens to what the mock reported');
    t.equal(sum('total_tokens'), await graphTotal('tokens'));
    t.ok(Math.abs(sum('cost') - await graphTotal('cost')) < 1e-6, 'cost to the cost graph');
    for (const row of list.data) {
      const seen = Date.parse(row.last_seen);
      t.ok(seen >= start - 1000 && seen <= Date.now(), `${row.provider}: last_seen within the traffic`);
    }
  });

  t.test('per API key: ids, and names the caller may see', async (t) => {
    const list = await group('api-keys');
    t.same(
      list.data.map((r: Json) => [r.api_key_id, r.api_key_name, r.requests, r.errors]),
      [
        [adminKeyId, store.c.apiKeys.get(adminKeyId)!.name, 6, 1],
        ...[[svcId, 'default svc'], [teamBKeyId, 'team-b key']].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)).map(([id, name]) => [id, name, 1, 0]),
      ],
      'an organisation key sees every key, with its name; ties by id',
    );
    const mine = await group('api-keys', {}, svc);
    t.same(
      mine.data.map((r: Json) => [r.api_key_id, r.api_key_name, r.requests]),
      [[adminKeyId, null, 6], [svcId, 'default svc', 1]],
      "a workspace key: its workspace's traffic; an organisation key's id but not its name",
    );
    const theirs = await group('api-keys', {}, teamB.key);
    t.same(dims(theirs, 'api_key_id'), [[teamBKeyId, 1]]);
  });

  t.test('per workspace: slugs, and isolation', async (t) => {
    const list = await group('workspaces');
    t.same(list.data.map((r: Json) => [r.workspace_id, r.workspace_slug, r.requests, r.errors]), [[defaultWs, 'default', 7, 1], [teamB.id, 'team-b', 1, 0]]);
    t.same(dims(await group('workspaces', {}, teamB.key), 'workspace_slug'), [['team-b', 1]], 'a workspace key sees its own only');
    t.same(dims(await group('workspaces', { workspace_slug: 'team-b' }), 'workspace_id'), [[teamB.id, 1]], 'an organisation key may name one');
    t.equal((await get('groups/workspaces', { workspace_slug: 'default' }, teamB.key)).status, 403, 'not another one with a workspace key');
  });

  t.test('common parameters: filters, pages, refusals', async (t) => {
    t.same(dims(await group('providers', { api_key_ids: teamBKeyId }), 'provider'), [['openai', 1]], 'api_key_ids');
    t.same(dims(await group('api-keys', { status_code: '500' }), 'api_key_id'), [[adminKeyId, 1]], 'status_code');
    t.same(dims(await group('workspaces', { ai_org_model: 'groq__gpt-4o' }), 'workspace_slug'), [['default', 2]], 'ai_org_model');
    const paged = await group('providers', { page_size: 1, current_page: 1 });
    t.same([paged.total, dims(paged, 'provider')], [2, [['groq', 2]]], 'paged');
    t.equal((await get('groups/providers', { cost_min: '1' })).body.error.code, 'unsupported_filter');
    const denied = await get('groups/api-keys', {}, blind);
    t.equal(denied.status, 403, 'analytics.view is needed');
    t.equal(denied.body.error.code, 'insufficient_scope');
    const res = await request(`${gw.url}/v1/analytics/groups/workspaces`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
    t.equal(res.statusCode, 400, 'the time range is required');
    await res.body.dump();
  });

  t.test('in the OpenAPI document', async (t) => {
    const doc = (await request(`${gw.url}/v1/openapi.json`).then((r) => r.body.json())) as Json;
    for (const name of ['providers', 'api-keys', 'workspaces']) {
      const op = doc.paths[`/v1/analytics/groups/${name}`]?.get;
      t.ok(op, `/groups/${name} is documented`);
      t.equal(op?.['x-required-scope'], 'analytics.view');
      t.ok(op?.parameters.some((p: Json) => p.name === 'time_of_generation_min'), 'with the common parameters');
      t.ok(op?.parameters.some((p: Json) => p.name === 'page_size'), 'paged');
    }
  });
});
