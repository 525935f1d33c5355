/**
 * CPU time a process used (user + system) from /proc/<pid>/stat. Read before and after a load run,
 * it gives CPU per request on the proxy's core: a figure that other load on a shared machine
 * disturbs much less than req/s, which drops whenever the proxy's CPU is taken by someone else.
 */
import { readFileSync } from 'node:fs';

/** Linux reports these fields in clock ticks of 1/100 s (USER_HZ) on every common architecture. */
const TICK_MS = 10;

/** Milliseconds of CPU used so far; NaN when /proc is unavailable or the process is gone. */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // utime, stime (fields 14 and 15)
  } catch {
    return Number.NaN;
  }
}
