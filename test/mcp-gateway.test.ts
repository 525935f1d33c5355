/**
 * The MCP gateway end to end: the official SDK's client talks to the gateway, and the gateway to
 * real MCP servers built with the SDK (test/helpers/mcp-upstream.ts), over Streamable HTTP:
 * initialize, tools, progress, prompts and resources; credentials injected and never shown;
 * disabled tools and allow-lists; workspaces; the aggregated endpoint; upstreams that are down,
 * slow or die mid-call; cancellation; DELETE; the log record of each call.
 */
import t from 'tap';
import { ADMIN_KEY, addWorkspace, insertKey, startGateway } from './helpers/gateway.js';
import { startMcpUpstream, type McpUpstream } from './helpers/mcp-upstream.js';
import { adminCall, mcpClient, postOnSession, registerMcpServer, resultText, rpcError } from './helpers/mcp-client.js';

const TOKEN = 'upstream-s3cret-token-value';
const PIPELINE = `pipeline:
  - logging
  - metrics
  - auth
  - mcp-gateway:
      timeouts: {sloth: 400}
  - rate-limit
  - admin-org
  - admin-api-keys
  - admin-catalog
`;

t.test('the MCP gateway', async (t) => {
  const alpha = await startMcpUpstream(t, { name: 'alpha-upstream', requireHeader: ['x-upstream-token', TOKEN] });
  const beta = await startMcpUpstream(t, { name: 'beta-upstream' });
  const gw = await startGateway(t, { yaml: PIPELINE, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const ws = gw.store.meta.get('default_workspace_id') as string;
  await registerMcpServer(gw, 'alpha', alpha.url, ws, { 'x-upstream-token': TOKEN });
  await registerMcpServer(gw, 'beta', beta.url, ws);
  await registerMcpServer(gw, 'sloth', alpha.url, ws, { 'x-upstream-token': TOKEN });
  await registerMcpServer(gw, 'gone', 'http://127.0.0.1:9/mcp', ws);
  const legacy = await startMcpUpstream(t, { name: 'legacy-upstream', transport: 'sse' });
  await registerMcpServer(gw, 'legacy', legacy.url, ws, undefined, 'sse');
  const key = insertKey(gw.store, { workspace_id: ws, scopes: ['mcp.invoke'], name: 'agent' });

  await t.test('initialize, list and call tools through /<slug>/mcp; the credential is the gateway\'s', async (t) => {
    const { client } = await mcpClient(t, `${gw.url}/alpha/mcp`, key);
    t.match(client.getServerVersion(), { name: 'gateway/alpha' });
    const tools = (await client.listTools()).tools.map((x) => x.name).sort();
    t.same(tools, ['add', 'crash', 'echo', 'fail', 'progress', 'slow']);
    t.equal(resultText(await client.callTool({ name: 'echo', arguments: { text: 'hello' } })), 'hello');
    t.equal(resultText(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })), '5');
    const failed = await client.callTool({ name: 'fail', arguments: {} });
    t.equal(failed.isError, true, 'a tool error comes back as the tool result');

    const upstreamHeaders = alpha.requests.map((r) => r.headers);
    t.ok(upstreamHeaders.length > 0 && upstreamHeaders.every((h) => h['x-upstream-token'] === TOKEN), 'every upstream request carries the stored credential');
    t.notOk(JSON.stringify(upstreamHeaders).includes(key), 'the gateway key never goes upstream');
    t.ok(upstreamHeaders.every((h) => h.authorization === undefined), 'nor the client\'s Authorization header');

    const prompts = await client.listPrompts();
    t.same(prompts.prompts.map((p) => p.name), ['greet']);
    const prompt = await client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } });
    t.match(JSON.stringify(prompt.messages), /Ada/);
    const resources = await client.listResources();
    t.same(resources.resources.map((r) => r.uri), ['file:///readme']);
    const read = await client.readResource({ uri: 'file:///readme' });
    t.ok(read.contents.length > 0, 'a resource reads through');
  });

  await t.test('progress notifications pass through as they come', async (t) => {
    const { client } = await mcpClient(t, `${gw.url}/alpha/mcp`, key, 'x-gateway-api-key');
    const seen: number[] = [];
    const result = await client.callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, { onprogress: (p) => seen.push(p.progress) });
    t.equal(resultText(result), 'done');
    t.same(seen, [1, 2, 3], 'three progress notifications, in order');
  });

  await t.test('an answer without progress goes out in one piece; a call with progress streams', async (t) => {
    const { transport } = await mcpClient(t, `${gw.url}/alpha/mcp`, key);
    const post = (id: number, params: Record<string, unknown>): Promise<Response> =>
      postOnSession(`${gw.url}/alpha/mcp`, key, transport, { jsonrpc: '2.0', id, method: 'tools/call', params });
    const whole = await post(1, { name: 'echo', arguments: { text: 'one piece' } });
    t.equal(whole.headers.get('content-type'), 'text/event-stream');
    const text = await whole.text();
    t.equal(whole.headers.get('content-length'), String(Buffer.byteLength(text)), 'sent with its length, not chunked');
    t.match(text, /"text":"one piece"/);

    const streamed = await post(2, { name: 'progress', arguments: { steps: 2 }, _meta: { progressToken: 'p' } });
    t.equal(streamed.headers.get('content-length'), null, 'streamed');
    const reader = streamed.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    t.match(first, /notifications\/progress/, 'the first progress event arrives on its own');
    t.notMatch(first, /"done"/, 'before the result');
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    t.match(rest, /"text":"done"/);
  });

  await t.test('a disabled tool is absent and refused; allow-lists narrow further', async (t) => {
    const server = gw.store.c.mcpServers.getBy('slug', 'alpha')!;
    gw.store.c.mcpServers.update(server.id, (s) => ({ ...s, disabled_capabilities: [{ type: 'tool', name: 'add' }] }));
    t.teardown(() => gw.store.c.mcpServers.update(server.id, (s) => ({ ...s, disabled_capabilities: [] })));
    const { client } = await mcpClient(t, `${gw.url}/alpha/mcp`, key);
    t.notOk((await client.listTools()).tools.some((x) => x.name === 'add'), 'absent from tools/list');
    const refused = await rpcError(client.callTool({ name: 'add', arguments: { a: 1, b: 1 } }));
    t.equal(refused.code, -32010);
    t.match(refused.message, /disabled/);
    t.notOk(alpha.calls.some((c) => c.tool === 'add' && (c.args as { a: number }).a === 1 && (c.args as { b: number }).b === 1), 'the upstream never saw it');

    const narrow = insertKey(gw.store, { workspace_id: ws, scopes: ['mcp.invoke'], name: 'narrow' });
    const record = gw.store.c.apiKeys.list({ filter: (k) => k.name === 'narrow' }).items[0]!;
    gw.store.c.apiKeys.update(record.id, (k) => ({ ...k, defaults: { ...(k.defaults ?? {}), mcp_tools: ['alpha/echo', 'beta/*'] } }));
    const { client: limited } = await mcpClient(t, `${gw.url}/alpha/mcp`, narrow);
    t.same((await limited.listTools()).tools.map((x) => x.name), ['echo'], 'the key sees only its allowed tools');
    const outside = await rpcError(limited.callTool({ name: 'slow', arguments: { ms: 1 } }));
    t.equal(outside.code, -32010);
    t.match(outside.message, /allow-list/);
  });

  await t.test('keys: missing, wrong, without mcp.invoke, or from another workspace', async (t) => {
    const post = (headers: Record<string, string>): Promise<Response> =>
      fetch(`${gw.url}/alpha/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
      });
    t.equal((await post({})).status, 401, 'no key');
    t.equal((await post({ authorization: 'Bearer gw-wrong-key-000000000000000000000000' })).status, 401, 'a wrong key');
    const noScope = insertKey(gw.store, { workspace_id: ws, scopes: ['logs.list'], name: 'no mcp' });
    t.equal((await post({ authorization: `Bearer ${noScope}` })).status, 403, 'a key without mcp.invoke');
    const other = addWorkspace(gw.store, 'other', ['mcp.invoke']);
    const stranger = await post({ authorization: `Bearer ${other.key}` });
    t.equal(stranger.status, 404, "another workspace's server does not exist for this key");
    t.match(((await stranger.json()) as { error: { message: string } }).error.message, /No MCP server "alpha"/);
  });

  await t.test('/v1/mcp aggregates every server the key may use, prefixed by slug', async (t) => {
    const { client } = await mcpClient(t, `${gw.url}/v1/mcp`, key);
    const names = (await client.listTools()).tools.map((x) => x.name);
    for (const n of ['alpha__echo', 'beta__echo', 'beta__add', 'sloth__echo']) t.ok(names.includes(n), `${n} listed`);
    t.notOk(names.some((n) => n.startsWith('gone__')), 'a server that is down is left out of the union');
    const before = beta.calls.length;
    t.equal(resultText(await client.callTool({ name: 'beta__add', arguments: { a: 20, b: 22 } })), '42');
    t.equal(beta.calls.length, before + 1, 'the call went to beta');
    t.match(beta.calls.at(-1), { tool: 'add', args: { a: 20, b: 22 } }, 'under its own name');
    const unknown = await rpcError(client.callTool({ name: 'nowhere__echo', arguments: { text: 'x' } }));
    t.equal(unknown.code, -32012);
  });

  await t.test('upstreams that are down, slow, or die mid-call answer with errors, not hangs', async (t) => {
    const { client: down } = await mcpClient(t, `${gw.url}/gone/mcp`, key);
    const unreachable = await rpcError(down.listTools());
    t.equal(unreachable.code, -32011, 'a server that is down');
    t.match(unreachable.message, /gone/);

    const { client: sloth } = await mcpClient(t, `${gw.url}/sloth/mcp`, key);
    const started = Date.now();
    const slow = await rpcError(sloth.callTool({ name: 'slow', arguments: { ms: 5000 } }));
    t.equal(slow.code, -32001, 'the per-server timeout (400 ms) ends a slow call');
    t.equal(slow.message, 'MCP error -32001: Request timed out', 'the error as a direct call reads it, prefixed once');
    t.ok(Date.now() - started < 4000, `within the timeout (${Date.now() - started} ms)`);

    const { client } = await mcpClient(t, `${gw.url}/alpha/mcp`, key);
    const t0 = Date.now();
    const crashed = await rpcError(client.callTool({ name: 'crash', arguments: {} }, undefined, { timeout: 20_000 }));
    t.equal(crashed.code, -32011, `a server that dies mid-call (${crashed.message})`);
    t.equal(crashed.message, 'MCP error -32011: The MCP server "alpha" closed the connection mid-call.');
    t.ok(Date.now() - t0 < 10_000, 'at once, not after a timeout');
    t.equal(resultText(await client.callTool({ name: 'echo', arguments: { text: 'again' } })), 'again', 'the next call reconnects');

    // The same over the older SSE transport: the call's answer would come on the stream that died.
    const { client: old } = await mcpClient(t, `${gw.url}/legacy/mcp`, key);
    t.equal(resultText(await old.callTool({ name: 'echo', arguments: { text: 'sse' } })), 'sse', 'an SSE-transport server answers');
    const t1 = Date.now();
    const dropped = await rpcError(old.callTool({ name: 'crash', arguments: {} }, undefined, { timeout: 20_000 }));
    t.equal(dropped.code, -32011, `an SSE-transport server that dies mid-call (${dropped.message})`);
    t.ok(Date.now() - t1 < 10_000, `at once, not after a timeout (${Date.now() - t1} ms)`);
    t.equal(resultText(await old.callTool({ name: 'echo', arguments: { text: 'back' } })), 'back', 'the next call reconnects over SSE');
  });

  await t.test('a client that cancels cancels the upstream call', async (t) => {
    const { client } = await mcpClient(t, `${gw.url}/alpha/mcp`, key);
    const abort = new AbortController();
    const pending = client.callTool({ name: 'slow', arguments: { ms: 5000 } }, undefined, { signal: abort.signal });
    await new Promise((r) => setTimeout(r, 300));
    abort.abort();
    await t.rejects(pending);
    for (let i = 0; i < 50 && !alpha.cancelled.includes('slow'); i++) await new Promise((r) => setTimeout(r, 50));
    t.ok(alpha.cancelled.includes('slow'), 'the upstream saw the cancellation');
  });

  await t.test('DELETE ends the session here and upstream', async (t) => {
    const { client, transport } = await mcpClient(t, `${gw.url}/beta/mcp`, key);
    await client.listTools();
    const sid = transport.sessionId!;
    const deletesBefore = beta.requests.filter((r) => r.method === 'DELETE').length;
    await transport.terminateSession();
    const after = await fetch(`${gw.url}/beta/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'mcp-session-id': sid, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} }),
    });
    t.equal(after.status, 404, 'the ended session is gone');
    for (let i = 0; i < 50 && beta.requests.filter((r) => r.method === 'DELETE').length === deletesBefore; i++) await new Promise((r) => setTimeout(r, 20));
    t.ok(beta.requests.filter((r) => r.method === 'DELETE').length > deletesBefore, 'the upstream session was ended too');

    // Another key cannot use a session it did not open.
    const { transport: mine } = await mcpClient(t, `${gw.url}/beta/mcp`, key);
    const other = insertKey(gw.store, { workspace_id: ws, scopes: ['mcp.invoke'], name: 'other agent' });
    const hijack = await fetch(`${gw.url}/beta/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other}`, 'mcp-session-id': mine.sessionId!, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} }),
    });
    t.equal(hijack.status, 404, "another key's session does not exist for this key");
  });

  await t.test('each call is a log record and a metric', async (t) => {
    type Rec = { route: string; mcp?: { server: string; method: string; tool: string; argument_bytes: number; outcome: string; error_code: number | null; upstream_ms: number } };
    let records: Rec[] = [];
    for (let i = 0; i < 100; i++) {
      records = ((await adminCall(gw, 'GET', '/v1/logs?route=mcp&mcp_tool=echo&page_size=100')).body.data as Rec[]) ?? [];
      if (records.length >= 4) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const hello = records.find((r) => r.mcp?.server === 'alpha' && r.mcp.argument_bytes === JSON.stringify({ text: 'hello' }).length);
    t.match(hello, { route: 'mcp', mcp: { method: 'tools/call', tool: 'echo', outcome: 'ok', error_code: null } }, 'a tools/call record: server, tool, argument size, outcome');
    t.ok((hello?.mcp?.upstream_ms ?? -1) >= 0);
    const denied = ((await adminCall(gw, 'GET', '/v1/logs?route=mcp&mcp_tool=add&page_size=100')).body.data as Rec[]).find((r) => r.mcp?.outcome === 'denied');
    t.match(denied, { mcp: { server: 'alpha', error_code: -32010 } }, 'a refused call is logged as denied with its JSON-RPC code');
    const unavailable = ((await adminCall(gw, 'GET', '/v1/logs?route=mcp&mcp_server=sloth&page_size=100')).body.data as Rec[]).find((r) => r.mcp?.tool === 'slow');
    t.match(unavailable, { mcp: { outcome: 'error', error_code: -32001 } }, 'a timed-out call with its code');
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    t.match(metrics, /gateway_mcp_calls_total\{server="beta",method="tools\/call",tool="add",outcome="ok"\} 1/, 'counted in Prometheus by server and tool');
  });

  await t.test('nothing secret in the gateway logs', async (t) => {
    const text = JSON.stringify(gw.logs);
    t.notOk(text.includes(TOKEN), 'the upstream credential never appears');
    t.notOk(text.includes(key), 'nor the gateway key');
  });
});

export type { McpUpstream };
