/**
 * Guardrail verdicts in analytics, distributed mode: three in-process hosts on one real PostgreSQL
 * (and Valkey) each fold their requests and add them to `gateway_analytics.guardrails`, a jsonb
 * map added key by key. `GET /v1/analytics/groups/guardrails` through any host answers the sums
 * over all of them; a host with nothing flushed yet folds in its own pending counts. The column
 * comes from its own migration step with a default of `{}`: rows without guardrails hold `{}`, and
 * a host not upgraded yet (its upsert names no `guardrails`) neither breaks nor erases the counts.
 *
 * The upgrade itself: a database at the first step, with rows, migrated by the driver when it opens;
 * those rows read without guardrails and then take the new counts.
 *
 * The checks are this file's own, registered through the `guardrails` service.
 */
import t from 'tap';
import { request } from 'undici';
import pg from 'pg';
import { needServices } from './helpers/services.js';
import { ADMIN_KEY, direct, startGateway, startMock, type MockUpstream, type StartedGateway, type Teardown } from './helpers/gateway.js';
import { MASTER_KEY } from './helpers/hosts.js';
import { until } from './helpers/distributed-logs.js';
import { createLogger, defineCheck, definePlugin, runMigrations, type Distributed, type GuardrailsLog, type LogRecord, type PluginDefinition } from '../core/index.js';
import { MIGRATIONS, openPgStore } from '../plugins/analytics/pg-store.js';
import { createRollupWith } from '../plugins/analytics/rollup.js';
import { guardrailsGroup } from '../plugins/analytics/groups.js';
import type { Bucket } from '../plugins/analytics/bucket.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const maxLen = defineCheck<{ max: number }>({
  id: 'test.maxLen',
  description: 'at most max characters',
  parameters: { type: 'object', properties: { max: { type: 'integer', minimum: 0 } }, required: ['max'], additionalProperties: false },
  run: (ctx, p) => ({ verdict: ctx.text.length <= p.max }),
});

const broken = defineCheck<Record<string, never>>({
  id: 'test.broken',
  description: 'throws',
  parameters: { type: 'object' },
  run: () => {
    throw new Error('boom');
  },
});

const testChecks = definePlugin({
  name: 'test-checks',
  setup(app) {
    for (const c of [maxLen, broken]) app.service('guardrails').register(c);
  },
}) as PluginDefinition<never>;

function host(t: Teardown, env: NodeJS.ProcessEnv, flushMs: number): Promise<StartedGateway> {
  return startGateway(t, {
    yaml: `pipeline:\n  - analytics: {flush_ms: ${flushMs}}\n  - auth\n  - config-strategy\n  - guardrails\n  - test-checks\n  - admin-catalog\n`,
    plugins: { 'test-checks': testChecks },
    env,
  });
}

async function chat(gw: StartedGateway, mock: MockUpstream, o: { input?: Json[]; output?: Json[]; run: string }): Promise<number> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-metadata': JSON.stringify({ run: o.run }) };
  if (o.input !== undefined || o.output !== undefined) {
    const config: Json = { provider: 'openai', api_key: 'sk-t', custom_host: direct(mock)['x-gateway-custom-host'] };
    if (o.input) config.input_guardrails = o.input;
    if (o.output) config.output_guardrails = o.output;
    headers['x-gateway-config'] = JSON.stringify(config);
  } else Object.assign(headers, direct(mock));
  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'twenty characters!!' }] }),
  });
  await res.body.dump();
  return res.statusCode;
}

const rows = (body: Json): Array<[string, string, number, number, number]> => body.data.map((r: Json) => [r.check, r.phase, r.pass, r.fail, r.error]);

/** The columns of a host from before the guardrails step: its upsert does not name `guardrails`. */
const OLD_COLUMNS = 'tier, workspace_id, minute, provider, model, status, cache, api_key, metadata, requests, errors, cost, prompt_tokens, completion_tokens, latency_ms, fallback, last_at, hist, retried, user_requests, user_cost, users_over';
const OLD_UPSERT = `INSERT INTO gateway_analytics AS t (${OLD_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0, 0, 0, 0, 0, 0, 0, '{}', '{}', '{}', '{}', 0)
  ON CONFLICT (tier, workspace_id, minute, provider, model, status, cache, api_key, metadata) DO UPDATE SET requests = t.requests + excluded.requests`;

