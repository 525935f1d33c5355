/**
 * The `logging` plugin over real sockets, first in the pipeline: one record per request whatever
 * its outcome (success, 401, 400, 429, upstream 500, cache hit, stream, pass-through), usage and
 * cost on streams, no secret in any record, nothing lost across a graceful restart, a full queue
 * that drops (and counts) instead of blocking; the logs API with its filters and pages, custom
 * logs, feedback, the export lifecycle and its JSONL download. And the machinery as plain
 * functions: the scanner, the retention sweep, body rendering, export lines.
 */
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { open } from 'lmdb';
import { startGateway, startMock, direct, addWorkspace, tempDir, ADMIN_KEY, type MockUpstream, type Teardown } from './helpers/gateway.js';
import { createGateway, type Gateway } from '../core/gateway.js';
import { loadConfigText } from '../core/config/load.js';
import { createLogger } from '../core/logger.js';
import { uuidv7 } from '../core/store/ids.js';
import { DEFAULT_WORKSPACE_SCOPES } from '../core/auth/scopes.js';
import { definePlugin, type PluginDefinition } from '../core/index.js';
import { standardPlugins } from '../plugins/index.js';
import { openLogDb, type StoredLog } from '../plugins/logging/log-db.js';
import type { LogStatsService } from '../plugins/logging/stats.js';
import { sweep, sweepAll, type SweepOptions } from '../plugins/logging/retention.js';
import { idPrefix, scan, timeRange } from '../plugins/logging/scan.js';
import { createBodyCapture } from '../plugins/logging/bodies.js';
import { exportLine } from '../plugins/logging/export-filters.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const PROVIDER_KEY = 'sk-test-provider-key'; // what direct() sends as Authorization
const CONFIG_KEY = 'sk-config-secret-0123456789';
/** A UUIDv7-shaped id made at `ms` (uuidv7() is monotonic per process, so it cannot go back in time). */
const idAt = (ms: number, n = 0): string => `${idPrefix(ms)}-7000-8000-${n.toString(16).padStart(12, '0')}`;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const pipeline = (logging: string): string =>
  `pipeline:\n  - logging: ${logging}\n  - auth\n  - config-strategy\n  - rate-limit\n  - usage-limits\n  - cache\n  - admin-policies\n  - admin-api-keys\n  - admin-catalog\n`;

const FAST = '{flush_ms: 20, bodies: {enabled: true, max_bytes: 2048, redact: ["secret-[a-z0-9]+"]}}';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: Json;
}

async function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
  const res = await request(url, {
    method: (options.method ?? (options.body === undefined ? 'GET' : 'POST')) as 'GET',
    headers: { ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.body.text();
  let body: Json = {};
  try {
    body = JSON.parse(text) as Json;
  } catch {
    /* not JSON (JSONL, SSE): read `text` */
  }
  return { status: res.statusCode, headers: res.headers, text, body };
}

interface Setup {
  gw: Gateway;
  mock: MockUpstream;
  chat(options?: { key?: string | null; body?: Json; headers?: Record<string, string>; directives?: string }): Promise<Answer>;
  admin(method: string, path: string, body?: unknown, key?: string): Promise<Answer>;
  /** Waits for the queue to be written (a few flush intervals) and committed. */
  settle(): Promise<void>;
  /** Every stored record, oldest first, read straight from the `logs` database. */
  records(): StoredLog[];
}

const CHAT = { model: 'gpt-4o', messages: [{ role: 'user', content: 'log me' }] };

function client(gw: Gateway, mock: MockUpstream, flushMs: number): Setup {
  const db = openLogDb(gw.store.root);
  return {
    gw,
    mock,
    chat({ key = ADMIN_KEY, body = CHAT, headers = {}, directives = '' } = {}) {
      return send(`${gw.url}/v1/chat/completions`, { body, headers: { ...direct(mock, directives), ...(key === null ? {} : { 'x-gateway-api-key': key }), ...headers } });
    },
    admin(method, path, body, key = ADMIN_KEY) {
      return send(`${gw.url}/v1${path}`, { method, body, headers: { 'x-gateway-api-key': key } });
    },
    async settle() {
      await sleep(flushMs * 4 + 30);
      await gw.store.flush();
    },
    records: () => [...db.getRange()].map((e) => e.value),
  };
}

async function setup(t: Teardown, logging = FAST, plugins: Record<string, PluginDefinition<never>> = {}, extra = ''): Promise<Setup> {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: pipeline(logging) + extra, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY }, plugins });
  const flushMs = Number(/flush_ms: (\d+)/.exec(logging)?.[1] ?? 200);
  return client(gw, mock, flushMs);
}

