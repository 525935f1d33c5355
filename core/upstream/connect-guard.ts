/**
 * The connect-time half of the upstream guard: the undici connector of the upstream agent checks
 * every address a host name resolves to, when the socket is opened, so a public name that
 * resolves to a loopback, private or metadata address (DNS rebinding included: the check runs on
 * the very answer the socket connects to) is refused unless allow-listed.
 *
 *   dispatch ─▶ pool for origin ─▶ new connection? ─▶ connector
 *                                                      ├─ IP literal: classify it (no DNS)
 *                                                      └─ name: lookup ─▶ resolve ─▶ every address passes? ─▶ net/tls connect
 *
 * The static check (`ssrf.ts`) already ran on the URL; this one sees what the name became. It
 * costs nothing per request: only a new connection resolves (keep-alive pools reuse sockets), and
 * the resolver is the one Node would call anyway (`dns.lookup`, the OS resolver and its cache).
 * A refusal fails the connection with code `UPSTREAM_ADDRESS_REFUSED`, which the client sees as
 * the fixed 502 `upstream_unreachable` (no oracle on the operator's DNS) and the log records.
 */
import { isIP, type LookupFunction } from 'node:net';
import { promises as dns } from 'node:dns';
import type { buildConnector as BuildConnector } from 'undici';
import { buildConnector } from './undici.js';
import { addressesRefused, type CustomHostPolicy } from './ssrf.js';

/** Resolves a host name to every address it has (both families). Injectable for tests. */
export type HostResolver = (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;

/** The OS resolver, as `net.connect` would use it (`getaddrinfo`, with the OS cache). */
export const systemResolver: HostResolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

export interface ConnectGuardOptions {
  /** Connect timeout (ms), as undici's `connect.timeout`. */
  timeout: number;
  /** The policy in force; read at each connection, so a reload applies to new connections. */
  policy: () => CustomHostPolicy;
  resolve?: HostResolver;
}

const REFUSED = 'UPSTREAM_ADDRESS_REFUSED';

function refusal(hostname: string, why: string): Error {
  // For the log only: the client gets the fixed upstream_unreachable message.
  return Object.assign(new Error(`upstream guard: ${hostname} resolves to ${why}; refused at connect time`), { code: REFUSED });
}

/**
 * An undici connector (for `new Agent({ connect })`) that refuses addresses the policy does not
 * allow, at connect time.
 *
 * @example
 *   const agent = new Agent({ connect: guardedConnector({ timeout: 10_000, policy: () => config.security.custom_hosts }) });
 */
export function guardedConnector(options: ConnectGuardOptions): BuildConnector.connector {
  const resolve = options.resolve ?? systemResolver;
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (answers) => {
        const refused = addressesRefused(hostname, answers.map((a) => a.address), options.policy());
        if (refused !== null) return callback(refusal(hostname, refused), '', 0);
        const family = lookupOptions.family === 'IPv4' ? 4 : lookupOptions.family === 'IPv6' ? 6 : (lookupOptions.family ?? 0);
        const usable = family === 0 ? answers : answers.filter((a) => a.family === family);
        const first = usable[0];
        if (first === undefined) {
          return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
        }
        // With autoSelectFamily (Node's default) net asks for every address at once.
        if (lookupOptions.all === true) return (callback as (err: null, addresses: ReadonlyArray<{ address: string; family: number }>) => void)(null, usable);
        callback(null, first.address, first.family);
      },
      (err: unknown) => callback(err as NodeJS.ErrnoException, '', 0),
    );
  };
  const connect = buildConnector({ timeout: options.timeout, lookup });
  return (connectOptions, callback) => {
    // An IP literal never reaches `lookup` (net connects to it directly): classify it here.
    const hostname = connectOptions.hostname;
    if (isIP(hostname) !== 0) {
      const refused = addressesRefused(hostname, [hostname], options.policy());
      if (refused !== null) return callback(refusal(hostname, refused), null);
    }
    connect(connectOptions, callback);
  };
}
