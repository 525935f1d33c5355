/**
 * Audit logs (admin-api.md §17): the trail core/admin/audit.ts writes on every admin write, read
 * back newest first with filters. Organisation keys only.
 *
 * The answer is our list envelope `{object:"list", total, data}`: the reference's
 * `{records, total, object:"analytics-graph"}` is one of its inconsistencies (§23.3), and one
 * convention for every list wins. `start_time`/`end_time` are required there; here they default
 * to the last 30 days, so a bare GET shows recent activity.
 */
import { AdminErrors, defineAdminRoute, listPage, findWorkspace, S, type AnyAdminRoute, type Records } from '../../core/index.js';

type Audit = Records.AuditRecord;

const DEFAULT_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;

const auditSchema = S.record({
  id: S.str,
  timestamp: S.str,
  method: S.str,
  uri: S.str,
  request_id: S.str,
  request_body: S.str,
  query_params: S.str,
  user_id: S.strOrNull,
  api_key_id: S.strOrNull,
  user_type: S.str,
  organisation_id: S.str,
  workspace_id: S.strOrNull,
  response_status_code: S.int,
  resource_type: S.str,
  action: S.str,
  client_ip: S.str,
});

const str255 = { type: 'string', minLength: 1, maxLength: 255 };

interface ListQuery {
  start_time?: string;
  end_time?: string;
  method?: string;
  uri?: string;
  request_id?: string;
  user_id?: string;
  api_key_id?: string;
  workspace_id?: string;
  resource_type?: string;
  action?: string;
  client_ip?: string;
  user_type?: Audit['user_type'];
  response_status_code?: number;
  current_page: number;
  page_size: number;
}

/** Exact-match filters: query parameter = record field. */
const EXACT = ['method', 'uri', 'request_id', 'user_id', 'api_key_id', 'resource_type', 'action', 'client_ip', 'user_type', 'response_status_code'] as const;

export const auditLogRoutes: AnyAdminRoute[] = [
  defineAdminRoute<never, ListQuery>({
    method: 'GET',
    path: '/v1/audit-logs',
    summary: 'List audit log records',
    resource: 'audit_log',
    action: 'list',
    scope: 'audit_logs.list',
    level: 'organisation',
    query: {
      properties: {
        start_time: S.dateTime,
        end_time: S.dateTime,
        // Reads are not audited, so GET never matches; it is accepted for symmetry with the UI.
        method: { type: 'string', enum: ['POST', 'PUT', 'PATCH', 'DELETE', 'GET'] },
        uri: { type: 'string', minLength: 1, maxLength: 2048 },
        request_id: str255,
        user_id: str255,
        api_key_id: str255,
        workspace_id: S.workspaceRef,
        resource_type: str255,
        action: str255,
        client_ip: str255,
        user_type: { type: 'string', enum: ['user', 'api_key'] },
        response_status_code: { type: 'integer', minimum: 100, maximum: 599 },
        current_page: S.pagination.current_page,
        page_size: S.pagination.page_size,
      },
    },
    response: S.listOf(auditSchema),
    handler({ query, store }) {
      const end = query.end_time === undefined ? new Date() : new Date(query.end_time);
      const start = query.start_time === undefined ? new Date(end.getTime() - DEFAULT_WINDOW_MS) : new Date(query.start_time);
      // Only a range the caller wrote is an error; a start past the default end simply finds nothing.
      if (query.start_time !== undefined && query.end_time !== undefined && start > end) {
        throw AdminErrors.invalid('start_time must not be after end_time.', 'start_time');
      }
      // Records store ISO strings in UTC (`…Z`), which compare in time order as strings.
      const from = start.toISOString();
      const to = end.toISOString();
      // A workspace named by slug is filtered by its id; an unknown one simply matches nothing.
      const workspaceId = query.workspace_id === undefined ? undefined : (findWorkspace(store, query.workspace_id)?.id ?? query.workspace_id);
      const exact = EXACT.filter((k) => query[k] !== undefined);
      // A full scan, newest first (ids are UUIDv7): fine for an admin read of a bounded trail.
      return listPage(store.c.audit, query, {
        filter: (r) =>
          r.timestamp >= from &&
          r.timestamp <= to &&
          (workspaceId === undefined || r.workspace_id === workspaceId) &&
          exact.every((k) => r[k] === query[k]),
        view: (r) => r,
      });
    },
  }),
];
