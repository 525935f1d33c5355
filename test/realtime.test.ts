/**
 * The `realtime` plugin end to end: a real `ws` client through a real gateway to the mock
 * Realtime server (test/helpers/realtime-upstream.ts). Events both ways (text and binary), the
 * provider key injected from a virtual key or a config target and the gateway key never seen
 * upstream, keys refused before the upgrade, rate limits and budgets at session start and charged
 * with the usage of `response.done`, the log record, upstream refusals, closes from either side,
 * Azure's form, and plain requests carrying an `Upgrade` header still served as HTTP/1.1.
 */
import t from 'tap';
import { connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, request } from 'undici';
import WebSocket from 'ws';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { startGateway, startMock, direct, ADMIN_KEY, type StartedGateway, type Teardown } from './helpers/gateway.js';
import { startRealtimeUpstream, type RealtimeUpstream } from './helpers/realtime-upstream.js';
import { DEFAULT_WORKSPACE_SCOPES } from '../core/auth/scopes.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const MODEL = 'gpt-4o-realtime-preview';
const fixtures = fileURLToPath(new URL('../../test/fixtures/tls/', import.meta.url));
const ca = readFileSync(`${fixtures}cert.pem`);
const tlsAgent = new Agent({ connect: { ca } });
t.teardown(() => tlsAgent.close());
const VK_KEY = 'sk-vk-realtime-0123456789';

const PIPELINE = `pipeline:
  - logging: {flush_ms: 20}
  - realtime: {connect_timeout: 2000}
  - auth
  - virtual-keys
  - config-strategy
  - rate-limit
  - usage-limits: {flush_ms: 10}
  - admin-resources
  - admin-api-keys
  - admin-policies
  - admin-catalog
`;

type Opened =
  | { kind: 'open'; ws: WebSocket; headers: IncomingHttpHeaders; next: (type?: string) => Promise<Json | Buffer> }
  | { kind: 'refused'; status: number; headers: IncomingHttpHeaders; body: Json };

