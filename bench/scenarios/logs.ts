/**
 * The logs API over a million records (issue 11, item 5): a filtered first page of GET /v1/logs,
 * and chat latency while four log exports stream.
 *
 *   seed     RECORDS request logs over the last 7 days, written straight into a data dir with
 *            the logging plugin's own `writeLogs` (record + index entries, one transaction per
 *            10,000): 5 workspaces, 20 models, 4 providers, 90% 200 / 5% 429 / 5% 500, 50 API
 *            keys, metadata env prod/staging/canary (1%)
 *   serve    a gateway process (`dist/cli/main.js start`, or `--cli` for another build) on that
 *            data dir: `pipeline: [logging, auth]`, the mock upstream in this process
 *   measure  GET /v1/logs first pages (page_size 50) for each filter, median / p90 / max of REPS
 *            calls; then chat (POST /v1/chat/completions, 8 in flight, closed loop) for DURATION
 *            alone and again while four export downloads loop (two on indexed filters, two that
 *            must read every record: unindexed metadata and cost filters)
 *
 * Standalone: `node dist/bench/scenarios/logs.js [--records N] [--data DIR] [--cli PATH] [--reps N] [--warmup N] [--duration S] [--json out.json]`.
 * `--data` keeps the seeded dir for another run (a second run on it skips the seed), so two
 * builds can be measured on the same records.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool, request } from 'undici';
import { openStore } from '../../core/store/store.js';
import { createLogger } from '../../core/logger.js';
import { openLogDb, type StoredLog } from '../../plugins/logging/log-db.js';
import { BACKFILL_META, writeLogs } from '../../plugins/logging/log-index.js';
import { openLogIndex, partSizeFor } from '../../plugins/logging/log-parts.js';
import { idPrefix } from '../../plugins/logging/scan.js';
import { startMockUpstream } from '../mock-upstream.js';
import { startService } from '../lib/processes.js';
import { freePort } from '../lib/ports.js';
import type { Scenario, ScenarioResult } from '../lib/scenario.js';
import { median, percentile, round } from '../lib/stats.js';
import { fmt, renderTable } from '../lib/table.js';
import { runTempDir } from '../lib/temp-dir.js';

const ADMIN_KEY = 'gw-bench-logs-admin-key-0123456789abcdefghij';
const MASTER_KEY = 'gw-bench-logs-master-key-0123456789abcdefghijklmnop';
const DEFAULT_CLI = fileURLToPath(new URL('../../cli/main.js', import.meta.url));
const DAY_MS = 86_400_000;
/** The gateway's bound here: nothing is swept during the bench. */
const MAX_RECORDS = 100_000_000;
const BATCH = 10_000;
const CHAT_CONCURRENCY = 8;

const WORKSPACES = ['ws-0', 'ws-1', 'ws-2', 'ws-3', 'ws-4'];
const PROVIDERS = ['openai', 'anthropic', 'bedrock', 'gemini'];
const model = (i: number): string => `model-${String(i % 20).padStart(2, '0')}`;

export interface LogsBenchOptions {
  records: number;
  /** A data dir to seed (or reuse when already seeded); a temp dir when absent. */
  data?: string;
  /** The gateway build to start. */
  cli: string;
  reps: number;
  /** Calls before the measured ones (1; 0 for a build whose calls take seconds). */
  warmup: number;
  durationS: number;
}

function record(i: number, n: number, start: number): StoredLog {
  const ms = start + Math.floor((i * 7 * DAY_MS) / n);
  const id = `${idPrefix(ms)}-7${(i % 4096).toString(16).padStart(3, '0')}-8000-${i.toString(16).padStart(12, '0')}`;
  const r = (i * 2654435761) % 100; // a spread independent of i's low digits
  const status = r < 90 ? 200 : r < 95 ? 429 : 500;
  return {
    id,
    created_at: new Date(ms).toISOString(),
    trace_id: i % 7 === 0 ? `trace-${Math.floor(i / 7)}` : id,
    span_id: null,
    parent_span_id: null,
    span_name: null,
    organisation_id: 'org-bench',
    workspace_id: WORKSPACES[i % WORKSPACES.length]!,
    api_key_id: `key-${i % 50}`,
    virtual_key: null,
    metadata: { env: i % 100 === 0 ? 'canary' : i % 3 === 0 ? 'staging' : 'prod', team: `team-${i % 12}` },
    method: 'POST',
    path: '/v1/chat/completions',
    route: 'chat.completions',
    provider: PROVIDERS[i % PROVIDERS.length]!,
    model: model(i),
    config: null,
    last_used_option_index: '0',
    retry_count: 0,
    cache_status: 'DISABLED',
    stream: i % 4 === 0,
    status,
    is_success: status === 200,
    source: 'upstream',
    error_code: status === 200 ? null : status === 429 ? 'rate_limit_exceeded' : 'upstream_error',
    aborted: false,
    latency: { total_ms: 420.5, upstream_ms: 410.25, gateway_ms: 10.25, ttfb_ms: null },
    usage: { prompt_tokens: 120, completion_tokens: 60, total_tokens: 180, cached_tokens: 0, reasoning_tokens: 0, source: 'upstream' },
    cost_cents: (i % 1000) / 100,
    priced_as: null,
    request_body: null,
    response_body: null,
  };
}

