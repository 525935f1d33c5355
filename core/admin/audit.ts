/**
 * The audit trail: every admin write (create, update, delete, rotate, reset, …) becomes a record
 * with who (user or key), what (method, uri, resource, action, body with secrets masked), where
 * from (client ip), and the outcome (status). Failed attempts are recorded too: a 403 is exactly
 * what an auditor looks for.
 *
 * The write is asynchronous (batched by LMDB with other writes of the same turn): the answer does
 * not wait on it, and a graceful stop flushes it.
 */
import type { GatewayContext } from '../context.js';
import type { Principal } from '../auth/principal.js';
import type { Store } from '../store/store.js';
import type { AuditRecord } from '../store/records.js';
import { uuidv7 } from '../store/ids.js';

/** Field names whose values are secrets, at any depth of a request body. */
const SECRET_FIELD = /^(api_key|apikey|secret|password|token|authorization|.*_secret|.*_api_key|.*secret_access_key|.*_access_key|.*session_token|client_secret|.*service_account_json|custom_headers)$/i;
const KEEP = new Set(['virtual_key', 'secret_reference_id']);

/**
 * Replaces secret values with `[masked]`, keeping the structure. A bare `key` is a secret only at
 * the top of a body (a virtual key's or integration's `key`); deeper down it is a name, as in a
 * policy's `conditions[].key`, and stays readable for the auditor.
 */
export function maskSecrets(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  // Past the depth we inspect, nothing is kept: an unread level could hold a key.
  if (depth > 8) return '[masked: too deep]';
  if (Array.isArray(value)) return value.map((v) => maskSecrets(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const secret = (SECRET_FIELD.test(k) && !KEEP.has(k)) || (depth === 0 && k === 'key');
    out[k] = secret && v !== null && v !== undefined ? '[masked]' : maskSecrets(v, depth + 1);
  }
  return out;
}

export interface AuditInput {
  ctx: GatewayContext;
  principal: Principal;
  resource: string;
  action: string;
  status: number;
  workspaceId: string | null;
  body: unknown;
  query: Record<string, unknown>;
}

export function recordAudit(store: Store, a: AuditInput): void {
  const record: AuditRecord = {
    id: uuidv7(),
    timestamp: new Date().toISOString(),
    method: a.ctx.method,
    uri: a.ctx.path,
    request_id: a.ctx.id,
    request_body: JSON.stringify(maskSecrets(a.body) ?? {}),
    query_params: JSON.stringify(maskSecrets(a.query) ?? {}),
    user_id: a.principal.user_id,
    api_key_id: a.principal.key_id,
    user_type: a.principal.key_id === null ? 'user' : 'api_key',
    organisation_id: a.principal.organisation_id,
    workspace_id: a.workspaceId,
    response_status_code: a.status,
    resource_type: a.resource,
    action: a.action,
    client_ip: a.ctx.remoteAddress,
  };
  store.c.audit.append(record);
}
