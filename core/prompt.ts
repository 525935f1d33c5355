/**
 * Which stored prompt a request came from: the `prompts` plugin sets it (`ctx.set('promptRef', …)`)
 * when it renders a prompt into a model call (`POST /v1/prompts/{id}/completions`, or a Responses
 * call whose `prompt.id` names a stored prompt). Log records carry it as `prompt_slug` and
 * `prompt_version_id`, the logs API filters by it, and analytics rolls it up as the `_prompt`
 * dimension (`prompt_slug` filter, `GET /v1/analytics/groups/prompts`).
 */
export interface PromptRef {
  slug: string;
  /** The immutable version's id. */
  version_id: string;
  version: number;
}

/** The metadata key analytics keeps a request's prompt under (beside the caller's metadata). */
export const PROMPT_METADATA_KEY = '_prompt';

declare module './context.js' {
  interface ContextVars {
    /** The stored prompt this request renders, set by the `prompts` plugin. */
    promptRef: PromptRef;
  }
}
