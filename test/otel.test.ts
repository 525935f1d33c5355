/**
 * The `otel` plugin against a local OTLP/HTTP receiver (a node:http server collecting the POSTed
 * JSON): W3C trace context in and out, GenAI attributes with the metered usage, error status,
 * sampling, nothing at all when unconfigured; and the exporter's batching, bound and close.
 */
import t from 'tap';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { startGateway, startMock, direct, type MockUpstream, type StartedGateway, type Teardown } from './helpers/gateway.js';
import { createLogger } from '../core/index.js';
import { createExporter } from '../plugins/otel/exporter.js';
import { attributes, type AnyValue, type OtlpSpan } from '../plugins/otel/otlp.js';
import { parseTraceparent, formatTraceparent, sampledByRatio, asTraceId } from '../plugins/otel/trace-context.js';

interface ExportRequest {
  resourceSpans: Array<{
    resource: { attributes: Array<{ key: string; value: AnyValue }> };
    scopeSpans: Array<{ scope: { name: string }; spans: OtlpSpan[] }>;
  }>;
}

interface Receiver {
  url: string;
  posts: Array<{ path: string; headers: IncomingHttpHeaders; body: ExportRequest }>;
  spans(): OtlpSpan[];
  /** Resolves with the first span `match` accepts, or rejects after 3 s. */
  waitFor(match: (s: OtlpSpan) => boolean): Promise<OtlpSpan>;
}

