/**
 * An example guardrail check: finds internal ticket ids (`ACME-1234`) so a guardrail can deny,
 * flag or redact them, in prompts and in answers, streams included.
 *
 *   pipeline:
 *     - config-strategy
 *     - guardrails
 *     - ../dist/examples/plugins/ticket-ids.js  (in config/gateway.yaml): {prefixes: [ACME, OPS]}
 *
 *   x-gateway-config: {"provider": "openai", "output_guardrails": [{"example.ticketIds": {}, "redact": true}]}
 *
 * A check is declared with `defineCheck` and registered with the `guardrails` service, so the
 * plugin sits after `guardrails` in the pipeline. Because it says where the ids are (`find`), the
 * engine can redact them and scan streams as they flow, holding back at most `maxMatch` characters.
 */
import { defineCheck, definePlugin, type Finding } from '../../core/index.js';

interface Options {
  prefixes: string[];
}

export default definePlugin<Options>({
  name: 'ticket-ids',
  configSchema: {
    type: 'object',
    properties: { prefixes: { type: 'array', items: { type: 'string', pattern: '^[A-Z]{2,10}$' }, minItems: 1 } },
    required: ['prefixes'],
    additionalProperties: false,
  },
  setup(app, options) {
    // Built once: the prefixes are the operator's, from the YAML; digits are bounded, so the longest
    // id is known and the pattern cannot backtrack.
    const pattern = new RegExp(`\\b(?:${options.prefixes.join('|')})-\\d{1,8}\\b`, 'g');
    const longest = Math.max(...options.prefixes.map((p) => p.length)) + 1 + 8;

    app.service('guardrails').register(
      defineCheck<{ allow?: string[] }>({
        id: 'example.ticketIds',
        description: 'Fails when an internal ticket id appears (except the allowed ones).',
        parameters: {
          type: 'object',
          properties: { allow: { type: 'array', items: { type: 'string' }, maxItems: 100 } },
          additionalProperties: false,
        },
        find(text, params) {
          const out: Finding[] = [];
          for (const m of text.matchAll(pattern)) {
            if (params.allow?.includes(m[0])) continue;
            out.push({ start: m.index, end: m.index + m[0].length, label: 'TICKET' });
          }
          return out;
        },
        maxMatch: () => longest,
      }),
    );
  },
});