/** A gateway on a data dir of the test's choosing, so a second one can reopen the same store. */
async function startAt(t: Teardown, dir: string, yaml: string): Promise<Gateway> {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'gateway.yaml');
  const text = `server: {host: 127.0.0.1, port: 0}\n${yaml}`;
  writeFileSync(file, text);
  const env = { GATEWAY_ADMIN_KEY: ADMIN_KEY };
  const { config, problems, locate } = loadConfigText(text, file, env);
  if (config === null || problems.length > 0) throw new Error(`test config invalid: ${JSON.stringify(problems)}`);
  config.store.path = join(dir, 'data');
  const gw = await createGateway(config, { catalog: standardPlugins, locate, logger: createLogger({ level: 'silent', write: () => undefined }), env });
  t.teardown(() => gw.close());
  return gw;
}

const cacheConfig = (mock: MockUpstream): string =>
  JSON.stringify({ cache: { mode: 'simple', max_age: 60 }, targets: [{ provider: 'openai', api_key: CONFIG_KEY, custom_host: `${mock.url}/v1` }] });

t.test('every request gets exactly one record, whatever its outcome', async (t) => {
  const s = await setup(t);
  const sent: number[] = [];
  const note = (a: Answer): Answer => (sent.push(a.status), a);

  for (let i = 0; i < 3; i++) t.equal(note(await s.chat()).status, 200, 'a success');
  t.equal(note(await s.chat({ key: null })).status, 401, 'no key');
  t.equal(note(await s.chat({ body: { model: 'gpt-4o' } })).status, 400, 'a bad body');
  const policy = note(await s.admin('POST', '/policies/rate-limits', { conditions: [{ key: 'metadata.tier', value: 'limited' }], group_by: [{ key: 'api_key' }], type: 'requests', unit: 'rpm', value: 1 }));
  t.equal(policy.status, 200, 'an admin call is a request too');
  const limited = { 'x-gateway-metadata': '{"tier":"limited"}' };
  t.equal(note(await s.chat({ headers: limited })).status, 200);
  t.equal(note(await s.chat({ headers: limited })).status, 429, 'the 1 rpm policy refuses the second');
  t.equal(note(await s.chat({ directives: 'status=500' })).status, 500, 'an upstream error');
  const cached = { 'x-gateway-config': cacheConfig(s.mock) };
  const miss = note(await send(`${s.gw.url}/v1/chat/completions`, { body: CHAT, headers: { 'x-gateway-api-key': ADMIN_KEY, ...cached } }));
  // The cache stores an entry after the answer went out, committed in the background.
  for (let i = 0; i < 2; i++) await sleep(20).then(() => s.gw.store.flush());
  const hit = note(await send(`${s.gw.url}/v1/chat/completions`, { body: CHAT, headers: { 'x-gateway-api-key': ADMIN_KEY, ...cached } }));
  t.equal(miss.headers['x-gateway-cache-status'], 'MISS');
  t.equal(hit.headers['x-gateway-cache-status'], 'HIT');
  const stream = note(await s.chat({ body: { ...CHAT, stream: true } }));
  t.equal(stream.status, 200);
  t.match(stream.text, /data: \[DONE\]/);
  const pass = note(await send(`${s.gw.url}/v1/files/file-abc123?purge=true`, { method: 'DELETE', headers: { ...direct(s.mock), 'x-gateway-api-key': ADMIN_KEY } }));
  t.equal(pass.status, 200, 'a pass-through');

  await s.settle();
  const records = s.records();
  t.equal(records.length, sent.length, `${sent.length} requests, ${sent.length} records`);
  t.same(records.map((r) => r.status).sort(), [...sent].sort(), 'the statuses agree one for one');
  const byId = new Map(records.map((r) => [r.id, r]));
  const of = (a: Answer): StoredLog => byId.get(a.headers['x-gateway-request-id'] as string)!;
  t.equal(new Set(records.map((r) => r.id)).size, records.length, 'one record per request id');

  t.match(of(hit), { cache_status: 'HIT', status: 200, route: 'chat.completions' });
  t.match(of(miss), { cache_status: 'MISS', config: 'x-gateway-config' });
  t.match(of(pass), { route: 'passthrough', method: 'DELETE', path: '/v1/files/file-abc123', provider: 'openai' });
  t.match(of(policy), { route: 'plugin', source: 'plugin', path: '/v1/policies/rate-limits', request_body: null, response_body: null });
  const refused = records.find((r) => r.status === 429)!;
  t.match(refused, { error_code: 'rate_limit_exceeded', source: 'gateway', is_success: false, metadata: { tier: 'limited' } });
  t.match(records.find((r) => r.status === 401)!, { error_code: 'missing_api_key', workspace_id: null, api_key_id: null });
  t.match(records.find((r) => r.status === 500)!, { source: 'upstream', is_success: false });
  t.match(records.find((r) => r.status === 400)!, { source: 'gateway', is_success: false });

  t.test('a stream record carries tokens and cost', async (t) => {
    const r = of(stream);
    t.equal(r.stream, true);
    t.ok(r.usage !== null && r.usage.prompt_tokens > 0 && r.usage.completion_tokens > 0, 'tokens');
    t.equal(r.usage!.total_tokens, r.usage!.prompt_tokens + r.usage!.completion_tokens);
    t.equal(r.priced_as, 'openai/gpt-4o', 'priced with the table');
    // gpt-4o: $2.50 per M input tokens, $10 per M output tokens, in cents.
    const cents = (r.usage!.prompt_tokens * 2.5 + r.usage!.completion_tokens * 10) / 1e4;
    t.ok(Math.abs(r.cost_cents - cents) < 1e-9, `cost ${r.cost_cents} cents`);
    t.match(r.response_body, /Mock/, 'the events data is kept (bodies enabled)');
    const plain = of(miss);
    t.same(plain.usage?.total_tokens, r.usage!.total_tokens, 'the same tokens as the plain call');
  });

  t.test('no secret in any record', async (t) => {
    const all = JSON.stringify(records);
    for (const secret of [PROVIDER_KEY, ADMIN_KEY, CONFIG_KEY]) t.notOk(all.includes(secret), `no ${secret.slice(0, 12)}…`);
    // The mock's pass-through echo sends the request headers back: the kept body shows them scrubbed.
    t.match(of(pass).response_body, /"authorization":"\[redacted\]"/);
  });
});

