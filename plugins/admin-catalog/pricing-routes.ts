/**
 * Model pricing (admin-api.md §20). The reference has one public lookup at the host root,
 * `GET /model-configs/pricing/:provider/:model`; the admin side (list, override, remove an
 * override) is ours, so prices a deployment pays can be set without a release.
 *
 * All prices are USD cents per token (or per unit), as in the reference.
 */
import { AdminErrors, defineAdminRoute, nowIso, S, type AnyAdminRoute, type Records } from '../../core/index.js';
import { CatalogErrors } from './errors.js';
import { listPricing, priceFor, type ResolvedPricing } from './pricing.js';

/** Per-token prices the reference names; `additional_units` holds the rest (web_search, …). */
const TOKEN_PRICES = [
  'request_token',
  'response_token',
  'cache_read_input_token',
  'cache_write_input_token',
  'request_audio_token',
  'response_audio_token',
  'cache_read_audio_input_token',
] as const;

const priceIn: S.JsonSchema = {
  type: 'object',
  properties: { price: { type: 'number', minimum: 0 } },
  required: ['price'],
  additionalProperties: false,
};

const payAsYouGoIn: S.JsonSchema = {
  type: 'object',
  properties: {
    ...Object.fromEntries(TOKEN_PRICES.map((k) => [k, priceIn])),
    additional_units: {
      type: 'object',
      maxProperties: 50,
      propertyNames: { pattern: '^[a-z0-9_]+$', maxLength: 64 },
      additionalProperties: priceIn,
    },
  },
  // The two prices every cost computation needs; the others default to "not charged".
  required: ['request_token', 'response_token'],
  additionalProperties: false,
};

const priceOut: S.JsonSchema = { type: 'object', properties: { price: S.num } };
const payAsYouGoOut: S.JsonSchema = {
  type: 'object',
  properties: {
    ...Object.fromEntries(TOKEN_PRICES.map((k) => [k, priceOut])),
    additional_units: { type: 'object', additionalProperties: priceOut },
  },
};

const pricingSchema = S.record({ pay_as_you_go: payAsYouGoOut, currency: S.str });
const pricingItemSchema = S.record({
  id: S.str,
  provider: S.str,
  model: S.str,
  pay_as_you_go: payAsYouGoOut,
  currency: S.str,
  source: S.str,
  last_updated_at: S.strOrNull,
});

const PROVIDER = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** Path parameters are not schema-checked by the framework: bound them here (they become an id). */
function checkModelRef(params: Record<string, string>): { provider: string; model: string } {
  const provider = params.provider!;
  const model = params.model!;
  if (!PROVIDER.test(provider)) throw AdminErrors.invalid('provider must be a lowercase provider id such as "openai".', 'provider');
  if (model.length > 255 || /[\u0000-\u001f]/.test(model)) throw AdminErrors.invalid('model must be at most 255 printable characters.', 'model');
  return { provider, model };
}

const listItem = (p: ResolvedPricing) => ({ ...p, id: `${p.provider}/${p.model}` });

interface OverrideBody {
  pay_as_you_go: Record<string, unknown>;
}

const resource = 'model_pricing';

export const pricingRoutes: AnyAdminRoute[] = [
  defineAdminRoute({
    method: 'GET',
    // At the host root, as the reference has it: a public price list, no key needed.
    path: '/model-configs/pricing/:provider/:model',
    summary: 'Get the pricing of a model (public)',
    resource,
    action: 'read',
    scope: null,
    level: 'organisation',
    public: true,
    response: pricingSchema,
    handler({ params, store }) {
      const pricing = priceFor(store, params.provider!, params.model!);
      if (pricing === undefined) throw CatalogErrors.modelNotFound(params.provider!, params.model!);
      return pricing;
    },
  }),
  defineAdminRoute<never, { provider?: string; current_page: number; page_size: number }>({
    method: 'GET',
    path: '/v1/model-pricing',
    summary: 'List model pricing (shipped defaults merged with overrides)',
    resource,
    action: 'list',
    // Prices are public anyway (see above); any key may list them.
    scope: null,
    level: 'workspace',
    query: {
      properties: {
        provider: { type: 'string', pattern: PROVIDER.source },
        ...S.pagination,
      },
    },
    response: S.listOf(pricingItemSchema),
    handler({ query, store }) {
      const all = listPricing(store, query.provider);
      const start = query.current_page * query.page_size;
      return { object: 'list', total: all.length, data: all.slice(start, start + query.page_size).map(listItem) };
    },
  }),
  defineAdminRoute<OverrideBody>({
    method: 'PUT',
    path: '/v1/model-pricing/:provider/:model',
    summary: 'Set the pricing of a model (overrides the shipped default)',
    resource,
    action: 'update',
    scope: 'model_pricing.update',
    level: 'organisation',
    body: {
      type: 'object',
      properties: {
        pay_as_you_go: payAsYouGoIn,
        // Accepted so a GET answer can be sent back as is; USD is the only currency.
        currency: { type: 'string', enum: ['USD'] },
      },
      required: ['pay_as_you_go'],
      additionalProperties: false,
    },
    response: S.empty,
    handler({ params, body, store }) {
      const { provider, model } = checkModelRef(params);
      const id = `${provider}/${model}`;
      const now = nowIso();
      // Insert or replace in one transaction: two concurrent PUTs never collide on the insert.
      store.root.transactionSync(() => {
        if (store.c.pricing.get(id) === undefined) {
          const record: Records.ModelPricing = {
            id,
            provider,
            model,
            pay_as_you_go: body.pay_as_you_go,
            currency: 'USD',
            source: 'custom',
            created_at: now,
            last_updated_at: now,
          };
          store.c.pricing.insert(record);
        } else store.c.pricing.update(id, (p) => ({ ...p, pay_as_you_go: body.pay_as_you_go, last_updated_at: now }));
      });
      return {};
    },
  }),
  defineAdminRoute({
    method: 'DELETE',
    path: '/v1/model-pricing/:provider/:model',
    summary: 'Remove a pricing override (the shipped default applies again)',
    resource,
    action: 'delete',
    scope: 'model_pricing.update',
    level: 'organisation',
    response: S.empty,
    handler({ params, store }) {
      const { provider, model } = checkModelRef(params);
      if (!store.c.pricing.delete(`${provider}/${model}`)) throw AdminErrors.notFound('There is no pricing override for this provider and model.');
      return {};
    },
  }),
];
