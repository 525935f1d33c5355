/**
 * MCP servers (admin-api.md §15): a workspace's instance of an MCP integration, the thing MCP
 * clients connect to at `<base>/<slug>/mcp`. Create, list, get, update (name, description),
 * delete (archives). Capabilities (GET/PUT …/capabilities) and the connection test (POST …/test)
 * live in plugins/mcp-gateway/admin.ts; user access and connections are not implemented.
 *
 * A server may be built on an integration of its own workspace or on an organisation-level one;
 * never on another workspace's, and never on an archived one.
 */
import {
  AdminErrors,
  assertVisible,
  crudRoutes,
  listPage,
  nowIso,
  slugify,
  uuidv7,
  S,
  type AnyAdminRoute,
  type GatewayContext,
  type Records,
  type Store,
} from '../../core/index.js';
import { findMcpIntegration } from './mcp-integrations.js';

type Server = Records.McpServerRecord;

/** The base URL MCP clients use, for the request being answered (no trailing slash). */
/** First path segments the gateway serves itself: a server there would be unreachable or shadow them. */
const RESERVED_SLUGS: ReadonlySet<string> = new Set(['v1', 'console', 'health', 'metrics', 'model-configs']);

export type BaseUrl = (ctx: GatewayContext) => string;

const integrationDetails = S.record({ id: S.str, slug: S.str, status: S.str, url: S.str, transport: S.str, auth_type: S.str });

const serverSchema = S.record(
  {
    id: S.str,
    slug: S.str,
    name: S.str,
    description: S.strOrNull,
    status: S.str,
    url: S.str,
    mcp_integration_id: S.str,
    mcp_integration_details: integrationDetails,
    workspace_id: S.str,
    organisation_id: S.str,
    owner_id: S.strOrNull,
    created_at: S.str,
    last_updated_at: S.str,
  },
  // Details are left out only if the integration record itself is gone.
  ['id', 'slug', 'name', 'description', 'status', 'url', 'mcp_integration_id', 'workspace_id', 'organisation_id', 'owner_id', 'created_at', 'last_updated_at'],
);

const description = { type: 'string', maxLength: 500, nullable: true };

interface CreateBody {
  name: string;
  mcp_integration_id: string;
  description?: string | null;
  slug?: string;
}

interface ListQuery {
  id?: string;
  search?: string;
  current_page: number;
  page_size: number;
}

function view(store: Store, base: string, s: Server): Record<string, unknown> {
  const i = store.c.mcpIntegrations.get(s.mcp_integration_id);
  return {
    ...s,
    url: `${base}/${encodeURIComponent(s.slug)}/mcp`,
    ...(i === undefined ? {} : { mcp_integration_details: { id: i.id, slug: i.slug, status: i.status, url: i.url, transport: i.transport, auth_type: i.auth_type } }),
  };
}

const resource = 'mcp_server';
const crud = crudRoutes({ path: '/v1/mcp-servers', key: 'id', resource, scopes: 'mcp_servers', level: 'workspace' });
const what = 'MCP server';

/** By id or slug. */
export function findMcpServer(store: Store, ref: string): Server | undefined {
  return store.c.mcpServers.get(ref) ?? store.c.mcpServers.getBy('slug', ref);
}

export function mcpServerRoutes(baseUrl: BaseUrl): AnyAdminRoute[] {
  return [
    crud.create<CreateBody>({
      summary: 'Create an MCP server',
      body: {
        type: 'object',
        properties: {
          name: S.name255,
          mcp_integration_id: { type: 'string', minLength: 1, maxLength: 255, description: 'MCP integration id or slug.' },
          workspace_id: S.workspaceRef,
          description,
          slug: { type: 'string', pattern: '^[a-zA-Z0-9_-]+$', minLength: 3, maxLength: 50 },
        },
        required: ['name', 'mcp_integration_id'],
        additionalProperties: false,
      },
      response: S.record({ id: S.str, slug: S.str }),
      handler({ body, workspace, principal, store }) {
        const integration = findMcpIntegration(store, body.mcp_integration_id);
        // Another workspace's integration answers exactly like a missing one.
        if (
          integration === undefined ||
          integration.status !== 'active' ||
          (integration.workspace_id !== null && integration.workspace_id !== workspace!.id)
        ) {
          throw AdminErrors.notFound('The MCP integration named by mcp_integration_id does not exist.', 'mcp_integration_id');
        }
        const slug = body.slug ?? slugify(body.name);
        // `/<slug>/mcp` must not be a path the gateway already serves (slugs are 3+ characters, so
        // the aggregated `/v1/mcp` is safe by length; `v1` stays listed should that bound change).
        if (RESERVED_SLUGS.has(slug.toLowerCase())) {
          throw AdminErrors.invalid(`The slug "${slug}" is reserved: /${slug}/mcp is one of the gateway's own paths. Choose another slug.`, 'slug');
        }
        const now = nowIso();
        const server: Server = {
          id: uuidv7(),
          slug,
          name: body.name,
          description: body.description ?? null,
          mcp_integration_id: integration.id,
          workspace_id: workspace!.id,
          organisation_id: principal.organisation_id,
          owner_id: principal.user_id,
          status: 'active',
          created_at: now,
          last_updated_at: now,
        };
        store.c.mcpServers.insert(server);
        return { id: server.id, slug: server.slug };
      },
    }),
    crud.list<never, ListQuery>({
      summary: 'List MCP servers',
      workspaceDefault: 'all',
      query: {
        properties: {
          workspace_id: S.workspaceRef,
          id: { type: 'string', maxLength: 4096, description: 'Comma-separated server ids.' },
          search: { type: 'string', maxLength: 255 },
          ...S.pagination,
        },
      },
      response: S.listOf(serverSchema),
      handler({ ctx, query, workspace, store }) {
        const ids = query.id === undefined ? undefined : new Set(query.id.split(',').map((s) => s.trim()));
        const search = query.search?.toLowerCase();
        const base = baseUrl(ctx);
        return listPage(store.c.mcpServers, query, {
          workspace,
          filter: (s) =>
            s.status === 'active' &&
            (ids === undefined || ids.has(s.id)) &&
            (search === undefined || s.name.toLowerCase().includes(search) || s.slug.toLowerCase().includes(search)),
          view: (s) => view(store, base, s),
        });
      },
    }),
    crud.read({
      summary: 'Get an MCP server (by id or slug)',
      response: serverSchema,
      handler({ ctx, params, principal, store }) {
        return view(store, baseUrl(ctx), assertVisible(principal, findMcpServer(store, params.id!), what));
      },
    }),
    crud.update<{ name?: string; description?: string | null }>({
      summary: 'Update an MCP server',
      body: { type: 'object', properties: { name: S.name255, description }, additionalProperties: false },
      response: S.empty,
      handler({ params, body, principal, store }) {
        const found = assertVisible(principal, findMcpServer(store, params.id!), what);
        store.c.mcpServers.update(found.id, (s) => ({
          ...s,
          name: body.name ?? s.name,
          description: body.description !== undefined ? body.description : s.description,
          last_updated_at: nowIso(),
        }));
        return {};
      },
    }),
    crud.delete({
      summary: 'Delete (archive) an MCP server',
      response: S.empty,
      handler({ params, principal, store }) {
        const found = assertVisible(principal, findMcpServer(store, params.id!), what);
        store.c.mcpServers.update(found.id, (s) => ({ ...s, status: 'archived', last_updated_at: nowIso() }));
        return {};
      },
    }),
  ];
}
