/**
 * Rate limits in distributed mode: the same limits, counted in Valkey so that every host shares
 * one counter per limit. The plugin hands its takes to the governance runner as a claim
 * (core/store/distributed/governance-claims.ts): they run in the same single script as the
 * budgets' reservations, all or nothing, and the claim maps a refusal to the plugin's own 429.
 *
 *   Valkey answers      ─▶ refused: 429 rate_limit_exceeded (as on one host) │ passed: x-ratelimit-*
 *   Valkey unreachable  ─▶ store.redis.rate_limits = fail_open (default): this host's LMDB counters
 *                          decide, as on the embedded default │ fail_closed: 503 shared_state_unavailable
 *   onDone              ─▶ token limits trade the estimate for the real usage, where they were taken
 */
import { governanceOf, rateCellKey, type CounterState, type Counters, type GatewayApp, type GatewayContext, type GovernanceClaim } from '../../core/index.js';
import { enforce, passed, refuseHopeless, refused, takesOf } from './enforce.js';
import type { AppliedLimit } from './limits.js';

/** Float slack (ms), as the LMDB counters use. */
const EPSILON_MS = 1e-3;

export interface SharedRateLimits {
  /** Submits this request's takes (or none: the last seat still runs the others' claims). */
  check(ctx: GatewayContext, applied: ReadonlyArray<AppliedLimit>, tokens: number): void | Promise<void>;
  /** Nothing applies to this request. */
  none(ctx: GatewayContext): void | Promise<void>;
  /** Trades a shared token reservation for the real usage (`delta` tokens). */
  adjust(cells: ReadonlyArray<{ key: string; emissionMs: number }>, delta: number): void;
  /** Sends the queued settles (at shutdown). */
  flush(): Promise<void>;
}

export function createSharedRateLimits(app: GatewayApp, local: () => Counters): SharedRateLimits {
  const governance = governanceOf(app);
  const seat = governance.join('rate_limits');
  return {
    check(ctx, applied, tokens) {
      const takes = takesOf(applied, tokens);
      refuseHopeless(applied, takes);
      const claim: GovernanceClaim = {
        kind: 'rate_limits',
        rates: takes.map((t) => ({ key: rateCellKey(governance, t.key), cost: t.cost, emissionMs: t.emissionMs, burst: t.burst })),
        budgets: [],
        decide(v) {
          const states = v.tats.map((tat, i) => stateOf(tat, v.now, takes[i]!.emissionMs, takes[i]!.burst));
          if (v.failed !== -1) throw refused(applied, v.retryAfterMs, states, v.failed);
          if (v.ok) passed(ctx, applied, states, tokens, true);
        },
        fallback() {
          enforce(ctx, { applied, tokens, counters: local() });
        },
      };
      return seat.submit(ctx, claim);
    },
    none(ctx) {
      return seat.submit(ctx, undefined);
    },
    adjust(cells, delta) {
      governance.settle(
        cells.map((c) => ({ key: rateCellKey(governance, c.key), delta, emissionMs: c.emissionMs })),
        [],
      );
    },
    flush() {
      return governance.flush().catch(() => undefined);
    },
  };
}

/** A cell's state from its TAT, as core/store/counters.ts computes it. */
function stateOf(tat: number, now: number, emissionMs: number, burst: number): CounterState {
  const ahead = Math.max(0, tat - now);
  const remaining = Math.floor(burst - ahead / emissionMs + EPSILON_MS / emissionMs);
  return { remaining: Math.min(burst, Math.max(0, remaining)), resetMs: ahead };
}
