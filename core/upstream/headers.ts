/**
 * Which headers cross the gateway, in each direction.
 *
 * Upstream: the client's headers minus hop-by-hop ones (RFC 9110 §7.6.1; undici also rejects
 * `keep-alive`, `transfer-encoding`, `upgrade` and `expect`), HTTP/2 pseudo-headers, `host` and
 * `content-length` (recomputed), every `x-gateway-*` header, and the client's credentials (the
 * target's own auth replaces them). On model routes `accept-encoding` is dropped too, so the
 * gateway can read usage from the answer. A forward list can bring back a dropped credential
 * header, never `host`, `content-length`, a hop-by-hop or an `x-gateway-*` header.
 *
 * Downstream: the upstream's headers minus hop-by-hop ones, which HTTP/2 forbids anyway.
 */
import type { IncomingHttpHeaders } from 'node:http';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'http2-settings',
]);

/** Never forwarded upstream as-is: recomputed, or replaced by the target's credentials. */
const REQUEST_DROP = new Set(['host', 'content-length', 'authorization', 'x-api-key', 'api-key', 'x-goog-api-key']);

/**
 * Never sent upstream from the client, whatever
 * `x-gateway-forward-headers` or `forward_headers` lists: `host` names the upstream (undici sets
 * it from the URL it dials; a client's Host would reach another virtual host behind the same
 * address), `content-length` is the body's as sent, hop-by-hop headers belong to one connection.
 * `x-gateway-*` headers and pseudo-headers are refused by prefix.
 */
function neverForwarded(name: string): boolean {
  return name === 'host' || name === 'content-length' || HOP_BY_HOP.has(name) || name.startsWith('x-gateway-') || name.startsWith(':');
}

export interface UpstreamHeaderOptions {
  /** Drop `accept-encoding` so the answer comes uncompressed (model routes). */
  identity: boolean;
  /** Auth and fixed headers from the adapter; they win over client headers. */
  auth: Record<string, string>;
  /** Target `custom_headers`. */
  extra?: Record<string, string>;
  /** Client header names copied verbatim even if they would be dropped (never host, content-length, hop-by-hop or x-gateway-*). */
  forward?: ReadonlyArray<string>;
}

export function upstreamRequestHeaders(client: IncomingHttpHeaders, options: UpstreamHeaderOptions): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in client) {
    const value = client[name];
    if (value === undefined) continue;
    const c = name.charCodeAt(0);
    if (c === 58 /* ':' pseudo-header */) continue;
    if (c === 120 /* 'x' */ && name.startsWith('x-gateway-')) continue;
    if (HOP_BY_HOP.has(name) || REQUEST_DROP.has(name)) continue;
    if (options.identity && name === 'accept-encoding') continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  if (options.forward) {
    for (const raw of options.forward) {
      const name = raw.trim().toLowerCase();
      const value = client[name];
      if (value === undefined || neverForwarded(name)) continue;
      out[name] = Array.isArray(value) ? value.join(', ') : value;
    }
  }
  if (options.extra) {
    for (const name in options.extra) {
      const lower = name.toLowerCase();
      // The operator's own headers may name x-gateway-* (a gateway in front of another); never
      // host, content-length or hop-by-hop ones.
      if (lower !== 'host' && lower !== 'content-length' && !HOP_BY_HOP.has(lower)) out[lower] = options.extra[name]!;
    }
  }
  for (const name in options.auth) out[name] = options.auth[name]!;
  return out;
}

/** Upstream response headers safe to send to the client (either protocol). */
export function downstreamHeaders(upstream: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in upstream) {
    const value = upstream[name];
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/** Reads a header as one string (first value of a list). */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}