/** Opens a Realtime WebSocket through the gateway; a refusal resolves with its HTTP answer. */
function open(gw: StartedGateway, options: { query?: string; headers?: Record<string, string>; protocols?: string[]; path?: string } = {}): Promise<Opened> {
  const url = `${gw.url.replace(/^http/, 'ws')}${options.path ?? '/v1/realtime'}?${options.query ?? `model=${MODEL}`}`;
  const ws = new WebSocket(url, options.protocols ?? [], { headers: options.headers ?? {} });
  // Every message in arrival order; `next` takes them one by one (optionally skipping to a type).
  const inbox: Array<Json | Buffer> = [];
  const waiting: Array<() => void> = [];
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    inbox.push(isBinary ? data : (JSON.parse(data.toString()) as Json));
    waiting.splice(0).forEach((w) => w());
  });
  async function next(type?: string): Promise<Json | Buffer> {
    for (;;) {
      while (inbox.length > 0) {
        const m = inbox.shift()!;
        if (type === undefined || (!Buffer.isBuffer(m) && m.type === type)) return m;
      }
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no message${type ? ` of type ${type}` : ''} in time`)), 5000);
        waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
  return new Promise((resolve, reject) => {
    let headers: IncomingHttpHeaders = {};
    ws.once('upgrade', (res) => {
      headers = res.headers;
    });
    ws.once('open', () => resolve({ kind: 'open', ws, headers, next }));
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => {
        let body: Json = {};
        try {
          body = JSON.parse(text) as Json;
        } catch {
          /* compared by status */
        }
        resolve({ kind: 'refused', status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    ws.once('error', (err) => reject(err));
  });
}

function opened(o: Opened): Extract<Opened, { kind: 'open' }> {
  if (o.kind !== 'open') throw new Error(`expected an open session, got ${o.status} ${JSON.stringify(o.body)}`);
  return o;
}

function refused(o: Opened): Extract<Opened, { kind: 'refused' }> {
  if (o.kind !== 'refused') {
    o.ws.terminate();
    throw new Error('expected a refusal, the session opened');
  }
  return o;
}

function closed(ws: WebSocket): Promise<{ code: number; reason: string }> {
  if (ws.readyState === WebSocket.CLOSED) return Promise.resolve({ code: -1, reason: 'already closed' });
  return new Promise((resolve) => ws.once('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() })));
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function admin(gw: StartedGateway, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Json> {
  const res = await request(`${gw.url}${path}`, {
    method,
    ...(gw.url.startsWith('https:') ? { dispatcher: tlsAgent } : {}),
    headers: { 'x-gateway-api-key': ADMIN_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.body.json()) as Json;
  if (res.statusCode !== 200) throw new Error(`${method} ${path} → ${res.statusCode} ${JSON.stringify(json)}`);
  return json;
}

/** The log record of a request (waits for the logging plugin's flush). */
async function logOf(gw: StartedGateway, id: string): Promise<Json> {
  for (let i = 0; i < 100; i++) {
    const res = await request(`${gw.url}/v1/logs/${id}`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
    const body = (await res.body.json()) as Json;
    if (res.statusCode === 200) return body;
    await sleep(20);
  }
  throw new Error(`no log record ${id}`);
}

async function setup(t: Teardown, server = ''): Promise<{ gw: StartedGateway; up: RealtimeUpstream }> {
  const up = await startRealtimeUpstream(t);
  const gw = await startGateway(t, { yaml: server + PIPELINE, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  await admin(gw, 'POST', '/v1/virtual-keys', { name: 'realtime', slug: 'rt', provider: 'openai', key: VK_KEY, custom_host: `${up.url}/v1` });
  return { gw, up };
}

t.test('a session relays events both ways; the provider key comes from the virtual key, the gateway key never goes upstream', async (t) => {
  const { gw, up } = await setup(t);
  const s = opened(await open(gw, { headers: { authorization: `Bearer ${ADMIN_KEY}`, 'x-gateway-virtual-key': 'rt' } }));
  const requestId = s.headers['x-gateway-request-id'] as string;
  t.match(requestId, /^[0-9a-f-]{36}$/, 'the 101 carries x-gateway-request-id (response hooks ran on it)');
  t.equal(s.headers['x-gateway-provider'], 'openai');

  t.match(await s.next(), { type: 'session.created', session: { model: MODEL } }, 'the upstream speaks first');
  s.ws.send(JSON.stringify({ type: 'session.update', session: { instructions: 'be brief' } }));
  t.match(await s.next(), { type: 'session.updated' });
  s.ws.send(JSON.stringify({ type: 'response.create' }));
  const order: string[] = [];
  for (let i = 0; i < 5; i++) order.push(((await s.next()) as Json).type as string);
  t.same(order, ['response.created', 'response.output_text.delta', 'response.output_text.delta', 'response.audio.delta', 'response.done'], 'events arrive in order, none held back');

  const audio = Buffer.from([9, 8, 7, 0, 255]);
  s.ws.send(audio);
  const echoed = await s.next();
  t.ok(Buffer.isBuffer(echoed) && echoed.equals(audio), 'a binary frame goes up and comes back as binary');
  t.ok(up.received.some((m) => Buffer.isBuffer(m) && m.equals(audio)), 'the upstream got it as binary');

  const pong = new Promise<Buffer>((resolve) => s.ws.once('pong', resolve));
  s.ws.ping(Buffer.from('are you there'));
  t.equal((await pong).toString(), 'are you there', 'pings are answered');

  const hs = up.handshakes.at(-1)!;
  t.equal(hs.path, '/v1/realtime');
  t.equal(hs.query.get('model'), MODEL);
  t.equal(hs.headers.authorization, `Bearer ${VK_KEY}`, 'the virtual key is the upstream credential');
  t.equal(hs.headers['openai-beta'], 'realtime=v1');
  t.notOk(JSON.stringify(hs).includes(ADMIN_KEY), 'the gateway key is nowhere in the upstream handshake');
  t.notOk(Object.keys(hs.headers).some((h) => h.startsWith('x-gateway-')), 'no x-gateway-* header goes upstream');

  s.ws.close(1000, 'all done');
  t.same(await closed(s.ws), { code: 1000, reason: 'all done' });
  await until(() => up.closes.length > 0, 'the upstream close');
  t.same(up.closes.at(-1), { code: 1000, reason: 'all done' }, 'the client close code and reason reach the upstream');

  const log = await logOf(gw, requestId);
  t.match(log, { route: 'realtime', method: 'GET', path: '/v1/realtime', status: 101, is_success: true, provider: 'openai', model: MODEL, virtual_key: 'rt', aborted: false, error_code: null });
  t.match(log.usage, { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18, cached_tokens: 3, source: 'upstream' }, 'usage summed from response.done');
  t.ok(log.latency.total_ms > 0);
  t.ok(log.cost_cents > 0, 'priced like any call');
  t.match(log.priced_as, /^openai\//);
});

t.test('a browser puts the key in the subprotocol list: it authenticates and is never echoed or forwarded', async (t) => {
  const { gw, up } = await setup(t);
  const s = opened(await open(gw, { headers: { 'x-gateway-virtual-key': 'rt' }, protocols: ['realtime', `openai-insecure-api-key.${ADMIN_KEY}`, 'openai-beta.realtime-v1'] }));
  t.equal(s.ws.protocol, 'realtime', 'the subprotocol chosen is realtime');
  t.match(await s.next(), { type: 'session.created' });
  const hs = up.handshakes.at(-1)!;
  t.same(hs.protocols, ['realtime', 'openai-beta.realtime-v1'], 'the key subprotocol is dropped upstream');
  t.notOk(JSON.stringify(hs).includes(ADMIN_KEY));
  s.ws.close();
  t.equal((await closed(s.ws)).code, 1005, 'a close without a code stays without one');
});

t.test('a missing or wrong gateway key is refused before the upgrade', async (t) => {
  const { gw, up } = await setup(t);
  const missing = refused(await open(gw, { headers: { 'x-gateway-virtual-key': 'rt' } }));
  t.equal(missing.status, 401);
  t.equal(missing.body.error.code, 'missing_api_key');
  t.equal(missing.headers['x-gateway-error-source'], 'gateway');
  const wrong = refused(await open(gw, { headers: { authorization: 'Bearer gw-not-a-key', 'x-gateway-virtual-key': 'rt' } }));
  t.equal(wrong.status, 401);
  t.equal(wrong.body.error.code, 'invalid_api_key');
  const wrongProtocol = refused(await open(gw, { headers: { 'x-gateway-virtual-key': 'rt' }, protocols: ['realtime', 'openai-insecure-api-key.nope'] }));
  t.equal(wrongProtocol.body.error.code, 'invalid_api_key');
  t.equal(up.handshakes.length, 0, 'the upstream was never called');
  const log = await logOf(gw, wrong.headers['x-gateway-request-id'] as string);
  t.match(log, { route: 'realtime', status: 401, error_code: 'invalid_api_key', is_success: false });
});

t.test('a session over its rate limit is refused with 429 before the upgrade', async (t) => {
  const { gw, up } = await setup(t);
  const { key } = await admin(gw, 'POST', '/v1/api-keys/workspace/service', { name: 'one a minute', scopes: DEFAULT_WORKSPACE_SCOPES, rate_limits: [{ type: 'requests', unit: 'rpm', value: 1 }] });
  const first = opened(await open(gw, { headers: { authorization: `Bearer ${key}`, 'x-gateway-virtual-key': 'rt' } }));
  t.ok(first.headers['x-ratelimit-limit-requests'] !== undefined, 'the 101 carries the x-ratelimit-* headers');
  const over = refused(await open(gw, { headers: { authorization: `Bearer ${key}`, 'x-gateway-virtual-key': 'rt' } }));
  t.equal(over.status, 429);
  t.equal(over.body.error.code, 'rate_limit_exceeded');
  t.ok(Number(over.headers['retry-after']) > 0, 'with retry-after');
  t.equal(up.handshakes.length, 1, 'the refused session never reached the upstream');
  first.ws.close();
  await closed(first.ws);
});

t.test('usage from response.done is charged to a token budget; the next session is refused', async (t) => {
  const { gw } = await setup(t);
  const { id, key } = await admin(gw, 'POST', '/v1/api-keys/workspace/service', { name: 'budget', scopes: DEFAULT_WORKSPACE_SCOPES, usage_limits: { credit_limit: 30, type: 'tokens' } });
  const s = opened(await open(gw, { headers: { authorization: `Bearer ${key}`, 'x-gateway-virtual-key': 'rt' } }));
  for (let i = 0; i < 2; i++) {
    s.ws.send(JSON.stringify({ type: 'response.create' }));
    await s.next('response.done');
  }
  s.ws.close(1000);
  await closed(s.ws);
  const log = await logOf(gw, s.headers['x-gateway-request-id'] as string);
  t.equal(log.usage.total_tokens, 36, 'two responses of 18 tokens');
  let spent = 0;
  await until(() => {
    spent = gw.store.c.policyUsage.list({ filter: (e) => e.policy_id === `entity:api_key:${id}` }).items[0]?.current_usage ?? 0;
    return spent > 0;
  }, 'the charge');
  t.equal(spent, 36, 'the budget is charged with the session usage');
  const over = refused(await open(gw, { headers: { authorization: `Bearer ${key}`, 'x-gateway-virtual-key': 'rt' } }));
  t.equal(over.status, 429);
  t.equal(over.body.error.code, 'usage_limit_exceeded');
});

t.test('an upstream that refuses the upgrade: its HTTP answer reaches the client; an unreachable one is a 502', async (t) => {
  const { gw, up } = await setup(t);
  up.refuse = { status: 401, body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } } };
  const no = refused(await open(gw, { headers: { authorization: `Bearer ${ADMIN_KEY}`, 'x-gateway-virtual-key': 'rt' } }));
  t.equal(no.status, 401);
  t.equal(no.headers['x-gateway-error-source'], 'upstream');
  t.same(no.body, up.refuse.body, 'the upstream body, unchanged');
  const log = await logOf(gw, no.headers['x-gateway-request-id'] as string);
  t.match(log, { route: 'realtime', status: 401, source: 'upstream', is_success: false });

  const config = JSON.stringify({ provider: 'openai', api_key: 'sk-x', custom_host: 'http://127.0.0.1:9/v1' });
  const down = refused(await open(gw, { headers: { authorization: `Bearer ${ADMIN_KEY}`, 'x-gateway-config': config } }));
  t.equal(down.status, 502);
  t.equal(down.body.error.code, 'upstream_unreachable');

  const metadata = JSON.stringify({ provider: 'openai', api_key: 'sk-x', custom_host: 'http://169.254.169.254/v1' });
  const guarded = refused(await open(gw, { headers: { authorization: `Bearer ${ADMIN_KEY}`, 'x-gateway-config': metadata } }));
  t.equal(guarded.status, 400, 'a metadata address is refused by the upstream guard');
});

t.test('a fallback config opens the session on the next target when the first refuses', async (t) => {
  const { gw, up } = await setup(t);
  const config = JSON.stringify({
    strategy: { mode: 'fallback' },
    targets: [
      { provider: 'openai', api_key: 'sk-first', custom_host: 'http://127.0.0.1:9/v1' },
      { virtual_key: 'rt', override_params: { model: 'gpt-realtime' } },
    ],
  });
  const s = opened(await open(gw, { headers: { authorization: `Bearer ${ADMIN_KEY}`, 'x-gateway-config': config } }));
  t.equal(s.headers['x-gateway-last-used-option-index'], 'config.targets[1]');
  t.equal(s.headers['x-gateway-retry-attempt-count'], '1');
  t.equal(up.handshakes.at(-1)!.query.get('model'), 'gpt-realtime', 'override_params.model is the session model');
  s.ws.close();
  await closed(s.ws);
});

t.test('the upstream closing mid-session closes the client with its code; a vanished upstream is a 1014', async (t) => {
  const { gw } = await setup(t);
  const headers = { authorization: `Bearer ${ADMIN_KEY}`, 'x-gateway-virtual-key': 'rt' };
  const a = opened(await open(gw, { headers }));
  await a.next('session.created');
  a.ws.send(JSON.stringify({ type: 'response.create' }));
  await a.next('response.done');
  a.ws.send(JSON.stringify({ type: 'test.close', code: 4001, reason: 'session expired' }));
  t.same(await closed(a.ws), { code: 4001, reason: 'session expired' });
  const logA = await logOf(gw, a.headers['x-gateway-request-id'] as string);
  t.match(logA, { route: 'realtime', status: 101, is_success: true, error_code: null });
  t.equal(logA.usage.total_tokens, 18, 'usage of the session before the close');

  const c = opened(await open(gw, { headers }));
  await c.next('session.created');
  c.ws.send(JSON.stringify({ type: 'test.close', code: 1011, reason: 'server error' }));
  t.same(await closed(c.ws), { code: 1011, reason: 'server error' });
  t.match(await logOf(gw, c.headers['x-gateway-request-id'] as string), { status: 101, is_success: false, error_code: 'upstream_stream_error' }, 'an upstream error close is a failed session');

  const b = opened(await open(gw, { headers }));
  await b.next('session.created');
  b.ws.send(JSON.stringify({ type: 'test.drop' }));
  const end = await closed(b.ws);
  t.equal(end.code, 1014, 'an upstream gone without a close is a bad-gateway close');
  t.equal(end.reason, 'upstream connection lost');
  const logB = await logOf(gw, b.headers['x-gateway-request-id'] as string);
  t.match(logB, { route: 'realtime', status: 101, is_success: false, error_code: 'upstream_stream_error' });
});

t.test('the client closing or vanishing mid-session closes the upstream; the record is written', async (t) => {
  const { gw, up } = await setup(t);
  const headers = { authorization: `Bearer ${ADMIN_KEY}`, 'x-gateway-virtual-key': 'rt' };
  const a = opened(await open(gw, { headers }));
  await a.next('session.created');
  a.ws.close(4000, 'user hung up');
  await closed(a.ws);
  await until(() => up.closes.length === 1, 'the upstream close');
  t.same(up.closes[0], { code: 4000, reason: 'user hung up' });
  t.equal(up.sockets.size, 0);
  t.match(await logOf(gw, a.headers['x-gateway-request-id'] as string), { route: 'realtime', status: 101, is_success: true });

  const b = opened(await open(gw, { headers }));
  await b.next('session.created');
  b.ws.terminate();
  await until(() => up.closes.length === 2, 'the upstream close');
  t.equal(up.closes[1]!.code, 1001, 'a client gone without a close is "going away" upstream');
  t.match(await logOf(gw, b.headers['x-gateway-request-id'] as string), { route: 'realtime', status: 101 });
});

t.test("Azure's form: /openai/realtime?api-version=…&deployment=… with the api-key header", async (t) => {
  const { gw, up } = await setup(t);
  const config = JSON.stringify({ provider: 'azure-openai', api_key: 'az-key-0123456789', custom_host: up.url, deployment_name: 'rt-deployment', api_version: '2024-10-01-preview' });
  const s = opened(await open(gw, { headers: { authorization: `Bearer ${ADMIN_KEY}`, 'x-gateway-config': config } }));
  t.match(await s.next(), { type: 'session.created', session: { model: 'rt-deployment' } });
  s.ws.send(JSON.stringify({ type: 'response.create' }));
  t.match(await s.next('response.done'), { response: { usage: { total_tokens: 18 } } });
  const hs = up.handshakes.at(-1)!;
  t.equal(hs.path, '/openai/realtime');
  t.equal(hs.query.get('api-version'), '2024-10-01-preview');
  t.equal(hs.query.get('deployment'), 'rt-deployment');
  t.equal(hs.headers['api-key'], 'az-key-0123456789', 'Azure gets its key as api-key');
  t.equal(hs.headers.authorization, undefined, 'and no bearer');
  t.notOk(JSON.stringify(hs).includes(ADMIN_KEY));
  s.ws.close();
  await closed(s.ws);
  t.match(await logOf(gw, s.headers['x-gateway-request-id'] as string), { route: 'realtime', provider: 'azure-openai', usage: { total_tokens: 18 } });
});

t.test('without the auth plugin the client bearer is the provider key (direct mode)', async (t) => {
  const up = await startRealtimeUpstream(t);
  const gw = await startGateway(t, { yaml: 'pipeline: [realtime]\n' });
  const s = opened(await open(gw, { headers: { authorization: 'Bearer sk-direct-provider', 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${up.url}/v1` } }));
  await s.next('session.created');
  t.equal(up.handshakes[0]!.headers.authorization, 'Bearer sk-direct-provider');
  s.ws.close();
  await closed(s.ws);
  const bad = refused(await open(gw, { query: '' , headers: { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${up.url}/v1` } }));
  t.equal(bad.status, 400);
  t.equal(bad.body.error.code, 'realtime_missing_model');
  const other = refused(await open(gw, { headers: { 'x-gateway-provider': 'anthropic' } }));
  t.equal(other.body.error.code, 'realtime_unsupported_provider');
});

t.test('requests with an Upgrade header that no plugin serves are answered as plain HTTP/1.1', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: 'pipeline: [realtime]\n' });
  const port = new URL(gw.url).port;
  const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  const h = direct(mock);
  // curl --http2 on an http:// URL asks for h2c this way; the second request reuses the connection.
  const raw =
    `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n` +
    `content-type: application/json\r\nx-gateway-provider: ${h['x-gateway-provider']}\r\nx-gateway-custom-host: ${h['x-gateway-custom-host']}\r\nauthorization: ${h.authorization}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}` +
    'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
  const text = await new Promise<string>((resolve, reject) => {
    // Written, not ended: the second request's `connection: close` makes the gateway close.
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(raw));
    let out = '';
    socket.on('data', (d) => (out += d.toString()));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
  });
  const answers = text.split(/(?=HTTP\/1\.1 )/);
  t.equal(answers.length, 2, 'two answers on one connection');
  t.match(answers[0], /^HTTP\/1\.1 200 /);
  t.match(answers[0], /"chat\.completion"/, 'the body went through to the upstream');
  t.match(answers[1], /^HTTP\/1\.1 200 [\s\S]*\{"status":"ok"\}/);

  // A WebSocket upgrade to a path no plugin serves is a plain request too (pass-through, no provider).
  const other = refused(await open(gw, { path: '/v1/not-realtime' }));
  t.equal(other.status, 400);
  t.equal(other.body.error.code, 'missing_provider');
});

t.test('backpressure: a client that stops reading pauses the upstream; nothing is lost or reordered', async (t) => {
  const up = await startRealtimeUpstream(t);
  const gw = await startGateway(t, { yaml: 'pipeline:\n  - realtime: {high_water_mark: 65536}\n' });
  const s = opened(await open(gw, { headers: { authorization: 'Bearer sk-direct', 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${up.url}/v1` } }));
  await s.next('session.created');
  const count = 400;
  const size = 64 * 1024;
  s.ws.pause(); // the client stops reading: its socket, then the gateway's buffer towards it, fill up
  s.ws.send(JSON.stringify({ type: 'test.flood', count, size }));
  await sleep(800);
  const mock = [...up.sockets][0]!;
  // Loopback buffers hold a few MB per hop; the rest must wait at the sender, not in the gateway.
  t.ok(mock.bufferedAmount > (count * size) / 3, `the upstream was paused: ${(mock.bufferedAmount / 1e6).toFixed(1)} MB of ${((count * size) / 1e6).toFixed(1)} still at the sender`);
  s.ws.resume();
  const seen: number[] = [];
  for (let i = 0; i < count; i++) {
    const m = await s.next();
    if (Buffer.isBuffer(m) && m.length === size) seen.push(m.readUInt32BE(0));
  }
  t.same(seen, Array.from({ length: count }, (_, i) => i), 'every message arrives, in order, whole');
  s.ws.close();
  await closed(s.ws);
});

