/**
 * Budgets in embedded mode: reserve before the call, settle after, in this process's memory, so
 * that 50 concurrent requests at a budget with room for 10 admit 10, not 50.
 *
 *   onRequestBody  each applicable budget reserves this request's estimate (reserve.ts); refused
 *                  when it does not fit, as in distributed mode:
 *                    settled + reserved in flight + this reservation > limit ─▶ 429 usage_limit_exceeded
 *                  (a request that reserves 0, e.g. pass-through, passes while settled + reserved < limit)
 *   onDone         settle: the reservation is given back and the real amount charged to the ledger
 *                  (plain and streamed answers alike; a failed, refused or cancelled request charges
 *                  what it reported, usually nothing, and its reservation is released all the same)
 *
 * The check and the reservation run in one synchronous step, so no other request of this process
 * slips in between. Only requests with an applicable budget touch the map.
 *
 * Overshoot bound, one process: admitted reservations never exceed the limit, so a budget's final
 * spend is at most `limit + Σ max(0, real − reserved)` over the requests in flight together. A
 * request adds to that sum only when its real amount exceeds its reservation: when the cap
 * (`reservation_cap`) cut it, or its prompt was under-estimated.
 *
 * Several processes on one data dir (`server.workers` W > 1, or several gateways): each process
 * holds its own reservations and sees the others' spend once they flush (`flush_ms`). Each admits
 * up to the headroom it sees, so the bound becomes `limit + (W − 1) × headroom + Σ max(0, real −
 * reserved) + what the other processes charged in their last flush interval` (headroom: the
 * limit minus the settled spend when the burst began; at most the limit). Distributed mode keeps
 * the one-process bound across every process and host; while Valkey is away under
 * `store.redis.budgets: fail_open`, a host falls back to these local reservations (shared.ts).
 */
import type { GatewayContext } from '../../core/index.js';
import type { Budget } from './budgets.js';
import type { Ledger } from './ledger.js';
import type { Reservations } from './reserve.js';
import { budgetExceeded } from './errors.js';

/** Float slack, as the distributed script uses: a reservation that fits exactly is admitted. */
const EPSILON = 1e-9;
/** Counters kept in the map before the idle ones (no request in flight) are dropped. */
const SWEEP_ABOVE = 4096;

interface Hold {
  budgets: Budget[];
  reserved: number[];
}

declare module '../../core/context.js' {
  interface ContextVars {
    budgetHold: Hold;
  }
}

export interface LocalBudgets {
  /** Reserves every budget for this request, or throws the 429 of the first that has no room. */
  check(ctx: GatewayContext, budgets: Budget[]): void;
  /** Gives the reservation back and charges what the request really spent. */
  settle(ctx: GatewayContext): void;
}

export function createLocalBudgets(ledger: Ledger, reservations: Reservations): LocalBudgets {
  /**
   * counter id → the sum reserved by requests in flight, and how many hold a part of it. An entry
   * left with no holder is kept for the next request of that budget (no map churn per request)
   * and swept once the map holds SWEEP_ABOVE counters.
   */
  const inFlight = new Map<string, { amount: number; holders: number }>();

  function fits(b: Budget, reserve: number): boolean {
    if (ledger.marked(b)) return false;
    const used = ledger.spent(b) + (inFlight.get(b.counterId)?.amount ?? 0);
    return reserve > 0 ? used + reserve <= b.limit + EPSILON : used < b.limit;
  }

  function sweep(): void {
    for (const [id, entry] of inFlight) if (entry.holders === 0) inFlight.delete(id);
  }

  return {
    check(ctx, budgets) {
      const reserved = reservations.reserve(ctx, budgets);
      for (let i = 0; i < budgets.length; i++) if (!fits(budgets[i]!, reserved[i]!)) throw budgetExceeded(budgets[i]!);
      for (let i = 0; i < budgets.length; i++) {
        const id = budgets[i]!.counterId;
        const entry = inFlight.get(id);
        if (entry === undefined) {
          if (inFlight.size >= SWEEP_ABOVE) sweep();
          inFlight.set(id, { amount: reserved[i]!, holders: 1 });
        } else {
          entry.amount += reserved[i]!;
          entry.holders++;
        }
      }
      ctx.set('budgetHold', { budgets, reserved });
    },
    settle(ctx) {
      const hold = ctx.get('budgetHold');
      if (hold === undefined) return;
      for (let i = 0; i < hold.budgets.length; i++) {
        const b = hold.budgets[i]!;
        const entry = inFlight.get(b.counterId);
        if (entry !== undefined) {
          // Zeroed with its last holder: float sums never leave a residue behind.
          entry.amount = --entry.holders === 0 ? 0 : entry.amount - hold.reserved[i]!;
        }
        ledger.charge(b, reservations.spent(ctx, b));
      }
    },
  };
}
