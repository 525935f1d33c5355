/**
 * What the router executes.
 *
 * A {@link Target} is one provider endpoint with its credentials. A {@link RouteNode} is a node of
 * a routing config (the `x-gateway-config` object or a saved config) after a routing plugin
 * resolved its virtual keys and providers: a strategy over child nodes, or a leaf target. Without
 * a plan, the request headers name one target (direct mode).
 */
import type { BreakerSettings } from './breaker.js';

declare module '../context.js' {
  interface ContextVars {
    /**
     * The routing config the request runs with, as saved or sent (frozen when saved), set by the
     * routing plugin: plugins read their own fields from it (guardrail lists, …).
     */
    routingConfig: Record<string, unknown>;
  }
}

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
  /** A label for operators (breaker state, logs): the virtual key or provider slug, or the target's name. */
  label?: string;
}

export type StrategyMode = 'single' | 'fallback' | 'loadbalance' | 'conditional';

export interface RetrySettings {
  /** Retries after the first call. */
  attempts: number;
  /** Upstream statuses worth a retry; connection errors and timeouts always are. */
  on_status_codes?: number[];
  /** Wait what `retry-after` / `retry-after-ms` asks (bounded) instead of the backoff. */
  use_retry_after_header?: boolean;
}

/** A node of a resolved routing config. Leaves carry a `target`; inner nodes carry `targets`. */
export interface RouteNode {
  strategy?: {
    mode: StrategyMode;
    /** fallback: move on only after these upstream statuses (any non-2xx when absent). */
    on_status_codes?: number[];
    /** conditional: the first matching query picks the child named `then`. */
    conditions?: Array<{ query: Record<string, unknown>; then: string }>;
    default?: string;
  };
  retry?: RetrySettings;
  request_timeout?: number;
  override_params?: Record<string, unknown>;
  custom_host?: string;
  forward_headers?: string[];
  /** loadbalance weight; default 1; 0 is never chosen. */
  weight?: number;
  /** The name conditional routing refers to. */
  name?: string;
  targets?: RouteNode[];
  /** A leaf: the provider call this node makes (custom host, headers and overrides are applied down the tree). */
  target?: Target;
}

/** What a routing plugin hands the router. */
export interface RoutePlan {
  root: RouteNode;
  /** Circuit-breaker settings for this plan's targets; none: breakers are not consulted. */
  breaker?: BreakerSettings;
  /** Where the plan came from, for logs (`x-gateway-config`, a saved config's slug, a virtual key, …). */
  source?: string;
  /** The config's `cache` block (`mode` simple|semantic, `max_age` seconds), for the cache plugin. */
  cache?: { mode: 'simple' | 'semantic'; max_age?: number };
}
