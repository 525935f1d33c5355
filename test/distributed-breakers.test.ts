/**
 * Circuit breakers shared across hosts in distributed mode: three real gateway processes on one
 * PostgreSQL and one Valkey, a fallback config whose first target always fails (the mock answers
 * 5xx). A circuit opened by failures on host A is open on B and C; failures spread over the hosts
 * add up; an operator's reset on one host closes the circuit on all; with Valkey stopped each host
 * keeps its own breakers and counts the faults.
 */
import t from 'tap';
import { request } from 'undici';
import { needServices } from './helpers/services.js';
import { distributedBackends, startHosts, type Host } from './helpers/hosts.js';
import { ADMIN_KEY, startMock, type MockUpstream } from './helpers/gateway.js';
import { applyRemote, available, begin, record, resetBreakers, shareBreakers, snapshot, type BreakerSettings, type BreakerSync } from '../core/router/breaker.js';

/** See test/distributed-cache.test.ts: false once the control plane is replicated through PostgreSQL. */
const SHARED_DATA_DIR = false;

const BREAKER = '{failure_threshold: 3, failure_rate: 1, min_requests: 1000, window_ms: 60000, cooldown_ms: 60000}';

interface BreakerRow {
  key: string;
  state: string;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A fallback config: the failing target first (the mock answers `status`), the healthy one second. */
function fallback(mock: MockUpstream, status: number): string {
  return JSON.stringify({
    strategy: { mode: 'fallback' },
    targets: [
      { provider: 'openai', api_key: 'sk', custom_host: `${mock.url}/mock/status=${status}/v1` },
      { provider: 'openai', api_key: 'sk', custom_host: `${mock.url}/v1` },
    ],
  });
}

async function chat(host: Host, config: string): Promise<number> {
  const res = await request(`${host.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-config': config },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
  });
  await res.body.dump();
  return res.statusCode;
}

/** The state of the breaker of the target answering `status`, as host `host` shows it to operators. */
async function stateOn(host: Host, status: number): Promise<string> {
  const res = await request(`${host.url}/v1/admin/routing/breakers`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
  const body = (await res.body.json()) as { data: BreakerRow[] };
  return body.data.find((b) => b.key.includes(`/mock/status=${status}/`))?.state ?? 'closed';
}

/** Polls until every host shows `state` (messages travel through Valkey: milliseconds, not a request). */
async function seenOn(hosts: Host[], status: number, state: string, timeoutMs = 2000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const states = await Promise.all(hosts.map((h) => stateOn(h, status)));
    if (states.every((s) => s === state) || Date.now() > deadline) return states;
    await sleep(20);
  }
}

async function faults(host: Host, kind: string): Promise<number> {
  const res = await request(`${host.url}/metrics`);
  const text = await res.body.text();
  const m = new RegExp(`^gateway_shared_state_faults_total\\{kind="${kind}"\\} (\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

t.test('unit: what a host tells the sync, and what it takes from other hosts', async (t) => {
  resetBreakers();
  const settings: BreakerSettings = { failure_threshold: 2, failure_rate: 1, min_requests: 1000, window_ms: 1000, cooldown_ms: 500 };
  const told: string[] = [];
  const undo = shareBreakers({
    opened: (key, _label, at) => void told.push(`opened ${key} ${at}`),
    closed: (key) => void told.push(`closed ${key}`),
    failed: (key, _label, at) => void told.push(`failed ${key} ${at}`),
    reset: () => void told.push('reset'),
  } satisfies BreakerSync);
  t.teardown(undo);
  t.equal(record('k', 'l', false, settings, 1), undefined);
  t.same(told, [], 'a success costs no message');
  record('k', 'l', true, settings, 2);
  t.same(told, ['failed k 2'], 'a failure while closed is told');
  record('k', 'l', true, settings, 3);
  t.same(told.slice(1), ['opened k 3'], 'the opening is told (not as a failure)');
  begin('k', 'l', settings, 503);
  record('k', 'l', false, settings, 510);
  t.same(told.slice(2), ['closed k'], 'the probe closing it is told');

  t.equal(applyRemote('r', 'l', 'open', 1000), true, 'another host opened it: open here');
  t.equal(available('r', settings, 1499), false);
  t.equal(available('r', settings, 1500), true, 'the cooldown counts from the other host\'s opening');
  t.equal(applyRemote('r', 'l', 'open', 900), false, 'an older opening changes nothing');
  begin('r', 'l', settings, 1500);
  t.equal(applyRemote('r', 'l', 'closed', 0), false, 'a probe in flight here decides by itself');
  t.equal(record('r', 'l', true, settings, 1600), 'open');
  t.equal(applyRemote('r', 'l', 'closed', 0), true, 'another host closed it: closed here');
  t.equal(snapshot().find((b) => b.key === 'r')?.state, 'closed');
  t.same(told.slice(3), ['opened r 1600'], "this host's failed probe is told; what came from other hosts never is");
  resetBreakers();
  t.same(told.slice(4), ['reset'], 'an operator reset goes to every host');
  undo();
  record('k', 'l', true, settings, 5000);
  t.equal(told.length, 5, 'once undone, nothing is told');
});

t.test('circuit breakers are shared by every host', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const mock = await startMock(t);
  const yaml = `pipeline:\n  - metrics\n  - auth\n  - config-strategy: {circuit_breaker: ${BREAKER}}\n`;
  const hosts = await startHosts(t, 3, { backends, sharedDataDir: SHARED_DATA_DIR, yaml });
  const [a, b, c] = hosts as [Host, Host, Host];
  /**
   * Upstream calls a request made: 2 when the failing target was tried before the fallback, 1
   * when its open circuit was skipped (the mock records paths without the directive prefix).
   */
  const callsOf = async (host: Host, config: string): Promise<number> => {
    const before = mock.requests.length;
    t.equal(await chat(host, config), 200, 'the fallback answers');
    return mock.requests.length - before;
  };

  t.test('a circuit opened by failures on A is open on B and C', async (t) => {
    const config = fallback(mock, 500);
    for (let i = 0; i < 3; i++) t.equal(await callsOf(a, config), 2, 'A tries the failing target, then the fallback');
    t.same(await seenOn(hosts, 500, 'open'), ['open', 'open', 'open'], 'open on every host');
    t.equal(await callsOf(b, config), 1, 'B skips the open target without calling it');
    t.equal(await callsOf(c, config), 1, 'so does C');
  });

  t.test('failures spread over the hosts add up', async (t) => {
    const config = fallback(mock, 503);
    t.equal(await callsOf(a, config), 2);
    t.equal(await callsOf(b, config), 2);
    t.same(await seenOn(hosts, 503, 'closed', 0), ['closed', 'closed', 'closed'], 'two failures in all: closed');
    t.equal(await callsOf(c, config), 2);
    t.same(await seenOn(hosts, 503, 'open'), ['open', 'open', 'open'], 'the third, on another host, opens it everywhere');
    for (const h of hosts) t.equal(await callsOf(h, config), 1, 'no host calls it again');
  });

  t.test("an operator's reset on one host closes the circuit on every host", async (t) => {
    const res = await request(`${b.url}/v1/admin/routing/breakers/reset`, { method: 'POST', headers: { 'x-gateway-api-key': ADMIN_KEY } });
    t.equal(res.statusCode, 200);
    await res.body.dump();
    t.same(await seenOn(hosts, 500, 'closed'), ['closed', 'closed', 'closed']);
    t.equal(await callsOf(a, fallback(mock, 500)), 2, 'A tries the target again');
  });

  t.test('with Valkey stopped each host keeps its own breakers, and they are shared again when it is back', async (t) => {
    const redis = await svc.redis();
    await redis.stop();
    const config = fallback(mock, 502);
    for (let i = 0; i < 3; i++) t.equal(await callsOf(a, config), 2, 'served without Valkey');
    t.equal(await stateOn(a, 502), 'open', "A's own failures opened its breaker");
    t.equal(await callsOf(a, config), 1, 'and A skips the target');
    t.equal(await stateOn(b, 502), 'closed', 'B never heard of it: per-process state');
    t.ok((await faults(a, 'breaker')) > 0, 'the faults are counted');

    await redis.start();
    t.same(await seenOn(hosts, 502, 'open', 10_000), ['open', 'open', 'open'], 'once Valkey is back, the circuit A opened alone reaches the other hosts');
    // The hosts reconnect by themselves (within about a second). Until then a circuit opens on C
    // alone; each round uses a fresh failing target, until one opened on C is open everywhere.
    let states: string[] = [];
    for (let status = 520; status < 540; status++) {
      const config = fallback(mock, status);
      for (let i = 0; i < 3; i++) await chat(c, config);
      states = await seenOn(hosts, status, 'open', 500);
      if (states.every((s) => s === 'open')) break;
    }
    t.same(states, ['open', 'open', 'open'], 'a circuit opened on C after the restart is open everywhere, without restarting a host');
  });
});
