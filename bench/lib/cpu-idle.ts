/**
 * How this machine's idle CPUs wake, which sets the floor of every latency the bench reports, and
 * the opt-in `--halt-poll-ns` that changes it for one run.
 *
 * On a KVM guest whose cpuidle driver is `haltpoll`, `guest_halt_poll_ns` is how long an idle vCPU
 * polls for work before it halts. The kernel's default is 200,000; at 0 every idle vCPU halts at
 * once, and each request that crosses to an idle core (load generator → proxy → mock → proxy →
 * load generator) pays for waking it through the hypervisor. Measured on the project's bench VM
 * (2 vCPUs, polling 0) at one connection: a bare Node proxy added +0.29 to +0.34 ms at p50, and
 * +0.07 ms with polling at 200 µs. Like the CPU frequency governor (peer-gateways.md §13 asks for
 * "performance"), it is recorded in every result, and set only when asked.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const HALT_POLL = '/sys/module/haltpoll/parameters/guest_halt_poll_ns';

export interface CpuIdleFacts {
  /** The cpuidle driver (`haltpoll`, `intel_idle`, `acpi_idle`, …) or "none". */
  driver: string;
  governor: string;
  /** `guest_halt_poll_ns` where the haltpoll driver has it; null elsewhere. */
  haltPollNs: number | null;
}

/** A sysfs or procfs file's text, trimmed; `fallback` where it cannot be read. */
export function readOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return fallback;
  }
}

function haltPoll(): number | null {
  const text = readOr(HALT_POLL, '');
  return text === '' ? null : Number(text);
}

export function cpuIdleFacts(): CpuIdleFacts {
  return {
    driver: readOr('/sys/devices/system/cpu/cpuidle/current_driver', 'none'),
    governor: readOr('/sys/devices/system/cpu/cpuidle/current_governor', readOr('/sys/devices/system/cpu/cpuidle/current_governor_ro', 'none')),
    haltPollNs: haltPoll(),
  };
}

/** One line for the report header. */
export function describeCpuIdle(f: CpuIdleFacts): string {
  return `cpuidle ${f.driver}/${f.governor}${f.haltPollNs === null ? '' : `, guest_halt_poll_ns ${f.haltPollNs}`}`;
}

/**
 * Sets `guest_halt_poll_ns` for this run; the previous value is put back at exit, whatever ends
 * the run. Throws, saying why, where there is no such setting or it cannot be written (not root).
 */
export function setHaltPoll(ns: number): void {
  const before = haltPoll();
  if (before === null) throw new Error(`--halt-poll-ns: ${HALT_POLL} does not exist here (no haltpoll cpuidle driver: not a KVM guest, or the module is not loaded)`);
  try {
    writeFileSync(HALT_POLL, String(ns));
  } catch (err) {
    throw new Error(`--halt-poll-ns: cannot write ${HALT_POLL} (${(err as NodeJS.ErrnoException).code ?? String(err)}; it needs root)`, { cause: err });
  }
  process.once('exit', () => {
    try {
      writeFileSync(HALT_POLL, String(before));
    } catch {
      process.stderr.write(`[bench] could not put ${HALT_POLL} back to ${before}\n`);
    }
  });
}
