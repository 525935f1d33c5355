/** The `realtime` plugin's errors (stable codes; the core's catalog covers the upstream failures). */
import { defineError } from '../../core/index.js';

export const RealtimeErrors = {
  /** The routed target's provider has no Realtime API the gateway knows how to reach. */
  unsupportedProvider: defineError(400, 'invalid_request_error', 'realtime_unsupported_provider', 'The Realtime API is served for openai and azure-openai targets only.'),
  /** A WebSocket upgrade to the Realtime path without a model (or Azure deployment) to open. */
  missingModel: defineError(400, 'invalid_request_error', 'realtime_missing_model', 'A Realtime session needs ?model= (or, for Azure, ?deployment=).'),
};