t.test('bodies: cut to max_bytes, redacted, only with bodies.enabled', async (t) => {
  const s = await setup(t);
  const long = 'x'.repeat(5000);
  const a = await s.chat({ body: { model: 'gpt-4o', messages: [{ role: 'user', content: `my secret-abc123 and ${long}` }] } });
  const off = await setup(t, '{flush_ms: 20}');
  const b = await off.chat();
  await s.settle();
  await off.settle();
  const r = s.records().find((x) => x.id === a.headers['x-gateway-request-id'])!;
  t.ok(Buffer.byteLength(r.request_body!) <= 2048, 'cut to max_bytes');
  t.match(r.request_body, /my \[redacted\] and x+/);
  t.notOk(r.request_body!.includes('secret-abc123'));
  t.ok(typeof r.response_body === 'string' && r.response_body.length > 0, 'the response body too');
  t.notOk(r.response_body!.includes('secret-abc123'), 'redacted in the answer as well');
  const plain = off.records().find((x) => x.id === b.headers['x-gateway-request-id'])!;
  t.match(plain, { request_body: null, response_body: null }, 'disabled: no bodies');
});

t.test('the logs API: filters, pages, workspaces, one record', async (t) => {
  const s = await setup(t);
  const team = addWorkspace(s.gw.store, 'team-logs', DEFAULT_WORKSPACE_SCOPES);
  const meta = (m: Json): Record<string, string> => ({ 'x-gateway-metadata': JSON.stringify({ run: 'filters', ...m }) });
  const ids: string[] = [];
  const go = async (o: Parameters<Setup['chat']>[0]): Promise<Answer> => {
    const a = await s.chat(o);
    ids.push(a.headers['x-gateway-request-id'] as string);
    return a;
  };
  await go({ headers: { ...meta({ team: 'a' }), 'x-gateway-trace-id': 'trace-f1' } });
  await go({ headers: meta({ team: 'a' }) });
  await go({ headers: meta({ team: 'a' }), body: { ...CHAT, model: 'gpt-4o-mini' } });
  await go({ headers: meta({ team: 'b' }), directives: 'status=500' });
  await go({ headers: meta({ team: 'b' }) });
  const own = await go({ key: team.key, headers: meta({ team: 'c' }) });
  t.equal(own.status, 200);
  await s.settle();

  const list = async (query: Record<string, string>, key = ADMIN_KEY): Promise<Answer> => s.admin('GET', `/logs?${new URLSearchParams(query)}`, undefined, key);
  const run = JSON.stringify({ run: 'filters' });

  const all = await list({ metadata: run });
  t.equal(all.status, 200);
  t.equal(all.body.total, 6);
  t.same(all.body.data.map((r: Json) => r.id), [...ids].reverse(), 'newest first');
  t.equal((await list({ trace_id: 'trace-f1' })).body.data[0].id, ids[0]);
  t.equal((await list({ metadata: JSON.stringify({ run: 'filters', team: 'a' }) })).body.total, 3, 'every metadata pair must match');
  t.equal((await list({ metadata: run, status: '500, 429' })).body.total, 1, 'status as a comma list');
  t.equal((await list({ metadata: run, model: 'gpt-4o-mini' })).body.total, 1);
  t.equal((await list({ metadata: run, provider: 'openai' })).body.total, 6);
  t.equal((await list({ metadata: run, provider: 'anthropic' })).body.total, 0);
  t.equal((await list({ metadata: run, start_time: new Date(Date.now() + 1000).toISOString() })).body.total, 0, 'start_time');
  t.equal((await list({ metadata: run, end_time: new Date(Date.now() - 3_600_000).toISOString() })).body.total, 0, 'end_time');
  t.equal((await list({ metadata: run, start_time: new Date(Date.now() - 60_000).toISOString(), end_time: new Date().toISOString() })).body.total, 6, 'a window');
  const keyId = s.records().find((r) => r.id === ids[5])!.api_key_id!;
  t.equal((await list({ metadata: run, api_key_id: keyId })).body.total, 1, 'api_key_id');

  const pages = [];
  for (let p = 0; p < 3; p++) pages.push((await list({ metadata: run, page_size: '2', current_page: String(p) })).body);
  t.same(pages.map((p) => p.data.length), [2, 2, 2]);
  t.same(pages.map((p) => p.total), [6, 6, 6], 'total counts every match, not the page');
  t.same(pages.flatMap((p) => p.data.map((r: Json) => r.id)), [...ids].reverse(), 'pages do not overlap');

  const mine = await list({ metadata: run }, team.key);
  t.equal(mine.body.total, 1, 'a workspace key sees only its workspace');
  t.equal(mine.body.data[0].workspace_id, team.id);
  t.equal((await list({ metadata: run, workspace_id: 'team-logs' })).body.total, 1, 'an organisation key narrows by workspace slug');
  t.equal((await list({ metadata: '{nope' })).status, 400, 'metadata must be JSON');
  t.equal((await list({ status: 'ok' })).status, 400);

  const one = await s.admin('GET', `/logs/${ids[0]}`);
  t.equal(one.status, 200);
  t.match(one.body, { id: ids[0], trace_id: 'trace-f1', metadata: { run: 'filters', team: 'a' }, model: 'gpt-4o', provider: 'openai', status: 200 });
  t.equal((await s.admin('GET', `/logs/${ids[0]}`, undefined, team.key)).status, 404, "another workspace's record is not found");
  t.equal((await s.admin('GET', `/logs/${ids[5]}`, undefined, team.key)).status, 200);
  t.equal((await s.admin('GET', '/logs/00000000-0000-7000-8000-000000000000')).status, 404);
});