/** Seeds `n` records (with their index entries) into the store at `dir`, unless already there. */
async function seed(dir: string, n: number, log: (line: string) => void): Promise<{ seeded: number; ms: number }> {
  const store = openStore({ dir, log: createLogger({ level: 'warn' }), env: { GATEWAY_MASTER_KEY: MASTER_KEY } });
  try {
    const db = openLogDb(store.root);
    const idx = openLogIndex(store.root);
    // In the partitions the gateway below would write them to.
    const partSize = partSizeFor(MAX_RECORDS);
    const have = (db.getStats() as { entryCount?: number }).entryCount ?? 0;
    if (have >= n) {
      log(`logs: ${have} records already in ${dir}`);
      return { seeded: 0, ms: 0 };
    }
    const start = Date.now() - 7 * DAY_MS;
    const t0 = performance.now();
    for (let from = 0; from < n; from += BATCH) {
      const batch = Array.from({ length: Math.min(n, from + BATCH) - from }, (_, k) => record(from + k, n, start));
      const { failed, error } = await writeLogs(db, idx, batch, partSize);
      if (failed > 0) throw new Error(`logs: ${failed} seeded records were not written`, { cause: error });
      if ((from / BATCH) % 10 === 0) log(`logs: seeded ${from + BATCH} / ${n}`);
    }
    // Every seeded record is indexed: the gateway has nothing to backfill.
    await idx.putMeta(BACKFILL_META, { cursor: null, done: true });
    await store.flush();
    return { seeded: n, ms: performance.now() - t0 };
  } finally {
    await store.close();
  }
}

interface Timing {
  query: string;
  medianMs: number;
  p90Ms: number;
  maxMs: number;
  total: number;
  rows: number;
}

