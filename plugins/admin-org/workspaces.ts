/**
 * Workspaces (`/v1/admin/workspaces`): create and delete are organisation business; get, list and
 * update are open to a workspace key for its own workspace (403 for any other, see
 * workspace-refs.ts).
 *
 * Deleting archives. The default workspace is never deleted (organisation keys act there when
 * they name none). A workspace still holding live API keys, configs, virtual keys or providers is
 * a 409 unless `force_delete: true`, which archives anyway and revokes its API keys.
 *
 * `defaults.input_guardrails` / `defaults.output_guardrails` name saved guardrails (ids or slugs)
 * every request of the workspace gets; the `guardrails` plugin checks them (a 400
 * `unknown_guardrail` naming the item). On update they must live in the workspace; a new
 * workspace has none yet, so on create they are checked across the organisation.
 *
 * `defaults.mcp_tools` is the workspace's MCP allow-list (`server/tool` patterns, `*` wildcards;
 * read by the mcp-gateway plugin): absent, every enabled tool; null on update removes it. Like
 * the limits, it is set from above: a workspace key cannot change its own.
 */
import { AdminErrors, crudRoutes, isUuid, listPage, nowIso, slugify, uuidv7, S, type AnyAdminRoute, type GuardrailService, type Principal, type Records, type Store } from '../../core/index.js';
import { memberView, workspaceDetailSchema, workspaceSchema, workspaceView } from './views.js';
import { pathWorkspace } from './workspace-refs.js';
import { assertMayManage } from './permissions.js';

type Workspace = Records.Workspace;

/** Saved guardrails (ids or slugs) named by a workspace's defaults. */
interface GuardrailDefaults {
  input_guardrails?: string[];
  output_guardrails?: string[];
}

const GUARDRAIL_DEFAULTS = ['input_guardrails', 'output_guardrails'] as const;

type Guardrails = () => GuardrailService | undefined;

interface Fields {
  name?: string;
  description?: string | null;
  defaults?: { metadata?: Record<string, string>; user_api_key_config?: string | null; mcp_tools?: string[] | null } & GuardrailDefaults;
  usage_limits?: Workspace['usage_limits'];
  rate_limits?: Workspace['rate_limits'];
}

interface CreateBody extends Fields {
  name: string;
  slug?: string;
}

interface ListQuery {
  name?: string;
  exact_name?: string;
  status: string;
  current_page: number;
  page_size: number;
}

const resource = 'workspace';
const crud = crudRoutes({ path: '/v1/admin/workspaces', key: 'id', resource, scopes: 'workspaces', level: 'workspace' });

/** Metadata is copied onto every request's logs: bounded like request metadata. */
const metadata = {
  type: 'object',
  maxProperties: 32,
  propertyNames: { maxLength: 64 },
  additionalProperties: { type: 'string', maxLength: 512 },
};

const guardrailRefs = { type: 'array', maxItems: 32, items: { type: 'string', minLength: 1, maxLength: 255 } };

/** MCP allow-list patterns `server/tool` (`*` wildcards), as API keys take them (admin-api-keys/payloads.ts). */
const mcpTools = {
  type: 'array',
  maxItems: 100,
  items: { type: 'string', minLength: 3, maxLength: 200, pattern: '^[A-Za-z0-9_*.-]+/[A-Za-z0-9_*./:-]+$' },
  description: 'MCP tools this workspace may call: `server/tool` patterns, `*` matches any run of characters.',
};

const fieldSchemas = {
  name: S.name255,
  description: { type: 'string', maxLength: 1024, nullable: true },
  usage_limits: { type: 'array', maxItems: 10, items: S.usageLimits },
  rate_limits: { type: 'array', maxItems: 10, items: S.rateLimit },
};

const isDefault = (store: Store, ws: Workspace): boolean => store.meta.get('default_workspace_id') === ws.id || ws.defaults.is_default === 1;

/** Entity usage limits: missing fields are null, `type` defaults to cost. */
function usageLimits(list: ReadonlyArray<Partial<Records.UsageLimits>>): Records.UsageLimits[] {
  return list.map((u) => ({
    ...u,
    credit_limit: u.credit_limit ?? null,
    type: u.type ?? 'cost',
    alert_threshold: u.alert_threshold ?? null,
    periodic_reset: u.periodic_reset ?? null,
  }));
}

/** The config a workspace's user keys default to: an active one of this workspace, stored by id. */
function userKeyConfig(store: Store, ws: Workspace, ref: string): string {
  const config = store.c.configs.get(ref) ?? store.c.configs.getBy('slug', ref);
  if (config === undefined || config.workspace_id !== ws.id || config.status !== 'active') {
    throw AdminErrors.notFound('The config named by defaults.user_api_key_config does not exist in this workspace.', 'defaults.user_api_key_config');
  }
  return config.id;
}

