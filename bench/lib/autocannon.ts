/**
 * autocannon fallback for machines without wrk. Its latency histogram has whole-millisecond
 * resolution, so sub-ms added latency cannot be read from it: the report says so.
 */
import type { LoadResult, LoadTool } from './load-tool.js';
import type { Pinning } from './pinning.js';
import { runCommand } from './processes.js';

interface AutocannonJson {
  requests: { total: number; average: number };
  duration: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  latency: { p50: number; p90: number; p99: number; p99_9?: number; max: number };
}

export function parseAutocannon(out: string): LoadResult {
  const start = out.indexOf('{');
  const json = JSON.parse(out.slice(start)) as AutocannonJson;
  return {
    requests: json.requests.total,
    rps: json.requests.total / json.duration,
    errors: json.non2xx + json.errors + json.timeouts,
    latencyMs: { p50: json.latency.p50, p90: json.latency.p90, p99: json.latency.p99, p999: json.latency.p99_9, max: json.latency.max },
  };
}

/** Runs the locally installed autocannon through npx (`--no-install`: never downloads). */
export function createAutocannon(version: string, pinning: Pinning): LoadTool {
  return {
    name: 'autocannon',
    version,
    resolution: 'whole ms (autocannon): sub-ms added latency is not measurable',
    async run(spec) {
      const args = ['--no-install', 'autocannon', '-j', '-c', String(spec.connections), '-d', String(spec.durationSec), '-m', 'POST', '-b', spec.request.body];
      for (const [name, value] of Object.entries(spec.request.headers)) args.push('-H', `${name}=${value}`);
      args.push(`${spec.origin}${spec.request.path}`);
      const { command, args: pinned } = pinning.wrap('load', 'npx', args);
      const result = await runCommand(command, pinned, (spec.durationSec + 60) * 1000);
      if (result.code !== 0) throw new Error(`autocannon failed (code ${result.code}): ${result.stderr}`);
      return parseAutocannon(result.stdout);
    },
  };
}