async function timeGet(url: string, key: string, reps: number, warmup: number): Promise<{ ms: number[]; body: { total?: number; data?: unknown[] } }> {
  const ms: number[] = [];
  let body = {};
  for (let i = 0; i < reps + warmup; i++) {
    const t0 = performance.now();
    const res = await request(url, { headers: { 'x-gateway-api-key': key } });
    const text = await res.body.text();
    const elapsed = performance.now() - t0;
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${text.slice(0, 200)}`);
    body = JSON.parse(text) as object;
    if (i >= warmup) ms.push(elapsed); // warm-up calls fill the page cache
  }
  return { ms, body };
}

/** Chat latencies over `seconds`, CHAT_CONCURRENCY in flight. */
async function chatLoad(gatewayUrl: string, mockUrl: string, seconds: number): Promise<number[]> {
  const pool = new Pool(gatewayUrl, { connections: CHAT_CONCURRENCY });
  const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello from the logs bench' }] });
  const headers = {
    'content-type': 'application/json',
    'x-gateway-api-key': ADMIN_KEY,
    'x-gateway-provider': 'openai',
    'x-gateway-custom-host': `${mockUrl}/v1`,
    authorization: 'Bearer sk-bench',
  };
  const end = performance.now() + seconds * 1000;
  const ms: number[] = [];
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      const t0 = performance.now();
      const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers, body });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`chat: ${res.statusCode}`);
      ms.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CHAT_CONCURRENCY }, worker));
  await pool.close();
  return ms;
}

const EXPORTS: ReadonlyArray<{ label: string; filters: Record<string, unknown> }> = [
  { label: 'ai_model (indexed)', filters: { ai_model: 'model-07' } },
  { label: 'status_code 500 (indexed)', filters: { status_code: '500' } },
  { label: 'metadata env canary (unindexed: reads every record)', filters: { metadata: { env: 'canary' } } },
  { label: 'cost_min 9.99 (unindexed: reads every record)', filters: { cost_min: 9.99 } },
];

async function admin(url: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await request(`${url}/v1${path}`, { method: method as 'GET', headers: { 'content-type': 'application/json', 'x-gateway-api-key': ADMIN_KEY }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 200)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Creates and runs the four exports; returns their ids once each is `success`. */
async function prepareExports(url: string, log: (line: string) => void): Promise<Array<{ id: string; total: number; prepareMs: number }>> {
  const out = [];
  for (const e of EXPORTS) {
    const t0 = performance.now();
    const made = await admin(url, 'POST', '/logs/exports', { filters: e.filters, requested_data: ['id', 'created_at', 'ai_model', 'response_status_code', 'cost', 'metadata'] });
    const id = made.id as string;
    await admin(url, 'POST', `/logs/exports/${id}/start`);
    for (;;) {
      const state = await admin(url, 'GET', `/logs/exports/${id}`);
      if (state.status === 'success') break;
      if (state.status !== 'in_progress') throw new Error(`export ${e.label}: ${String(state.status)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const prepareMs = performance.now() - t0;
    log(`logs: export ${e.label}: ${String(made.total)} lines, created and run in ${Math.round(prepareMs)} ms`);
    out.push({ id, total: made.total as number, prepareMs });
  }
  return out;
}

/** Downloads the exports in a loop each, until `stop` resolves; returns bytes and downloads done. */
async function exportLoops(url: string, ids: string[], stop: Promise<void>): Promise<{ downloads: number; bytes: number }> {
  let done = false;
  void stop.then(() => (done = true));
  let downloads = 0;
  let bytes = 0;
  await Promise.all(
    ids.map(async (id) => {
      while (!done) {
        const res = await request(`${url}/v1/logs/exports/${id}/download`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
        for await (const chunk of res.body) {
          bytes += (chunk as Buffer).length;
          if (done) break;
        }
        if (!done) downloads++;
        else res.body.destroy();
      }
    }),
  );
  return { downloads, bytes };
}

const summary = (ms: number[]): { n: number; p50: number; p99: number; max: number } => ({ n: ms.length, p50: round(median(ms)), p99: round(percentile(ms, 99)), max: round(Math.max(...ms)) });

export async function runLogsBench(options: LogsBenchOptions, log: (line: string) => void): Promise<ScenarioResult> {
  const dir = options.data ?? runTempDir('logs');
  mkdirSync(dir, { recursive: true });
  const data = join(dir, 'data');
  log(`logs: seeding ${options.records} records in ${data}`);
  const seeded = await seed(data, options.records, log);
  if (seeded.seeded > 0) log(`logs: seeded ${seeded.seeded} records in ${Math.round(seeded.ms)} ms`);

  const mock = await startMockUpstream({ port: 0 });
  const port = await freePort();
  const config = join(dir, 'gateway.yaml');
  writeFileSync(
    config,
    `server: {host: 127.0.0.1, port: ${port}}\nstore: {path: ${JSON.stringify(data)}}\nsecurity: {custom_hosts: {allow: [127.0.0.1]}}\n` +
      `pipeline:\n  - logging: {max_records: ${MAX_RECORDS}, retention_days: 3650}\n  - auth\n`,
  );
  const gw = await startService({
    name: 'logs-gateway',
    command: process.execPath,
    args: [options.cli, 'start', '--config', config],
    ready: /listening on (http:\/\/[^\s]+)/,
    timeoutMs: 120_000,
    env: { ...process.env, GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_MASTER_KEY: MASTER_KEY },
  });
  try {
    // The workspace ids are the seed's, not stored workspaces: an organisation key names none, so
    // the workspace filter is measured through the export (which takes any id) and the list
    // filters below are the organisation's.
    const queries: Array<[string, Record<string, string>]> = [
      ['no filter', {}],
      ['model (1 in 20)', { model: 'model-07' }],
      ['status 500 (1 in 20)', { status: '500' }],
      ['provider + status 429', { provider: 'anthropic', status: '429' }],
      ['api_key_id (1 in 50)', { api_key_id: 'key-17' }],
      ['trace_id (7 records)', { trace_id: 'trace-1000' }],
      ['model + last 24 h', { model: 'model-03', start_time: new Date(Date.now() - DAY_MS).toISOString() }],
      ['metadata env canary (unindexed)', { metadata: '{"env":"canary"}' }],
    ];
    const timings: Timing[] = [];
    for (const [label, q] of queries) {
      log(`logs: GET /v1/logs ${label}`);
      const r = await timeGet(`${gw.url}/v1/logs?${new URLSearchParams({ ...q, page_size: '50' })}`, ADMIN_KEY, options.reps, options.warmup);
      timings.push({ query: label, medianMs: round(median(r.ms)), p90Ms: round(percentile(r.ms, 90)), maxMs: round(Math.max(...r.ms)), total: r.body.total ?? -1, rows: r.body.data?.length ?? 0 });
    }

    const exports = await prepareExports(gw.url, log);
    log(`logs: chat alone, ${options.durationS} s`);
    await chatLoad(gw.url, mock.url, 1);
    const alone = summary(await chatLoad(gw.url, mock.url, options.durationS));
    log(`logs: chat while four export downloads loop, ${options.durationS} s`);
    let stopLoops: () => void = () => undefined;
    const stop = new Promise<void>((resolve) => (stopLoops = resolve));
    const loops = exportLoops(gw.url, exports.map((e) => e.id), stop);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const during = summary(await chatLoad(gw.url, mock.url, options.durationS));
    stopLoops();
    const streamed = await loops;

    const indexed = timings.filter((t) => !t.query.includes('unindexed') && t.query !== 'no filter');
    const worstIndexed = Math.max(...indexed.map((t) => t.medianMs));
    return {
      name: 'logs',
      isolates: 'GET /v1/logs and log exports over a million records: first-page time per filter, and chat latency while four exports stream',
      table: {
        title: `GET /v1/logs first page (page_size 50) over ${options.records.toLocaleString('en')} records, ${options.reps} calls each after ${options.warmup} warm-up`,
        columns: ['filter', 'median ms', 'p90 ms', 'max ms', 'total', 'rows'],
        rows: timings.map((t) => [t.query, fmt(t.medianMs, 2), fmt(t.p90Ms, 2), fmt(t.maxMs, 2), String(t.total), String(t.rows)]),
      },
      notes: [
        seeded.seeded > 0 ? `seeding ${seeded.seeded.toLocaleString('en')} records (with index entries) took ${Math.round(seeded.ms)} ms` : 'reused a seeded data dir',
        ...exports.map((e, i) => `export ${EXPORTS[i]!.label}: ${e.total} lines, created and run in ${Math.round(e.prepareMs)} ms`),
        `chat alone: ${alone.n} requests, p50 ${fmt(alone.p50, 2)} ms, p99 ${fmt(alone.p99, 2)} ms, max ${fmt(alone.max, 2)} ms`,
        `chat during four export downloads: ${during.n} requests, p50 ${fmt(during.p50, 2)} ms, p99 ${fmt(during.p99, 2)} ms, max ${fmt(during.max, 2)} ms (${streamed.downloads} downloads, ${Math.round(streamed.bytes / 1e6)} MB streamed)`,
      ],
      headlines: [
        ['logs: slowest indexed first page, median', `${fmt(worstIndexed, 2)} ms`],
        ['logs: chat p99 alone → during 4 exports', `${fmt(alone.p99, 2)} → ${fmt(during.p99, 2)} ms`],
      ],
      checks: [{ name: 'filtered first page (indexed filters), slowest median', value: worstIndexed, target: '≤ 50 ms', unit: 'ms', pass: worstIndexed <= 50 }],
      data: { records: options.records, seeded, timings, exports, chat: { alone, during, streamed } },
    };
  } finally {
    await gw.stop();
    await mock.close();
  }
}

export const logs: Scenario = {
  name: 'logs',
  isolates: 'GET /v1/logs and log exports over a million records: first-page time per filter, and chat latency while four exports stream',
  run: (ctx) => runLogsBench({ records: ctx.options.duration < 10 ? 100_000 : 1_000_000, cli: DEFAULT_CLI, reps: 10, warmup: 1, durationS: ctx.options.duration }, (line) => ctx.log(line)),
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { records: { type: 'string' }, data: { type: 'string' }, cli: { type: 'string' }, reps: { type: 'string' }, warmup: { type: 'string' }, duration: { type: 'string' }, json: { type: 'string' } },
  });
  if (values.cli !== undefined && !existsSync(values.cli)) throw new Error(`no gateway build at ${values.cli}`);
  const result = await runLogsBench(
    { records: Number(values.records ?? 1_000_000), data: values.data, cli: values.cli ?? DEFAULT_CLI, reps: Number(values.reps ?? 10), warmup: Number(values.warmup ?? 1), durationS: Number(values.duration ?? 10) },
    (line) => process.stderr.write(`${line}\n`),
  );
  process.stdout.write(`${renderTable(result.table!)}\n${result.notes.map((n) => `  ${n}`).join('\n')}\n`);
  if (values.json !== undefined) writeFileSync(values.json, JSON.stringify(result, null, 2));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`logs bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
