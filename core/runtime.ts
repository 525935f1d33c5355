/**
 * One generation of the gateway's request-serving state: the config, the built pipeline, the
 * route table, the compiled validators. A reload builds a new runtime and swaps it in atomically;
 * requests in flight finish on the runtime they started with.
 */
import type { Dispatcher } from 'undici';
import type { GatewayConfig } from './config/types.js';
import type { Pipeline } from './pipeline.js';
import type { RouteTable } from './routes.js';
import type { ProviderRegistry } from './providers/registry.js';
import type { RequestValidator } from './validation/index.js';
import type { Logger } from './logger.js';
import type { Store } from './store/store.js';
import type { TokenCounter } from './workers/types.js';

export interface Runtime {
  readonly config: GatewayConfig;
  readonly pipeline: Pipeline;
  readonly routes: RouteTable;
  readonly providers: ProviderRegistry;
  readonly validate: RequestValidator;
  readonly store: Store;
  /** Token counting (the worker pool), when the gateway has one. */
  readonly tokens?: TokenCounter;
  /** The undici dispatcher holding keep-alive pools per upstream origin (shared across reloads). */
  readonly agent: Dispatcher;
  readonly log: Logger;
  /** Requests currently being served by this runtime. */
  inflight: number;
}
