/**
 * The `analytics` plugin: known traffic through `[analytics, auth, config-strategy, cache,
 * admin-api-keys, admin-catalog]` to the mock (successes, upstream errors, a stream that breaks,
 * a retry rescue, a fallback rescue, a load balance that is not a rescue, cache hits, users in
 * `x-gateway-metadata`, a second workspace), then every graph's totals against what was sent:
 * exact counts, costs priced from the public pricing route, latency percentiles within a bin of
 * the gateway's own records. Workspace isolation, filters and refusals. The histogram, the range
 * plan and the additive flush are unit-tested as plain functions.
 */
import t from 'tap';
import { request } from 'undici';
import { open } from 'lmdb';
import { join } from 'node:path';
import { startGateway, startMock, direct, tempDir, ADMIN_KEY, addWorkspace, insertKey, type MockUpstream } from './helpers/gateway.js';
import { buildLogRecord, createLogger, definePlugin, Scopes, type LogRecord } from '../core/index.js';
import { binOf, percentile, denseHistogram, accumulate, binMidpoint, BIN_COUNT } from '../plugins/analytics/histogram.js';
import { segments } from '../plugins/analytics/query.js';
import { createRollup, createRollupWith, openBucketDbs, type PendingBucket } from '../plugins/analytics/rollup.js';
import { withUnflushed } from '../plugins/analytics/live.js';
import { sums } from '../plugins/analytics/folds.js';
import type { Query, Sources } from '../plugins/analytics/query.js';
import type { Bucket, BucketKey, UserCounts } from '../plugins/analytics/bucket.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Nearest-rank percentile, the definition the histogram approximates. */
function truePercentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!;
}

t.test('histogram: bins, merge, percentiles within one bin', async (t) => {
  t.equal(binOf(0.05), 0, 'below 0.1 ms is clamped into the first bin');
  t.equal(binOf(0.1), 0);
  t.equal(binOf(1), 10, 'ten bins a decade');
  t.equal(binOf(120_000), BIN_COUNT - 1, '120 s has a bin');
  t.equal(binOf(1e9), BIN_COUNT - 1, 'above is clamped into the last bin');
  const values = Array.from({ length: 1000 }, (_, i) => 0.2 * 1.01 ** i); // 0.2 ms … ~4 s
  const h = denseHistogram();
  // Merged from two halves, as a query merges buckets.
  for (const part of [values.slice(0, 500), values.slice(500)]) {
    const pairs: number[] = [];
    for (const v of part) {
      const b = binOf(v);
      const at = pairs.findIndex((x, i) => i % 2 === 0 && x === b);
      if (at === -1) pairs.push(b, 1);
      else pairs[at + 1]!++;
    }
    accumulate(h, pairs);
  }
  for (const q of [0.5, 0.9, 0.99]) {
    const truth = truePercentile(values, q);
    t.equal(binOf(percentile(h, q)), binOf(truth), `p${q * 100} is reported in the bin of the truth`);
    t.ok(Math.abs(Math.log10(percentile(h, q) / truth)) <= 0.1, `p${q * 100} within a bin's width`);
  }
  t.equal(percentile(denseHistogram(), 0.5), 0, 'an empty histogram says 0');
  t.equal(binOf(binMidpoint(7)), 7, 'a bin reports inside itself');
});

t.test('range plan: minutes at the edges, whole hours between', async (t) => {
  t.same(segments(10, 100, 1, 0), [{ db: 'minutes', from: 10, to: 100 }], 'minute points read minutes');
  t.same(segments(10, 200, 60, 0), [
    { db: 'minutes', from: 10, to: 60 },
    { db: 'hours', from: 60, to: 180 },
    { db: 'minutes', from: 180, to: 200 },
  ]);
  t.same(segments(60, 180, 60, 0), [{ db: 'hours', from: 60, to: 180 }], 'hour-aligned: hours only');
  t.same(segments(70, 100, 60, 0), [{ db: 'minutes', from: 70, to: 100 }], 'inside one hour: minutes');
  t.same(segments(10, 200, 60, 100), [
    { db: 'hours', from: 0, to: 180 },
    { db: 'minutes', from: 180, to: 200 },
  ], 'a pruned edge widens to its whole hour');
});

