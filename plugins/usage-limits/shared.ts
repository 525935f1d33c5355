/**
 * Budgets in distributed mode: reserve before the call, settle after, in Valkey, so that a budget
 * never overshoots by more than what is in flight, on any number of hosts.
 *
 *   onRequestBody  each budget reserves this request's estimated amount, capped at
 *                  `reservation_cap` × the budget's limit, in the same single script as the rate
 *                  limits (governance claim); refused when the reservation does not fit:
 *                  settled + reserved + this reservation > limit ─▶ 429 usage_limit_exceeded
 *   onDone         settle: the reservation is given back and the real amount charged (plain and
 *                  streamed answers alike; a failed or cancelled request charges what it reported,
 *                  usually nothing); queued with other settles, one pipeline per event-loop turn
 *
 * The estimate and the real amount are reserve.ts's, the same as in embedded mode (local.ts).
 *
 * Overshoot bound: admitted reservations never exceed the limit, so a budget's final spend is at
 * most `limit + Σ (real − reserved)` over the requests in flight together, and a request only adds
 * to that sum when its real amount exceeds its reservation: when the cap cut it, or its prompt
 * was under-estimated.
 *
 * Valkey unreachable: store.redis.budgets = fail_closed (default) ─▶ 503 shared_state_unavailable;
 * fail_open ─▶ this host reserves and settles against its mirror of the totals (the ledger), as
 * embedded mode does (local.ts), then pushes what it charged to Valkey once Valkey answers again.
 */
import { budgetValkeyKey, governanceOf, type GatewayApp, type GatewayContext, type GovernanceClaim } from '../../core/index.js';
import type { Budget } from './budgets.js';
import type { Ledger } from './ledger.js';
import type { Reservations } from './reserve.js';
import type { LocalBudgets } from './local.js';
import { budgetExceeded as exceeded } from './errors.js';

/** A periodic budget's counter outlives its period by this much (admin reads of last month). */
const KEEP_AFTER_PERIOD_MS = 35 * 86_400_000;

interface Reservation {
  budgets: Budget[];
  reserved: number[];
  /** The reservation bucket in Valkey, or undefined: counted locally (Valkey was away). */
  bucket: string | undefined;
}

declare module '../../core/context.js' {
  interface ContextVars {
    budgetReservation: Reservation;
  }
}

export interface SharedBudgets {
  /** Submits this request's reservations (or none: the last seat still runs the others' claims). */
  check(ctx: GatewayContext, budgets: Budget[]): void | Promise<void>;
  none(ctx: GatewayContext): void | Promise<void>;
  /** Settles the request's reservation with what it really spent. */
  settle(ctx: GatewayContext): void;
  /** Sends the queued settles (at shutdown). */
  flush(): Promise<void>;
}

export function createSharedBudgets(app: GatewayApp, ledger: Ledger, reservations: Reservations, local: LocalBudgets): SharedBudgets {
  const governance = governanceOf(app);
  const seat = governance.join('budgets');
  const d = app.store.distributed!;
  /** Charged locally while Valkey was away (fail_open), pushed once it is back. */
  const owed = new Map<string, { budget: Budget; amount: number }>();

  governance.onRecover(() => {
    if (owed.size === 0) return;
    const batch = [...owed.values()];
    owed.clear();
    governance.settle(
      [],
      batch.map(({ budget, amount }) => ({ key: budgetValkeyKey(d, budget.counterId), reserved: 0, bucket: '0', actual: amount, expireAt: expireAt(budget) })),
      (totals) => batch.forEach(({ budget }, i) => ledger.observe(budget, totals[i]!)),
    );
  });

  return {
    check(ctx, budgets) {
      const reserved = reservations.reserve(ctx, budgets);
      const claim: GovernanceClaim = {
        kind: 'budgets',
        rates: [],
        budgets: budgets.map((b, i) => ({ key: budgetValkeyKey(d, b.counterId), reserve: reserved[i]!, limit: b.limit, expireAt: expireAt(b), seed: ledger.spent(b) })),
        decide(v) {
          if (v.failed !== -1) throw exceeded(budgets[v.failed]!);
          if (v.ok) ctx.set('budgetReservation', { budgets, reserved, bucket: v.bucket });
        },
        fallback() {
          // This host reserves against its mirror of the totals, as in embedded mode.
          local.check(ctx, budgets);
          ctx.set('budgetReservation', { budgets, reserved, bucket: undefined });
        },
      };
      return seat.submit(ctx, claim);
    },
    none(ctx) {
      return seat.submit(ctx, undefined);
    },
    settle(ctx) {
      const r = ctx.get('budgetReservation');
      if (r === undefined) return;
      const amounts = r.budgets.map((b) => reservations.spent(ctx, b));
      if (r.bucket === undefined) {
        local.settle(ctx);
        r.budgets.forEach((b, i) => {
          const amount = amounts[i]!;
          if (amount <= 0) return;
          const entry = owed.get(b.counterId);
          if (entry) entry.amount += amount;
          else owed.set(b.counterId, { budget: b, amount });
        });
        return;
      }
      const bucket = r.bucket;
      governance.settle(
        [],
        r.budgets.map((b, i) => ({ key: budgetValkeyKey(d, b.counterId), reserved: r.reserved[i]!, bucket, actual: amounts[i]!, expireAt: expireAt(b) })),
        (totals) => r.budgets.forEach((b, i) => ledger.observe(b, totals[i]!)),
      );
    },
    flush() {
      return governance.flush().catch(() => undefined);
    },
  };
}

function expireAt(b: Budget): number {
  return b.resetsAt === null ? 0 : b.resetsAt + KEEP_AFTER_PERIOD_MS;
}
