/**
 * The `metrics` plugin: `/metrics` parses as the Prometheus text format (checked line by line by
 * a small parser here; prom-client has none), counts known traffic exactly, reads breakers, the
 * log queue and the token pool at scrape time, can require a key, and keeps label cardinality
 * bounded.
 */
import t from 'tap';
import { request } from 'undici';
import { startGateway, startMock, direct, insertKey, addWorkspace, ADMIN_KEY, type MockUpstream, type StartedGateway } from './helpers/gateway.js';
import { definePlugin, type LogRecord, type PluginDefinition } from '../core/index.js';
import { begin, record, resetBreakers, DEFAULT_BREAKER } from '../core/router/breaker.js';
import { createRequestMetrics } from '../plugins/metrics/instruments.js';
import { LabelSets } from '../plugins/metrics/label-sets.js';
import { renderExposition } from '../plugins/metrics/exposition.js';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { CounterFamily, HistogramFamily } from '../plugins/metrics/series.js';

// ── A parser for the text exposition format 0.0.4 ─────────────────────────────────────────────

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`;
const VALUE = '(?:[+-]?(?:\\d+\\.?\\d*(?:[eE][+-]?\\d+)?|\\.\\d+(?:[eE][+-]?\\d+)?)|[+-]?Inf|NaN)';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*,?)?\\})? (${VALUE})(?: -?\\d+)?$`);
const HELP = new RegExp(`^# HELP (${NAME})(?: .*)?$`);
const TYPE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/**
 * Every line is a HELP, a TYPE, another comment, blank, or `name{labels} value`; every sample
 * belongs to a family with a TYPE; histograms have monotonic buckets ending in `+Inf` = `_count`.
 * Throws naming the first bad line.
 */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  text.split('\n').forEach((line, i) => {
    const where = `line ${i + 1}: ${JSON.stringify(line)}`;
    if (line === '') return;
    if (line.startsWith('#')) {
      const type = TYPE.exec(line);
      if (type) {
        if (types.has(type[1]!)) throw new Error(`TYPE given twice, ${where}`);
        types.set(type[1]!, type[2]!);
      } else if (line.startsWith('# HELP') && !HELP.test(line)) throw new Error(`bad HELP, ${where}`);
      else if (line.startsWith('# TYPE')) throw new Error(`bad TYPE, ${where}`);
      return;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample, ${where}`);
    const name = m[1]!;
    const family = types.has(name) ? name : name.replace(/_(bucket|sum|count|total|created)$/, '');
    if (!types.has(family)) throw new Error(`sample before its TYPE, ${where}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(LABEL_PAIR)) labels[k!] = v!.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
    const raw = m[3]!;
    samples.push({ name, labels, value: raw.endsWith('Inf') ? (raw.startsWith('-') ? -Infinity : Infinity) : Number(raw) });
  });
  for (const [family, type] of types) {
    if (type !== 'histogram') continue;
    const series = new Map<string, Sample[]>();
    for (const s of samples.filter((x) => x.name === `${family}_bucket`)) {
      const { le, ...rest } = s.labels;
      const key = JSON.stringify(rest);
      series.set(key, [...(series.get(key) ?? []), { ...s, labels: { le: le! } }]);
    }
    for (const [key, buckets] of series) {
      for (let i = 1; i < buckets.length; i++) if (buckets[i]!.value < buckets[i - 1]!.value) throw new Error(`${family}${key}: buckets not cumulative`);
      const last = buckets[buckets.length - 1]!;
      const count = samples.find((x) => x.name === `${family}_count` && JSON.stringify(x.labels) === key);
      if (last.labels.le !== '+Inf' || count === undefined || count.value !== last.value) throw new Error(`${family}${key}: +Inf bucket ≠ _count`);
    }
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels` (undefined when none). */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const hits = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return hits.length === 0 ? undefined : hits.reduce((n, s) => n + s.value, 0);
}

t.test('the parser refuses what is not the text format', async (t) => {
  t.same(parseExposition('# HELP a_total A.\n# TYPE a_total counter\na_total{x="1",y="q\\"uote"} 3\n'), [{ name: 'a_total', labels: { x: '1', y: 'q"uote' }, value: 3 }]);
  t.throws(() => parseExposition('# TYPE a counter\na{x=1} 3\n'), /not a sample/);
  t.throws(() => parseExposition('# TYPE a counter\na 3 4 5\n'), /not a sample/);
  t.throws(() => parseExposition('b 3\n'), /before its TYPE/);
  t.throws(() => parseExposition('# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_count 1\n'), /cumulative/);
});

// ── Live traffic ──────────────────────────────────────────────────────────────────────────────

const CHAT = { model: 'gpt-4o', messages: [{ role: 'user', content: 'count me in the metrics' }] };

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

async function send(url: string, options: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
  const res = await request(url, {
    method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
    headers: { ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

function chat(gw: StartedGateway, mock: MockUpstream, headers: Record<string, string> = {}, body: unknown = CHAT): Promise<Answer> {
  return send(`${gw.url}/v1/chat/completions`, { headers: { 'x-gateway-api-key': ADMIN_KEY, ...direct(mock), ...headers }, body });
}

/** Scrapes until `ready` holds (onDone runs just after the client has its answer) or 2 s pass. */
async function scrape(gw: StartedGateway, ready: (s: Sample[]) => boolean = () => true, headers: Record<string, string> = {}): Promise<{ answer: Answer; samples: Sample[] }> {
  const deadline = Date.now() + 2000;
  for (;;) {
    const answer = await send(`${gw.url}/metrics`, { headers });
    const samples = answer.status === 200 ? parseExposition(answer.text) : [];
    if (answer.status !== 200 || ready(samples) || Date.now() > deadline) return { answer, samples };
    await new Promise((r) => setTimeout(r, 10));
  }
}

t.test('known traffic: exact counts, histograms, tokens, rejections', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: 'pipeline: [metrics, auth, rate-limit, admin-policies]\n', env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const created = await send(`${gw.url}/v1/policies/rate-limits`, {
    headers: { 'x-gateway-api-key': ADMIN_KEY },
    body: { conditions: [{ key: 'metadata.tier', value: 'free' }], group_by: [{ key: 'api_key' }], type: 'requests', unit: 'rpm', value: 1 },
  });
  t.equal(created.status, 200, created.text);

  const free = { 'x-gateway-metadata': '{"tier":"free"}' };
  const ok = [await chat(gw, mock), await chat(gw, mock), await chat(gw, mock, free)];
  t.same(ok.map((a) => a.status), [200, 200, 200]);
  const unauthorized = await chat(gw, mock, { 'x-gateway-api-key': 'gw-not-a-key' });
  t.equal(unauthorized.status, 401);
  const limited = await chat(gw, mock, free);
  t.equal(limited.status, 429);
  t.match(JSON.parse(limited.text), { error: { code: 'rate_limit_exceeded' } });

  const route = { route: 'chat.completions' };
  const { answer, samples } = await scrape(gw, (s) => value(s, 'gateway_request_duration_seconds_count', route) === 5);
  t.equal(answer.status, 200, 'public without a key');
  t.equal(answer.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');

  t.equal(value(samples, 'gateway_requests_total', { ...route, status: '200', provider: 'openai' }), 3, '3 OKs');
  t.equal(value(samples, 'gateway_requests_total', { ...route, status: '401' }), 1, 'one 401');
  t.equal(value(samples, 'gateway_requests_total', { ...route, status: '429' }), 1, 'one 429');
  t.equal(value(samples, 'gateway_requests_total', route), 5, 'nothing else on the route');
  t.equal(value(samples, 'gateway_rejections_total', { reason: 'rate_limit' }), 1);
  t.equal(value(samples, 'gateway_rejections_total', { reason: 'usage_limit' }), 0, 'zero, present from the start');

  t.equal(value(samples, 'gateway_request_duration_seconds_count', route), 5);
  t.equal(value(samples, 'gateway_overhead_duration_seconds_count', route), 5);
  t.equal(value(samples, 'gateway_upstream_duration_seconds_count', route), 3, 'only requests that reached the upstream');
  t.equal(value(samples, 'gateway_request_duration_seconds_bucket', { ...route, le: '60' }), 5);
  t.ok(value(samples, 'gateway_request_duration_seconds_bucket', { ...route, le: '0.0001' }) !== undefined, 'sub-ms buckets');
  t.equal(value(samples, 'gateway_time_to_first_byte_seconds_count', route), undefined, 'no stream, no time to first byte');

  const usage = ok.map((a) => (JSON.parse(a.text) as { usage: { prompt_tokens: number; completion_tokens: number } }).usage);
  const labels = { provider: 'openai', model: 'gpt-4o' };
  t.equal(value(samples, 'gateway_tokens_total', { ...labels, type: 'prompt' }), usage.reduce((n, u) => n + u.prompt_tokens, 0));
  t.equal(value(samples, 'gateway_tokens_total', { ...labels, type: 'completion' }), usage.reduce((n, u) => n + u.completion_tokens, 0));
  t.equal(samples.filter((s) => s.name === 'gateway_tokens_total').length, 2, 'model labels only from metered answers');
  t.equal(value(samples, 'gateway_cost_cents_total', labels), 0, 'no pricing service in this pipeline: 0 cents');
  t.equal(value(samples, 'gateway_cache_requests_total'), undefined, 'no cache plugin: no cache counts');

  t.ok(value(samples, 'nodejs_eventloop_lag_seconds') !== undefined, 'event-loop lag');
  t.ok(value(samples, 'nodejs_eventloop_lag_p99_seconds') !== undefined, 'event-loop delay percentiles');
  t.equal(value(samples, 'gateway_token_queue_depth'), 0, 'the token pool queue');
  t.equal(value(samples, 'gateway_log_dropped_total'), 0, 'no logging plugin: 0 drops');
});

t.test('streams: time to first byte, tokens metered like plain calls', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: 'pipeline: [metrics]\n' });
  const res = await send(`${gw.url}/v1/chat/completions`, { headers: direct(mock), body: { ...CHAT, stream: true } });
  t.equal(res.status, 200);
  t.match(res.text, /data: \[DONE\]/);
  const route = { route: 'chat.completions' };
  const { samples } = await scrape(gw, (s) => value(s, 'gateway_time_to_first_byte_seconds_count', route) === 1);
  t.equal(value(samples, 'gateway_time_to_first_byte_seconds_count', route), 1);
  t.ok(value(samples, 'gateway_tokens_total', { type: 'completion', model: 'gpt-4o' })! > 0, 'the stream was metered');
});

t.test('scrape-time gauges: circuit breakers and the log queue', async (t) => {
  t.teardown(resetBreakers);
  const logStats = definePlugin({
    name: 'fake-log-stats',
    setup(app) {
      // The logging plugin's service, by shape (the metrics plugin asks for it by name only).
      (app as unknown as { provide(name: string, service: unknown): void }).provide('log-stats', { dropped: () => 7, queued: () => 3 });
    },
  }) as PluginDefinition<never>;
  const gw = await startGateway(t, { yaml: 'pipeline: [metrics, fake-log-stats]\n', plugins: { 'fake-log-stats': logStats } });
  const settings = { ...DEFAULT_BREAKER, failure_threshold: 1 };
  begin('k-open', 'openai-main', settings);
  record('k-open', 'openai-main', true, settings);
  begin('k-closed', 'groq-backup', settings);
  record('k-closed', 'groq-backup', false, settings);
  const { samples } = await scrape(gw);
  t.equal(value(samples, 'gateway_circuit_breaker_state', { target: 'openai-main' }), 2, 'open');
  t.equal(value(samples, 'gateway_circuit_breaker_state', { target: 'groq-backup' }), 0, 'closed');
  t.equal(value(samples, 'gateway_log_dropped_total'), 7, 'read from the log-stats service, a later plugin');
  t.equal(value(samples, 'gateway_log_queued'), 3);
});

t.test('require_key: analytics.view', async (t) => {
  const gw = await startGateway(t, { yaml: 'pipeline: [metrics: {require_key: true}, auth]\n', env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const url = `${gw.url}/metrics`;
  const viewer = insertKey(gw.store, { workspace_id: null, scopes: ['analytics.view'] });
  const { key: caller } = addWorkspace(gw.store, 'team', ['completions.write']);
  t.equal((await send(url)).status, 401, 'no key');
  t.equal((await send(url, { headers: { 'x-gateway-api-key': 'gw-wrong' } })).status, 401, 'unknown key');
  const denied = await send(url, { headers: { 'x-gateway-api-key': caller } });
  t.equal(denied.status, 403);
  t.match(JSON.parse(denied.text), { error: { code: 'insufficient_scope' } });
  const allowed = await send(url, { headers: { 'x-gateway-api-key': viewer } });
  t.equal(allowed.status, 200);
  t.ok(parseExposition(allowed.text).length > 0);
});

t.test('require_key without auth in the pipeline: closed, not open', async (t) => {
  const gw = await startGateway(t, { yaml: 'pipeline: [metrics: {require_key: true}]\n' });
  t.equal((await send(`${gw.url}/metrics`)).status, 401);
});

// ── The machinery as plain functions ──────────────────────────────────────────────────────────

t.test('label sets: admitted up to the cap, then free labels fold into other', async (t) => {
  const sets = new LabelSets(2);
  t.same(sets.admit({ type: 'prompt', model: 'a' }, ['model']), { type: 'prompt', model: 'a' });
  t.same(sets.admit({ type: 'prompt', model: 'b' }, ['model']), { type: 'prompt', model: 'b' });
  t.same(sets.admit({ type: 'prompt', model: 'c' }, ['model']), { type: 'prompt', model: 'other' }, 'past the cap');
  t.same(sets.admit({ type: 'prompt', model: 'a' }, ['model']), { type: 'prompt', model: 'a' }, 'a known set keeps counting as itself');
  t.equal(sets.admit({ type: 'prompt', model: 'x'.repeat(1000) }, ['model']).model, 'other');
  t.equal(new LabelSets(5).admit({ model: 'x'.repeat(1000) }, []).model.length, 128, 'values are bounded');
});

function fakeRecord(model: string, fields: Partial<LogRecord> = {}): LogRecord {
  return {
    id: 'r', created_at: '', trace_id: 't', span_id: null, parent_span_id: null, span_name: null, organisation_id: null, workspace_id: null,
    api_key_id: null, virtual_key: null, metadata: {}, method: 'POST', path: '/v1/chat/completions', route: 'chat.completions', provider: 'openai',
    model, config: null, last_used_option_index: 'config', retry_count: 0, cache_status: 'MISS', stream: false, status: 200, is_success: true,
    source: 'upstream', error_code: null, aborted: false, latency: { total_ms: 12, upstream_ms: 11.5, gateway_ms: 0.5, ttfb_ms: null },
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, cached_tokens: 0, reasoning_tokens: 0, source: 'upstream' },
    cost_cents: 0.25, priced_as: null, ...fields,
  };
}

t.test('NaN is written NaN (prom-client writes Nan; the idle event-loop gauges are NaN)', async (t) => {
  const registry = new Registry();
  new Gauge({ name: 'idle_mean_seconds', help: 'No samples yet.', registers: [registry] }).set(Number.NaN);
  const text = await renderExposition([registry, createRequestMetrics(10).registry]);
  t.match(text, /^idle_mean_seconds NaN$/m);
  t.ok(Number.isNaN(value(parseExposition(text), 'idle_mean_seconds')!));
});

t.test('a thousand models: bounded series, nothing lost', async (t) => {
  const m = createRequestMetrics(10);
  for (let i = 0; i < 1000; i++) m.record(fakeRecord(`model-${i}`));
  m.record(fakeRecord('late', { usage: null, cache_status: 'DISABLED', error_code: 'usage_limit_exceeded', status: 429 }));
  const samples = parseExposition(await m.registry.metrics());
  const tokenSeries = samples.filter((s) => s.name === 'gateway_tokens_total');
  t.equal(tokenSeries.length, 12, '10 admitted sets + prompt/completion under other');
  t.equal(value(samples, 'gateway_tokens_total', { type: 'prompt' }), 10_000, 'every token counted');
  t.equal(value(samples, 'gateway_tokens_total', { type: 'prompt', model: 'other', provider: 'other' }), 10 * 995);
  t.equal(value(samples, 'gateway_cost_cents_total'), 250);
  t.equal(value(samples, 'gateway_cache_requests_total', { status: 'MISS' }), 1000);
  t.equal(value(samples, 'gateway_rejections_total', { reason: 'usage_limit' }), 1);
  t.equal(value(samples, 'gateway_overhead_duration_seconds_bucket', { le: '0.0005' }), 1001, 'a 0.5 ms overhead lands in the 0.5 ms bucket');
  t.equal(value(samples, 'gateway_overhead_duration_seconds_bucket', { le: '0.00025' }), 0);
});

t.test('a label set seen again counts where it counted first, admitted or folded, after the hot path\'s memo started over', async (t) => {
  // Cap 2: prompt and completion of model a are admitted; every other model folds into other.
  // The memo of raw values holds 4 × 2 sets, so ten models make it start over once.
  const m = createRequestMetrics(2);
  const models = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'];
  for (const model of models) m.record(fakeRecord(model));
  for (let i = 0; i < 3; i++) {
    m.record(fakeRecord('a'));
    m.record(fakeRecord('c'));
  }
  const samples = parseExposition(await m.registry.metrics());
  t.equal(samples.filter((s) => s.name === 'gateway_tokens_total').length, 4, 'a and other, prompt and completion');
  t.equal(value(samples, 'gateway_tokens_total', { type: 'prompt', model: 'a', provider: 'openai' }), 40);
  t.equal(value(samples, 'gateway_tokens_total', { type: 'prompt', model: 'other', provider: 'other' }), 120);
  t.equal(value(samples, 'gateway_cost_cents_total'), 16 * 0.25);
  t.equal(value(samples, 'gateway_requests_total', { route: 'chat.completions', status: '200', provider: 'openai' }), 16);
});

t.test('stream overhead: time to first byte minus upstream, not the whole stream', async (t) => {
  const m = createRequestMetrics(10);
  m.record(fakeRecord('m', { stream: true, latency: { total_ms: 8000, upstream_ms: 300, gateway_ms: 7700, ttfb_ms: 300.2 } }));
  const samples = parseExposition(await m.registry.metrics());
  t.equal(value(samples, 'gateway_overhead_duration_seconds_bucket', { le: '0.00025' }), 1, '0.2 ms');
  t.equal(value(samples, 'gateway_time_to_first_byte_seconds_bucket', { le: '0.5' }), 1);
  t.equal(value(samples, 'gateway_request_duration_seconds_bucket', { le: '5' }), 0, 'the total is still the whole stream');
});

t.test('series render exactly as prom-client renders the same observations', async (t) => {
  const ours = new Registry();
  const theirs = new Registry();
  const buckets = [0.001, 0.01, 0.1, 1];
  const h = new HistogramFamily({ name: 'h_seconds', help: 'A histogram.', labelNames: ['route'], buckets, registers: [ours] });
  const ph = new Histogram({ name: 'h_seconds', help: 'A histogram.', labelNames: ['route'], buckets, registers: [theirs] });
  const c = new CounterFamily({ name: 'c_total', help: 'A counter.', labelNames: ['route', 'status'], registers: [ours] });
  const pc = new Counter({ name: 'c_total', help: 'A counter.', labelNames: ['route', 'status'], registers: [theirs] });
  // Values on the bounds (le is inclusive), between them, above the last, and zero.
  const values = [0, 0.001, 0.0015, 0.01, 0.5, 1, 7, 0.0001];
  for (const [i, v] of values.entries()) {
    const route = i % 2 === 0 ? 'chat.completions' : 'embeddings';
    h.observe(h.cell({ route }), v);
    ph.observe({ route }, v);
    c.cell({ route, status: String(200 + (i % 3)) }).value += i;
    pc.inc({ route, status: String(200 + (i % 3)) }, i);
  }
  t.equal(await ours.metrics(), await theirs.metrics(), 'the same text, line for line');
  ours.resetMetrics();
  theirs.resetMetrics();
  t.match(await ours.metrics(), /h_seconds_count\{route="embeddings"\} 0/, 'reset zeroes the cells');
});
