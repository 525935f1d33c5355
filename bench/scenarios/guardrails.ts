/**
 * What guardrails cost (issue 14): the shipped pipeline, one process, the same 1 KB prompt with
 * and without guardrails, measured in the same rounds.
 *
 *   plain        x-gateway-config: {provider, custom_host}
 *   guarded      the same config with input_guardrails [default.regexMatch (not), default.pii]
 *                and output_guardrails [default.pii redact]
 *
 * At one connection the difference of the p50s is the guardrails' own time per request (target:
 * ≤ 50 µs). A stream with output redaction (20 events, 5 ms apart) against the same stream
 * without guardrails shows what the holdback costs the time to the first event.
 */
import type { Scenario } from '../lib/scenario.js';
import type { BenchRequest } from '../lib/targets.js';
import { addedLatency, endpointRounds, errorNotes, type LoadEndpoint } from '../lib/load-rounds.js';
import { sendOnce } from '../lib/send-once.js';
import { median, round } from '../lib/stats.js';
import { fmt, fmtDelta } from '../lib/table.js';
import { createStreamClient } from '../lib/sse-timing.js';
import { startDefaultPipeline } from './default-pipeline.js';

const MAX_ADDED_P50_US = 50;
const STREAM_DIRECTIVES = 'chunks=20;chunk_delay=5';
const STREAM_TIMEOUT_MS = 10_000;

/** ~1 KB of ordinary prose with a few numbers in it, and no PII: the checks scan all of it and pass. */
function prompt(): string {
  const sentence = 'The quarterly report covers 14 regions, 3 product lines and the 2026 roadmap in plain words. ';
  let text = '';
  while (text.length < 1000) text += sentence;
  return text.slice(0, 1024);
}

function withConfig(request: BenchRequest, config: Record<string, unknown>, body: Record<string, unknown>): BenchRequest {
  return { ...request, headers: { ...request.headers, 'x-gateway-config': JSON.stringify(config) }, body: JSON.stringify(body) };
}

export const guardrails: Scenario = {
  name: 'guardrails',
  isolates: 'input guardrails (regex + PII) on a 1 KB prompt and output redaction on a stream, against the same pipeline without them',
  async run(ctx) {
    const tool = ctx.tools.load;
    if (tool === null) return { name: this.name, isolates: this.isolates, skipped: 'no HTTP/1.1 load tool', notes: [], checks: [], data: null };
    const plainTarget = ctx.targets[2]!;
    const { gateway, request } = await startDefaultPipeline(ctx, plainTarget.chatRequest());
    try {
      const upstream = request.headers['x-gateway-custom-host']!;
      const leaf = { provider: 'openai', custom_host: upstream };
      const guards = {
        input_guardrails: [{ 'default.regexMatch': { rule: 'BEGIN [A-Z]+ PRIVATE KEY', not: true }, 'default.pii': {}, deny: true }],
        output_guardrails: [{ 'default.pii': {}, redact: true }],
      };
      const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt() }], max_tokens: 16 };
      const base = { ...request, headers: { ...request.headers } };
      delete (base.headers as Record<string, string>)['x-gateway-custom-host'];
      delete (base.headers as Record<string, string>)['x-gateway-provider'];
      const plain = withConfig(base, leaf, body);
      const guarded = withConfig(base, { ...leaf, ...guards }, body);
      for (const [name, r] of [['plain', plain], ['guarded', guarded]] as const) {
        const probe = await sendOnce(gateway.url, r);
        if (probe.status !== 200) throw new Error(`guardrails probe (${name}) answered ${probe.status}: ${probe.text.slice(0, 300)}`);
      }
      const endpoints: Array<LoadEndpoint<'plain' | 'guarded'>> = [
        { name: 'plain', origin: gateway.url, request: plain },
        { name: 'guarded', origin: gateway.url, request: guarded },
      ];
      const single = await endpointRounds(ctx, tool, { label: `${this.name} c=1`, connections: 1, endpoints });
      const addedUs = round(addedLatency(single.rounds, 'guarded', 'plain', 'p50') * 1000, 1);

      // Streams: the same stream through the same leaf, with and without output redaction.
      const streamBody = { ...body, stream: true };
      const streamLeaf = { provider: 'openai', custom_host: upstream.replace(/\/v1$/, `/mock/${STREAM_DIRECTIVES}/v1`) };
      const plainStream = withConfig(base, streamLeaf, streamBody);
      const guardedStream = withConfig(base, { ...streamLeaf, output_guardrails: guards.output_guardrails }, streamBody);
      const client = createStreamClient();
      const ttfb: { plain: number[]; guarded: number[] } = { plain: [], guarded: [] };
      try {
        for (let i = 0; i < 3; i++) for (const r of [plainStream, guardedStream]) await client.stream(gateway.url, r, STREAM_TIMEOUT_MS);
        for (let i = 0; i < ctx.options.streams; i++) {
          ttfb.plain.push((await client.stream(gateway.url, plainStream, STREAM_TIMEOUT_MS)).ttfbMs);
          ttfb.guarded.push((await client.stream(gateway.url, guardedStream, STREAM_TIMEOUT_MS)).ttfbMs);
        }
      } finally {
        await client.close();
      }
      const streamAdded = round(median(ttfb.guarded) - median(ttfb.plain));
      const s = single.summary;
      const errors = s.plain.errors + s.guarded.errors;
      return {
        name: this.name,
        isolates: this.isolates,
        table: {
          title: `Guardrails (${tool.name} -c1, ${ctx.options.duration}s × ${ctx.options.rounds} rounds, 1 KB prompt; ms)`,
          columns: ['request', 'req/s', 'p50', 'p99', '+p50 (µs)', 'stream first event', 'errors'],
          rows: [
            ['no guardrails', fmt(s.plain.rps, 0), fmt(s.plain.p50, 3), fmt(s.plain.p99, 3), '', fmt(median(ttfb.plain), 3), String(s.plain.errors)],
            ['regex + PII in, PII redaction out', fmt(s.guarded.rps, 0), fmt(s.guarded.p50, 3), fmt(s.guarded.p99, 3), fmtDelta(addedUs), fmt(median(ttfb.guarded), 3), String(s.guarded.errors)],
          ],
        },
        notes: [...errorNotes(s), `streams: ${STREAM_DIRECTIVES}, median of ${ctx.options.streams}; the redaction holds back at most the longest PII span`],
        headlines: [
          ['guardrails added p50 at c=1 (regex + PII on 1 KB, PII redaction out)', `${fmtDelta(addedUs)} µs`],
          ['guardrails added time to first streamed event (output redaction)', `${fmtDelta(streamAdded)} ms`],
        ],
        checks: [{ name: 'guardrails added p50 at c=1', value: addedUs, target: `≤ ${MAX_ADDED_P50_US} µs`, unit: 'µs', pass: addedUs <= MAX_ADDED_P50_US && errors === 0 }],
        data: { tool: tool.name, single, addedUs, streaming: { plainTtfbMs: ttfb.plain, guardedTtfbMs: ttfb.guarded, addedMs: streamAdded } },
      };
    } finally {
      await gateway.stop();
    }
  },
};
