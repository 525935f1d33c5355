/**
 * The provider registry: adapter id → adapter. Built-in adapters are registered at boot; a plugin
 * adds its own through `app.registerProvider`. One registry per gateway instance (per runtime).
 *
 * Most adapters are pure data. One makes calls of its own: Vertex AI exchanges a service account
 * for an access token at an operator-supplied `token_uri`. Given the gateway's
 * {@link ProviderServices} (the URL policy of this runtime and the guarded upstream agent), the
 * registry builds that adapter with them, so the token call passes the same SSRF guard as every
 * upstream call.
 */
import type { ProviderAdapter } from './types.js';
import { openai } from './openai.js';
import { presetAdapters } from './presets.js';
import { azureOpenAI } from './azure-openai.js';
import { anthropic } from './anthropic/index.js';
import { google } from './google/index.js';
import { bedrock } from './bedrock/index.js';
import { createVertexAdapter, vertexAI, type TokenServices } from './vertex/index.js';

/** What the gateway lends adapters that call out themselves (the Vertex token exchange). */
export type ProviderServices = TokenServices;

/** Every adapter the gateway ships; plugins add more with `app.registerProvider`. */
export const BUILT_IN_ADAPTERS: ReadonlyArray<ProviderAdapter> = [openai, azureOpenAI, anthropic, google, bedrock, vertexAI, ...presetAdapters];

export class ProviderRegistry {
  readonly #adapters = new Map<string, ProviderAdapter>();

  /**
   * @example
   *   new ProviderRegistry(undefined, { policy: () => config.security.custom_hosts, dispatcher: agent })
   */
  constructor(builtIn: ReadonlyArray<ProviderAdapter> = BUILT_IN_ADAPTERS, services?: ProviderServices) {
    for (const adapter of builtIn) this.register(services !== undefined && adapter === vertexAI ? createVertexAdapter(services) : adapter);
  }

  register(adapter: ProviderAdapter): void {
    this.#adapters.set(adapter.id, adapter);
  }

  get(id: string): ProviderAdapter | undefined {
    return this.#adapters.get(id);
  }

  ids(): string[] {
    return [...this.#adapters.keys()];
  }
}
