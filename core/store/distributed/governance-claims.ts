/**
 * The contract by which several plugins (rate-limit, usage-limits) take part in ONE Valkey script
 * per request, and the fault modes around it.
 *
 *   setup     each governance plugin takes a seat: governanceOf(app).join('rate_limits' | 'budgets')
 *             (plugins set up in pipeline order, so the seats are in pipeline order too)
 *   request   each seat's onRequestBody calls seat.submit(ctx, claim | undefined)
 *               not the last seat ─▶ the claim waits on the context
 *               the last seat     ─▶ ONE script takes every waiting claim, all or nothing, then each
 *                                    claim's decide() sees its part of the verdict and throws its
 *                                    own refusal (rate-limit 429, usage-limits 429) when it refused
 *   answer    settle(...) after the answer: queued, sent in one pipeline per event-loop turn, never
 *             awaited by a client
 *
 * So a claim carries its counters and its own refusal mapping; core knows nothing of limits or
 * budgets. A request refused or answered before the last seat (auth, a plugin in between) takes
 * nothing: the waiting claims are simply dropped with the context.
 *
 * Faults (Valkey unreachable: the command client has no offline queue, so a call fails at once,
 * or after `command_timeout`): each claim's kind has its mode from `store.redis`:
 *   fail_closed  the request is refused: 503 `shared_state_unavailable`
 *   fail_open    the claim's fallback() counts locally (this host's own counters)
 * Every faulted request counts in `sharedStateFaults` (gateway_shared_state_faults_total); the
 * first fault of an outage logs one warning, the first success after it logs the recovery and runs
 * the recovery hooks (a plugin pushes what it counted locally) and retries the settles that failed.
 */
import type { Redis } from 'ioredis';
import type { GatewayContext } from '../../context.js';
import type { GatewayApp } from '../../plugin.js';
import type { FaultMode } from '../../config/types.js';
import { Errors } from '../../errors.js';
import type { Distributed } from './connections.js';
import { sharedStateFaults } from './faults.js';
import {
  defineGovernanceScripts,
  parseTakeReply,
  settleOnPipeline,
  takeGovernance,
  takeOnPipeline,
  type BudgetSettle,
  type BudgetTake,
  type RateSettle,
  type RateTake,
  type TakeReply,
} from './governance-scripts.js';

export type GovernanceKind = 'rate_limits' | 'budgets';

/** What one plugin asks of the shared counters for one request. */
export interface GovernanceClaim {
  kind: GovernanceKind;
  rates: RateTake[];
  budgets: BudgetTake[];
  /** Sees this claim's part of the verdict; throws the plugin's own refusal when one of its counters refused. */
  decide(verdict: ClaimVerdict): void;
  /** Valkey unreachable and this kind fails open: count locally (may throw the plugin's refusal). */
  fallback(): void | Promise<void>;
}

/**
 * The take's reply as one claim sees it: the same fields, sliced to this claim's counters
 * (`failed` indexes this claim's rates, then its budgets; -1 when none of them refused, even if
 * another claim's counter did and `ok` is false).
 */
export type ClaimVerdict = TakeReply;

export interface GovernanceSeat {
  /** Adds this plugin's claim (or none) for the request; the last seat runs every claim at once. */
  submit(ctx: GatewayContext, claim: GovernanceClaim | undefined): void | Promise<void>;
}

export interface Governance {
  readonly redis: Redis;
  key(name: string): string;
  /** Takes a seat, at setup (pipeline order). */
  join(kind: GovernanceKind): GovernanceSeat;
  mode(kind: GovernanceKind): FaultMode;
  /** Queues a settle (sent with the others of this event-loop turn); `then` gets each budget's new spend. */
  settle(rates: RateSettle[], budgets: BudgetSettle[], then?: (used: number[]) => void): void;
  /** Called once each time Valkey answers again after an outage. */
  onRecover(fn: () => void): void;
  /** True between the first fault and the next success. */
  readonly down: boolean;
  /** Sends the queued settles and waits for them. */
  flush(): Promise<void>;
}

declare module '../../context.js' {
  interface ContextVars {
    governanceClaims: GovernanceClaim[];
  }
}

/** Settles that failed while Valkey was away and wait for it; beyond this many the oldest are dropped. */
const MAX_PENDING_SETTLES = 10_000;

