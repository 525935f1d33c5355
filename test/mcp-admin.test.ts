/**
 * The MCP gateway's admin routes against a real MCP server (test/helpers/mcp-upstream.ts):
 * capabilities listed live and switched on and off per integration and per server, connection
 * tests, an upstream that is down, credentials that never come back, workspace isolation and
 * scopes; and the MCP allow-lists (`defaults.mcp_tools`) of API keys and workspaces.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { request } from 'undici';
import { definePlugin, type PluginDefinition } from '../core/plugin.js';
import { Scopes, type Principal } from '../core/index.js';
import { startGateway, ADMIN_KEY, addWorkspace, insertKey, type StartedGateway, type Teardown } from './helpers/gateway.js';
import { startMcpUpstream } from './helpers/mcp-upstream.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

const SECRET = 'tok-upstream-secret-0123456789abcdefghij';
const HEADER = 'x-upstream-token';

async function start(t: Teardown, plugins: Record<string, PluginDefinition<never>> = {}, extra = '') {
  const gw: StartedGateway = await startGateway(t, {
    yaml: `pipeline: [auth, admin-org, admin-api-keys, admin-catalog, mcp-gateway${extra}]\n`,
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
    plugins,
  });
  /** Every response text, for the "no secret anywhere" checks. */
  const seen: string[] = [];
  const call = async (method: Method, path: string, body?: unknown, key: string = ADMIN_KEY) => {
    const res = await request(`${gw.url}/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    seen.push(text);
    return { status: res.statusCode, body: JSON.parse(text) as Json, text };
  };
  return { gw, call, seen };
}

const byName = (data: Json[]): Record<string, Json> => Object.fromEntries(data.map((c) => [c.name, c]));

t.test('capabilities, switches and connection tests against a real MCP server', async (t) => {
  const up = await startMcpUpstream(t, { name: 'upstream-x', version: '4.5.6', requireHeader: [HEADER, SECRET] });
  const { gw, call, seen } = await start(t);
  const a = addWorkspace(gw.store, 'team-a', Scopes.DEFAULT_WORKSPACE_SCOPES);
  const b = addWorkspace(gw.store, 'team-b', Scopes.DEFAULT_WORKSPACE_SCOPES);

  const integration = await call('POST', '/mcp-integrations', {
    name: 'Tools',
    slug: 'tools',
    url: up.url,
    auth_type: 'headers',
    transport: 'http',
    configurations: { custom_headers: { [HEADER]: SECRET } },
  });
  t.equal(integration.status, 200, integration.text);
  const server = await call('POST', '/mcp-servers', { name: 'Tools A', mcp_integration_id: 'tools', slug: 'tools-a' }, a.key);
  t.equal(server.status, 200, server.text);

  // Listed live, with the stored credential (the upstream answers 401 without it).
  const caps = await call('GET', '/mcp-integrations/tools/capabilities');
  t.equal(caps.status, 200, caps.text);
  t.same(
    caps.body.data.map((c: Json) => `${c.type}:${c.name}`).sort(),
    ['prompt:greet', 'resource:file:///readme', 'tool:add', 'tool:crash', 'tool:echo', 'tool:fail', 'tool:progress', 'tool:slow'],
  );
  t.ok(caps.body.data.every((c: Json) => c.enabled === true));
  t.same(caps.body.counts, { tools: { total: 6, enabled: 6 }, prompts: { total: 1, enabled: 1 }, resources: { total: 1, enabled: 1 }, resource_templates: { total: 0, enabled: 0 } });
  t.equal(caps.body.total, 8);
  t.equal(caps.body.has_more, false);
  const echo = byName(caps.body.data).echo!;
  t.equal(echo.description, 'Echoes its text.');
  t.match(echo.input_schema, { type: 'object', properties: { text: { type: 'string' } } });
  t.match(byName(caps.body.data).greet, { type: 'prompt', arguments: [{ name: 'name' }] });
  t.match(byName(caps.body.data)['file:///readme'], { type: 'resource', uri: 'file:///readme', mime_type: 'text/plain', title: 'readme' });
  t.ok(up.requests.length > 0 && up.requests.every((r) => r.headers[HEADER] === SECRET), 'every upstream request carried the credential');
  t.ok(up.requests.every((r) => r.headers['x-gateway-api-key'] === undefined && r.headers.authorization === undefined), 'the gateway key never went upstream');

  // Filter and pages.
  const tools = await call('GET', '/mcp-integrations/tools/capabilities?type=tool&page_size=4');
  t.same([tools.body.data.length, tools.body.total, tools.body.has_more], [4, 6, true]);
  const page2 = await call('GET', '/mcp-integrations/tools/capabilities?type=tool&page_size=4&page=2');
  t.same([page2.body.data.length, page2.body.has_more], [2, false]);
  t.equal((await call('GET', '/mcp-integrations/tools/capabilities?type=resource')).body.data[0].name, 'file:///readme');
  for (const bad of ['page=0', 'page_size=501', 'type=widget']) {
    const res = await call('GET', `/mcp-integrations/tools/capabilities?${bad}`);
    t.equal(res.status, 400, bad);
    t.equal(res.body.error.param, bad.split('=')[0]);
  }

  // Integration-level switch.
  const off = await call('PUT', '/mcp-integrations/tools/capabilities', { capabilities: [{ name: 'add', type: 'tool', enabled: false }, { name: 'file:///readme', type: 'resource', enabled: false }] });
  t.same([off.status, off.body], [200, { success: true }]);
  t.same(gw.store.c.mcpIntegrations.getBy('slug', 'tools')!.disabled_capabilities, [{ type: 'tool', name: 'add' }, { type: 'resource', name: 'file:///readme' }]);
  const after = byName((await call('GET', '/mcp-integrations/tools/capabilities')).body.data);
  t.equal(after.add!.enabled, false);
  t.equal(after['file:///readme']!.enabled, false);
  t.equal(after.echo!.enabled, true);
  t.equal((await call('PUT', '/mcp-integrations/tools/capabilities', { capabilities: [] })).status, 400, 'min 1');
  const badType = await call('PUT', '/mcp-integrations/tools/capabilities', { capabilities: [{ name: 'x', type: 'widget', enabled: false }] });
  t.equal(badType.status, 400);
  t.match(badType.body.error.param, /capabilities/);

  // Server-level switch, on top of the integration's.
  t.same((await call('PUT', '/mcp-servers/tools-a/capabilities', { capabilities: [{ name: 'echo', type: 'tool', enabled: false }] }, a.key)).body, { success: true });
  const sc = await call('GET', '/mcp-servers/tools-a/capabilities?type=tool', undefined, a.key);
  t.equal(sc.status, 200, sc.text);
  const s = byName(sc.body.data);
  t.match(s.echo, { enabled: false, integration_enabled: true });
  t.match(s.add, { enabled: true, integration_enabled: false });
  t.match(s.slow, { enabled: true, integration_enabled: true });
  t.same(sc.body.counts.tools, { total: 6, enabled: 4 }, 'counts: usable on this server');
  t.same(gw.store.c.mcpServers.getBy('slug', 'tools-a')!.disabled_capabilities, [{ type: 'tool', name: 'echo' }]);

  // Turning back on removes from the stored set.
  await call('PUT', '/mcp-integrations/tools/capabilities', { capabilities: [{ name: 'add', type: 'tool', enabled: true }, { name: 'file:///readme', type: 'resource', enabled: true }] });
  t.equal(gw.store.c.mcpIntegrations.getBy('slug', 'tools')!.disabled_capabilities, undefined);
  t.equal(byName((await call('GET', '/mcp-integrations/tools/capabilities')).body.data).add!.enabled, true);

  // Writes are audited.
  const audit = gw.store.c.audit.list({}).items.filter((r) => r.action === 'update_capabilities');
  t.ok(audit.some((r) => r.resource_type === 'mcp_server' && r.response_status_code === 200 && r.request_body.includes('echo')));
  t.equal(audit.filter((r) => r.resource_type === 'mcp_integration' && r.response_status_code === 200).length, 2);

  // Connection tests.
  for (const path of ['/mcp-servers/tools-a/test', '/mcp-integrations/tools/test']) {
    const res = await call('POST', path, undefined, path.startsWith('/mcp-servers') ? a.key : ADMIN_KEY);
    t.equal(res.status, 200, res.text);
    t.match(res.body, { success: true, url: up.url, server_name: 'upstream-x', server_version: '4.5.6', counts: { tools: 6, prompts: 1, resources: 1 } }, path);
    t.type(res.body.response_time_ms, 'number');
    t.type(res.body.protocol_version, 'string');
    t.notOk('error' in res.body);
  }

  // A workspace key cannot reach another workspace's server; an organisation integration it may read.
  for (const [method, path] of [['GET', '/mcp-servers/tools-a/capabilities'], ['PUT', '/mcp-servers/tools-a/capabilities'], ['POST', '/mcp-servers/tools-a/test']] as const) {
    const res = await call(method, path, method === 'PUT' ? { capabilities: [{ name: 'add', type: 'tool', enabled: false }] } : undefined, b.key);
    t.equal(res.status, 404, `${method} ${path} from team-b`);
  }
  t.equal((await call('GET', '/mcp-integrations/tools/capabilities', undefined, b.key)).status, 200, 'organisation integrations are readable by workspaces');
  const wsWrite = await call('PUT', '/mcp-integrations/tools/capabilities', { capabilities: [{ name: 'add', type: 'tool', enabled: false }] }, b.key);
  t.equal(wsWrite.status, 403, 'but only organisation keys switch them');

  // Scopes.
  const listOnly = insertKey(gw.store, { workspace_id: a.id, scopes: ['mcp_servers.list'] });
  const readOnly = insertKey(gw.store, { workspace_id: a.id, scopes: ['mcp_servers.read', 'workspace_mcp_integrations.read'] });
  for (const [method, path, key] of [
    ['GET', '/mcp-servers/tools-a/capabilities', listOnly],
    ['POST', '/mcp-servers/tools-a/test', listOnly],
    ['PUT', '/mcp-servers/tools-a/capabilities', readOnly],
    ['GET', '/mcp-integrations/tools/capabilities', listOnly],
  ] as const) {
    const res = await call(method, path, method === 'PUT' ? { capabilities: [{ name: 'add', type: 'tool', enabled: false }] } : undefined, key);
    t.equal(res.status, 403, `${method} ${path}`);
    // An organisation integration without organisation_mcp_integrations.list: an organisation key's business.
    t.equal(res.body.error.code, path.startsWith('/mcp-integrations') ? 'forbidden' : 'insufficient_scope');
  }
  t.equal((await call('GET', '/mcp-servers/tools-a/capabilities', undefined, readOnly)).status, 200);
  t.same(gw.store.c.mcpServers.getBy('slug', 'tools-a')!.disabled_capabilities, [{ type: 'tool', name: 'echo' }], 'no refused write landed');

  // The routes are in the OpenAPI document.
  const doc = (await (await request(`${gw.url}/v1/openapi.json`)).body.json()) as Json;
  const paths = Object.keys(doc.paths);
  for (const p of ['capabilities', 'test']) {
    t.ok(paths.some((x) => /^\/v1\/mcp-integrations\/\{id\}\//.test(x) && x.endsWith(p)), `integration ${p}`);
    t.ok(paths.some((x) => /^\/v1\/mcp-servers\/\{id\}\//.test(x) && x.endsWith(p)), `server ${p}`);
  }

  t.notOk(seen.some((text) => text.includes(SECRET)), 'the credential is in no admin response');
  t.notOk(JSON.stringify(gw.logs).includes(SECRET), 'nor in the logs');
});

t.test('an upstream that is down, refuses the credential, or echoes it', async (t) => {
  const { gw, call, seen } = await start(t);
  const a = addWorkspace(gw.store, 'team-a', Scopes.DEFAULT_WORKSPACE_SCOPES);

  // Down: a port that was just closed.
  const gone = await startMcpUpstream(t);
  await gone.close();
  await call('POST', '/mcp-integrations', { name: 'Gone', slug: 'gone', url: gone.url, auth_type: 'headers', transport: 'http', configurations: { custom_headers: { [HEADER]: SECRET } } });
  await call('POST', '/mcp-servers', { name: 'Gone A', mcp_integration_id: 'gone', slug: 'gone-a' }, a.key);
  const test = await call('POST', '/mcp-servers/gone-a/test', undefined, a.key);
  t.equal(test.status, 200);
  t.match(test.body, { success: false, url: gone.url, error: /gone/ });
  t.type(test.body.response_time_ms, 'number');
  t.notOk('counts' in test.body);
  for (const path of ['/mcp-integrations/gone/capabilities', '/mcp-servers/gone-a/capabilities']) {
    const res = await call('GET', path, undefined, a.key);
    t.equal(res.status, 502, path);
    t.equal(res.body.error.code, 'mcp_upstream_unavailable');
    t.match(res.body.error.message, /gone/);
  }
  // The switches still work with the upstream down.
  t.equal((await call('PUT', '/mcp-servers/gone-a/capabilities', { capabilities: [{ name: 'echo', type: 'tool', enabled: false }] }, a.key)).status, 200);

  // Wrong credential: the upstream's 401 is the error.
  const up = await startMcpUpstream(t, { requireHeader: [HEADER, 'another-value-entirely'] });
  await call('POST', '/mcp-integrations', { name: 'Wrong', slug: 'wrong', url: up.url, auth_type: 'headers', transport: 'http', configurations: { custom_headers: { [HEADER]: SECRET } } });
  const wrong = await call('POST', '/mcp-integrations/wrong/test');
  t.match(wrong.body, { success: false, status_code: 401, error: /401/ });

  // An upstream that echoes the request's headers into its error: the credential is masked.
  const echo = createServer((req, res) => {
    res.writeHead(403, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'forbidden', got: req.headers[HEADER] }));
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => echo.close(resolve)));
  const echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/mcp`;
  await call('POST', '/mcp-integrations', { name: 'Echo', slug: 'echo', url: echoUrl, auth_type: 'headers', transport: 'http', configurations: { custom_headers: { [HEADER]: SECRET } } });
  const echoed = await call('POST', '/mcp-integrations/echo/test');
  t.match(echoed.body, { success: false, status_code: 403, error: /forbidden.*\*\*\*/ });
  const echoedCaps = await call('GET', '/mcp-integrations/echo/capabilities');
  t.equal(echoedCaps.status, 502);
  t.match(echoedCaps.body.error.message, /\*\*\*/);

  // An SSE upstream.
  const sse = await startMcpUpstream(t, { transport: 'sse', name: 'legacy', requireHeader: [HEADER, SECRET] });
  await call('POST', '/mcp-integrations', { name: 'Legacy', slug: 'legacy', url: sse.url, auth_type: 'headers', transport: 'sse', configurations: { custom_headers: { [HEADER]: SECRET } } });
  const legacy = await call('POST', '/mcp-integrations/legacy/test');
  t.match(legacy.body, { success: true, server_name: 'legacy', counts: { tools: 6, prompts: 1, resources: 1 } });
  t.equal((await call('GET', '/mcp-integrations/legacy/capabilities')).body.total, 8);

  // A URL the SSRF policy refuses is an error, not a connection.
  gw.store.c.mcpIntegrations.insert({ ...gw.store.c.mcpIntegrations.getBy('slug', 'wrong')!, id: '0190f0f0-0000-7000-8000-000000000001', slug: 'meta', url: 'http://169.254.169.254/mcp' });
  const meta = await call('POST', '/mcp-integrations/meta/test');
  t.match(meta.body, { success: false });

  t.notOk(seen.some((text) => text.includes(SECRET)), 'the credential is in no admin response');
  t.notOk(JSON.stringify(gw.logs).includes(SECRET), 'nor in the logs');
});