t.test('custom logs: one or many, stored as records without headers', async (t) => {
  const s = await setup(t);
  const team = addWorkspace(s.gw.store, 'team-custom', DEFAULT_WORKSPACE_SCOPES);
  const log = (n: number): Json => ({
    request: { url: 'https://api.example.com/v1/chat/completions', method: 'POST', headers: { authorization: 'Bearer sk-custom-secret' }, body: { model: 'my-model', n } },
    response: { status: 201, headers: { 'x-secret': 'sk-custom-secret' }, body: { ok: true, echoed: 'sk-custom-secret', usage: { prompt_tokens: 3, completion_tokens: 4 } }, response_time: 42 },
    metadata: { trace_id: `custom-trace-${n}`, span_name: 'outer', env: 'dev', attempt: 2 },
  });
  const one = await s.admin('POST', '/logs', log(1), team.key);
  t.equal(one.status, 200);
  t.match(one.body, { status: 'success', log_ids: [/^[0-9a-f-]{36}$/] });
  const many = await s.admin('POST', '/logs', [log(2), log(3)], team.key);
  t.equal(many.body.log_ids.length, 2, 'an array');
  const r = (await s.admin('GET', `/logs/${one.body.log_ids[0]}`)).body;
  t.match(r, {
    route: 'custom',
    source: 'plugin',
    trace_id: 'custom-trace-1',
    span_name: 'outer',
    metadata: { env: 'dev', attempt: '2' },
    path: 'https://api.example.com/v1/chat/completions',
    status: 201,
    model: 'my-model',
    workspace_id: team.id,
    latency: { total_ms: 42 },
    usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
  });
  t.match(r.request_body, /"model":"my-model"/, 'bodies kept as configured');
  t.notOk(JSON.stringify(s.records()).includes('sk-custom-secret'), 'headers are never kept, and their credentials are scrubbed from bodies');
  t.match(r.response_body, /"echoed":"\[redacted\]"/);
  const audit = JSON.stringify(s.gw.store.c.audit.list().items);
  t.match(audit, /custom-trace-1/, 'the write is audited');
  t.notOk(audit.includes('sk-custom-secret'), 'without the logged headers');

  const bad = await s.admin('POST', '/logs', [log(4), { request: { body: {} }, response: { body: {} } }], team.key);
  t.equal(bad.status, 400);
  t.equal(bad.body.error.param, 'logs[1].request.url', 'the error names the item');
  t.equal((await s.admin('POST', '/logs', log(5))).status, 403, 'logs.write belongs to workspace keys');
  const notJson = await send(`${s.gw.url}/v1/logs`, { method: 'POST', headers: { 'x-gateway-api-key': team.key, 'content-type': 'application/json' } });
  t.equal(notJson.status, 400);
});