/**
 * One runner per pipeline, keyed by the pipeline's config object: a config reload builds a new
 * pipeline whose plugins take new seats, while requests still running on the old one finish with
 * the old seats.
 */
const instances = new WeakMap<object, Governance>();

/** The governance runner of this pipeline, shared by its governance plugins. */
export function governanceOf(app: GatewayApp): Governance {
  const distributed = app.store.distributed;
  if (distributed === undefined) throw new Error('governanceOf: not in distributed mode');
  let g = instances.get(app.config);
  if (g === undefined) {
    g = createGovernance(distributed, app.log);
    instances.set(app.config, g);
  }
  return g;
}

interface Queued {
  rates: RateSettle[];
  budgets: BudgetSettle[];
  then: ((used: number[]) => void) | undefined;
}

function createGovernance(distributed: Distributed, log: GatewayApp['log']): Governance {
  const redis = distributed.redis;
  const config = distributed.redisConfig;
  const faults = sharedStateFaults(distributed);
  defineGovernanceScripts(redis);
  const seats: GovernanceKind[] = [];
  const recoverHooks: Array<() => void> = [];
  let down = false;
  /** When the outage began: only a command sent after it proves Valkey is back (not a late reply). */
  let downAt = 0;
  let queue: Queued[] = [];
  let scheduled: Promise<void> | undefined;
  let failedSettles: Queued[] = [];

  const mode = (kind: GovernanceKind): FaultMode => config[kind];

  function faulted(kinds: ReadonlySet<GovernanceKind>, err: unknown): void {
    for (const k of kinds) faults.count(k);
    if (down) return;
    down = true;
    downAt = performance.now();
    log.warn('Valkey unreachable: governance counters follow their fault modes until it is back', {
      error: (err as Error)?.message,
      rate_limits: config.rate_limits,
      budgets: config.budgets,
    });
  }

  function recovered(sentAt: number): void {
    if (!down || sentAt < downAt) return;
    down = false;
    log.warn('Valkey reachable again: governance counters are shared again');
    const retry = failedSettles;
    failedSettles = [];
    for (const s of retry) enqueue(s);
    for (const fn of recoverHooks) {
      try {
        fn();
      } catch (err) {
        log.warn('governance recovery hook failed', { err });
      }
    }
  }

  // Takes batch like Nagle's algorithm: with none in flight a take leaves at once (one request
  // alone never waits for the event-loop turn to end); while some are in flight, the takes of this
  // turn wait for its end and leave together, in one socket write.
  let takesInFlight = 0;
  let pendingTakes: Array<{ rates: RateTake[]; budgets: BudgetTake[]; resolve: (r: TakeReply) => void; reject: (err: unknown) => void }> = [];
  let takeFlushScheduled = false;

  function take(rates: RateTake[], budgets: BudgetTake[]): Promise<TakeReply> {
    if (takesInFlight === 0 && pendingTakes.length === 0) {
      takesInFlight++;
      return takeGovernance(redis, rates, budgets).finally(() => void takesInFlight--);
    }
    return new Promise<TakeReply>((resolve, reject) => {
      pendingTakes.push({ rates, budgets, resolve, reject });
      if (!takeFlushScheduled) {
        takeFlushScheduled = true;
        setImmediate(flushTakes);
      }
    });
  }

  function flushTakes(): void {
    takeFlushScheduled = false;
    const batch = pendingTakes;
    pendingTakes = [];
    const pipeline = redis.pipeline();
    for (const b of batch) takeOnPipeline(pipeline, b.rates, b.budgets);
    takesInFlight += batch.length;
    pipeline.exec().then(
      (results) => {
        takesInFlight -= batch.length;
        batch.forEach((b, i) => {
          const [err, raw] = results?.[i] ?? [new Error('no reply in the pipeline'), undefined];
          if (err) b.reject(err);
          else b.resolve(parseTakeReply(raw as Array<string | number>, b.rates.length, b.budgets.length));
        });
      },
      (err: unknown) => {
        takesInFlight -= batch.length;
        for (const b of batch) b.reject(err);
      },
    );
  }

  async function run(claims: GovernanceClaim[]): Promise<void> {
    const rates: RateTake[] = [];
    const budgets: BudgetTake[] = [];
    for (const c of claims) {
      for (const r of c.rates) rates.push(r);
      for (const b of c.budgets) budgets.push(b);
    }
    let reply;
    const sentAt = performance.now();
    try {
      reply = await take(rates, budgets);
    } catch (err) {
      const kinds = new Set(claims.map((c) => c.kind));
      faulted(kinds, err);
      for (const k of kinds) if (mode(k) === 'fail_closed') throw Errors.sharedStateUnavailable(undefined, { cause: err });
      for (const c of claims) await c.fallback();
      return;
    }
    recovered(sentAt);
    const totalRates = rates.length;
    let ro = 0;
    let bo = 0;
    for (const c of claims) {
      let failed = -1;
      if (!reply.ok) {
        if (reply.failed < totalRates) {
          if (reply.failed >= ro && reply.failed < ro + c.rates.length) failed = reply.failed - ro;
        } else {
          const bi = reply.failed - totalRates;
          if (bi >= bo && bi < bo + c.budgets.length) failed = c.rates.length + bi - bo;
        }
      }
      c.decide({
        ok: reply.ok,
        failed,
        retryAfterMs: reply.retryAfterMs,
        now: reply.now,
        tats: reply.tats.slice(ro, ro + c.rates.length),
        budgets: reply.budgets.slice(bo, bo + c.budgets.length),
        bucket: reply.bucket,
      });
      ro += c.rates.length;
      bo += c.budgets.length;
    }
  }

  function enqueue(s: Queued): void {
    queue.push(s);
    scheduled ??= new Promise<void>((resolve) => setImmediate(() => void sendSettles().then(resolve)));
  }

  async function sendSettles(): Promise<void> {
    scheduled = undefined;
    const batch = queue;
    queue = [];
    if (batch.length === 0) return;
    const pipeline = redis.pipeline();
    for (const s of batch) settleOnPipeline(pipeline, s.rates, s.budgets);
    const sentAt = performance.now();
    let results: Array<[Error | null, unknown]> | null;
    try {
      results = await pipeline.exec();
    } catch (err) {
      return settlesFailed(batch, err);
    }
    for (let i = 0; i < batch.length; i++) {
      const [err, value] = results?.[i] ?? [new Error('no reply'), undefined];
      if (err) {
        settlesFailed([batch[i]!], err);
        continue;
      }
      recovered(sentAt);
      try {
        batch[i]!.then?.((value as string[]).map(Number));
      } catch (e) {
        log.warn('governance settle observer failed', { err: e });
      }
    }
  }

  /**
   * Kept for when Valkey is back. A settle that failed after Valkey ran it (a timeout on the way
   * back) would then count twice; a connection that is down, the usual fault, never ran it.
   */
  function settlesFailed(batch: Queued[], err: unknown): void {
    // Not counted per request in the metric (a settle refuses no one), but it opens the outage.
    if (!down) faulted(new Set(), err);
    failedSettles.push(...batch);
    if (failedSettles.length > MAX_PENDING_SETTLES) failedSettles.splice(0, failedSettles.length - MAX_PENDING_SETTLES);
  }

  return {
    redis,
    key: (name) => distributed.key(name),
    mode,
    get down() {
      return down;
    },
    join(kind) {
      const index = seats.push(kind) - 1;
      return {
        submit(ctx, claim) {
          const last = index === seats.length - 1;
          let claims = ctx.get('governanceClaims');
          if (claim !== undefined) {
            if (claims === undefined) ctx.set('governanceClaims', (claims = [claim]));
            else claims.push(claim);
          }
          if (!last || claims === undefined || claims.length === 0) return;
          ctx.set('governanceClaims', []);
          return run(claims);
        },
      };
    },
    settle(rates, budgets, then) {
      if (rates.length === 0 && budgets.length === 0) return;
      enqueue({ rates, budgets, then });
    },
    onRecover(fn) {
      recoverHooks.push(fn);
    },
    async flush() {
      await scheduled;
      if (queue.length > 0) await sendSettles();
    },
  };
}

/** Valkey key of a rate cell (the LMDB counter's own key, under the gateway's prefix). */
export function rateCellKey(g: Pick<Governance, 'key'>, counterKey: string): string {
  return g.key(`gov:r:${counterKey}`);
}
