/**
 * Budgets under concurrency, embedded mode: each request reserves its estimate before the call and
 * settles with its real usage after, so a burst of 50 concurrent requests at a budget with room
 * for 10 admits 10, not 50 (tokens and cost budgets), and a failed or cancelled call gives its
 * reservation back.
 *
 * The overshoot bound under test (plugins/usage-limits/local.ts): the final spend of a budget is
 * at most `limit + Σ max(0, real − reserved)` over the requests in flight together.
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, startMock, direct, ADMIN_KEY, type MockUpstream, type StartedGateway, type Teardown } from './helpers/gateway.js';
import { DEFAULT_WORKSPACE_SCOPES } from '../core/auth/scopes.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** max_tokens well above the mock's answer: the estimate is above the real usage, so the cap decides the reservation. */
const BODY = { model: 'gpt-4o', max_tokens: 400, messages: [{ role: 'user', content: 'spend some tokens' }] };
/** The upstream holds every answer this long, so the whole burst is in flight together. */
const SLOW = 'delay=1500';
const BURST = 50;

interface Rig {
  gw: StartedGateway;
  mock: MockUpstream;
  admin(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Json>;
  chat(key: string, directives?: string, signal?: AbortSignal): Promise<{ status: number; body: Json }>;
  newKey(usage_limits: Json | null): Promise<{ id: string; key: string }>;
  /** The settled spend of a budget counter owned by `owner`, once the charges are flushed. */
  spent(owner: string): Promise<number>;
  chatCalls(): number;
}

async function rig(t: Teardown, options = ''): Promise<Rig> {
  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: `pipeline:\n  - auth\n  - config-strategy\n  - usage-limits: {flush_ms: 10${options}}\n  - admin-policies\n  - admin-api-keys\n  - admin-catalog\n`,
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
  });
  async function admin(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Json> {
    const res = await request(`${gw.url}/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': ADMIN_KEY, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = (await res.body.json()) as Json;
    if (res.statusCode !== 200) throw new Error(`${method} ${path} → ${res.statusCode} ${JSON.stringify(json)}`);
    return json;
  }
  return {
    gw,
    mock,
    admin,
    async chat(key, directives = '', signal) {
      const res = await request(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...direct(mock, directives), 'content-type': 'application/json', 'x-gateway-api-key': key },
        body: JSON.stringify(BODY),
        signal,
      });
      const text = await res.body.text();
      return { status: res.statusCode, body: text.startsWith('{') ? (JSON.parse(text) as Json) : {} };
    },
    async newKey(usage_limits) {
      return (await admin('POST', '/api-keys/workspace/service', { name: `k${Math.random()}`, scopes: DEFAULT_WORKSPACE_SCOPES, usage_limits })) as { id: string; key: string };
    },
    async spent(owner) {
      // onDone settles after the client has its answer; flush_ms is 10.
      await new Promise((r) => setTimeout(r, 200));
      return gw.store.c.policyUsage.list({ filter: (e) => e.policy_id === owner }).items.reduce((sum, e) => sum + e.current_usage, 0);
    },
    chatCalls: () => mock.requests.filter((r) => r.path.endsWith('/chat/completions')).length,
  };
}

/** One call's real usage, as the mock reports it (deterministic: the same body, the same usage). */
async function probe(r: Rig): Promise<{ tokens: number; usd: number }> {
  const one = await r.chat(ADMIN_KEY);
  const u = one.body.usage as { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  // gpt-4o list price: $2.50/M input, $10/M output.
  return { tokens: u.total_tokens, usd: (u.prompt_tokens * 2.5 + u.completion_tokens * 10) / 1e6 };
}

async function burst(r: Rig, key: string): Promise<{ admitted: number; refused: Json[] }> {
  const before = r.chatCalls();
  const answers = await Promise.all(Array.from({ length: BURST }, () => r.chat(key, SLOW)));
  const admitted = answers.filter((a) => a.status === 200).length;
  if (r.chatCalls() - before !== admitted) throw new Error(`the upstream saw ${r.chatCalls() - before} calls for ${admitted} admitted`);
  return { admitted, refused: answers.filter((a) => a.status !== 200) };
}

t.test('50 concurrent requests at budgets with room for 10', async (t) => {
  const r = await rig(t);
  const per = await probe(r);
  // The estimate (a quarter of the body's length + max_tokens 400) is above the real usage, so
  // each request reserves the cap: reservation_cap 0.1 × a limit of 10 calls = one call's usage.
  t.ok(Math.ceil(JSON.stringify(BODY).length / 4) + BODY.max_tokens > per.tokens, 'the estimate is above the real usage');

  t.test('a tokens budget on an API key', async (t) => {
    const limit = 10 * per.tokens;
    const { id, key } = await r.newKey({ credit_limit: limit, type: 'tokens' });
    const { admitted, refused } = await burst(r, key);
    t.equal(admitted, 10, 'exactly 10 of 50 admitted');
    t.equal(refused.length, 40);
    t.ok(
      refused.every((a) => a.status === 429 && a.body.error?.code === 'usage_limit_exceeded'),
      'the others are refused with 429 usage_limit_exceeded',
    );
    // Bound: Σ max(0, real − reserved) over the 10 admitted; each reserved exactly its real usage.
    const bound = 10 * Math.max(0, per.tokens - 0.1 * limit);
    const spent = await r.spent(`entity:api_key:${id}`);
    t.equal(spent, 10 * per.tokens, 'the admitted calls were charged their real usage');
    t.ok(spent <= limit + bound, `spent ${spent} ≤ limit ${limit} + bound ${bound}`);
    t.equal((await r.chat(key)).status, 429, 'the budget is used up afterwards');
  });

  t.test('a cost budget from a policy', async (t) => {
    const { id, key } = await r.newKey(null);
    const limit = 10 * per.usd;
    const policy = await r.admin('POST', '/policies/usage-limits', { conditions: [{ key: 'api_key', value: id }], group_by: [{ key: 'api_key' }], type: 'cost', credit_limit: limit });
    const { admitted, refused } = await burst(r, key);
    t.equal(admitted, 10, 'exactly 10 of 50 admitted');
    t.ok(
      refused.every((a) => a.status === 429 && a.body.error?.code === 'usage_limit_exceeded'),
      '40 refused with 429 usage_limit_exceeded',
    );
    const bound = 10 * Math.max(0, per.usd - 0.1 * limit);
    const spent = await r.spent(policy.id as string);
    t.ok(Math.abs(spent - 10 * per.usd) < per.usd * 1e-9, `charged the priced cost of 10 calls (${spent} USD)`);
    t.ok(spent <= limit + bound + per.usd * 1e-9, `spent ${spent} ≤ limit ${limit} + bound ${bound} USD`);
  });

  t.test('a reservation is released when the upstream fails or the client goes away', async (t) => {
    const limit = 10 * per.tokens;
    const { id, key } = await r.newKey({ credit_limit: limit, type: 'tokens' });
    // Ten failing calls hold the whole budget while they run, then give it back.
    const failed = await Promise.all(Array.from({ length: 10 }, () => r.chat(key, `status=500;${SLOW}`)));
    t.same(new Set(failed.map((a) => a.status)), new Set([500]), 'the upstream failed every call');
    // Ten cancelled calls: the client goes away while the upstream holds the answer.
    const controller = new AbortController();
    const cancelled = Array.from({ length: 10 }, () => r.chat(key, SLOW, controller.signal).catch(() => ({ status: 0, body: {} })));
    await new Promise((resolve) => setTimeout(resolve, 500));
    controller.abort();
    t.same(new Set((await Promise.all(cancelled)).map((a) => a.status)), new Set([0]), 'the client cancelled every call');
    await new Promise((resolve) => setTimeout(resolve, 1500)); // the upstream calls end, onDone settles
    const charged = await r.spent(`entity:api_key:${id}`);
    // Had any reservation leaked, fewer than the room left would pass.
    const room = Math.floor((limit - charged) / per.tokens);
    t.ok(room >= 9, `failures charged at most one call's worth (${charged} tokens)`);
    const { admitted } = await burst(r, key);
    t.equal(admitted, room, `the next burst gets the whole room left (${room} calls)`);
  });
});

t.test('a small reservation_cap: the overshoot is what the cap left unreserved, and no more', async (t) => {
  const r = await rig(t, ', reservation_cap: 0.05');
  const per = await probe(r);
  const limit = 10 * per.tokens;
  const { id, key } = await r.newKey({ credit_limit: limit, type: 'tokens' });
  const reserved = 0.05 * limit; // half a call
  const { admitted } = await burst(r, key);
  t.equal(admitted, 20, 'reservations of half a call: 20 fit in a budget of 10 calls');
  const bound = admitted * Math.max(0, per.tokens - reserved);
  const spent = await r.spent(`entity:api_key:${id}`);
  t.equal(spent, 20 * per.tokens);
  t.ok(spent > limit, 'the budget overshoots: the cap under-reserved every call');
  t.ok(spent <= limit + bound, `spent ${spent} ≤ limit ${limit} + bound ${bound}`);
});
