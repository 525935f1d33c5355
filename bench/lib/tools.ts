/**
 * Finds the external tools and their versions. Missing ones degrade the run with a printed hint
 * instead of failing it: a machine without h2load still gets its HTTP/1.1 numbers.
 */
import { createAutocannon } from './autocannon.js';
import type { LoadTool } from './load-tool.js';
import type { Pinning } from './pinning.js';
import { commandExists, runCommand } from './processes.js';
import { createWrk } from './wrk.js';

export interface Tools {
  /** HTTP/1.1 load generator, or null when neither wrk nor autocannon is available. */
  load: LoadTool | null;
  /** h2load version, or null when missing. */
  h2load: string | null;
  /** Every tool's version line, for the results file. */
  versions: Record<string, string>;
  /** Install hints and fallbacks taken, printed and recorded. */
  notes: string[];
}

async function firstLine(command: string, args: string[]): Promise<string> {
  // wrk prints its version and exits 1; any output counts.
  const result = await runCommand(command, args, 10_000);
  return (result.stdout || result.stderr).split('\n')[0]!.trim();
}

export async function detectTools(pinning: Pinning): Promise<Tools> {
  const versions: Record<string, string> = {};
  const notes: string[] = [];
  let load: LoadTool | null = null;
  if (await commandExists('wrk')) {
    versions.wrk = await firstLine('wrk', ['--version']);
    load = createWrk(versions.wrk, pinning);
  } else {
    notes.push('wrk not found: install it with `apt-get install wrk` for µs-resolution latency');
    const probe = await runCommand('npx', ['--no-install', 'autocannon', '--version'], 30_000);
    if (probe.code === 0) {
      versions.autocannon = probe.stdout.trim().split('\n')[0]!;
      load = createAutocannon(versions.autocannon, pinning);
      notes.push('falling back to autocannon: latency has whole-ms resolution, so added-latency checks are indicative only');
    } else {
      notes.push('autocannon not installed either: throughput and c=1 latency are skipped');
    }
  }
  let h2load: string | null = null;
  if (await commandExists('h2load')) h2load = versions.h2load = await firstLine('h2load', ['--version']);
  else notes.push('h2load not found: install nghttp2-client for the h2c check');
  if (await commandExists('taskset')) versions.taskset = await firstLine('taskset', ['--version']);
  versions.node = process.version;
  return { load, h2load, versions, notes };
}
