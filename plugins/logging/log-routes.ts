/**
 * The logs API (admin-api.md §18, our list convention):
 *
 *   GET  /v1/logs/:id   logs.view    one record
 *   GET  /v1/logs       logs.list    filtered, newest first, paginated
 *   POST /v1/logs       logs.write   one CustomLog or an array, stored as records
 *
 * A workspace key sees only its workspace's records; an organisation key sees all, or one
 * workspace with `workspace_id`. Records reach the database within `flush_ms` of the response.
 */
import { AdminErrors, adminRoutes, assertVisible, defineAdminRoute, S, type GatewayApp, type RouteDefinition } from '../../core/index.js';
import type { LogDb, StoredLog } from './log-db.js';
import { logFilter, logListQuerySchema, type LogListQuery } from './log-filters.js';
import { acceptOneOrMany, customLogRecord, customLogsBody, customLogsWireBody, scrubCustomLog, type CustomLog } from './custom-log.js';
import { scan, timeRange } from './scan.js';
import { logSchema } from './views.js';

const resource = 'log';

export interface LogRouteDeps {
  db: LogDb;
  /** The stored text of a custom log's body, or null when bodies are not kept. */
  keepBody(value: unknown): string | null;
}

export function logRoutes(app: GatewayApp, deps: LogRouteDeps): RouteDefinition[] {
  const { db } = deps;
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
      handler({ params, principal }) {
        return assertVisible(principal, db.get(params.id!), 'Log');
      },
    }),
    defineAdminRoute<never, LogListQuery>({
      method: 'GET',
      path: '/v1/logs',
      summary: 'List request logs, newest first',
      resource,
      action: 'list',
      scope: 'logs.list',
      level: 'workspace',
      workspaceDefault: 'all',
      query: logListQuerySchema,
      response: S.listOf(logSchema),
      async handler({ query, workspace }) {
        const filter = logFilter(query, workspace);
        const offset = query.current_page * query.page_size;
        const data: StoredLog[] = [];
        let total = 0;
        for await (const chunk of scan(db, { ...timeRange(filter.fromMs, filter.toMs), newestFirst: true })) {
          for (const record of chunk) {
            if (!filter.match(record)) continue;
            if (total >= offset && data.length < query.page_size) data.push(record);
            total++;
          }
        }
        return { object: 'list', total, data };
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
        // An explicit write: the answer waits until it is committed (one batched transaction).
        await Promise.all(records.map((r) => db.put(r.id, r)));
        return { status: 'success', log_ids: records.map((r) => r.id) };
      },
    }),
  ]);
  return [get!, list!, acceptOneOrMany(write!, 'logs', { wireBody: customLogsWireBody, prepare: scrubCustomLog })];
}
