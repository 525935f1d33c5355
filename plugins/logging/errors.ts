/**
 * The logging plugin's error catalog: what the logs, exports and feedback routes answer beyond
 * the shared admin errors (AdminErrors: 401, 403, 404, 400 on a field).
 */
import { defineError, type GatewayError } from '../../core/index.js';

const exportState = defineError(409, 'invalid_request_error', 'export_state_conflict', 'The export is not in a state that allows this.');
const exportNotReady = defineError(409, 'invalid_request_error', 'export_not_ready', 'The export has not finished yet.');
const storeUnavailable = defineError(503, 'server_error', 'logs_unavailable', 'The log store is unreachable; retry later.');
const feedbackKeyKind = defineError(403, 'permission_error', 'forbidden', 'Feedback is written with a workspace API key.');

export const LoggingErrors = {
  exportState: (status: string, action: string): GatewayError => exportState(`An export that is ${status} cannot be ${action}.`, { param: 'status' }),
  exportNotReady: (status: string): GatewayError => exportNotReady(`The export is ${status}; start it and wait for success before downloading.`, { param: 'status' }),
  feedbackKeyKind: (): GatewayError => feedbackKeyKind(),
  /** Distributed mode: PostgreSQL did not answer. The original failure goes to the log only. */
  storeUnavailable: (cause: unknown): GatewayError => storeUnavailable(undefined, { cause }),
};
