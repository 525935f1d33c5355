/**
 * The logs API (admin-api.md §18, our list convention):
 *
 *   GET  /v1/logs/:id   logs.view    one record
 *   GET  /v1/logs       logs.list    filtered, newest first, paginated (log-list.ts)
 *   POST /v1/logs       logs.write   one CustomLog or an array, stored as records
 *
 * A workspace key sees only its workspace's records; an organisation key sees all, or one
 * workspace with `workspace_id`. Records reach the database within `flush_ms` of the response.
 */
import { AdminErrors, adminRoutes, assertVisible, defineAdminRoute, S, type GatewayApp, type RouteDefinition } from '../../core/index.js';
import type { LogStore } from './backend.js';
import { logListQuerySchema, type LogListQuery } from './log-filters.js';
import { acceptOneOrMany, customLogRecord, customLogsBody, customLogsWireBody, scrubCustomLog, type CustomLog } from './custom-log.js';
import { logListSchema } from './log-list.js';
import { logSchema } from './views.js';

const resource = 'log';

export interface LogRouteDeps {
  logs: LogStore;
  /** The stored text of a custom log's body, or null when bodies are not kept. */
  keepBody(value: unknown): string | null;
}

export function logRoutes(app: GatewayApp, deps: LogRouteDeps): RouteDefinition[] {
  const { logs } = deps;
  const [get, list, write] = adminRoutes(app, [
    defineAdminRoute({
      method: 'GET',
      path: '/v1/logs/:id',
      summary: 'Get one request log',
      resource,
      action: 'read',
      scope: 'logs.view',
      level: 'workspace',
      workspaceDefault: 'all',
      response: logSchema,
      async handler({ params, principal }) {
        return assertVisible(principal, await logs.get(params.id!), 'Log');
      },
    }),
    defineAdminRoute<never, LogListQuery>({
      method: 'GET',
      path: '/v1/logs',
      // Apps call it at volume and it writes no control-plane record: not serialized across hosts.
      writeScope: false,
      summary: 'List request logs, newest first',
      resource,
      action: 'list',
      scope: 'logs.list',
      level: 'workspace',
      workspaceDefault: 'all',
      query: logListQuerySchema,
      response: logListSchema,
      async handler({ query, workspace }) {
        return logs.list(query, workspace);
      },
    }),
    defineAdminRoute<{ logs: CustomLog[] }>({
      method: 'POST',
      path: '/v1/logs',
      summary: 'Insert custom logs (one CustomLog or an array)',
      resource,
      action: 'create',
      scope: 'logs.write',
      level: 'workspace',
      body: customLogsBody,
      response: S.record({ status: S.str, log_ids: S.strings }),
      async handler({ body, principal, workspace }) {
        if (principal.workspace_id === null) throw AdminErrors.forbidden('Custom logs are written with a workspace API key.');
        const records = body.logs.map((log) => customLogRecord(log, { principal, workspace, keepBody: deps.keepBody }));
        // An explicit write: the answer waits until it is committed.
        await logs.insert(records);
        return { status: 'success', log_ids: records.map((r) => r.id) };
      },
    }),
  ]);
  return [get!, list!, acceptOneOrMany(write!, 'logs', { wireBody: customLogsWireBody, prepare: scrubCustomLog })];
}
