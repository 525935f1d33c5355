/**
 * Caller-supplied regular expressions, on a linear-time engine.
 *
 * Patterns that come from callers (conditional routing's `$regex`, guardrail patterns) never run
 * on V8's backtracking engine: `^(a+)+$` against 28 `a`s and a `b` takes seconds there, and each
 * extra character doubles it, so one request could freeze the event loop. RE2 (here `re2js`, a
 * pure-JS port) matches in time linear in the input for every pattern, and refuses the features
 * that need backtracking (backreferences, lookahead, lookbehind) at compile time, so a bad pattern
 * is a 400 when the config is saved or sent, not a surprise when it runs.
 *
 *   source ──▶ length ≤ MAX_PATTERN_LENGTH? ──▶ RE2 compile (cached by flags + source) ──▶ SafeRegex
 *                     │                                  │
 *               string_too_long                     invalid_value   (400, `param` names the field)
 *
 * The length bound keeps compiled programs small (RE2 also caps repeat counts at 1000), so the
 * per-character cost of a match stays bounded too.
 */
import { RE2JS } from 're2js';
import { ValidationErrors } from './validation/errors.js';

/** Longest pattern accepted, in UTF-16 code units: ample for routing and redaction rules. */
export const MAX_PATTERN_LENGTH = 512;

/** A compiled caller pattern. `test` is an unanchored search, like `RegExp.prototype.test`. */
export interface SafeRegex {
  readonly source: string;
  test(input: string): boolean;
}

export interface SafeRegexOptions {
  /** Any of `i` (ignore case), `m` (multi-line `^`/`$`), `s` (`.` matches newlines). */
  flags?: string;
  /** The field the pattern came from, named by the 400 when it is refused. */
  param?: string;
}

const FLAG_BITS: Record<string, number> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL };

/**
 * Compiled patterns by flags and source. Configs are reused across requests, so a pattern compiles
 * once; the bound only stops a stream of distinct inline configs from growing it without end.
 */
const cache = new Map<string, SafeRegex>();
const CACHE_LIMIT = 1000;

/**
 * Compiles a caller-supplied pattern on the linear-time engine, or throws a 400 naming
 * `options.param`: `string_too_long` over {@link MAX_PATTERN_LENGTH}, `invalid_value` for a flag
 * or syntax RE2 does not accept (backreferences, lookaround, an unbalanced bracket, …).
 *
 * @example
 *   const re = compileSafeRegex('^eu-', { param: 'config.strategy.conditions[0].query.metadata.region.$regex' });
 *   re.test('eu-west-1') // true
 */
export function compileSafeRegex(source: string, options: SafeRegexOptions = {}): SafeRegex {
  const flags = options.flags ?? '';
  const key = `${flags}/${source}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;

  const param = options.param ?? null;
  if (source.length > MAX_PATTERN_LENGTH) {
    throw ValidationErrors.stringTooLong(`${param ?? 'The pattern'} must be at most ${MAX_PATTERN_LENGTH} characters.`, { param });
  }
  let bits = 0;
  for (const flag of flags) {
    const bit = FLAG_BITS[flag];
    if (bit === undefined) throw ValidationErrors.invalidValue(`${param ?? 'The pattern'} has a flag other than i, m or s.`, { param });
    bits |= bit;
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(source, bits);
  } catch (err) {
    // The engine's message quotes the pattern; it stays in `cause` (logged), not in the answer.
    throw ValidationErrors.invalidValue(
      `${param ?? 'The pattern'} is not a pattern the linear-time (RE2) engine accepts: no backreferences or lookaround.`,
      { param, cause: err },
    );
  }
  const compiled: SafeRegex = { source, test: (input) => re.test(input) };
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, compiled);
  return compiled;
}

/** {@link compileSafeRegex}, returning null instead of throwing (for patterns already validated). */
export function trySafeRegex(source: string, options: SafeRegexOptions = {}): SafeRegex | null {
  try {
    return compileSafeRegex(source, options);
  } catch {
    return null;
  }
}
