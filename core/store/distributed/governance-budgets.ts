/**
 * Budget counter ids and their Valkey keys, shared by the usage-limits plugin (which charges them)
 * and the admin routes (which read and reset them): one definition of where a budget's spend lives.
 *
 *   policy budget   `<policy id>:<value key>` (cumulative) or `…@<period>` (weekly, monthly)
 *   entity budget   `entity:<kind>:<id>@<reset marker>@<period>`
 *   Valkey          `<key_prefix>gov:b:<counter id>`, a hash { u: settled spend, r:<bucket>: reserved }
 *
 * The period is part of the id, so a new week or month starts a fresh counter by itself.
 */
import { Errors, type GatewayError } from '../../errors.js';
import type { Distributed } from './connections.js';

/** The start of the current period (its id) and the start of the next one. */
export function budgetPeriod(reset: 'monthly' | 'weekly' | null | undefined, now: Date): { id: string; next: number | null } {
  if (reset === 'monthly') {
    return { id: `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`, next: Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) };
  }
  if (reset === 'weekly') {
    // Weeks start on Monday 00:00 UTC.
    const day = (now.getUTCDay() + 6) % 7;
    const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - day);
    return { id: `w${new Date(start).toISOString().slice(0, 10)}`, next: start + 7 * 86_400_000 };
  }
  return { id: 'all', next: null };
}

/** The counter id of an entity's budget in the current period. */
export function entityCounterId(kind: string, id: string, marker: string, reset: 'monthly' | 'weekly' | null | undefined, now: Date): string {
  return `entity:${kind}:${id}@${marker}@${budgetPeriod(reset, now).id}`;
}

/** The Valkey key of a budget counter. */
export function budgetValkeyKey(d: Pick<Distributed, 'key'>, counterId: string): string {
  return d.key(`gov:b:${counterId}`);
}

/** Settled spend of each counter that Valkey holds (absent: none there); one round trip. */
export async function readBudgetUsage(d: Distributed, counterIds: ReadonlyArray<string>): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (counterIds.length === 0) return out;
  const pipeline = d.redis.pipeline();
  for (const id of counterIds) pipeline.hget(budgetValkeyKey(d, id), 'u');
  const results = await exec(pipeline);
  counterIds.forEach((id, i) => {
    const value = results[i];
    if (value !== null && value !== undefined) out.set(id, Number(value));
  });
  return out;
}

/**
 * Zeroes the settled spend of each counter in Valkey. Reservations in flight stay: those requests
 * settle their real spend into the fresh counter.
 */
export async function resetBudgetUsage(d: Distributed, counterIds: ReadonlyArray<string>): Promise<void> {
  if (counterIds.length === 0) return;
  const pipeline = d.redis.pipeline();
  // Zero, not deleted: a hash without `u` means Valkey lost it, and the next take would seed it
  // from a host's mirror, which may still hold the total from before this reset.
  for (const id of counterIds) pipeline.hset(budgetValkeyKey(d, id), 'u', 0);
  await exec(pipeline);
}

async function exec(pipeline: ReturnType<Distributed['redis']['pipeline']>): Promise<unknown[]> {
  let results: Array<[Error | null, unknown]> | null;
  try {
    results = await pipeline.exec();
  } catch (err) {
    throw unavailable(err);
  }
  return (results ?? []).map(([err, value]) => {
    if (err) throw unavailable(err);
    return value;
  });
}

function unavailable(err: unknown): GatewayError {
  return Errors.sharedStateUnavailable(undefined, { cause: err });
}