t.test('feedback: workspace keys, −10..10, weight, update', async (t) => {
  const s = await setup(t);
  const team = addWorkspace(s.gw.store, 'team-feedback', DEFAULT_WORKSPACE_SCOPES);
  const other = addWorkspace(s.gw.store, 'team-other', DEFAULT_WORKSPACE_SCOPES);
  const db = s.gw.store.root.openDB<Json, string>({ name: 'feedback' });

  const created = await s.admin('POST', '/feedback', { trace_id: 'trace-fb', value: 7, metadata: { by: 'qa' } }, team.key);
  t.equal(created.status, 200);
  t.match(created.body, { status: 'success', message: String, feedback_ids: [/^[0-9a-f-]{36}$/] });
  const id = created.body.feedback_ids[0] as string;
  t.match(db.get(id), { id, trace_id: 'trace-fb', value: 7, weight: 1, metadata: { by: 'qa' }, workspace_id: team.id, created_at: String });

  t.equal((await s.admin('POST', '/feedback', { trace_id: 'x', value: 1 })).status, 403, 'an organisation key is refused');
  t.equal((await s.admin('POST', '/feedback', { trace_id: 'x', value: 11 }, team.key)).status, 400, 'value at most 10');
  t.equal((await s.admin('POST', '/feedback', { trace_id: 'x', value: 1.5 }, team.key)).status, 400, 'an integer');
  t.equal((await s.admin('POST', '/feedback', { trace_id: 'x', value: 1, weight: 2 }, team.key)).status, 400, 'weight 0..1');
  t.equal((await s.admin('POST', '/feedback', { value: 1 }, team.key)).status, 400, 'trace_id required');

  const updated = await s.admin('PUT', `/feedback/${id}`, { value: -3, weight: 0.5 }, team.key);
  t.same(updated.body, { status: 'success', message: 'Feedback updated.', feedback_ids: [id] });
  t.match(db.get(id), { value: -3, weight: 0.5, trace_id: 'trace-fb', metadata: { by: 'qa' } });
  t.equal((await s.admin('PUT', `/feedback/${id}`, { value: 1 }, other.key)).status, 404, "another workspace's feedback is not found");
  t.equal((await s.admin('PUT', `/feedback/${uuidv7()}`, { value: 1 }, team.key)).status, 404);
});

