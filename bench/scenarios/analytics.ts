/**
 * Analytics queries over a month of rollups: the API stays fast because it folds per-minute and
 * per-hour buckets, never request logs.
 *
 *   seed    30 days × 1,440 minutes × 6 buckets a minute (2 models × {200, 200 cache HIT, 500}),
 *           each bucket 25 requests and 5 users (of 5,000): ~6.5 M requests' worth, written
 *           straight into the minute and hour databases in bulk (the shape a flush writes)
 *   measure GET /v1/analytics/… over the last day and the last 30 days (not hour-aligned, so the
 *           minute edges are read too), through a real gateway on loopback, median and p90 of
 *           REPS calls after a warm-up; GET /health is the HTTP floor in the same run
 *   compare the 30-day requests graph folded in-process from hour buckets (what the API does)
 *           against folding the same range from minute buckets (what hour buckets save)
 *
 * Standalone: `node dist/bench/scenarios/analytics.js [--json out.json]`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { createGateway } from '../../core/gateway.js';
import { loadConfigText } from '../../core/config/load.js';
import { createLogger } from '../../core/logger.js';
import { standardPlugins } from '../../plugins/index.js';
import { emptyBucket, emptyUsers, mergeBucket, mergeUsers, type Bucket, type BucketKey, type UserCounts } from '../../plugins/analytics/bucket.js';
import { binOf } from '../../plugins/analytics/histogram.js';
import { hourOf, minuteOf, openBucketDbs, type BucketDbs } from '../../plugins/analytics/rollup.js';
import { scan, series } from '../../plugins/analytics/query.js';
import { sums } from '../../plugins/analytics/folds.js';
import type { Scenario, ScenarioResult } from '../lib/scenario.js';
import { median, percentile, round } from '../lib/stats.js';
import { fmt, renderTable } from '../lib/table.js';
import { runTempDir } from '../lib/temp-dir.js';

const DAYS = 30;
const REQUESTS_PER_BUCKET = 25;
const USERS_PER_BUCKET = 5;
/** Distinct users over the month: an hour bucket sees up to 300 of them. */
const USER_POOL = 5000;
const REPS = 20;
const WARMUP = 3;
const ADMIN_KEY = 'gw-bench-analytics-admin-key-0123456789abcdef';
const WORKSPACE_ID = 'bench-ws';

/** The dimensions of each seeded minute: model × outcome. */
const DIMS: ReadonlyArray<{ model: string; status: number; cache: string; latency: number; cost: number }> = [
  { model: 'gpt-4o', status: 200, cache: 'MISS', latency: 420, cost: 0.9 },
  { model: 'gpt-4o', status: 200, cache: 'HIT', latency: 2, cost: 0 },
  { model: 'gpt-4o', status: 500, cache: 'MISS', latency: 30, cost: 0 },
  { model: 'gpt-4o-mini', status: 200, cache: 'MISS', latency: 180, cost: 0.05 },
  { model: 'gpt-4o-mini', status: 200, cache: 'HIT', latency: 1.5, cost: 0 },
  { model: 'gpt-4o-mini', status: 500, cache: 'MISS', latency: 25, cost: 0 },
];

const ROUTES = [
  'graphs/requests',
  'graphs/cost',
  'graphs/latency',
  'graphs/users',
  'graphs/errors/status-codes',
  'graphs/cache/hit-rate',
  'summary/cache',
  'groups/users',
  'groups/metadata/env',
] as const;

function seedBucket(d: (typeof DIMS)[number], minute: number): Bucket {
  const b = emptyBucket();
  b.requests = REQUESTS_PER_BUCKET;
  b.errors = d.status >= 400 ? REQUESTS_PER_BUCKET : 0;
  b.cost = d.cost * REQUESTS_PER_BUCKET;
  b.prompt_tokens = d.status === 200 && d.cache !== 'HIT' ? 40 * REQUESTS_PER_BUCKET : 0;
  b.completion_tokens = b.prompt_tokens / 2;
  b.latency_ms = d.latency * REQUESTS_PER_BUCKET;
  // A spread of latencies around the dimension's typical one, so percentiles have work to do.
  b.hist = [binOf(d.latency * 0.7), 10, binOf(d.latency), 10, binOf(d.latency * 2.5), 5];
  b.last_at = minute * 60_000 + 59_000;
  return b;
}

function seedUsers(b: Bucket, minute: number): UserCounts {
  const u = emptyUsers();
  for (let i = 0; i < USERS_PER_BUCKET; i++) {
    u.names.push(`user-${(minute * USERS_PER_BUCKET + i) % USER_POOL}`);
    u.requests.push(REQUESTS_PER_BUCKET / USERS_PER_BUCKET);
    u.cost.push(b.cost / USERS_PER_BUCKET);
  }
  return u;
}

