/**
 * Guardrail verdicts in analytics: each check result counted per check, phase (input, output) and
 * verdict (pass, fail, error), and the requests a guardrail denied, in the rollup buckets (LMDB
 * here; PostgreSQL in distributed-analytics-guardrails.test.ts), read through
 * `GET /v1/analytics/groups/guardrails`.
 *
 * Plain functions: the counting (an error wins over the verdict), the additive flush of two
 * processes into one store (minute and hour), the PostgreSQL map round trip, and buckets without
 * guardrails keeping their shape and their encoded size. A real gateway with this file's own
 * checks (registered through the `guardrails` service, so nothing leans on the built-ins): exact
 * counts for known traffic, a read right after a request, stored + pending counted once, filters,
 * workspace isolation, scope, paging and the OpenAPI document.
 */
import t from 'tap';
import { request } from 'undici';
import { open } from 'lmdb';
import { join } from 'node:path';
import { startGateway, startMock, direct, tempDir, ADMIN_KEY, addWorkspace, insertKey, type MockUpstream, type StartedGateway, type Teardown } from './helpers/gateway.js';
import { createLogger, defineCheck, definePlugin, Scopes, type GuardrailsLog, type LogRecord, type PluginDefinition } from '../core/index.js';
import { addRequest, emptyBucket, emptyUsers, type Bucket, type BucketKey } from '../plugins/analytics/bucket.js';
import { guardrailsFromMap, guardrailsToMap, type GuardrailCounts } from '../plugins/analytics/guardrail-counts.js';
import { guardrailsGroup } from '../plugins/analytics/groups.js';
import { createRollup, openBucketDbs } from '../plugins/analytics/rollup.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ── plain functions ───────────────────────────────────────────────────────────────────────────

/** A check result as the guardrails plugin logs it. */
const check = (id: string, verdict: boolean, error?: string) => ({ id, verdict, duration_ms: 1, ...(error !== undefined ? { error } : {}) });
const guardrail = (checks: ReturnType<typeof check>[], deny = false) => ({ id: 'g', verdict: checks.every((c) => c.verdict), deny, async: false, checks, duration_ms: 1 });

function guardrailsLog(verdict: GuardrailsLog['verdict'], input: ReturnType<typeof guardrail>[], output: ReturnType<typeof guardrail>[] = []): GuardrailsLog {
  return { verdict, passed: 0, failed: 0, redacted: 0, results: { before_request_hooks: input, after_request_hooks: output } };
}

const AT = Date.UTC(2026, 0, 1, 12, 30, 10);

function record(guardrails?: GuardrailsLog, status = 200): LogRecord {
  return {
    created_at: new Date(AT).toISOString(),
    workspace_id: 'ws1',
    provider: 'openai',
    model: 'gpt-4o',
    status,
    is_success: status < 400,
    cache_status: 'DISABLED',
    api_key_id: 'k1',
    metadata: {},
    retry_count: 0,
    latency: { total_ms: 10, upstream_ms: 0, gateway_ms: 0, ttfb_ms: null },
    usage: null,
    cost_cents: 0,
    ...(guardrails !== undefined ? { guardrails } : {}),
  } as unknown as LogRecord;
}

/** `{ "<check> <phase>": [pass, fail, error] }` of counts. */
function table(g: GuardrailCounts | undefined): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  if (g === undefined) return out;
  g.checks.forEach((id, i) => {
    const c = g.counts.slice(i * 6, i * 6 + 6);
    if (c[0]! + c[1]! + c[2]! > 0) out[`${id} input`] = c.slice(0, 3);
    if (c[3]! + c[4]! + c[5]! > 0) out[`${id} output`] = c.slice(3);
  });
  return out;
}