t.test("the official SDK's Realtime client (OpenAIRealtimeWS) through the gateway, over wss://", async (t) => {
  // The SDK always dials wss://: the gateway serves TLS (ALPN http/1.1 carries the upgrade).
  const { gw, up } = await setup(t, `server: {host: 127.0.0.1, port: 0, tls: {cert: ${fixtures}cert.pem, key: ${fixtures}key.pem}}\n`);
  t.match(gw.url, /^https:/);
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: ADMIN_KEY });
  const rt = new OpenAIRealtimeWS({ model: MODEL, options: { headers: { 'x-gateway-virtual-key': 'rt' }, ca } }, client);
  const events: string[] = [];
  const done = new Promise<Json>((resolve, reject) => {
    rt.on('event', (e: { type: string }) => events.push(e.type));
    rt.on('session.created', () => rt.send({ type: 'response.create' }));
    rt.on('response.done', (e: unknown) => resolve(e as Json));
    rt.on('error', (err: unknown) => reject(err as Error));
  });
  const answer = await done;
  t.equal(answer.response.usage.total_tokens, 18);
  t.same(events.slice(0, 3), ['session.created', 'response.created', 'response.output_text.delta']);
  t.equal(up.handshakes.at(-1)!.headers.authorization, `Bearer ${VK_KEY}`, 'the SDK key authenticated at the gateway; the virtual key went upstream');
  rt.close();
  await until(() => up.sockets.size === 0, 'the upstream close');
});

