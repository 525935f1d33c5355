/**
 * Guardrail verdicts in a rollup bucket: per check id, how many of its results passed, failed or
 * errored on the request (input) and on the answer (output), and how many requests a guardrail
 * denied. Read by `GET /v1/analytics/groups/guardrails` (groups.ts).
 *
 *   bucket.guardrails = {
 *     denied: 2,
 *     checks: ['default.pii', 'acme.codenames'],
 *     counts: [ 9, 1, 0,  4, 0, 0,     ← default.pii:    input pass fail error, output pass fail error
 *               3, 2, 1,  0, 0, 0 ],   ← acme.codenames
 *   }
 *
 * Absent from a bucket none of whose requests had guardrails: such buckets keep the shape, the
 * msgpack structure and the size they had before guardrails existed, and a request without
 * guardrails pays one property read. Columns, not a map keyed by check id: LMDB's shared msgpack
 * structures record one structure per set of object keys, so a map would add one per distinct set
 * of checks; three fields make one structure, whatever the checks.
 *
 * Unbounded on purpose: the ids come from the check registry (a request naming an unknown check is
 * refused with a 400 before it runs), so a bucket holds at most as many ids as checks exist.
 */
import type { GuardrailOutcome, GuardrailsLog } from '../../core/index.js';

export interface GuardrailCounts {
  /** Requests a guardrail denied (a 446, or a stream ended by a deny). */
  denied: number;
  /** Check ids, in the order first seen. */
  checks: string[];
  /** {@link SLOTS} counts per check, at `SLOTS × its index`, in {@link PHASES} × {@link VERDICTS} order. */
  counts: number[];
}

export const PHASES = ['input', 'output'] as const;
export const VERDICTS = ['pass', 'fail', 'error'] as const;
export type Phase = (typeof PHASES)[number];
export type Verdict = (typeof VERDICTS)[number];
export const SLOTS = PHASES.length * VERDICTS.length;

const INPUT = 0;
const OUTPUT = VERDICTS.length;

export function emptyGuardrailCounts(): GuardrailCounts {
  return { denied: 0, checks: [], counts: [] };
}

/** Where a check's counts start in `counts`; a new check gets zeros. */
function slotsOf(into: GuardrailCounts, check: string): number {
  // A handful of checks per bucket: a scan is cheaper than keeping a Map beside each bucket.
  let i = into.checks.indexOf(check);
  if (i === -1) {
    i = into.checks.length;
    into.checks.push(check);
    for (let s = 0; s < SLOTS; s++) into.counts.push(0);
  }
  return i * SLOTS;
}

function addHooks(into: GuardrailCounts, hooks: readonly GuardrailOutcome[], phase: number): void {
  for (const guardrail of hooks) {
    for (const check of guardrail.checks) {
      // An error decides the verdict (the guardrail's `on_error`), so it is counted as an error, not as that verdict.
      const verdict = check.error !== undefined ? 2 : check.verdict ? 0 : 1;
      into.counts[slotsOf(into, check.id) + phase + verdict]! += 1;
    }
  }
}

/**
 * Adds one request's guardrail results.
 *
 * @example
 *   addGuardrails(bucket.guardrails ??= emptyGuardrailCounts(), record.guardrails);
 */
export function addGuardrails(into: GuardrailCounts, log: GuardrailsLog): void {
  if (log.verdict === 'denied') into.denied++;
  addHooks(into, log.results.before_request_hooks, INPUT);
  addHooks(into, log.results.after_request_hooks, OUTPUT);
}

/** Adds `from` into `into` (a new copy when `into` is absent: pending values are merged twice, into the minute and the hour). */
export function mergeGuardrailCounts(into: GuardrailCounts | undefined, from: GuardrailCounts): GuardrailCounts {
  const out = into ?? emptyGuardrailCounts();
  out.denied += from.denied;
  for (let i = 0; i < from.checks.length; i++) {
    const at = slotsOf(out, from.checks[i]!);
    for (let s = 0; s < SLOTS; s++) out.counts[at + s]! += from.counts[i * SLOTS + s]!;
  }
  return out;
}

// ── PostgreSQL: a jsonb map added key by key (pg-store.ts) ────────────────────────────────────

/** The map's key of the denied count (check keys always hold two `:`, so it cannot clash). */
const DENIED = 'denied';

/**
 * `{"denied": n, "<check id>:<phase>:<verdict>": n, …}`, non-zero counts only; `{}` when absent,
 * which adds nothing to the stored map.
 */
export function guardrailsToMap(g: GuardrailCounts | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  if (g === undefined) return out;
  if (g.denied > 0) out[DENIED] = g.denied;
  for (let i = 0; i < g.checks.length; i++) {
    for (let s = 0; s < SLOTS; s++) {
      const n = g.counts[i * SLOTS + s]!;
      if (n !== 0) out[`${g.checks[i]}:${PHASES[Math.floor(s / VERDICTS.length)]}:${VERDICTS[s % VERDICTS.length]}`] = n;
    }
  }
  return out;
}

/** The counts of a stored map; undefined for `{}` (a row none of whose requests had guardrails). */
export function guardrailsFromMap(map: Record<string, number | string>): GuardrailCounts | undefined {
  let out: GuardrailCounts | undefined;
  for (const [key, value] of Object.entries(map)) {
    if (key === DENIED) {
      (out ??= emptyGuardrailCounts()).denied += Number(value);
      continue;
    }
    // The id may hold `:` itself: phase and verdict are the last two parts.
    const v = key.lastIndexOf(':');
    const p = key.lastIndexOf(':', v - 1);
    const phase = PHASES.indexOf(key.slice(p + 1, v) as Phase);
    const verdict = VERDICTS.indexOf(key.slice(v + 1) as Verdict);
    if (p <= 0 || phase === -1 || verdict === -1) continue;
    out ??= emptyGuardrailCounts();
    out.counts[slotsOf(out, key.slice(0, p)) + phase * VERDICTS.length + verdict]! += Number(value);
  }
  return out;
}
