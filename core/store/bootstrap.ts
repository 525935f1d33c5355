/**
 * First-start seeding: the organisation (one per deployment), its default workspace, and an admin
 * key so an operator can reach the admin API at all.
 *
 * - `GATEWAY_ADMIN_KEY` set: a key with that value exists afterwards (created if its hash is not
 *   in the store), as an organisation-owner key with every organisation scope.
 * - not set, and the store has no API key: one is generated, stored hashed, and returned so the
 *   CLI prints it once. It is never shown again. `generate: false` (a pipeline without `auth`,
 *   where no key is checked) skips it; a later start with `auth` generates it then.
 */
import type { Store } from './store.js';
import type { ApiKeyRecord } from './records.js';
import { uuidv7, nowIso } from './ids.js';
import { generateApiKey, hashApiKey } from './api-key-hash.js';
import { newApiKey } from './api-key-record.js';
import { DEFAULT_ORGANISATION_SCOPES } from '../auth/scopes.js';
import type { Logger } from '../logger.js';

export interface BootstrapResult {
  organisationId: string;
  defaultWorkspaceId: string;
  /** The raw admin key, only when this start generated it. */
  generatedAdminKey: string | undefined;
}

/** {@link bootstrapStore}, in a write scope in distributed mode (see the file header). */
export interface BootstrapOptions {
  /** Generate an admin key when the store has none and GATEWAY_ADMIN_KEY is unset (default true). */
  generate?: boolean;
}

export async function bootstrap(store: Store, env: NodeJS.ProcessEnv, log: Logger, options: BootstrapOptions = {}): Promise<BootstrapResult> {
  if (store.replica === undefined) return bootstrapStore(store, env, log, options);
  return store.replica.writeScope(() => bootstrapStore(store, env, log, options));
}

export function bootstrapStore(store: Store, env: NodeJS.ProcessEnv, log: Logger, options: BootstrapOptions = {}): BootstrapResult {
  let generated: string | undefined;
  const result = store.root.transactionSync(() => {
    let orgId = store.meta.get('organisation_id') as string | undefined;
    const now = nowIso();
    if (orgId === undefined) {
      orgId = uuidv7();
      store.c.organisations.insert({ id: orgId, name: 'default', created_at: now, last_updated_at: now });
      store.replica?.noteMeta('organisation_id');
      store.meta.putSync('organisation_id', orgId);
    }
    let wsId = store.meta.get('default_workspace_id') as string | undefined;
    if (wsId === undefined) {
      wsId = uuidv7();
      store.c.workspaces.insert({
        id: wsId,
        slug: 'default',
        name: 'Default',
        description: 'Created on first start.',
        organisation_id: orgId,
        defaults: { metadata: {}, is_default: 1 },
        usage_limits: [],
        rate_limits: [],
        status: 'active',
        created_at: now,
        last_updated_at: now,
      });
      store.replica?.noteMeta('default_workspace_id');
      store.meta.putSync('default_workspace_id', wsId);
    }
    const fromEnv = env.GATEWAY_ADMIN_KEY;
    let raw: string | undefined;
    if (fromEnv !== undefined && fromEnv.length > 0) {
      if (store.c.apiKeys.getBy('hash', hashApiKey(fromEnv)) === undefined) raw = fromEnv;
    } else if (options.generate !== false && store.c.apiKeys.list({ limit: 1 }).total === 0) {
      raw = generated = generateApiKey();
    }
    if (raw !== undefined) store.c.apiKeys.insert(adminKeyRecord(raw, orgId));
    return { organisationId: orgId, defaultWorkspaceId: wsId };
  });
  // In a write scope the key is shipped after this returns; the scope fails the start otherwise.
  if (generated !== undefined) log.warn('created the first admin API key; it is printed once on stdout and never shown again');
  return { ...result, generatedAdminKey: generated };
}

function adminKeyRecord(raw: string, organisationId: string): ApiKeyRecord {
  return newApiKey({
    raw,
    type: 'organisation-service',
    name: 'Bootstrap admin key',
    description: 'Created at first start (owner).',
    organisation_id: organisationId,
    workspace_id: null,
    scopes: [...DEFAULT_ORGANISATION_SCOPES],
    creation_mode: 'auto',
  }).record;
}
