/**
 * Guardrails on MCP calls, end to end: the SDK's client talks to the gateway, the gateway to a
 * real MCP server (test/helpers/mcp-upstream.ts). Saved guardrails (`POST /v1/guardrails`) are
 * attached to API keys' `defaults.input_guardrails` / `output_guardrails`:
 *
 *   input   tools/call and prompts/get arguments: deny ▶ -32010 and no upstream call;
 *           redact ▶ the upstream receives the redacted text
 *   output  the tool's result, the prompt, the resource: deny ▶ -32010; redact ▶ rewritten text
 *   logs    the record of each call carries the guardrail results
 *   none    a key without guardrails: calls unchanged
 */
import t from 'tap';
import { ADMIN_KEY, insertKey, startGateway, type StartedGateway } from './helpers/gateway.js';
import { startMcpUpstream } from './helpers/mcp-upstream.js';
import { adminCall, mcpClient, registerMcpServer, resultText, rpcError } from './helpers/mcp-client.js';

const PIPELINE = `pipeline:
  - logging
  - metrics
  - auth
  - guardrails
  - mcp-gateway
  - admin-org
  - admin-api-keys
  - admin-catalog
`;

/** A saved guardrail: its slug. */
async function saved(gw: StartedGateway, name: string, guardrail: Record<string, unknown>): Promise<string> {
  const res = await adminCall(gw, 'POST', '/v1/guardrails', { name, checks: [guardrail] });
  t.equal(res.status, 200, `guardrail ${name}: ${JSON.stringify(res.body)}`);
  return res.body.slug as string;
}

/** A workspace key with `mcp.invoke` and these guardrails in its defaults. */
function keyWith(gw: StartedGateway, ws: string, name: string, defaults: { input_guardrails?: string[]; output_guardrails?: string[] }): string {
  const raw = insertKey(gw.store, { workspace_id: ws, scopes: ['mcp.invoke'], name });
  const record = gw.store.c.apiKeys.list({ filter: (k) => k.name === name }).items[0]!;
  gw.store.c.apiKeys.update(record.id, (k) => ({ ...k, defaults: { ...(k.defaults ?? {}), ...defaults } }));
  return raw;
}


type GuardrailsLog = {
  verdict: string;
  passed: number;
  failed: number;
  redacted: number;
  results: { before_request_hooks: Array<{ id: string; verdict: boolean; deny: boolean; redacted?: number; checks: Array<{ id: string; verdict: boolean }> }>; after_request_hooks: Array<{ id: string; verdict: boolean; redacted?: number }> };
};
type Rec = { route: string; api_key_id: string; guardrails?: GuardrailsLog; mcp?: { server: string; method: string; tool: string; outcome: string; error_code: number | null } };

