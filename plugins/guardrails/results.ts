/**
 * What guardrails report (the types live in core, so logs, analytics and metrics read them).
 */
export type { CheckOutcome, GuardrailOutcome, HookResults } from '../../core/index.js';