async function startReceiver(t: Teardown, status = 200): Promise<Receiver> {
  const posts: Receiver['posts'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      posts.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest });
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const spans = (): OtlpSpan[] => posts.flatMap((p) => p.body.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    posts,
    spans,
    async waitFor(match) {
      const deadline = Date.now() + 3000;
      for (;;) {
        const hit = spans().find(match);
        if (hit !== undefined) return hit;
        if (Date.now() > deadline) throw new Error(`no matching span among ${spans().length}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}

/** A span's attributes as a plain object (int values as numbers). */
function attrs(span: OtlpSpan): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value: v } of span.attributes) {
    out[key] = 'stringValue' in v ? v.stringValue : 'intValue' in v ? Number(v.intValue) : 'doubleValue' in v ? v.doubleValue : v.boolValue;
  }
  return out;
}

const CHAT = { model: 'gpt-4o', messages: [{ role: 'user', content: 'trace me' }] };
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

async function chat(gw: StartedGateway, mock: MockUpstream, options: { headers?: Record<string, string>; directives?: string; body?: unknown } = {}) {
  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...direct(mock, options.directives), ...options.headers },
    body: JSON.stringify(options.body ?? CHAT),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}

async function start(t: Teardown, otel = ''): Promise<{ gw: StartedGateway; mock: MockUpstream; receiver: Receiver }> {
  const receiver = await startReceiver(t);
  const mock = await startMock(t);
  const options = otel || `{endpoint: "${receiver.url}", service_name: gateway-test, headers: {x-collector-token: t0k}, flush_ms: 20}`;
  const gw = await startGateway(t, { yaml: `pipeline:\n  - otel: ${options}\n` });
  return { gw, mock, receiver };
}

const upstreamHeader = (mock: MockUpstream, name: string): unknown => mock.requests[mock.requests.length - 1]?.headers[name];

t.test("a caller's traceparent: the gateway span is its child, and the upstream's parent", async (t) => {
  const { gw, mock, receiver } = await start(t);
  const res = await chat(gw, mock, { headers: { traceparent: `00-${TRACE}-${CALLER_SPAN}-01`, tracestate: 'vendor=abc' } });
  t.equal(res.status, 200);
  const span = await receiver.waitFor((s) => s.traceId === TRACE);
  t.equal(span.parentSpanId, CALLER_SPAN, 'parent = the caller span');
  t.match(span.spanId, /^[0-9a-f]{16}$/);
  t.not(span.spanId, CALLER_SPAN, 'a span of its own');
  t.equal(span.kind, 2, 'SERVER');
  t.equal(span.name, 'chat gpt-4o');
  t.ok(BigInt(span.endTimeUnixNano) > BigInt(span.startTimeUnixNano), 'it lasted');
  t.ok(Math.abs(Number(BigInt(span.startTimeUnixNano) / 1_000_000n) - Date.now()) < 5000, 'wall-clock nanoseconds');
  t.same(span.status, { code: 0 }, 'UNSET on success');

  t.equal(upstreamHeader(mock, 'traceparent'), `00-${TRACE}-${span.spanId}-01`, 'the upstream got the gateway span as parent');
  t.equal(upstreamHeader(mock, 'tracestate'), 'vendor=abc', 'tracestate passed on');

  const usage = (JSON.parse(res.text) as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
  t.match(attrs(span), {
    'gen_ai.system': 'openai',
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'gpt-4o',
    'gen_ai.response.model': (JSON.parse(res.text) as { model: string }).model,
    'gen_ai.usage.input_tokens': usage.prompt_tokens,
    'gen_ai.usage.output_tokens': usage.completion_tokens,
    'http.request.method': 'POST',
    'http.response.status_code': 200,
    'url.path': '/v1/chat/completions',
    'gateway.request_id': res.headers['x-gateway-request-id'],
    'gateway.cache_status': 'DISABLED',
    'gateway.cost_cents': 0,
  });
  t.ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0);
  t.same(span.attributes.find((a) => a.key === 'gateway.cost_cents')?.value, { doubleValue: 0 }, 'cost is always a double');

  const post = receiver.posts[0]!;
  t.equal(post.path, '/v1/traces');
  t.equal(post.headers['content-type'], 'application/json');
  t.equal(post.headers['x-collector-token'], 't0k', 'configured headers are sent');
  t.same(post.body.resourceSpans[0]!.resource.attributes.find((a) => a.key === 'service.name')?.value, { stringValue: 'gateway-test' });
});

t.test('without a traceparent: a new trace, or x-gateway-trace-id when it is a trace id', async (t) => {
  const { gw, mock, receiver } = await start(t);
  const plain = await chat(gw, mock);
  const id = plain.headers['x-gateway-request-id'] as string;
  const span = await receiver.waitFor((s) => attrs(s)['gateway.request_id'] === id);
  t.match(span.traceId, /^[0-9a-f]{32}$/);
  t.equal(span.parentSpanId, undefined, 'a root span');
  t.equal(upstreamHeader(mock, 'traceparent'), `00-${span.traceId}-${span.spanId}-01`);
  t.equal(upstreamHeader(mock, 'tracestate'), undefined);

  const own = 'ABCDEF0123456789abcdef0123456789';
  await chat(gw, mock, { headers: { 'x-gateway-trace-id': own } });
  await receiver.waitFor((s) => s.traceId === own.toLowerCase());

  await chat(gw, mock, { headers: { traceparent: `00-${'0'.repeat(32)}-${CALLER_SPAN}-01`, tracestate: 'vendor=stale' } });
  const invalid = upstreamHeader(mock, 'traceparent') as string;
  t.equal(upstreamHeader(mock, 'tracestate'), undefined, 'the orphaned tracestate is not passed on');
  t.notMatch(invalid, /^00-0{32}/, 'an invalid traceparent is ignored: a new trace');
  const root = await receiver.waitFor((s) => s.traceId === invalid.slice(3, 35));
  t.equal(root.parentSpanId, undefined);
});

t.test('error status: a 500 upstream, a broken stream; not for a 4xx', async (t) => {
  const { gw, mock, receiver } = await start(t);
  const failed = await chat(gw, mock, { directives: 'status=500' });
  t.equal(failed.status, 500);
  const span = await receiver.waitFor((s) => attrs(s)['gateway.request_id'] === failed.headers['x-gateway-request-id']);
  t.equal(span.status.code, 2, 'ERROR');
  t.equal(attrs(span)['http.response.status_code'], 500);

  const broken = await chat(gw, mock, { directives: 'reset=mid_stream;reset_after=2', body: { ...CHAT, stream: true } });
  t.equal(broken.status, 200, 'the head was already sent');
  const streamSpan = await receiver.waitFor((s) => attrs(s)['gateway.request_id'] === broken.headers['x-gateway-request-id']);
  t.equal(streamSpan.status.code, 2, 'a stream error is an ERROR');
  t.ok(attrs(streamSpan)['error.type'], 'with its error code');

  const bad = await chat(gw, mock, { directives: 'status=400' });
  t.equal(bad.status, 400);
  const badSpan = await receiver.waitFor((s) => attrs(s)['gateway.request_id'] === bad.headers['x-gateway-request-id']);
  t.equal(badSpan.status.code, 0, "the caller's 4xx leaves the status unset");
});

t.test('streams: the response model from the first chunks, usage metered', async (t) => {
  const { gw, mock, receiver } = await start(t);
  const res = await chat(gw, mock, { body: { ...CHAT, stream: true } });
  t.equal(res.status, 200);
  const span = await receiver.waitFor((s) => attrs(s)['gateway.request_id'] === res.headers['x-gateway-request-id']);
  const a = attrs(span);
  t.equal(a['gateway.stream'], true);
  t.type(a['gen_ai.response.model'], 'string');
  t.ok((a['gen_ai.usage.output_tokens'] as number) > 0, 'stream usage');
});

t.test('sampling: an unsampled caller trace is propagated, not exported', async (t) => {
  const { gw, mock, receiver } = await start(t);
  await chat(gw, mock, { headers: { traceparent: `00-${TRACE}-${CALLER_SPAN}-00` } });
  t.match(upstreamHeader(mock, 'traceparent'), new RegExp(`^00-${TRACE}-[0-9a-f]{16}-00$`));
  const marker = await chat(gw, mock);
  await receiver.waitFor((s) => attrs(s)['gateway.request_id'] === marker.headers['x-gateway-request-id']);
  t.equal(receiver.spans().filter((s) => s.traceId === TRACE).length, 0, 'nothing exported for it');
});

t.test('not configured: no spans; a caller traceparent passes through untouched', async (t) => {
  const receiver = await startReceiver(t);
  const mock = await startMock(t);
  for (const yaml of ['pipeline: [otel]\n', 'pipeline: []\n']) {
    const gw = await startGateway(t, { yaml });
    const caller = `00-${TRACE}-${CALLER_SPAN}-01`;
    t.equal((await chat(gw, mock, { headers: { traceparent: caller } })).status, 200);
    t.equal(upstreamHeader(mock, 'traceparent'), caller, `${yaml.trim()}: forwarded like any client header, no gateway span`);
    t.equal((await chat(gw, mock)).status, 200);
    t.equal(upstreamHeader(mock, 'traceparent'), undefined, `${yaml.trim()}: none made up`);
    await gw.close();
  }
  await new Promise((r) => setTimeout(r, 100));
  t.equal(receiver.posts.length, 0, 'nothing exported');
});

t.test('close flushes what waits', async (t) => {
  const receiver = await startReceiver(t);
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: `pipeline:\n  - otel: {endpoint: "${receiver.url}", flush_ms: 60000}\n` });
  const res = await chat(gw, mock);
  t.equal(res.status, 200);
  await new Promise((r) => setTimeout(r, 50));
  t.equal(receiver.posts.length, 0, 'not yet: the timer is a minute');
  await gw.close();
  t.equal(receiver.spans().length, 1, 'sent on close');
});

// ── The machinery as plain functions ──────────────────────────────────────────────────────────

t.test('traceparent parsing', async (t) => {
  t.same(parseTraceparent(`00-${TRACE}-${CALLER_SPAN}-01`), { traceId: TRACE, spanId: CALLER_SPAN, sampled: true });
  t.same(parseTraceparent(`00-${TRACE}-${CALLER_SPAN}-00`)?.sampled, false);
  t.same(parseTraceparent(`00-${TRACE}-${CALLER_SPAN}-03`)?.sampled, true, 'other flag bits ignored');
  t.equal(parseTraceparent(`01-${TRACE}-${CALLER_SPAN}-01-future`)?.traceId, TRACE, 'a later version is read by its prefix');
  for (const bad of [
    undefined,
    '',
    `ff-${TRACE}-${CALLER_SPAN}-01`,
    `00-${TRACE}-${CALLER_SPAN}-01-extra`,
    `00-${TRACE.toUpperCase()}-${CALLER_SPAN}-01`,
    `00-${'0'.repeat(32)}-${CALLER_SPAN}-01`,
    `00-${TRACE}-${'0'.repeat(16)}-01`,
    `00_${TRACE}_${CALLER_SPAN}_01`,
    `00-${TRACE}-${CALLER_SPAN}-0x`,
  ]) {
    t.equal(parseTraceparent(bad), undefined, `refused: ${String(bad)}`);
  }
  t.equal(formatTraceparent(TRACE, CALLER_SPAN, false), `00-${TRACE}-${CALLER_SPAN}-00`);
  t.equal(asTraceId('not-a-trace-id'), undefined);
  t.equal(asTraceId('019a7c3e-1234-7abc-8def-0123456789ab'), undefined, 'a UUID with dashes is not one');
  t.equal(sampledByRatio(TRACE, 0), false);
  t.equal(sampledByRatio(TRACE, 1), true);
  t.equal(sampledByRatio('0'.repeat(24) + '7fffffff', 0.5), true);
  t.equal(sampledByRatio('0'.repeat(24) + '80000000', 0.5), false, 'decided by the trace id: every process agrees');
});

function span(i: number): OtlpSpan {
  return { traceId: TRACE, spanId: i.toString(16).padStart(16, '0'), name: `s${i}`, kind: 2, startTimeUnixNano: '1', endTimeUnixNano: '2', attributes: attributes({ i }), status: { code: 0 } };
}

t.test('exporter: batches at batch_size, bounded queue drops, close flushes', async (t) => {
  const receiver = await startReceiver(t);
  const base = { endpoint: receiver.url, headers: {}, resource: [], scope: { name: 'test', version: '1' }, timeoutMs: 2000, log: createLogger({ level: 'error', write: () => undefined }) };

  const batching = createExporter({ ...base, flushMs: 60_000, batchSize: 3, maxQueue: 100 });
  t.teardown(() => batching.close());
  for (let i = 0; i < 7; i++) batching.push(span(i));
  await receiver.waitFor((s) => s.name === 's5');
  t.same(receiver.posts.map((p) => p.body.resourceSpans[0]!.scopeSpans[0]!.spans.length), [3, 3], 'two full batches, no timer needed');
  await batching.close();
  t.equal(receiver.posts.length, 3, 'the last one on close');
  t.same(batching.stats, { exported: 7, dropped: 0, failed: 0 });

  receiver.posts.length = 0;
  const bounded = createExporter({ ...base, flushMs: 60_000, batchSize: 100, maxQueue: 5 });
  for (let i = 0; i < 8; i++) bounded.push(span(i));
  t.equal(bounded.stats.dropped, 3, 'past max_queue, dropped');
  await bounded.close();
  t.same(receiver.spans().map((s) => s.name), ['s0', 's1', 's2', 's3', 's4'], 'the first five, in order');
  bounded.push(span(9));
  t.equal(bounded.stats.dropped, 4, 'after close, dropped');
});

t.test('exporter: a failing collector costs nothing but the spans', async (t) => {
  const refusing = await startReceiver(t, 503);
  const warnings: string[] = [];
  const log = createLogger({ level: 'warn', write: (line) => void warnings.push(line) });
  const exporter = createExporter({ endpoint: refusing.url, headers: {}, resource: [], scope: { name: 'test', version: '1' }, flushMs: 10, batchSize: 10, maxQueue: 10, timeoutMs: 500, log });
  exporter.push(span(1));
  exporter.push(span(2));
  await exporter.flush();
  t.same(exporter.stats, { exported: 0, dropped: 0, failed: 2 });
  exporter.push(span(3));
  await exporter.flush();
  t.equal(exporter.stats.failed, 3);
  t.equal(warnings.filter((w) => w.includes('trace export refused')).length, 1, 'warned once, not per batch');
  await exporter.close();

  const dead = createExporter({ endpoint: 'http://127.0.0.1:1/v1/traces', headers: {}, resource: [], scope: { name: 'test', version: '1' }, flushMs: 10, batchSize: 10, maxQueue: 10, timeoutMs: 500, log });
  dead.push(span(1));
  await dead.close();
  t.equal(dead.stats.failed, 1, 'connection refused: counted, not thrown');
});
