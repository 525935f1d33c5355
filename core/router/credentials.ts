/**
 * The contract between the routing plugins and whoever stores credentials (the `admin-resources`
 * plugin provides it as the `credentials` service). Core owns the interface; a deployment could
 * provide another implementation (an external secret manager) without touching the router.
 */

/** What the router needs to call a provider, secrets in clear. Read-only. */
export interface ResolvedCredentials {
  provider: string;
  apiKey: string | undefined;
  customHost: string | undefined;
  headers: Readonly<Record<string, string>>;
  providerOptions: Readonly<Record<string, unknown>>;
  /** `expired` once `expires_at` has passed; `exhausted` when a usage limit ran out. */
  status: 'active' | 'exhausted' | 'expired';
  expiresAt: string | null;
}

export interface CredentialResolver {
  /** A virtual key by slug, within a workspace. */
  virtualKey(slug: string, workspaceId: string): ResolvedCredentials | undefined;
  /** A provider (workspace instance of an integration) by slug, within a workspace. */
  provider(slug: string, workspaceId: string): ResolvedCredentials | undefined;
  /** A saved routing config by slug or id, within a workspace, secrets unsealed. */
  config(slugOrId: string, workspaceId: string): Record<string, unknown> | undefined;
}

declare module '../plugin.js' {
  interface AppServices {
    credentials: CredentialResolver;
  }
}

/** A router target from resolved credentials. */
export function targetFromCredentials(creds: ResolvedCredentials, label: string): import('./types.js').Target {
  const target: import('./types.js').Target = { provider: creds.provider, label };
  if (creds.apiKey !== undefined) target.apiKey = creds.apiKey;
  if (creds.customHost !== undefined) target.customHost = creds.customHost;
  if (Object.keys(creds.headers).length > 0) target.headers = { ...creds.headers };
  if (Object.keys(creds.providerOptions).length > 0) target.providerOptions = { ...creds.providerOptions };
  return target;
}
