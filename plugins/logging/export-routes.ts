/**
 * Log exports (admin-api.md §18), scope `logs.export`:
 *
 *   POST /v1/logs/exports                 {workspace_id, filters*, requested_data*} → {id, total, object}  (draft)
 *   GET  /v1/logs/exports                 list (our envelope, paginated)
 *   GET  /v1/logs/exports/:id             one export
 *   PUT  /v1/logs/exports/:id             new filters or fields; back to draft
 *   POST /v1/logs/exports/:id/start       → in_progress, then success (a background run)
 *   POST /v1/logs/exports/:id/cancel      → stopped
 *   GET  /v1/logs/exports/:id/download    the records as JSON Lines (application/x-ndjson)
 *
 * The reference's download answers `{signed_url}` to a file in object storage; a self-hosted
 * gateway has no such store, so the download is the file itself.
 */
import {
  AdminErrors,
  adminRoutes,
  assertVisible,
  authorize,
  defineAdminRoute,
  nowIso,
  reply,
  S,
  uuidv7,
  type GatewayApp,
  type RouteDefinition,
} from '../../core/index.js';
import { exportFiltersSchema, exportSelection, requestedDataSchema, type ExportFilters, type RequestedField } from './export-filters.js';
import type { ExportRecord } from './export-store.js';
import type { ExportStore } from './backend.js';
import { countExport, exportJsonl, type ExportRunner, type ExportSources } from './export-job.js';
import { LoggingErrors } from './errors.js';
import { idPrefix } from './scan.js';

const resource = 'log_export';
const scope = 'logs.export';

const exportSchema = S.record({
  id: S.str,
  organisation_id: S.str,
  workspace_id: S.strOrNull,
  filters: S.anyObject,
  requested_data: S.strings,
  status: S.str,
  description: S.strOrNull,
  created_at: S.str,
  last_updated_at: S.str,
  created_by: S.strOrNull,
  total: S.int,
  object: S.str,
});

const created = S.record({ id: S.str, total: S.int, object: S.str });
const message = S.record({ message: S.str, object: S.str });

interface ExportBody {
  workspace_id?: string;
  filters: ExportFilters;
  requested_data: RequestedField[];
  description?: string;
}

const exportBody = (required: string[]): S.JsonSchema => ({
  type: 'object',
  properties: {
    workspace_id: S.workspaceRef,
    filters: exportFiltersSchema,
    requested_data: requestedDataSchema,
    description: { type: 'string', maxLength: 1024 },
  },
  required,
  additionalProperties: false,
});

const view = (e: ExportRecord): ExportRecord & { object: 'export' } => ({ ...e, object: 'export' });

export interface ExportRouteDeps {
  db: ExportStore;
  sources: ExportSources;
  runner: ExportRunner;
}

