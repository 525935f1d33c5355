/**
 * `POST /v1/prompts/{id or slug}/completions`: a stored prompt rendered and sent as a model call.
 *
 *   {variables, version? | label?, stream?, …parameter overrides}   (`?version=N` or `?label=` too)
 *     ─▶ render (routes.ts renderRequest) ─▶ a chat completion (chat template) or a completion
 *        (text template) to the prompt's target: its virtual key, saved config or provider
 *     ─▶ the core continues as that model route: routing, rate limits, budgets, cache,
 *        guardrails, the upstream call, streaming and the log all apply as to any model call
 *
 * The answer is the provider's, in the chat or text completion shape, plain or streamed. The log
 * record carries `prompt_slug` and `prompt_version_id` (the `promptRef` context var). The caller
 * needs `completions.write`, as for any model call, and sees only its workspace's prompts.
 */
import { AdminErrors, type AdminRouteMeta, type GatewayContext, type Records, type RouteDefinition, type Store } from '../../core/index.js';
import { renderRequest, type RenderBody } from './routes.js';

/** The target headers a rendered call carries; the prompt's own target replaces the caller's. */
const TARGET_HEADERS = ['x-gateway-virtual-key', 'x-gateway-config', 'x-gateway-provider'] as const;

/** The prompt's own target (virtual key, saved config or provider) in place of any the caller sent. */
export function applyTarget(ctx: GatewayContext, version: Records.PromptVersion): void {
  for (const name of TARGET_HEADERS) delete ctx.headers[name];
  if (version.virtual_key !== null) ctx.headers['x-gateway-virtual-key'] = version.virtual_key;
  else if (version.config !== null) ctx.headers['x-gateway-config'] = version.config;
  else if (version.provider !== null) ctx.headers['x-gateway-provider'] = version.provider;
}

function choiceFromQuery(ctx: GatewayContext, body: RenderBody): RenderBody {
  if (ctx.search === '') return body;
  const query = new URLSearchParams(ctx.search);
  const version = query.get('version');
  const label = query.get('label');
  const out = { ...body };
  if (version !== null) {
    if (!/^[1-9][0-9]{0,8}$/.test(version)) throw AdminErrors.invalid('version must be a version number (1, 2, …).', 'version');
    out.version = Number(version);
  }
  if (label !== null) out.label = label;
  return out;
}

export function completionsRoute(store: Store): RouteDefinition {
  return {
    method: 'POST',
    path: '/v1/prompts/:slug/completions',
    body: 'json',
    // Described in the OpenAPI document with the admin routes (it is a model call: logged, not audited).
    meta: {
      admin: true,
      summary: 'Render a stored prompt and send it as a model call to its target: a chat completion (chat template) or a completion (text template), plain or streamed; `?version=` or `?label=` choose the version',
      resource: 'prompts',
      action: 'completions',
      scope: 'completions.write',
      level: 'workspace',
      public: false,
      query: { type: 'object', properties: { version: { type: 'integer', minimum: 1 }, label: { type: 'string' } } },
      body: {
        type: 'object',
        properties: {
          variables: { type: 'object', description: 'Template variables (JSON values).' },
          version: { type: 'integer', minimum: 1 },
          label: { type: 'string' },
          stream: { type: 'boolean' },
        },
        additionalProperties: true,
        description: 'Any other field is a model parameter override (temperature, max_tokens, …).',
      },
      response: { type: 'object', description: "The provider's chat completion or completion (or its event stream)." },
    } satisfies AdminRouteMeta,
    handler() {
      throw new Error('answered by the model call (model())');
    },
    model(ctx, params) {
      const principal = ctx.get('principal');
      if (principal === undefined) throw AdminErrors.unauthenticated();
      if (!principal.scopes.has('completions.write')) throw AdminErrors.insufficientScope('This key lacks the scope "completions.write" needed to call models.');
      const raw = (ctx.body ?? {}) as RenderBody;
      if (raw.version !== undefined && (typeof raw.version !== 'number' || !Number.isInteger(raw.version) || raw.version < 1)) {
        throw AdminErrors.invalid('version must be a version number (1, 2, …).', 'version');
      }
      if (raw.label !== undefined && typeof raw.label !== 'string') throw AdminErrors.invalid('label must be a string.', 'label');
      if (raw.stream !== undefined && typeof raw.stream !== 'boolean') throw AdminErrors.invalid('stream must be a boolean.', 'stream');
      const { prompt, version, body } = renderRequest(store, principal, params.slug!, choiceFromQuery(ctx, raw));
      applyTarget(ctx, version);
      ctx.set('promptRef', { slug: prompt.slug, version_id: version.id, version: version.version });
      return { route: typeof version.template === 'string' ? 'completions' : 'chat.completions', body };
    },
  };
}