/** Writes DAYS of buckets ending at `endMinute`; one transaction a day. Returns the requests seeded. */
async function seed(root: Parameters<typeof openBucketDbs>[0], dbs: BucketDbs, endMinute: number): Promise<{ requests: number; minuteBuckets: number; hourBuckets: number }> {
  const first = endMinute - DAYS * 1440;
  let requests = 0;
  let minuteBuckets = 0;
  // Hours straddle the day transactions: they are summed over the whole seed and written last.
  const hours = new Map<string, { key: BucketKey; bucket: Bucket; users: UserCounts }>();
  for (let day = 0; day < DAYS; day++) {
    await root.transaction(() => {
      for (let m = first + day * 1440; m < first + (day + 1) * 1440; m++) {
        const env = m % 3 === 0 ? 'staging' : 'prod';
        for (const d of DIMS) {
          const key: BucketKey = [WORKSPACE_ID, m, 'openai', d.model, d.status, d.cache, 'key-1', JSON.stringify([['env', env]])];
          const bucket = seedBucket(d, m);
          const users = seedUsers(bucket, m);
          void dbs.buckets.minutes.put(key, bucket);
          void dbs.users.minutes.put(key, users);
          minuteBuckets++;
          requests += bucket.requests;
          const hourKey: BucketKey = [...key];
          hourKey[1] = hourOf(m);
          const id = JSON.stringify(hourKey);
          const h = hours.get(id);
          if (h === undefined) hours.set(id, { key: hourKey, bucket: mergeBucket(emptyBucket(), bucket), users: mergeUsers(emptyUsers(), users) });
          else {
            mergeBucket(h.bucket, bucket);
            mergeUsers(h.users, users);
          }
        }
      }
    });
  }
  await root.transaction(() => {
    for (const { key, bucket, users } of hours.values()) {
      void dbs.buckets.hours.put(key, bucket);
      void dbs.users.hours.put(key, users);
    }
  });
  return { requests, minuteBuckets, hourBuckets: hours.size };
}

interface Timing {
  route: string;
  range: string;
  medianMs: number;
  p90Ms: number;
  bytes: number;
}