export function exportRoutes(app: GatewayApp, deps: ExportRouteDeps): RouteDefinition[] {
  const { db, sources, runner } = deps;
  const visible = async (principal: Parameters<typeof assertVisible>[0], id: string): Promise<ExportRecord> =>
    assertVisible(principal, await db.get(id), 'Export');

  /** Checks the filters (a bad metadata or time range is a 400 now, not a failed run) and counts. */
  function countDraft(e: ExportRecord): Promise<number> {
    exportSelection(e.filters, e.workspace_id, sources.resolveWorkspace);
    return countExport(sources, e);
  }

  const routes = adminRoutes(app, [
    defineAdminRoute<ExportBody>({
      method: 'POST',
      path: '/v1/logs/exports',
      summary: 'Create a log export (draft)',
      resource,
      action: 'create',
      scope,
      level: 'workspace',
      workspaceDefault: 'all',
      body: exportBody(['filters', 'requested_data']),
      response: created,
      async handler({ body, principal, workspace }) {
        const now = nowIso();
        const draft: ExportRecord = {
          id: uuidv7(),
          organisation_id: principal.organisation_id,
          workspace_id: workspace?.id ?? null,
          filters: body.filters,
          requested_data: body.requested_data,
          status: 'draft',
          description: body.description ?? null,
          created_at: now,
          last_updated_at: now,
          created_by: principal.user_id ?? principal.key_id,
          total: 0,
          until: null,
        };
        draft.total = await countDraft(draft);
        await db.put(draft);
        return { id: draft.id, total: draft.total, object: 'export' };
      },
    }),
    defineAdminRoute<never, { current_page: number; page_size: number }>({
      method: 'GET',
      path: '/v1/logs/exports',
      summary: 'List log exports, newest first',
      resource,
      action: 'list',
      scope,
      level: 'workspace',
      workspaceDefault: 'all',
      query: { properties: { workspace_id: S.workspaceRef, ...S.pagination } },
      response: S.listOf(exportSchema),
      async handler({ query, workspace }) {
        const { total, data } = await db.list(workspace?.id ?? null, query.current_page * query.page_size, query.page_size);
        return { object: 'list', total, data: data.map(view) };
      },
    }),
    defineAdminRoute({
      method: 'GET',
      path: '/v1/logs/exports/:id',
      summary: 'Get a log export',
      resource,
      action: 'read',
      scope,
      level: 'workspace',
      workspaceDefault: 'all',
      response: exportSchema,
      async handler({ params, principal }) {
        return view(await visible(principal, params.id!));
      },
    }),
    defineAdminRoute<Omit<ExportBody, 'requested_data'> & { requested_data?: RequestedField[] }>({
      method: 'PUT',
      path: '/v1/logs/exports/:id',
      summary: 'Change a log export (back to draft)',
      resource,
      action: 'update',
      scope,
      level: 'workspace',
      workspaceDefault: 'all',
      body: exportBody(['filters']),
      response: created,
      async handler({ params, body, principal }) {
        const current = await visible(principal, params.id!);
        const next: ExportRecord = { ...current, filters: body.filters, requested_data: body.requested_data ?? current.requested_data, description: body.description ?? current.description };
        const total = await countDraft(next);
        const saved = await db.transition(current.id, {
          from: ['draft', 'stopped', 'failed', 'success'],
          action: 'changed',
          change: () => ({ filters: next.filters, requested_data: next.requested_data, description: next.description, status: 'draft', total, until: null }),
        });
        return { id: saved.id, total: saved.total, object: 'export' };
      },
    }),
    defineAdminRoute({
      method: 'POST',
      path: '/v1/logs/exports/:id/start',
      summary: 'Start a log export',
      resource,
      action: 'export',
      scope,
      level: 'workspace',
      workspaceDefault: 'all',
      response: message,
      async handler({ params, principal }) {
        const e = await visible(principal, params.id!);
        // Everything logged up to now belongs to the run; later records never do.
        await db.transition(e.id, { from: ['draft', 'stopped', 'failed', 'success'], action: 'started', change: () => ({ status: 'in_progress', until: idPrefix(Date.now() + 1) }) });
        runner.start(e.id);
        return { message: 'Export started.', object: 'export' };
      },
    }),
    defineAdminRoute({
      method: 'POST',
      path: '/v1/logs/exports/:id/cancel',
      summary: 'Cancel a log export',
      resource,
      action: 'cancel',
      scope,
      level: 'workspace',
      workspaceDefault: 'all',
      response: message,
      async handler({ params, principal }) {
        const e = await visible(principal, params.id!);
        await db.transition(e.id, { from: ['draft', 'in_progress'], action: 'cancelled', change: () => ({ status: 'stopped' }) });
        runner.cancel(e.id);
        return { message: 'Export stopped.', object: 'export' };
      },
    }),
  ]);
  return [...routes, downloadRoute(db, sources)];
}

/**
 * The download is not JSON, so it is not an admin-framework route; it makes the same checks
 * (principal, key kind and scope, workspace visibility) with the framework's own functions.
 */
function downloadRoute(db: ExportStore, sources: ExportSources): RouteDefinition {
  const def = { level: 'workspace' as const, scope };
  return {
    method: 'GET',
    path: '/v1/logs/exports/:id/download',
    body: 'none',
    // Read by the OpenAPI builder like an admin route's.
    meta: {
      admin: true,
      summary: 'Download a finished log export as JSON Lines (application/x-ndjson)',
      resource,
      action: 'download',
      scope,
      level: def.level,
      public: false,
      query: undefined,
      body: undefined,
      response: { type: 'string', description: 'One JSON object per line: the requested fields of each record, oldest record first.' },
    },
    async handler(ctx, params) {
      const principal = ctx.get('principal');
      if (principal === undefined) throw AdminErrors.unauthenticated();
      authorize(principal, def);
      const e = assertVisible(principal, await db.get(params.id!), 'Export');
      if (e.status !== 'success') throw LoggingErrors.exportNotReady(e.status);
      // Streamed: the core writes each chunk with backpressure, never the whole file at once.
      return reply(200, exportJsonl(sources, e, ctx.signal), {
        'content-type': 'application/x-ndjson',
        'content-disposition': `attachment; filename="log-export-${e.id}.jsonl"`,
      });
    },
  };
}
