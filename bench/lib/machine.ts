/**
 * Facts that make a result interpretable later: CPU model, cores, kernel, governor, Node version,
 * commit. §13 of peer-gateways.md asks for them in every result file.
 */
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';
import { cpuIdleFacts, readOr, type CpuIdleFacts } from './cpu-idle.js';
import { runCommand } from './processes.js';

export interface MachineFacts {
  cpuModel: string;
  cores: number;
  kernel: string;
  /** The cpufreq governor ("performance" is what §13 asks for), or "unknown" in VMs without cpufreq. */
  governor: string;
  /** How idle CPUs wake (bench/lib/cpu-idle.ts): the floor under every latency here. */
  cpuIdle: CpuIdleFacts;
  memoryGb: number;
  node: string;
  commit: string;
  /** Uncommitted changes were present: the numbers belong to a tree, not just the commit. */
  dirty: boolean;
  /** 1-minute load average before the bench started anything (decays slowly: includes a previous run). */
  loadAvgAtStart: number;
  /** Share of all CPUs busy during one second sampled before the bench started anything. */
  cpuBusyAtStart: number;
}

/** Above this share of CPU already in use, sub-ms comparisons turn into scheduler noise. */
export const BUSY_CPU_SHARE = 0.1;

/** Busy and total jiffies over all CPUs, from the first line of /proc/stat. */
function cpuTimes(): { busy: number; total: number } {
  const fields = readOr('/proc/stat', '').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  // Fields 3 and 4 are idle and iowait.
  return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), total };
}

async function sampleCpuBusy(ms: number): Promise<number> {
  const a = cpuTimes();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const b = cpuTimes();
  return b.total > a.total ? (b.busy - a.busy) / (b.total - a.total) : Number.NaN;
}

export async function machineFacts(): Promise<MachineFacts> {
  const cpuinfo = readOr('/proc/cpuinfo', '');
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? cpus()[0]?.model ?? 'unknown';
  // First, before git and friends add their own load.
  const cpuBusyAtStart = await sampleCpuBusy(1000);
  const head = await runCommand('git', ['rev-parse', 'HEAD'], 10_000);
  const status = await runCommand('git', ['status', '--porcelain'], 10_000);
  return {
    cpuModel: model.trim(),
    cores: availableParallelism(),
    kernel: release(),
    governor: readOr('/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor', 'unknown'),
    cpuIdle: cpuIdleFacts(),
    memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    commit: head.code === 0 ? head.stdout.trim() : 'unknown',
    dirty: status.code === 0 && status.stdout.trim().length > 0,
    loadAvgAtStart: Math.round(loadavg()[0]! * 100) / 100,
    cpuBusyAtStart: Math.round(cpuBusyAtStart * 1000) / 1000,
  };
}
