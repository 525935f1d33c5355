/**
 * The price table the gateway ships: common models of common providers.
 *
 * These are the providers' public list prices for standard (non-batch, short-context) usage, as
 * last revised on 2026-11-26 (the date the README gives); `gateway pricing import` reads a newer
 * open catalogue (LiteLLM's) over them. Prices change and contracts differ: admins override any entry
 * with `PUT /v1/model-pricing/:provider/:model`, and an override always wins over this table.
 *
 * The table is written as vendors publish prices, USD per million tokens, and converted once at
 * load to the admin API's unit, **USD cents per token** (×100 / 1e6). Where a provider has no
 * cache discount, a cache read costs the input price; where caching has no write surcharge, a
 * cache write costs the input price too.
 *
 * Provider ids are the gateway's (lowercase, hyphenated: `mistral-ai`, `together-ai`, `x-ai`).
 * Dated snapshots resolve by longest prefix (`gpt-4o-2024-08-06` → `gpt-4o`), so entries whose
 * name extends another (`gpt-4o-mini`, `o3-mini`, `gemini-2.0-flash-lite`) are listed on purpose:
 * without them they would be priced as their shorter sibling.
 */

/** `{price}` in USD cents per token. */
export interface UnitPrice {
  price: number;
}

/** The four token prices every default entry has (the reference's `pay_as_you_go` keys). */
export interface DefaultPayAsYouGo {
  request_token: UnitPrice;
  response_token: UnitPrice;
  cache_read_input_token: UnitPrice;
  cache_write_input_token: UnitPrice;
}

/** USD per million tokens: input, output, cache read (default: input), cache write (default: input). */
type PerMillion = readonly [input: number, output: number, cacheRead?: number, cacheWrite?: number];

