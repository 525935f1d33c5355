/**
 * Providers: a workspace's instance of an integration, with its own name, slug, limits and
 * expiry. Its slug is what requests name (`model: "@<slug>/<model>"`); the credentials stay on the
 * integration. Create, list, get, update, delete.
 *
 * For the routing plugin: {@link resolveProvider}`(store, slug, workspaceId)` gives the
 * integration's credentials, unsealed, in the same shape as `resolveVirtualKey`.
 */
import { AdminErrors, assertVisible, crudRoutes, listPage, nowIso, slugify, uuidv7, S, type AnyAdminRoute, type Records, type Store } from '../../core/index.js';
import { deepFreeze, effectiveStatus, unsealJson, type ResolvedCredentials } from './provider-fields.js';
import { findIntegration } from './integrations.js';
import { assertFuture, normaliseRateLimits, rateLimitsInput } from './limits.js';
import { assertSlugFree } from './slugs.js';
import { resetSharedUsage } from './usage-reset.js';

type Provider = Records.ProviderRecord;
type Integration = Records.IntegrationRecord;

const resource = 'provider';
const crud = crudRoutes({ path: '/v1/providers', key: 'slug', resource, scopes: 'providers', level: 'workspace' });

const providerSchema = S.record({
  id: S.str,
  slug: S.str,
  name: S.str,
  integration_id: S.strOrNull,
  ai_provider_id: S.strOrNull,
  workspace_id: S.str,
  note: S.strOrNull,
  status: S.str,
  usage_limits: S.nullable(S.usageLimits),
  rate_limits: { type: 'array', items: S.rateLimit },
  expires_at: S.strOrNull,
  created_at: S.str,
  last_updated_at: S.str,
  object: S.str,
});

/** `integration_id` is shown as the integration's slug, the way it was given on create. */
function view(store: Store, p: Provider): Record<string, unknown> {
  const integration = store.c.integrations.get(p.integration_id);
  return {
    id: p.id,
    slug: p.slug,
    name: p.name,
    integration_id: integration?.slug ?? null,
    ai_provider_id: integration?.ai_provider_id ?? null,
    workspace_id: p.workspace_id,
    note: p.note,
    status: effectiveStatus(p.status, p.expires_at),
    usage_limits: p.usage_limits,
    rate_limits: p.rate_limits,
    expires_at: p.expires_at,
    created_at: p.created_at,
    last_updated_at: p.last_updated_at,
    object: 'provider',
  };
}

function findProvider(store: Store, slugOrId: string): Provider | undefined {
  return store.c.providers.getBy('slug', slugOrId) ?? store.c.providers.get(slugOrId);
}

/** An integration a workspace may build on: active, and organisation-wide or its own. */
function usableBy(integration: Integration | undefined, workspaceId: string): integration is Integration {
  return integration !== undefined && integration.status === 'active' && (integration.workspace_id === null || integration.workspace_id === workspaceId);
}

const note: S.JsonSchema = S.nullable({ type: 'string', maxLength: 1024 });

interface CreateBody {
  name: string;
  integration_id: string;
  workspace_id?: string;
  slug?: string;
  note?: string | null;
  usage_limits?: Records.UsageLimits | null;
  rate_limits?: Records.RateLimit | Records.RateLimit[];
  expires_at?: string | null;
}

interface UpdateBody {
  name?: string;
  note?: string | null;
  usage_limits?: Records.UsageLimits | null;
  rate_limits?: Records.RateLimit | Records.RateLimit[];
  expires_at?: string | null;
  reset_usage?: boolean;
}

