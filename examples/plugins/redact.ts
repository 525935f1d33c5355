/**
 * An example plugin: redacts patterns (card numbers, emails, …) from prompts before they leave
 * for the provider, and tells the caller how many it replaced.
 *
 *   pipeline:
 *     - ../dist/examples/plugins/redact.js      (in config/gateway.yaml: paths are relative to the YAML): {patterns: ["\\b\\d{16}\\b"], replacement: "[card]"}
 *
 * It shows the parts of the plugin API most plugins need: an options schema checked at boot,
 * config-time work in `setup`, a request-body hook that edits the body, a response-headers hook,
 * typed per-request state, and `onDone`.
 */
import { definePlugin, type GatewayContext } from '../../core/index.js';

interface RedactOptions {
  patterns: string[];
  replacement: string;
}

// Per-request state, declared where it is owned.
declare module '../../core/context.js' {
  interface ContextVars {
    redactions: number;
  }
}

export default definePlugin<RedactOptions>({
  name: 'redact',
  configSchema: {
    type: 'object',
    properties: {
      patterns: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 },
      replacement: { type: 'string', default: '[redacted]' },
    },
    required: ['patterns'],
    additionalProperties: false,
  },
  setup(app, options) {
    // Compiled once at boot; a bad pattern fails the boot with the plugin's name.
    const patterns = options.patterns.map((p) => new RegExp(p, 'g'));
    let total = 0;

    function scrub(text: string, ctx: GatewayContext): string {
      let out = text;
      for (const re of patterns) {
        out = out.replace(re, () => {
          ctx.set('redactions', (ctx.get('redactions') ?? 0) + 1);
          return options.replacement;
        });
      }
      return out;
    }

    return {
      onRequestBody(ctx) {
        const body = ctx.body;
        if (body === undefined) return;
        let changed = false;
        const messages = body.messages;
        if (Array.isArray(messages)) {
          for (const message of messages as Array<Record<string, unknown>>) {
            if (typeof message.content === 'string') {
              const clean = scrub(message.content, ctx);
              if (clean !== message.content) {
                message.content = clean;
                changed = true;
              }
            }
          }
        }
        if (typeof body.prompt === 'string') {
          const clean = scrub(body.prompt, ctx);
          if (clean !== body.prompt) {
            body.prompt = clean;
            changed = true;
          }
        }
        // Only a changed body is re-serialized; otherwise the original bytes are forwarded.
        if (changed) ctx.setBody(body);
      },
      onResponseHeaders(ctx, head) {
        const n = ctx.get('redactions');
        if (n !== undefined) head.headers['x-redactions'] = String(n);
      },
      onDone(ctx) {
        const n = ctx.get('redactions');
        if (n !== undefined) {
          total += n;
          app.log.info('redacted', { requestId: ctx.id, count: n, total });
        }
      },
    };
  },
});
