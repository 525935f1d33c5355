/**
 * The `rate-limit` plugin end to end (raw HTTP and the official SDK against the mock): policies
 * with conditions and group_by, entity limits on API keys and virtual keys, token limits with
 * reservation and reconciliation, pass-through, two processes sharing one limit; and the counters
 * machinery as plain functions, with a micro-benchmark of one check.
 */
import t from 'tap';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import OpenAI from 'openai';
import { startGateway, startMock, direct, sdk, tempDir, writeFile, insertKey, addWorkspace, ADMIN_KEY, type MockUpstream, type StartedGateway, type Teardown } from './helpers/gateway.js';
import { startCli } from './helpers/process.js';
import { counterStats, openCounters, Scopes, type GatewayContext, type PluginDefinition } from '../core/index.js';
import { formatDuration } from '../plugins/rate-limit/units.js';
import { outputAllowance } from '../core/usage/estimate.js';

const PIPELINE = 'pipeline: [auth, virtual-keys, config-strategy, rate-limit, admin-policies, admin-api-keys]\n';
const CHAT = { model: 'gpt-4o', messages: [{ role: 'user', content: 'count me' }] };

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

interface Started {
  gw: StartedGateway;
  mock: MockUpstream;
  /** An admin call that must succeed; its body. */
  admin(method: 'POST' | 'PUT', path: string, body: unknown): Promise<Record<string, unknown>>;
  /** A model or pass-through call, direct mode to the mock unless `headers` say otherwise. */
  call(options?: { key?: string; headers?: Record<string, string>; body?: unknown; path?: string; method?: 'GET' | 'POST'; directives?: string; direct?: boolean }): Promise<Answer>;
}

async function send(url: string, options: { method: string; headers: Record<string, string>; body?: unknown }): Promise<Answer> {
  const res = await request(url, {
    method: options.method as 'GET',
    headers: { ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.body.text();
  let body: Answer['body'] = {};
  try {
    body = JSON.parse(text) as Answer['body'];
  } catch {
    /* compared by status */
  }
  return { status: res.statusCode, headers: res.headers, body };
}

function clients(base: string, mock: MockUpstream): Pick<Started, 'admin' | 'call'> {
  return {
    async admin(method, path, body) {
      const a = await send(`${base}${path}`, { method, headers: { 'x-gateway-api-key': ADMIN_KEY }, body });
      if (a.status !== 200) throw new Error(`${method} ${path} → ${a.status} ${JSON.stringify(a.body)}`);
      return a.body;
    },
    call({ key = ADMIN_KEY, headers = {}, body = CHAT, path = '/v1/chat/completions', method = 'POST', directives = '', direct: useDirect = true } = {}) {
      const h = { 'x-gateway-api-key': key, ...(useDirect ? direct(mock, directives) : {}), ...headers };
      return send(`${base}${path}`, { method, headers: h, body: method === 'GET' ? undefined : body });
    },
  };
}

async function start(t: Teardown, options: { yaml?: string; plugins?: Record<string, PluginDefinition<never>> } = {}): Promise<Started> {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: options.yaml ?? PIPELINE, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY }, plugins: options.plugins });
  return { gw, mock, ...clients(gw.url, mock) };
}

const policy = (fields: Record<string, unknown>): Record<string, unknown> => ({
  conditions: [{ key: 'workspace_id', value: 'default' }],
  group_by: [{ key: 'api_key' }],
  type: 'requests',
  unit: 'rpm',
  ...fields,
});

const statuses = (answers: Answer[]): number[] => answers.map((a) => a.status);
const chatCalls = (mock: MockUpstream): number => mock.requests.filter((r) => r.path.endsWith('/chat/completions')).length;

t.test('nothing applies: no counters transaction, no counters file', async (t) => {
  const { gw, admin, call } = await start(t);
  // A policy that never matches these requests must cost nothing either.
  await admin('POST', '/v1/policies/rate-limits', policy({ conditions: [{ key: 'metadata.tier', value: 'free' }], value: 1 }));
  const before = counterStats.transactions;
  const answers = await Promise.all(Array.from({ length: 20 }, () => call()));
  t.same(new Set(statuses(answers)), new Set([200]));
  t.equal(counterStats.transactions, before, 'no transaction ran');
  t.notOk(answers[0]!.headers['x-ratelimit-limit-requests'], 'no rate-limit headers without a limit');
  t.notOk(existsSync(join(dirname(gw.store.path), 'counters.mdb')), 'the counters env was never opened');

  const limited = await call({ headers: { 'x-gateway-metadata': '{"tier":"free"}' } });
  t.equal(limited.status, 200);
  t.equal(counterStats.transactions, before + 1, 'a limited request costs exactly one transaction');
  t.ok(existsSync(join(dirname(gw.store.path), 'counters.mdb')), 'opened at the first limited request');
});

