/**
 * Request facts for policy conditions: one definition in core, shared with usage limits.
 */
export { factOf, conditionHolds, type WorkspaceFacts } from '../../core/index.js';
