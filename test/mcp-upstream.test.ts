/**
 * The test MCP upstream (test/helpers/mcp-upstream.ts), driven by the official SDK client: if the
 * SDK client talks to it, gateway tests built on it exercise the real protocol.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import { startMcpUpstream, type McpUpstream } from './helpers/mcp-upstream.js';

async function connect(t: { teardown(fn: () => unknown): void }, up: McpUpstream, headers: Record<string, string> = {}, sse = false): Promise<Client> {
  const client = new Client({ name: 'self-test', version: '0.0.1' });
  const url = new URL(up.url);
  const transport = sse ? new SSEClientTransport(url, { requestInit: { headers }, eventSourceInit: { fetch: (u, init) => fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }) } }) : new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  await client.connect(transport);
  t.teardown(() => client.close());
  return client;
}

const text = (result: unknown): string => ((result as { content: Array<{ text: string }> }).content[0]?.text ?? '');

t.test('initialize, list and call over Streamable HTTP', async (t) => {
  const up = await startMcpUpstream(t, { name: 'alpha', version: '9.8.7' });
  t.match(up.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  const client = await connect(t, up);
  t.same(client.getServerVersion(), { name: 'alpha', version: '9.8.7' });
  const tools = await client.listTools();
  t.same(tools.tools.map((x) => x.name).sort(), ['add', 'crash', 'echo', 'fail', 'progress', 'slow']);
  t.same((await client.listPrompts()).prompts.map((p) => p.name), ['greet']);
  t.same((await client.listResources()).resources.map((r) => r.uri), ['file:///readme']);
  t.equal(text(await client.callTool({ name: 'echo', arguments: { text: 'hi' } })), 'hi');
  t.equal(text(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })), '5');
  t.equal((await client.callTool({ name: 'fail', arguments: {} })).isError, true);
  const prompt = await client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } });
  t.match(JSON.stringify(prompt.messages), /Hello, Ada!/);
  const resource = await client.readResource({ uri: 'file:///readme' });
  t.match(JSON.stringify(resource.contents), /readme/);
  t.same(up.calls.map((c) => c.tool), ['echo', 'add', 'fail']);
  t.ok(up.requests.length >= 3);
  t.ok(up.requests.every((r) => typeof r.method === 'string'));
});

t.test('progress notifications arrive before the result', async (t) => {
  const up = await startMcpUpstream(t);
  const client = await connect(t, up);
  const seen: number[] = [];
  const result = await client.callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, { onprogress: (p) => void seen.push(p.progress) });
  t.same(seen, [1, 2, 3]);
  t.equal(text(result), 'done');
});

t.test('a cancelled slow call is recorded', async (t) => {
  const up = await startMcpUpstream(t);
  const client = await connect(t, up);
  const ac = new AbortController();
  const call = client.callTool({ name: 'slow', arguments: { ms: 5000 } }, undefined, { signal: ac.signal });
  await new Promise((r) => setTimeout(r, 100));
  ac.abort();
  await t.rejects(call);
  for (let i = 0; i < 50 && up.cancelled.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  t.same(up.cancelled, ['slow']);
});

t.test('crash drops the connection mid-call', async (t) => {
  const up = await startMcpUpstream(t);
  const client = await connect(t, up);
  await t.rejects(client.callTool({ name: 'crash', arguments: {} }, undefined, { timeout: 3000 }));
  t.same(up.calls.map((c) => c.tool), ['crash']);
});

t.test('requireHeader: 401 without it, works with it', async (t) => {
  const up = await startMcpUpstream(t, { requireHeader: ['X-Upstream-Token', 'tok-123'] });
  const res = await fetch(up.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
  t.equal(res.status, 401);
  await t.rejects(connect(t, up));
  const client = await connect(t, up, { 'X-Upstream-Token': 'tok-123' });
  t.equal(text(await client.callTool({ name: 'echo', arguments: { text: 'ok' } })), 'ok');
  t.equal(up.requests.at(-1)?.headers['x-upstream-token'], 'tok-123');
});

t.test('the SSE transport', async (t) => {
  const up = await startMcpUpstream(t, { transport: 'sse', name: 'legacy', requireHeader: ['x-k', 'v'] });
  t.match(up.url, /\/sse$/);
  const client = await connect(t, up, { 'x-k': 'v' }, true);
  t.same(client.getServerVersion()?.name, 'legacy');
  t.equal(text(await client.callTool({ name: 'echo', arguments: { text: 'old' } })), 'old');
  const seen: number[] = [];
  await client.callTool({ name: 'progress', arguments: { steps: 2 } }, undefined, { onprogress: (p) => void seen.push(p.progress) });
  t.same(seen, [1, 2]);
  // The SDK's SSE client reconnects its EventSource and leaves the call pending: only its timeout ends it.
  await t.rejects(client.callTool({ name: 'crash', arguments: {} }, undefined, { timeout: 500 }));
});
