/**
 * What rendering a stored prompt costs (issue 17): a 2 KB chat template with 10 variables, a
 * section and an inverted section, rendered in this process the way `POST /v1/prompts/{id}/render`
 * does it (the required-variable check, then the render; the parse tree comes from the cache,
 * as it does for every render after a version's first). Target: ≤ 20 µs at p50.
 */
import type { Scenario } from '../lib/scenario.js';
import { percentile, round } from '../lib/stats.js';
import { fmt } from '../lib/table.js';
import { assertVariables, render } from '../../plugins/prompts/templates.js';

const MAX_P50_US = 20;
const RENDERS = 20_000;
const WARMUP = 5_000;

/** ~2 KB of instructions with 10 variables, one section and one inverted section. */
function template(): string {
  const filler = 'Answer in plain words, cite the policy section you rely on, and keep the tone friendly but exact. ';
  let body = '';
  while (body.length < 1700) body += filler;
  return [
    'You are the support assistant of {{company}}, answering {{customer_name}} (account {{account_id}}, plan {{plan}}).',
    body,
    '{{#vip}}This customer is a VIP since {{vip_since}}: offer a callback.{{/vip}}{{^vip}}Offer the help centre at {{help_url}}.{{/vip}}',
    'The question arrived through {{channel}} in {{language}} at {{local_time}}.',
  ].join('\n');
}

const VARIABLES = {
  company: 'Acme Logistics',
  customer_name: 'Ada Lovelace',
  account_id: 'ACC-0042-7781',
  plan: 'Business',
  vip: true,
  vip_since: '2021',
  help_url: 'https://help.example.com',
  channel: 'email',
  language: 'English',
  local_time: '09:41',
};

export const promptRender: Scenario = {
  name: 'prompt-render',
  isolates: 'rendering a stored prompt: a 2 KB template with 10 variables and sections, in process',
  async run() {
    const text = template();
    const none = (): undefined => undefined;
    const once = (): string => {
      assertVariables(text, VARIABLES, none, 'template');
      return render(text, VARIABLES, none, 'template');
    };
    const sample = once();
    for (let i = 0; i < WARMUP; i++) once();
    const times: number[] = [];
    for (let i = 0; i < RENDERS; i++) {
      const t0 = performance.now();
      once();
      times.push((performance.now() - t0) * 1000);
    }
    const p50 = percentile(times, 50);
    return {
      name: this.name,
      isolates: this.isolates,
      table: {
        title: `prompt render, ${RENDERS} renders of a ${text.length}-character template (${sample.length} characters out)`,
        columns: ['measure', 'p50 µs', 'p99 µs'],
        rows: [['check variables + render', fmt(p50, 1), fmt(percentile(times, 99), 1)]],
      },
      notes: [],
      checks: [{ name: 'prompt render p50', value: round(p50, 1), target: `≤ ${MAX_P50_US} µs`, unit: 'µs', pass: p50 <= MAX_P50_US }],
      headlines: [['prompt render p50', `${fmt(p50, 1)} µs`]],
      data: { renders: RENDERS, templateChars: text.length, p50, p99: percentile(times, 99) },
    };
  },
};
