/**
 * The check itself: every applicable limit is taken from in one counters transaction, all or
 * nothing. A refusal is a 429 `rate_limit_exceeded` with `retry-after` (whole seconds, rounded up)
 * and the `x-ratelimit-*` headers of the limit that refused; a pass carries the headers of the
 * tightest limits. Token limits leave a reservation on the context for the reconciliation.
 */
import type { CounterState, CounterTake, Counters, GatewayContext, GatewayError } from '../../core/index.js';
import type { AppliedLimit } from './limits.js';
import { writeRateHeaders } from './headers.js';
import { RateLimitErrors } from './errors.js';
import { UNIT_WORD } from './units.js';

/** What a request reserved from its token limits: the estimate, to be replaced by the real usage. */
export interface TokenReservation {
  estimate: number;
  cells: Array<{ key: string; emissionMs: number }>;
  /** Taken from the Valkey counters (distributed mode), not this host's own. */
  shared?: true;
}

declare module '../../core/context.js' {
  interface ContextVars {
    rateLimitTokens: TokenReservation;
  }
}

/**
 * Takes `applied` for this request (`tokens`: its token estimate); throws the 429 when one refuses.
 *
 * @example
 *   enforce(ctx, { applied, tokens: 330, counters });
 */
export function enforce(ctx: GatewayContext, check: { applied: ReadonlyArray<AppliedLimit>; tokens: number; counters: Counters }): void {
  const { applied, tokens, counters } = check;
  const takes = takesOf(applied, tokens);
  refuseHopeless(applied, takes);
  const result = counters.take(takes, Date.now());
  if (!result.ok) throw refused(applied, result.retryAfterMs, result.states, result.failed);
  passed(ctx, applied, result.states, tokens, false);
}

/** One counter take per applied limit: a request for request limits, the estimate for token limits. */
export function takesOf(applied: ReadonlyArray<AppliedLimit>, tokens: number): CounterTake[] {
  return applied.map((a) => ({
    key: a.key,
    cost: a.limit.type === 'requests' ? 1 : tokens,
    emissionMs: a.limit.emissionMs,
    burst: a.limit.value,
  }));
}

/** A limit of 0, or a request bigger than a whole limit, can never pass: refused with no counter read. */
export function refuseHopeless(applied: ReadonlyArray<AppliedLimit>, takes: ReadonlyArray<CounterTake>): void {
  const hopeless = takes.findIndex((t) => t.burst <= 0 || t.cost > t.burst);
  if (hopeless === -1) return;
  const limit = applied[hopeless]!.limit;
  const message =
    limit.value <= 0
      ? `Rate limit reached for ${limit.label}: it allows no ${limit.type}.`
      : `This request needs ${takes[hopeless]!.cost} tokens, more than the ${limit.value} tokens per ${UNIT_WORD[limit.unit]} allowed for ${limit.label}.`;
  // Only the refusing limit is reported: the others were not read.
  throw refusal(message, limit.periodMs, { applied: [applied[hopeless]!], states: [{ remaining: 0, resetMs: 0 }], failed: 0 });
}

/** The 429 for a take that `failed` (index in `applied`) refused. */
export function refused(applied: ReadonlyArray<AppliedLimit>, retryAfterMs: number, states: ReadonlyArray<CounterState>, failed: number): Error {
  const limit = applied[failed]!.limit;
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  const message = `Rate limit reached for ${limit.label}: ${limit.value} ${limit.type} per ${UNIT_WORD[limit.unit]}. Retry after ${seconds} s.`;
  return refusal(message, retryAfterMs, { applied, states, failed });
}

/** A passed take: the headers, and the token reservation for the reconciliation (`shared`: in Valkey). */
export function passed(ctx: GatewayContext, applied: ReadonlyArray<AppliedLimit>, states: ReadonlyArray<CounterState>, tokens: number, shared: boolean): void {
  writeRateHeaders(ctx.responseHeaders, { applied, states });
  let cells: TokenReservation['cells'] | undefined;
  for (const a of applied) if (a.limit.type === 'tokens') (cells ??= []).push({ key: a.key, emissionMs: a.limit.emissionMs });
  if (cells !== undefined) ctx.set('rateLimitTokens', shared ? { estimate: tokens, cells, shared } : { estimate: tokens, cells });
}

interface Report {
  applied: ReadonlyArray<AppliedLimit>;
  states: ReadonlyArray<CounterState>;
  /** The index of the refusing limit in `applied`. */
  failed: number;
}

/** The refusal as thrown: the 429, with the exact wait (`retry-after` is whole seconds) for an MCP answer. */
export type Refusal = GatewayError & { retryAfterMs: number };

export function refusal(message: string, retryAfterMs: number, report: Report): Refusal {
  const headers: Record<string, string> = { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) };
  writeRateHeaders(headers, report);
  return Object.assign(RateLimitErrors.exceeded(message, { headers }), { retryAfterMs: Math.max(0, Math.ceil(retryAfterMs)) });
}
