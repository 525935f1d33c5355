/**
 * The OpenAI-compatible family: servers that speak OpenAI's API at their own base URL with bearer
 * auth. One adapter configured many times (`openAICompatible`); unknown parameters pass through,
 * none is dropped. The Responses API reaches them translated to chat completions (they have no
 * `nativeRoutes`; see core/ingress/responses). Local servers (ollama, vllm, lm-studio) default to their usual loopback ports;
 * `custom_host` / `x-gateway-custom-host` points any of them elsewhere.
 */
import { openAICompatible } from './openai.js';
import type { ProviderAdapter } from './types.js';

export const OPENAI_COMPATIBLE_PRESETS: Readonly<Record<string, string>> = {
  groq: 'https://api.groq.com/openai/v1',
  'together-ai': 'https://api.together.xyz/v1',
  'mistral-ai': 'https://api.mistral.ai/v1',
  deepseek: 'https://api.deepseek.com/v1',
  'fireworks-ai': 'https://api.fireworks.ai/inference/v1',
  openrouter: 'https://openrouter.ai/api/v1',
  'perplexity-ai': 'https://api.perplexity.ai',
  'x-ai': 'https://api.x.ai/v1',
  cerebras: 'https://api.cerebras.ai/v1',
  deepinfra: 'https://api.deepinfra.com/v1/openai',
  ollama: 'http://localhost:11434/v1',
  vllm: 'http://localhost:8000/v1',
  'lm-studio': 'http://localhost:1234/v1',
};

export const presetAdapters: ReadonlyArray<ProviderAdapter> = Object.entries(OPENAI_COMPATIBLE_PRESETS).map(([id, base]) => openAICompatible(id, base));
