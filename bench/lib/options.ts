/** Command-line options of `npm run bench`. */
import { parseArgs } from 'node:util';

export interface BenchOptions {
  /** Seconds measured per load run. */
  duration: number;
  /** Seconds of discarded load before each measured run (JIT, pools, socket buffers). */
  warmup: number;
  /**
   * Seconds of discarded load before an endpoint's first measured run of the bench run (at least
   * `warmup`): V8 optimises a gateway's request path over its first seconds under load.
   */
  firstWarmup: number;
  rounds: number;
  /** Connections for the throughput scenario. */
  connections: number;
  /** Streamed requests per target per round. */
  streams: number;
  /** Scenario names to run; empty means all. */
  only: string[];
  /** Run the gateway under `--cpu-prof` and summarise its hottest functions. */
  profile: boolean;
  pin: boolean;
  /** Where the JSON results go. */
  out: string;
  /** Minutes of the opt-in soak scenario. */
  soakMinutes: number;
  /** `guest_halt_poll_ns` for the run (bench/lib/cpu-idle.ts); undefined leaves the machine as it is. */
  haltPollNs?: number;
}

export const USAGE = `Usage: node dist/bench/run.js [options]
  --duration S     seconds per measured run (default 10)
  --warmup S       seconds of warm-up before each run (default 3)
  --first-warmup S seconds of warm-up before each target's first run, at least --warmup (default 15):
                   V8 optimises the shipped pipeline's request path over its first 5-10 s of load
  --rounds N       interleaved rounds, median reported (default 3)
  --connections N  connections for the throughput scenario (default 32)
  --streams N      streamed requests per target per round (default 20)
  --only a,b       run only these scenarios (throughput, latency-c1, streaming, http2, dialects,
                   governance, default-pipeline, guardrails, mcp, prompt-render, distributed,
                   cache-hit, event-loop, analytics, logs, memory; soak runs only when named)
  --quick          duration 3, warmup 1, first-warmup 3, rounds 1, streams 10: a fast smoke run
  --profile        run the gateway with --cpu-prof and print its top self-time functions; the
                   default-pipeline gateway (default-pipeline, guardrails, mcp) is profiled too,
                   its .cpuprofile kept beside --out
  --no-pin         do not pin processes to CPUs
  --out FILE       results file (default bench/results/latest.json)
  --soak-minutes N minutes of the opt-in soak scenario (--only soak; default 10)
  --halt-poll-ns N on a KVM guest with the haltpoll cpuidle driver, set guest_halt_poll_ns to N for
                   the run and put it back after (root; the kernel's default is 200000). Without
                   it the machine is left as it is; either way the value is in the results
`;

function positive(name: string, text: string, integer: boolean): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) throw new Error(`--${name} must be a positive ${integer ? 'integer' : 'number'}, got ${text}`);
  return n;
}

export function parseOptions(argv: string[]): BenchOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      warmup: { type: 'string' },
      'first-warmup': { type: 'string' },
      rounds: { type: 'string' },
      connections: { type: 'string' },
      streams: { type: 'string' },
      only: { type: 'string' },
      quick: { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      'no-pin': { type: 'boolean', default: false },
      out: { type: 'string' },
      'soak-minutes': { type: 'string' },
      'halt-poll-ns': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return 'help';
  // --quick sets the defaults; explicit flags still win.
  const quick = values.quick;
  const warmup = values.warmup === '0' ? 0 : positive('warmup', values.warmup ?? (quick ? '1' : '3'), false);
  const firstWarmup = values['first-warmup'] === '0' ? 0 : positive('first-warmup', values['first-warmup'] ?? (quick ? '3' : '15'), false);
  return {
    duration: positive('duration', values.duration ?? (quick ? '3' : '10'), false),
    warmup,
    firstWarmup: Math.max(warmup, firstWarmup),
    rounds: positive('rounds', values.rounds ?? (quick ? '1' : '3'), true),
    connections: positive('connections', values.connections ?? '32', true),
    streams: positive('streams', values.streams ?? (quick ? '10' : '20'), true),
    only: values.only ? values.only.split(',').map((s) => s.trim()).filter(Boolean) : [],
    profile: values.profile,
    pin: !values['no-pin'],
    out: values.out ?? 'bench/results/latest.json',
    soakMinutes: positive('soak-minutes', values['soak-minutes'] ?? '10', true),
    ...(values['halt-poll-ns'] === undefined ? {} : { haltPollNs: values['halt-poll-ns'] === '0' ? 0 : positive('halt-poll-ns', values['halt-poll-ns'], true) }),
  };
}
