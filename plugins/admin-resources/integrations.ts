/**
 * Integrations: provider credentials at organisation level (no `workspace_id`: usable by every
 * workspace's providers) or at workspace level. Create, list, get, update, delete (archives).
 * Providers (providers.ts) are the workspace instances that requests name.
 *
 * Who may do what depends on the record, not only the route, so the routes declare level
 * `workspace` and no scope, and {@link authorizeFor} decides per integration:
 *
 *   organisation-wide   write: organisation key + `organisation_integrations.<action>`
 *                       read:  organisation key + `organisation_integrations.<action>`,
 *                              or a workspace key with `organisation_integrations.list`
 *                              (its providers are built on them, so it may see them, masked)
 *   workspace-level     `workspace_integrations.<action>`, and only in the key's own workspace
 *
 * Secrets (`key`, secret configuration fields, custom headers) are sealed; reads show
 * `masked_key` and `masked_<field>`.
 */
import { AdminErrors, assertVisible, authorize, crudRoutes, listPage, maskSecret, nowIso, slugify, uuidv7, S, type AnyAdminRoute, type Principal, type Records, type Store } from '../../core/index.js';
import type { CustomHostPolicy } from '../../core/index.js';
import {
  assertCustomHost,
  assertProviderFields,
  customHeaders,
  customHost,
  mergeFields,
  nullableProviderFields,
  providerFields,
  providerId,
  sealJson,
  splitSecrets,
  unsealJson,
} from './provider-fields.js';

type Integration = Records.IntegrationRecord;
type Action = 'create' | 'read' | 'update' | 'delete' | 'list';

const resource = 'integration';
const crud = crudRoutes({ path: '/v1/integrations', key: 'slug', resource, scopes: null, level: 'workspace' });

const itemFields = {
  id: S.str,
  slug: S.str,
  name: S.str,
  ai_provider_id: S.str,
  description: S.strOrNull,
  status: S.str,
  organisation_id: S.str,
  workspace_id: S.strOrNull,
  created_at: S.str,
  last_updated_at: S.str,
  object: S.str,
};
const integrationItem = S.record(itemFields);
const integrationDetail = S.record({ ...itemFields, masked_key: S.strOrNull, configurations: S.anyObject });

function item(i: Integration): Record<string, unknown> {
  return {
    id: i.id,
    slug: i.slug,
    name: i.name,
    ai_provider_id: i.ai_provider_id,
    description: i.description,
    status: i.status,
    organisation_id: i.organisation_id,
    workspace_id: i.workspace_id,
    created_at: i.created_at,
    last_updated_at: i.last_updated_at,
    object: 'integration',
  };
}

/** Secret configuration fields appear as `masked_<field>`: custom headers by name with masked values. */
function detail(store: Store, i: Integration): Record<string, unknown> {
  const configurations: Record<string, unknown> = { ...i.configurations };
  for (const [name, value] of Object.entries(unsealJson(store, i.configurations_sealed))) {
    configurations[`masked_${name}`] = maskValue(value);
  }
  return { ...item(i), masked_key: i.masked_key, configurations };
}

function maskValue(value: unknown): unknown {
  if (typeof value === 'string') return maskSecret(value);
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, typeof v === 'string' ? maskSecret(v) : '[masked]']));
  }
  return '[masked]';
}

export function findIntegration(store: Store, slugOrId: string): Integration | undefined {
  return store.c.integrations.getBy('slug', slugOrId) ?? store.c.integrations.get(slugOrId);
}

/** The per-record permission check described at the top of this file. */
function authorizeFor(principal: Principal, integration: Pick<Integration, 'workspace_id'>, action: Action): void {
  if (integration.workspace_id !== null) {
    authorize(principal, { level: 'workspace', scope: `workspace_integrations.${action}` });
    return;
  }
  if (principal.workspace_id !== null && (action === 'read' || action === 'list')) {
    authorize(principal, { level: 'workspace', scope: 'organisation_integrations.list' });
    return;
  }
  if (principal.workspace_id !== null) {
    throw AdminErrors.forbidden('An organisation-wide integration can only be changed with an organisation (admin) API key.');
  }
  authorize(principal, { level: 'organisation', scope: `organisation_integrations.${action}` });
}

/** Finds an integration the principal may see (404 otherwise) and checks the action's scope. */
function visibleIntegration(principal: Principal, store: Store, slugOrId: string, action: Action): Integration {
  const found = findIntegration(store, slugOrId);
  // Organisation-wide integrations are visible to every workspace; others only to their own.
  const integration = found?.workspace_id === null ? found : assertVisible(principal, found, 'Integration');
  authorizeFor(principal, integration, action);
  return integration;
}

const configurationsSchema = (fields: Record<string, S.JsonSchema>, nullable: boolean): S.JsonSchema => ({
  type: 'object',
  properties: {
    ...fields,
    custom_host: nullable ? S.nullable(customHost) : customHost,
    custom_headers: nullable ? S.nullable(customHeaders) : customHeaders,
  },
  additionalProperties: false,
});

interface CreateBody {
  name: string;
  ai_provider_id: string;
  slug?: string;
  key?: string;
  description?: string | null;
  workspace_id?: string;
  configurations?: Record<string, unknown>;
}

interface UpdateBody {
  name?: string;
  key?: string;
  description?: string | null;
  configurations?: Record<string, unknown>;
}

interface ListQuery {
  type: 'workspace' | 'organisation' | 'all';
  status: Integration['status'];
  current_page: number;
  page_size: number;
}

