/**
 * The `responses-store` plugin's errors. A response another workspace kept is "not found", the
 * same answer as an id nobody kept: its existence is not the caller's to learn.
 */
import { defineError } from '../../core/index.js';

export const ResponsesStoreErrors = {
  notFound: defineError(404, 'invalid_request_error', 'response_not_found', 'No response with this id was found.'),
  conversationTooLarge: defineError(400, 'invalid_request_error', 'conversation_too_large', 'The conversation previous_response_id continues is larger than this gateway sends on (max_conversation_bytes); start a new one.'),
  invalidQuery: defineError(400, 'invalid_request_error', 'invalid_query_parameter', 'A query parameter is not valid.'),
  unavailable: defineError(503, 'server_error', 'responses_store_unavailable', 'Kept responses cannot be read right now (the database is unreachable); retry later.'),
} as const;
