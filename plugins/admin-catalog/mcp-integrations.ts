/**
 * MCP integrations (admin-api.md §14): the registration of a remote MCP server (URL, transport,
 * auth), organisation-wide or owned by one workspace. Create, list, get, update, delete
 * (archives) here; capabilities (GET/PUT …/capabilities) and the connection test (POST …/test)
 * live with the plugin that connects to MCP servers (plugins/mcp-gateway/admin.ts), which uses
 * the visibility rule below. Workspace access rules are not implemented.
 *
 * Two kinds, two scope families, as for provider integrations:
 *   - workspace-level (a workspace key's, or an organisation key's with `workspace_id`):
 *     `workspace_mcp_integrations.*`, seen only inside that workspace;
 *   - organisation-level (an organisation key without `workspace_id`):
 *     `organisation_mcp_integrations.*`, writable by organisation keys only and readable by every
 *     workspace (workspace keys hold `organisation_mcp_integrations.list`), since workspace access
 *     rules are not implemented yet: every workspace may build MCP servers on them.
 * The framework cannot pick the scope before it knows the kind, so routes declare `scope: null`
 * and each handler calls `authorize` with the right one.
 *
 * Custom header values often carry credentials: they are stored sealed and shown masked only.
 */
import {
  assertVisible,
  authorize,
  checkUpstreamUrl,
  crudRoutes,
  listPage,
  maskSecret,
  nowIso,
  slugify,
  uuidv7,
  S,
  type AnyAdminRoute,
  type CustomHostPolicy,
  type Principal,
  type Records,
  type Store,
} from '../../core/index.js';

type Integration = Records.McpIntegrationRecord;
type Kind = 'organisation' | 'workspace';
export type McpIntegrationAction = 'create' | 'read' | 'update' | 'delete' | 'list';
type Action = McpIntegrationAction;