export const providerRoutes: AnyAdminRoute[] = [
  crud.create<CreateBody>({
    summary: 'Create a provider (a workspace instance of an integration)',
    body: {
      type: 'object',
      properties: {
        name: S.name255,
        integration_id: { type: 'string', minLength: 1, maxLength: 255, description: 'The integration slug.' },
        workspace_id: S.workspaceRef,
        slug: S.slug,
        note,
        usage_limits: S.nullable(S.usageLimits),
        rate_limits: rateLimitsInput,
        expires_at: S.nullable(S.dateTime),
      },
      required: ['name', 'integration_id'],
      additionalProperties: false,
    },
    response: S.record({ id: S.str, slug: S.str, object: S.str }),
    handler({ body, workspace, principal, store }) {
      const integration = findIntegration(store, body.integration_id);
      // An integration of another workspace is answered like a missing one: no existence leak.
      if (!usableBy(integration, workspace!.id)) throw AdminErrors.notFound('Integration does not exist or is not available to this workspace.', 'integration_id');
      assertFuture(body.expires_at, 'expires_at');
      const slug = body.slug ?? slugify(body.name);
      assertSlugFree(store.c.virtualKeys.getBy('slug', slug));
      const now = nowIso();
      const provider: Provider = {
        id: uuidv7(),
        slug,
        name: body.name,
        integration_id: integration.id,
        workspace_id: workspace!.id,
        organisation_id: principal.organisation_id,
        note: body.note ?? null,
        usage_limits: body.usage_limits ?? null,
        rate_limits: normaliseRateLimits(body.rate_limits) ?? [],
        expires_at: body.expires_at ?? null,
        status: 'active',
        created_at: now,
        last_updated_at: now,
      };
      store.c.providers.insert(provider);
      return { id: provider.id, slug: provider.slug, object: 'provider' };
    },
  }),
  crud.list<never, { current_page: number; page_size: number }>({
    summary: 'List providers',
    workspaceDefault: 'all',
    query: { properties: { workspace_id: S.workspaceRef, ...S.pagination } },
    response: S.listOf(providerSchema),
    handler({ query, workspace, store }) {
      return listPage(store.c.providers, query, { workspace, view: (p) => view(store, p) });
    },
  }),
  crud.read({
    summary: 'Get a provider',
    response: providerSchema,
    handler({ params, principal, store }) {
      return view(store, assertVisible(principal, findProvider(store, params.slug!), 'Provider'));
    },
  }),
  crud.update<UpdateBody>({
    summary: 'Update a provider',
    body: {
      type: 'object',
      properties: {
        name: S.name255,
        note,
        usage_limits: S.nullable(S.usageLimits),
        rate_limits: rateLimitsInput,
        expires_at: S.nullable(S.dateTime),
        reset_usage: { type: 'boolean' },
      },
      minProperties: 1,
      additionalProperties: false,
    },
    response: S.empty,
    async handler({ params, body, principal, store }) {
      const current = assertVisible(principal, findProvider(store, params.slug!), 'Provider');
      assertFuture(body.expires_at, 'expires_at');
      // Distributed mode: the shared counter first, so a Valkey fault changes nothing.
      if (body.reset_usage === true && store.distributed !== undefined) await resetSharedUsage(store, 'provider', current.id, current.usage_limits);
      store.c.providers.update(current.id, (p) => ({
        ...p,
        name: body.name ?? p.name,
        note: body.note === undefined ? p.note : body.note,
        usage_limits: body.usage_limits === undefined ? p.usage_limits : body.usage_limits,
        rate_limits: normaliseRateLimits(body.rate_limits) ?? p.rate_limits,
        expires_at: body.expires_at === undefined ? p.expires_at : body.expires_at,
        // Usage counters belong to the usage-limits plugin; a reset reopens an exhausted provider.
        status: body.reset_usage === true && p.status === 'exhausted' ? 'active' : p.status,
        last_updated_at: nowIso(),
      }));
      return {};
    },
  }),
  crud.delete({
    summary: 'Delete a provider (its integration stays)',
    response: S.empty,
    handler({ params, principal, store }) {
      const current = assertVisible(principal, findProvider(store, params.slug!), 'Provider');
      if (!store.c.providers.delete(current.id)) throw AdminErrors.notFound('Provider does not exist.');
      return {};
    },
  }),
];

/**
 * Unsealed credentials by provider record (`cachedBy` hands back a new record after any provider
 * write), valid while no integration changed (the collection version, one LMDB read).
 */
const resolved = new WeakMap<Provider, { stamp: number; base: Omit<ResolvedCredentials, 'status'> }>();

/**
 * The provider `slug` of workspace `workspaceId` with its integration's credentials in clear, for
 * the routing plugin; undefined when there is none in that workspace or its integration is
 * archived or not available to the workspace. Frozen: copy before changing.
 *
 * @example
 *   const p = resolveProvider(store, 'openai-prod', principal.acting_workspace_id); // from "@openai-prod/gpt-4o"
 *   if (p?.status === 'active') target = { provider: p.provider, apiKey: p.apiKey, providerOptions: p.providerOptions };
 */
export function resolveProvider(store: Store, slug: string, workspaceId: string): ResolvedCredentials | undefined {
  const provider = store.c.providers.cachedBy('slug', slug);
  if (provider === undefined || provider.workspace_id !== workspaceId) return undefined;
  const integration = store.c.integrations.get(provider.integration_id);
  if (!usableBy(integration, workspaceId)) return undefined;
  const stamp = store.c.integrations.version();
  let memo = resolved.get(provider);
  if (memo === undefined || memo.stamp !== stamp) {
    const { custom_headers: headers, ...secrets } = unsealJson(store, integration.configurations_sealed);
    const { custom_host: customHost, ...plain } = integration.configurations;
    memo = {
      stamp,
      base: deepFreeze({
        provider: integration.ai_provider_id,
        apiKey: integration.key_sealed === null ? undefined : store.secrets.decrypt(integration.key_sealed),
        customHost: typeof customHost === 'string' ? customHost : undefined,
        headers: (headers ?? {}) as Record<string, string>,
        providerOptions: { ...plain, ...secrets },
        expiresAt: provider.expires_at,
      }),
    };
    resolved.set(provider, memo);
  }
  return Object.freeze({ ...memo.base, status: effectiveStatus(provider.status, provider.expires_at) });
}