t.test('guardrail verdicts are summed over hosts in PostgreSQL, and older hosts leave them alone', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const [postgres, valkey] = await Promise.all([svc.postgres(), svc.redis()]);
  const url = await postgres.database();
  const env = { GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_MASTER_KEY: MASTER_KEY, GATEWAY_POSTGRES_URL: url, GATEWAY_REDIS_URL: valkey.url };
  const mock = await startMock(t);
  const a = await host(t, env, 50);
  const b = await host(t, env, 50);
  const c = await host(t, env, 60_000); // flushes only when closed: what it reads of its own is pending
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.teardown(() => client.end());

  const start = Date.now();
  const run = `dist-guardrails-${start}`;
  const read = async (gw: StartedGateway, params: Json = {}, hours = 0): Promise<Json> => {
    const qs = new URLSearchParams({
      time_of_generation_min: new Date(start - hours * 3_600_000 - 60_000).toISOString(),
      time_of_generation_max: new Date(Date.now() + hours * 3_600_000 + 60_000).toISOString(),
      ...params,
    });
    const res = await request(`${gw.url}/v1/analytics/groups/guardrails?${qs}`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
    const body = (await res.body.json()) as Json;
    if (res.statusCode !== 200) throw new Error(`groups/guardrails: ${res.statusCode} ${JSON.stringify(body)}`);
    return body;
  };

  const migrations = await client.query<{ v: number }>("SELECT max(version) AS v FROM gateway_migrations WHERE component = 'analytics'");
  t.equal(migrations.rows[0]!.v, 2, 'analytics is at its second migration step');

  // Host a: 2 passes and a deny; host b: 3 failures (no deny), an error, and a request without guardrails.
  for (let i = 0; i < 2; i++) t.equal(await chat(a, mock, { run, input: [{ 'test.maxLen': { max: 1000 } }] }), 200);
  t.equal(await chat(a, mock, { run, input: [{ 'test.maxLen': { max: 3 }, deny: true }] }), 446);
  for (let i = 0; i < 3; i++) t.equal(await chat(b, mock, { run, input: [{ 'test.maxLen': { max: 3 } }] }), 200);
  t.equal(await chat(b, mock, { run, output: [{ 'test.broken': {}, on_error: 'allow' }] }), 200);
  t.equal(await chat(b, mock, { run: `${run}-plain` }), 200);

  const expected = [
    ['test.maxLen', 'input', 2, 4, 0],
    ['test.broken', 'output', 0, 0, 1],
  ];
  for (const [name, gw] of [['a', a], ['b', b], ['c', c]] as const) {
    const body = await until(() => read(gw), (r) => JSON.stringify(rows(r)) === JSON.stringify(expected));
    t.same(rows(body), expected, `through ${name}: the sums over the hosts`);
    t.equal(body.denied, 1, `through ${name}: one request denied`);
  }
  t.same(rows(await read(a, {}, 12)), expected, 'hour data points agree');
  t.same(rows(await read(b, { status_code: '446' })), [['test.maxLen', 'input', 0, 1, 0]], 'filters apply: status_code');
  t.same(rows(await read(b, { metadata: JSON.stringify({ run: `${run}-plain` }) })), [], 'metadata: the request without guardrails');

  // Summed per status and run in case the traffic straddled a minute (then it is two rows each).
  // The request without guardrails may come in a later flush than the sums waited for above.
  const stored = await until(
    () => client.query<{ metadata: string; status: number; guardrails: Record<string, number> }>("SELECT metadata, status, guardrails FROM gateway_analytics WHERE tier = 'm'"),
    (q) => q.rows.some((r) => r.metadata.includes('-plain')),
  );
  const maps: Record<string, Record<string, number>> = {};
  for (const r of stored.rows) {
    const into = (maps[`${r.status} ${r.metadata.includes('-plain') ? 'plain' : 'guarded'}`] ??= {});
    for (const [key, n] of Object.entries(r.guardrails)) into[key] = (into[key] ?? 0) + n;
  }
  t.same(
    maps,
    {
      '200 guarded': { 'test.maxLen:input:pass': 2, 'test.maxLen:input:fail': 3, 'test.broken:output:error': 1 },
      '446 guarded': { denied: 1, 'test.maxLen:input:fail': 1 },
      '200 plain': {},
    },
    'the jsonb maps: non-zero counts, added key by key over the hosts; {} for the bucket without guardrails',
  );

  // Host c: a deny it has not flushed. It reads it at once; the others see it once c flushes.
  t.equal(await chat(c, mock, { run, input: [{ 'test.maxLen': { max: 3 }, deny: true }] }), 446);
  const throughC = await read(c);
  t.same(rows(throughC), [['test.maxLen', 'input', 2, 5, 0], ['test.broken', 'output', 0, 0, 1]], 'through c: the stored sums and its pending deny, each once');
  t.equal(throughC.denied, 2);
  t.equal((await read(a)).denied, 1, "through a: c's pending counts are not stored yet");

  // A host from before the guardrails step adds to the row holding guardrail counts, and inserts a row of its own.
  const minute = Math.floor(Date.now() / 60_000);
  const guarded = await client.query<Json>("SELECT workspace_id, minute, provider, model, status, cache, api_key, metadata FROM gateway_analytics WHERE tier = 'm' AND status = 200 AND guardrails <> '{}'::jsonb");
  const k = guarded.rows[0]!;
  await client.query(OLD_UPSERT, ['m', k.workspace_id, k.minute, k.provider, k.model, k.status, k.cache, k.api_key, k.metadata, 4]);
  await client.query(OLD_UPSERT, ['m', k.workspace_id, minute, k.provider, k.model, 200, k.cache, k.api_key, JSON.stringify([['run', `${run}-old`]]), 5]);
  const old = await client.query<{ requests: number; guardrails: Json }>("SELECT requests, guardrails FROM gateway_analytics WHERE tier = 'm' AND status = 200 AND metadata = $1", [JSON.stringify([['run', `${run}-old`]])]);
  t.same(old.rows, [{ requests: 5, guardrails: {} }], "an older host's new row gets the default {}");
  const afterOld = await read(a);
  t.same(rows(afterOld), expected, 'its upsert onto a row with guardrail counts keeps them');
  t.equal(afterOld.denied, 1);
  const qs = new URLSearchParams({ time_of_generation_min: new Date(start - 60_000).toISOString(), time_of_generation_max: new Date(Date.now() + 60_000).toISOString(), metadata: JSON.stringify({ run: `${run}-old` }) });
  const requests = await request(`${a.url}/v1/analytics/graphs/requests?${qs}`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
  t.equal(((await requests.body.json()) as Json).summary.total, 5, "and the older host's row reads as any other");
});

t.test('an analytics database from before the guardrails step: migrated on open, its rows take guardrail counts', async (t) => {
  const svc = needServices(t, ['postgres']);
  if (!svc) return;
  const postgres = await svc.postgres();
  const pool = new pg.Pool({ connectionString: await postgres.database() });
  t.teardown(() => pool.end());
  const log = createLogger({ level: 'error', write: () => {} });
  await runMigrations(pool, 'analytics', MIGRATIONS.slice(0, 1), log);
  const minute = Math.floor(Date.UTC(2026, 0, 1, 12, 30) / 60_000);
  // What an older host wrote: a row of three requests, in the table without the column.
  await pool.query(OLD_UPSERT, ['m', 'ws1', minute, 'openai', 'gpt-4o', 200, 'DISABLED', 'k1', '', 3]);

  const store = await openPgStore({ pg: pool } as unknown as Distributed, { flush_ms: 60_000, minute_retention_days: 3650, hour_retention_days: 3650, max_metadata_sets: 10 }, () => 0, log);
  const version = await pool.query<{ v: number }>("SELECT max(version) AS v FROM gateway_migrations WHERE component = 'analytics'");
  t.equal(version.rows[0]!.v, 2, 'migrated to the second step on open');
  const query = { workspaces: ['ws1'], from: minute, to: minute + 1, step: 1 as const, filters: {} };
  const buckets = async (): Promise<Bucket[]> => {
    const out: Bucket[] = [];
    (await store.buckets(query))((b) => out.push(b));
    return out;
  };
  const [before] = await buckets();
  t.equal(before?.requests, 3, 'the old row reads');
  t.notOk(before !== undefined && 'guardrails' in before, 'without a guardrails field, as an LMDB bucket without them');

  const guardrails: GuardrailsLog = {
    verdict: 'denied',
    passed: 0,
    failed: 1,
    redacted: 0,
    results: { before_request_hooks: [{ id: 'g', verdict: false, deny: true, async: false, duration_ms: 1, checks: [{ id: 'test.maxLen', verdict: false, duration_ms: 1 }] }], after_request_hooks: [] },
  };
  const record = {
    created_at: new Date(minute * 60_000 + 5_000).toISOString(),
    workspace_id: 'ws1', provider: 'openai', model: 'gpt-4o', status: 200, is_success: true, cache_status: 'DISABLED', api_key_id: 'k1', metadata: {},
    retry_count: 0, latency: { total_ms: 10, upstream_ms: 0, gateway_ms: 0, ttfb_ms: null }, usage: null, cost_cents: 0, guardrails,
  } as unknown as LogRecord;
  // Two flushes of two processes onto the old row.
  for (let i = 0; i < 2; i++) {
    const rollup = createRollupWith(store.write, { flush_ms: 60_000, max_metadata_sets: 10 }, log);
    rollup.add(record, { error: false, fallback: false });
    await rollup.close();
  }
  const after = await buckets();
  t.equal(after.length, 1, 'one row');
  t.equal(after[0]!.requests, 5, 'the requests add to the old row');
  t.same(guardrailsGroup((visit) => after.forEach((b) => visit(b, ['ws1', minute, 'openai', 'gpt-4o', 200, 'DISABLED', 'k1', ''])), { current_page: 0, page_size: 10 }), {
    object: 'list',
    total: 1,
    data: [{ check: 'test.maxLen', phase: 'input', pass: 0, fail: 2, error: 0, object: 'analytics-group' }],
    denied: 2,
  }, 'and the guardrail counts of both flushes are added key by key');
});
