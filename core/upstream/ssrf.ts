/**
 * SSRF guard for caller-supplied upstream base URLs (`x-gateway-custom-host`).
 *
 * A custom host makes the gateway open connections wherever the caller says, from inside the
 * operator's network. This is the static check: it parses the URL with WHATWG `new URL()` (the
 * same parser undici uses to connect, so what is classified is what gets dialled) and classifies
 * the host. WHATWG canonicalises IPv4 in every numeric spelling (`2130706433`, `0x7f000001`,
 * `0177.0.0.1`, `127.1` all become `127.0.0.1`) and IPv6 to its compressed form, so one
 * classifier sees every trick.
 *
 * No DNS here: a public name that resolves to a private address is not caught by this check.
 *
 * Decision order (first match wins):
 *   1. unparsable, not http(s), credentials, `%` or control characters  → refuse
 *   2. link-local or cloud metadata address/name                        → refuse, even if allow-listed
 *   3. host in `allow` (exact, case-insensitive)                         → allow
 *   4. loopback                                                          → allow iff allow_loopback
 *   5. private / reserved range                                          → refuse
 *   6. anything else (public)                                            → allow
 */

import { Errors, type GatewayError } from '../errors.js';

export interface CustomHostPolicy {
  allow: string[];
  allow_loopback: boolean;
}

const DEFAULT_PARAM = 'x-gateway-custom-host';

type HostClass = 'public' | 'loopback' | 'private' | 'forbidden';

/** Metadata endpoints hand out cloud credentials; no configuration may open them. */
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'instance-data']);
const METADATA_IPV4 = new Set(['169.254.169.254', '100.100.100.200']);

/**
 * Returns null when `url` may be used as a custom upstream base URL, else a GatewayError with
 * code `invalid_custom_host` (400, param `x-gateway-custom-host` unless a param is passed).
 * Messages never echo the URL: it may be long or carry credentials.
 *
 * @example
 *   const err = checkCustomHost(req.headers['x-gateway-custom-host'], config.security.custom_hosts);
 *   if (err) return err;
 */
export function checkCustomHost(url: string, policy: CustomHostPolicy, param: string = DEFAULT_PARAM): GatewayError | null {
  const refuse = (why: string): GatewayError => Errors.invalidCustomHost(`${param} ${why}`, { param });

  // Control characters and spaces are silently stripped or rejected differently by different
  // parsers; a URL that needs them is not a base URL anyone meant to configure.
  if (/[\x00-\x20\x7f]/.test(url)) return refuse('must not contain spaces or control characters.');

  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refuse('must be an absolute http or https URL.');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return refuse('must be an http or https URL.');
  }
  // `new URL` percent-decodes the host (`%31%32%37.0.0.1` → 127.0.0.1); refuse the spelling
  // outright. An `@` anywhere in the authority means userinfo, even an empty one.
  const authority = rawAuthority(url);
  if (authority.includes('%')) return refuse('must not contain percent-encoding in the host.');
  if (authority.includes('@') || parsed.username !== '' || parsed.password !== '') {
    return refuse('must not contain credentials.');
  }

  const host = normaliseHost(parsed.hostname);
  if (host === '') return refuse('must name a host.');

  const hostClass = classifyHost(host);
  if (hostClass === 'forbidden') return refuse('points at a link-local or cloud metadata address, which is never allowed.');
  if (allowSet(policy.allow).has(host)) return null;
  if (hostClass === 'loopback') {
    return policy.allow_loopback ? null : refuse('points at a loopback address, which is not allowed.');
  }
  if (hostClass === 'private') {
    return refuse('points at a private or reserved address; add it to security.custom_hosts.allow to use it.');
  }
  return null;
}

