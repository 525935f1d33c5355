/**
 * OpenAI and the OpenAI-compatible family: bearer auth, paths as the client sent them, bodies
 * forwarded untranslated (unknown parameters pass through: providers add them faster than any
 * gateway). Only OpenAI itself serves the Responses API natively; the compatible family gets it
 * translated to chat completions (core/ingress/responses), which every one of them speaks.
 */
import type { ProviderAdapter } from './types.js';
import type { ModelRoute } from '../routes.js';
import type { Target } from '../router/types.js';

/** Client dialects OpenAI's own API serves (Azure OpenAI's too): `POST /v1/responses`. */
export const OPENAI_NATIVE_ROUTES: ReadonlySet<ModelRoute> = new Set<ModelRoute>(['responses']);

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

export const openai: ProviderAdapter = { ...openAICompatible('openai', 'https://api.openai.com/v1'), nativeRoutes: OPENAI_NATIVE_ROUTES };
