/**
 * The upstream URL guard: may the gateway open a connection to this URL?
 *
 * A custom host, a provider field or a stored URL makes the gateway dial wherever its author
 * says, from inside the operator's network. This is the static check, run on a URL as text (or a
 * parsed `URL`): it parses with WHATWG `new URL()` (the parser undici dials with, so what is
 * classified is what gets dialled) and classifies the host. WHATWG canonicalises IPv4 in every
 * numeric spelling (`2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1` all become `127.0.0.1`) and
 * IPv6 to its compressed form, so one classifier sees every trick.
 *
 * No DNS here: a public name that resolves to a private address is caught at connect time by
 * `connect-guard.ts`, which applies {@link addressesRefused} to every address a name resolves to.
 *
 * Decision order (first match wins):
 *   1. unparsable, not http(s), credentials, `%` or control characters  → refuse
 *   2. link-local or cloud metadata address/name                        → refuse, even if allow-listed
 *   3. host in `allow` (exact, case-insensitive)                         → allow
 *   4. loopback                                                          → allow iff allow_loopback
 *   5. private / special-use range (RFC 6890 registries)                 → refuse (allow iff allow_private)
 *   6. anything else (public)                                            → allow
 */

import { Errors, type GatewayError, type GatewayErrorOptions } from '../errors.js';

export interface CustomHostPolicy {
  allow: string[];
  allow_loopback: boolean;
  /**
   * Private and special-use ranges allowed without listing them. Never set from a caller's policy
   * (`security.custom_hosts` has no such key): only for URLs the operator writes in the YAML.
   */
  allow_private?: boolean;
}

/**
 * For URLs only the operator writes (the YAML: an OTel collector, a cache embedder): their own
 * network is theirs to use, but metadata and link-local addresses stay refused.
 */
export const OPERATOR_URL_POLICY: CustomHostPolicy = Object.freeze({ allow: [], allow_loopback: true, allow_private: true }) as CustomHostPolicy;

const DEFAULT_PARAM = 'x-gateway-custom-host';

export type HostClass = 'public' | 'loopback' | 'private' | 'forbidden';

type Factory = (message?: string, options?: GatewayErrorOptions) => GatewayError;

/** Metadata endpoints hand out cloud credentials; no configuration may open them. */
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'instance-data', 'metadata.azure.com']);
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
  return checkUrl(url, policy, param, Errors.invalidCustomHost);
}

/**
 * The guard for any other URL the gateway will call that came from a caller, a stored record or
 * the YAML (MCP servers, webhooks, OTel endpoints, the final URL an adapter built): null when it
 * may be used, else a 400 `invalid_upstream_url` naming `param`. Pass the YAML's
 * `security.custom_hosts` for caller and admin input, {@link OPERATOR_URL_POLICY} for the YAML's.
 * Connections still pass the connect-time check when they are dialled through the upstream agent.
 *
 * @example
 *   const refused = checkUpstreamUrl(body.url, app.config.security.custom_hosts, 'url');
 *   if (refused) throw refused;
 */
export function checkUpstreamUrl(url: string | URL, policy: CustomHostPolicy, param: string): GatewayError | null {
  return checkUrl(url, policy, param, Errors.invalidUpstreamUrl);
}

