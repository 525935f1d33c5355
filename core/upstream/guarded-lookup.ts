/**
 * The connect-time upstream guard for connections that do not go through the undici agent (a
 * WebSocket to an upstream, made with `ws` over `http.request`): a `lookup` for `net.connect` that
 * refuses a host name whose addresses the policy does not allow, on the very answer the socket
 * connects to (DNS rebinding included). The same rule as the agent's connector
 * (connect-guard.ts, `addressesRefused`); IP literals never reach a lookup, so the caller checks
 * those on the URL (`checkUpstreamUrl`).
 */
import type { LookupFunction } from 'node:net';
import { addressesRefused, type CustomHostPolicy } from './ssrf.js';
import { systemResolver, type HostResolver } from './connect-guard.js';

/**
 * A `lookup` option for `net`/`http`/`ws` connections that applies `policy` to every address.
 *
 * @example
 *   new WebSocket(url, { lookup: guardedLookup(() => app.config.security.custom_hosts) });
 */
export function guardedLookup(policy: () => CustomHostPolicy, resolve: HostResolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (answers) => {
        const refused = addressesRefused(hostname, answers.map((a) => a.address), policy());
        if (refused !== null) {
          const err = Object.assign(new Error(`upstream guard: ${hostname} resolves to ${refused}; refused at connect time`), { code: 'UPSTREAM_ADDRESS_REFUSED' });
          return callback(err, '', 0);
        }
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
        const usable = family === 0 ? answers : answers.filter((a) => a.family === family);
        const first = usable[0];
        if (first === undefined) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
        if (options.all === true) return (callback as (err: null, addresses: ReadonlyArray<{ address: string; family: number }>) => void)(null, usable);
        callback(null, first.address, first.family);
      },
      (err: unknown) => callback(err as NodeJS.ErrnoException, '', 0),
    );
  };
}