t.test('a bucket counts each check result by phase and verdict; an error is an error whatever its verdict', async (t) => {
  const bucket = emptyBucket();
  const users = emptyUsers();
  const index = new Map<string, number>();
  const add = (r: LogRecord): void => addRequest(bucket, users, index, r, AT, r.status >= 400, false);
  add(record());
  t.notOk('guardrails' in bucket, 'a request without guardrails adds no field');
  add(record(guardrailsLog('passed', [guardrail([check('a.pii', true), check('a.len', true)])])));
  add(record(guardrailsLog('denied', [guardrail([check('a.pii', false)], true)]), 446));
  add(record(guardrailsLog('failed', [guardrail([check('a.pii', true), check('a.hook', true, 'timed out')])], [guardrail([check('a.len', false), check('a.hook', false, 'boom')])])));
  add(record(guardrailsLog('passed', [], [guardrail([check('a.pii', true)])])));
  t.same(table(bucket.guardrails), {
    'a.pii input': [2, 1, 0],
    'a.pii output': [1, 0, 0],
    'a.len input': [1, 0, 0],
    'a.len output': [0, 1, 0],
    'a.hook input': [0, 0, 1],
    'a.hook output': [0, 0, 1],
  });
  t.equal(bucket.guardrails?.denied, 1, 'one request denied');
  t.equal(bucket.requests, 5, 'the other fields count as ever');
  t.equal(bucket.errors, 1);
});

t.test('the PostgreSQL map: non-zero counts only, ids holding ":" come back whole, {} is no field', async (t) => {
  const bucket = emptyBucket();
  addRequest(bucket, emptyUsers(), new Map(), record(guardrailsLog('denied', [guardrail([check('acme:eu.pii', false), check('a.b', true)], true)], [guardrail([check('a.b', true, 'x')])])), AT, true, false);
  const map = guardrailsToMap(bucket.guardrails);
  t.same(map, { denied: 1, 'acme:eu.pii:input:fail': 1, 'a.b:input:pass': 1, 'a.b:output:error': 1 });
  t.same(guardrailsFromMap(map), bucket.guardrails, 'read back as written');
  t.same(guardrailsFromMap(JSON.parse(JSON.stringify({ ...map, 'a.b:input:pass': '2' })) as Record<string, string>), { ...bucket.guardrails, counts: [0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1] }, 'numeric text (numeric sums) is read as a number');
  t.equal(guardrailsFromMap({}), undefined, 'a row without guardrails reads as a bucket without the field');
  t.same(guardrailsToMap(undefined), {});
});

