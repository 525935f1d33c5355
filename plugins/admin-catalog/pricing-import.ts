/**
 * Imports an open price catalogue into the pricing table as overrides (`source: custom`), so list
 * prices keep up without a release. The format is LiteLLM's `model_prices_and_context_window.json`,
 * the catalogue most gateways and tools share:
 *
 *   { "gpt-4o": { "litellm_provider": "openai", "mode": "chat",
 *                 "input_cost_per_token": 2.5e-06, "output_cost_per_token": 1e-05,
 *                 "cache_read_input_token_cost": 1.25e-06 }, … }
 *
 *   parseCatalogue ─▶ entries for the gateway's providers (USD/token ─▶ cents/token)
 *   planImport     ─▶ added / changed / unchanged against the table in force
 *   applyImport    ─▶ one transaction of overrides, and one audit record
 *
 * Importing the same file twice changes nothing the second time. Entries of providers the gateway
 * has no adapter for, of other modes (images, audio, rerank) or without token prices are skipped
 * and counted, never guessed.
 */
import { nowIso, uuidv7, type Records, type Store } from '../../core/index.js';
import { priceFor } from './pricing.js';

/** LiteLLM's `litellm_provider` → the gateway's provider id (`vertex_ai-*` families by prefix). */
const PROVIDERS: Readonly<Record<string, string>> = {
  openai: 'openai',
  'text-completion-openai': 'openai',
  azure: 'azure-openai',
  azure_text: 'azure-openai',
  anthropic: 'anthropic',
  gemini: 'google',
  vertex_ai: 'vertex-ai',
  bedrock: 'bedrock',
  bedrock_converse: 'bedrock',
  mistral: 'mistral-ai',
  groq: 'groq',
  together_ai: 'together-ai',
  deepseek: 'deepseek',
  fireworks_ai: 'fireworks-ai',
  openrouter: 'openrouter',
  perplexity: 'perplexity-ai',
  xai: 'x-ai',
  cerebras: 'cerebras',
  deepinfra: 'deepinfra',
  ollama: 'ollama',
};

/** Modes priced per token by the gateway; the rest (image_generation, audio_*, rerank, …) are skipped. */
const TOKEN_MODES = new Set(['chat', 'completion', 'embedding', 'responses']);

export interface ImportEntry {
  provider: string;
  model: string;
  pay_as_you_go: Record<string, { price: number }>;
}

export interface ParsedCatalogue {
  entries: ImportEntry[];
  skipped: { provider: number; mode: number; price: number; name: number };
}

export interface ImportPlan {
  added: ImportEntry[];
  changed: { entry: ImportEntry; before: Record<string, unknown> }[];
  unchanged: number;
}

/** A catalogue that is not one: the message says where. */
export class CatalogueError extends Error {}

function providerOf(litellm: string): string | undefined {
  if (litellm.startsWith('vertex_ai')) return 'vertex-ai';
  return PROVIDERS[litellm];
}

/** USD per token → USD cents per token, without float noise (12 significant digits). */
function cents(usdPerToken: number): { price: number } {
  return { price: Number((usdPerToken * 100).toPrecision(12)) };
}

