/**
 * The shared cache when Valkey goes away mid-traffic: three real gateway processes keep serving
 * (every lookup is a miss, every store is skipped), the faults are counted in
 * `gateway_shared_state_faults_total{kind="cache"}`, each host logs one warning for the outage,
 * and when Valkey is started again caching resumes, exact and semantic, without restarting a host.
 */
import t from 'tap';
import { request } from 'undici';
import { needServices } from './helpers/services.js';
import { distributedBackends, startHosts, type Host } from './helpers/hosts.js';
import { ADMIN_KEY, startMock, type MockUpstream } from './helpers/gateway.js';

/** See test/distributed-cache.test.ts: false once the control plane is replicated through PostgreSQL. */
const SHARED_DATA_DIR = false;

type Json = Record<string, unknown>;

const chatBody = (content: string): Json => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

function routing(mock: MockUpstream, mode: 'simple' | 'semantic'): string {
  return JSON.stringify({ cache: { mode, max_age: 60 }, targets: [{ provider: 'openai', api_key: 'sk', custom_host: `${mock.url}/v1` }] });
}

async function post(host: Host, body: Json, config: string): Promise<{ status: number; cache: string | undefined }> {
  const res = await request(`${host.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-config': config },
    body: JSON.stringify(body),
  });
  await res.body.dump();
  const cache = res.headers['x-gateway-cache-status'];
  return { status: res.statusCode, cache: typeof cache === 'string' ? cache : undefined };
}

async function cacheFaults(host: Host): Promise<number> {
  const text = await (await request(`${host.url}/metrics`)).body.text();
  const m = /^gateway_shared_state_faults_total\{kind="cache"\} (\d+)/m.exec(text);
  return m ? Number(m[1]) : 0;
}

const warnings = (host: Host): number => host.cli.stderr().split('\n').filter((l) => l.includes('shared state unreachable') && l.includes('"kind":"cache"')).length;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Asks `first` then `second` the same new question until the second answers `status` (or time runs out). */
async function until(first: Host, second: Host, config: string, status: string, tag: string): Promise<string | undefined> {
  const deadline = Date.now() + 15_000;
  let seen: string | undefined;
  for (let n = 0; Date.now() < deadline; n++) {
    const question = `${tag} ${n} of the capital city of France?`;
    await post(first, chatBody(question), config);
    await sleep(200);
    seen = (await post(second, chatBody(config.includes('semantic') ? `${tag} ${n}: capital city of France, of?` : question), config)).cache;
    if (seen === status) return seen;
  }
  return seen;
}

t.test('Valkey stopped mid-traffic: served as misses, counted, and caching resumes when it is back', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const mock = await startMock(t);
  const yaml = [
    'pipeline:',
    '  - metrics',
    '  - auth',
    '  - config-strategy',
    `  - cache: {semantic: {embeddings_url: "${mock.url}/v1/embeddings", model: text-embedding-3-small, threshold: 0.8}}`,
    '',
  ].join('\n');
  const hosts = await startHosts(t, 3, { backends, sharedDataDir: SHARED_DATA_DIR, yaml });
  const [a, b, c] = hosts as [Host, Host, Host];
  const simple = routing(mock, 'simple');
  const semantic = routing(mock, 'semantic');
  const redis = await svc.redis();

  t.equal(await until(a, b, simple, 'HIT', 'before'), 'HIT', 'shared before the outage');
  t.equal(warnings(a) + warnings(b) + warnings(c), 0, 'no warning while Valkey is up');

  // Traffic on every host while Valkey stops under it.
  let stopAt = 0;
  const statuses: number[] = [];
  const traffic = (async () => {
    for (let n = 0; n < 60; n++) {
      const answers = await Promise.all(hosts.map((h, i) => post(h, chatBody(`traffic ${n} ${i}`), simple)));
      for (const r of answers) statuses.push(r.status);
      if (n === 10) stopAt = statuses.length;
      await sleep(10);
    }
  })();
  while (stopAt === 0) await sleep(5);
  await redis.stop();
  await traffic;
  t.ok(statuses.length === 180 && statuses.every((s) => s === 200), 'every request was served while Valkey stopped');

  mock.reset();
  const first = await post(a, chatBody('during the outage'), simple);
  const again = await post(b, chatBody('during the outage'), simple);
  const third = await post(a, chatBody('during the outage'), simple);
  t.same([first.status, again.status, third.status], [200, 200, 200]);
  t.same([first.cache, again.cache, third.cache], ['MISS', 'MISS', 'MISS'], 'every lookup misses, nothing is stored');
  t.equal(mock.requests.length, 3, 'the provider served all three');
  const semanticDown = await post(c, chatBody('what is the tallest mountain on earth?'), semantic);
  t.equal(semanticDown.status, 200);
  t.equal(semanticDown.cache, 'SEMANTIC MISS');
  for (const h of hosts) t.ok((await cacheFaults(h)) > 0, `${h.url} counted faults`);
  for (const h of hosts) t.equal(warnings(h), 1, `${h.url} logged one warning for the outage`);

  await redis.start();
  t.equal(await until(b, c, simple, 'HIT', 'after'), 'HIT', 'exact entries are shared again, no host restarted');
  t.equal(await until(c, a, semantic, 'SEMANTIC HIT', 'semantic after'), 'SEMANTIC HIT', 'and semantic entries too');
  for (const h of hosts) t.equal(warnings(h), 1, `${h.url}: still one warning for the one outage`);
});