/**
 * The guardrail lists of `defaults` the body sets (each checked by the guardrails plugin), to
 * spread into the stored defaults. `workspaceId` undefined: checked across the organisation.
 */
function guardrailDefaults(guardrails: Guardrails, defaults: GuardrailDefaults | undefined, workspaceId: string | undefined): GuardrailDefaults {
  const out: GuardrailDefaults = {};
  for (const field of GUARDRAIL_DEFAULTS) {
    const list = defaults?.[field];
    if (list === undefined) continue;
    const param = `defaults.${field}`;
    if (list.length > 0) {
      const service = guardrails();
      // Nothing would apply them: refused rather than stored to do nothing.
      if (service === undefined) throw AdminErrors.invalid(`${param} needs the guardrails plugin in the pipeline.`, param);
      const err = service.validate(list, param, workspaceId);
      if (err !== null) throw err;
    }
    out[field] = list;
  }
  return out;
}

/** What still lives in the workspace; the first kind found names the 409. */
function dependents(store: Store, wsId: string): string | undefined {
  const byWs = { index: 'workspace', value: wsId, limit: 1 } as const;
  if (store.c.apiKeys.list({ ...byWs, filter: (k) => k.deleted_at === null }).total > 0) return 'API keys';
  if (store.c.configs.list({ ...byWs, filter: (c) => c.status === 'active' }).total > 0) return 'configs';
  if (store.c.virtualKeys.list(byWs).total > 0) return 'virtual keys';
  if (store.c.providers.list(byWs).total > 0) return 'providers';
  return undefined;
}

function assertOrgMayChangeLimits(principal: Principal, body: Fields): void {
  // A workspace key could otherwise lift its own budget: limits are set from above.
  for (const field of ['usage_limits', 'rate_limits'] as const) {
    if (principal.workspace_id !== null && body[field] !== undefined) {
      throw AdminErrors.forbidden("A workspace key cannot change its own workspace's limits.", field);
    }
  }
  // Nor widen its own MCP allow-list.
  if (principal.workspace_id !== null && body.defaults?.mcp_tools !== undefined) {
    throw AdminErrors.forbidden("A workspace key cannot change its own workspace's MCP allow-list.", 'defaults.mcp_tools');
  }
}