t.test('a requests limit holds at exactly its value, with headers, code and the SDK error', async (t) => {
  const { mock, admin, call, gw } = await start(t);
  await admin('POST', '/v1/policies/rate-limits', policy({ value: 5 }));

  const passed: Answer[] = [];
  for (let i = 0; i < 5; i++) passed.push(await call());
  t.same(statuses(passed), [200, 200, 200, 200, 200]);
  t.match(passed[0]!.headers, { 'x-ratelimit-limit-requests': '5', 'x-ratelimit-remaining-requests': '4', 'x-ratelimit-reset-requests': /^1[12](\.\d+)?s$/ });
  t.match(passed[4]!.headers, { 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': /^(59(\.\d+)?s|1m0s)$/ });

  const sixth = await call();
  t.equal(sixth.status, 429);
  t.match(sixth.body, { error: { code: 'rate_limit_exceeded', type: 'rate_limit_error', message: /5 requests per minute/ } });
  const retry = Number(sixth.headers['retry-after']);
  t.ok(retry >= 11 && retry <= 12, `retry-after ${retry} s: one refill of 12 s, rounded up`);
  t.match(sixth.headers, { 'x-ratelimit-limit-requests': '5', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': /s$/ });
  t.equal(chatCalls(mock), 5, 'the refused request never reached the upstream');

  const client = sdk(gw, mock, '', { 'x-gateway-api-key': ADMIN_KEY });
  const err = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
  t.ok(err instanceof OpenAI.RateLimitError, 'the SDK raises RateLimitError');
  t.equal((err as InstanceType<typeof OpenAI.RateLimitError>).code, 'rate_limit_exceeded');
});

t.test('a tokens limit: the reservation decides at exactly the value, the real usage reconciles', async (t) => {
  const { admin, call } = await start(t);
  const body = { ...CHAT, max_tokens: 300 };
  const { id } = await admin('POST', '/v1/policies/rate-limits', policy({ conditions: [{ key: 'workspace_id', value: '*' }], group_by: [{ key: 'metadata.run' }], type: 'tokens', value: 100_000 }));
  const run = (name: string, directives = ''): Promise<Answer> => call({ body, directives, headers: { 'x-gateway-metadata': JSON.stringify({ run: name }) } });

  // One request measures the reservation: the prompt estimate plus max_tokens.
  const probe = await run('probe');
  t.equal(probe.status, 200);
  const reserved = 100_000 - Number(probe.headers['x-ratelimit-remaining-tokens']);
  t.ok(reserved > 300 && reserved < 400, `reserved ${reserved} tokens: prompt + max_tokens 300`);
  t.equal(probe.headers['x-ratelimit-limit-tokens'], '100000');

  // A limit of exactly three reservations; four concurrent calls (slow upstream, so no response
  // reconciles in between): exactly three pass.
  await admin('PUT', `/v1/policies/rate-limits/${id as string}`, { value: 3 * reserved });
  const burst = await Promise.all(Array.from({ length: 4 }, () => run('exact', 'delay=800')));
  t.same(statuses(burst).sort(), [200, 200, 200, 429]);
  const refused = burst.find((a) => a.status === 429)!;
  t.match(refused.body, { error: { code: 'rate_limit_exceeded', message: /tokens per minute/ } });
  t.equal(refused.headers['x-ratelimit-limit-tokens'], String(3 * reserved));
  t.ok(Number(refused.headers['retry-after']) >= 1, 'retry-after set');

  // The answers used far fewer tokens than reserved: once reconciled, the budget is back.
  await new Promise((r) => setTimeout(r, 150));
  const after = await run('exact');
  t.equal(after.status, 200, 'passes because the real usage replaced the reservations');
  const remaining = Number(after.headers['x-ratelimit-remaining-tokens']);
  t.ok(remaining > reserved, `remaining ${remaining} after a fourth reservation`);
});

t.test('token limits reconcile with no other plugin metering usage: real answers use the limit up, JSON and streamed', async (t) => {
  // The pipeline has no logging, no usage-limits, no analytics: rate-limit turns metering on itself.
  t.notMatch(PIPELINE, /logging|usage-limits|analytics|metrics|otel/);
  const { admin, call } = await start(t);
  const { id } = await admin('POST', '/v1/policies/rate-limits', policy({ conditions: [{ key: 'workspace_id', value: '*' }], group_by: [{ key: 'metadata.run' }], type: 'tokens', unit: 'rph', value: 100_000 }));
  const usage = (await call({ body: { ...CHAT, max_tokens: 300 } })).body.usage as { total_tokens: number };
  const real = usage.total_tokens;

  for (const stream of [false, true]) {
    const body = { ...CHAT, max_tokens: 300, stream };
    const run = async (name: string): Promise<Answer> => {
      const answer = await call({ body, headers: { 'x-gateway-metadata': JSON.stringify({ run: name }) } });
      await new Promise((r) => setTimeout(r, 100)); // onDone reconciles once the answer is out
      return answer;
    };
    await admin('PUT', `/v1/policies/rate-limits/${id as string}`, { value: 100_000 });
    const probe = await run(`probe-${stream}`);
    const reserved = 100_000 - Number(probe.headers['x-ratelimit-remaining-tokens']);
    t.ok(reserved > 300 && real < reserved, `${stream ? 'stream' : 'JSON'}: reserves ${reserved}, answers use ${real}`);

    // Room for one reservation plus three real answers (per hour: no refill to speak of).
    const limit = reserved + 3 * real;
    await admin('PUT', `/v1/policies/rate-limits/${id as string}`, { value: limit });
    const answers: Answer[] = [];
    for (let i = 0; i < 5; i++) answers.push(await run(`used-up-${stream}`));
    t.same(statuses(answers), [200, 200, 200, 200, 429], `${stream ? 'stream' : 'JSON'}: four answers use the limit up, the fifth is refused`);
    t.equal(Number(answers[1]!.headers['x-ratelimit-remaining-tokens']), limit - real - reserved, 'the first answer was charged its real usage, not its reservation');
    t.match(answers[4]!.body, { error: { code: 'rate_limit_exceeded', message: /tokens per hour/ } });
  }
});

t.test('only a request a token limit applies to is metered for rate-limit', async (t) => {
  // A probe that reads usage without asking for it: it sees what rate-limit had metered.
  const seen: Array<number | undefined> = [];
  const probe = { name: 'usage-probe', setup: () => ({ onDone: (ctx: GatewayContext) => void (ctx.route.kind === 'model' && seen.push(ctx.usage?.total_tokens)) }) } as PluginDefinition<never>;
  const { admin, call, mock } = await start(t, { yaml: PIPELINE.replace(']', ', usage-probe]'), plugins: { 'usage-probe': probe } });
  await admin('POST', '/v1/policies/rate-limits', policy({ conditions: [{ key: 'metadata.tier', value: 'requests' }], group_by: [{ key: 'metadata.tier' }], value: 1000 }));
  await admin('POST', '/v1/policies/rate-limits', policy({ conditions: [{ key: 'metadata.tier', value: 'tokens' }], group_by: [{ key: 'metadata.tier' }], type: 'tokens', value: 100_000 }));
  const askedForUsage = (): boolean => (JSON.parse(mock.requests.at(-1)!.body.toString()) as { stream_options?: unknown }).stream_options !== undefined;
  const settled = async (n: number): Promise<void> => {
    for (let i = 0; i < 200 && seen.length < n; i++) await new Promise((r) => setTimeout(r, 5));
  };
  const tiers = ['none', 'requests', 'tokens'];
  for (const [i, tier] of tiers.entries()) {
    const headers = { 'x-gateway-metadata': JSON.stringify({ tier }) };
    t.equal((await call({ headers })).status, 200);
    t.equal((await call({ headers, body: { ...CHAT, stream: true } })).status, 200);
    t.equal(askedForUsage(), tier === 'tokens', `${tier}: the stream asked the upstream for usage only under a token limit`);
    await settled(2 * (i + 1));
  }
  const [noneJson, noneStream, reqJson, reqStream, tokJson, tokStream] = seen;
  t.same([noneJson, noneStream, reqJson, reqStream], [undefined, undefined, undefined, undefined], 'no limit, or a requests limit: nothing metered');
  t.ok(tokJson! > 0 && tokStream === tokJson, `a token limit: both metered, alike (${tokJson}, ${tokStream})`);
});

t.test('group_by keys get separate counters', async (t) => {
  const { gw, admin, call } = await start(t);
  const ws = gw.store.meta.get('default_workspace_id') as string;
  const a = insertKey(gw.store, { workspace_id: ws, scopes: Scopes.DEFAULT_WORKSPACE_SCOPES });
  const b = insertKey(gw.store, { workspace_id: ws, scopes: Scopes.DEFAULT_WORKSPACE_SCOPES });
  await admin('POST', '/v1/policies/rate-limits', policy({ value: 3 }));
  const forA: Answer[] = [];
  const forB: Answer[] = [];
  for (let i = 0; i < 4; i++) forA.push(await call({ key: a }));
  for (let i = 0; i < 4; i++) forB.push(await call({ key: b }));
  t.same(statuses(forA), [200, 200, 200, 429], 'key A gets its own 3');
  t.same(statuses(forB), [200, 200, 200, 429], 'key B gets its own 3');
});

t.test('conditions narrow a policy to matching requests', async (t) => {
  const { admin, call } = await start(t);
  await admin('POST', '/v1/policies/rate-limits', policy({ conditions: [{ key: 'metadata.tier', value: 'free' }, { key: 'model', value: '*' }], group_by: [{ key: 'metadata.tier' }], value: 2 }));
  const free = { 'x-gateway-metadata': '{"tier":"free"}' };
  const pro = { 'x-gateway-metadata': '{"tier":"pro"}' };
  const answers: Answer[] = [];
  for (let i = 0; i < 3; i++) answers.push(await call({ headers: free }));
  t.same(statuses(answers), [200, 200, 429], 'free tier: 2 a minute');
  for (let i = 0; i < 4; i++) t.equal((await call({ headers: pro })).status, 200, 'pro tier: not limited');
  const plain = await call();
  t.equal(plain.status, 200, 'no metadata: not limited');
  t.notOk(plain.headers['x-ratelimit-limit-requests']);
});

t.test('entity limits: an API key (rpm and rps) and a virtual key', async (t) => {
  const { admin, call, mock } = await start(t, { yaml: PIPELINE.replace(']', ', admin-resources]') });
  const perMinute = await admin('POST', '/v1/api-keys/workspace/service', { name: 'two a minute', scopes: ['completions.write'], rate_limits: [{ type: 'requests', unit: 'rpm', value: 2 }] });
  const answers: Answer[] = [];
  for (let i = 0; i < 3; i++) answers.push(await call({ key: perMinute.key as string }));
  t.same(statuses(answers), [200, 200, 429]);
  t.match(answers[2]!.body, { error: { code: 'rate_limit_exceeded', message: /API key/ } });
  t.equal(answers[2]!.headers['x-ratelimit-limit-requests'], '2');

  const perSecond = await admin('POST', '/v1/api-keys/workspace/service', { name: 'two a second', scopes: ['completions.write'], rate_limits: [{ type: 'requests', unit: 'rps', value: 2 }] });
  const fast = await Promise.all(Array.from({ length: 3 }, () => call({ key: perSecond.key as string })));
  t.same(statuses(fast).sort(), [200, 200, 429]);
  t.equal(fast.find((a) => a.status === 429)!.headers['retry-after'], '1');
  await new Promise((r) => setTimeout(r, 600));
  t.equal((await call({ key: perSecond.key as string })).status, 200, 'refilled one every 500 ms');

  await admin('POST', '/v1/virtual-keys', { name: 'limited', slug: 'limited', provider: 'openai', key: 'sk-vk-0123456789', custom_host: `${mock.url}/v1`, rate_limits: { type: 'requests', unit: 'rpm', value: 2 } });
  await admin('POST', '/v1/virtual-keys', { name: 'open', slug: 'open', provider: 'openai', key: 'sk-vk-9876543210', custom_host: `${mock.url}/v1` });
  const viaVk: Answer[] = [];
  for (let i = 0; i < 3; i++) viaVk.push(await call({ direct: false, headers: { 'x-gateway-virtual-key': 'limited' } }));
  t.same(statuses(viaVk), [200, 200, 429]);
  t.match(viaVk[2]!.body, { error: { code: 'rate_limit_exceeded', message: /virtual key "limited"/ } });
  for (let i = 0; i < 3; i++) t.equal((await call({ direct: false, headers: { 'x-gateway-virtual-key': 'open' } })).status, 200);

  await admin('POST', '/v1/integrations', { name: 'OpenAI Prod', slug: 'openai-prod', ai_provider_id: 'openai', key: 'sk-int-0123456789', configurations: { custom_host: `${mock.url}/v1` } });
  await admin('POST', '/v1/providers', { name: 'Prod', slug: 'prod', integration_id: 'openai-prod', rate_limits: [{ type: 'requests', unit: 'rpm', value: 1 }] });
  const viaProvider = [await call({ direct: false, body: { ...CHAT, model: '@prod/gpt-4o' } }), await call({ direct: false, body: { ...CHAT, model: '@prod/gpt-4o' } })];
  t.same(statuses(viaProvider), [200, 429]);
  t.match(viaProvider[1]!.body, { error: { code: 'rate_limit_exceeded', message: /provider "prod"/ } });
});

t.test('entity limits: a workspace', async (t) => {
  const { gw, call } = await start(t);
  const ws = addWorkspace(gw.store, 'limited-ws', Scopes.DEFAULT_WORKSPACE_SCOPES);
  gw.store.c.workspaces.update(ws.id, (w) => ({ ...w, rate_limits: [{ type: 'requests', unit: 'rph', value: 2 }] }));
  const answers: Answer[] = [];
  for (let i = 0; i < 3; i++) answers.push(await call({ key: ws.key }));
  t.same(statuses(answers), [200, 200, 429]);
  t.match(answers[2]!.body, { error: { message: /the workspace: 2 requests per hour/ } });
  t.equal((await call()).status, 200, 'another workspace is not affected');
});

t.test('pass-through is limited too', async (t) => {
  const { admin, call } = await start(t);
  await admin('POST', '/v1/policies/rate-limits', policy({ conditions: [{ key: 'provider', value: 'openai' }], value: 2 }));
  const answers: Answer[] = [];
  for (let i = 0; i < 3; i++) answers.push(await call({ method: 'GET', path: '/v1/models' }));
  t.same(statuses(answers), [200, 200, 429]);
  t.equal(answers[0]!.headers['x-ratelimit-remaining-requests'], '1');
  t.match(answers[2]!.body, { error: { code: 'rate_limit_exceeded' } });
  t.equal((await call()).status, 429, 'the same counter covers model routes');
});

t.test('two processes on one data dir share one limit', async (t) => {
  const mock = await startMock(t);
  const dir = tempDir();
  const yaml = writeFile(dir, 'gw.yaml', `server: {host: 127.0.0.1, port: 0}\nstore: {path: ${join(dir, 'data')}}\n${PIPELINE}`);
  const env = { GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_MASTER_KEY: 'm'.repeat(40), GATEWAY_LOG_LEVEL: 'warn' };
  const a = await startCli(t, ['start', '--config', yaml], env);
  const b = await startCli(t, ['start', '--config', yaml], env);
  const viaA = clients(a.url, mock);
  const viaB = clients(b.url, mock);
  await viaA.admin('POST', '/v1/policies/rate-limits', policy({ value: 6 }));
  const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? viaA : viaB).call()));
  t.equal(answers.filter((x) => x.status === 200).length, 6, 'exactly 6 of 10 pass');
  t.equal(answers.filter((x) => x.status === 429).length, 4);
  t.equal(chatCalls(mock), 6);
  const perProcess = [0, 1].map((p) => answers.filter((x, i) => i % 2 === p && x.status === 200).length);
  t.comment(`passed per process: ${perProcess.join(' + ')}`);
  a.child.kill('SIGTERM');
  b.child.kill('SIGTERM');
  t.same(await Promise.all([a.exited, b.exited]), [0, 0], 'both close cleanly');
});

t.test('counters: GCRA takes, all-or-nothing, adjust, sweep', async (t) => {
  const counters = openCounters(tempDir());
  t.teardown(() => counters.close());
  const now = 1_700_000_000_000;
  const five = { key: 'five', cost: 1, emissionMs: 12_000, burst: 5 };

  const takes = Array.from({ length: 5 }, () => counters.take([five], now));
  t.same(takes.map((r) => r.ok && r.states[0]!.remaining), [4, 3, 2, 1, 0], 'a burst of exactly 5');
  const sixth = counters.take([five], now);
  t.match(sixth, { ok: false, failed: 0, retryAfterMs: 12_000 });
  t.match(counters.take([five], now + 11_999), { ok: false }, 'not a ms early');
  t.match(counters.take([five], now + 12_000), { ok: true, states: [{ remaining: 0 }] }, 'one more after one emission interval');
  t.match(counters.take([five], now + 12_000 + 60_000), { ok: true, states: [{ remaining: 4 }] }, 'full again after a minute');

  const one = { key: 'one', cost: 1, emissionMs: 1000, burst: 1 };
  const other = { key: 'other', cost: 1, emissionMs: 1000, burst: 5 };
  t.match(counters.take([other, one], now), { ok: true, states: [{ remaining: 4 }, { remaining: 0 }] });
  t.match(counters.take([other, one], now), { ok: false, failed: 1, states: [{ remaining: 4 }, { remaining: 0 }] });
  t.match(counters.take([other], now), { ok: true, states: [{ remaining: 3 }] }, 'the refused check consumed nothing');

  const tokens = { key: 'tokens', cost: 330, emissionMs: 60, burst: 1000 };
  t.match(counters.take([tokens], now), { ok: true, states: [{ remaining: 670 }] });
  counters.adjust([{ key: 'tokens', delta: 20 - 330, emissionMs: 60 }], now);
  t.match(counters.take([{ ...tokens, cost: 1 }], now), { ok: true, states: [{ remaining: 979 }] }, 'the reservation became the usage');
  counters.adjust([{ key: 'tokens', delta: -5000, emissionMs: 60 }], now);
  t.match(counters.take([{ ...tokens, cost: 1 }], now), { ok: true, states: [{ remaining: 999 }] }, 'a give-back never exceeds full');
  t.match(counters.take([{ ...tokens, cost: 1001 }], now), { ok: false, retryAfterMs: Infinity }, 'a cost above the burst never passes');

  t.equal(counters.sweep(now), 0, 'nothing is full yet');
  t.equal(counters.sweep(now + 86_400_000), 4, 'every cell full a day later is swept');
  t.equal(counters.sweep(now + 86_400_000), 0, 'and gone');
  t.match(counters.take([five], now + 86_400_000), { ok: true, states: [{ remaining: 4 }] }, 'a swept cell reads as full');
});

t.test('counters: micro-benchmark of one check (take of two cells, one transaction)', async (t) => {
  const counters = openCounters(tempDir());
  t.teardown(() => counters.close());
  const cells = [
    { key: 'pol:bench:["k1"]', cost: 1, emissionMs: 0.001, burst: 1e9 },
    { key: 'key:bench:requests:rpm', cost: 1, emissionMs: 0.001, burst: 1e9 },
  ];
  for (let i = 0; i < 2000; i++) counters.take(cells, Date.now());
  const n = 20_000;
  const start = performance.now();
  for (let i = 0; i < n; i++) counters.take(cells, Date.now());
  const micros = ((performance.now() - start) * 1000) / n;
  t.comment(`counters.take (2 cells, 1 transaction): ${micros.toFixed(1)} µs/call over ${n} calls`);
  t.ok(micros < 250, `${micros.toFixed(1)} µs per check: tens of µs, not ms`);
});

t.test('units: reset durations and output allowances', async (t) => {
  t.equal(formatDuration(12_000), '12s');
  t.equal(formatDuration(360_000), '6m0s');
  t.equal(formatDuration(61_500), '1m1.5s');
  t.equal(formatDuration(3_723_000), '1h2m3s');
  t.equal(formatDuration(17.2), '18ms');
  t.equal(formatDuration(0), '0s');
  t.equal(outputAllowance('chat.completions', { max_tokens: 300 }, 1024), 300);
  t.equal(outputAllowance('chat.completions', { max_completion_tokens: 50, n: 3 }, 1024), 150);
  t.equal(outputAllowance('chat.completions', {}, 1024), 1024, 'the configured default');
  t.equal(outputAllowance('responses', { max_output_tokens: 77 }, 1024), 77);
  t.equal(outputAllowance('embeddings', { max_tokens: 5 }, 1024), 0, 'embeddings answer no tokens');
});
