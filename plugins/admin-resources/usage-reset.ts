/**
 * `reset_usage` of a virtual key or a provider in distributed mode: the entity's budget counter of
 * the current period lives in Valkey (the usage-limits plugin charges it there), so the reset
 * zeroes it there, and zeroes the record that mirrors it. On the embedded default this is a no-op:
 * the reset only reopens an exhausted entity, as before.
 */
import { entityCounterId, nowIso, resetBudgetUsage, type Records, type Store } from '../../core/index.js';

/** Zeroes the entity's shared budget counter; throws 503 `shared_state_unavailable` when Valkey is away (then nothing changed). */
export async function resetSharedUsage(store: Store, kind: 'virtual_key' | 'provider', id: string, limits: Records.UsageLimits | null | undefined): Promise<void> {
  const d = store.distributed;
  if (d === undefined || !limits) return;
  const counterId = entityCounterId(kind, id, 'start', limits.periodic_reset, new Date());
  await resetBudgetUsage(d, [counterId]);
  if (store.c.policyUsage.get(counterId) === undefined) return;
  store.c.policyUsage.update(counterId, (e) => ({
    ...e,
    current_usage: 0,
    status: 'active',
    is_threshold_alerts_sent: false,
    is_exhausted_alerts_sent: false,
    last_updated_at: nowIso(),
  }));
}
