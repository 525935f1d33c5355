/**
 * The short way of a `tools/call` (plugins/mcp-gateway/relay.ts), against a real SDK server: what
 * the upstream sees (the gateway's own ids, the server's own names, its stored credential), what
 * the client reads back (its ids, SSE as the SDK's server transport writes it), cancellation by
 * `notifications/cancelled`, progress that keeps a slow call inside its timeout, an upstream that
 * forgot the session, and requests the SDK's transport refuses still refused in its words.
 */
import t from 'tap';
import { ADMIN_KEY, insertKey, startGateway, type Teardown } from './helpers/gateway.js';
import { startMcpUpstream } from './helpers/mcp-upstream.js';
import { adminCall, mcpClient, postOnSession, registerMcpServer, resultText, rpcError } from './helpers/mcp-client.js';

const TOKEN = 'relay-upstream-token-value';
const PIPELINE = `pipeline:
  - logging
  - auth
  - mcp-gateway:
      timeouts: {patient: 150}
  - admin-org
  - admin-api-keys
  - admin-catalog
`;

interface Message {
  jsonrpc?: string;
  id?: string | number;
  method?: string;
  params?: { name?: string; arguments?: Record<string, unknown>; requestId?: string | number; _meta?: Record<string, unknown> };
  result?: { content?: Array<{ text?: string }>; isError?: boolean };
  error?: { code: number; message: string };
}