t.test('two processes flushing into one LMDB store add up, minute and hour; buckets without guardrails keep their shape and size', async (t) => {
  const log = createLogger({ level: 'error', write: () => {} });
  const options = { flush_ms: 60_000, max_metadata_sets: 10 };
  const dir = tempDir('gw-analytics-guardrails-');
  const root = open({ path: join(dir, 'mixed.mdb'), maxDbs: 8 });
  const plainRoot = open({ path: join(dir, 'plain.mdb'), maxDbs: 8 });
  t.teardown(async () => {
    await root.close();
    await plainRoot.close();
  });
  const dbs = openBucketDbs(root);
  const plainDbs = openBucketDbs(plainRoot);
  const a = createRollup(root, dbs, options, log);
  const b = createRollup(root, dbs, options, log);
  const plain = createRollup(plainRoot, plainDbs, options, log);

  const guarded = (verdict: boolean): LogRecord => record(guardrailsLog(verdict ? 'passed' : 'denied', [guardrail([check('a.pii', verdict)], true)]), verdict ? 200 : 446);
  // Status 200 and 446 are separate buckets; the 201 bucket never sees guardrails.
  const unguarded = record(undefined, 201);
  for (let i = 0; i < 3; i++) a.add(guarded(true), { error: false, fallback: false });
  a.add(guarded(false), { error: true, fallback: false });
  b.add(guarded(true), { error: false, fallback: false });
  b.add(record(), { error: false, fallback: false }); // same bucket as the passes, no guardrails
  for (const r of [a, b, plain, plain]) r.add(unguarded, { error: false, fallback: false });
  await Promise.all([a.flush(), b.flush(), plain.flush()]);
  b.add(record(guardrailsLog('passed', [], [guardrail([check('a.len', true)])])), { error: false, fallback: false });
  await Promise.all([a.close(), b.close(), plain.close()]);

  const minute = Math.floor(AT / 60_000);
  const key = (status: number, m = minute): BucketKey => ['ws1', m, 'openai', 'gpt-4o', status, 'DISABLED', 'k1', ''];
  for (const [name, tier, m] of [['minute', 'minutes', minute], ['hour', 'hours', minute - (minute % 60)]] as const) {
    const ok = dbs.buckets[tier].get(key(200, m)) as Bucket;
    t.equal(ok.requests, 6, `${name}: requests`);
    t.same(table(ok.guardrails), { 'a.pii input': [4, 0, 0], 'a.len output': [1, 0, 0] }, `${name}: check results add up across processes and flushes`);
    t.equal(ok.guardrails?.denied, 0);
    const denied = dbs.buckets[tier].get(key(446, m)) as Bucket;
    t.same(table(denied.guardrails), { 'a.pii input': [0, 1, 0] });
    t.equal(denied.guardrails?.denied, 1, `${name}: the denied request`);
    const bare = dbs.buckets[tier].get(key(201, m)) as Bucket;
    t.same(Object.keys(bare), Object.keys(emptyBucket()), `${name}: a bucket without guardrails has no guardrails field`);
    t.same(bare, plainDbs.buckets[tier].get(key(201, m)), `${name}: the same counts as in a store that never saw guardrails`);
    const size = dbs.buckets[tier].getBinary(key(201, m))!.length;
    t.equal(size, plainDbs.buckets[tier].getBinary(key(201, m))!.length, `${name}: and the same encoded size (${size} bytes)`);
  }

  const scan = (visit: (b: Bucket, k: BucketKey) => void): void => {
    for (const { key: k, value } of dbs.buckets.minutes.getRange()) visit(value, k);
  };
  t.same(guardrailsGroup(scan, { current_page: 0, page_size: 10 }), {
    object: 'list',
    total: 2,
    data: [
      { check: 'a.pii', phase: 'input', pass: 4, fail: 1, error: 0, object: 'analytics-group' },
      { check: 'a.len', phase: 'output', pass: 1, fail: 0, error: 0, object: 'analytics-group' },
    ],
    denied: 1,
  }, 'the group folds the buckets: most failures first');
});

// ── a real gateway ────────────────────────────────────────────────────────────────────────────

const pass = defineCheck<Record<string, never>>({
  id: 'test.pass',
  description: 'always passes',
  parameters: { type: 'object', additionalProperties: false },
  run: () => ({ verdict: true }),
});

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
    const guardrails = app.service('guardrails');
    for (const c of [pass, maxLen, broken]) guardrails.register(c);
  },
}) as PluginDefinition<never>;

async function gateway(t: Teardown, flushMs: number): Promise<StartedGateway> {
  return startGateway(t, {
    yaml: `pipeline:\n  - analytics: {flush_ms: ${flushMs}}\n  - auth\n  - config-strategy\n  - guardrails\n  - test-checks\n  - admin-catalog\n`,
    plugins: { 'test-checks': testChecks },
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
  });
}

interface Chat {
  input?: Json[];
  output?: Json[];
  metadata?: Json;
  model?: string;
  key?: string;
}

async function chat(gw: StartedGateway, mock: MockUpstream, o: Chat): Promise<number> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-gateway-api-key': o.key ?? ADMIN_KEY };
  if (o.input !== undefined || o.output !== undefined) {
    const config: Json = { provider: 'openai', api_key: 'sk-t', custom_host: direct(mock)['x-gateway-custom-host'] };
    if (o.input) config.input_guardrails = o.input;
    if (o.output) config.output_guardrails = o.output;
    headers['x-gateway-config'] = JSON.stringify(config);
  } else Object.assign(headers, direct(mock));
  if (o.metadata) headers['x-gateway-metadata'] = JSON.stringify(o.metadata);
  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ model: o.model ?? 'gpt-4o-mini', messages: [{ role: 'user', content: 'twenty characters!!' }] }),
  });
  await res.body.dump();
  return res.statusCode;
}

