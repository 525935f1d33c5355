/**
 * Guardrail errors. A denial is a 446 in the one error shape plus `hook_results`, the results of
 * every guardrail that ran (the reference's status and field, so its clients keep working).
 */
import { defineError, GatewayError } from '../../core/index.js';
import type { HookResults } from '../../core/index.js';

export const GuardrailErrors = {
  unknownGuardrail: defineError(400, 'invalid_request_error', 'unknown_guardrail', 'No saved guardrail with this id or slug exists in this workspace.'),
  unknownCheck: defineError(400, 'invalid_request_error', 'unknown_check', 'No guardrail check has this id.'),
  unavailable: defineError(500, 'server_error', 'guardrail_unavailable', 'A guardrail attached to this API key or workspace no longer exists.'),
};

/** `deny` and a failed check: 446 with every result. Also the body of the `event: error` that ends a stream. */
export class GuardrailDenied extends GatewayError {
  constructor(
    readonly results: HookResults,
    phase: 'input' | 'output',
  ) {
    super(
      446,
      'invalid_request_error',
      'guardrail_denied',
      phase === 'input'
        ? 'A guardrail denied the request: it was not sent to the model. See hook_results for the checks.'
        : 'A guardrail denied the answer. See hook_results for the checks.',
    );
  }

  override toJSON(): { error: { message: string; type: string; param: string | null; code: string } } {
    const base = super.toJSON();
    // Top level, as the reference has it; and inside `error`, where the OpenAI SDK exposes it (`err.error`).
    return { ...base, error: { ...base.error, hook_results: this.results }, hook_results: this.results } as ReturnType<GatewayError['toJSON']>;
  }
}
