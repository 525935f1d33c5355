/**
 * Virtual keys: a provider credential held by the gateway and referenced by slug
 * (`x-gateway-virtual-key`, `virtual_key` in a config, `@slug/model`). Create, list, get, update,
 * delete.
 *
 * What is stored where (VirtualKeyRecord):
 *   key                          → key_sealed (+ masked_key for reads)
 *   custom_headers               → custom_headers_sealed (one JSON blob; reads show names only)
 *   secret provider fields       → model_config_sealed (AWS secret key and session token,
 *                                   `*_client_secret`, Vertex service account JSON)
 *   other provider fields        → model_config (shown in reads)
 *
 * For the routing plugin: {@link resolveVirtualKey}`(store, slug, workspaceId)` gives the
 * credential with its secrets unsealed.
 */
import { AdminErrors, assertVisible, crudRoutes, listPage, maskSecret, nowIso, slugify, uuidv7, S, type AnyAdminRoute, type Records, type Store } from '../../core/index.js';
import type { CustomHostPolicy } from '../../core/index.js';
import {
  assertCustomHost,
  assertProviderFields,
  customHeaders,
  customHost,
  deepFreeze,
  effectiveStatus,
  mergeFields,
  nullableProviderFields,
  pickProviderFields,
  providerFields,
  providerId,
  sealJson,
  splitSecrets,
  unsealJson,
  type ResolvedCredentials,
} from './provider-fields.js';
import { assertFuture, normaliseRateLimits, rateLimitsInput } from './limits.js';
import { assertSlugFree } from './slugs.js';
import { resetSharedUsage } from './usage-reset.js';

type VirtualKey = Records.VirtualKeyRecord;

const resource = 'virtual_key';
const crud = crudRoutes({ path: '/v1/virtual-keys', key: 'slug', resource, scopes: 'virtual_keys', level: 'workspace' });

const virtualKeySchema = S.record({
  id: S.str,
  slug: S.str,
  name: S.str,
  note: S.strOrNull,
  provider: S.str,
  status: S.str,
  masked_key: S.strOrNull,
  custom_host: S.strOrNull,
  custom_header_names: S.strings,
  model_config: S.anyObject,
  usage_limits: S.nullable(S.usageLimits),
  rate_limits: { type: 'array', items: S.rateLimit },
  expires_at: S.strOrNull,
  workspace_id: S.str,
  created_at: S.str,
  last_updated_at: S.str,
  object: S.str,
});

/** Reads show header names (to tell which are set), never their values. */
function view(store: Store, vk: VirtualKey): Record<string, unknown> {
  return {
    id: vk.id,
    slug: vk.slug,
    name: vk.name,
    note: vk.note,
    provider: vk.provider,
    status: effectiveStatus(vk.status, vk.expires_at),
    masked_key: vk.masked_key,
    custom_host: vk.custom_host,
    custom_header_names: Object.keys(unsealJson(store, vk.custom_headers_sealed)),
    model_config: vk.model_config,
    usage_limits: vk.usage_limits,
    rate_limits: vk.rate_limits,
    expires_at: vk.expires_at,
    workspace_id: vk.workspace_id,
    created_at: vk.created_at,
    last_updated_at: vk.last_updated_at,
    object: 'virtual-key',
  };
}

function findVirtualKey(store: Store, slugOrId: string): VirtualKey | undefined {
  return store.c.virtualKeys.getBy('slug', slugOrId) ?? store.c.virtualKeys.get(slugOrId);
}

const secretKey: S.JsonSchema = { type: 'string', minLength: 1, maxLength: 8192 };
const note: S.JsonSchema = S.nullable({ type: 'string', maxLength: 1024 });

interface CommonBody {
  key?: string;
  note?: string | null;
  custom_host?: string | null;
  custom_headers?: Record<string, string> | null;
  model_config?: Record<string, unknown>;
  usage_limits?: Records.UsageLimits | null;
  rate_limits?: Records.RateLimit | Records.RateLimit[];
  expires_at?: string | null;
  [providerField: string]: unknown;
}

