/**
 * Event-loop delay of another process, measured from outside: `GET /health` every `everyMs` on
 * one kept-alive socket. The gateway answers /health before any plugin runs and with a constant
 * body, so a probe's latency is the socket round trip plus the time the request waited for the
 * gateway's event loop: a loop blocked for 40 ms shows as a ~40 ms probe.
 *
 * At most one probe is in flight; a tick that finds one still waiting is skipped, since the waiting
 * probe already measures that stall. This process's own loop delay is recorded alongside: if the
 * prober itself stalls, its probes look slow, and the report must be able to tell.
 */
import { Agent, request } from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

/** A probe that takes longer than this is a hung gateway, not a data point. */
const PROBE_TIMEOUT_MS = 10_000;

export interface ProbeSamples {
  latenciesMs: number[];
  failed: number;
  /** This (probing) process's own event-loop delay over the same period, ms. */
  self: { p99: number; max: number };
}

export interface HealthProbe {
  stop(): Promise<ProbeSamples>;
}

function probeOnce(agent: Agent, origin: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${origin}/health`, { agent }, (res) => {
      res.resume();
      res.once('error', reject);
      res.once('end', () => (res.statusCode === 200 ? resolve(performance.now() - start) : reject(new Error(`/health answered ${res.statusCode}`))));
    });
    req.setTimeout(PROBE_TIMEOUT_MS, () => req.destroy(new Error('/health probe timed out')));
    req.once('error', reject);
    const start = performance.now();
    req.end();
  });
}

/**
 * Starts probing `origin` at once; `stop()` ends it, waits for the probe in flight and returns
 * the samples.
 *
 * @example
 * const probe = probeHealth(gateway.origin, 5);
 * await sendLoad();
 * const { latenciesMs } = await probe.stop();
 */
export function probeHealth(origin: string, everyMs: number): HealthProbe {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const self = monitorEventLoopDelay({ resolution: 1 });
  self.enable();
  const latenciesMs: number[] = [];
  let failed = 0;
  let inFlight: Promise<void> | null = null;
  const timer = setInterval(function probeTick() {
    if (inFlight !== null) return;
    inFlight = probeOnce(agent, origin).then(
      (ms) => void latenciesMs.push(ms),
      () => void failed++,
    ).finally(() => {
      inFlight = null;
    });
  }, everyMs);
  return {
    async stop() {
      clearInterval(timer);
      await inFlight;
      self.disable();
      agent.destroy();
      // The histogram is in nanoseconds.
      return { latenciesMs, failed, self: { p99: self.percentile(99) / 1e6, max: self.max / 1e6 } };
    },
  };
}

/** Probes an idle process for `durationMs`: the baseline the loaded numbers are read against. */
export async function idleHealth(origin: string, everyMs: number, durationMs: number): Promise<ProbeSamples> {
  const probe = probeHealth(origin, everyMs);
  await new Promise((resolve) => setTimeout(resolve, durationMs));
  return probe.stop();
}
