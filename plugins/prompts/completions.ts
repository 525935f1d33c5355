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
import { AdminErrors, type GatewayContext, type RouteDefinition, type Store } from '../../core/index.js';
import { renderRequest, type RenderBody } from './routes.js';

/** The target headers a rendered call carries; the prompt's own target replaces the caller's. */
const TARGET_HEADERS = ['x-gateway-virtual-key', 'x-gateway-config', 'x-gateway-provider'] as const;

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
    meta: { summary: 'Render a stored prompt and send it as a model call (chat or text completion, plain or streamed)' },
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
      for (const name of TARGET_HEADERS) delete ctx.headers[name];
      if (version.virtual_key !== null) ctx.headers['x-gateway-virtual-key'] = version.virtual_key;
      else if (version.config !== null) ctx.headers['x-gateway-config'] = version.config;
      else if (version.provider !== null) ctx.headers['x-gateway-provider'] = version.provider;
      ctx.set('promptRef', { slug: prompt.slug, version_id: version.id, version: version.version });
      return { route: typeof version.template === 'string' ? 'completions' : 'chat.completions', body };
    },
  };
}
