/**
 * The gateway's side of a registered MCP server: where it is, the credentials the gateway holds
 * for it, and an SDK client connected to it over Streamable HTTP (or SSE for older servers).
 *
 *   integration record ── upstreamTarget ──▶ {url, transport, headers (unsealed, never logged)}
 *                       ── connectUpstream ─▶ Client (SDK) over the gateway's guarded dispatcher
 *
 * Every connection passes the SSRF guard twice: the URL against `security.custom_hosts` before
 * connecting, and each socket's addresses at connect time (the dispatcher). Redirects are not
 * followed. Nothing from the MCP client's request reaches the upstream but the JSON-RPC message:
 * not its headers, not the gateway key.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { fetch as undiciFetch, type Dispatcher } from 'undici';
import { checkUpstreamUrl, type CustomHostPolicy, type Records, type Store } from '../../core/index.js';
import { VERSION } from '../../core/version.js';

export interface UpstreamTarget {
  /** The integration's slug, for errors and logs. */
  name: string;
  url: string;
  transport: 'http' | 'sse';
  /** Unsealed credentials (custom headers): sent upstream only, never logged or shown. */
  headers: Record<string, string>;
}

/** Why an upstream could not be reached, said without its credentials. */
export class UpstreamUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UpstreamUnavailable';
  }
}

export function upstreamTarget(store: Store, integration: Records.McpIntegrationRecord): UpstreamTarget {
  if (integration.auth_type === 'oauth_auto' || integration.auth_type === 'oauth_client_credentials') {
    throw new UpstreamUnavailable(`MCP integration "${integration.slug}" uses ${integration.auth_type}, which the gateway does not perform: register it with auth_type "headers" and the token as a custom header.`);
  }
  const headers = integration.auth_type === 'headers' && integration.configurations_sealed !== null
    ? (JSON.parse(store.secrets.decrypt(integration.configurations_sealed)) as Record<string, string>)
    : {};
  return { name: integration.slug, url: integration.url, transport: integration.transport, headers };
}

export interface ConnectOptions {
  dispatcher: Dispatcher;
  policy: CustomHostPolicy;
  /** Bounds the connect and initialize handshake. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** A `fetch` for the SDK transports: the guarded dispatcher, no redirects. */
export function guardedFetch(dispatcher: Dispatcher): FetchLike {
  return ((url: string | URL, init?: RequestInit) =>
    undiciFetch(url, { ...(init as object), dispatcher, redirect: 'manual' } as Parameters<typeof undiciFetch>[1])) as unknown as FetchLike;
}

/** Connects and initializes an SDK client to `target`; rejects with {@link UpstreamUnavailable}. */
export async function connectUpstream(target: UpstreamTarget, options: ConnectOptions): Promise<Client> {
  const refused = checkUpstreamUrl(target.url, options.policy, 'url');
  if (refused !== null) throw new UpstreamUnavailable(`MCP server "${target.name}": ${refused.message}`);
  const fetch = guardedFetch(options.dispatcher);
  const url = new URL(target.url);
  const requestInit: RequestInit = { headers: { ...target.headers } };
  const transport =
    target.transport === 'sse'
      ? new SSEClientTransport(url, { fetch, requestInit, eventSourceInit: { fetch } })
      : // No reconnection: a stream that drops fails its calls at once instead of hanging them.
        new StreamableHTTPClientTransport(url, { fetch, requestInit, reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 } });
  const client = new Client({ name: 'model-gateway', version: VERSION });
  const timer = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal === undefined ? timer : AbortSignal.any([timer, options.signal]);
  try {
    await client.connect(transport, { signal, timeout: options.timeoutMs });
  } catch (err) {
    await client.close().catch(() => undefined);
    throw new UpstreamUnavailable(`MCP server "${target.name}" at ${url.origin} did not answer initialize: ${describe(err)}`, { cause: err });
  }
  return client;
}

/** An error's message without anything that could hold a header value. */
export function describe(err: unknown): string {
  const e = err as { message?: unknown; cause?: { code?: unknown; message?: unknown } };
  const cause = e?.cause && typeof e.cause.code === 'string' ? ` (${e.cause.code})` : '';
  return `${typeof e?.message === 'string' ? e.message.slice(0, 300) : String(err).slice(0, 300)}${cause}`;
}