t.test('exports: draft, start, success, download; cancel; workspaces', async (t) => {
  const s = await setup(t);
  const team = addWorkspace(s.gw.store, 'team-export', DEFAULT_WORKSPACE_SCOPES);
  const tagged = { 'x-gateway-metadata': '{"run":"export"}' };
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await s.chat({ headers: tagged, body: i === 2 ? { ...CHAT, model: 'gpt-4o-mini' } : CHAT })).headers['x-gateway-request-id'] as string);
  ids.push((await s.chat({ key: team.key, headers: tagged })).headers['x-gateway-request-id'] as string);
  await s.settle();

  const fields = ['response_status_code', 'id', 'ai_model', 'req_units', 'cost_currency', 'metadata'];
  const made = await s.admin('POST', '/logs/exports', { filters: { metadata: { run: 'export' } }, requested_data: fields, description: 'all of it' });
  t.equal(made.status, 200);
  t.match(made.body, { id: /^[0-9a-f-]{36}$/, total: 6, object: 'export' });
  const id = made.body.id as string;
  t.match((await s.admin('GET', `/logs/exports/${id}`)).body, { id, status: 'draft', workspace_id: null, requested_data: fields, description: 'all of it', object: 'export', total: 6 });
  const early = await s.admin('GET', `/logs/exports/${id}/download`);
  t.equal(early.status, 409);
  t.equal(early.body.error.code, 'export_not_ready');

  const started = await s.admin('POST', `/logs/exports/${id}/start`);
  t.same(started.body, { message: 'Export started.', object: 'export' });
  t.ok(['in_progress', 'success'].includes((await s.admin('GET', `/logs/exports/${id}`)).body.status), 'in progress, then success');
  let status = '';
  for (let i = 0; i < 50 && status !== 'success'; i++, await sleep(20)) status = (await s.admin('GET', `/logs/exports/${id}`)).body.status;
  t.equal(status, 'success');

  // Requests after the start never join the run.
  await s.chat({ headers: tagged });
  await s.settle();
  const file = await s.admin('GET', `/logs/exports/${id}/download`);
  t.equal(file.status, 200);
  t.match(file.headers['content-type'], /^application\/x-ndjson/);
  const lines = file.text.trimEnd().split('\n').map((l) => JSON.parse(l) as Json);
  t.equal(lines.length, 6, 'the records of the run');
  t.same(lines.map((l) => l.id), ids, 'oldest first, in the order they were logged');
  t.same(Object.keys(lines[0]!), fields, 'only the requested fields, in the requested order');
  t.match(lines[2], { response_status_code: 200, ai_model: 'gpt-4o-mini', cost_currency: 'USD', metadata: { run: 'export' } });
  t.ok(lines[0]!.req_units > 0);

  const paged = await s.admin('POST', '/logs/exports', { filters: { metadata: { run: 'export' }, page_size: 2, current_page: 1 }, requested_data: ['id'] });
  t.equal(paged.body.total, 2, 'a page window');
  await s.admin('POST', `/logs/exports/${paged.body.id}/start`);
  await sleep(100);
  const pagedFile = await s.admin('GET', `/logs/exports/${paged.body.id}/download`);
  t.same(pagedFile.text.trimEnd().split('\n').map((l) => (JSON.parse(l) as Json).id), ids.slice(2, 4));

  const listed = await s.admin('GET', '/logs/exports');
  t.equal(listed.body.object, 'list');
  t.same(listed.body.data.map((e: Json) => e.id), [paged.body.id, id], 'newest first');
  t.equal((await s.admin('POST', `/logs/exports/${id}/cancel`)).status, 409, 'a finished export cannot be cancelled');

  const draft = await s.admin('POST', '/logs/exports', { filters: {}, requested_data: ['id'] });
  const stop = await s.admin('POST', `/logs/exports/${draft.body.id}/cancel`);
  t.same(stop.body, { message: 'Export stopped.', object: 'export' });
  t.equal((await s.admin('GET', `/logs/exports/${draft.body.id}`)).body.status, 'stopped');
  const changed = await s.admin('PUT', `/logs/exports/${draft.body.id}`, { filters: { ai_model: 'gpt-4o-mini', metadata: { run: 'export' } } });
  t.match(changed.body, { id: draft.body.id, total: 1, object: 'export' });
  t.equal((await s.admin('GET', `/logs/exports/${draft.body.id}`)).body.status, 'draft', 'a change makes it a draft again');

  const theirs = await s.admin('POST', '/logs/exports', { filters: { metadata: { run: 'export' } }, requested_data: ['id'] }, team.key);
  t.equal(theirs.body.total, 1, "a workspace key's export holds its workspace only");
  t.equal((await s.admin('GET', `/logs/exports/${id}`, undefined, team.key)).status, 404, "an organisation export is not a workspace key's");
  t.same((await s.admin('GET', '/logs/exports', undefined, team.key)).body.data.map((e: Json) => e.id), [theirs.body.id]);
  t.equal((await s.admin('POST', '/logs/exports', { filters: { nope: 1 }, requested_data: ['id'] })).status, 400, 'unknown filters are refused');
  t.equal((await s.admin('POST', '/logs/exports', { filters: {}, requested_data: ['password'] })).status, 400, 'unknown fields are refused');
});

