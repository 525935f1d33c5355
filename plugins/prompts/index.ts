/**
 * The `prompts` plugin: versioned prompt templates and partials in the store, rendered with
 * Mustache (templates.ts), managed through the admin API (routes.ts, partials.ts), and sent as
 * model calls (`POST /v1/prompts/{id}/completions`, completions.ts).
 *
 * Decisions:
 * - Every save (PUT) is an immutable version; the default (what a call without `version` or
 *   `label` renders) moves only by publish, `PUT /v1/prompts/{id}/makeDefault` (scope
 *   `prompts.publish`, audited). Labels point at versions and move the same way.
 * - Partials render at their latest version (see partials.ts).
 * - No HTML escaping: `{{x}}` inserts the value as it is (objects as JSON); see templates.ts.
 * - The variables a template needs are computed at save time and shown with the prompt:
 *   `variables` (top-level names, sections included), `required_variables` (top-level
 *   `{{x}}`/`{{{x}}}`/`{{&x}}` outside sections: a render without one is a 400
 *   `missing_variable`), `partials`.
 */
import { adminRoutes, definePlugin } from '../../core/index.js';
import { promptRoutes } from './routes.js';
import { partialRoutes } from './partials.js';
import { completionsRoute } from './completions.js';
import { renderResponsesPrompt } from './responses.js';

export { renderBody } from './routes.js';

export default definePlugin({
  name: 'prompts',
  configSchema: { type: 'object', additionalProperties: false },
  setup(app) {
    // Partials first: `/v1/prompts/partials/…` must not be taken for a prompt's sub-route.
    return {
      routes: [...adminRoutes(app, [...partialRoutes(), ...promptRoutes()]), completionsRoute(app.store)],
      // A Responses call whose `prompt.id` names a stored prompt (before routing: see responses.ts).
      onRequestBody(ctx) {
        if (ctx.route.kind === 'model' && ctx.route.name === 'responses' && ctx.body?.prompt !== undefined) renderResponsesPrompt(app.store, ctx);
      },
    };
  },
});