function reader(gw: StartedGateway, start: number) {
  return async (params: Json = {}, key = ADMIN_KEY, hours = 0): Promise<{ status: number; body: Json }> => {
    const qs = new URLSearchParams({
      time_of_generation_min: new Date(start - hours * 3_600_000 - 60_000).toISOString(),
      time_of_generation_max: new Date(Date.now() + hours * 3_600_000 + 60_000).toISOString(),
      ...params,
    });
    const res = await request(`${gw.url}/v1/analytics/groups/guardrails?${qs}`, { headers: { 'x-gateway-api-key': key } });
    return { status: res.statusCode, body: (await res.body.json()) as Json };
  };
}

const rows = (body: Json): Array<[string, string, number, number, number]> => body.data.map((r: Json) => [r.check, r.phase, r.pass, r.fail, r.error]);

t.test('a read right after a request counts it (flush_ms 60 s), on minute and hour data points', async (t) => {
  const mock = await startMock(t);
  const gw = await gateway(t, 60_000);
  const read = reader(gw, Date.now());
  t.same((await read()).body, { object: 'list', total: 0, data: [], denied: 0 }, 'nothing yet');
  t.equal(await chat(gw, mock, { input: [{ 'test.maxLen': { max: 3 }, deny: true }] }), 446, 'denied');
  for (const hours of [0, 12]) {
    const { status, body } = await read({}, ADMIN_KEY, hours);
    t.equal(status, 200);
    t.same(body, { object: 'list', total: 1, data: [{ check: 'test.maxLen', phase: 'input', pass: 0, fail: 1, error: 0, object: 'analytics-group' }], denied: 1 }, `counted at once (${hours === 0 ? 'minutes' : 'hours'})`);
  }
  t.equal(await chat(gw, mock, { input: [{ 'test.maxLen': { max: 1000 } }] }), 200);
  t.same(rows((await read()).body), [['test.maxLen', 'input', 1, 1, 0]], 'the next one too');
});

