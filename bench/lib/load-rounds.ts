/**
 * Shared by the closed-loop scenarios (throughput, c=1 latency): warm up, measure, repeat per
 * round and target, and reduce the rounds to medians.
 */
import type { LoadResult, LoadTool } from './load-tool.js';
import { interleaved, type BenchContext } from './scenario.js';
import { median, round } from './stats.js';
import type { TargetName } from './targets.js';

export interface TargetSummary {
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number | undefined;
  errors: number;
}

export interface LoadRounds {
  rounds: Record<TargetName, LoadResult[]>;
  summary: Record<TargetName, TargetSummary>;
}

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

export async function loadRounds(ctx: BenchContext, tool: LoadTool, label: string, connections: number): Promise<LoadRounds> {
  const rounds = await interleaved(ctx, label, async (target) => {
    const spec = { origin: target.origin, request: target.chatRequest(), connections };
    if (ctx.options.warmup > 0) await tool.run({ ...spec, durationSec: ctx.options.warmup });
    return tool.run({ ...spec, durationSec: ctx.options.duration });
  });
  return { rounds, summary: { direct: summarise(rounds.direct), bare: summarise(rounds.bare), gateway: summarise(rounds.gateway) } };
}

/** Notes for any target that saw errors: a fast error is not a fast proxy. */
export function errorNotes(summary: Record<TargetName, TargetSummary>): string[] {
  return (Object.keys(summary) as TargetName[]).filter((n) => summary[n].errors > 0).map((n) => `${n}: ${summary[n].errors} errors (non-2xx or socket) — its numbers are suspect`);
}