async function timeGet(url: string, headers: Record<string, string>): Promise<{ ms: number[]; bytes: number; body: string }> {
  const ms: number[] = [];
  let body = '';
  for (let i = 0; i < WARMUP + REPS; i++) {
    const t0 = performance.now();
    const res = await request(url, { headers });
    body = await res.body.text();
    const elapsed = performance.now() - t0;
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${body.slice(0, 200)}`);
    if (i >= WARMUP) ms.push(elapsed);
  }
  return { ms, bytes: Buffer.byteLength(body), body };
}

/** Seeds a fresh gateway's store and times the API. `log` reports progress. */
export async function runAnalyticsBench(log: (line: string) => void): Promise<ScenarioResult> {
  const dir = runTempDir('analytics');
  const text = 'server: {host: 127.0.0.1, port: 0}\npipeline:\n  - analytics\n  - auth\n';
  const { config, problems, locate } = loadConfigText(text, join(dir, 'gateway.yaml'), {});
  if (config === null || problems.length > 0) throw new Error(`bench config invalid: ${JSON.stringify(problems)}`);
  config.store.path = join(dir, 'data');
  const gw = await createGateway(config, { catalog: standardPlugins, locate, logger: createLogger({ level: 'warn' }), env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  try {
    const dbs = openBucketDbs(gw.store.root);
    const now = Date.now();
    const endMinute = minuteOf(now) + 1;
    log(`analytics: seeding ${DAYS} days × 1440 minutes × ${DIMS.length} buckets`);
    const t0 = performance.now();
    const seeded = await seed(gw.store.root, dbs, endMinute);
    const seedMs = performance.now() - t0;
    log(`analytics: seeded ${seeded.minuteBuckets} minute and ${seeded.hourBuckets} hour buckets (${seeded.requests} requests) in ${Math.round(seedMs)} ms`);

    const headers = { 'x-gateway-api-key': ADMIN_KEY };
    // Not hour-aligned: both ends are partial hours, read from minute buckets.
    const end = new Date(endMinute * 60_000 - 17 * 60_000 - 13_000);
    const ranges = { '1 day': 1, '30 days': DAYS - 0.1 } as const;
    const timings: Timing[] = [];
    const health = await timeGet(`${gw.url}/health`, {});
    timings.push({ route: 'GET /health (HTTP floor)', range: '-', medianMs: round(median(health.ms)), p90Ms: round(percentile(health.ms, 90)), bytes: health.bytes });
    const totals: Record<string, number> = {};
    for (const [label, days] of Object.entries(ranges)) {
      const qs = new URLSearchParams({ time_of_generation_min: new Date(end.getTime() - days * 86_400_000).toISOString(), time_of_generation_max: end.toISOString() });
      for (const route of ROUTES) {
        log(`analytics: ${route} over ${label}`);
        const r = await timeGet(`${gw.url}/v1/analytics/${route}?${qs}`, headers);
        timings.push({ route, range: label, medianMs: round(median(r.ms)), p90Ms: round(percentile(r.ms, 90)), bytes: r.bytes });
        if (route === 'graphs/requests') totals[label] = (JSON.parse(r.body) as { summary: { total: number } }).summary.total;
      }
    }

    // In-process: the 30-day requests fold from hour buckets vs. from minute buckets only.
    const q = { workspaces: [WORKSPACE_ID], from: endMinute - DAYS * 1440, to: endMinute, filters: {} };
    const fold = (step: 1 | 60): number[] => {
      const out: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        const query = { ...q, step };
        series((visit) => scan(dbs.buckets, query, 0, visit), query, sums);
        out.push(performance.now() - t);
      }
      return out;
    };
    const fromHours = median(fold(60));
    const fromMinutes = median(fold(1));

    const requests30 = totals['30 days'] ?? 0;
    // What the 30-day range covers of the seed, minute by minute: the API must agree exactly.
    const rangeFrom = Math.floor((end.getTime() - ranges['30 days'] * 86_400_000) / 60_000);
    const rangeTo = Math.ceil(end.getTime() / 60_000);
    const expected30 = (Math.min(rangeTo, endMinute) - Math.max(rangeFrom, endMinute - DAYS * 1440)) * DIMS.length * REQUESTS_PER_BUCKET;
    return {
      name: 'analytics',
      isolates: 'analytics API query time over a month of rollups (folding buckets, never request logs), against the HTTP floor',
      table: {
        title: `Analytics API, ${seeded.requests.toLocaleString('en')} requests' worth of rollups (${seeded.minuteBuckets.toLocaleString('en')} minute buckets), ${REPS} calls each after ${WARMUP} warm-up`,
        columns: ['route', 'range', 'median ms', 'p90 ms', 'bytes'],
        rows: timings.map((t) => [t.route, t.range, fmt(t.medianMs, 2), fmt(t.p90Ms, 2), String(t.bytes)]),
      },
      notes: [
        `seeding took ${Math.round(seedMs)} ms (${seeded.hourBuckets} hour buckets)`,
        `30-day requests total ${requests30.toLocaleString('en')}, expected ${expected30.toLocaleString('en')} (of ${seeded.requests.toLocaleString('en')} seeded: the range is 29.9 days and ends 17 min before the seed does)`,
        `30-day requests fold in-process: ${fmt(fromHours, 1)} ms from hour buckets, ${fmt(fromMinutes, 1)} ms from minute buckets only (×${fmt(fromMinutes / fromHours, 0)})`,
      ],
      headlines: [
        ['analytics 30-day graphs/requests, median', `${fmt(timings.find((t) => t.route === 'graphs/requests' && t.range === '30 days')?.medianMs, 2)} ms`],
        ['analytics 30-day graphs/latency, median', `${fmt(timings.find((t) => t.route === 'graphs/latency' && t.range === '30 days')?.medianMs, 2)} ms`],
      ],
      checks: [{ name: '30-day requests total = the seed in range', value: requests30, target: `= ${expected30}`, unit: 'requests', pass: requests30 === expected30 }],
      data: { seeded, seedMs: round(seedMs), timings, totals, foldMs: { hours: round(fromHours), minutes: round(fromMinutes) } },
    };
  } finally {
    await gw.close();
  }
}

export const analytics: Scenario = {
  name: 'analytics',
  isolates: 'analytics API query time over a month of rollups (folding buckets, never request logs), against the HTTP floor',
  run: (ctx) => runAnalyticsBench((line) => ctx.log(line)),
};

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { json: { type: 'string' } } });
  const result = await runAnalyticsBench((line) => process.stderr.write(`${line}\n`));
  process.stdout.write(`${renderTable(result.table!)}\n${result.notes.map((n) => `  ${n}`).join('\n')}\n`);
  if (values.json !== undefined) writeFileSync(values.json, JSON.stringify(result, null, 2));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch(function fail(error: unknown) {
    process.stderr.write(`analytics bench failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    process.exit(1);
  });
}
