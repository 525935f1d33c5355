/**
 * Audit retention: a background sweep removes the oldest audit records, by age
 * (`audit.retention_days`) and by count (`audit.max_records`), as request-log retention does.
 *
 *   every minute (sooner while a backlog remains) ─▶ oldest ids (UUIDv7: key order is time order)
 *     ─▶ remove while past the count excess or older than the cutoff, at most SLICE per run
 *
 * Each run reads only the keys it removes and issues asynchronous removes (committed by LMDB off
 * the event loop), so a backlog of millions (a lowered limit, a long stop) is worked off in
 * bounded slices without holding the event loop. Every process sharing the data dir sweeps on its
 * own clock; removing a key twice is harmless.
 *
 * Distributed mode: a run is a control-plane write scope, so its removals reach PostgreSQL and
 * every host's replica (every host sweeps; a sweep finding the work done removes nothing).
 */
import type { Logger } from '../logger.js';
import type { AuditConfig } from '../config/types.js';
import type { Store } from '../store/store.js';
import { quietWrite } from '../store/write-failures.js';

const DAY_MS = 86_400_000;
const EVERY_MS = 60_000;
/** After a run that hit the slice bound, the next one comes this soon. */
const SOON_MS = 1_000;
/** Removals per run. */
export const AUDIT_SWEEP_SLICE = 5_000;

/** The key prefix of UUIDv7 ids made at `ms`: ids of that millisecond sort after it, earlier ones before. */
function idPrefix(ms: number): string {
  const h = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0').slice(-12);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}`;
}

/**
 * One bounded run: removes the oldest records past the count bound or older than the age bound.
 * Resolves with how many it removed once the removals are committed.
 */
export async function sweepAudit(store: Store, options: AuditConfig & { now?: number; limit?: number }): Promise<number> {
  if (store.replica !== undefined) return store.replica.writeScope(() => sweepLocal(store, options));
  return sweepLocal(store, options);
}

async function sweepLocal(store: Store, options: AuditConfig & { now?: number; limit?: number }): Promise<number> {
  const audit = store.c.audit;
  const excess = Math.max(0, audit.count() - options.max_records);
  const cutoff = idPrefix((options.now ?? Date.now()) - options.retention_days * DAY_MS);
  const removals: Array<Promise<boolean>> = [];
  for (const id of audit.oldestIds(options.limit ?? AUDIT_SWEEP_SLICE)) {
    // Past the count excess only records older than the cutoff go; ids come in time order.
    if (removals.length >= excess && id >= cutoff) break;
    removals.push(quietWrite(audit.removeAsync(id)));
  }
  await Promise.all(removals);
  return removals.length;
}

/**
 * Starts the sweep; `options()` is read at every run, so a reload's new bounds apply. Returns the
 * function that stops it. The timer is unref'd: it never keeps the process alive.
 */
export function startAuditRetention(store: Store, options: () => AuditConfig, log: Logger): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const schedule = (ms: number): void => {
    if (stopped) return;
    timer = setTimeout(run, ms);
    timer.unref();
  };
  function run(): void {
    sweepAudit(store, options())
      .then((removed) => schedule(removed >= AUDIT_SWEEP_SLICE ? SOON_MS : EVERY_MS))
      .catch((err: unknown) => {
        log.warn('audit retention failed; retrying later', { err });
        schedule(EVERY_MS);
      });
  }
  schedule(SOON_MS);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