t.test('defaults.mcp_tools on API keys and workspaces', async (t) => {
  const principals: Array<Principal['defaults']> = [];
  const probe = definePlugin({
    name: 'probe',
    setup: () => ({ onRequest: (ctx) => void principals.push(ctx.get('principal')?.defaults ?? null) }),
  }) as PluginDefinition<never>;
  const { gw, call } = await start(t, { probe }, ', probe');
  const a = addWorkspace(gw.store, 'team-a', Scopes.DEFAULT_WORKSPACE_SCOPES);

  // API keys.
  const tools = ['github/*', '*/read_*', 'fs/read.file:v2'];
  const created = await call('POST', '/api-keys/workspace/service', { name: 'agent', workspace_id: a.id, scopes: ['mcp.invoke', 'mcp_servers.list'], defaults: { mcp_tools: tools } });
  t.equal(created.status, 200, created.text);
  const got = await call('GET', `/api-keys/${created.body.id}`);
  t.same(got.body.defaults.mcp_tools, tools);
  t.same(gw.store.c.apiKeys.get(created.body.id)!.defaults!.mcp_tools, tools);
  principals.length = 0;
  await call('GET', '/mcp-servers', undefined, created.body.key);
  t.same(principals.at(-1)?.mcp_tools, tools, "the key's allow-list is on its principal");
  t.same((await call('PUT', `/api-keys/${created.body.id}`, { defaults: { mcp_tools: ['github/create_issue'] } })).status, 200);
  t.same((await call('GET', `/api-keys/${created.body.id}`)).body.defaults.mcp_tools, ['github/create_issue']);
  for (const bad of [['no-slash'], ['a/b c'], ['$x/y'], [`a/${'x'.repeat(200)}`], Array.from({ length: 101 }, (_, i) => `s/t${i}`), 'github/*']) {
    const res = await call('POST', '/api-keys/workspace/service', { name: 'bad', workspace_id: a.id, scopes: ['mcp.invoke'], defaults: { mcp_tools: bad } });
    t.equal(res.status, 400, JSON.stringify(bad).slice(0, 40));
    t.match(res.body.error.param, /^defaults\.mcp_tools/);
  }

  // Workspaces.
  const ws = await call('POST', '/admin/workspaces', { name: 'Agents', slug: 'agents', defaults: { mcp_tools: ['github/*'] } });
  t.equal(ws.status, 200, ws.text);
  t.same(ws.body.defaults.mcp_tools, ['github/*']);
  t.same((await call('GET', '/admin/workspaces/agents')).body.defaults.mcp_tools, ['github/*']);
  t.equal((await call('PUT', '/admin/workspaces/agents', { defaults: { mcp_tools: ['github/*', 'linear/list_*'] } })).status, 200);
  t.same(gw.store.c.workspaces.getBy('slug', 'agents')!.defaults.mcp_tools, ['github/*', 'linear/list_*']);
  t.equal((await call('PUT', '/admin/workspaces/agents', { name: 'Agents 2' })).status, 200);
  t.same(gw.store.c.workspaces.getBy('slug', 'agents')!.defaults.mcp_tools, ['github/*', 'linear/list_*'], 'absent keeps it');
  t.equal((await call('PUT', '/admin/workspaces/agents', { defaults: { mcp_tools: null } })).status, 200);
  t.equal(gw.store.c.workspaces.getBy('slug', 'agents')!.defaults.mcp_tools, undefined, 'null removes it');
  t.notOk('mcp_tools' in (await call('GET', '/admin/workspaces/agents')).body.defaults);
  const bad = await call('PUT', '/admin/workspaces/agents', { defaults: { mcp_tools: ['no slash'] } });
  t.equal(bad.status, 400);
  t.match(bad.body.error.param, /^defaults\.mcp_tools/);
  const badCreate = await call('POST', '/admin/workspaces', { name: 'Bad', defaults: { mcp_tools: ['x'] } });
  t.equal(badCreate.status, 400);
  t.match(badCreate.body.error.param, /^defaults\.mcp_tools/);
  // A workspace key cannot widen its own allow-list.
  const own = await call('PUT', `/admin/workspaces/${a.id}`, { defaults: { mcp_tools: ['*/*'] } }, a.key);
  t.equal(own.status, 403);
  t.equal(own.body.error.param, 'defaults.mcp_tools');
});