t.test('guardrails on MCP tool arguments and results', async (t) => {
  const up = await startMcpUpstream(t, { name: 'alpha-upstream' });
  const gw = await startGateway(t, { yaml: PIPELINE, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const ws = gw.store.meta.get('default_workspace_id') as string;
  await registerMcpServer(gw, 'alpha', up.url, ws);

  const noForbidden = await saved(gw, 'no forbidden', { 'default.contains': { words: ['forbidden'], operator: 'none' }, deny: true });
  const redactEmail = await saved(gw, 'redact email', { 'default.pii': { categories: ['email'] }, redact: true });
  const noClassified = await saved(gw, 'no classified', { 'default.contains': { words: ['classified'], operator: 'none' }, deny: true });
  const redactPii = await saved(gw, 'redact pii', { 'default.pii': {}, redact: true });
  const redactReadme = await saved(gw, 'redact readme', { 'default.regexMatch': { rule: 'readme', not: true }, redact: true });

  const guarded = keyWith(gw, ws, 'guarded', { input_guardrails: [noForbidden, redactEmail], output_guardrails: [noClassified] });
  const outputOnly = keyWith(gw, ws, 'output only', { output_guardrails: [redactPii, redactReadme] });
  const plain = keyWith(gw, ws, 'plain', {});
  const keyId = (name: string): string => gw.store.c.apiKeys.list({ filter: (k) => k.name === name }).items[0]!.id;

  await t.test('input deny: -32010 naming the guardrail, and the upstream is never called', async (t) => {
    const { client } = await mcpClient(t, `${gw.url}/alpha/mcp`, guarded);
    const before = up.calls.length;
    const denied = await rpcError(client.callTool({ name: 'echo', arguments: { text: 'this is forbidden text' } }));
    t.equal(denied.code, -32010);
    t.match(denied.message, /A guardrail denied the tool's arguments/);
    t.match(denied.message, new RegExp(`${noForbidden} \\(default\\.contains\\)`), 'names the guardrail and its failed check');
    const results = (denied.data as { hook_results: GuardrailsLog['results'] }).hook_results;
    t.match(results.before_request_hooks.find((o) => o.id === noForbidden), { verdict: false, deny: true }, 'the results ride in the error data');
    t.equal(up.calls.length, before, 'the upstream never saw the call');

    const prompt = await rpcError(client.getPrompt({ name: 'greet', arguments: { name: 'forbidden' } }));
    t.equal(prompt.code, -32010, "a prompt's arguments too");
    t.match(prompt.message, /the prompt's arguments/);
  });

  await t.test('input redaction: the upstream receives the redacted arguments', async (t) => {
    const { client } = await mcpClient(t, `${gw.url}/alpha/mcp`, guarded);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'write to ada@example.com today' } });
    t.equal(resultText(result), 'write to [EMAIL] today', 'the tool worked on the redacted text');
    const last = up.calls.at(-1)!;
    t.same(last, { tool: 'echo', args: { text: 'write to [EMAIL] today' } }, 'what the upstream received');
    t.notOk(JSON.stringify(up.calls).includes('ada@example.com'), 'the address never reached the upstream');

    const prompt = await client.getPrompt({ name: 'greet', arguments: { name: 'ada@example.com' } });
    t.match(JSON.stringify(prompt.messages), /Hello, \[EMAIL\]!/, "a prompt's arguments are redacted too");

    t.equal(resultText(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })), '5', 'arguments without text pass');
  });

  await t.test("output deny: -32010 'a guardrail denied the tool's result'", async (t) => {
    const { client } = await mcpClient(t, `${gw.url}/alpha/mcp`, guarded);
    const before = up.calls.length;
    const denied = await rpcError(client.callTool({ name: 'echo', arguments: { text: 'the classified plans' } }));
    t.equal(denied.code, -32010);
    t.match(denied.message, /A guardrail denied the tool's result/);
    t.match(denied.message, new RegExp(noClassified));
    t.equal(up.calls.length, before + 1, 'the upstream was called: it is its answer that is refused');
    t.equal(resultText(await client.callTool({ name: 'echo', arguments: { text: 'nothing to see' } })), 'nothing to see', 'a clean answer passes');
  });

  await t.test('output redaction: the result, the prompt and the resource are rewritten', async (t) => {
    const { client } = await mcpClient(t, `${gw.url}/alpha/mcp`, outputOnly);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'call bob@example.org or 10.1.2.3' } });
    t.equal(resultText(result), 'call [EMAIL] or [IP_ADDRESS]');
    t.equal((up.calls.at(-1)!.args as { text: string }).text, 'call bob@example.org or 10.1.2.3', 'the input was not touched (no input guardrails)');
    const prompt = await client.getPrompt({ name: 'greet', arguments: { name: 'bob@example.org' } });
    t.match(JSON.stringify(prompt.messages), /Hello, \[EMAIL\]!/, 'the prompt messages');
    const read = await client.readResource({ uri: 'file:///readme' });
    t.match(read.contents[0], { uri: 'file:///readme', text: 'This is the [MATCH].' }, 'the resource text');
  });

  await t.test('no guardrails attached: calls unchanged', async (t) => {
    const { client } = await mcpClient(t, `${gw.url}/alpha/mcp`, plain);
    t.equal(resultText(await client.callTool({ name: 'echo', arguments: { text: 'forbidden classified ada@example.com' } })), 'forbidden classified ada@example.com');
    t.same(up.calls.at(-1), { tool: 'echo', args: { text: 'forbidden classified ada@example.com' } });
    const read = await client.readResource({ uri: 'file:///readme' });
    t.match(read.contents[0], { text: 'This is the readme.' });
  });

  await t.test('the aggregated endpoint checks too (names are <slug>__<tool>)', async (t) => {
    const { client } = await mcpClient(t, `${gw.url}/v1/mcp`, guarded);
    const denied = await rpcError(client.callTool({ name: 'alpha__echo', arguments: { text: 'forbidden' } }));
    t.equal(denied.code, -32010);
    t.equal(resultText(await client.callTool({ name: 'alpha__echo', arguments: { text: 'x ada@example.com' } })), 'x [EMAIL]');
  });

  await t.test('checks see the tool as the model, also on calls without text arguments', async (t) => {
    const onlyEcho = await saved(gw, 'only echo', { 'default.modelWhitelist': { models: ['echo'] }, deny: true });
    const key = keyWith(gw, ws, 'echo only', { input_guardrails: [onlyEcho] });
    const { client } = await mcpClient(t, `${gw.url}/alpha/mcp`, key);
    t.equal(resultText(await client.callTool({ name: 'echo', arguments: { text: 'ok' } })), 'ok');
    const before = up.calls.length;
    t.equal((await rpcError(client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }))).code, -32010, 'numbers only');
    t.equal((await rpcError(client.callTool({ name: 'fail' }))).code, -32010, 'no arguments at all');
    t.equal(up.calls.length, before);
  });

  await t.test('async guardrails run after the answer and are in its log record', async (t) => {
    const watch = await saved(gw, 'watch words', { 'default.contains': { words: ['watched'], operator: 'none' }, async: true, deny: true });
    const key = keyWith(gw, ws, 'async', { input_guardrails: [watch] });
    const { client } = await mcpClient(t, `${gw.url}/alpha/mcp`, key);
    t.equal(resultText(await client.callTool({ name: 'add', arguments: { a: 20, b: 22 } })), '42');
    t.equal(resultText(await client.callTool({ name: 'echo', arguments: { text: 'a watched word' } })), 'a watched word', 'an async guardrail never denies');
    let rec: Rec | undefined;
    for (let i = 0; i < 100 && rec === undefined; i++) {
      rec = ((await adminCall(gw, 'GET', '/v1/logs?route=mcp&mcp_tool=echo&page_size=100')).body.data as Rec[]).find((r) => r.api_key_id === keyId('async'));
      if (rec === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    t.match(rec?.guardrails?.results.before_request_hooks, [{ id: watch, verdict: false, deny: true, async: true }], 'its verdict is in the record');
  });

  await t.test('a saved guardrail deleted since fails the call closed', async (t) => {
    const gone = await saved(gw, 'soon gone', { 'default.contains': { words: ['x'], operator: 'none' } });
    const key = keyWith(gw, ws, 'dangling', { input_guardrails: [gone] });
    t.equal((await adminCall(gw, 'DELETE', `/v1/guardrails/${gone}`)).status, 200);
    const { client } = await mcpClient(t, `${gw.url}/alpha/mcp`, key);
    const before = up.calls.length;
    const failed = await rpcError(client.callTool({ name: 'echo', arguments: { text: 'hi' } }));
    t.equal(failed.code, -32603);
    t.match(failed.message, /Guardrails could not check the tool's arguments: A guardrail attached to this API key/);
    t.equal(up.calls.length, before, 'nothing went upstream');
  });

  await t.test('log records carry the guardrail results', async (t) => {
    let records: Rec[] = [];
    for (let i = 0; i < 100; i++) {
      records = ((await adminCall(gw, 'GET', '/v1/logs?route=mcp&mcp_tool=echo&page_size=100')).body.data as Rec[]) ?? [];
      if (records.length >= 8) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const mine = records.filter((r) => r.api_key_id === keyId('guarded'));
    t.ok(mine.length >= 5, 'the guarded key\'s echo calls are logged');
    const denied = mine.find((r) => r.mcp?.outcome === 'denied' && r.guardrails?.results.after_request_hooks.length === 0);
    const of = (r: Rec | undefined, phase: 'before_request_hooks' | 'after_request_hooks', id: string) => r?.guardrails?.results[phase].find((o) => o.id === id);
    t.match(denied, { route: 'mcp', mcp: { server: 'alpha', tool: 'echo', error_code: -32010 }, guardrails: { verdict: 'denied', passed: 1, failed: 1 } }, 'a denied call is logged with its guardrails, as denied');
    t.match(of(denied, 'before_request_hooks', noForbidden), { verdict: false, deny: true, checks: [{ id: 'default.contains', verdict: false }] }, 'the input result that denied');
    const redacted = mine.find((r) => r.mcp?.outcome === 'ok' && (r.guardrails?.redacted ?? 0) > 0);
    t.match(redacted, { guardrails: { verdict: 'passed', redacted: 1 } }, 'a redacted call');
    t.match(of(redacted, 'before_request_hooks', redactEmail), { verdict: true, redacted: 1 }, 'its input redaction');
    t.match(of(redacted, 'before_request_hooks', noForbidden), { verdict: true });
    t.match(of(redacted, 'after_request_hooks', noClassified), { verdict: true }, 'and its output result');
    const outputDenied = mine.find((r) => r.mcp?.outcome === 'denied' && r.guardrails?.results.after_request_hooks.some((o) => !o.verdict));
    t.match(outputDenied, { mcp: { error_code: -32010 }, guardrails: { results: { after_request_hooks: [{ id: noClassified, verdict: false }] } } }, 'an output denial');
    const plainRecs = records.filter((r) => r.api_key_id === keyId('plain'));
    t.ok(plainRecs.length > 0 && plainRecs.every((r) => r.guardrails === undefined), 'no guardrails field without guardrails');

    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    t.match(metrics, /gateway_guardrail_checks_total\{check="default.contains",phase="input",verdict="fail"\} \d+/, 'counted in Prometheus');
  });
});
