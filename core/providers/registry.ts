/**
 * The provider registry: adapter id → adapter. Built-in adapters are registered at boot; a plugin
 * adds its own through `app.registerProvider`. One registry per gateway instance.
 */
import type { ProviderAdapter } from './types.js';
import { openai } from './openai.js';
import { presetAdapters } from './presets.js';
import { azureOpenAI } from './azure-openai.js';
import { anthropic } from './anthropic/index.js';
import { google } from './google/index.js';
import { bedrock } from './bedrock/index.js';

/** Every adapter the gateway ships; plugins add more with `app.registerProvider`. */
export const BUILT_IN_ADAPTERS: ReadonlyArray<ProviderAdapter> = [openai, azureOpenAI, anthropic, google, bedrock, ...presetAdapters];

export class ProviderRegistry {
  readonly #adapters = new Map<string, ProviderAdapter>();

  constructor(builtIn: ReadonlyArray<ProviderAdapter> = BUILT_IN_ADAPTERS) {
    for (const adapter of builtIn) this.register(adapter);
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
