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
 *
 * Finding every match (`matches`, for redaction) is where linear time ends even on RE2: to know
 * where the leftmost match ends, the engine may read far past it (`a*b|a` on `aaaa…` reads to the
 * end of the input for every one-character match), so a plain find-all loop is quadratic. Spans
 * are therefore bounded (`maxLength`) and searched in windows of twice that length:
 *
 *   pos ─┬───────────── window (2 × maxLength) ─────────────┐
 *        │ matches that end inside: reported                 │ a match that reaches the edge:
 *        │                                                   │  started in the last maxLength → next window starts before it
 *        └───────────────────────────────────────────────────┘  started earlier (longer than maxLength) → reported in pieces
 *
 * so each search reads at most one window: O(input × maxLength) in the worst case, O(input) for
 * ordinary patterns. One character before each window is kept as context, so `^` (with `m`) and
 * `\b` at a window's start are judged on the real text.
 */
import { RE2JS } from 're2js';
import { ValidationErrors } from './validation/errors.js';

/** Longest pattern accepted, in UTF-16 code units: ample for routing and redaction rules. */
export const MAX_PATTERN_LENGTH = 512;

/** Default bound of one span found by {@link SafeRegex.matches}. */
export const DEFAULT_MAX_MATCH = 256;

/** A compiled caller pattern. `test` is an unanchored search, like `RegExp.prototype.test`. */
export interface SafeRegex {
  readonly source: string;
  test(input: string): boolean;
  /**
   * Every match as `[start, end)` UTF-16 indexes, left to right, non-overlapping, empty matches
   * skipped. A match longer than `maxLength` (default {@link DEFAULT_MAX_MATCH}) may be missed
   * or come back cut into consecutive pieces of at most `maxLength`: no span is longer, and the
   * cost stays O(input × maxLength) whatever the pattern (see the file comment).
   *
   * @example
   *   compileSafeRegex('\\d{3}').matches('a 123 b 4567') // [[2, 5], [8, 11]]
   */
  matches(input: string, maxLength?: number): Array<[number, number]>;
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
  // A literal every match contains: a text without it cannot match, found natively (RE2 in
  // JavaScript costs microseconds per kilobyte even when there is nothing to find).
  const literal = flags.includes('i') ? undefined : requiredLiteral(source);
  const compiled: SafeRegex =
    literal === undefined
      ? { source, test: (input) => re.test(input), matches: (input, maxLength = DEFAULT_MAX_MATCH) => allMatches(re, input, maxLength) }
      : {
          source,
          test: (input) => input.includes(literal) && re.test(input),
          matches: (input, maxLength = DEFAULT_MAX_MATCH) => (input.includes(literal) ? allMatches(re, input, maxLength) : []),
        };
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, compiled);
  return compiled;
}

const PLAIN = /[A-Za-z0-9 _,;:'"!@#%&=<>/~`-]/;

/**
 * The longest run of plain characters (3 or more) that every match of `source` must contain, or
 * undefined. Conservative: only characters at the top level (outside groups and classes), in a
 * pattern without a top-level alternation, inline flags or `\Q…\E`, and not under a quantifier.
 *
 * @example
 *   requiredLiteral('BEGIN [A-Z]+ PRIVATE KEY') // ' PRIVATE KEY'
 *   requiredLiteral('foo|bar')                   // undefined
 */
export function requiredLiteral(source: string): string | undefined {
  if (source.includes('\\Q') || source.includes('(?')) return undefined;
  let best = '';
  let run = '';
  let depth = 0;
  const end = (): void => {
    if (run.length > best.length) best = run;
    run = '';
  };
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    const next = source[i + 1];
    const quantified = next === '*' || next === '+' || next === '?' || next === '{';
    if (c === '\\') {
      // An escaped punctuation mark is itself; any other escape (\d, \b, \x41…) ends the run.
      const e = source[i + 1];
      i++;
      const after = source[i + 1];
      const q = after === '*' || after === '+' || after === '?' || after === '{';
      if (depth === 0 && e !== undefined && /[.^$*+?()[\]{}|\\/-]/.test(e) && !q) run += e;
      else end();
      continue;
    }
    if (c === '[') {
      end();
      // Skip the class: a `]` first (or after `^`) is a member; escapes are skipped whole.
      let j = i + 1;
      if (source[j] === '^') j++;
      if (source[j] === ']') j++;
      while (j < source.length && source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
      i = j;
      continue;
    }
    if (c === '{') {
      // A repetition count (`{2,5}`): its digits are not text.
      end();
      const close = source.indexOf('}', i);
      if (close !== -1) i = close;
      continue;
    }
    if (c === '(') {
      end();
      depth++;
      continue;
    }
    if (c === ')') {
      end();
      depth--;
      continue;
    }
    if (c === '|') {
      if (depth === 0) return undefined;
      end();
      continue;
    }
    if (depth === 0 && PLAIN.test(c) && !quantified) run += c;
    else end();
  }
  end();
  return best.length >= 3 ? best : undefined;
}

/** {@link compileSafeRegex}, returning null instead of throwing (for patterns already validated). */
export function trySafeRegex(source: string, options: SafeRegexOptions = {}): SafeRegex | null {
  try {
    return compileSafeRegex(source, options);
  } catch {
    return null;
  }
}

/**
 * The windowed find-all behind {@link SafeRegex.matches}. Invariant: every match of at most
 * `span` characters that starts before `pos` and after the last reported span was reported;
 * each window moves `pos` forward by at least `span` (less one, to keep a surrogate pair whole) or
 * past a reported span.
 */
function allMatches(re: RE2JS, input: string, maxLength: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const n = input.length;
  const span = Math.max(1, Math.floor(maxLength));
  const report = (start: number, end: number): void => {
    for (let at = start; at < end; at += span) out.push([at, Math.min(end, at + span)]);
  };
  let pos = 0;
  while (pos < n) {
    const base = pos > 0 ? pos - 1 : 0;
    let end = Math.min(n, pos + 2 * span);
    if (end < n && isLowSurrogate(input, end)) end -= 1; // never split a surrogate pair
    const last = end === n;
    const m = re.matcher(input.slice(base, end));
    let done = pos; // end of the last reported span
    let from = pos; // where the next search starts (past empty matches too)
    // Where the next window starts when nothing reaches this one's edge: a short match that
    // starts before `end - span` ends inside this window, so it was seen.
    let next = last ? n : end - span;
    while (from <= end && m.find(from - base)) {
      const start = m.start() + base;
      const stop = m.end() + base;
      if (stop === start) {
        from = start + codePointLength(input, start);
        continue;
      }
      if (!last && stop === end) {
        // It reaches the edge: it may go on, or exist only because the window ends here (`$`, `\b`).
        if (start < end - span) {
          report(start, stop); // already longer than the bound: reported cut
          done = stop;
        }
        break; // else short so far: the next window starts at or before it
      }
      report(start, stop);
      done = from = stop;
    }
    next = Math.max(next, done);
    if (next < n && next > done && isLowSurrogate(input, next)) next -= 1;
    pos = next;
  }
  return out;
}

function isLowSurrogate(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c >= 0xdc00 && c <= 0xdfff && i > 0 && (s.charCodeAt(i - 1) & 0xfc00) === 0xd800;
}

function codePointLength(s: string, i: number): number {
  const c = s.charCodeAt(i);
  return c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
}