const HEADER_NAME = { pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$", maxLength: 256 };

const configurationsIn: S.JsonSchema = {
  type: 'object',
  properties: {
    custom_headers: { type: 'object', maxProperties: 50, propertyNames: HEADER_NAME, additionalProperties: { type: 'string', maxLength: 8192 } },
    passthrough_header: {
      type: 'object',
      maxProperties: 50,
      propertyNames: HEADER_NAME,
      additionalProperties: {
        type: 'object',
        properties: { type: { type: 'string', maxLength: 64 }, example: { type: 'string', maxLength: 1024 } },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
};

const fields = {
  name: { type: 'string', minLength: 1, maxLength: 255 },
  url: { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2048 },
  auth_type: { type: 'string', enum: ['oauth_auto', 'headers', 'none'] },
  transport: { type: 'string', enum: ['http', 'sse'] },
  description: { type: 'string', maxLength: 1024, nullable: true },
  configurations: configurationsIn,
};

const integrationSchema = S.record({
  id: S.str,
  slug: S.str,
  name: S.str,
  description: S.strOrNull,
  url: S.str,
  auth_type: S.str,
  transport: S.str,
  type: S.str,
  // Only these two keys are ever serialized: a sealed header value cannot leave by accident.
  configurations: {
    type: 'object',
    properties: {
      passthrough_header: { type: 'object', additionalProperties: { type: 'object', properties: { type: S.str, example: S.str } } },
      masked_custom_headers: S.stringMap,
    },
  },
  workspace_id: S.strOrNull,
  organisation_id: S.str,
  owner_id: S.strOrNull,
  status: S.str,
  created_at: S.str,
  last_updated_at: S.str,
});

interface Configurations {
  custom_headers?: Record<string, string>;
  passthrough_header?: Record<string, { type?: string; example?: string }>;
}

interface CreateBody {
  name: string;
  url: string;
  auth_type: Integration['auth_type'];
  transport: Integration['transport'];
  slug?: string;
  description?: string | null;
  configurations?: Configurations;
}

type UpdateBody = Partial<Omit<CreateBody, 'slug'>>;

interface ListQuery {
  type: Kind | 'all';
  search?: string;
  current_page: number;
  page_size: number;
}

const kindOf = (r: Pick<Integration, 'workspace_id'>): Kind => (r.workspace_id === null ? 'organisation' : 'workspace');

/** The scope check the framework could not do: organisation-level needs an organisation key too. */
function authorizeKind(principal: Principal, kind: Kind, action: Action): void {
  authorize(principal, { level: kind, scope: `${kind}_mcp_integrations.${action}` });
}

/** By id or slug. */
export function findMcpIntegration(store: Store, ref: string): Integration | undefined {
  return store.c.mcpIntegrations.get(ref) ?? store.c.mcpIntegrations.getBy('slug', ref);
}

/**
 * One integration the principal may act on. Organisation-level ones are readable by any key
 * that may list them (workspace keys included); workspace-level ones only inside their workspace.
 */
export function visibleMcpIntegration(principal: Principal, record: Integration | undefined, action: Exclude<Action, 'create' | 'list'>): Integration {
  if (record !== undefined && record.workspace_id === null) {
    if (action === 'read' && principal.scopes.has('organisation_mcp_integrations.list')) return record;
    authorizeKind(principal, 'organisation', action);
    return record;
  }
  const found = assertVisible(principal, record, 'MCP integration');
  authorizeKind(principal, 'workspace', action);
  return found;
}

/** The secret part of `configurations`, sealed as one JSON object; null when there is none. */
function sealHeaders(store: Store, headers: Record<string, string> | undefined): string | null {
  return headers === undefined || Object.keys(headers).length === 0 ? null : store.secrets.encrypt(JSON.stringify(headers));
}

function publicConfigurations(c: Configurations | undefined): Record<string, unknown> {
  return c?.passthrough_header === undefined ? {} : { passthrough_header: c.passthrough_header };
}

function view(store: Store, r: Integration): Record<string, unknown> {
  const configurations: Record<string, unknown> = { ...r.configurations };
  if (r.configurations_sealed !== null) {
    const headers = JSON.parse(store.secrets.decrypt(r.configurations_sealed)) as Record<string, string>;
    configurations.masked_custom_headers = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, maskSecret(v)]));
  }
  const { configurations_sealed: _sealed, ...rest } = r;
  return { ...rest, type: kindOf(r), configurations };
}

const resource = 'mcp_integration';
const crud = crudRoutes({ path: '/v1/mcp-integrations', key: 'id', resource, scopes: null, level: 'workspace' });
const notArchived = (r: Integration): boolean => r.status === 'active';

function assertUpstreamUrl(url: string, policy: CustomHostPolicy, param: string): void {
  const refused = checkUpstreamUrl(url, policy, param);
  if (refused !== null) throw refused;
}

/** The routes; MCP server URLs are checked against the YAML's `security.custom_hosts`. */
export function mcpIntegrationRoutes(policy: CustomHostPolicy): AnyAdminRoute[] {
  return [
    crud.create<CreateBody>({
      summary: 'Create an MCP integration (scope {workspace|organisation}_mcp_integrations.create)',
      // No workspace_id from an organisation key: an organisation-level integration.
      workspaceDefault: 'all',
      body: {
        type: 'object',
        properties: { ...fields, slug: S.slug, workspace_id: S.workspaceRef, organisation_id: { type: 'string', maxLength: 255 } },
        required: ['name', 'url', 'auth_type', 'transport'],
        additionalProperties: false,
      },
      response: S.record({ id: S.str, slug: S.str }),
      handler({ body, workspace, principal, store }) {
        authorizeKind(principal, workspace === null ? 'organisation' : 'workspace', 'create');
        // The gateway will call this URL for MCP: the upstream guard applies when it is saved.
        assertUpstreamUrl(body.url, policy, 'url');
        const now = nowIso();
        const record: Integration = {
          id: uuidv7(),
          slug: body.slug ?? slugify(body.name),
          name: body.name,
          description: body.description ?? null,
          url: body.url,
          auth_type: body.auth_type,
          transport: body.transport,
          configurations: publicConfigurations(body.configurations),
          configurations_sealed: sealHeaders(store, body.configurations?.custom_headers),
          workspace_id: workspace?.id ?? null,
          organisation_id: principal.organisation_id,
          owner_id: principal.user_id,
          status: 'active',
          created_at: now,
          last_updated_at: now,
        };
        store.c.mcpIntegrations.insert(record);
        return { id: record.id, slug: record.slug };
      },
    }),
    crud.list<never, ListQuery>({
      summary: 'List MCP integrations (scope {workspace|organisation}_mcp_integrations.list)',
      workspaceDefault: 'all',
      query: {
        properties: {
          workspace_id: S.workspaceRef,
          type: { type: 'string', enum: ['workspace', 'organisation', 'all'], default: 'all' },
          search: { type: 'string', maxLength: 255 },
          ...S.pagination,
        },
      },
      response: S.listOf(integrationSchema),
      handler({ query, workspace, principal, store }) {
        // `all` lists each kind the key may list; asking for one kind without its scope is a 403.
        const kinds = (query.type === 'all' ? ['organisation', 'workspace'] : [query.type]) as Kind[];
        const allowed = kinds.filter((k) => principal.scopes.has(`${k}_mcp_integrations.list`));
        if (allowed.length === 0) authorizeKind(principal, kinds[0]!, 'list');
        const search = query.search?.toLowerCase();
        // Filtered, not indexed by workspace: organisation integrations (workspace_id null) show too.
        return listPage(store.c.mcpIntegrations, query, {
          filter: (r) =>
            notArchived(r) &&
            allowed.includes(kindOf(r)) &&
            (r.workspace_id === null || workspace === null || r.workspace_id === workspace.id) &&
            (search === undefined || r.name.toLowerCase().includes(search) || r.slug.toLowerCase().includes(search)),
          view: (r) => view(store, r),
        });
      },
    }),
    crud.read({
      summary: 'Get an MCP integration by id or slug (scope {workspace|organisation}_mcp_integrations.read)',
      response: integrationSchema,
      handler({ params, principal, store }) {
        return view(store, visibleMcpIntegration(principal, findMcpIntegration(store, params.id!), 'read'));
      },
    }),
    crud.update<UpdateBody>({
      summary: 'Update an MCP integration (scope {workspace|organisation}_mcp_integrations.update)',
      body: { type: 'object', properties: fields, additionalProperties: false },
      response: S.empty,
      handler({ params, body, principal, store }) {
        const found = visibleMcpIntegration(principal, findMcpIntegration(store, params.id!), 'update');
        if (body.url !== undefined) assertUpstreamUrl(body.url, policy, 'url');
        const c = body.configurations;
        // Sealed before the write: the update callback only assigns.
        const sealed = c?.custom_headers === undefined ? undefined : sealHeaders(store, c.custom_headers);
        store.c.mcpIntegrations.update(found.id, (r) => ({
          ...r,
          name: body.name ?? r.name,
          description: body.description !== undefined ? body.description : r.description,
          url: body.url ?? r.url,
          auth_type: body.auth_type ?? r.auth_type,
          transport: body.transport ?? r.transport,
          // Each configurations key given replaces the stored one; keys not given stay.
          configurations: c?.passthrough_header === undefined ? r.configurations : publicConfigurations(c),
          configurations_sealed: sealed === undefined ? r.configurations_sealed : sealed,
          last_updated_at: nowIso(),
        }));
        return {};
      },
    }),
    crud.delete({
      summary: 'Delete (archive) an MCP integration (scope {workspace|organisation}_mcp_integrations.delete)',
      response: S.empty,
      handler({ params, principal, store }) {
        const found = visibleMcpIntegration(principal, findMcpIntegration(store, params.id!), 'delete');
        // Archived, not removed: servers built on it and the audit trail keep a target to name.
        store.c.mcpIntegrations.update(found.id, (r) => ({ ...r, status: 'archived', last_updated_at: nowIso() }));
        return {};
      },
    }),
  ];
}