t.test('a full queue drops and counts, and never blocks a request', async (t) => {
  let stats: LogStatsService | undefined;
  const probe = definePlugin({
    name: 'stats-probe',
    setup(app) {
      stats = app.service('log-stats');
    },
  }) as PluginDefinition<never>;
  const mock = await startMock(t);
  const yaml = pipeline('{queue_max: 5, flush_ms: 1000}').replace('  - auth\n', '  - stats-probe\n  - auth\n');
  const gw = await startGateway(t, { yaml, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY }, plugins: { 'stats-probe': probe } });
  const s = client(gw, mock, 1000);
  const before = stats!.dropped();
  const answers = await Promise.all(Array.from({ length: 50 }, () => s.chat()));
  t.same(new Set(answers.map((a) => a.status)), new Set([200]), 'all 50 answered 200');
  await sleep(50);
  t.ok(stats!.queued() <= 5, 'the queue holds at most queue_max');
  await s.settle();
  const dropped = stats!.dropped() - before;
  const stored = s.records().length;
  t.ok(dropped > 0, `${dropped} dropped`);
  t.equal(stored + dropped, 50, `${stored} stored + ${dropped} dropped = 50 sent`);
});

t.test('nothing is lost across a graceful restart', async (t) => {
  const dir = tempDir('gw-logging-');
  const mock = await startMock(t);
  // A flush interval longer than the test: only the stop can write these records.
  const yaml = pipeline('{flush_ms: 60000}');
  const first = await startAt(t, dir, yaml);
  const s1 = client(first, mock, 0);
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) ids.push((await s1.chat({ body: i === 3 ? { ...CHAT, stream: true } : CHAT })).headers['x-gateway-request-id'] as string);
  t.equal(s1.records().length, 0, 'still queued');
  await first.close();

  const second = await startAt(t, dir, yaml);
  const s2 = client(second, mock, 0);
  t.same(s2.records().map((r) => r.id), ids, 'every record of the first run is there');
  const listed = await s2.admin('GET', '/logs');
  t.equal(listed.body.total, 7);
});

t.test('a bad redact pattern fails the boot, naming it', async (t) => {
  await t.rejects(startGateway(t, { yaml: pipeline('{bodies: {enabled: true, redact: ["("]}}'), env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } }), /bodies\.redact\[0\] is not a valid regular expression/);
});

