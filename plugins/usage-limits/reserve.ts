/**
 * What a request reserves from each budget before its call, and what it really spent after: one
 * definition for both modes (local.ts in embedded mode, shared.ts in distributed mode).
 *
 * The estimate: the prompt as a quarter of the body's length (over-counts JSON, the safe side)
 * plus the answer's cap (`max_tokens` and its aliases, times `n`, or `default_max_tokens`);
 * tokens for `tokens` budgets, priced with the pricing table for `cost` budgets. One request never
 * reserves more than `reservation_cap` × the budget's limit, so one huge `max_tokens` cannot lock
 * a whole budget while it runs.
 */
import { costOf, outputAllowance, type GatewayContext, type PricingService, type Usage } from '../../core/index.js';
import type { Budget } from './budgets.js';

export interface ReservationOptions {
  reservation_cap: number;
  default_max_tokens: number;
}

export interface Reservations {
  /** Each budget's reservation for this request (same order as `budgets`). */
  reserve(ctx: GatewayContext, budgets: ReadonlyArray<Budget>): number[];
  /** What the request really spent from `b` (its tokens, or their price in USD); 0 without usage. */
  spent(ctx: GatewayContext, b: Budget): number;
}

/** The model as the pricing table names it (`@provider/` prefixes stripped). */
function modelOf(ctx: GatewayContext): string {
  return String(ctx.target?.overrideParams?.model ?? ctx.body?.model ?? '').replace(/^@[^/]+\//, '');
}

function estimated(prompt: number, output: number): Usage {
  return { prompt_tokens: prompt, completion_tokens: output, total_tokens: prompt + output, cached_tokens: 0, reasoning_tokens: 0, source: 'estimated' };
}

export function createReservations(pricer: () => PricingService | undefined, options: ReservationOptions): Reservations {
  function amount(ctx: GatewayContext, b: Budget, usage: Usage): number {
    if (b.type === 'tokens') return usage.total_tokens;
    return costOf(usage, ctx.provider ?? 'openai', modelOf(ctx), pricer()).cents / 100;
  }

  return {
    reserve(ctx, budgets) {
      const reserved = new Array<number>(budgets.length).fill(0);
      const route = ctx.route;
      const body = ctx.body;
      // Pass-through bodies are opaque (files, audio): nothing is reserved, and the usage, when
      // the core reports one, is charged afterwards; a budget with no headroom left still refuses.
      if (route.kind !== 'model' || body === undefined) return reserved;
      const prompt = Math.ceil((ctx.rawBody?.length ?? 0) / 4);
      const output = outputAllowance(route.name, body, options.default_max_tokens);
      let usage: Usage | undefined;
      for (let i = 0; i < budgets.length; i++) {
        const b = budgets[i]!;
        // Tokens budgets (the common case) need no usage record, only cost budgets price one.
        const estimate = b.type === 'tokens' ? prompt + output : amount(ctx, b, (usage ??= estimated(prompt, output)));
        reserved[i] = Math.min(estimate, options.reservation_cap * b.limit);
      }
      return reserved;
    },
    spent(ctx, b) {
      return ctx.usage === undefined ? 0 : Math.max(0, amount(ctx, b, ctx.usage));
    },
  };
}