t.test('guardrail verdicts over live traffic', async (t) => {
  const mock = await startMock(t);
  const gw = await gateway(t, 100);
  const store = gw.store;
  const defaultWs = store.meta.get('default_workspace_id') as string;
  const teamB = addWorkspace(store, 'team-b', Scopes.DEFAULT_WORKSPACE_SCOPES);
  const noScope = insertKey(store, { workspace_id: teamB.id, scopes: ['configs.read'] });
  const start = Date.now();
  const read = reader(gw, start);
  const send = async (o: Chat, expect: number): Promise<void> => {
    t.equal(await chat(gw, mock, o), expect, `traffic: ${JSON.stringify(o).slice(0, 100)}`);
  };

  // Stored: sent, then a flush (flush_ms 100) moves them to LMDB.
  await send({ input: [{ 'test.pass': {} }, { 'test.maxLen': { max: 1000 } }], metadata: { env: 'prod' } }, 200);
  await send({ input: [{ 'test.maxLen': { max: 3 }, deny: true }], metadata: { env: 'prod' } }, 446);
  await send({ input: [{ 'test.broken': {}, on_error: 'allow' }], metadata: { env: 'staging' } }, 200);
  await send({ metadata: { env: 'prod' } }, 200); // no guardrails
  await sleep(400);
  // Pending: read before the next flush, with the stored ones.
  await send({ output: [{ 'test.maxLen': { max: 5 } }, { 'test.pass': {} }], model: 'gpt-4o', metadata: { env: 'staging' } }, 200);
  await send({ input: [{ 'test.pass': {}, 'test.maxLen': { max: 3 } }], output: [{ 'test.broken': {}, on_error: 'allow' }], model: 'gpt-4o' }, 200);
  await send({ key: teamB.key, input: [{ 'test.maxLen': { max: 3 } }] }, 200);

  const mine = { workspace_id: defaultWs };
  const all = (await read(mine)).body;
  t.same(Object.keys(all).sort(), ['data', 'denied', 'object', 'total'], 'the list envelope, with denied');
  t.equal(all.object, 'list');
  t.same(rows(all), [
    ['test.maxLen', 'input', 1, 2, 0],
    ['test.broken', 'input', 0, 0, 1],
    ['test.broken', 'output', 0, 0, 1],
    ['test.maxLen', 'output', 0, 1, 0],
    ['test.pass', 'input', 2, 0, 0],
    ['test.pass', 'output', 1, 0, 0],
  ], 'exact counts, stored and pending, each once; most fail + error first, ties by check then phase');
  t.equal(all.total, 6);
  t.equal(all.denied, 1, 'one request denied');
  t.ok(all.data.every((r: Json) => r.object === 'analytics-group'));
  t.same(rows((await read({ ...mine }, ADMIN_KEY, 12)).body), rows(all), 'hour data points agree');

  t.test('filters', async (t) => {
    t.same(rows((await read({ ...mine, status_code: '446' })).body), [['test.maxLen', 'input', 0, 1, 0]], 'status_code');
    t.equal((await read({ ...mine, status_code: '446' })).body.denied, 1);
    t.equal((await read({ ...mine, status_code: '200' })).body.denied, 0);
    t.same(rows((await read({ ...mine, ai_org_model: 'openai__gpt-4o' })).body), [
      ['test.broken', 'output', 0, 0, 1],
      ['test.maxLen', 'input', 0, 1, 0],
      ['test.maxLen', 'output', 0, 1, 0],
      ['test.pass', 'input', 1, 0, 0],
      ['test.pass', 'output', 1, 0, 0],
    ], 'ai_org_model');
    t.same(rows((await read({ metadata: JSON.stringify({ env: 'staging' }) })).body), [
      ['test.broken', 'input', 0, 0, 1],
      ['test.maxLen', 'output', 0, 1, 0],
      ['test.pass', 'output', 1, 0, 0],
    ], 'metadata');
    const teamBKeyId = store.c.apiKeys.list({ filter: (k) => k.workspace_id === teamB.id && k.name === 'team-b key' }).items[0]!.id;
    t.same(rows((await read({ api_key_ids: teamBKeyId })).body), [['test.maxLen', 'input', 0, 1, 0]], 'api_key_ids');
    t.equal((await read({ cost_min: '1' })).status, 400, 'filters rollups cannot apply are refused here too');
    const paged = (await read({ ...mine, page_size: '2', current_page: '1' })).body;
    t.same([paged.total, paged.denied, rows(paged)], [6, 1, [['test.broken', 'output', 0, 0, 1], ['test.maxLen', 'output', 0, 1, 0]]], 'paged; denied is over the whole range');
  });

  t.test('workspaces and scope', async (t) => {
    t.same(rows((await read({}, teamB.key)).body), [['test.maxLen', 'input', 0, 1, 0]], 'a workspace key reads its own workspace');
    t.equal((await read({ workspace_slug: 'default' }, teamB.key)).status, 403, 'not another');
    t.same(rows((await read({ workspace_slug: 'team-b' })).body), [['test.maxLen', 'input', 0, 1, 0]], 'an organisation key names it');
    t.equal((await read()).body.data.find((r: Json) => r.check === 'test.maxLen' && r.phase === 'input').fail, 3, 'or reads every workspace');
    const denied = await read({}, noScope);
    t.equal(denied.status, 403, 'analytics.view is needed');
    t.equal(denied.body.error.code, 'insufficient_scope');
  });

  t.test('the OpenAPI document lists the route with its shape', async (t) => {
    const doc = (await request(`${gw.url}/v1/openapi.json`).then((r) => r.body.json())) as Json;
    const op = doc.paths['/v1/analytics/groups/guardrails']?.get;
    t.ok(op, 'listed');
    t.equal(op['x-required-scope'], 'analytics.view');
    t.match(op.summary, /fail \+ error first/);
    t.same(Object.keys(op.responses['200'].content['application/json'].schema.properties).sort(), ['data', 'denied', 'object', 'total']);
    t.same(Object.keys(op.responses['200'].content['application/json'].schema.properties.data.items.properties), ['check', 'phase', 'pass', 'fail', 'error', 'object']);
    const params = op.parameters.map((p: Json) => p.name);
    for (const name of ['time_of_generation_min', 'time_of_generation_max', 'workspace_slug', 'status_code', 'ai_org_model', 'api_key_ids', 'metadata', 'page_size', 'current_page']) {
      t.ok(params.includes(name), `query parameter ${name}`);
    }
  });
});
