/**
 * The reading side of bench/lib/gc-probe.cts: the environment that preloads the probe into a
 * gateway, and one reading taken on demand (a full collection on every thread, then the memory left).
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { ProbeReading } from './gc-probe.cjs';

export type { ProbeReading, ThreadHeap } from './gc-probe.cjs';

const PROBE = fileURLToPath(new URL('./gc-probe.cjs', import.meta.url));
const POLL_MS = 50;

/**
 * Added to a gateway's environment: NODE_OPTIONS rather than a flag, because the log writer
 * starts its thread with no inherited flags (`execArgv: []`) and NODE_OPTIONS still reaches it.
 * `inherited` is the NODE_OPTIONS kept in front (by default this process's).
 */
export function gcProbeEnv(out: string, inherited = process.env.NODE_OPTIONS): Record<string, string> {
  return { GC_PROBE_OUT: out, NODE_OPTIONS: `${inherited ? `${inherited} ` : ''}--require=${PROBE}` };
}

function read(out: string): ProbeReading | undefined {
  try {
    return JSON.parse(readFileSync(out, 'utf8')) as ProbeReading;
  } catch {
    return undefined; // not written yet
  }
}

/** Asks the gateway `pid` (started with {@link gcProbeEnv}) for a reading, waiting up to `timeoutMs`. */
export async function probeMemory(pid: number, out: string, timeoutMs = 10_000): Promise<ProbeReading> {
  const seq = (read(out)?.seq ?? 0) + 1;
  process.kill(pid, 'SIGUSR2');
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(POLL_MS)) {
    const r = read(out);
    if (r !== undefined && r.seq >= seq) return r;
  }
  throw new Error(`no memory reading from process ${pid} within ${timeoutMs} ms (was it started with the gc probe?)`);
}
