/**
 * CPU pinning, after peer-gateways.md §13: the mock, the load generators and this orchestrator
 * (it runs the streaming client) share one CPU; the proxy under test gets the other to itself.
 *
 *   CPU A: mock upstream, wrk / h2load, bench orchestrator (SSE client)
 *   CPU B: bare proxy, gateway, governance gateway   (one under load at a time: rounds are interleaved)
 *
 * Numbers from different pinnings are not comparable, so the layout is recorded in the results.
 */
import { availableParallelism } from 'node:os';
import { commandExists, runCommand } from './processes.js';

export type Role = 'load' | 'proxy';

export interface Pinning {
  readonly enabled: boolean;
  /** CPU ids, when enabled. */
  readonly loadCpu: number | null;
  readonly proxyCpu: number | null;
  /** One line for the report, e.g. "mock+load on CPU 0, proxy under test on CPU 1 (taskset)". */
  readonly description: string;
  /** The command line to spawn `command args` pinned for `role` (unchanged when disabled). */
  wrap(role: Role, command: string, args: readonly string[]): { command: string; args: string[] };
}

/** Parses taskset's list syntax ("0,2-3") into CPU ids. */
function parseCpuList(list: string): number[] {
  const cpus: number[] = [];
  for (const part of list.split(',')) {
    const [lo, hi] = part.trim().split('-').map((n) => Number.parseInt(n, 10));
    if (lo === undefined || !Number.isInteger(lo)) continue;
    const end = hi !== undefined && Number.isInteger(hi) ? hi : lo;
    // Bounded: a container exposes at most a few thousand CPUs.
    for (let cpu = lo; cpu <= end && cpus.length < 4096; cpu++) cpus.push(cpu);
  }
  return cpus;
}

function unpinned(reason: string): Pinning {
  return { enabled: false, loadCpu: null, proxyCpu: null, description: `not pinned: ${reason}`, wrap: (_role, command, args) => ({ command, args: [...args] }) };
}

/**
 * Decides the layout from the CPUs this process may run on (a container may allow e.g. only 4,5)
 * and pins the orchestrator itself to the load CPU.
 */
export async function planPinning(disabled: boolean): Promise<Pinning> {
  if (disabled) return unpinned('--no-pin');
  if (availableParallelism() < 2) return unpinned('1 CPU available');
  if (!(await commandExists('taskset'))) return unpinned('taskset not found (apt-get install util-linux)');
  const probe = await runCommand('taskset', ['-cp', String(process.pid)], 5000);
  const cpus = parseCpuList(probe.stdout.split(':').pop() ?? '');
  if (cpus.length < 2) return unpinned(`affinity allows ${cpus.length} CPU(s)`);
  const [loadCpu, proxyCpu] = [cpus[0]!, cpus[1]!];
  // -a: every thread of this process (libuv pool included), not just the main one.
  await runCommand('taskset', ['-a', '-cp', String(loadCpu), String(process.pid)], 5000);
  return {
    enabled: true,
    loadCpu,
    proxyCpu,
    description: `mock + load generators + orchestrator on CPU ${loadCpu}; proxy under test (bare, gateway, governance gateway) on CPU ${proxyCpu} (taskset)`,
    wrap(role, command, args) {
      return { command: 'taskset', args: ['-c', String(role === 'load' ? loadCpu : proxyCpu), command, ...args] };
    },
  };
}
