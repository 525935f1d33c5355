/**
 * Where a registered MCP server is and the credentials the gateway holds for it, and errors said
 * without them: the part of upstream.ts that needs no MCP SDK, so the plugin's admin routes and
 * its start load none of the SDK (upstream.ts connects, and is loaded on first use).
 */
import type { Records, Store } from '../../core/index.js';

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

/** An error's message without anything that could hold a header value. */
export function describe(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown; cause?: { code?: unknown; message?: unknown } };
  const code = typeof e?.code === 'string' ? e.code : e?.cause && typeof e.cause.code === 'string' ? e.cause.code : undefined;
  const cause = code !== undefined && !(typeof e?.message === 'string' && e.message.includes(code)) ? ` (${code})` : '';
  return `${typeof e?.message === 'string' ? e.message.slice(0, 300) : String(err).slice(0, 300)}${cause}`;
}