/** The `data:` messages of an SSE body (comments skipped, as SSE parsers do). */
const events = (text: string): Message[] =>
  text
    .split('\n\n')
    .map((e) => e.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n'))
    .filter((data) => data !== '')
    .map((data) => JSON.parse(data) as Message);

t.test('tools/call relayed', async (t) => {
  const alpha = await startMcpUpstream(t, { name: 'alpha-upstream', requireHeader: ['x-upstream-token', TOKEN] });
  const gw = await startGateway(t, { yaml: PIPELINE, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const ws = gw.store.meta.get('default_workspace_id') as string;
  await registerMcpServer(gw, 'alpha', alpha.url, ws, { 'x-upstream-token': TOKEN });
  await registerMcpServer(gw, 'patient', alpha.url, ws, { 'x-upstream-token': TOKEN });
  const key = insertKey(gw.store, { workspace_id: ws, scopes: ['mcp.invoke'], name: 'agent' });

  /** A session through the SDK client; then raw POSTs on it. */
  async function session(t: Teardown, slug: string): Promise<{ post(message: unknown, headers?: Record<string, string>): Promise<Response> }> {
    const { transport } = await mcpClient(t, `${gw.url}/${slug}/mcp`, key);
    return { post: (message, headers) => postOnSession(`${gw.url}/${slug}/mcp`, key, transport, message, headers) };
  }

  await t.test("the upstream sees the gateway's id and credential; the client reads its own id", async (t) => {
    const { post } = await session(t, 'alpha');
    const res = await post({ jsonrpc: '2.0', id: 'client-7', method: 'tools/call', params: { name: 'echo', arguments: { text: 'relayed' } } });
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'text/event-stream', 'SSE, as the SDK server transport answers');
    t.ok(res.headers.get('mcp-session-id'), 'with the session id');
    const [answer, ...more] = events(await res.text());
    t.same(more, [], 'one event: the result');
    t.equal(answer!.id, 'client-7', "the client's id");
    t.equal(answer!.result?.content?.[0]?.text, 'relayed');

    const sent = alpha.messages.filter((m) => (m as Message).method === 'tools/call' && (m as Message).params?.arguments?.text === 'relayed') as Message[];
    t.equal(sent.length, 1, 'one call upstream');
    t.match(String(sent[0]!.id), /^gw-\d+$/, "under the gateway's own id, never one the SDK client also uses");
    const last = alpha.requests.at(-1)!;
    t.equal(last.headers['x-upstream-token'], TOKEN, 'with the stored credential');
    t.equal(last.headers.authorization, undefined, "without the client's Authorization header");
    t.notOk(JSON.stringify(last.headers).includes(key), 'nor the gateway key');

    // Two calls with the same id from two sessions at once still get their own answers.
    const other = await session(t, 'alpha');
    const [a, b] = await Promise.all([
      post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'first' } } }).then((r) => r.text()),
      other.post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'second' } } }).then((r) => r.text()),
    ]);
    t.equal(events(a)[0]!.result?.content?.[0]?.text, 'first');
    t.equal(events(b)[0]!.result?.content?.[0]?.text, 'second');
  });

  await t.test('prompts/get and resources/read take the relay too; resources/read on /v1/mcp does not', async (t) => {
    const { client } = await mcpClient(t, `${gw.url}/alpha/mcp`, key);
    const prompt = await client.getPrompt({ name: 'greet', arguments: { name: 'Grace' } });
    t.match(JSON.stringify(prompt.messages), /Grace/);
    const read = await client.readResource({ uri: 'file:///readme' });
    t.ok(read.contents.length > 0);
    const sentPrompt = alpha.messages.filter((m) => (m as Message).method === 'prompts/get').at(-1) as Message;
    t.match(String(sentPrompt.id), /^gw-\d+$/, 'prompts/get relayed');
    const reads = () => alpha.messages.filter((m) => (m as Message).method === 'resources/read') as Message[];
    t.match(String(reads().at(-1)!.id), /^gw-\d+$/, 'resources/read relayed');

    const { client: all } = await mcpClient(t, `${gw.url}/v1/mcp`, key);
    const aggregated = await all.getPrompt({ name: 'alpha__greet', arguments: { name: 'Ada' } });
    t.match(JSON.stringify(aggregated.messages), /Ada/);
    const sent = alpha.messages.filter((m) => (m as Message).method === 'prompts/get').at(-1) as Message;
    t.equal(sent.params?.name, 'greet', 'under its own name upstream');
    t.match(String(sent.id), /^gw-\d+$/);
    await all.listResources();
    const before = reads().length;
    t.ok((await all.readResource({ uri: 'file:///readme' })).contents.length > 0);
    t.equal(reads().length, before + 1);
    t.type(reads().at(-1)!.id, 'number', "the SDK way, which knows which server listed the URI");
  });

  await t.test('notifications/cancelled from the client ends a relayed call, upstream too', async (t) => {
    const { post } = await session(t, 'alpha');
    const started = Date.now();
    const calls = alpha.calls.length;
    const pending = post({ jsonrpc: '2.0', id: 'long', method: 'tools/call', params: { name: 'slow', arguments: { ms: 5000 } } });
    for (let i = 0; i < 100 && alpha.calls.length === calls; i++) await new Promise((r) => setTimeout(r, 10));
    const cancel = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'long', reason: 'changed my mind' } });
    t.equal(cancel.status, 202, 'the notification is accepted');
    const res = await pending;
    const [answer] = events(await res.text());
    t.equal(answer!.id, 'long');
    t.equal(answer!.error?.code, -32000, 'the call ends with an error');
    t.ok(Date.now() - started < 4000, `at once (${Date.now() - started} ms)`);
    for (let i = 0; i < 50 && !alpha.cancelled.includes('slow'); i++) await new Promise((r) => setTimeout(r, 20));
    t.ok(alpha.cancelled.includes('slow'), 'the upstream call was cancelled');
    const told = alpha.messages.find((m) => (m as Message).method === 'notifications/cancelled') as Message | undefined;
    t.match(String(told?.params?.requestId), /^gw-\d+$/, "upstream, the cancellation names the gateway's id");
  });

  await t.test('a quiet call sends its headers before its answer', async (t) => {
    const { post } = await session(t, 'alpha');
    const started = Date.now();
    const res = await post({ jsonrpc: '2.0', id: 'quiet', method: 'tools/call', params: { name: 'slow', arguments: { ms: 2500 } } });
    t.ok(Date.now() - started < 2000, `headers within a second or so (${Date.now() - started} ms)`);
    t.equal(res.headers.get('content-length'), null, 'the answer streams');
    const text = await res.text();
    t.match(text, /^: /, 'a comment first, which carried the headers');
    t.equal(events(text)[0]!.result?.content?.[0]?.text, 'slept 2500');
  });

  await t.test('progress keeps a call alive past its timeout; silence does not', async (t) => {
    const { client } = await mcpClient(t, `${gw.url}/patient/mcp`, key);
    const seen: number[] = [];
    // 12 steps of 20 ms: 240 ms in all, over the 150 ms timeout, never 150 ms without progress.
    const result = await client.callTool({ name: 'progress', arguments: { steps: 12 } }, undefined, { onprogress: (p) => seen.push(p.progress), timeout: 10_000 });
    t.equal(resultText(result), 'done');
    t.equal(seen.length, 12, 'every step passed through');
    const slow = await rpcError(client.callTool({ name: 'slow', arguments: { ms: 2000 } }, undefined, { timeout: 10_000 }));
    t.equal(slow.code, -32001, 'a silent call times out');
  });

  await t.test('an upstream that forgot the session: an error, then a new session', async (t) => {
    const { client } = await mcpClient(t, `${gw.url}/alpha/mcp`, key);
    t.equal(resultText(await client.callTool({ name: 'echo', arguments: { text: 'before' } })), 'before');
    const initializes = alpha.messages.filter((m) => (m as Message).method === 'initialize').length;
    alpha.forgetSessions();
    const lost = await rpcError(client.callTool({ name: 'echo', arguments: { text: 'lost' } }));
    t.equal(lost.code, -32011);
    t.match(lost.message, /alpha.*HTTP 404/);
    t.equal(resultText(await client.callTool({ name: 'echo', arguments: { text: 'after' } })), 'after', 'the next call works');
    t.equal(alpha.messages.filter((m) => (m as Message).method === 'initialize').length, initializes + 1, 'on a new upstream session');
  });

  await t.test('an upstream that answers in JSON is relayed as SSE', async (t) => {
    const plain = await startMcpUpstream(t, { name: 'json-upstream', json: true });
    await registerMcpServer(gw, 'plain', plain.url, ws);
    const { post } = await session(t, 'plain');
    const res = await post({ jsonrpc: '2.0', id: 'j1', method: 'tools/call', params: { name: 'add', arguments: { a: 40, b: 2 } } });
    t.equal(res.headers.get('content-type'), 'text/event-stream');
    const [answer] = events(await res.text());
    t.match(answer, { id: 'j1', result: { content: [{ text: '42' }] } });
    const failed = events(await (await post({ jsonrpc: '2.0', id: 'j2', method: 'tools/call', params: { name: 'fail', arguments: {} } })).text())[0]!;
    t.equal(failed.result?.isError, true, 'a tool error is a result');
    const sent = plain.messages.filter((m) => (m as Message).method === 'tools/call') as Message[];
    t.equal(sent.length, 2);
    t.ok(sent.every((m) => /^gw-\d+$/.test(String(m.id))), 'both took the relay');
  });

  await t.test('a result that is not one of its kind is an error, logged as one', async (t) => {
    const { client } = await mcpClient(t, `${gw.url}/alpha/mcp`, key);
    // The server's answer, edited on the wire: `content` is no longer a list.
    alpha.corruptNextCall((text) => text.replace('"content":[', '"content":"garbled","was":['));
    const bad = await rpcError(client.callTool({ name: 'echo', arguments: { text: 'mangled-call' } }));
    t.equal(bad.code, -32603);
    t.match(bad.message, /alpha.*invalid result.*content/);
    t.equal(resultText(await client.callTool({ name: 'echo', arguments: { text: 'fine' } })), 'fine', 'the next answer is fine');
    type Rec = { mcp?: { tool: string; outcome: string; error_code: number | null; argument_bytes: number } };
    let rec: Rec | undefined;
    for (let i = 0; i < 100 && rec === undefined; i++) {
      const page = (await adminCall(gw, 'GET', '/v1/logs?route=mcp&mcp_tool=echo&page_size=100')).body.data as Rec[];
      rec = page.find((r) => r.mcp?.argument_bytes === JSON.stringify({ text: 'mangled-call' }).length);
      if (rec === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    t.match(rec, { mcp: { outcome: 'error', error_code: -32603 } });
  });

  await t.test("what the SDK's transport refuses is refused in its words", async (t) => {
    const { post } = await session(t, 'alpha');
    const call = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } };
    t.equal((await post(call, { accept: 'application/json' })).status, 406, 'an Accept without text/event-stream');
    t.equal((await post(call, { 'mcp-protocol-version': '1999-01-01' })).status, 400, 'an unknown protocol version');
    const bad = await post({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { arguments: {} } });
    const [answer] = events(await bad.text());
    t.equal(answer!.error?.code, -32603, 'a call without a name fails as the SDK server fails it');
    t.equal(alpha.messages.filter((m) => (m as Message).id === 3 || (m as Message).id === 4).length, 0, 'none reached the upstream');
  });
});
