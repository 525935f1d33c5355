/**
 * MCP governance and observability, driven by a stub MCP endpoint (a test plugin whose route has
 * `meta: {mcp: true}` and which sets `mcpCall` from the JSON-RPC body, as the mcp-gateway plugin
 * does): the log record's `mcp` and `route: 'mcp'`, the `mcp_server`/`mcp_tool` log filters,
 * the Prometheus series, the analytics group `/groups/mcp` (and MCP calls kept out of the model
 * graphs), rate-limit policies grouped by `mcp_tool` refusing in JSON-RPC, protocol messages
 * never limited, and model traffic not counted by an MCP policy.
 */
import t from 'tap';
import { runExport } from './helpers/log-export.js';
import { request } from 'undici';
import { startGateway, startMock, direct, ADMIN_KEY, type StartedGateway, type MockUpstream } from './helpers/gateway.js';
import { needServices } from './helpers/services.js';
import { MASTER_KEY } from './helpers/hosts.js';
import { until } from './helpers/distributed-logs.js';
import { definePlugin, isMcpRoute, reply, MCP_RATE_LIMITED, type McpCall, type PluginDefinition } from '../core/index.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Json;
}

/** A stub MCP endpoint at `/v1/mcp-stub/:server/mcp`: answers every message itself. */
const mcpStub = definePlugin({
  name: 'mcp-stub',
  setup() {
    return {
      onRequestBody(ctx) {
        if (!isMcpRoute(ctx.route)) return;
        const body = ctx.body as { method?: unknown; params?: { name?: string; uri?: string; arguments?: unknown } };
        const method = typeof body.method === 'string' ? body.method : null;
        const params = body.params ?? {};
        const tool = method === 'tools/call' || method === 'prompts/get' ? (params.name ?? null) : method === 'resources/read' ? (params.uri ?? null) : null;
        const call: McpCall = {
          server: ctx.route.kind === 'plugin' ? (ctx.route.params.server ?? null) : null,
          method,
          tool,
          argument_bytes: params.arguments === undefined ? 0 : Buffer.byteLength(JSON.stringify(params.arguments)),
          outcome: null,
          error_code: null,
          upstream_ms: 0,
        };
        ctx.set('mcpCall', call);
      },
      routes: [
        {
          method: 'POST',
          path: '/v1/mcp-stub/:server/mcp',
          meta: { mcp: true, bearerAuth: true },
          handler(ctx) {
            const call = ctx.get('mcpCall')!;
            const id = ctx.body?.id ?? null;
            call.upstream_ms = 1.25;
            if (call.tool === 'boom') {
              call.outcome = 'error';
              call.error_code = -32603;
              return reply(200, { jsonrpc: '2.0', id, error: { code: -32603, message: 'the tool failed' } });
            }
            call.outcome = 'ok';
            return reply(200, { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: `ran ${call.tool ?? call.method}` }] } });
          },
        },
      ],
    };
  },
}) as PluginDefinition<never>;

const PIPELINE = `pipeline:
  - logging: {flush_ms: 20}
  - analytics: {flush_ms: 20}
  - metrics
  - auth
  - config-strategy
  - mcp-stub
  - rate-limit
  - usage-limits
  - admin-policies
`;

