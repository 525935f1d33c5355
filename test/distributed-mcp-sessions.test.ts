/**
 * MCP sessions across hosts: two real `gateway start` processes on one PostgreSQL and one Valkey,
 * the SDK's client on each side, a real MCP server upstream. A session opened on one host goes
 * on at the other (no load-balancer affinity needed) and after the first one stops, only for the
 * key that opened it, and a DELETE on either ends it on both.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import { admin, until } from './helpers/distributed-logs.js';
import { distributedBackends, startHosts, type Host } from './helpers/hosts.js';
import { mcpClient, resultText } from './helpers/mcp-client.js';
import { startMcpUpstream } from './helpers/mcp-upstream.js';
import { needServices } from './helpers/services.js';

// Gateway processes on real PostgreSQL and Valkey with MCP sessions: about 45 s in CI, near tap's 60 s default.
t.setTimeout(180_000);

const YAML = `security: {custom_hosts: {allow: ["127.0.0.1"]}}
pipeline: [logging, auth, mcp-gateway, admin-org, admin-api-keys, admin-catalog]
`;

/** A raw tools/call with a session id: the HTTP status a host answers with. */
async function rawCall(host: Host, key: string, sessionId: string, id = 7): Promise<number> {
  const res = await fetch(`${host.url}/alpha/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: 'raw' } } }),
  });
  await res.text();
  return res.status;
}

t.test('an MCP session opened on one host goes on at another; a DELETE on either ends it on both', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const upstream = await startMcpUpstream(t, { name: 'alpha-upstream' });
  const [a, b] = (await startHosts(t, 2, { backends, yaml: YAML })) as [Host, Host];

  t.equal((await admin(a, 'POST', '/v1/mcp-integrations', { name: 'alpha', slug: 'alpha-int', url: upstream.url, transport: 'http', auth_type: 'none', workspace_id: 'default' })).status, 200);
  t.equal((await admin(a, 'POST', '/v1/mcp-servers', { name: 'alpha', slug: 'alpha', mcp_integration_id: 'alpha-int', workspace_id: 'default' })).status, 200);
  const created = await admin(a, 'POST', '/v1/api-keys/workspace/service', { name: 'agent', scopes: ['mcp.invoke'], workspace_id: 'default' });
  const other = await admin(a, 'POST', '/v1/api-keys/workspace/service', { name: 'another agent', scopes: ['mcp.invoke'], workspace_id: 'default' });
  const key = created.body.key as string;
  // Host b learns of the server through the replicated control plane.
  await until(() => admin(b, 'GET', '/v1/mcp-servers/alpha'), (r) => r.status === 200);

  const { client: onA, transport: transportA } = await mcpClient(t, `${a.url}/alpha/mcp`, key);
  t.equal(resultText(await onA.callTool({ name: 'echo', arguments: { text: 'on a' } })), 'on a');
  const sessionId = transportA.sessionId!;
  t.ok(sessionId, 'host a opened a session');

  // The same session, sent to host b: resumed there, no new initialize from the client.
  const transportB = new StreamableHTTPClientTransport(new URL(`${b.url}/alpha/mcp`), { sessionId, requestInit: { headers: { authorization: `Bearer ${key}` } } });
  const onB = new Client({ name: 'test-client', version: '1.0.0' });
  await onB.connect(transportB);
  t.teardown(() => onB.close());
  t.equal(resultText(await onB.callTool({ name: 'echo', arguments: { text: 'on b' } })), 'on b', 'host b answers for the session host a opened');
  t.equal(transportB.sessionId, sessionId, 'under the same id');
  t.same((await onB.listTools()).tools.map((x) => x.name).sort(), ['add', 'crash', 'echo', 'fail', 'progress', 'slow']);
  t.equal(resultText(await onA.callTool({ name: 'echo', arguments: { text: 'a again' } })), 'a again', 'and host a still does');

  t.equal(await rawCall(b, other.body.key as string, sessionId), 404, 'another key presenting the id finds no session on either host');

  // Concurrent first requests for another session on host b: all answered, over one upstream session.
  const { transport: second } = await mcpClient(t, `${a.url}/alpha/mcp`, key);
  // An upstream session starts with the one POST that carries no session id (initialize).
  const initializes = (): number => upstream.requests.filter((r) => r.method === 'POST' && r.headers['mcp-session-id'] === undefined).length;
  const before = initializes();
  t.same(await Promise.all([1, 2, 3, 4].map((id) => rawCall(b, key, second.sessionId!, id))), [200, 200, 200, 200], 'four calls at once, all answered');
  t.equal(initializes() - before, 1, 'by one resumed session, with one upstream session');

  // A DELETE through host b ends the session on host a too.
  await transportB.terminateSession();
  t.equal(await rawCall(b, key, sessionId), 404, 'ended on the host that took the DELETE');
  const onHostA = await until(() => rawCall(a, key, sessionId), (status) => status === 404, 10_000);
  t.equal(onHostA, 404, 'and on the host that opened it');

  // A host that stops (drains, SIGTERM) closes its copies only: its sessions go on elsewhere.
  const { transport: third } = await mcpClient(t, `${a.url}/alpha/mcp`, key);
  await a.stop();
  t.equal(await rawCall(b, key, third.sessionId!, 11), 200, 'a session of a host that stopped goes on at another');
});
