/**
 * The contract between `bench/run.ts` and a scenario in `bench/scenarios/`. A scenario receives
 * the started targets and returns its numbers; it never starts or stops processes, so adding one
 * (cache hit, full governance pipeline) is a new file plus one line in `scenarios/index.ts`.
 */
import type { GovernanceGateway } from './governance-gateway.js';
import type { BenchOptions } from './options.js';
import type { Pinning } from './pinning.js';
import type { RssSample } from './rss.js';
import type { Table } from './table.js';
import type { Target, TargetName } from './targets.js';
import type { Tools } from './tools.js';

export interface BenchContext {
  /** In measuring order: direct, bare, gateway. */
  readonly targets: readonly Target[];
  /** The second gateway with the governance pipeline; null unless a selected scenario needs it. */
  readonly governance: GovernanceGateway | null;
  readonly options: BenchOptions;
  readonly tools: Tools;
  readonly pinning: Pinning;
  /** RSS of each target's process right after it became ready, before any load. */
  readonly idleRss: Readonly<Record<TargetName, RssSample>>;
  /** Progress to stderr; results go to stdout. */
  log(line: string): void;
}

/** A pass/fail line against a published target. */
export interface Check {
  name: string;
  /** Measured value, in `unit`. */
  value: number;
  /** e.g. "≥ 0.6", "≤ 0.25 ms" */
  target: string;
  unit: string;
  pass: boolean;
}

export interface ScenarioResult {
  name: string;
  /** One sentence: what this scenario isolates. */
  isolates: string;
  /** Set when the scenario could not run (missing tool); nothing else is meaningful then. */
  skipped?: string;
  table?: Table;
  notes: string[];
  checks: Check[];
  /** [label, value] pairs for the closing summary: the ratios a reader looks for first. */
  headlines?: Array<[string, string]>;
  /** Raw per-round numbers and summaries for latest.json. */
  data: unknown;
}

export interface Scenario {
  readonly name: string;
  readonly isolates: string;
  /** The run starts the governance gateway (and provisions it) only when a selected scenario says so. */
  readonly needsGovernance?: boolean;
  run(ctx: BenchContext): Promise<ScenarioResult>;
}

/** The governance gateway, which run.ts started because the scenario declared `needsGovernance`. */
export function governanceOf(ctx: BenchContext): GovernanceGateway {
  if (ctx.governance === null) throw new Error('the governance gateway was not started (set needsGovernance on the scenario)');
  return ctx.governance;
}

/** Finds a target by name (all three always exist). */
export function targetNamed(ctx: BenchContext, name: TargetName): Target {
  const target = ctx.targets.find((t) => t.name === name);
  if (target === undefined) throw new Error(`no target ${name}`);
  return target;
}

/**
 * Runs `measure` for every round and target, interleaved (round 1: direct, bare, gateway; round
 * 2: ...), so slow drift on the machine (thermal, a noisy neighbour) spreads over all targets
 * instead of penalising whichever ran last.
 */
export async function interleaved<T>(ctx: BenchContext, label: string, measure: (target: Target, round: number) => Promise<T>): Promise<Record<TargetName, T[]>> {
  const out: Record<TargetName, T[]> = { direct: [], bare: [], gateway: [] };
  for (let round = 1; round <= ctx.options.rounds; round++) {
    for (const target of ctx.targets) {
      ctx.log(`${label}: round ${round}/${ctx.options.rounds}, ${target.name}`);
      out[target.name].push(await measure(target, round));
    }
  }
  return out;
}
