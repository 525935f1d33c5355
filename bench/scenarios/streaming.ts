/**
 * Streaming: sequential SSE chat completions (20 chunks, 5 ms apart, set by mock path directives)
 * timed per event on the client. It isolates what the proxy adds to time-to-first-event and
 * whether it delays or batches events (a buffering proxy shows as 0 ms gaps plus long ones).
 */
import type { Scenario } from '../lib/scenario.js';
import { interleaved } from '../lib/scenario.js';
import { createStreamClient, warmStreams, WARM_DIRECTIVES, type StreamTiming } from '../lib/sse-timing.js';
import { median, percentile, round } from '../lib/stats.js';
import { fmt, fmtDelta } from '../lib/table.js';
import { TARGET_NAMES, type TargetName } from '../lib/targets.js';

const CHUNKS = 20;
const CHUNK_DELAY_MS = 5;
const DIRECTIVES = `chunks=${CHUNKS};chunk_delay=${CHUNK_DELAY_MS}`;
/** Target from the issue: streaming through the gateway adds at most 1 ms to the first byte. */
const MAX_ADDED_TTFB_MS = 1;
/** Unmeasured streams per target before the first round, at the timed streams' pace. */
const WARMUP_STREAMS = 5;
/** A stream takes ~CHUNKS × CHUNK_DELAY_MS; anything near 10 s is a hang, not a data point. */
const STREAM_TIMEOUT_MS = 10_000;

interface StreamSummary {
  ttfbMedian: number;
  ttfbP99: number;
  gapMedian: number;
  gapP99: number;
  streams: number;
  failed: number;
  /** Streams that did not end with [DONE] or had a different event count than the first. */
  incomplete: number;
}

function summarise(samples: StreamTiming[], failed: number): StreamSummary {
  const ttfb = samples.map((s) => s.ttfbMs);
  const gaps = samples.flatMap((s) => s.gapsMs);
  const expected = samples[0]?.events ?? 0;
  return {
    ttfbMedian: round(median(ttfb)),
    ttfbP99: round(percentile(ttfb, 99)),
    gapMedian: round(median(gaps)),
    gapP99: round(percentile(gaps, 99)),
    streams: samples.length,
    failed,
    incomplete: samples.filter((s) => !s.done || s.events !== expected).length,
  };
}

export const streaming: Scenario = {
  name: 'streaming',
  isolates: 'time the proxy adds before the first SSE event, and whether it delays or batches later events',
  async run(ctx) {
    const client = createStreamClient();
    const failed: Record<TargetName, number> = { direct: 0, bare: 0, gateway: 0 };
    const errors: string[] = [];
    try {
      for (const target of ctx.targets) {
        // The stream path warmed as in service (see warmStreams), then a few streams at the timed pace.
        await warmStreams(client, target.origin, target.chatRequest({ stream: true, directives: WARM_DIRECTIVES }));
        for (let i = 0; i < WARMUP_STREAMS; i++) await client.stream(target.origin, target.chatRequest({ stream: true, directives: DIRECTIVES }), STREAM_TIMEOUT_MS);
      }
      const rounds = await interleaved(ctx, this.name, async (target) => {
        const samples: StreamTiming[] = [];
        for (let i = 0; i < ctx.options.streams; i++) {
          try {
            samples.push(await client.stream(target.origin, target.chatRequest({ stream: true, directives: DIRECTIVES }), STREAM_TIMEOUT_MS));
          } catch (error) {
            failed[target.name]++;
            if (errors.length < 5) errors.push(`${target.name}: ${(error as Error).message}`);
          }
        }
        return samples;
      });
      const summary = Object.fromEntries(TARGET_NAMES.map((n) => [n, summarise(rounds[n].flat(), failed[n])])) as Record<TargetName, StreamSummary>;
      const addedTtfb = round(summary.gateway.ttfbMedian - summary.direct.ttfbMedian);
      const bareAddedTtfb = round(summary.bare.ttfbMedian - summary.direct.ttfbMedian);
      const rows = TARGET_NAMES.map((n) => {
        const s = summary[n];
        const added = n === 'direct' ? '' : fmtDelta(n === 'gateway' ? addedTtfb : bareAddedTtfb);
        const addedGapP99 = n === 'direct' ? '' : fmtDelta(s.gapP99 - summary.direct.gapP99);
        return [n, String(s.streams), fmt(s.ttfbMedian, 3), fmt(s.ttfbP99, 3), added, fmt(s.gapMedian, 3), fmt(s.gapP99, 3), addedGapP99, String(s.failed + s.incomplete)];
      });
      const notes = errors.map((e) => `stream error: ${e}`);
      for (const n of TARGET_NAMES) if (summary[n].incomplete > 0) notes.push(`${n}: ${summary[n].incomplete} streams incomplete or with a different event count`);
      return {
        name: this.name,
        isolates: this.isolates,
        table: {
          title: `Streaming (${CHUNKS} chunks × ${CHUNK_DELAY_MS} ms, ${ctx.options.streams} sequential streams × ${ctx.options.rounds} rounds per target; ms)`,
          columns: ['target', 'streams', 'TTFB p50', 'TTFB p99', '+TTFB', 'gap p50', 'gap p99', '+gap p99', 'bad'],
          rows,
        },
        notes,
        headlines: [
          ['added TTFB, gateway / bare', `${fmtDelta(addedTtfb)} / ${fmtDelta(bareAddedTtfb)} ms`],
          ['inter-chunk gap p99, direct / bare / gateway', `${fmt(summary.direct.gapP99, 3)} / ${fmt(summary.bare.gapP99, 3)} / ${fmt(summary.gateway.gapP99, 3)} ms`],
        ],
        checks: [{ name: 'added TTFB, streaming (gateway − direct)', value: addedTtfb, target: `≤ ${MAX_ADDED_TTFB_MS} ms`, unit: 'ms', pass: addedTtfb <= MAX_ADDED_TTFB_MS && summary.gateway.failed === 0 }],
        data: { chunks: CHUNKS, chunkDelayMs: CHUNK_DELAY_MS, summary, addedTtfbMs: { gateway: addedTtfb, bare: bareAddedTtfb } },
      };
    } finally {
      client.close();
    }
  },
};