t.test('several processes flushing into one store add up', async (t) => {
  const dir = tempDir('gw-analytics-');
  const root = open({ path: join(dir, 'a.mdb'), maxDbs: 8 });
  t.teardown(() => root.close());
  const dbs = openBucketDbs(root);
  const log = createLogger({ level: 'error', write: () => {} });
  const a = createRollup(root, dbs, { flush_ms: 1000, max_metadata_sets: 10 }, log);
  const b = createRollup(root, dbs, { flush_ms: 1000, max_metadata_sets: 10 }, log);
  const at = Date.UTC(2026, 0, 1, 12, 30, 10);
  const rec = (latency: number, user: string, cost: number): LogRecord =>
    ({
      created_at: new Date(at).toISOString(),
      workspace_id: 'ws1',
      provider: 'openai',
      model: 'gpt-4o',
      status: 200,
      is_success: true,
      cache_status: 'DISABLED',
      api_key_id: 'k1',
      metadata: { _user: user, env: 'prod' },
      retry_count: 0,
      latency: { total_ms: latency, upstream_ms: 0, gateway_ms: 0, ttfb_ms: null },
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, cached_tokens: 0 },
      cost_cents: cost,
    }) as unknown as LogRecord;
  for (let i = 0; i < 3; i++) a.add(rec(10, 'u1', 0.5), { error: false, fallback: false });
  for (let i = 0; i < 2; i++) b.add(rec(100, i === 0 ? 'u1' : 'u2', 0.25), { error: i === 1, fallback: true });
  await Promise.all([a.flush(), b.flush()]);
  a.add(rec(10, 'u3', 1), { error: false, fallback: false });
  await a.close();
  await b.close();
  const key: BucketKey = ['ws1', Math.floor(at / 60_000), 'openai', 'gpt-4o', 200, 'DISABLED', 'k1', '[["env","prod"]]'];
  const hourKey = [...key.slice(0, 1), key[1] - (key[1] % 60), ...key.slice(2)] as BucketKey;
  for (const [name, tier, k] of [['minute', 'minutes', key], ['hour', 'hours', hourKey]] as const) {
    const got = dbs.buckets[tier].get(k) as Bucket;
    const users = dbs.users[tier].get(k) as UserCounts;
    t.equal(got.requests, 6, `${name}: requests add up`);
    t.equal(got.errors, 1);
    t.equal(got.fallback, 2);
    t.equal(got.cost, 3 * 0.5 + 2 * 0.25 + 1);
    t.equal(got.prompt_tokens, 60);
    t.same(new Map(users.names.map((u, i) => [u, users.requests[i]])), new Map([['u1', 4], ['u2', 1], ['u3', 1]]), `${name}: users add up`);
    t.same(users.cost, [3 * 0.5 + 0.25, 0.25, 1]);
    t.same(got.hist, [binOf(10), 4, binOf(100), 2]);
  }
});

