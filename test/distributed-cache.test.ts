/**
 * The shared cache of distributed mode: three real gateway processes on one PostgreSQL and one
 * Valkey, the mock upstream behind them. An answer stored through one host is a HIT on the others
 * (plain and streamed), a semantic entry is a SEMANTIC HIT on another host within a second, the
 * TTL holds on every host, and nothing ever crosses workspaces.
 *
 * Every entry is proved to come from Valkey: its key is there, and deleting the Valkey keys turns
 * the next hit into a miss (the hosts still share one LMDB data dir until the control plane is
 * replicated through PostgreSQL; see SHARED_DATA_DIR).
 */
import t from 'tap';
import { request } from 'undici';
import OpenAI from 'openai';
import { Redis } from 'ioredis';
import { needServices } from './helpers/services.js';
import { distributedBackends, startHosts, type Host } from './helpers/hosts.js';
import { ADMIN_KEY, startMock, type MockUpstream } from './helpers/gateway.js';

/**
 * Workspaces and keys created through the admin API on one host reach the others through a shared
 * LMDB data dir until the control plane is replicated through PostgreSQL; then this turns false.
 */
const SHARED_DATA_DIR = false;

type Json = Record<string, unknown>;

interface Answer {
  status: number;
  cache: string | undefined;
  text: string;
}

const chatBody = (content: string, extra: Json = {}): Json => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });

function routing(mock: MockUpstream, cache: Json): string {
  return JSON.stringify({ cache, targets: [{ provider: 'openai', api_key: 'sk', custom_host: `${mock.url}/v1` }] });
}

