/**
 * A full store (its size limit `store.map_size` reached) never crashes or corrupts the gateway:
 * admin writes answer 503 `store_full`, model requests keep being served, log records are
 * dropped and counted, and writes resume once room is made. lmdb-js grows its map on demand,
 * so the limit is the gateway's own (core/store/capacity.ts).
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, startMock, direct, ADMIN_KEY } from './helpers/gateway.js';
import { openStore } from '../core/store/store.js';
import { MEASURE_EVERY_MS } from '../core/store/capacity.js';
import { createLogger } from '../core/logger.js';

const MAP_SIZE = 4 * 1024 * 1024;

async function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; json: Record<string, unknown>; text: string }> {
  const res = await request(url, { method: init.method ?? 'GET', headers: init.headers, body: init.body });
  const text = await res.body.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // /metrics is text
  }
  return { status: res.statusCode, json, text };
}

const admin = { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json' };
const configBody = (name: string, bytes: number): string => JSON.stringify({ name, config: { provider: 'openai', override_params: { filler: 'f'.repeat(bytes) } } });
const dropped = (metrics: string): number => Number(/^gateway_log_dropped_total (\d+)/m.exec(metrics)?.[1] ?? NaN);

t.test('a full store: admin writes get 503 store_full, chat is served, logs dropped and counted, writes resume after room is made', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: `store: {map_size: ${MAP_SIZE}}\npipeline:\n  - logging: {flush_ms: 20}\n  - metrics\n  - auth\n  - admin-resources\n`,
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
  });
  t.equal(gw.store.capacity.limit, MAP_SIZE, 'store.map_size is the limit');
  t.ok(gw.store.capacity.measure() < MAP_SIZE / 2, `an empty gateway holds ${gw.store.capacity.used()} bytes`);

  // Fill the store with admin writes until it refuses.
  const created: string[] = [];
  let refusal: { status: number; json: Record<string, unknown> } | undefined;
  for (let i = 0; i < 30 && refusal === undefined; i++) {
    const res = await call(`${gw.url}/v1/configs`, { method: 'POST', headers: admin, body: configBody(`fill-${i}`, 512 * 1024) });
    if (res.status === 200) created.push(res.json.id as string);
    else refusal = res;
  }
  t.ok(created.length >= 2, `${created.length} writes stored before the limit`);
  t.equal(refusal?.status, 503, 'refused with 503 once full');
  t.equal((refusal?.json.error as { code?: string } | undefined)?.code, 'store_full');
  const again = await call(`${gw.url}/v1/configs`, { method: 'POST', headers: admin, body: configBody('small', 10) });
  t.equal(again.status, 503, 'every growing write is refused while full');
  t.equal((again.json.error as { code?: string }).code, 'store_full');

  // The hot path keeps serving; its log records are dropped and counted.
  const before = dropped((await call(`${gw.url}/metrics`)).text);
  for (let i = 0; i < 3; i++) {
    const chat = await call(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...direct(mock), 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'still there?' }] }),
    });
    t.equal(chat.status, 200, 'a chat completion is served while the store is full');
  }
  await new Promise((r) => setTimeout(r, 100)); // a few log flushes
  const metrics = (await call(`${gw.url}/metrics`)).text;
  const after = dropped(metrics);
  t.ok(after > before, `log records dropped and counted (${before} → ${after})`);
  t.match(metrics, /^gateway_store_full 1$/m, 'the metrics say the store is full');
  t.same((await call(`${gw.url}/health`)).json, { status: 'ok' }, '/health is ok');
  t.equal(gw.store.c.configs.list().total, created.length, 'nothing half-written: exactly the acknowledged configs are stored');

  // Room is made (records removed, as retention or an operator would): writes resume.
  for (const id of created) {
    for (const v of gw.store.c.configVersions.list({ index: 'config', value: id }).items) gw.store.c.configVersions.delete(v.id);
    gw.store.c.configs.delete(id);
  }
  await new Promise((r) => setTimeout(r, MEASURE_EVERY_MS * 2)); // the next measurement sees it
  t.notOk(gw.store.capacity.full(), `room again (${gw.store.capacity.used()} bytes used)`);
  const resumed = await call(`${gw.url}/v1/configs`, { method: 'POST', headers: admin, body: configBody('after', 10) });
  t.equal(resumed.status, 200, 'admin writes resume');

  // The store reopens fine and holds what was acknowledged.
  const dir = gw.config.store.path;
  await gw.close();
  const store = openStore({ dir, log: createLogger({ level: 'silent' }), env: {}, mapSize: MAP_SIZE });
  t.teardown(() => store.close());
  t.equal(store.c.configs.get(resumed.json.id as string)?.name, 'after', 'the store reopens with its data');
});
