/**
 * The upstream guard over a whole routing config, for saved configs at save time: every
 * `custom_host` passes the SSRF guard and every provider field its grammar, so a config that
 * could reach a refused address is a 400 to the admin, not a failure on every call later.
 * (Inline configs get the same checks per request, in the routing plugin's plan builder.)
 */
import type { GatewayError } from '../errors.js';
import { checkCustomHost, type CustomHostPolicy } from '../upstream/ssrf.js';
import { checkProviderFields } from '../providers/fields.js';

/**
 * Null when every target of `config` may be called under `policy`, else the first 400, named by
 * its path under `prefix` (`config.targets[1].custom_host`). Run after `validateRoutingConfig`,
 * which bounds the depth.
 *
 * @example
 *   const err = validateRoutingConfig(body.config) ?? checkConfigUpstreams(body.config, policy);
 */
export function checkConfigUpstreams(config: unknown, policy: CustomHostPolicy, prefix = 'config'): GatewayError | null {
  const stack: Array<{ node: unknown; path: string }> = [{ node: config, path: prefix }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (typeof node !== 'object' || node === null || Array.isArray(node)) continue;
    const n = node as Record<string, unknown>;
    if (typeof n.custom_host === 'string') {
      const refused = checkCustomHost(n.custom_host, policy, `${path}.custom_host`);
      if (refused !== null) return refused;
    }
    const bad = checkProviderFields(n, (field) => `${path}.${field}`);
    if (bad !== null) return bad;
    if (Array.isArray(n.targets)) {
      for (let i = n.targets.length - 1; i >= 0; i--) stack.push({ node: n.targets[i], path: `${path}.targets[${i}]` });
    }
  }
  return null;
}
