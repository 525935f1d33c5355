/**
 * The feedback service contract: feedback on a trace recorded by a plugin (a guardrail's
 * `on_fail` / `on_success`), stored where `/v1/feedback` stores it. The logging plugin provides it.
 */

export interface FeedbackEntry {
  trace_id: string;
  /** −10..10 */
  value: number;
  /** 0..1 */
  weight: number;
  metadata: Record<string, unknown>;
  workspace_id: string;
  organisation_id: string;
  api_key_id: string | null;
}

export interface FeedbackService {
  record(entry: FeedbackEntry): Promise<void>;
}

declare module './plugin.js' {
  interface AppServices {
    feedback: FeedbackService;
  }
}