/** The text between `scheme://` and the first path, query or fragment delimiter, as written. */
function rawAuthority(url: string): string {
  const start = url.indexOf('//');
  if (start === -1) return '';
  const rest = url.slice(start + 2);
  // WHATWG treats `\` as `/` in http(s) URLs, so it ends the authority too.
  const end = rest.search(/[/\\?#]/);
  return end === -1 ? rest : rest.slice(0, end);
}

/** Lower case, no IPv6 brackets, no trailing root dot (`localhost.` is `localhost`). */
function normaliseHost(hostname: string): string {
  let host = hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  while (host.endsWith('.')) host = host.slice(0, -1);
  return host;
}

/**
 * Allow-list entries canonicalised through the same parser as request URLs (so `0:0:0:0:0:0:0:1`
 * matches `[::1]`). Cached per array: the policy is config, built once, checked per request.
 */
const allowCache = new WeakMap<string[], Set<string>>();

function allowSet(allow: string[]): Set<string> {
  let set = allowCache.get(allow);
  if (set === undefined) {
    set = new Set(allow.map(canonicalAllowEntry));
    allowCache.set(allow, set);
  }
  return set;
}

function canonicalAllowEntry(entry: string): string {
  const bare = normaliseHost(entry.trim());
  try {
    return normaliseHost(new URL(`http://${bare.includes(':') ? `[${bare}]` : bare}/`).hostname);
  } catch {
    return bare;
  }
}

function classifyHost(host: string): HostClass {
  if (host.includes(':')) return classifyIPv6(host);
  const v4 = parseIPv4(host);
  if (v4 !== null) return classifyIPv4(v4);
  if (METADATA_NAMES.has(host)) return 'forbidden';
  // RFC 6761: `localhost` and every name under it resolve to loopback.
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback';
  return 'public';
}

/** Dotted quad as WHATWG emits it, else null (the host is a name). */
function parseIPv4(host: string): number[] | null {
  const parts = host.split('.');
  if (parts.length !== 4) return null;
  const octets: number[] = [];
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null;
    const value = Number(part);
    if (value > 255) return null;
    octets.push(value);
  }
  return octets;
}

function classifyIPv4(octets: number[]): HostClass {
  const [a = 0, b = 0] = octets;
  if (METADATA_IPV4.has(octets.join('.'))) return 'forbidden';
  if (a === 169 && b === 254) return 'forbidden'; // 169.254/16 link-local: metadata lives here
  if (a === 127) return 'loopback'; // 127/8
  if (a === 0) return 'private'; // 0/8: "this network"; 0.0.0.0 dials the local host on Linux
  if (a === 10) return 'private'; // 10/8
  if (a === 172 && b >= 16 && b <= 31) return 'private'; // 172.16/12
  if (a === 192 && b === 168) return 'private'; // 192.168/16
  if (a === 100 && b >= 64 && b <= 127) return 'private'; // 100.64/10 carrier-grade NAT
  if (a >= 224) return 'private'; // multicast 224/4, reserved 240/4, broadcast: never an upstream
  return 'public';
}

function classifyIPv6(host: string): HostClass {
  const words = parseIPv6(host);
  if (words === null) return 'forbidden'; // WHATWG accepted it, we cannot read it: fail closed
  const [w0 = 0, w1 = 0, w2 = 0, w3 = 0, w4 = 0, w5 = 0, w6 = 0, w7 = 0] = words;
  const embeddedV4 = [w6 >> 8, w6 & 0xff, w7 >> 8, w7 & 0xff];

  if (w0 === 0xfd00 && w1 === 0x0ec2 && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0 && w6 === 0 && w7 === 0x254) {
    return 'forbidden'; // AWS IMDS over IPv6, fd00:ec2::254
  }
  if ((w0 & 0xffc0) === 0xfe80) return 'forbidden'; // fe80::/10 link-local

  const firstFiveZero = w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0 && w4 === 0;
  if (firstFiveZero && w5 === 0) {
    if (w6 === 0 && w7 === 0) return 'private'; // :: unspecified, like 0.0.0.0
    if (w6 === 0 && w7 === 1) return 'loopback'; // ::1
    return classifyIPv4(embeddedV4); // ::a.b.c.d, IPv4-compatible (deprecated)
  }
  if (firstFiveZero && w5 === 0xffff) return classifyIPv4(embeddedV4); // ::ffff:a.b.c.d, IPv4-mapped
  // 64:ff9b::/96 NAT64: a NAT64 gateway forwards to the embedded IPv4 address.
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0) return classifyIPv4(embeddedV4);
  if ((w0 & 0xfe00) === 0xfc00) return 'private'; // fc00::/7 unique local
  if ((w0 & 0xff00) === 0xff00) return 'private'; // ff00::/8 multicast
  return 'public';
}

/** Eight 16-bit words from a WHATWG-serialised IPv6 address (hex words, at most one `::`). */
function parseIPv6(host: string): number[] | null {
  const halves = host.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] === '' ? [] : (halves[0] as string).split(':');
  const tail = halves.length === 2 && halves[1] !== '' ? (halves[1] as string).split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const words: number[] = [];
  for (const part of [...head, ...new Array<string>(missing).fill('0'), ...tail]) {
    if (!/^[0-9a-f]{1,4}$/.test(part)) return null;
    words.push(parseInt(part, 16));
  }
  return words;
}
