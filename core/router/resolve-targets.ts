/**
 * Virtual key and provider slugs → router targets, used by the `virtual-keys` plugin (the
 * `x-gateway-virtual-key` header) and `config-strategy` (`virtual_key` in config targets, and
 * `@slug/model`). Status is checked on every use: an expiry takes effect at once.
 */
import { defineError } from '../errors.js';
import type { GatewayApp } from '../plugin.js';
import type { GatewayContext } from '../context.js';
import type { Target } from './types.js';
import { targetFromCredentials, type CredentialResolver } from './credentials.js';

/** Virtual key errors: the key is the caller's to fix (unknown, expired), or its budget ran out. */
export const VirtualKeyErrors = {
  unknown: defineError(400, 'invalid_request_error', 'invalid_virtual_key', 'The virtual key does not exist in this workspace.'),
  expired: defineError(403, 'permission_error', 'virtual_key_expired', 'The virtual key has expired.'),
  exhausted: defineError(429, 'rate_limit_error', 'usage_limit_exceeded', 'The virtual key has used up its budget.'),
  noResolver: defineError(500, 'server_error', 'credentials_unavailable', 'Virtual keys need the admin-resources plugin in the pipeline.'),
};

/** The workspace a request acts in: its key's, or the default one (org keys, or no auth plugin). */
export function actingWorkspace(app: GatewayApp, ctx: GatewayContext): string {
  return ctx.get('principal')?.acting_workspace_id ?? ((app.store.meta.get('default_workspace_id') as string | undefined) ?? '');
}

/** The `credentials` service, looked up at first use: its provider may sit later in the pipeline. */
export function lazyCredentials(app: GatewayApp): () => CredentialResolver {
  let resolver: CredentialResolver | undefined;
  return () => {
    if (resolver === undefined) {
      try {
        resolver = app.service('credentials');
      } catch (err) {
        throw VirtualKeyErrors.noResolver(undefined, { cause: err });
      }
    }
    return resolver;
  };
}

/** A virtual key's target, or the 4xx that says why not. */
export function virtualKeyTarget(credentials: CredentialResolver, slug: string, workspaceId: string, param: string): Target {
  const creds = credentials.virtualKey(slug, workspaceId);
  if (creds === undefined) throw VirtualKeyErrors.unknown(`The virtual key named by ${param} does not exist in this workspace.`, { param });
  if (creds.status === 'expired') throw VirtualKeyErrors.expired(undefined, { param });
  if (creds.status === 'exhausted') throw VirtualKeyErrors.exhausted(undefined, { param });
  return targetFromCredentials(creds, `virtual-key:${slug}`);
}

/** `@slug/model`: a stored provider, else a virtual key, with that slug. */
export function slugTarget(credentials: CredentialResolver, slug: string, workspaceId: string): Target | undefined {
  const creds = credentials.provider(slug, workspaceId);
  if (creds !== undefined) {
    if (creds.status === 'expired') throw VirtualKeyErrors.expired('The provider named by model has expired.', { param: 'model' });
    if (creds.status === 'exhausted') throw VirtualKeyErrors.exhausted('The provider named by model has used up its budget.', { param: 'model' });
    return targetFromCredentials(creds, `provider:${slug}`);
  }
  return credentials.virtualKey(slug, workspaceId) === undefined ? undefined : virtualKeyTarget(credentials, slug, workspaceId, 'model');
}
