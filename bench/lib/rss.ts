/**
 * Resident memory of a process from /proc/<pid>/status: VmRSS now and VmHWM, the peak since start,
 * which catches a spike during load that a sample taken after it would miss.
 */
import { readFileSync } from 'node:fs';

export interface RssSample {
  rssMb: number;
  peakMb: number;
  /** The process's own memory (heap, buffers, native allocations): what a leak grows. */
  anonMb: number;
  /** File pages mapped in, LMDB's data file above all: page cache the kernel can take back. */
  fileMb: number;
}

/** NaN fields when /proc is unavailable (not Linux) or the process is gone. */
export function readRss(pid: number): RssSample {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string): number => Number.parseInt(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 'NaN', 10);
    return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024, anonMb: kb('RssAnon') / 1024, fileMb: kb('RssFile') / 1024 };
  } catch {
    return { rssMb: Number.NaN, peakMb: Number.NaN, anonMb: Number.NaN, fileMb: Number.NaN };
  }
}