/** The routes; `guardrails` checks the saved guardrails a workspace's defaults name. */
export const workspaceRoutes = (guardrails: Guardrails): AnyAdminRoute[] => [
  crud.create<CreateBody>({
    summary: 'Create a workspace',
    level: 'organisation',
    body: {
      type: 'object',
      properties: {
        ...fieldSchemas,
        slug: S.slug,
        defaults: {
          type: 'object',
          properties: { metadata, input_guardrails: guardrailRefs, output_guardrails: guardrailRefs, mcp_tools: { ...mcpTools, nullable: true } },
          additionalProperties: false,
        },
      },
      required: ['name'],
      additionalProperties: false,
    },
    response: workspaceSchema,
    handler({ body, principal, store }) {
      assertMayManage(principal);
      // findWorkspace tries ids before slugs: a uuid-shaped slug could shadow another workspace.
      if (body.slug !== undefined && isUuid(body.slug)) throw AdminErrors.invalid('A slug cannot look like a workspace id.', 'slug');
      const lists = guardrailDefaults(guardrails, body.defaults, undefined);
      const now = nowIso();
      const ws: Workspace = {
        id: uuidv7(),
        slug: body.slug ?? slugify(body.name),
        name: body.name,
        description: body.description ?? null,
        organisation_id: principal.organisation_id,
        defaults: {
          metadata: body.defaults?.metadata ?? {},
          is_default: 0,
          ...lists,
          ...(body.defaults?.mcp_tools == null ? {} : { mcp_tools: body.defaults.mcp_tools }),
        },
        usage_limits: usageLimits(body.usage_limits ?? []),
        rate_limits: body.rate_limits ?? [],
        status: 'active',
        created_at: now,
        last_updated_at: now,
      };
      // A taken slug is a unique-index clash: 409 conflict naming `slug`.
      store.c.workspaces.insert(ws);
      return workspaceView(ws);
    },
  }),
  crud.list<never, ListQuery>({
    summary: 'List workspaces',
    workspaceDefault: 'all',
    query: {
      properties: {
        name: { type: 'string', maxLength: 255, description: 'Substring of the name (case-sensitive).' },
        exact_name: { type: 'string', maxLength: 255 },
        status: { type: 'string', pattern: '^(active|archived)(,(active|archived))?$', default: 'active', description: 'Comma-separated.' },
        ...S.pagination,
      },
    },
    response: S.listOf(workspaceSchema),
    handler({ query, workspace, store }) {
      const statuses = new Set(query.status.split(','));
      const keep = (ws: Workspace): boolean =>
        statuses.has(ws.status) &&
        (query.name === undefined || ws.name.includes(query.name)) &&
        (query.exact_name === undefined || ws.name === query.exact_name);
      return listPage(store.c.workspaces, query, {
        // A workspace key lists only its own workspace (the framework resolved it from the key).
        // Filtered, not indexed: workspaces have no `workspace` index.
        filter: (ws) => (workspace === null || ws.id === workspace.id) && keep(ws),
        view: workspaceView,
      });
    },
  }),
  crud.read({
    summary: 'Get a workspace with its members',
    workspaceDefault: 'all',
    response: workspaceDetailSchema,
    handler({ params, principal, store }) {
      const ws = pathWorkspace(store, principal, params.id!);
      // One page of members: the full, paginated list is `GET …/:id/users`.
      const members = store.c.members.list({ index: 'workspace', value: ws.id, limit: S.PAGE_SIZE_MAX }).items;
      const users = members.flatMap((m) => {
        const user = store.c.users.get(m.user_id);
        return user === undefined ? [] : [memberView(m, user)];
      });
      return { ...workspaceView(ws), users };
    },
  }),
  crud.update<Fields>({
    summary: 'Update a workspace',
    workspaceDefault: 'all',
    body: {
      type: 'object',
      properties: {
        ...fieldSchemas,
        defaults: {
          type: 'object',
          properties: {
            metadata,
            user_api_key_config: { type: 'string', minLength: 1, maxLength: 255, nullable: true },
            input_guardrails: guardrailRefs,
            output_guardrails: guardrailRefs,
            mcp_tools: { ...mcpTools, nullable: true },
          },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    response: S.empty,
    handler({ params, body, principal, store }) {
      const ws = pathWorkspace(store, principal, params.id!);
      assertMayManage(principal);
      assertOrgMayChangeLimits(principal, body);
      const ref = body.defaults?.user_api_key_config;
      const configId = ref === undefined || ref === null ? ref : userKeyConfig(store, ws, ref);
      const lists = guardrailDefaults(guardrails, body.defaults, ws.id);
      const mcp = body.defaults?.mcp_tools;
      store.c.workspaces.update(ws.id, (w) => ({
        ...w,
        name: body.name ?? w.name,
        description: body.description === undefined ? w.description : body.description,
        defaults: {
          ...w.defaults,
          metadata: body.defaults?.metadata ?? w.defaults.metadata,
          ...(configId === undefined ? {} : { user_api_key_config: configId }),
          ...lists,
          // null removes the allow-list (every enabled tool again); absent keeps it.
          ...(mcp === undefined ? {} : { mcp_tools: mcp === null ? undefined : mcp }),
        },
        usage_limits: body.usage_limits === undefined ? w.usage_limits : usageLimits(body.usage_limits),
        rate_limits: body.rate_limits ?? w.rate_limits,
        last_updated_at: nowIso(),
      }));
      return {};
    },
  }),
  crud.delete<{ force_delete?: boolean; name?: string }>({
    summary: 'Delete (archive) a workspace',
    level: 'organisation',
    body: {
      type: 'object',
      properties: {
        force_delete: { type: 'boolean', default: false },
        // Sent by the Terraform provider as a confirmation; accepted and not required.
        name: { type: 'string', maxLength: 255 },
      },
      additionalProperties: false,
    },
    response: S.empty,
    handler({ params, body, principal, store }) {
      assertMayManage(principal);
      const ws = pathWorkspace(store, principal, params.id!);
      if (isDefault(store, ws)) throw AdminErrors.conflict('The default workspace cannot be deleted.');
      if (body.name !== undefined && body.name !== ws.name) throw AdminErrors.invalid('name does not match the workspace name.', 'name');
      const now = nowIso();
      // Checked and written in one transaction: nothing can be added between the check and the archive.
      store.root.transactionSync(() => {
        const left = dependents(store, ws.id);
        if (left !== undefined && body.force_delete !== true) {
          throw AdminErrors.conflict(`The workspace still has ${left}; delete them first or send force_delete: true.`);
        }
        for (const k of store.c.apiKeys.list({ index: 'workspace', value: ws.id, filter: (k) => k.deleted_at === null }).items) {
          store.c.apiKeys.update(k.id, (key) => ({ ...key, deleted_at: now, last_updated_at: now }));
        }
        store.c.workspaces.update(ws.id, (w) => ({ ...w, status: 'archived', last_updated_at: now }));
      });
      return {};
    },
  }),
];