function checkUrl(url: string | URL, policy: CustomHostPolicy, param: string, make: Factory): GatewayError | null {
  const refuse = (why: string): GatewayError => make(`${param} ${why}`, { param });

  let parsed: URL;
  if (typeof url === 'string') {
    // Control characters and spaces are silently stripped or rejected differently by different
    // parsers; a URL that needs them is not a base URL anyone meant to configure.
    if (/[\x00-\x20\x7f]/.test(url)) return refuse('must not contain spaces or control characters.');
    try {
      parsed = new URL(url);
    } catch {
      return refuse('must be an absolute http or https URL.');
    }
    // `new URL` percent-decodes the host (`%31%32%37.0.0.1` → 127.0.0.1); refuse the spelling
    // outright. An `@` anywhere in the authority means userinfo, even an empty one.
    const authority = rawAuthority(url);
    if (authority.includes('%')) return refuse('must not contain percent-encoding in the host.');
    if (authority.includes('@')) return refuse('must not contain credentials.');
  } else {
    parsed = url;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return refuse('must be an http or https URL.');
  if (parsed.username !== '' || parsed.password !== '') return refuse('must not contain credentials.');

  const host = normaliseHost(parsed.hostname);
  if (host === '') return refuse('must name a host.');
  const why = hostRefusal(host, policy);
  return why === null ? null : refuse(why);
}

/**
 * Why `host` (normalised: lower case, no brackets) may not be dialled under `policy`, or null.
 * The reason is a sentence tail for an error message; it never repeats the host.
 */
function hostRefusal(host: string, policy: CustomHostPolicy): string | null {
  const hostClass = classifyHost(host);
  if (hostClass === 'forbidden') return 'points at a link-local or cloud metadata address, which is never allowed.';
  if (hostClass === 'public' || allowSet(policy.allow).has(host)) return null;
  if (hostClass === 'loopback') return policy.allow_loopback ? null : 'points at a loopback address, which is not allowed.';
  if (policy.allow_private === true) return null;
  return 'points at a private or reserved address; add it to security.custom_hosts.allow to use it.';
}

/**
 * Verdicts for the final URL of every upstream attempt, by host, per policy (a reload brings a
 * new policy object, so a new cache). Credentials are checked on each URL, outside the cache.
 * Bounded: a flood of distinct hosts only resets the cache.
 */
const builtVerdicts = new WeakMap<object, Map<string, GatewayError | null>>();
const MAX_VERDICTS = 1024;

/**
 * The guard on a URL the gateway built (custom host or provider fields joined with a path),
 * after it is built: null, or 400 `invalid_upstream_url`. Cheap enough for every attempt: a map
 * lookup by host once the host was seen.
 */
export function checkBuiltUrl(url: URL, policy: CustomHostPolicy): GatewayError | null {
  if (url.username !== '' || url.password !== '' || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    return Errors.invalidUpstreamUrl('The upstream URL built from the target (custom host or provider fields) is not allowed: it must be http(s) without credentials.');
  }
  let cache = builtVerdicts.get(policy);
  if (cache === undefined) builtVerdicts.set(policy, (cache = new Map()));
  const hostname = url.hostname;
  let verdict = cache.get(hostname);
  if (verdict === undefined) {
    const host = normaliseHost(hostname);
    const why = host === '' ? 'must name a host.' : hostRefusal(host, policy);
    verdict = why === null ? null : Errors.invalidUpstreamUrl(`The upstream URL built from the target (custom host or provider fields) ${why}`);
    if (cache.size >= MAX_VERDICTS) cache.clear();
    cache.set(hostname, verdict);
  }
  return verdict;
}

/**
 * The connect-time rule: why the connection to `name`, which resolved to `addresses`, is refused,
 * or null. Every address must pass, so a resolver that mixes a public and a private answer (a
 * rebinding attempt) is refused. An address passes when it is public, when the name or the
 * address is allow-listed, or when it is loopback and loopback is allowed; link-local and metadata
 * addresses never pass.
 */
export function addressesRefused(name: string, addresses: ReadonlyArray<string>, policy: CustomHostPolicy): string | null {
  const allow = allowSet(policy.allow);
  const nameAllowed = allow.has(normaliseHost(name));
  for (const address of addresses) {
    const hostClass = classifyAddress(address);
    if (hostClass === 'public') continue;
    if (hostClass === 'forbidden') return 'a link-local or cloud metadata address';
    if (nameAllowed || allow.has(canonicalAllowEntry(address))) continue;
    if (hostClass === 'loopback') {
      if (policy.allow_loopback) continue;
      return 'a loopback address';
    }
    if (policy.allow_private === true) continue;
    return 'a private or reserved address';
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

/** A host as WHATWG serialises it (lower case, no brackets): an IP literal or a name. */
export function classifyHost(host: string): HostClass {
  if (host.includes(':')) return classifyIPv6(host);
  const v4 = parseIPv4(host);
  if (v4 !== null) return classifyIPv4(v4);
  if (METADATA_NAMES.has(host)) return 'forbidden';
  // RFC 6761: `localhost` and every name under it resolve to loopback.
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback';
  return 'public';
}

/**
 * An address as a resolver returns it (`10.0.0.1`, `::ffff:127.0.0.1`, `fe80::1%eth0`). Anything
 * that is not a readable IP address is refused (`forbidden`): fail closed.
 */
export function classifyAddress(address: string): HostClass {
  const bare = address.toLowerCase().replace(/%.*$/, '');
  if (bare.includes(':')) return classifyIPv6(bare);
  const v4 = parseIPv4(bare);
  return v4 === null ? 'forbidden' : classifyIPv4(v4);
}

/** Dotted quad as WHATWG and resolvers emit it, else null (the host is a name). */
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

/**
 * IPv4 special-use ranges (IANA IPv4 Special-Purpose Address Registry, RFC 6890 and successors).
 * Every range not marked globally reachable there is refused; the few globally reachable
 * anycast entries (AS112, AMT) are ordinary public addresses.
 */
function classifyIPv4(octets: number[]): HostClass {
  const [a = 0, b = 0, c = 0] = octets;
  if (METADATA_IPV4.has(octets.join('.'))) return 'forbidden';
  if (a === 169 && b === 254) return 'forbidden'; // 169.254/16 link-local: metadata lives here
  if (a === 127) return 'loopback'; // 127/8
  if (a === 0) return 'private'; // 0/8 "this network"; 0.0.0.0 dials the local host on Linux
  if (a === 10) return 'private'; // 10/8
  if (a === 100 && b >= 64 && b <= 127) return 'private'; // 100.64/10 carrier-grade NAT
  if (a === 172 && b >= 16 && b <= 31) return 'private'; // 172.16/12
  if (a === 192 && b === 0 && c === 0) return 'private'; // 192.0.0/24 IETF protocol assignments
  if (a === 192 && b === 0 && c === 2) return 'private'; // 192.0.2/24 TEST-NET-1
  if (a === 192 && b === 88 && c === 99) return 'private'; // 192.88.99/24 6to4 relay anycast (deprecated)
  if (a === 192 && b === 168) return 'private'; // 192.168/16
  if (a === 198 && (b === 18 || b === 19)) return 'private'; // 198.18/15 benchmarking
  if (a === 198 && b === 51 && c === 100) return 'private'; // 198.51.100/24 TEST-NET-2
  if (a === 203 && b === 0 && c === 113) return 'private'; // 203.0.113/24 TEST-NET-3
  if (a >= 224) return 'private'; // 224/4 multicast, 240/4 reserved, 255.255.255.255 broadcast
  return 'public';
}

/**
 * IPv6 special-use ranges (IANA IPv6 Special-Purpose Address Registry). Forms that carry an IPv4
 * address (mapped, compatible, translated, NAT64, 6to4) are judged by the address they carry.
 * Outside 2000::/3 (global unicast) nothing is an upstream: refused.
 */
function classifyIPv6(host: string): HostClass {
  const words = parseIPv6(host);
  if (words === null) return 'forbidden'; // WHATWG accepted it, we cannot read it: fail closed
  const [w0 = 0, w1 = 0, w2 = 0, w3 = 0, w4 = 0, w5 = 0, w6 = 0, w7 = 0] = words;
  const embeddedV4 = [w6 >> 8, w6 & 0xff, w7 >> 8, w7 & 0xff];

  if (w0 === 0xfd00 && w1 === 0x0ec2 && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0 && w6 === 0 && w7 === 0x254) {
    return 'forbidden'; // AWS IMDS over IPv6, fd00:ec2::254
  }
  if ((w0 & 0xffc0) === 0xfe80) return 'forbidden'; // fe80::/10 link-local

  const firstFourZero = w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0;
  if (firstFourZero && w4 === 0 && w5 === 0) {
    if (w6 === 0 && w7 === 0) return 'private'; // :: unspecified, like 0.0.0.0
    if (w6 === 0 && w7 === 1) return 'loopback'; // ::1
    return classifyIPv4(embeddedV4); // ::a.b.c.d, IPv4-compatible (deprecated), e.g. ::127.0.0.1
  }
  if (firstFourZero && w4 === 0 && w5 === 0xffff) return classifyIPv4(embeddedV4); // ::ffff:0:0/96 IPv4-mapped
  if (firstFourZero && w4 === 0xffff && w5 === 0) return classifyIPv4(embeddedV4); // ::ffff:0:a.b.c.d IPv4-translated (SIIT)
  // 64:ff9b::/96 NAT64: a NAT64 gateway forwards to the embedded IPv4 address.
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0) return classifyIPv4(embeddedV4);
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 1) return 'private'; // 64:ff9b:1::/48 local-use NAT64
  if (w0 === 0x100 && w1 === 0 && w2 === 0 && w3 === 0) return 'private'; // 100::/64 discard-only
  // 2002::/16 6to4: the IPv4 address of the relay sits in words 1-2.
  if (w0 === 0x2002) return classifyIPv4([w1 >> 8, w1 & 0xff, w2 >> 8, w2 & 0xff]);
  if (w0 === 0x2001 && w1 < 0x200) return 'private'; // 2001::/23 IETF protocol assignments (Teredo, ORCHID, …)
  if (w0 === 0x2001 && w1 === 0x0db8) return 'private'; // 2001:db8::/32 documentation
  if (w0 === 0x3fff && w1 < 0x1000) return 'private'; // 3fff::/20 documentation (RFC 9637)
  if (w0 === 0x5f00) return 'private'; // 5f00::/16 SRv6 SIDs (RFC 9602)
  if ((w0 & 0xfe00) === 0xfc00) return 'private'; // fc00::/7 unique local
  if ((w0 & 0xffc0) === 0xfec0) return 'private'; // fec0::/10 site-local (deprecated)
  if ((w0 & 0xff00) === 0xff00) return 'private'; // ff00::/8 multicast
  if ((w0 & 0xe000) !== 0x2000) return 'private'; // outside 2000::/3: not global unicast
  return 'public';
}

/**
 * Eight 16-bit words from an IPv6 address: hex words, at most one `::`, optionally a dotted IPv4
 * tail (`::ffff:127.0.0.1`, as resolvers write it).
 */
function parseIPv6(host: string): number[] | null {
  let text = host;
  let tail4: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.indexOf('.', lastColon) !== -1) {
    const v4 = parseIPv4(text.slice(lastColon + 1));
    if (v4 === null) return null;
    tail4 = [(v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!];
    text = text.slice(0, lastColon + 1);
    if (!text.endsWith('::')) text = text.slice(0, -1); // `…:6:` → `…:6`; a `::` stays a compression
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] === '' ? [] : (halves[0] as string).split(':');
  const tail = halves.length === 2 && halves[1] !== '' ? (halves[1] as string).split(':') : [];
  const words = 8 - tail4.length;
  const missing = words - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const out: number[] = [];
  for (const part of [...head, ...new Array<string>(missing).fill('0'), ...tail]) {
    if (!/^[0-9a-f]{1,4}$/.test(part)) return null;
    out.push(parseInt(part, 16));
  }
  return [...out, ...tail4];
}