const secretKey: S.JsonSchema = { type: 'string', minLength: 1, maxLength: 8192 };
const description: S.JsonSchema = S.nullable({ type: 'string', maxLength: 1024 });

/** The routes; the custom host policy is the YAML's `security.custom_hosts`. */
export function integrationRoutes(policy: CustomHostPolicy): AnyAdminRoute[] {
  return [
    crud.create<CreateBody>({
      summary: 'Create an integration (organisation-wide without workspace_id: organisation key and organisation_integrations.create; else workspace_integrations.create)',
      body: {
        type: 'object',
        properties: {
          name: S.name255,
          ai_provider_id: providerId,
          slug: S.slug,
          key: secretKey,
          description,
          workspace_id: S.workspaceRef,
          configurations: configurationsSchema(providerFields, false),
        },
        required: ['name', 'ai_provider_id'],
        additionalProperties: false,
      },
      response: S.record({ id: S.str, slug: S.str }),
      handler({ body, workspace, principal, store }) {
        // A workspace key always acts in its own workspace; an organisation key creates an
        // organisation-wide integration unless it names a workspace.
        const workspaceId = principal.workspace_id !== null || body.workspace_id !== undefined ? workspace!.id : null;
        authorizeFor(principal, { workspace_id: workspaceId }, 'create');
        const configurations = body.configurations ?? {};
        assertCustomHost(configurations.custom_host as string | undefined, policy, 'configurations.custom_host');
        assertProviderFields(configurations, policy, 'configurations.');
        const { plain, secret } = splitSecrets(configurations);
        const now = nowIso();
        const integration: Integration = {
          id: uuidv7(),
          slug: body.slug ?? slugify(body.name),
          name: body.name,
          ai_provider_id: body.ai_provider_id,
          description: body.description ?? null,
          key_sealed: body.key === undefined ? null : store.secrets.encrypt(body.key),
          masked_key: body.key === undefined ? null : maskSecret(body.key),
          configurations: plain,
          configurations_sealed: sealJson(store, secret),
          workspace_id: workspaceId,
          organisation_id: principal.organisation_id,
          status: 'active',
          created_at: now,
          last_updated_at: now,
        };
        store.c.integrations.insert(integration);
        return { id: integration.id, slug: integration.slug };
      },
    }),
    crud.list<never, ListQuery>({
      summary: 'List integrations (organisation-wide ones need organisation_integrations.list, workspace ones workspace_integrations.list)',
      workspaceDefault: 'all',
      query: {
        properties: {
          workspace_id: S.workspaceRef,
          type: { type: 'string', enum: ['workspace', 'organisation', 'all'], default: 'all' },
          status: { type: 'string', enum: ['active', 'archived'], default: 'active' },
          ...S.pagination,
        },
      },
      response: S.listOf(integrationItem),
      handler({ query, workspace, principal, store }) {
        const orgWide = query.type !== 'workspace' && principal.scopes.has('organisation_integrations.list');
        const workspaceLevel = query.type !== 'organisation' && principal.scopes.has('workspace_integrations.list');
        if (!orgWide && !workspaceLevel) {
          throw AdminErrors.insufficientScope('This key lacks the scope "organisation_integrations.list" or "workspace_integrations.list".');
        }
        // With a workspace (a workspace key's own, or `workspace_id`): what that workspace can use.
        return listPage(store.c.integrations, query, {
          filter: (i) =>
            i.status === query.status &&
            (i.workspace_id === null ? orgWide : workspaceLevel && (workspace === null || i.workspace_id === workspace.id)),
          view: item,
        });
      },
    }),
    crud.read({
      summary: 'Get an integration (key and secret configurations masked)',
      response: integrationDetail,
      handler({ params, principal, store }) {
        return detail(store, visibleIntegration(principal, store, params.slug!, 'read'));
      },
    }),
    crud.update<UpdateBody>({
      summary: 'Update an integration (configurations merge; null removes a field)',
      body: {
        type: 'object',
        properties: { name: S.name255, key: secretKey, description, configurations: configurationsSchema(nullableProviderFields, true) },
        minProperties: 1,
        additionalProperties: false,
      },
      response: S.empty,
      handler({ params, body, principal, store }) {
        const current = visibleIntegration(principal, store, params.slug!, 'update');
        const changes = body.configurations ?? {};
        assertCustomHost(changes.custom_host as string | null | undefined, policy, 'configurations.custom_host');
        assertProviderFields(changes, policy, 'configurations.');
        store.c.integrations.update(current.id, (i) => {
          const fields = mergeFields(store, { plain: i.configurations, sealed: i.configurations_sealed }, changes);
          return {
            ...i,
            name: body.name ?? i.name,
            description: body.description === undefined ? i.description : body.description,
            key_sealed: body.key === undefined ? i.key_sealed : store.secrets.encrypt(body.key),
            masked_key: body.key === undefined ? i.masked_key : maskSecret(body.key),
            configurations: fields.plain,
            configurations_sealed: fields.sealed,
            last_updated_at: nowIso(),
          };
        });
        return {};
      },
    }),
    crud.delete({
      summary: 'Delete (archive) an integration; its providers stop resolving',
      response: S.empty,
      handler({ params, principal, store }) {
        const current = visibleIntegration(principal, store, params.slug!, 'delete');
        store.c.integrations.update(current.id, (i) => ({ ...i, status: 'archived', last_updated_at: nowIso() }));
        return {};
      },
    }),
  ];
}
