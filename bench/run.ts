/**
 * `npm run bench`: starts the mock, the bare Node proxy and the gateway as separate pinned
 * processes (plus a governance gateway when a selected scenario needs one), runs every scenario
 * in `bench/scenarios/` against them, prints the tables and pass/fail, and writes
 * `bench/results/latest.json`. See bench/README.md for how to read it.
 *
 * This file only orchestrates; process handling, load tools and statistics live in bench/lib/.
 */
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setHaltPoll } from './lib/cpu-idle.js';
import { topSelfTime } from './lib/cpu-profile.js';
import { BUSY_CPU_SHARE, machineFacts } from './lib/machine.js';
import { parseOptions, USAGE } from './lib/options.js';
import { planPinning } from './lib/pinning.js';
import { installCleanup, isStopping, stopAll } from './lib/processes.js';
import { renderReport, writeReport, type RunReport } from './lib/report.js';
import { readRss } from './lib/rss.js';
import type { BenchContext, ScenarioResult } from './lib/scenario.js';
import { startTargets } from './lib/services.js';
import { detectTools } from './lib/tools.js';
import { scenarios } from './scenarios/index.js';

function log(line: string): void {
  process.stderr.write(`[bench] ${line}\n`);
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (options === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  const unknown = options.only.filter((name) => !scenarios.some((s) => s.name === name));
  if (unknown.length > 0) throw new Error(`unknown scenario(s): ${unknown.join(', ')}; known: ${scenarios.map((s) => s.name).join(', ')}`);
  const selected = scenarios.filter((s) => options.only.length === 0 || options.only.includes(s.name));
  installCleanup(log);
  if (options.haltPollNs !== undefined) {
    setHaltPoll(options.haltPollNs);
    log(`guest_halt_poll_ns set to ${options.haltPollNs} for this run (put back at exit)`);
  }

  // Before pinning: pinning this process to one CPU would make it report 1 core.
  const machine = await machineFacts();
  const pinning = await planPinning(!options.pin);
  const tools = await detectTools(pinning);
  if (machine.cpuBusyAtStart > BUSY_CPU_SHARE) {
    const busy = Math.round(machine.cpuBusyAtStart * 100);
    tools.notes.push(`machine busy before start (${busy} % CPU in use over 1 s): other processes share the CPUs, expect noisy latency`);
  }
  for (const note of tools.notes) log(note);
  log(`pinning: ${pinning.description}`);

  const started = await startTargets({ pinning, profile: options.profile, governance: selected.some((s) => s.needsGovernance === true), log });
  const idleRss = { direct: readRss(started.targets[0]!.pid), bare: readRss(started.targets[1]!.pid), gateway: readRss(started.targets[2]!.pid) };
  const ctx: BenchContext = { targets: started.targets, governance: started.governance, options, tools, pinning, idleRss, log };

  const results: ScenarioResult[] = [];
  for (const scenario of selected) {
    if (isStopping()) break;
    try {
      results.push(await scenario.run(ctx));
    } catch (error) {
      if (isStopping()) break;
      // One broken scenario must not cost the others' numbers; it is reported as skipped.
      log(`${scenario.name} failed: ${(error as Error).stack ?? String(error)}`);
      results.push({ name: scenario.name, isolates: scenario.isolates, skipped: `error: ${(error as Error).message}`, notes: [], checks: [], data: null });
    }
  }
  await started.stop();

  const report: RunReport = {
    date: new Date().toISOString(),
    machine,
    pinning: pinning.description,
    tools: tools.versions,
    notes: tools.notes,
    options,
    scenarios: results,
    checks: results.flatMap((r) => r.checks),
  };
  if (started.profileDir !== null) {
    const file = readdirSync(started.profileDir).find((f) => f.endsWith('.cpuprofile'));
    if (file === undefined) log('no .cpuprofile written (the gateway did not exit cleanly)');
    else {
      report.profile = topSelfTime(join(started.profileDir, file));
      // Kept next to the results: open it in Chrome DevTools or speedscope for the call tree.
      mkdirSync(dirname(options.out), { recursive: true });
      const kept = join(dirname(options.out), 'gateway.cpuprofile');
      copyFileSync(join(started.profileDir, file), kept);
      log(`gateway CPU profile saved to ${kept}`);
    }
  }
  process.stdout.write(`${renderReport(report)}\n`);
  writeReport(options.out, report);
  log(`results written to ${options.out}`);
}

main().catch(async function fail(error: unknown) {
  log(`failed: ${error instanceof Error ? error.message : String(error)}`);
  await stopAll(2000);
  process.exit(1);
});
