/**
 * V8 settings the gateway runs with, applied by the CLI before any gateway code runs (imported
 * first by cli/main.ts, so cluster workers get them too, and the log thread: V8 flags are per
 * process).
 *
 * TurboFan's inlining budget. A request passes through many small functions spread over the core,
 * the plugins, Node's HTTP server and undici; with V8's default budget (460 bytes of bytecode for
 * one inlined function, 920 for all of them in one optimised function) the hot paths stop inlining
 * early and pay a call, and a cold jump, at each layer. Twice and three times that measured 1–6 %
 * less CPU per request on the shipped pipeline (bench/HISTORY.md, twelfth session). Larger budgets still were no
 * faster once warm and took several times longer to warm up (bigger optimised functions to compile).
 *
 * An operator's own value on the node command line wins: a flag already in `process.execArgv` is
 * left alone.
 */
import { setFlagsFromString } from 'node:v8';

/** The flags set, as `--name=value`. */
export const V8_TUNING: ReadonlyArray<string> = ['--max-inlined-bytecode-size=920', '--max-inlined-bytecode-size-cumulative=3000'];

/** The name of a V8 flag (`--max-inlined-bytecode-size`), dashes and underscores alike. */
const flagName = (arg: string): string => arg.split('=')[0]!.replaceAll('_', '-');

/** The flags of {@link V8_TUNING} that `execArgv` does not set itself. */
export function tuningFor(execArgv: ReadonlyArray<string>): string[] {
  const given = new Set(execArgv.filter((a) => a.startsWith('--')).map(flagName));
  return V8_TUNING.filter((flag) => !given.has(flagName(flag)));
}

for (const flag of tuningFor(process.execArgv)) setFlagsFromString(flag);