function price(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** The model id without LiteLLM's routing prefix (`groq/llama-3.1-8b-instant` → `llama-3.1-8b-instant`). */
function modelName(key: string, litellm: string): string | undefined {
  let name = key;
  const slash = key.indexOf('/');
  if (slash > 0) {
    const head = key.slice(0, slash);
    if (head === litellm || providerOf(head) !== undefined || head.startsWith('vertex_ai')) name = key.slice(slash + 1);
  }
  // Region-pinned Bedrock entries (`bedrock/us-east-1/…`) and commitment tiers are not list prices.
  if (litellm.startsWith('bedrock') && name.includes('/')) return undefined;
  if (name.length === 0 || name.length > 255 || /[\u0000-\u001f]/.test(name)) return undefined;
  return name;
}

/**
 * The catalogue's entries for the gateway's providers, in file order (a later duplicate of the
 * same provider and model wins, as a later line of the file would).
 *
 * @example
 *   parseCatalogue({ 'gpt-4o': { litellm_provider: 'openai', mode: 'chat', input_cost_per_token: 2.5e-6, output_cost_per_token: 1e-5 } })
 *   // → { entries: [{ provider: 'openai', model: 'gpt-4o', pay_as_you_go: { request_token: { price: 0.00025 }, … } }], skipped: … }
 */
export function parseCatalogue(json: unknown): ParsedCatalogue {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new CatalogueError('the catalogue must be a JSON object of model name → prices (LiteLLM format)');
  }
  const skipped = { provider: 0, mode: 0, price: 0, name: 0 };
  const byId = new Map<string, ImportEntry>();
  for (const [key, raw] of Object.entries(json)) {
    if (key === 'sample_spec' || raw === null || typeof raw !== 'object' || Array.isArray(raw)) continue;
    const spec = raw as Record<string, unknown>;
    const litellm = typeof spec.litellm_provider === 'string' ? spec.litellm_provider : '';
    const provider = providerOf(litellm);
    if (provider === undefined) {
      skipped.provider++;
      continue;
    }
    if (spec.mode !== undefined && !TOKEN_MODES.has(String(spec.mode))) {
      skipped.mode++;
      continue;
    }
    const input = price(spec.input_cost_per_token);
    const output = price(spec.output_cost_per_token);
    if (input === undefined && output === undefined) {
      skipped.price++;
      continue;
    }
    const model = modelName(key, litellm);
    if (model === undefined) {
      skipped.name++;
      continue;
    }
    const inputPrice = input ?? 0;
    byId.set(`${provider}/${model}`, {
      provider,
      model,
      pay_as_you_go: {
        request_token: cents(inputPrice),
        response_token: cents(output ?? 0),
        cache_read_input_token: cents(price(spec.cache_read_input_token_cost) ?? inputPrice),
        cache_write_input_token: cents(price(spec.cache_creation_input_token_cost) ?? inputPrice),
      },
    });
  }
  return { entries: [...byId.values()], skipped };
}

function samePrices(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    const x = (a[key] as { price?: unknown } | undefined)?.price;
    const y = (b[key] as { price?: unknown } | undefined)?.price;
    if (x !== y) return false;
  }
  return true;
}

/** What importing `entries` would change, against the prices in force (overrides, then shipped entries). */
export function planImport(store: Store, entries: ReadonlyArray<ImportEntry>): ImportPlan {
  const plan: ImportPlan = { added: [], changed: [], unchanged: 0 };
  for (const entry of entries) {
    const current = priceFor(store, entry.provider, entry.model);
    // Only an entry for this exact model counts: a prefix match (a sibling's price) is not this model's.
    if (current === undefined || current.model !== entry.model) plan.added.push(entry);
    else if (samePrices(current.pay_as_you_go, entry.pay_as_you_go)) plan.unchanged++;
    else plan.changed.push({ entry, before: current.pay_as_you_go });
  }
  return plan;
}

export interface ImportActor {
  organisationId: string;
  /** What ran it, for the audit record's `uri` (e.g. `gateway pricing import prices.json`). */
  command: string;
}

/**
 * Writes the plan's overrides in one transaction, with one audit record (resource
 * `model_pricing`, action `import`, method `CLI`) summarising it.
 */
export function applyImport(store: Store, plan: ImportPlan, actor: ImportActor): void {
  const now = nowIso();
  store.root.transactionSync(() => {
    for (const entry of [...plan.added, ...plan.changed.map((c) => c.entry)]) {
      const id = `${entry.provider}/${entry.model}`;
      if (store.c.pricing.get(id) === undefined) {
        const record: Records.ModelPricing = {
          id,
          provider: entry.provider,
          model: entry.model,
          pay_as_you_go: entry.pay_as_you_go,
          currency: 'USD',
          source: 'custom',
          created_at: now,
          last_updated_at: now,
        };
        store.c.pricing.insert(record);
      } else store.c.pricing.update(id, (p) => ({ ...p, pay_as_you_go: entry.pay_as_you_go, last_updated_at: now }));
    }
    const id = uuidv7();
    store.c.audit.appendSync({
      id,
      timestamp: now,
      method: 'CLI',
      uri: actor.command.slice(0, 2048),
      request_id: id,
      request_body: JSON.stringify({ added: plan.added.length, changed: plan.changed.length, unchanged: plan.unchanged }),
      query_params: '{}',
      user_id: null,
      api_key_id: null,
      user_type: 'user',
      organisation_id: actor.organisationId,
      workspace_id: null,
      response_status_code: 200,
      resource_type: 'model_pricing',
      action: 'import',
      client_ip: 'local',
    });
  });
}