async function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: unknown }): Promise<Answer> {
  const res = await request(url, {
    method: (options.method ?? (options.body === undefined ? 'GET' : 'POST')) as 'GET',
    headers: { ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.body.text();
  let body: Json = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* text */
  }
  return { status: res.statusCode, headers: res.headers, body };
}

let nextId = 1;
function mcp(gw: StartedGateway, server: string, method: string, params?: Record<string, unknown>): Promise<Answer> {
  return send(`${gw.url}/v1/mcp-stub/${server}/mcp`, {
    headers: { authorization: `Bearer ${ADMIN_KEY}`, accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: nextId++, method, ...(params === undefined ? {} : { params }) },
  });
}
const callTool = (gw: StartedGateway, server: string, name: string, args: Record<string, unknown> = {}): Promise<Answer> =>
  mcp(gw, server, 'tools/call', { name, arguments: args });

const adminGet = (gw: StartedGateway, path: string): Promise<Answer> => send(`${gw.url}${path}`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function settle(gw: StartedGateway): Promise<void> {
  await sleep(120);
  await gw.store.flush();
}

t.test('an MCP call is a log record with its mcp fields, found by mcp_server and mcp_tool', async (t) => {
  const gw = await startGateway(t, { yaml: PIPELINE, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY }, plugins: { 'mcp-stub': mcpStub } });
  t.equal((await mcp(gw, 'github', 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } })).status, 200);
  t.equal((await mcp(gw, 'github', 'tools/list')).status, 200);
  const ok = await callTool(gw, 'github', 'search_issues', { q: 'bug' });
  t.equal(ok.status, 200);
  t.same(ok.body.result.content[0].text, 'ran search_issues');
  const failed = await callTool(gw, 'github', 'boom');
  t.equal(failed.body.error.code, -32603);
  t.equal((await callTool(gw, 'jira', 'search_issues')).status, 200);
  t.equal((await mcp(gw, 'jira', 'resources/read', { uri: 'file:///notes.md' })).status, 200);
  await settle(gw);

  const all = await adminGet(gw, '/v1/logs?route=mcp&page_size=50');
  t.equal(all.status, 200);
  t.equal(all.body.data.length, 6, 'every MCP request has a record, protocol messages included');
  for (const r of all.body.data) t.equal(r.route, 'mcp');

  const github = await adminGet(gw, '/v1/logs?mcp_server=github');
  t.same(github.body.data.map((r: Json) => r.mcp.method).sort(), ['initialize', 'tools/call', 'tools/call', 'tools/list']);
  const search = await adminGet(gw, '/v1/logs?mcp_server=github&mcp_tool=search_issues');
  t.equal(search.body.data.length, 1);
  const rec = search.body.data[0];
  t.same(rec.mcp, { server: 'github', method: 'tools/call', tool: 'search_issues', argument_bytes: Buffer.byteLength('{"q":"bug"}'), outcome: 'ok', error_code: null, upstream_ms: 1.25 });

  const one = await adminGet(gw, `/v1/logs/${rec.id}`);
  t.equal(one.status, 200);
  t.same(one.body.mcp, rec.mcp, 'GET /v1/logs/:id returns the mcp field');
  t.equal(one.body.route, 'mcp');

  const boom = await adminGet(gw, '/v1/logs?mcp_tool=boom');
  t.match(boom.body.data[0].mcp, { server: 'github', outcome: 'error', error_code: -32603 });
  t.equal((await adminGet(gw, '/v1/logs?mcp_tool=file:///notes.md')).body.data[0].mcp.method, 'resources/read');
  t.equal((await adminGet(gw, '/v1/logs?mcp_server=nope')).body.data.length, 0);

  // Exports filter the same way (comma lists).
  const exported = await runExport(gw.url, ADMIN_KEY, { mcp_server: 'github', mcp_tool: 'search_issues,boom' }, ['id']);
  t.equal(exported.total, 2, 'an export by mcp_server and mcp_tool counts the two calls');
  t.same(exported.lines.map((l) => l.id).sort(), [rec.id, boom.body.data[0].id].sort(), 'and holds exactly them');
  t.equal((await runExport(gw.url, ADMIN_KEY, { mcp_server: 'jira,github' }, ['id'])).total, 6, 'every server named');
  t.equal((await runExport(gw.url, ADMIN_KEY, { mcp_server: 'nope' }, ['id'])).total, 0, 'an unknown server: nothing');

  // Admin requests are not MCP: no mcp field, route `plugin`. Their records are written after them.
  await settle(gw);
  const plain = await adminGet(gw, '/v1/logs?route=plugin');
  t.ok(plain.body.data.length > 0);
  // One assertion over them all: how many admin records have landed by now depends on timing.
  t.same(plain.body.data.filter((r: { mcp?: unknown }) => r.mcp !== undefined).map((r: { id: string }) => r.id), [], 'no mcp field on other records');
});

