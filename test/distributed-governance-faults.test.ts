/**
 * Valkey stops mid-traffic and starts again: each kind of counter follows its fault mode
 * (store.redis.rate_limits / store.redis.budgets), one warning per outage, a metric counting the
 * faulted requests, and shared counting again once Valkey is back, with no gateway restart. Under
 * `budgets: fail_open`, what a host charged locally during the outage reaches Valkey afterwards.
 */
import t, { type Test } from 'tap';
import { Redis } from 'ioredis';
import { needServices, type RunningService } from './helpers/services.js';
import { distributedBackends, startHosts, type Host } from './helpers/hosts.js';
import { ADMIN_KEY, direct, startMock, type MockUpstream } from './helpers/gateway.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const SHARED_DATA_DIR = false;
const PIPELINE = `
pipeline:
  - metrics
  - auth
  - config-strategy
  - rate-limit
  - usage-limits: {flush_ms: 20}
  - admin-api-keys
`;

async function admin(host: Host, method: string, path: string, body?: unknown): Promise<Json> {
  const res = await fetch(`${host.url}/v1${path}`, {
    method,
    headers: { 'x-gateway-api-key': ADMIN_KEY, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return (await res.json()) as Json;
}

async function chat(host: Host, mock: MockUpstream, key: string): Promise<{ status: number; code?: string; tokens: number }> {
  const res = await fetch(`${host.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...direct(mock), 'content-type': 'application/json', 'x-gateway-api-key': key },
    body: JSON.stringify({ model: 'gpt-4o', max_tokens: 40, messages: [{ role: 'user', content: 'still there?' }] }),
  });
  const json = (await res.json()) as Json;
  return { status: res.status, code: json.error?.code, tokens: json.usage?.total_tokens ?? 0 };
}

async function faults(host: Host): Promise<Record<string, number>> {
  const text = await (await fetch(`${host.url}/metrics`, { headers: { 'x-gateway-api-key': ADMIN_KEY } })).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^gateway_shared_state_faults_total\{kind="(\w+)"\} (\d+)/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const warnings = (h: Host): number => h.cli.stderr().split('\n').filter((l) => l.includes('Valkey unreachable')).length;

interface Setup {
  hosts: Host[];
  redis: Redis;
  valkey: RunningService;
  mock: MockUpstream;
  /** A key with a rate limit only, and one with a budget only. */
  limited: { id: string; key: string };
  budgeted: { id: string; key: string };
}

async function setup(t: Test, yaml: string): Promise<Setup | undefined> {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return undefined;
  const backends = await distributedBackends(svc);
  const valkey = await svc.redis();
  const redis = new Redis(backends.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  redis.on('error', () => undefined);
  t.teardown(() => redis.disconnect());
  const mock = await startMock(t);
  const hosts = await startHosts(t, 2, { backends, yaml, sharedDataDir: SHARED_DATA_DIR });
  const limited = (await admin(hosts[0]!, 'POST', '/api-keys/workspace/service', { name: 'rl', scopes: ['completions.write'], rate_limits: [{ type: 'requests', unit: 'rpd', value: 100_000 }] })) as { id: string; key: string };
  const budgeted = (await admin(hosts[0]!, 'POST', '/api-keys/workspace/service', { name: 'b', scopes: ['completions.write'], usage_limits: { credit_limit: 1_000_000, type: 'tokens' } })) as { id: string; key: string };
  return { hosts, redis, valkey, mock, limited, budgeted };
}

t.test('defaults: rate limits fail open, budgets fail closed, recovery without a restart', async (t) => {
  const s = await setup(t, PIPELINE);
  if (!s) return;
  const { hosts, redis, valkey, mock, limited, budgeted } = s;
  for (const h of hosts) {
    t.equal((await chat(h, mock, limited.key)).status, 200);
    t.equal((await chat(h, mock, budgeted.key)).status, 200);
  }
  await redis.connect();
  t.equal(await redis.exists(`gw:gov:r:key:${limited.id}:requests:rpd`), 1, 'the rate limit counts in Valkey');
  t.equal(await redis.exists(`gw:gov:b:entity:api_key:${budgeted.id}@start@all`), 1, 'the budget counts in Valkey');
  redis.disconnect();

  // Traffic keeps flowing while Valkey stops.
  const seen: Array<{ which: 'limited' | 'budgeted'; status: number; code?: string }> = [];
  let running = true;
  const traffic = (async () => {
    for (let i = 0; running; i++) {
      const h = hosts[i % 2]!;
      const [x, y] = await Promise.all([chat(h, mock, limited.key), chat(h, mock, budgeted.key)]);
      seen.push({ which: 'limited', ...x }, { which: 'budgeted', ...y });
      await sleep(20);
    }
  })();
  await sleep(300);
  await valkey.stop();
  await sleep(1500);
  const outage = seen.length;
  await sleep(1000);
  const during = seen.slice(outage);
  t.ok(during.length > 0, 'traffic during the outage');
  t.ok(during.filter((x) => x.which === 'limited').every((x) => x.status === 200), 'rate-limited traffic is served (fail_open)');
  t.ok(during.filter((x) => x.which === 'budgeted').every((x) => x.status === 503 && x.code === 'shared_state_unavailable'), 'budgeted traffic: 503 shared_state_unavailable (fail_closed)');
  for (const h of hosts) {
    const f = await faults(h);
    t.ok(f.rate_limits! > 0 && f.budgets! > 0, `host ${h.url} counts faults: ${JSON.stringify(f)}`);
    t.equal(warnings(h), 1, 'one warning for the whole outage');
  }

  await valkey.start();
  const back = Date.now();
  for (const h of hosts) await until(`host ${h.url} serving budgeted traffic again`, async () => (await chat(h, mock, budgeted.key)).status === 200);
  t.comment(`both hosts served budgeted traffic again ${Date.now() - back} ms after Valkey started`);
  running = false;
  await traffic;
  // A restarted Valkey starts empty: the last rate-limited request of the traffic loop may have
  // gone out before the host saw Valkey back. One more each, after the recovery, must count there.
  for (const h of hosts) {
    t.equal((await chat(h, mock, budgeted.key)).status, 200, 'served again, no restart');
    t.equal((await chat(h, mock, limited.key)).status, 200, 'rate-limited traffic served after the recovery');
  }
  await redis.connect();
  t.equal(await redis.exists(`gw:gov:r:key:${limited.id}:requests:rpd`), 1, 'the rate limit counts in Valkey again');
  t.equal(await redis.exists(`gw:gov:b:entity:api_key:${budgeted.id}@start@all`), 1, 'the budget counts in Valkey again');
  for (const h of hosts) t.equal(warnings(h), 1, 'still one warning per host');
  t.ok(hosts.every((h) => h.cli.stderr().includes('Valkey reachable again')), 'the recovery is logged');
});

t.test('the opposite modes: rate limits fail closed, budgets fail open and reconcile', async (t) => {
  const s = await setup(t, `store: {redis: {rate_limits: fail_closed, budgets: fail_open}}\n${PIPELINE}`);
  if (!s) return;
  const { hosts, redis, valkey, mock, limited, budgeted } = s;
  t.equal((await chat(hosts[0]!, mock, limited.key)).status, 200);
  const first = await chat(hosts[0]!, mock, budgeted.key);
  t.equal(first.status, 200);
  // The first charge settles in Valkey after the answer: wait for it, or a loaded machine stops
  // Valkey first and the host rightly counts it as charged during the outage.
  const key = `gw:gov:b:entity:api_key:${budgeted.id}@start@all`;
  await redis.connect();
  await until('the first charge settled', async () => Number(await redis.hget(key, 'u')) >= first.tokens, 5000);
  redis.disconnect();
  await valkey.stop();
  let charged = 0;
  for (let i = 0; i < 6; i++) {
    const h = hosts[i % 2]!;
    const x = await chat(h, mock, limited.key);
    t.same([x.status, x.code], [503, 'shared_state_unavailable'], 'rate-limited traffic: 503 (fail_closed)');
    const y = await chat(h, mock, budgeted.key);
    t.equal(y.status, 200, 'budgeted traffic is served (fail_open)');
    charged += y.tokens;
  }
  for (const h of hosts) {
    const f = await faults(h);
    t.ok(f.rate_limits! > 0 && f.budgets! > 0, `faults counted: ${JSON.stringify(f)}`);
    t.equal(warnings(h), 1, 'one warning');
  }
  // Valkey comes back empty (no persistence here): the first call on each host finds it again and
  // pushes what that host charged locally.
  await valkey.start();
  await until('rate-limited traffic served again', async () => (await chat(hosts[0]!, mock, limited.key)).status === 200);
  await until('host 2 back', async () => (await chat(hosts[1]!, mock, limited.key)).status === 200);
  await redis.connect();
  const spent = async (): Promise<number> => Number(await redis.hget(`gw:gov:b:entity:api_key:${budgeted.id}@start@all`, 'u'));
  await until('the local charges pushed', async () => (await spent()) >= charged, 5000).catch(() => undefined);
  t.equal(await spent(), charged, 'what was charged locally during the outage reached the shared budget');
  const after = await chat(hosts[1]!, mock, budgeted.key);
  t.equal(after.status, 200);
  await until('the next call settled', async () => (await spent()) >= charged + after.tokens, 5000).catch(() => undefined);
  t.equal(await spent(), charged + after.tokens, 'and shared counting goes on');
});
