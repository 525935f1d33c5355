/**
 * Shared by the closed-loop scenarios (throughput, c=1 latency, governance, cache hit): warm up,
 * measure, repeat per round and endpoint, and reduce the rounds to medians.
 */
import type { LoadResult, LoadTool } from './load-tool.js';
import type { BenchContext } from './scenario.js';
import { median, round } from './stats.js';
import type { BenchRequest, TargetName } from './targets.js';

export interface TargetSummary {
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number | undefined;
  errors: number;
}

export interface LoadRounds<N extends string = TargetName> {
  rounds: Record<N, LoadResult[]>;
  summary: Record<N, TargetSummary>;
}

/** What a load run is pointed at: one of the three targets, or the governance gateway with its own request. */
export interface LoadEndpoint<N extends string> {
  readonly name: N;
  readonly origin: string;
  readonly request: BenchRequest;
}

export type Percentile = 'p50' | 'p90' | 'p99' | 'p999';

function summarise(results: LoadResult[]): TargetSummary {
  const p999 = results.map((r) => r.latencyMs.p999).filter((v): v is number => v !== undefined);
  return {
    rps: round(median(results.map((r) => r.rps)), 1),
    p50: round(median(results.map((r) => r.latencyMs.p50))),
    p90: round(median(results.map((r) => r.latencyMs.p90))),
    p99: round(median(results.map((r) => r.latencyMs.p99))),
    p999: p999.length === results.length ? round(median(p999)) : undefined,
    errors: results.reduce((sum, r) => sum + r.errors, 0),
  };
}

/** The three targets with the small chat completion: throughput and c=1 latency. */
export function loadRounds(ctx: BenchContext, tool: LoadTool, label: string, connections: number): Promise<LoadRounds> {
  return endpointRounds(ctx, tool, { label, connections, endpoints: ctx.targets.map((t) => ({ name: t.name, origin: t.origin, request: t.chatRequest() })) });
}

/**
 * Origins already loaded in this bench run. An endpoint's first run is preceded by the longer
 * `firstWarmup`: under load, V8 optimises the shipped pipeline's request path over its first
 * 5–10 s (on the reference VM, 92, 483, 654 and 619 requests in its first four seconds, then
 * 2,400–3,900 a second), which a 3 s warm-up left in the first round's measurement of a fresh
 * gateway and not in the bare proxy's. Every endpoint gets it alike.
 */
const warmed = new Set<string>();

/**
 * Any endpoints, interleaved like the targets (round 1: each endpoint in order; round 2: …), so
 * machine drift spreads over all of them; each run is preceded by its own warm-up.
 */
export async function endpointRounds<N extends string>(
  ctx: BenchContext,
  tool: LoadTool,
  run: { label: string; connections: number; endpoints: ReadonlyArray<LoadEndpoint<N>> },
): Promise<LoadRounds<N>> {
  const rounds = Object.fromEntries(run.endpoints.map((e) => [e.name, []])) as unknown as Record<N, LoadResult[]>;
  for (let r = 1; r <= ctx.options.rounds; r++) {
    for (const endpoint of run.endpoints) {
      ctx.log(`${run.label}: round ${r}/${ctx.options.rounds}, ${endpoint.name}`);
      const spec = { origin: endpoint.origin, request: endpoint.request, connections: run.connections };
      const warmup = warmed.has(endpoint.origin) ? ctx.options.warmup : ctx.options.firstWarmup;
      warmed.add(endpoint.origin);
      if (warmup > 0) await tool.run({ ...spec, durationSec: warmup });
      rounds[endpoint.name].push(await tool.run({ ...spec, durationSec: ctx.options.duration }));
    }
  }
  const summary = Object.fromEntries(run.endpoints.map((e) => [e.name, summarise(rounds[e.name])])) as unknown as Record<N, TargetSummary>;
  return { rounds, summary };
}

/**
 * Latency `name` adds over `base` at one percentile: the difference is taken per round (both
 * measured in the same round) and the median of those is reported, so drift between rounds cancels.
 */
export function addedLatency<N extends string>(rounds: Record<N, LoadResult[]>, name: N, base: N, pct: Percentile): number {
  const diffs = rounds[name].map((r, i) => (r.latencyMs[pct] ?? Number.NaN) - (rounds[base][i]?.latencyMs[pct] ?? Number.NaN));
  return round(median(diffs));
}

/** Notes for any endpoint that saw errors: a fast error is not a fast proxy. */
export function errorNotes<N extends string>(summary: Record<N, TargetSummary>): string[] {
  return (Object.keys(summary) as N[]).filter((n) => summary[n].errors > 0).map((n) => `${n}: ${summary[n].errors} errors (non-2xx or socket) — its numbers are suspect`);
}
