/**
 * A closed-loop HTTP/1.1 load generator behind one interface: wrk when installed (µs latency,
 * lowest client overhead: stack-notes.md §5), autocannon as a fallback (whole-ms latency).
 * Numbers from different tools are never comparable, so the tool name travels with every result.
 */
import type { BenchRequest } from './targets.js';

export interface LoadSpec {
  /** http://127.0.0.1:PORT */
  origin: string;
  request: BenchRequest;
  connections: number;
  durationSec: number;
}

/** Latency in milliseconds by percentile. */
export interface LatencyMs {
  p50: number;
  p90: number;
  p99: number;
  /** Undefined when the tool cannot tell (wrk's text output stops at p99). */
  p999: number | undefined;
  max: number;
}

export interface LoadResult {
  requests: number;
  rps: number;
  /** Non-2xx/3xx responses plus socket errors and timeouts: any is a red flag. */
  errors: number;
  latencyMs: LatencyMs;
}

export interface LoadTool {
  readonly name: 'wrk' | 'autocannon';
  readonly version: string;
  /** What the latency numbers can resolve, for the report. */
  readonly resolution: string;
  run(spec: LoadSpec): Promise<LoadResult>;
}
