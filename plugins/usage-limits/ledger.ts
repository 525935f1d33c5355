/**
 * Budget counters in `policy_usage`, charged after each answer.
 *
 * Charges accumulate in memory and are flushed every `flush_ms` (and on shutdown) in one
 * synchronous transaction that adds each delta to the stored total: additions commute, so every
 * process sharing the data dir adds its own and none is lost, and no request waits on an fsync.
 * A check reads the stored total plus this process's unflushed delta; what another process spent
 * in its last flush interval is the only lag.
 *
 * In distributed mode the totals that decide live in Valkey; the records here mirror them
 * (`observe`: the total Valkey answered at settle time) so the admin lists, the alerts and the
 * `exhausted` marks keep working, and they are the local fallback while Valkey is away.
 */
import { nowIso, uuidv7, type Records, type Store } from '../../core/index.js';
import type { Budget } from './budgets.js';

type Entity = Records.PolicyUsageEntity;

export interface Ledger {
  spent(b: Budget): number;
  /** The stored counter is marked exhausted (it ran out, here or in another process). */
  marked(b: Budget): boolean;
  charge(b: Budget, amount: number): void;
  /** Distributed mode: the counter's total is now `total` (as Valkey answered). */
  observe(b: Budget, total: number): void;
  flush(): void;
  close(): void;
}

export function createLedger(store: Store, flushMs: number, onAlert: (alert: Records.UsageAlert) => void): Ledger {
  /** `absolute`: a total observed in Valkey, which replaces the stored one (deltas add to it). */
  const pending = new Map<string, { budget: Budget; delta: number; absolute?: number }>();
  let timer: NodeJS.Timeout | undefined;

  function flush(): void {
    timer = undefined;
    if (pending.size === 0) return;
    const batch = [...pending.values()];
    pending.clear();
    const alerts: Records.UsageAlert[] = [];
    store.root.transactionSync(() => {
      for (const { budget: b, delta, absolute } of batch) {
        const now = nowIso();
        const old = store.c.policyUsage.get(b.counterId);
        const usage = (absolute ?? old?.current_usage ?? 0) + delta;
        const next: Entity = {
          id: b.counterId,
          policy_id: b.owner,
          value_key: b.valueKey,
          current_usage: usage,
          status: usage >= b.limit ? 'exhausted' : (old?.status ?? 'active'),
          is_threshold_alerts_sent: old?.is_threshold_alerts_sent ?? false,
          is_exhausted_alerts_sent: old?.is_exhausted_alerts_sent ?? false,
          created_at: old?.created_at ?? now,
          last_updated_at: now,
        };
        if (b.alertThreshold !== null && usage >= b.alertThreshold && !next.is_threshold_alerts_sent) {
          next.is_threshold_alerts_sent = true;
          alerts.push(alert('threshold', b, usage));
        }
        if (next.status === 'exhausted' && !next.is_exhausted_alerts_sent) {
          next.is_exhausted_alerts_sent = true;
          alerts.push(alert('exhausted', b, usage));
          markExhausted(store, b);
        }
        if (old === undefined) store.c.policyUsage.insert(next);
        else store.c.policyUsage.update(next.id, () => next);
      }
      for (const a of alerts) store.c.usageAlerts.insert(a);
    });
    for (const a of alerts) onAlert(a);
  }

  return {
    // Reads on the request path go through the version-checked memory cache: every flush (from
    // any process) bumps the collection's version, so a cached counter is never older than the
    // last committed charge, and between flushes a check costs one version read, not a decode.
    spent(b) {
      return (store.c.policyUsage.cached(b.counterId)?.current_usage ?? 0) + (pending.get(b.counterId)?.delta ?? 0);
    },
    marked(b) {
      return store.c.policyUsage.cached(b.counterId)?.status === 'exhausted';
    },
    charge(b, amount) {
      if (amount <= 0) return;
      const entry = pending.get(b.counterId);
      if (entry) entry.delta += amount;
      else pending.set(b.counterId, { budget: b, delta: amount });
      timer ??= setTimeout(flush, flushMs);
      timer.unref();
    },
    observe(b, total) {
      const entry = pending.get(b.counterId);
      if (entry) {
        entry.absolute = total;
        entry.delta = 0;
      } else pending.set(b.counterId, { budget: b, delta: 0, absolute: total });
      timer ??= setTimeout(flush, flushMs);
      timer.unref();
    },
    flush,
    close() {
      clearTimeout(timer);
      flush();
    },
  };
}

function alert(kind: 'threshold' | 'exhausted', b: Budget, usage: number): Records.UsageAlert {
  return { id: uuidv7(), created_at: nowIso(), kind, budget: b.owner, value_key: b.valueKey, workspace_id: b.workspaceId, type: b.type, limit: b.limit, usage };
}

/** The entity's own status turns `exhausted` (virtual keys then answer 429 at once; admins see it). */
function markExhausted(store: Store, b: Budget): void {
  const e = b.exhaust;
  if (e === undefined) return;
  const at = nowIso();
  if (e.kind === 'api_key' && store.c.apiKeys.get(e.id)) store.c.apiKeys.update(e.id, (k) => ({ ...k, status: 'exhausted', last_updated_at: at }));
  if (e.kind === 'virtual_key' && store.c.virtualKeys.get(e.id)) store.c.virtualKeys.update(e.id, (k) => ({ ...k, status: 'exhausted', last_updated_at: at }));
  if (e.kind === 'provider' && store.c.providers.get(e.id)) store.c.providers.update(e.id, (p) => ({ ...p, status: 'exhausted', last_updated_at: at }));
}
