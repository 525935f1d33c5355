/**
 * The shared cache's size limits, as in embedded mode: `max_entries` and `max_bytes` hold in
 * Valkey (the entries closest to expiry go first: with one max_age, the oldest), an answer over
 * `max_entry_bytes` is never stored, a `max_age` of 0 stores nothing; and the LMDB cache
 * databases stay empty in distributed mode. One in-process gateway on real PostgreSQL and Valkey.
 */
import t from 'tap';
import { request } from 'undici';
import { Redis } from 'ioredis';
import { needServices } from './helpers/services.js';
import { ADMIN_KEY, startGateway, startMock, type MockUpstream, type StartedGateway } from './helpers/gateway.js';
import { MASTER_KEY } from './helpers/hosts.js';

type Json = Record<string, unknown>;

const chatBody = (content: string): Json => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

function routing(mock: MockUpstream, maxAge = 60): string {
  return JSON.stringify({ cache: { mode: 'simple', max_age: maxAge }, targets: [{ provider: 'openai', api_key: 'sk', custom_host: `${mock.url}/v1` }] });
}

async function post(gw: StartedGateway, body: Json, config: string): Promise<string | undefined> {
  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-config': config },
    body: JSON.stringify(body),
  });
  await res.body.dump();
  const cache = res.headers['x-gateway-cache-status'];
  return typeof cache === 'string' ? cache : undefined;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

t.test('size limits hold in Valkey, and LMDB keeps no cache entry', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const [pg, valkey] = await Promise.all([svc.postgres(), svc.redis()]);
  const env = { GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_MASTER_KEY: MASTER_KEY, GATEWAY_POSTGRES_URL: await pg.database(), GATEWAY_REDIS_URL: valkey.url };
  const mock = await startMock(t);
  const redis = new Redis(valkey.url);
  t.teardown(() => redis.disconnect());
  const entryKeys = async (): Promise<string[]> => (await redis.keys('gw:cache:e:*')).sort();
  /** Waits for the background writes of the last answer (Valkey answers in well under a millisecond). */
  const settle = (): Promise<void> => sleep(100);

  t.test('max_entries keeps the newest over all writers', async (t) => {
    await redis.flushall();
    const gw = await startGateway(t, { yaml: 'pipeline: [auth, config-strategy, {cache: {max_entries: 3}}]\n', env });
    const config = routing(mock);
    for (const n of [1, 2, 3, 4]) {
      t.equal(await post(gw, chatBody(`evict ${n}`), config), 'MISS');
      await settle();
    }
    t.equal((await entryKeys()).length, 3, 'three entries in Valkey');
    t.equal(await redis.zcard('gw:cache:expiry'), 3, 'and in its index');
    t.equal(await post(gw, chatBody('evict 4'), config), 'HIT', 'the newest stays');
    t.equal(await post(gw, chatBody('evict 2'), config), 'HIT');
    t.equal(await post(gw, chatBody('evict 1'), config), 'MISS', 'the oldest was evicted');
    await settle();
    const bytes = Number(await redis.get('gw:cache:bytes'));
    const sizes = (await redis.hvals('gw:cache:size')).reduce((sum, v) => sum + Number(v), 0);
    t.equal(bytes, sizes, 'the byte total matches the entries counted');
    t.ok(bytes > 0);

    const lmdb = gw.store.root.openDB({ name: 'cache_entries' });
    t.equal(lmdb.getCount(), 0, 'the LMDB cache database stays empty in distributed mode');
  });

  t.test('max_bytes bounds the total', async (t) => {
    await redis.flushall();
    const gw = await startGateway(t, { yaml: 'pipeline: [auth, config-strategy, {cache: {max_bytes: 2048}}]\n', env });
    const config = routing(mock);
    for (let n = 0; n < 10; n++) {
      await post(gw, chatBody(`bytes ${n}`), config);
      await settle();
    }
    const bytes = Number(await redis.get('gw:cache:bytes'));
    t.ok(bytes <= 2048, `the byte total (${bytes}) stays within max_bytes`);
    const count = (await entryKeys()).length;
    t.ok(count > 0 && count < 10, `some entries were evicted (${count} left)`);
    t.equal(await post(gw, chatBody('bytes 9'), config), 'HIT', 'the newest stays');
  });

  t.test('an answer over max_entry_bytes, or with max_age 0, is never stored', async (t) => {
    await redis.flushall();
    const small = await startGateway(t, { yaml: 'pipeline: [auth, config-strategy, {cache: {max_entry_bytes: 64}}]\n', env });
    t.equal(await post(small, chatBody('too big'), routing(mock)), 'MISS');
    await settle();
    t.equal(await post(small, chatBody('too big'), routing(mock)), 'MISS');
    t.same(await entryKeys(), [], 'nothing in Valkey');

    const gw = await startGateway(t, { yaml: 'pipeline: [auth, config-strategy, cache]\n', env });
    t.equal(await post(gw, chatBody('no age'), routing(mock, 0)), 'MISS');
    await settle();
    t.same(await entryKeys(), [], 'max_age 0: nothing in Valkey');
    t.equal(await post(gw, chatBody('no age'), routing(mock, 60)), 'MISS', 'and nothing for a later request either');
  });
});