async function post(host: Host, body: Json, config: string, key = ADMIN_KEY): Promise<Answer> {
  const res = await request(`${host.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': key, 'x-gateway-config': config },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  const cache = res.headers['x-gateway-cache-status'];
  return { status: res.statusCode, cache: typeof cache === 'string' ? cache : undefined, text };
}

async function admin(host: Host, path: string, body: Json): Promise<Json> {
  const res = await request(`${host.url}/v1${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': ADMIN_KEY },
    body: JSON.stringify(body),
  });
  const json = (await res.body.json()) as Json;
  if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${JSON.stringify(json)}`);
  return json;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Every Valkey key matching `pattern`. */
async function keys(redis: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    found.push(...batch);
  } while (cursor !== '0');
  return found;
}

/** Waits until `count` entry keys exist (writes happen after the answer went out, in the background). */
async function entriesStored(redis: Redis, count: number): Promise<string[]> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const found = await keys(redis, 'gw:cache:e:*');
    if (found.length >= count || Date.now() > deadline) return found;
    await sleep(10);
  }
}

t.test('the cache is shared by every host, and never across workspaces', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const mock = await startMock(t);
  const yaml = [
    'pipeline:',
    '  - auth',
    '  - config-strategy',
    `  - cache: {semantic: {embeddings_url: "${mock.url}/v1/embeddings", model: text-embedding-3-small, threshold: 0.9}}`,
    '  - admin-org',
    '  - admin-api-keys',
    '',
  ].join('\n');
  const [a, b, c] = await startHosts(t, 3, { backends, sharedDataDir: SHARED_DATA_DIR, yaml });
  const redis = new Redis(backends.redisUrl);
  t.teardown(() => redis.disconnect());
  const calls = (): number => mock.requests.filter((r) => r.path.endsWith('/chat/completions')).length;
  const simple = routing(mock, { mode: 'simple', max_age: 60 });

  // A second workspace and its key, made through host A.
  const ws = await admin(a!, '/admin/workspaces', { name: 'Team B', slug: 'team-b' });
  const teamB = (await admin(a!, '/api-keys/workspace/service', { name: 'team b', workspace_id: ws.id, scopes: ['completions.write'] })).key as string;

  t.test('a plain answer stored through A is a HIT on B and C; another workspace misses', async (t) => {
    mock.reset();
    await redis.del(...(await keys(redis, 'gw:cache:*')), 'gw:none');
    const first = await post(a!, chatBody('shared plain'), simple);
    t.equal(first.cache, 'MISS');
    const stored = await entriesStored(redis, 1);
    t.equal(stored.length, 1, 'one entry in Valkey');
    t.match(stored[0], /^gw:cache:e:[0-9a-f-]{36}:[0-9a-f]{64}$/, 'keyed by workspace and cache key');
    const onB = await post(b!, chatBody('shared plain'), simple);
    t.equal(onB.cache, 'HIT', 'host B answers from the entry A stored');
    t.equal(onB.text, first.text, 'the same bytes');
    t.equal((await post(c!, chatBody('shared plain'), simple)).cache, 'HIT', 'and so does C');
    t.equal(calls(), 1, 'the upstream saw one call');

    const other = await post(b!, chatBody('shared plain'), simple, teamB);
    t.equal(other.status, 200);
    t.equal(other.cache, 'MISS', 'the same body from another workspace misses');
    t.equal(calls(), 2);
    t.equal((await entriesStored(redis, 2)).length, 2, "the other workspace's answer is its own entry");
    t.equal((await post(c!, chatBody('shared plain'), simple, teamB)).cache, 'HIT', 'and is shared by its own workspace');

    // The proof that hits come from Valkey and not from the LMDB dir the hosts share for now.
    await redis.del(...(await keys(redis, 'gw:cache:e:*')));
    t.equal((await post(b!, chatBody('shared plain'), simple)).cache, 'MISS', 'without the Valkey entry, a miss');
  });

  t.test('a streamed answer stored through A replays as a stream on B', async (t) => {
    mock.reset();
    const client = (host: Host): OpenAI =>
      new OpenAI({ baseURL: `${host.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-config': simple } });
    const read = async (host: Host): Promise<{ text: string; status: string | null }> => {
      const { data, response } = await client(host)
        .chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'shared stream' }] })
        .withResponse();
      let text = '';
      for await (const chunk of data) text += chunk.choices[0]?.delta?.content ?? '';
      return { text, status: response.headers.get('x-gateway-cache-status') };
    };
    const before = (await keys(redis, 'gw:cache:e:*')).length;
    const first = await read(a!);
    t.equal(first.status, 'MISS');
    await entriesStored(redis, before + 1);
    const second = await read(b!);
    t.equal(second.status, 'HIT');
    t.equal(second.text, first.text, 'the same text');
    t.ok(second.text.length > 0);
    t.equal(calls(), 1, 'the upstream saw one call');
    const raw = await post(c!, chatBody('shared stream', { stream: true }), simple);
    t.equal(raw.cache, 'HIT');
    t.ok(raw.text.endsWith('data: [DONE]\n\n'), 'the SSE text as it was sent, [DONE] included');
    t.equal((await post(c!, chatBody('shared stream'), simple)).cache, 'MISS', 'a plain request does not replay a streamed entry');
  });

  t.test('a semantic entry stored through A is a SEMANTIC HIT on B within a second, never across workspaces', async (t) => {
    mock.reset();
    const semantic = routing(mock, { mode: 'semantic', max_age: 60 });
    const first = await post(a!, chatBody('What is the capital city of France?'), semantic);
    t.equal(first.cache, 'SEMANTIC MISS');
    await sleep(1000);
    const para = await post(b!, chatBody('capital city of France, what is it?'), semantic);
    t.equal(para.cache, 'SEMANTIC HIT', 'B found the vector A stored');
    t.equal(para.text, first.text, 'and answered with the entry A stored');
    t.equal((await post(c!, chatBody('France: what is its capital city?'), semantic)).cache, 'SEMANTIC HIT', 'C too');
    t.equal((await post(c!, chatBody('capital city of France, what is it?'), semantic, teamB)).cache, 'SEMANTIC MISS', 'another workspace never matches it');
    t.equal(calls(), 2, 'the first question and the other workspace called the upstream');
    // The other workspace's entry is stored after its answer went out: wait for it, briefly.
    let vectors = 0;
    for (let i = 0; i < 100 && vectors < 2; i++) {
      vectors = await redis.xlen('gw:cache:vectors');
      if (vectors < 2) await sleep(20);
    }
    t.ok(vectors >= 2, 'the vectors are in the shared stream');
  });

  t.test('the TTL holds on every host', async (t) => {
    mock.reset();
    const short = routing(mock, { mode: 'simple', max_age: 1 });
    const before = (await keys(redis, 'gw:cache:e:*')).length;
    t.equal((await post(a!, chatBody('short lived'), short)).cache, 'MISS');
    const stored = await entriesStored(redis, before + 1);
    const ttls = await Promise.all(stored.map((k) => redis.pttl(k)));
    t.ok(ttls.some((ms) => ms > 0 && ms <= 1000), 'the entry carries the max_age as its Valkey TTL');
    t.equal((await post(b!, chatBody('short lived'), short)).cache, 'HIT');
    await sleep(1200);
    t.equal(await redis.exists(...stored), before, 'Valkey dropped the expired entry');
    t.equal((await post(c!, chatBody('short lived'), routing(mock, { mode: 'simple', max_age: 60 }))).cache, 'MISS', 'gone for every host, whatever max_age it asks');
    t.equal(calls(), 2);
  });
});