t.test('a session outlives server.request_timeout and the keep-alive timeout (they bound requests, not sessions)', async (t) => {
  const up = await startRealtimeUpstream(t);
  const gw = await startGateway(t, { yaml: 'server: {host: 127.0.0.1, port: 0, request_timeout: 1s, headers_timeout: 500ms, keep_alive_timeout: 300ms}\npipeline: [realtime]\n' });
  const s = opened(await open(gw, { headers: { authorization: 'Bearer sk-direct', 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${up.url}/v1` } }));
  await s.next('session.created');
  await sleep(2200);
  t.equal(s.ws.readyState, WebSocket.OPEN, 'still open after twice the request timeout');
  s.ws.send(JSON.stringify({ type: 'response.create' }));
  t.match(await s.next('response.done'), { type: 'response.done' });
  s.ws.close();
  await closed(s.ws);
});

t.test('shutdown tells open sessions "going away" and waits for them to end', async (t) => {
  const up = await startRealtimeUpstream(t);
  const gw = await startGateway(t, { yaml: 'server: {host: 127.0.0.1, port: 0, shutdown_grace: 10s}\npipeline: [realtime]\n' });
  const s = opened(await open(gw, { headers: { authorization: 'Bearer sk-direct', 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${up.url}/v1` } }));
  await s.next('session.created');
  const ended = closed(s.ws);
  const started = Date.now();
  await gw.close();
  t.ok(Date.now() - started < 5000, 'the gateway did not wait for the whole grace period');
  t.same(await ended, { code: 1001, reason: 'the gateway is shutting down' });
  await until(() => up.closes.length === 1, 'the upstream close');
  t.equal(up.closes[0]!.code, 1001, 'the close reached the upstream');
});

t.test('a malformed WebSocket handshake is a 400 in the error shape, the connection closed', async (t) => {
  const up = await startRealtimeUpstream(t);
  const gw = await startGateway(t, { yaml: 'pipeline: [realtime]\n' });
  const port = Number(new URL(gw.url).port);
  const handshake = (extra: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.write(`GET /v1/realtime?model=m HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nx-gateway-provider: openai\r\nx-gateway-custom-host: ${up.url}/v1\r\n${extra}\r\n`),
      );
      let out = '';
      socket.on('data', (d) => (out += d.toString()));
      socket.on('close', () => resolve(out));
      socket.on('error', reject);
    });
  const oldVersion = await handshake('Sec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n');
  t.match(oldVersion, /^HTTP\/1\.1 400 /);
  t.match(oldVersion, /sec-websocket-version: 13/i, 'the version the gateway speaks');
  t.match(oldVersion, /"code":"bad_request"/);
  const noKey = await handshake('Sec-WebSocket-Version: 13\r\n');
  t.match(noKey, /^HTTP\/1\.1 400 [\s\S]*"param":"sec-websocket-key"/);
  t.equal(up.handshakes.length, 0);
});