t.test('metrics and analytics count MCP calls by server and tool, and only calls', async (t) => {
  const mock: MockUpstream = await startMock(t);
  const gw = await startGateway(t, { yaml: PIPELINE, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY }, plugins: { 'mcp-stub': mcpStub } });
  const start = Date.now();
  for (let i = 0; i < 3; i++) await callTool(gw, 'github', 'search_issues');
  await callTool(gw, 'github', 'boom');
  await mcp(gw, 'jira', 'prompts/get', { name: 'summarise' });
  await mcp(gw, 'github', 'tools/list');
  await mcp(gw, 'github', 'initialize', {});
  // One model call, so the graphs have something that is not MCP.
  const chat = await send(`${gw.url}/v1/chat/completions`, {
    headers: { 'x-gateway-api-key': ADMIN_KEY, ...direct(mock) },
    body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
  });
  t.equal(chat.status, 200);

  const metrics = (await send(`${gw.url}/metrics`, {})).body as string;
  t.match(metrics, /gateway_mcp_calls_total\{server="github",method="tools\/call",tool="search_issues",outcome="ok"\} 3/);
  t.match(metrics, /gateway_mcp_calls_total\{server="github",method="tools\/call",tool="boom",outcome="error"\} 1/);
  t.match(metrics, /gateway_mcp_calls_total\{server="jira",method="prompts\/get",tool="summarise",outcome="ok"\} 1/);
  t.notMatch(metrics, /gateway_mcp_calls_total\{[^}]*method="(tools\/list|initialize)"/, 'protocol messages are not calls');
  t.match(metrics, /gateway_mcp_call_duration_seconds_count\{server="github",method="tools\/call"\} 4/);
  t.match(metrics, /gateway_mcp_call_duration_seconds_bucket\{le="\+Inf",server="jira",method="prompts\/get"\} 1/);
  t.match(metrics, /gateway_requests_total\{route="mcp",status="200",provider="none"\} 7/, 'every MCP request is a request of route mcp');

  await sleep(100);
  const range = { time_of_generation_min: new Date(start - 60_000).toISOString(), time_of_generation_max: new Date(Date.now() + 60_000).toISOString() };
  const analytics = (path: string, params: Record<string, string> = {}): Promise<Answer> =>
    adminGet(gw, `/v1/analytics/${path}?${new URLSearchParams({ ...range, ...params }).toString()}`);

  const group = await analytics('groups/mcp');
  t.equal(group.status, 200, JSON.stringify(group.body));
  t.equal(group.body.total, 3);
  t.match(group.body.data[0], { server: 'github', method: 'tools/call', tool: 'search_issues', requests: 3, errors: 0, object: 'analytics-group' });
  t.ok(group.body.data[0].avg_latency > 0 && group.body.data[0].p50_latency > 0 && group.body.data[0].p95_latency > 0, 'latencies');
  t.ok(Date.parse(group.body.data[0].last_seen) >= start - 1000, 'last_seen');
  const rows = Object.fromEntries(group.body.data.map((r: Json) => [`${r.server} ${r.tool}`, r]));
  t.match(rows['github boom'], { requests: 1, errors: 1 });
  t.match(rows['jira summarise'], { method: 'prompts/get', requests: 1, errors: 0 });
  t.same((await analytics('groups/mcp', { page_size: '1', current_page: '1' })).body.data.length, 1, 'paged');

  // Model traffic graphs and groups are what they were: the one model call.
  t.equal((await analytics('graphs/requests')).body.summary.total, 1, 'MCP calls are not in the requests graph');
  t.equal((await analytics('graphs/errors')).body.summary.total, 0, 'nor in the errors graph');
  t.same((await analytics('groups/providers')).body.data.map((r: Json) => r.provider), ['openai'], 'nor in the providers group');
  t.same((await analytics('groups/ai-models')).body.data.map((r: Json) => r.ai_model), ['gpt-4o']);

  // After a flush too (stored buckets, not only this process's pending ones).
  await sleep(80);
  t.equal((await analytics('graphs/requests')).body.summary.total, 1);
  t.equal((await analytics('groups/mcp')).body.total, 3);

  const openapi = await send(`${gw.url}/v1/openapi.json`, {});
  t.ok(openapi.body.paths['/v1/analytics/groups/mcp'], 'in the OpenAPI document');
  t.ok(openapi.body.paths['/v1/logs'].get.parameters.some((p: Json) => p.name === 'mcp_server'), 'the log filters too');
});