t.test('reads fold in the buckets not flushed yet, and count a flush in flight exactly once', async (t) => {
  const log = createLogger({ level: 'error', write: () => {} });
  // A store whose writes commit when the test says so.
  const stored: PendingBucket[] = [];
  let commit: (() => void) | undefined;
  const write = (batch: PendingBucket[]): Promise<void> =>
    new Promise((resolve) => {
      commit = () => {
        stored.push(...batch);
        resolve();
      };
    });
  const rollup = createRollupWith(write, { flush_ms: 60_000, max_metadata_sets: 10 }, log);
  const source: Sources = {
    buckets: async () => (visit) => stored.forEach((e) => visit(e.bucket, e.key)),
    users: async () => (visit) => stored.forEach((e) => visit(e.users, e.key)),
  };
  const live = withUnflushed(source, rollup, () => 0);
  const at = Date.now();
  const rec = { created_at: new Date(at).toISOString(), workspace_id: 'ws1', provider: 'openai', model: 'gpt-4o', status: 200, is_success: true, cache_status: 'DISABLED', api_key_id: 'k1', metadata: { _user: 'u1' }, retry_count: 0, latency: { total_ms: 5, upstream_ms: 0, gateway_ms: 0, ttfb_ms: null }, usage: null, cost_cents: 0 } as unknown as LogRecord;
  const minute = Math.floor(at / 60_000);
  const minutes: Query = { workspaces: ['ws1'], from: minute - 5, to: minute + 5, step: 1, filters: {} };
  const hours: Query = { workspaces: null, from: minute - 600, to: minute + 600, step: 60, filters: {} };
  const count = async (q: Query): Promise<number> => {
    const total = sums.fresh();
    (await live.buckets(q))((b, k) => sums.add(total, b, k));
    return total.requests;
  };
  const users = async (q: Query): Promise<number> => {
    let n = 0;
    (await live.users(q))((u) => (n += u.requests.reduce((a, b) => a + b, 0)));
    return n;
  };

  rollup.add(rec, { error: false, fallback: false });
  rollup.add(rec, { error: false, fallback: false });
  t.equal(await count(minutes), 2, 'unflushed: counted at once (minutes)');
  t.equal(await count(hours), 2, 'and on hour data points');
  t.equal(await users(minutes), 2, 'users too');
  t.equal(await count({ ...minutes, workspaces: ['ws2'] }), 0, 'only in its workspace');
  t.equal(await count({ ...minutes, filters: { statuses: new Set([500]) } }), 0, 'only when its dimensions match');

  const flushed = rollup.flush(); // handed to the store, not committed yet
  rollup.add(rec, { error: false, fallback: false });
  const during = count(minutes);
  await sleep(10);
  commit!();
  await flushed;
  t.equal(await during, 3, 'a read during a flush waits for its commit: counted once');
  t.equal(stored.length, 1, 'the flush committed');
  t.equal(await count(minutes), 3, 'stored + pending after the commit, nothing twice');
  t.equal(await count(hours), 3);
  t.equal(await users(hours), 3);
});

interface Sent {
  status: number;
  json: Json | undefined;
  text: string;
  cache: string | undefined;
}

t.test('a graph read right after a request counts it (flush_ms 60 s)', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: 'pipeline:\n  - analytics: {flush_ms: 60000}\n  - auth\n  - config-strategy\n  - admin-catalog\n',
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
  });
  const start = Date.now();
  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...direct(mock), 'content-type': 'application/json', 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-metadata': '{"_user":"zoe"}' },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'count me now' }] }),
  });
  t.equal(res.statusCode, 200);
  await res.body.dump();
  const read = async (path: string, hours: number): Promise<Json> => {
    const qs = new URLSearchParams({ time_of_generation_min: new Date(start - hours * 3_600_000 - 60_000).toISOString(), time_of_generation_max: new Date(Date.now() + hours * 3_600_000 + 60_000).toISOString() });
    const r = await request(`${gw.url}/v1/analytics/${path}?${qs}`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
    t.equal(r.statusCode, 200, path);
    return (await r.body.json()) as Json;
  };
  t.equal((await read('graphs/requests', 0)).summary.total, 1, 'the requests graph counts it at once');
  t.equal((await read('graphs/requests', 12)).summary.total, 1, 'so does a day graph (hour data points)');
  t.ok((await read('graphs/tokens', 0)).summary.total > 0, 'with its tokens');
  t.equal((await read('summary/cache', 0)).summary.total_requests, 1, 'the cache summary counts it');
  t.same((await read('groups/users', 0)).data.map((u: Json) => [u.user, u.requests]), [['zoe', '1']], 'the users group names its user');
});

