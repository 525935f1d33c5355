/**
 * Gauges read at scrape time rather than kept up to date on the hot path: circuit-breaker
 * states, the log queue's drops, the store's use of its size limit, the token-counting pool's queue. A scrape every 15 s costs a
 * walk over a few maps; updating them per request would cost every request.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { breakerSnapshot, sharedStateFaults, type GatewayApp, type TokenCounter } from '../../core/index.js';
import { OTHER } from './label-sets.js';

/**
 * What the logging plugin publishes as the `log-stats` service. Declared here, by shape, rather
 * than by augmenting `AppServices`: the logging plugin owns that declaration.
 */
export interface LogStats {
  /** Records dropped because the log queue or the store was full, since start. */
  dropped(): number;
  /** Records waiting to be written. */
  queued(): number;
  /** Distributed mode only: the drops by reason (queue_full while PostgreSQL is away, write_failed, …). */
  droppedByReason?(): Record<string, number | undefined>;
}

/** The token counter's pool, when the core's counter exposes it (the pooled one does). */
interface PoolStats {
  readonly stats: { queued: number };
}

const BREAKER_STATE = { closed: 0, half_open: 1, open: 2 } as const;

function isLogStats(v: unknown): v is LogStats {
  return typeof v === 'object' && v !== null && typeof (v as LogStats).dropped === 'function' && typeof (v as LogStats).queued === 'function';
}

function hasPoolStats(tokens: TokenCounter): tokens is TokenCounter & PoolStats {
  const stats = (tokens as Partial<PoolStats>).stats;
  return typeof stats === 'object' && stats !== null && typeof stats.queued === 'number';
}

/**
 * The `log-stats` service, looked up at scrape time (a later plugin may provide it) and never
 * required: a pipeline without the logging plugin simply has no `gateway_log_*` values.
 */
function logStatsOf(app: GatewayApp): LogStats | undefined {
  try {
    const service = (app as unknown as { service(name: string): unknown }).service('log-stats');
    return isLogStats(service) ? service : undefined;
  } catch {
    return undefined;
  }
}

export function registerLiveGauges(app: GatewayApp, registry: Registry, maxLabelSets: number): { tokenQueue: boolean } {
  const registers = [registry];
  const breakers: Gauge<'target'> = new Gauge({
    name: 'gateway_circuit_breaker_state',
    help: 'Circuit breaker state per upstream target: 0 closed, 1 half_open, 2 open.',
    labelNames: ['target'] as const,
    registers,
    collect() {
      breakers.reset();
      // Targets past the cap fold into `other`, which shows the worst state among them.
      const states = new Map<string, number>();
      for (const b of breakerSnapshot()) {
        const label = b.label.slice(0, 128);
        const target = states.has(label) || states.size < maxLabelSets ? label : OTHER;
        states.set(target, Math.max(states.get(target) ?? 0, BREAKER_STATE[b.state]));
      }
      for (const [target, state] of states) breakers.set({ target }, state);
    },
  });
  // A counter (it only grows) whose value the logging plugin keeps: copied in at each scrape.
  const dropped: Counter<'reason'> = new Counter({
    name: 'gateway_log_dropped_total',
    help: 'Log records dropped because the log queue or the store was full (0 without the logging plugin); in distributed mode labelled by reason.',
    labelNames: ['reason'] as const,
    registers,
    collect() {
      dropped.reset();
      const stats = logStatsOf(app);
      // The unlabelled series of before: 0 without the logging plugin.
      if (stats === undefined) return void dropped.inc(0);
      // Embedded mode keeps its one unlabelled series; distributed mode says why (queue_full, …).
      const byReason = stats.droppedByReason?.();
      if (byReason === undefined) {
        dropped.inc(stats.dropped());
        return;
      }
      dropped.inc({ reason: 'queue_full' }, 0);
      for (const [reason, n] of Object.entries(byReason)) if (n !== undefined) dropped.inc({ reason }, n);
    },
  });
  const queued: Gauge = new Gauge({
    name: 'gateway_log_queued',
    help: 'Log records waiting to be written (0 without the logging plugin).',
    registers,
    collect() {
      queued.reset();
      const stats = logStatsOf(app);
      if (stats !== undefined) queued.set(stats.queued());
    },
  });
  const storeUsed: Gauge = new Gauge({
    name: 'gateway_store_used_bytes',
    help: 'Bytes of data in the store, as measured against store.map_size.',
    registers,
    collect() {
      storeUsed.set(app.store.capacity.used());
    },
  });
  const storeFull: Gauge = new Gauge({
    name: 'gateway_store_full',
    help: '1 while the store is at its size limit (admin writes answer 503 store_full, log records are dropped), else 0.',
    registers,
    collect() {
      storeFull.set(app.store.capacity.full() ? 1 : 0);
    },
  });
  const distributed = app.store.distributed;
  if (distributed !== undefined) {
    // Every part that talks to Valkey counts into one place (core); this copies the counts in.
    const faults: Counter<'kind'> = new Counter({
      name: 'gateway_shared_state_faults_total',
      help: 'Requests and writes that went without the shared state (Valkey unreachable or too slow), by kind (cache, breaker, ...).',
      labelNames: ['kind'] as const,
      registers,
      collect() {
        faults.reset();
        for (const [kind, n] of sharedStateFaults(distributed).snapshot()) faults.inc({ kind }, n);
      },
    });
  }
  const tokens = app.tokens;
  if (!hasPoolStats(tokens)) return { tokenQueue: false };
  const depth: Gauge = new Gauge({
    name: 'gateway_token_queue_depth',
    help: 'Token counts waiting for a worker thread.',
    registers,
    collect() {
      depth.set(tokens.stats.queued);
    },
  });
  return { tokenQueue: true };
}
