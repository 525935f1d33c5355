/**
 * The shared (Valkey) cache of distributed mode under concurrency, on a real `gateway start`
 * process with PostgreSQL and Valkey: the request right after a MISS is a HIT on the same host
 * (read-your-writes, before the background Valkey write is waited for), and concurrent identical
 * misses on one host make one upstream call whose answer the followers replay (single-flight is
 * per process: two hosts may each make one call), never across workspaces. The log records,
 * read back from PostgreSQL, say which requests waited.
 */
import t from 'tap';
import { request } from 'undici';
import OpenAI from 'openai';
import { needServices } from './helpers/services.js';
import { distributedBackends, startHosts, type Host } from './helpers/hosts.js';
import { ADMIN_KEY, startMock, type MockUpstream } from './helpers/gateway.js';

type Json = Record<string, unknown>;

function routing(mock: MockUpstream, directives: string): string {
  return JSON.stringify({ cache: { mode: 'simple', max_age: 60 }, targets: [{ provider: 'openai', api_key: 'sk', custom_host: `${mock.url}/mock/${directives}/v1` }] });
}

async function call(host: Host, method: 'GET' | 'POST', path: string, body?: Json, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: Json }> {
  const res = await request(`${host.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': ADMIN_KEY, ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as Json };
}

function sdk(host: Host, config: string, run: string, key = ADMIN_KEY): OpenAI {
  return new OpenAI({
    baseURL: `${host.url}/v1`,
    apiKey: 'unused',
    maxRetries: 0,
    timeout: 20_000,
    defaultHeaders: { 'x-gateway-api-key': key, 'x-gateway-config': config, 'x-gateway-metadata': JSON.stringify({ run }) },
  });
}

async function records(host: Host, run: string, count: number): Promise<Json[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await call(host, 'GET', `/v1/logs?page_size=100&metadata=${encodeURIComponent(JSON.stringify({ run }))}`);
    const data = (res.body.data as Json[] | undefined) ?? [];
    if (data.length >= count || Date.now() > deadline) return data;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

t.test('distributed: read-your-writes and single-flight on the shared cache', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const mock = await startMock(t);
  const yaml = ['pipeline:', '  - logging: {flush_ms: 20}', '  - auth', '  - config-strategy', '  - cache', '  - admin-org', '  - admin-api-keys', ''].join('\n');
  const [a, b] = await startHosts(t, 2, { backends, yaml });
  const calls = (): number => mock.requests.filter((r) => r.path.endsWith('/chat/completions')).length;

  t.test('the request right after a MISS is a HIT on the same host', async (t) => {
    mock.reset();
    const client = sdk(a!, routing(mock, 'delay=0'), 'd-ryw');
    for (let i = 0; i < 5; i++) {
      const messages = [{ role: 'user' as const, content: `shared read your writes ${i}` }];
      const first = await client.chat.completions.create({ model: 'gpt-4o-mini', messages }).withResponse();
      const second = await client.chat.completions.create({ model: 'gpt-4o-mini', messages }).withResponse();
      t.equal(first.response.headers.get('x-gateway-cache-status'), 'MISS');
      t.equal(second.response.headers.get('x-gateway-cache-status'), 'HIT', `repeat ${i}: a HIT at once`);
      t.same(second.data, first.data);
    }
    t.equal(calls(), 5);
  });

  t.test('20 concurrent identical misses on one host: one upstream call, 19 HITs that waited', async (t) => {
    mock.reset();
    const client = sdk(a!, routing(mock, 'delay=1500'), 'd-sf');
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'shared flight' }] }).withResponse()),
    );
    t.equal(calls(), 1, 'the upstream saw one call');
    const statuses = answers.map((x) => x.response.headers.get('x-gateway-cache-status'));
    t.equal(statuses.filter((s) => s === 'HIT').length, 19);
    t.equal(new Set(answers.map((x) => x.data.id)).size, 1, 'one answer for all');
    const logged = await records(a!, 'd-sf', 20);
    t.equal(logged.filter((r) => r.cache_status === 'HIT' && typeof r.cache_wait_ms === 'number' && r.cache_wait_ms > 0).length, 19, 'the followers waited');
    // The entry reached Valkey: the other host hits it too.
    const other = await sdk(b!, routing(mock, 'delay=1500'), 'd-sf-b').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'shared flight' }] }).withResponse();
    t.equal(other.response.headers.get('x-gateway-cache-status'), 'HIT', 'host B reads the leader’s entry from Valkey');
  });

  t.test('two workspaces never share a flight', async (t) => {
    mock.reset();
    const ws = await call(a!, 'POST', '/v1/admin/workspaces', { name: 'Flight B', slug: 'flight-b' });
    const key = (await call(a!, 'POST', '/v1/api-keys/workspace/service', { name: 'flight b', workspace_id: ws.body.id, scopes: ['completions.write'] })).body.key as string;
    const config = routing(mock, 'delay=1000');
    const ask = (k: string): Promise<unknown> => sdk(a!, config, 'd-part', k).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'partitioned shared flight' }] });
    await Promise.all([...Array.from({ length: 4 }, () => ask(ADMIN_KEY)), ...Array.from({ length: 4 }, () => ask(key))]);
    t.equal(calls(), 2, 'one call per workspace');
  });
});