t.test('machinery', async (t) => {
  t.test('scan: key ranges from times, both directions, across chunks', async (t) => {
    const root = open({ path: join(tempDir(), 'scan.mdb') });
    const db = root.openDB<number, string>({ name: 'x' });
    const base = Date.UTC(2026, 0, 1);
    const ids: string[] = [];
    for (let i = 0; i < 2500; i++) {
      const id = idAt(base + i * 1000);
      ids.push(id);
      void db.put(id, i);
    }
    await db.flushed;
    const collect = async (range: Parameters<typeof scan>[1]): Promise<number[]> => {
      const out: number[] = [];
      for await (const chunk of scan(db, range)) out.push(...chunk);
      return out;
    };
    const forward = await collect({ newestFirst: false });
    t.equal(forward.length, 2500);
    t.same(forward.slice(0, 3), [0, 1, 2], 'oldest first across chunks of 1000');
    const backward = await collect({ newestFirst: true });
    t.same(backward.slice(0, 2), [2499, 2498]);
    t.same(backward, [...forward].reverse());
    // A window with the slack: 60 s either side of [100 s, 200 s] → items 40..260.
    const window = await collect({ ...timeRange(base + 100_000, base + 200_000), newestFirst: false });
    t.same([window[0], window.at(-1)], [40, 260]);
    t.ok(idPrefix(base) < ids[0]! && ids[0]! < idPrefix(base + 1), 'an id sorts between the prefixes of its ms and the next');
    const controller = new AbortController();
    controller.abort();
    t.same(await collect({ newestFirst: false, signal: controller.signal }), [], 'an aborted scan reads nothing');
    await root.close();
  });

  t.test('retention: by age, by count, bounded per run', async (t) => {
    const root = open({ path: join(tempDir(), 'ret.mdb') });
    const db = root.openDB<number, string>({ name: 'logs' });
    const now = Date.now();
    const old = [1, 2, 3].map((i) => idAt(now - 40 * 86_400_000 + i));
    const fresh = [1, 2, 3, 4, 5].map((i) => idAt(now - 5000 + i));
    for (const id of [...old, ...fresh]) void db.put(id, 1);
    await db.flushed;
    const cutoffMs = now - 30 * 86_400_000;
    t.equal(await sweep(db, { cutoffMs, maxRecords: 1000, limit: 2 }), 2, 'at most `limit` a run');
    t.equal(await sweep(db, { cutoffMs, maxRecords: 1000, limit: 100 }), 1, 'the rest of the old ones');
    t.same([...db.getKeys()], fresh, 'only records younger than the retention are left');
    t.equal(await sweep(db, { cutoffMs, maxRecords: 2, limit: 100 }), 3, 'past max_records the oldest go');
    t.same([...db.getKeys()], fresh.slice(3));
    t.equal(await sweep(db, { cutoffMs, maxRecords: 2, limit: 100 }), 0, 'nothing to do');
    await root.close();
  });

  t.test('retention: a sweep runs slices until the bounds are met, not one slice a period', async (t) => {
    // Past max_records under load, each period adds more records than one slice removes.
    const root = open({ path: join(tempDir(), 'ret-all.mdb') });
    const db = root.openDB<number, string>({ name: 'logs' });
    const now = Date.now();
    const ids = Array.from({ length: 75 }, (_, i) => idAt(now - 10_000 + i));
    for (const id of ids) void db.put(id, 1);
    await db.flushed;
    const slices: number[] = [];
    const slice = async (o: SweepOptions): Promise<number> => {
      const n = await sweep(db, o);
      slices.push(n);
      return n;
    };
    t.equal(await sweepAll(slice, { cutoffMs: 0, maxRecords: 40, limit: 10 }, 0), 35, 'the whole excess');
    t.same(slices, [10, 10, 10, 5], 'in slices of at most `limit`, the short one last');
    t.same([...db.getKeys()], ids.slice(35), 'the newest 40 are left');
    slices.length = 0;
    t.equal(await sweepAll(slice, { cutoffMs: 0, maxRecords: 40, limit: 10 }, 0), 0, 'nothing to do: one empty slice');
    t.same(slices, [0]);
    let stop = false;
    const stopping = async (o: SweepOptions): Promise<number> => {
      stop = true;
      return slice(o);
    };
    t.equal(await sweepAll(stopping, { cutoffMs: 0, maxRecords: 20, limit: 10 }, 0, () => stop), 10, 'a stopped sweeper ends after the slice in hand');
    await root.close();
  });

  t.test('bodies: decoded, redacted across the cut, binary named', async (t) => {
    const c = createBodyCapture({ enabled: true, max_bytes: 10, redact: ['sk-[a-z]+'] });
    t.equal(c.render(Buffer.from('abc')), 'abc');
    t.equal(c.render(Buffer.from('12345678 sk-secretvalue')), '12345678 [', 'redacted before the cut, so no part of the secret survives');
    t.equal(c.render(Buffer.from('ééééééé')), 'ééééé', 'no broken character at the cut');
    t.equal(c.render(Buffer.from([1, 0, 2])), '[binary: 3 bytes]');
    t.equal(c.render(['{"a":1}', '[DONE]']), '{"a":1}\n[D', 'stream events joined by newlines');
    const scrub = createBodyCapture({ enabled: true, max_bytes: 100, redact: [] });
    t.equal(scrub.render(Buffer.from('{"auth":"Bearer tok-12345678","t":"tok-12345678"}'), ['Bearer tok-12345678', 'tok-12345678']), '{"auth":"[redacted]","t":"[redacted]"}');
    t.equal(c.render(undefined), null);
  });

  t.test('export lines keep the requested order', async (t) => {
    const record = { id: 'i', trace_id: 't', status: 201, model: 'm', provider: 'p', usage: null, metadata: { a: '1' }, latency: { total_ms: 5 }, cost_cents: 0.5 } as unknown as StoredLog;
    t.equal(exportLine(record, ['response_status_code', 'id', 'ai_org', 'total_units', 'response_time', 'cost']), '{"response_status_code":201,"id":"i","ai_org":"p","total_units":0,"response_time":5,"cost":0.5}\n');
  });
});
