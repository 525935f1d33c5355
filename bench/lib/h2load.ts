/**
 * h2load runner. An `http://` URL makes h2load speak h2c with prior knowledge (no Upgrade), which
 * is what the gateway's shared h1/h2c port sniffs for; an `https://` URL negotiates h2 by ALPN
 * (h2load does not verify the certificate). A run is either a request count (`requests`) or a
 * duration (`durationSec`, with an optional warm-up whose requests are not counted). h2load
 * reports no percentiles, only throughput and min/mean/max, so no latency claim is made from it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pinning } from './pinning.js';
import { runCommand } from './processes.js';
import { runTempDir } from './temp-dir.js';
import type { BenchRequest } from './targets.js';

export interface H2loadSpec {
  origin: string;
  request: BenchRequest;
  /** A fixed number of requests; or, when absent, `durationSec`. */
  requests?: number;
  durationSec?: number;
  /** With `durationSec`: seconds of load before the measured part (h2load `--warm-up-time`). */
  warmupSec?: number;
  clients: number;
  /** Max concurrent streams per connection. */
  streams: number;
}

export interface H2loadResult {
  rps: number;
  succeeded: number;
  failed: number;
  errored: number;
  status2xx: number;
  protocol: string;
  meanMs: number;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000 };

export function parseH2load(out: string): H2loadResult {
  const num = (re: RegExp): number => Number.parseFloat(re.exec(out)?.[1] ?? 'NaN');
  const mean = /time for request:\s+\S+\s+\S+\s+([\d.]+)(us|ms|s)/.exec(out);
  return {
    rps: num(/finished in [^,]+, ([\d.]+) req\/s/),
    succeeded: num(/(\d+) succeeded/),
    failed: num(/(\d+) failed/),
    errored: num(/(\d+) errored/),
    status2xx: num(/status codes: (\d+) 2xx/),
    protocol: /Application protocol: (\S+)/.exec(out)?.[1] ?? 'unknown',
    meanMs: mean === null ? Number.NaN : Number.parseFloat(mean[1]!) * UNIT_MS[mean[2]!]!,
  };
}

export async function runH2load(spec: H2loadSpec, pinning: Pinning): Promise<H2loadResult> {
  const dir = runTempDir('h2load');
  const bodyFile = join(dir, 'body.json');
  writeFileSync(bodyFile, spec.request.body);
  const amount = spec.requests !== undefined ? ['-n', String(spec.requests)] : ['-D', String(spec.durationSec ?? 10), ...(spec.warmupSec ? [`--warm-up-time=${spec.warmupSec}`] : [])];
  const args = [...amount, '-c', String(spec.clients), '-m', String(spec.streams), '-d', bodyFile];
  for (const [name, value] of Object.entries(spec.request.headers)) args.push('-H', `${name}: ${value}`);
  args.push(`${spec.origin}${spec.request.path}`);
  const { command, args: pinned } = pinning.wrap('load', 'h2load', args);
  const result = await runCommand(command, pinned, 120_000 + 2000 * ((spec.durationSec ?? 0) + (spec.warmupSec ?? 0)));
  if (result.code !== 0) throw new Error(`h2load failed (code ${result.code}): ${result.stderr || result.stdout}`);
  return parseH2load(result.stdout);
}