t.test('a rate-limit policy grouped by mcp_tool refuses in JSON-RPC; protocol messages and model traffic are not limited', async (t) => {
  const mock: MockUpstream = await startMock(t);
  const gw = await startGateway(t, { yaml: PIPELINE, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY }, plugins: { 'mcp-stub': mcpStub } });
  const created = await send(`${gw.url}/v1/policies/rate-limits`, {
    headers: { 'x-gateway-api-key': ADMIN_KEY },
    body: { conditions: [{ key: 'mcp_server', value: 'github' }], group_by: [{ key: 'mcp_tool' }], type: 'requests', unit: 'rpm', value: 2 },
  });
  t.equal(created.status, 200, JSON.stringify(created.body));
  // A token policy on MCP keys is accepted (and never counts an MCP call: no tokens).
  const tokens = await send(`${gw.url}/v1/policies/rate-limits`, {
    headers: { 'x-gateway-api-key': ADMIN_KEY },
    body: { conditions: [{ key: 'workspace_id', value: '*' }], group_by: [{ key: 'mcp_server' }], type: 'tokens', unit: 'rpm', value: 0 },
  });
  t.equal(tokens.status, 200);

  const a1 = await callTool(gw, 'github', 'search');
  t.equal(a1.status, 200);
  t.equal(a1.headers['x-ratelimit-limit-requests'], '2');
  t.equal(a1.headers['x-ratelimit-remaining-requests'], '1');
  t.equal((await callTool(gw, 'github', 'search')).status, 200);
  const refused = await callTool(gw, 'github', 'search');
  t.equal(refused.status, 429, 'the third call of one tool is refused');
  t.equal(refused.headers['content-type'], 'application/json');
  t.ok(Number(refused.headers['retry-after']) >= 1, 'retry-after');
  t.equal(refused.headers['x-ratelimit-remaining-requests'], '0');
  t.match(refused.body, {
    jsonrpc: '2.0',
    id: nextId - 1,
    error: { code: MCP_RATE_LIMITED, message: /Rate limit reached/, data: { code: 'rate_limit_exceeded', retry_after_ms: Number } },
  });
  t.equal(MCP_RATE_LIMITED, -32029);
  t.ok(refused.body.error.data.retry_after_ms > 0 && refused.body.error.data.retry_after_ms <= 30_000, 'the exact wait: one refill of 30 s at most');
  t.notOk('result' in refused.body, 'a JSON-RPC error, no result');

  t.equal((await callTool(gw, 'github', 'create_issue')).status, 200, 'another tool has its own count');
  t.equal((await callTool(gw, 'jira', 'search')).status, 200, 'another server is outside the condition');
  for (let i = 0; i < 5; i++) {
    const list = await mcp(gw, 'github', 'tools/list');
    t.equal(list.status, 200, 'protocol messages are never limited');
    t.notOk(list.headers['x-ratelimit-limit-requests'], 'no limit applied to tools/list');
  }
  const chat = await send(`${gw.url}/v1/chat/completions`, {
    headers: { 'x-gateway-api-key': ADMIN_KEY, ...direct(mock) },
    body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
  });
  t.equal(chat.status, 200, 'model traffic is not counted by MCP policies');
  t.notOk(chat.headers['x-ratelimit-limit-requests']);

  await settle(gw);
  const denied = await adminGet(gw, '/v1/logs?mcp_tool=search&status=429');
  t.equal(denied.body.data.length, 1);
  t.match(denied.body.data[0], { route: 'mcp', error_code: 'rate_limit_exceeded', mcp: { server: 'github', tool: 'search', outcome: 'denied', error_code: MCP_RATE_LIMITED } });
  const metrics = (await send(`${gw.url}/metrics`, {})).body as string;
  t.match(metrics, /gateway_mcp_calls_total\{server="github",method="tools\/call",tool="search",outcome="denied"\} 1/);
  t.match(metrics, /gateway_rejections_total\{reason="rate_limit"\} 1/);
});

t.test('policies that name no MCP key leave MCP calls alone', async (t) => {
  const gw = await startGateway(t, { yaml: PIPELINE, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY }, plugins: { 'mcp-stub': mcpStub } });
  const created = await send(`${gw.url}/v1/policies/rate-limits`, {
    headers: { 'x-gateway-api-key': ADMIN_KEY },
    body: { conditions: [{ key: 'workspace_id', value: '*' }], group_by: [{ key: 'api_key' }], type: 'requests', unit: 'rpm', value: 1 },
  });
  t.equal(created.status, 200);
  for (let i = 0; i < 3; i++) t.equal((await callTool(gw, 'github', 'search')).status, 200);
  // And a per-key MCP policy: the condition `mcp_server: *` makes it one.
  await send(`${gw.url}/v1/policies/rate-limits`, {
    headers: { 'x-gateway-api-key': ADMIN_KEY },
    body: { conditions: [{ key: 'mcp_server', value: '*' }], group_by: [{ key: 'api_key' }], type: 'requests', unit: 'rpm', value: 1 },
  });
  t.equal((await callTool(gw, 'github', 'search')).status, 200);
  t.equal((await callTool(gw, 'jira', 'other')).status, 429, 'every MCP call of the key counts');
});

