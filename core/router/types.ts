/**
 * What the router executes. A {@link Target} is one provider endpoint with its credentials; a
 * {@link RoutePlan} is what a routing plugin hands the router (the config-strategy plugin builds
 * it from `x-gateway-config` or a saved config). Without a plan, the request headers name one
 * target (direct mode).
 */

export interface Target {
  /** The provider adapter id, e.g. `openai`. */
  provider: string;
  /** The provider credential; never logged, never echoed. */
  apiKey?: string;
  /** Base URL override, e.g. `http://127.0.0.1:11434/v1` (already passed the SSRF guard). */
  customHost?: string;
  /** Extra headers sent upstream (virtual key `custom_headers`). */
  headers?: Record<string, string>;
  /** Client header names copied upstream verbatim. */
  forwardHeaders?: string[];
  /** Body fields merged over the request body (e.g. `{model: 'llama3'}`). */
  overrideParams?: Record<string, unknown>;
  /** Per-attempt timeout (ms). */
  requestTimeout?: number;
  /** Provider-specific fields (Azure resource/deployment/api-version, AWS region, …). */
  providerOptions?: Record<string, unknown>;
  /** Where this target sits in the config, for `x-gateway-last-used-option-index`. */
  path?: string;
}

/** A plan a routing plugin sets on the context. Strategies (fallback, load balance, …) extend it. */
export interface RoutePlan {
  /** The tree to execute; a single target is the simplest plan. */
  root: Target;
}
