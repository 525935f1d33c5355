/**
 * OpenAI and the OpenAI-compatible family: bearer auth, paths as the client sent them, bodies
 * forwarded untranslated (unknown parameters pass through: providers add them faster than any
 * gateway).
 */
import type { ProviderAdapter } from './types.js';
import type { Target } from '../router/types.js';

function bearer(target: Target): Record<string, string> {
  return target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {};
}

/**
 * Builds an adapter for a server that speaks OpenAI's API at `baseUrl`.
 *
 * @example
 *   app.registerProvider(openAICompatible('my-vllm', 'http://10.0.0.5:8000/v1'));
 */
export function openAICompatible(id: string, baseUrl: string): ProviderAdapter {
  return { id, baseUrl, authHeaders: bearer };
}

export const openai: ProviderAdapter = openAICompatible('openai', 'https://api.openai.com/v1');