t.test('distributed mode: PostgreSQL logs and analytics, Valkey counters, JSON-RPC refusal through any host', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const [postgres, valkey] = await Promise.all([svc.postgres(), svc.redis()]);
  const env = { GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_MASTER_KEY: MASTER_KEY, GATEWAY_POSTGRES_URL: await postgres.database(), GATEWAY_REDIS_URL: valkey.url };
  const a = await startGateway(t, { yaml: PIPELINE, env, plugins: { 'mcp-stub': mcpStub } });
  const b = await startGateway(t, { yaml: PIPELINE, env, plugins: { 'mcp-stub': mcpStub } });
  const start = Date.now();

  const created = await send(`${a.url}/v1/policies/rate-limits`, {
    headers: { 'x-gateway-api-key': ADMIN_KEY },
    body: { conditions: [{ key: 'workspace_id', value: '*' }], group_by: [{ key: 'mcp_server' }, { key: 'mcp_tool' }], type: 'requests', unit: 'rpm', value: 2 },
  });
  t.equal(created.status, 200, JSON.stringify(created.body));
  // B sees the policy once its replica caught up.
  const seen = await until(() => adminGet(b, `/v1/policies/rate-limits/${created.body.id}`), (r) => r.status === 200);
  t.equal(seen.status, 200);

  t.equal((await callTool(a, 'github', 'search')).status, 200, 'first call, through A');
  t.equal((await callTool(b, 'github', 'search')).status, 200, 'second call, through B');
  const refused = await callTool(a, 'github', 'search');
  t.equal(refused.status, 429, 'the third is refused: one count in Valkey for both hosts');
  t.match(refused.body, { jsonrpc: '2.0', id: nextId - 1, error: { code: MCP_RATE_LIMITED, data: { code: 'rate_limit_exceeded' } } });
  t.ok(Number(refused.headers['retry-after']) >= 1);
  t.equal((await callTool(b, 'github', 'other')).status, 200, 'another tool has its own count');
  for (let i = 0; i < 3; i++) t.equal((await mcp(b, 'github', 'tools/list')).status, 200, 'protocol messages are never limited');

  // Logs in PostgreSQL: B lists A's records by the MCP filters, with their mcp field.
  const search = await until(() => adminGet(b, '/v1/logs?mcp_server=github&mcp_tool=search'), (r) => r.body?.data?.length === 3);
  t.equal(search.body.data.length, 3, 'the mcp_server and mcp_tool filters in SQL');
  t.same(search.body.data.map((r: Json) => r.mcp.outcome).sort(), ['denied', 'ok', 'ok']);
  const denied = search.body.data.find((r: Json) => r.mcp.outcome === 'denied');
  t.match(denied, { route: 'mcp', status: 429, mcp: { server: 'github', method: 'tools/call', tool: 'search', error_code: MCP_RATE_LIMITED } });
  const one = await adminGet(b, `/v1/logs/${denied.id}`);
  t.same(one.body.mcp, denied.mcp, 'GET /v1/logs/:id from PostgreSQL');
  t.equal((await adminGet(b, '/v1/logs?mcp_server=jira')).body.data.length, 0);
  const lists = await until(() => adminGet(a, '/v1/logs?route=mcp&mcp_server=github'), (r) => r.body?.data?.length === 7);
  t.equal(lists.body.data.length, 7, 'protocol messages are logged too');

  // Analytics in PostgreSQL: the counts of both hosts.
  const qs = new URLSearchParams({ time_of_generation_min: new Date(start - 60_000).toISOString(), time_of_generation_max: new Date(Date.now() + 60_000).toISOString() });
  const group = await until(
    () => adminGet(a, `/v1/analytics/groups/mcp?${qs}`),
    (r) => r.body?.data?.find((row: Json) => row.tool === 'search')?.requests === 3,
  );
  t.equal(group.status, 200);
  t.match(group.body.data[0], { server: 'github', method: 'tools/call', tool: 'search', requests: 3, errors: 1 });
  t.match(group.body.data[1], { server: 'github', tool: 'other', requests: 1, errors: 0 });
  t.equal(group.body.total, 2);
  t.equal((await adminGet(a, `/v1/analytics/graphs/requests?${qs}`)).body.summary.total, 0, 'no MCP call in the model graphs');
});
