/**
 * What the MCP gateway suites share: admin calls, registering an MCP server through the admin
 * API, the official SDK client connected through the gateway, and reading JSON-RPC errors.
 *
 *   await registerMcpServer(gw, 'alpha', upstream.url, workspaceId, { 'x-token': 's3cret' });
 *   const { client } = await mcpClient(t, `${gw.url}/alpha/mcp`, key);
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { ADMIN_KEY, type StartedGateway, type Teardown } from './gateway.js';

export async function adminCall(gw: StartedGateway, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { 'x-gateway-api-key': ADMIN_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** An MCP integration `<slug>-int` at `url` and a server `slug` on it, in `workspace`; `headers` are its credentials. Throws on a refusal. */
export async function registerMcpServer(
  gw: StartedGateway,
  slug: string,
  url: string,
  workspace: string,
  headers?: Record<string, string>,
  transport: 'http' | 'sse' = 'http',
): Promise<void> {
  const integration = await adminCall(gw, 'POST', '/v1/mcp-integrations', {
    name: `${slug} integration`,
    slug: `${slug}-int`,
    url,
    transport,
    auth_type: headers === undefined ? 'none' : 'headers',
    workspace_id: workspace,
    ...(headers === undefined ? {} : { configurations: { custom_headers: headers } }),
  });
  if (integration.status !== 200) throw new Error(`integration ${slug}: ${integration.status} ${JSON.stringify(integration.body)}`);
  const server = await adminCall(gw, 'POST', '/v1/mcp-servers', { name: slug, slug, mcp_integration_id: `${slug}-int`, workspace_id: workspace });
  if (server.status !== 200) throw new Error(`server ${slug}: ${server.status} ${JSON.stringify(server.body)}`);
}

/** The SDK client connected to `url` with `key` as a bearer token (or in `x-gateway-api-key`); closed with the test. */
export async function mcpClient(t: Teardown, url: string, key: string | undefined, header: 'bearer' | 'x-gateway-api-key' = 'bearer'): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const headers: Record<string, string> = key === undefined ? {} : header === 'bearer' ? { authorization: `Bearer ${key}` } : { 'x-gateway-api-key': key };
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(transport);
  t.teardown(() => client.close());
  return { client, transport };
}

/** A raw POST of `message` on an open session (`transport`'s id and protocol version), with `key` as a bearer token; `headers` override. */
export function postOnSession(url: string, key: string, transport: StreamableHTTPClientTransport, message: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'mcp-session-id': transport.sessionId!,
      'mcp-protocol-version': transport.protocolVersion!,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(message),
  });
}

/** The first text content of a tool result. */
export const resultText = (result: unknown): string => (result as { content: Array<{ text?: string }> }).content[0]?.text ?? '';

/** The JSON-RPC error `p` rejects with (anything else fails the test). */
export async function rpcError(p: Promise<unknown>): Promise<McpError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof McpError) return err;
    throw err;
  }
  throw new Error('expected a JSON-RPC error');
}