const LIST_PRICES: Readonly<Record<string, Readonly<Record<string, PerMillion>>>> = {
  openai: {
    'gpt-5': [1.25, 10, 0.125],
    'gpt-5.1': [1.25, 10, 0.125],
    'gpt-5-mini': [0.25, 2, 0.025],
    'gpt-5-nano': [0.05, 0.4, 0.005],
    'gpt-4o': [2.5, 10, 1.25],
    'gpt-4o-mini': [0.15, 0.6, 0.075],
    // Realtime sessions, text tokens (audio tokens cost more and are not priced here yet). Named so
    // they do not price as their `gpt-4o` / `gpt-4o-mini` prefix.
    'gpt-realtime': [4, 16, 0.4],
    'gpt-4o-realtime-preview': [5, 20, 2.5],
    'gpt-4o-mini-realtime-preview': [0.6, 2.4, 0.3],
    'gpt-4.1': [2, 8, 0.5],
    'gpt-4.1-mini': [0.4, 1.6, 0.1],
    'gpt-4.1-nano': [0.1, 0.4, 0.025],
    o1: [15, 60, 7.5],
    'o1-mini': [1.1, 4.4, 0.55],
    o3: [2, 8, 0.5],
    'o3-mini': [1.1, 4.4, 0.55],
    'o3-pro': [20, 80],
    'o4-mini': [1.1, 4.4, 0.275],
    'gpt-3.5-turbo': [0.5, 1.5],
    'text-embedding-3-small': [0.02, 0],
    'text-embedding-3-large': [0.13, 0],
    'text-embedding-ada-002': [0.1, 0],
  },
  anthropic: {
    // Cache writes (5-minute TTL) cost 1.25× input; reads 0.1× input.
    'claude-3-5-haiku': [0.8, 4, 0.08, 1],
    'claude-3-5-sonnet': [3, 15, 0.3, 3.75],
    'claude-3-7-sonnet': [3, 15, 0.3, 3.75],
    'claude-sonnet-4': [3, 15, 0.3, 3.75],
    'claude-opus-4': [15, 75, 1.5, 18.75],
    // Named on purpose: without them they would price as their `claude-opus-4` / `claude-sonnet-4` prefix.
    'claude-opus-4-5': [5, 25, 0.5, 6.25],
    'claude-sonnet-4-5': [3, 15, 0.3, 3.75],
    'claude-haiku-4-5': [1, 5, 0.1, 1.25],
    'claude-3-haiku': [0.25, 1.25, 0.03, 0.3],
  },
  google: {
    // Prompts up to 128k (1.5) / 200k (2.5 Pro) tokens; longer prompts cost more upstream.
    'gemini-1.5-flash': [0.075, 0.3, 0.01875],
    'gemini-1.5-pro': [1.25, 5, 0.3125],
    'gemini-2.0-flash': [0.1, 0.4, 0.025],
    'gemini-2.0-flash-lite': [0.075, 0.3],
    'gemini-2.5-flash': [0.3, 2.5, 0.075],
    'gemini-2.5-flash-lite': [0.1, 0.4, 0.025],
    'gemini-2.5-pro': [1.25, 10, 0.31],
    'gemini-3-pro': [2, 12, 0.2],
    'gemini-embedding-001': [0.15, 0],
  },
  'vertex-ai': {
    // Vertex ids carry a version after `@` (`claude-sonnet-4@20250514`), which resolves by prefix.
    'gemini-2.0-flash': [0.15, 0.6, 0.0375],
    'gemini-2.0-flash-lite': [0.075, 0.3],
    'gemini-2.5-flash': [0.3, 2.5, 0.075],
    'gemini-2.5-flash-lite': [0.1, 0.4, 0.025],
    'gemini-2.5-pro': [1.25, 10, 0.31],
    'gemini-3-pro': [2, 12, 0.2],
    'gemini-embedding-001': [0.15, 0],
    'claude-3-5-haiku': [0.8, 4, 0.08, 1],
    'claude-3-7-sonnet': [3, 15, 0.3, 3.75],
    'claude-sonnet-4': [3, 15, 0.3, 3.75],
    'claude-sonnet-4-5': [3, 15, 0.3, 3.75],
    'claude-haiku-4-5': [1, 5, 0.1, 1.25],
    'claude-opus-4': [15, 75, 1.5, 18.75],
    'claude-opus-4-5': [5, 25, 0.5, 6.25],
  },
  'mistral-ai': {
    'mistral-large': [2, 6],
    'mistral-medium': [0.4, 2],
    'mistral-small': [0.1, 0.3],
    'magistral-medium': [2, 5],
    codestral: [0.3, 0.9],
  },
  groq: {
    'llama-3.1-8b-instant': [0.05, 0.08],
    'llama-3.3-70b-versatile': [0.59, 0.79],
  },
  'together-ai': {
    // Together's ids carry the organisation: request them URL-encoded (`meta-llama%2F…`).
    'meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo': [0.18, 0.18],
    'meta-llama/Llama-3.3-70B-Instruct-Turbo': [0.88, 0.88],
  },
  deepseek: {
    // Cache hits are the discounted read price; misses are the input price.
    // One price for both since V3.2 (2025-09).
    'deepseek-chat': [0.28, 0.42, 0.028],
    'deepseek-reasoner': [0.28, 0.42, 0.028],
  },
  bedrock: {
    // On-demand list prices in us-east-1. Inference-profile ids (`us.anthropic.…`) price as their model.
    'anthropic.claude-3-5-haiku': [0.8, 4, 0.08, 1],
    'anthropic.claude-3-5-sonnet': [3, 15, 0.3, 3.75],
    'anthropic.claude-3-7-sonnet': [3, 15, 0.3, 3.75],
    'anthropic.claude-sonnet-4': [3, 15, 0.3, 3.75],
    'anthropic.claude-opus-4': [15, 75, 1.5, 18.75],
    'anthropic.claude-opus-4-5': [5, 25, 0.5, 6.25],
    'anthropic.claude-sonnet-4-5': [3, 15, 0.3, 3.75],
    'anthropic.claude-haiku-4-5': [1, 5, 0.1, 1.25],
    'amazon.nova-micro-v1': [0.035, 0.14, 0.00875],
    'amazon.nova-lite-v1': [0.06, 0.24, 0.015],
    'amazon.nova-pro-v1': [0.8, 3.2, 0.2],
    'meta.llama3-1-70b-instruct': [0.72, 0.72],
    'amazon.titan-embed-text-v2': [0.02, 0],
    'cohere.embed-english-v3': [0.1, 0],
  },
  'x-ai': {
    'grok-2': [2, 10],
    'grok-3': [3, 15, 0.75],
    'grok-3-mini': [0.3, 0.5, 0.075],
    'grok-4': [3, 15, 0.75],
    'grok-4-fast': [0.2, 0.5, 0.05],
    'grok-code-fast-1': [0.2, 1.5, 0.02],
  },
};

/** USD per million tokens → USD cents per token, rounded off float noise (12 significant digits). */
function centsPerToken(usdPerMillion: number): UnitPrice {
  return { price: Number(((usdPerMillion * 100) / 1_000_000).toPrecision(12)) };
}

function toPayAsYouGo([input, output, cacheRead = input, cacheWrite = input]: PerMillion): DefaultPayAsYouGo {
  return {
    request_token: centsPerToken(input),
    response_token: centsPerToken(output),
    cache_read_input_token: centsPerToken(cacheRead),
    cache_write_input_token: centsPerToken(cacheWrite),
  };
}

/** provider → model → prices in USD cents per token. Built once at module load. */
export const DEFAULT_PRICING: ReadonlyMap<string, ReadonlyMap<string, DefaultPayAsYouGo>> = new Map(
  Object.entries(LIST_PRICES).map(([provider, models]) => [
    provider,
    new Map(Object.entries(models).map(([model, prices]) => [model, toPayAsYouGo(prices)])),
  ]),
);
