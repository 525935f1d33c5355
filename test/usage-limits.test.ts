/**
 * Budgets on live traffic: token and cost budgets from policies and entities, exhaustion and
 * reset, streams charged exactly like plain calls, alerts.
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, startMock, direct, ADMIN_KEY } from './helpers/gateway.js';
import { entityBudgets, period, policyBudgets } from '../plugins/usage-limits/budgets.js';
import { DEFAULT_WORKSPACE_SCOPES } from '../core/auth/scopes.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

t.test('usage limits', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: 'pipeline:\n  - auth\n  - config-strategy\n  - usage-limits: {flush_ms: 10}\n  - admin-policies\n  - admin-api-keys\n  - admin-catalog\n',
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
  });
  async function admin(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<Json> {
    const res = await request(`${gw.url}/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': ADMIN_KEY, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return (await res.body.json()) as Json;
  }
  async function chat(key: string, stream = false, model = 'gpt-4o'): Promise<{ status: number; body: string; headers: Json }> {
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...direct(mock), 'content-type': 'application/json', 'x-gateway-api-key': key },
      body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'spend some tokens' }] }),
    });
    const body = await res.body.text();
    await new Promise((r) => setTimeout(r, 40)); // let the charge flush (flush_ms 10)
    return { status: res.statusCode, body, headers: res.headers as Json };
  }
  const newKey = async (usage_limits: Json | null): Promise<{ id: string; key: string }> =>
    (await admin('POST', '/api-keys/workspace/service', { name: `k${Math.random()}`, scopes: DEFAULT_WORKSPACE_SCOPES, usage_limits })) as { id: string; key: string };

  t.test('a token budget on an API key: exhausted, 429, status, reset', async (t) => {
    const plain = JSON.parse((await chat(ADMIN_KEY)).body) as Json;
    const perCall = plain.usage.total_tokens as number;
    const { id, key } = await newKey({ credit_limit: perCall * 3, type: 'tokens' });
    for (let i = 0; i < 3; i++) t.equal((await chat(key)).status, 200, `call ${i + 1} within budget`);
    const over = await chat(key);
    t.equal(over.status, 429);
    t.equal((JSON.parse(over.body) as Json).error.code, 'usage_limit_exceeded');
    t.equal((await admin('GET', `/api-keys/${id}`)).status, 'exhausted', 'the key is marked exhausted');
    await admin('PUT', `/api-keys/${id}`, { reset_usage: true });
    t.equal((await chat(key)).status, 200, 'a reset starts over');
  });

  t.test('streams are charged exactly like plain calls', async (t) => {
    const a = await newKey({ credit_limit: 1_000_000, type: 'tokens' });
    const b = await newKey({ credit_limit: 1_000_000, type: 'tokens' });
    await chat(a.key, false);
    await chat(b.key, true);
    const spent = (k: { id: string }): number => {
      const rec = gw.store.c.policyUsage.list({ filter: (e) => e.policy_id === `entity:api_key:${k.id}` }).items[0];
      return rec?.current_usage ?? 0;
    };
    t.ok(spent(a) > 0);
    t.equal(spent(b), spent(a), 'stream usage = plain usage');
  });

  t.test('only a request a budget applies to is metered: a stream without one goes upstream as sent', async (t) => {
    const askedForUsage = (): boolean => (JSON.parse(mock.requests.at(-1)!.body.toString()) as Json).stream_options?.include_usage === true;
    const unbudgeted = await newKey(null);
    const budgeted = await newKey({ credit_limit: 1_000_000, type: 'tokens' });
    t.equal((await chat(unbudgeted.key, true)).status, 200);
    t.notOk(askedForUsage(), 'no budget applies: the upstream is not asked for usage');
    t.equal((await chat(budgeted.key, true)).status, 200);
    t.ok(askedForUsage(), 'a budget applies: the upstream is asked for usage');
  });

  t.test('Anthropic-style /v1/messages traffic is charged and capped like chat completions', async (t) => {
    const messages = async (key: string, stream: boolean): Promise<number> => {
      const res = await request(`${gw.url}/v1/messages`, {
        method: 'POST',
        headers: { ...direct(mock), 'content-type': 'application/json', 'x-gateway-api-key': key },
        body: JSON.stringify({ model: 'gpt-4o', max_tokens: 50, stream, messages: [{ role: 'user', content: 'spend some tokens' }] }),
      });
      await res.body.text();
      await new Promise((r) => setTimeout(r, 40));
      return res.statusCode;
    };
    const spent = (k: { id: string }): number =>
      gw.store.c.policyUsage.list({ filter: (e) => e.policy_id === `entity:api_key:${k.id}` }).items[0]?.current_usage ?? 0;
    const a = await newKey({ credit_limit: 1_000_000, type: 'tokens' });
    const b = await newKey({ credit_limit: 1_000_000, type: 'tokens' });
    t.equal(await messages(a.key, false), 200);
    t.equal(await messages(b.key, true), 200);
    t.ok(spent(a) > 0, 'the messages call was charged');
    t.equal(spent(b), spent(a), 'streamed messages are charged like plain ones');
    const capped = await newKey({ credit_limit: spent(a), type: 'tokens' });
    t.equal(await messages(capped.key, true), 200, 'within budget');
    t.equal(await messages(capped.key, false), 429, 'then the budget stops /v1/messages too');
  });

  t.test('a cost budget from a policy, priced with the table, with an alert', async (t) => {
    const { key, id } = await newKey(null as unknown as Json);
    const one = JSON.parse((await chat(ADMIN_KEY)).body) as Json;
    // gpt-4o list price: $2.50/M input, $10/M output.
    const usd = (one.usage.prompt_tokens * 2.5 + one.usage.completion_tokens * 10) / 1e6;
    const policy = await admin('POST', '/policies/usage-limits', {
      conditions: [{ key: 'api_key', value: id }],
      group_by: [{ key: 'api_key' }],
      type: 'cost',
      credit_limit: usd * 2.5,
      alert_threshold: usd * 1.5,
    });
    t.equal((await chat(key)).status, 200);
    t.equal((await chat(key)).status, 200);
    const alerts = await admin('GET', '/admin/usage-alerts');
    t.ok(alerts.data.some((a: Json) => a.kind === 'threshold' && a.budget === policy.id), 'crossing the threshold recorded an alert');
    t.equal((await chat(key)).status, 200, 'the third call starts under the limit');
    t.equal((await chat(key)).status, 429, 'then the budget is used up');
    const entities = await admin('GET', `/policies/usage-limits/${policy.id}/entities`);
    t.equal(entities.data[0].status, 'exhausted');
    t.ok(Math.abs(entities.data[0].current_usage - usd * 3) < usd * 0.01, 'charged the priced cost');
    await admin('PUT', `/policies/usage-limits/${policy.id}/entities/${encodeURIComponent(entities.data[0].id)}/reset`);
    t.equal((await chat(key)).status, 200, 'an entity reset starts over');
  });

  t.test('periods', async (t) => {
    t.same(period('monthly', new Date('2026-11-21T07:00:00Z')), { id: '2026-11', next: Date.UTC(2026, 11, 1) });
    t.same(period('weekly', new Date('2026-11-21T07:00:00Z')), { id: 'w2026-11-16', next: Date.UTC(2026, 10, 23) }, 'weeks start on Monday');
    t.same(period(null, new Date()), { id: 'all', next: null });
  });

  t.test('a periodic policy budget starts a fresh counter each period', async (t) => {
    const now = new Date('2026-11-21T07:00:00Z');
    const base = { id: 'p1', name: null, conditions: [], group_by: [{ key: 'api_key' }], type: 'tokens' as const, credit_limit: 10, alert_threshold: null, next_usage_reset_at: null, last_reset_at: null, status: 'active' as const, workspace_id: 'ws', organisation_id: 'o', created_at: '', last_updated_at: '' };
    const fakeCtx = { get: () => ({ key_id: 'k1' }), headers: {}, metadata: {}, body: {}, plan: undefined } as unknown as Parameters<typeof policyBudgets>[1];
    const monthly = policyBudgets([{ ...base, periodic_reset: 'monthly' }], fakeCtx, { id: 'ws', slug: 'default' }, now);
    const cumulative = policyBudgets([{ ...base, periodic_reset: null }], fakeCtx, { id: 'ws', slug: 'default' }, now);
    t.equal(monthly[0]?.counterId, 'p1:api_key:k1@2026-11');
    t.equal(cumulative[0]?.counterId, 'p1:api_key:k1');
    t.not(policyBudgets([{ ...base, periodic_reset: 'monthly' }], fakeCtx, { id: 'ws', slug: 'default' }, new Date('2026-12-01T00:00:01Z'))[0]?.counterId, monthly[0]?.counterId, 'next month: another counter');
  });

  t.test("an entity budget takes the date only when the entity has a limit, and its period from it", async (t) => {
    type Store = Parameters<typeof entityBudgets>[0];
    const storeWith = (usage_limits: unknown): Store =>
      ({
        c: {
          apiKeys: { cached: (id: string) => (id === 'k1' ? { id: 'k1', usage_limits, last_reset_at: null, workspace_id: 'ws' } : undefined) },
          virtualKeys: { cachedBy: () => undefined },
          workspaces: { cached: () => undefined },
          providers: { cachedBy: () => undefined },
        },
      }) as unknown as Store;
    const fakeCtx = { get: () => ({ key_id: 'k1' }), headers: {}, metadata: {}, body: {}, plan: undefined } as unknown as Parameters<typeof entityBudgets>[1];
    let asked = 0;
    const now = (): Date => {
      asked++;
      return new Date('2026-11-21T07:00:00Z');
    };
    t.same(entityBudgets(storeWith(null), fakeCtx, { id: 'ws', slug: 'default' }, now), [], 'no limit: no budget');
    t.equal(asked, 0, 'and no date');
    const [monthly] = entityBudgets(storeWith({ credit_limit: 5, type: 'cost', periodic_reset: 'monthly' }), fakeCtx, { id: 'ws', slug: 'default' }, now);
    t.equal(monthly?.counterId, 'entity:api_key:k1@start@2026-11', "the key's monthly counter");
    t.equal(monthly?.resetsAt, Date.UTC(2026, 11, 1));
    t.equal(asked, 1, 'the date, once');
  });
});