interface CreateBody extends CommonBody {
  name: string;
  provider: string;
  workspace_id?: string;
  slug?: string;
}

interface UpdateBody extends CommonBody {
  name?: string;
  reset_usage?: boolean;
}

interface ListQuery {
  current_page: number;
  page_size: number;
}

/** The routes; the custom host policy is the YAML's `security.custom_hosts`. */
export function virtualKeyRoutes(policy: CustomHostPolicy): AnyAdminRoute[] {
  return [
    crud.create<CreateBody>({
      summary: 'Create a virtual key',
      body: {
        type: 'object',
        properties: {
          name: S.name255,
          provider: providerId,
          key: secretKey,
          note,
          custom_host: S.nullable(customHost),
          custom_headers: customHeaders,
          model_config: { type: 'object', properties: providerFields, additionalProperties: false },
          ...providerFields,
          usage_limits: S.nullable(S.usageLimits),
          rate_limits: rateLimitsInput,
          expires_at: S.nullable(S.dateTime),
          workspace_id: S.workspaceRef,
          slug: S.slug,
        },
        required: ['name', 'provider'],
        additionalProperties: false,
      },
      response: S.record({ id: S.str, slug: S.str, object: S.str }),
      handler({ body, workspace, principal, store }) {
        assertCustomHost(body.custom_host, policy, 'custom_host');
        assertProviderFields(pickProviderFields(body), policy);
        assertProviderFields(body.model_config, policy, 'model_config.');
        assertFuture(body.expires_at, 'expires_at');
        const slug = body.slug ?? slugify(body.name);
        // `@slug/model` names a provider or a virtual key: one slug must not mean both.
        assertSlugFree(store.c.providers.getBy('slug', slug));
        const { plain, secret } = splitSecrets(pickProviderFields(body, body.model_config));
        const now = nowIso();
        const vk: VirtualKey = {
          id: uuidv7(),
          slug,
          name: body.name,
          note: body.note ?? null,
          provider: body.provider,
          key_sealed: body.key === undefined ? null : store.secrets.encrypt(body.key),
          masked_key: body.key === undefined ? null : maskSecret(body.key),
          custom_host: body.custom_host ?? null,
          custom_headers_sealed: sealJson(store, body.custom_headers ?? undefined),
          model_config: plain,
          model_config_sealed: sealJson(store, secret),
          usage_limits: body.usage_limits ?? null,
          rate_limits: normaliseRateLimits(body.rate_limits) ?? [],
          expires_at: body.expires_at ?? null,
          status: 'active',
          workspace_id: workspace!.id,
          organisation_id: principal.organisation_id,
          created_at: now,
          last_updated_at: now,
        };
        store.c.virtualKeys.insert(vk);
        return { id: vk.id, slug: vk.slug, object: 'virtual-key' };
      },
    }),
    crud.list<never, ListQuery>({
      summary: 'List virtual keys',
      workspaceDefault: 'all',
      query: { properties: { workspace_id: S.workspaceRef, ...S.pagination } },
      response: S.listOf(virtualKeySchema),
      handler({ query, workspace, store }) {
        return listPage(store.c.virtualKeys, query, { workspace, view: (vk) => view(store, vk) });
      },
    }),
    crud.read({
      summary: 'Get a virtual key (key masked, custom header names only)',
      response: virtualKeySchema,
      handler({ params, principal, store }) {
        return view(store, assertVisible(principal, findVirtualKey(store, params.slug!), 'Virtual key'));
      },
    }),
    crud.update<UpdateBody>({
      summary: 'Update a virtual key',
      body: {
        type: 'object',
        properties: {
          name: S.name255,
          key: secretKey,
          note,
          custom_host: S.nullable(customHost),
          custom_headers: S.nullable(customHeaders),
          model_config: { type: 'object', properties: nullableProviderFields, additionalProperties: false },
          ...nullableProviderFields,
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
        const current = assertVisible(principal, findVirtualKey(store, params.slug!), 'Virtual key');
        assertCustomHost(body.custom_host, policy, 'custom_host');
        assertProviderFields(pickProviderFields(body), policy);
        assertProviderFields(body.model_config, policy, 'model_config.');
        assertFuture(body.expires_at, 'expires_at');
        const changes = pickProviderFields(body, body.model_config);
        // Distributed mode: the shared counter first, so a Valkey fault changes nothing.
        if (body.reset_usage === true && store.distributed !== undefined) await resetSharedUsage(store, 'virtual_key', current.id, current.usage_limits);
        store.c.virtualKeys.update(current.id, (vk) => {
          const fields = mergeFields(store, { plain: vk.model_config, sealed: vk.model_config_sealed }, changes);
          return {
            ...vk,
            name: body.name ?? vk.name,
            note: body.note === undefined ? vk.note : body.note,
            key_sealed: body.key === undefined ? vk.key_sealed : store.secrets.encrypt(body.key),
            masked_key: body.key === undefined ? vk.masked_key : maskSecret(body.key),
            custom_host: body.custom_host === undefined ? vk.custom_host : body.custom_host,
            // Headers are replaced as a set: their values are sealed, so a merge could not be reviewed.
            custom_headers_sealed: body.custom_headers === undefined ? vk.custom_headers_sealed : sealJson(store, body.custom_headers ?? undefined),
            model_config: fields.plain,
            model_config_sealed: fields.sealed,
            usage_limits: body.usage_limits === undefined ? vk.usage_limits : body.usage_limits,
            rate_limits: normaliseRateLimits(body.rate_limits) ?? vk.rate_limits,
            expires_at: body.expires_at === undefined ? vk.expires_at : body.expires_at,
            // Usage counters belong to the usage-limits plugin; a reset reopens an exhausted key.
            status: body.reset_usage === true && vk.status === 'exhausted' ? 'active' : vk.status,
            last_updated_at: nowIso(),
          };
        });
        return {};
      },
    }),
    crud.delete({
      summary: 'Delete a virtual key',
      response: S.empty,
      handler({ params, principal, store }) {
        const current = assertVisible(principal, findVirtualKey(store, params.slug!), 'Virtual key');
        // Deleted for real: a sealed credential nobody can use should not linger.
        if (!store.c.virtualKeys.delete(current.id)) throw AdminErrors.notFound('Virtual key does not exist.');
        return {};
      },
    }),
  ];
}

/** Unsealed credentials by stored record (`cachedBy` returns the same record until a key changes). */
const resolved = new WeakMap<VirtualKey, Omit<ResolvedCredentials, 'status'>>();

/**
 * The virtual key `slug` of workspace `workspaceId` with its secrets in clear, for the routing
 * plugin; undefined when there is none in that workspace. The caller decides what a non-active
 * `status` means (expired, exhausted). Frozen: copy before changing.
 *
 * @example
 *   const vk = resolveVirtualKey(store, 'openai-main', principal.acting_workspace_id);
 *   if (vk?.status === 'active') target = { provider: vk.provider, apiKey: vk.apiKey, headers: { ...vk.headers } };
 */
export function resolveVirtualKey(store: Store, slug: string, workspaceId: string): ResolvedCredentials | undefined {
  const vk = store.c.virtualKeys.cachedBy('slug', slug);
  if (vk === undefined || vk.workspace_id !== workspaceId) return undefined;
  let base = resolved.get(vk);
  if (base === undefined) {
    base = deepFreeze({
      provider: vk.provider,
      apiKey: vk.key_sealed === null ? undefined : store.secrets.decrypt(vk.key_sealed),
      customHost: vk.custom_host ?? undefined,
      headers: unsealJson(store, vk.custom_headers_sealed) as Record<string, string>,
      providerOptions: { ...vk.model_config, ...unsealJson(store, vk.model_config_sealed) },
      expiresAt: vk.expires_at,
    });
    resolved.set(vk, base);
  }
  // Expiry depends on the clock, so status is computed per call, not memoized.
  return Object.freeze({ ...base, status: effectiveStatus(vk.status, vk.expires_at) });
}