t.test('analytics over live traffic', async (t) => {
  const mock = await startMock(t);
  // The gateway's own records (last in the pipeline): the truth for latency percentiles.
  const truth: LogRecord[] = [];
  const recorder = definePlugin({
    name: 'truth',
    setup(app) {
      return {
        onDone(ctx, outcome) {
          if (ctx.route.kind === 'model') truth.push(buildLogRecord(ctx, outcome, app.service('pricing')));
        },
      };
    },
  });
  const gw = await startGateway(t, {
    yaml: 'pipeline:\n  - analytics: {flush_ms: 20}\n  - auth\n  - config-strategy\n  - cache\n  - admin-api-keys\n  - admin-catalog\n  - truth\n',
    plugins: { truth: recorder as never },
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
  });
  const store = gw.store;
  const defaultWs = store.meta.get('default_workspace_id') as string;
  const teamB = addWorkspace(store, 'team-b', Scopes.DEFAULT_WORKSPACE_SCOPES);
  const teamBKeyId = store.c.apiKeys.list({ filter: (k) => k.workspace_id === teamB.id }).items[0]!.id;
  const teamC = addWorkspace(store, 'team-c', ['analytics.view']);
  const noScope = insertKey(store, { workspace_id: teamB.id, scopes: ['configs.read'] });
  const adminKeyId = store.c.apiKeys.list({ filter: (k) => k.workspace_id === null }).items[0]!.id;

  const host = (m: MockUpstream, directives = ''): string => `${m.url}${directives ? `/mock/${directives}` : ''}/v1`;
  const leaf = (directives = '', extra: Json = {}): Json => ({ provider: 'openai', api_key: 'sk-t', custom_host: host(mock, directives), ...extra });

  async function chat(o: { model?: string; directives?: string; config?: Json; metadata?: Json; key?: string; stream?: boolean; content?: string } = {}): Promise<Sent> {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-gateway-api-key': o.key ?? ADMIN_KEY };
    if (o.config) headers['x-gateway-config'] = JSON.stringify(o.config);
    else Object.assign(headers, direct(mock, o.directives));
    if (o.metadata) headers['x-gateway-metadata'] = JSON.stringify(o.metadata);
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: o.model ?? 'gpt-4o-mini', stream: o.stream ?? false, messages: [{ role: 'user', content: o.content ?? 'count me' }] }),
    });
    const text = await res.body.text();
    let json: Json | undefined;
    try {
      json = JSON.parse(text) as Json;
    } catch {
      json = undefined;
    }
    const cache = res.headers['x-gateway-cache-status'];
    return { status: res.statusCode, json, text, cache: typeof cache === 'string' ? cache : undefined };
  }

  const start = Date.now();
  const sent: Sent[] = [];
  const send = async (o: Parameters<typeof chat>[0], expect: number): Promise<Sent> => {
    const r = await chat(o);
    t.equal(r.status, expect, `traffic: ${JSON.stringify(o).slice(0, 90)}`);
    sent.push(r);
    return r;
  };
  // Default workspace (the organisation key acts there): 14 requests.
  await send({ model: 'gpt-4o', metadata: { _user: 'alice', env: 'prod' } }, 200);
  await send({ model: 'gpt-4o', metadata: { _user: 'alice', env: 'prod' }, directives: 'delay=40' }, 200);
  await send({ model: 'gpt-4o', metadata: { _user: 'bob', env: 'prod' }, directives: 'delay=120' }, 200);
  await send({ model: 'gpt-4o', metadata: { _user: 'alice', env: 'staging' }, directives: 'delay=15' }, 200);
  await send({ directives: 'status=500' }, 500);
  await send({ directives: 'status=500' }, 500);
  await send({ directives: 'status=429' }, 429);
  const retried = await send({ config: { retry: { attempts: 2 }, targets: [leaf(`fail_first=1;key=rescue-${start};status=503`)] } }, 200);
  await send({ config: { strategy: { mode: 'fallback' }, targets: [leaf('status=503'), leaf()] } }, 200);
  // A load balancer choosing targets[1] on its first try: a success, not a rescue.
  await send({ config: { strategy: { mode: 'loadbalance' }, targets: [leaf('', { weight: 0 }), leaf('', { weight: 1 })] } }, 200);
  const cached = { cache: { mode: 'simple', max_age: 60 }, targets: [leaf()] };
  const miss = await send({ config: cached, content: `cache me ${start}` }, 200);
  await sleep(100); // the entry is written after the answer
  const hit1 = await send({ config: cached, content: `cache me ${start}` }, 200);
  const hit2 = await send({ config: cached, content: `cache me ${start}` }, 200);
  t.same([miss.cache, hit1.cache, hit2.cache], ['MISS', 'HIT', 'HIT'], 'one miss, two hits');
  // A stream that breaks after its head: status 200, counted as an error.
  const broken = await send({ stream: true, directives: 'chunks=8;chunk_delay=5;reset=mid_stream;reset_after=2' }, 200);
  t.match(broken.text, /event: error/);
  // Workspace team-b: 2 requests with its own key.
  await send({ key: teamB.key, metadata: { _user: 'carol' } }, 200);
  await send({ key: teamB.key, metadata: { _user: 'carol' } }, 200);
  t.equal(retried.json?.object, 'chat.completion');

  const range = { time_of_generation_min: new Date(start - 60_000).toISOString(), time_of_generation_max: new Date(Date.now() + 60_000).toISOString() };
  const day = { time_of_generation_min: new Date(start - 12 * 3_600_000).toISOString(), time_of_generation_max: new Date(Date.now() + 12 * 3_600_000).toISOString() };
  async function get(path: string, params: Json = {}, key = ADMIN_KEY): Promise<{ status: number; body: Json }> {
    const qs = new URLSearchParams({ ...range, ...params } as Record<string, string>).toString();
    const res = await request(`${gw.url}/v1/analytics/${path}?${qs}`, { headers: { 'x-gateway-api-key': key } });
    return { status: res.statusCode, body: (await res.body.json()) as Json };
  }
  const graph = async (path: string, params: Json = {}, key = ADMIN_KEY): Promise<Json> => {
    const r = await get(`graphs/${path}`, params, key);
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  // Rollups are written every 20 ms: wait until all 16 requests are in.
  for (let i = 0; i < 100 && (await graph('requests')).summary.total < 16; i++) await sleep(20);

  const mine = { workspace_id: defaultWs };
  const ok = (r: LogRecord): boolean => r.workspace_id === defaultWs;
  const records = truth.filter(ok);
  t.equal(records.length, 14, 'the truth plugin saw the default workspace traffic');

  t.test('requests, errors, error rate, status codes', async (t) => {
    const all = await graph('requests');
    t.equal(all.object, 'analytics-graph');
    t.equal(all.summary.total, 16, 'an organisation key sees every workspace');
    t.equal(all.data_points.length, Math.ceil(Date.parse(range.time_of_generation_max) / 60_000) - Math.floor(Date.parse(range.time_of_generation_min) / 60_000), 'one point a minute, empty ones included');
    t.equal(all.data_points.reduce((n: number, p: Json) => n + p.total, 0), 16, 'the points add up to the summary');
    t.equal((await graph('requests', mine)).summary.total, 14);
    t.equal((await graph('errors', mine)).summary.total, 4, 'two 500s, a 429 and the broken stream');
    t.equal((await graph('errors/rate', mine)).summary.rate, Math.round((4 / 14) * 10000) / 100);
    const codes = await graph('errors/status-codes', mine);
    t.same(codes.summary, { total_errors: 3, unique_error_codes: 2 });
    t.same(codes.data_points, [{ status_code: 500, count: 2 }, { status_code: 429, count: 1 }]);
  });

  t.test('cost and tokens match the responses priced with the public table', async (t) => {
    let tokens = 0;
    let cents = 0;
    const prices = new Map<string, { in: number; out: number }>();
    for (const model of ['gpt-4o', 'gpt-4o-mini']) {
      const res = await request(`${gw.url}/model-configs/pricing/openai/${model}`);
      const p = ((await res.body.json()) as Json).pay_as_you_go;
      prices.set(model, { in: p.request_token.price, out: p.response_token.price });
    }
    // The default workspace's paid answers: 200s with a usage block that did not come from the cache.
    for (const r of sent.slice(0, 14)) {
      if (r.status !== 200 || r.cache === 'HIT' || r.json?.usage === undefined) continue;
      const u = r.json.usage as Json;
      const price = prices.get(String(r.json.model).startsWith('gpt-4o-mini') ? 'gpt-4o-mini' : 'gpt-4o')!;
      tokens += u.prompt_tokens + u.completion_tokens;
      cents += u.prompt_tokens * price.in + u.completion_tokens * price.out;
    }
    t.ok(tokens > 0 && cents > 0);
    const tk = await graph('tokens', mine);
    t.equal(tk.summary.total, tokens, 'tokens');
    t.ok(Math.abs(tk.summary.avg - tokens / 14) < 0.001);
    const cost = await graph('cost', mine);
    t.ok(Math.abs(cost.summary.total - cents) < 1e-5, `cost ${cost.summary.total} ≈ ${cents} cents`);
    t.ok(Math.abs(cost.summary.avg - cents / 14) < 1e-5);
  });

  t.test('latency: mean exact, percentiles within a bin of the records', async (t) => {
    const values = records.map((r) => r.latency.total_ms);
    for (const params of [mine, { ...mine, ...day }]) {
      const l = await graph('latency', params);
      t.ok(Math.abs(l.summary.avg - values.reduce((a, b) => a + b, 0) / values.length) < 0.01, 'mean');
      for (const [name, q] of [['p50', 0.5], ['p90', 0.9], ['p95', 0.95], ['p99', 0.99]] as const) {
        const truthValue = truePercentile(values, q);
        t.ok(Math.abs(binOf(l.summary[name]) - binOf(truthValue)) <= 1, `${name}: ${l.summary[name]} vs ${truthValue} ms`);
      }
    }
  });

  t.test('users, rescues, cache', async (t) => {
    t.equal((await graph('users', mine)).summary.total, 3, 'alice, bob, and the admin key for calls without _user');
    t.equal((await graph('users')).summary.total, 4, 'carol too, across workspaces');
    const rescued = await graph('requests/rescued', mine);
    t.same(rescued.summary, { retry: 1, fallback: 1 }, 'one retry rescue, one fallback rescue; the load balance is neither');
    const point = rescued.data_points.find((p: Json) => p.retry.length > 0);
    t.same(point?.retry, [{ retry_success_count: 1, count: 1 }]);
    const hitRate = await graph('cache/hit-rate', mine);
    t.same(hitRate.summary, { total: 2, rate: 66.67 });
    const hp = hitRate.data_points.filter((p: Json) => p.simple_hits > 0);
    t.equal(hp.reduce((n: number, p: Json) => n + p.simple_hits, 0), 2);
    const last = hitRate.data_points[hitRate.data_points.length - 1];
    t.ok(last.cumulative_simple_cache_savings > 0, 'hits saved what a paid gpt-4o-mini call costs');
    t.equal(last.cumulative_semantic_cache_savings, 0);
    const cl = await graph('cache/latency', mine);
    t.same(cl.summary, {});
    t.ok(cl.data_points.some((p: Json) => p.avg > 0), 'cache hits have a latency');
    const summary = (await get('summary/cache', mine)).body;
    t.equal(summary.object, 'analytics-summary');
    t.equal(summary.summary.hits, 2);
    t.equal(summary.summary.total_requests, 14);
    const hitRecords = records.filter((r) => r.cache_status === 'HIT');
    t.ok(Math.abs(summary.summary.avg_latency - hitRecords.reduce((a, r) => a + r.latency.total_ms, 0) / 2) < 0.01);
  });

  t.test('hourly points (a day) agree with minute points', async (t) => {
    for (const path of ['requests', 'errors', 'tokens', 'cost', 'users', 'requests/rescued', 'cache/hit-rate']) {
      const minutes = await graph(path, mine);
      const hours = await graph(path, { ...mine, ...day });
      t.same(hours.summary, minutes.summary, `${path}: same totals`);
    }
    const r = await graph('requests', day);
    t.equal(r.data_points.length, 25, 'hourly points');
    t.ok(r.data_points.every((p: Json) => p.timestamp.endsWith(':00:00.000Z')));
  });

  t.test('groups', async (t) => {
    const users = (await get('groups/users', mine)).body;
    t.same(users, {
      object: 'list',
      total: 3,
      data: [
        { user: adminKeyId, requests: '10', cost: users.data[0].cost, object: 'analytics-group' },
        { user: 'alice', requests: '3', cost: users.data[1].cost, object: 'analytics-group' },
        { user: 'bob', requests: '1', cost: users.data[2].cost, object: 'analytics-group' },
      ],
    });
    t.ok(Number(users.data[1].cost) > 0);
    const paged = (await get('groups/users', { ...mine, page_size: 1, current_page: 1 })).body;
    t.same([paged.total, paged.data.map((u: Json) => u.user)], [3, ['alice']], 'paged');
    const models = (await get('groups/ai-models', mine)).body;
    t.same(models.data.map((m: Json) => [m.ai_model, m.requests]), [['gpt-4o-mini', '10'], ['gpt-4o', '4']]);
    const env = (await get('groups/metadata/env', mine)).body;
    t.same(env.data.map((m: Json) => [m.metadata_value, m.requests]), [['prod', 3], ['staging', 1]]);
    t.ok(env.data[0].avg_tokens > 0 && env.data[0].cost > 0);
    t.ok(Date.parse(env.data[0].last_seen) >= start - 1000);
    t.equal(env.data[0].avg_weighted_feedback, null);
  });

  t.test('filters', async (t) => {
    const total = async (params: Json): Promise<number> => (await graph('requests', params)).summary.total;
    t.equal(await total({ ...mine, status_code: '500, 429' }), 3, 'status_code');
    t.equal(await total({ ai_org_model: 'openai__gpt-4o' }), 4, 'ai_org_model');
    t.equal(await total({ metadata: JSON.stringify({ env: 'prod' }) }), 3, 'metadata');
    t.equal(await total({ metadata: JSON.stringify({ env: 'prod', other: 'x' }) }), 0, 'every pair must match');
    t.equal(await total({ api_key_ids: teamBKeyId }), 2, 'api_key_ids');
    const refusals: Array<[Json, number, string]> = [
      [{ metadata: JSON.stringify({ _user: 'alice' }) }, 400, 'unsupported_filter'],
      [{ cost_min: '1' }, 400, 'unsupported_filter'],
      [{ metadata: '[1]' }, 400, 'invalid_filter'],
      [{ status_code: 'abc' }, 400, 'invalid_value'],
      [{ time_of_generation_min: range.time_of_generation_max, time_of_generation_max: range.time_of_generation_min }, 400, 'invalid_time_range'],
    ];
    for (const [params, status, code] of refusals) {
      const r = await get('graphs/requests', params);
      t.equal(r.status, status, JSON.stringify(params));
      t.equal(r.body.error?.code ?? r.body.code, code);
    }
    const res = await request(`${gw.url}/v1/analytics/graphs/requests`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
    t.equal(res.statusCode, 400, 'the time range is required');
    await res.body.dump();
  });

  t.test('workspace isolation', async (t) => {
    t.equal((await graph('requests', {}, teamB.key)).summary.total, 2, 'a workspace key sees its own workspace');
    t.equal((await graph('users', {}, teamB.key)).summary.total, 1);
    t.equal((await graph('requests', { workspace_slug: 'team-b' }, teamB.key)).summary.total, 2, 'its own slug is fine');
    const other = await get('graphs/requests', { workspace_slug: 'default' }, teamB.key);
    t.equal(other.status, 403, 'another workspace is not');
    t.equal((await get('graphs/requests', { workspace_id: defaultWs }, teamB.key)).status, 403);
    t.equal((await graph('requests', {}, teamC.key)).summary.total, 0, 'an idle workspace sees nothing');
    t.equal((await graph('requests', { workspace_slug: 'team-b' })).summary.total, 2, 'an organisation key names a workspace by slug');
    t.equal((await graph('requests', { workspace_id: teamB.id })).summary.total, 2, 'or by id');
    t.equal((await get('graphs/requests', { workspace_slug: 'nope' })).status, 404);
    const denied = await get('graphs/requests', {}, noScope);
    t.equal(denied.status, 403, 'analytics.view is needed');
    t.equal(denied.body.error.code, 'insufficient_scope');
    const groups = (await get('groups/users', {}, teamB.key)).body;
    t.same(groups.data.map((u: Json) => u.user), ['carol']);
  });

  t.test('feedbacks come from the feedback database', async (t) => {
    t.equal((await graph('feedbacks')).summary.total, 0, 'an empty database is fine');
    const db = store.root.openDB<Json, string>({ name: 'feedback' });
    const now = new Date().toISOString();
    await db.put('f1', { id: 'f1', trace_id: 't1', value: 5, weight: 1, workspace_id: defaultWs, created_at: now });
    await db.put('f2', { id: 'f2', trace_id: 't2', value: -3, weight: 0.5, workspace_id: teamB.id, created_at: now });
    await db.put('f3', { id: 'f3', trace_id: 't3', value: 1, weight: 1, workspace_id: defaultWs, created_at: '2020-01-01T00:00:00.000Z' });
    const all = await graph('feedbacks');
    t.equal(all.summary.total, 2, 'in range, every workspace');
    t.equal(all.data_points.reduce((n: number, p: Json) => n + p.total, 0), 2);
    t.equal((await graph('feedbacks', mine)).summary.total, 1);
    t.equal((await graph('feedbacks', {}, teamB.key)).summary.total, 1);
    t.equal((await get('graphs/feedbacks', { status_code: '200' })).status, 400, 'feedback has no rollup dimensions to filter');
  });
});
