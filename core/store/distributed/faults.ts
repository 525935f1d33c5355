/**
 * Faults of the shared hot state (Valkey unreachable, a command timed out), counted per kind for
 * the metric `gateway_shared_state_faults_total{kind}`, and logged once per outage.
 *
 *   kind      who met the fault: `cache`, `breaker`, … (each user of Valkey names its own)
 *   count     one per request or write that had to do without Valkey
 *   outage    the first fault logs a warning; the first success after it logs the recovery
 *
 * Counts live with the gateway's `Distributed` connections (not in a module global), so two
 * gateways in one process never add up, and every part of the gateway that talks to Valkey can
 * increment the same metric without defining it twice: the metrics plugin reads
 * {@link sharedStateFaults} at scrape time.
 */
import type { Logger } from '../../logger.js';
import type { Distributed } from './connections.js';

export interface SharedStateFaults {
  /** One more fault of `kind`. */
  count(kind: string): void;
  /** Faults so far, by kind (kinds that never faulted are absent). */
  snapshot(): ReadonlyMap<string, number>;
}

const byConnections = new WeakMap<Distributed, SharedStateFaults>();

/**
 * While an outage lasts, one call per this many ms goes to Valkey to see whether it is back; the
 * others do without at once. A Valkey that vanished without closing its sockets would otherwise
 * cost every request a full `command_timeout`.
 */
const RETRY_MS = 500;

/** The fault counts of one gateway's shared backends (created on first use). */
export function sharedStateFaults(distributed: Distributed): SharedStateFaults {
  let faults = byConnections.get(distributed);
  if (faults === undefined) {
    const counts = new Map<string, number>();
    faults = {
      count: (kind) => void counts.set(kind, (counts.get(kind) ?? 0) + 1),
      snapshot: () => counts,
    };
    byConnections.set(distributed, faults);
  }
  return faults;
}

/**
 * Tracks one user's view of Valkey: counts every fault, warns once when an outage starts and says
 * when it ended, so a Valkey that is down for an hour writes two lines, not one per request.
 *
 * @example
 *   const outage = new Outage(distributed, 'cache', log);
 *   if (!outage.attempt()) return outage.skipped();   // down: one try per RETRY_MS, the rest skip at once
 *   redis.get(k).then((v) => { outage.ok(); … }, (err) => { outage.fault(err); … });
 */
export class Outage {
  readonly #faults: SharedStateFaults;
  readonly #kind: string;
  readonly #log: Logger;
  #down = false;
  #lastTry = 0;

  constructor(distributed: Distributed, kind: string, log: Logger) {
    this.#faults = sharedStateFaults(distributed);
    this.#kind = kind;
    this.#log = log;
  }

  /** True between a fault and the next success. */
  get down(): boolean {
    return this.#down;
  }

  /**
   * Whether to call Valkey now: always while it answers; during an outage, once per
   * {@link RETRY_MS}. A caller told no does without (and counts that with {@link skipped}).
   */
  attempt(): boolean {
    if (!this.#down) return true;
    const now = Date.now();
    if (now - this.#lastTry < RETRY_MS) return false;
    this.#lastTry = now;
    return true;
  }

  /** A call not even tried, because of the outage: a fault all the same. */
  skipped(): void {
    this.#faults.count(this.#kind);
  }

  fault(err: unknown): void {
    this.#faults.count(this.#kind);
    this.#lastTry = Date.now();
    if (this.#down) return;
    this.#down = true;
    // The message of an ioredis error names the command or the socket state, never the URL.
    this.#log.warn('shared state unreachable: carrying on without it', { kind: this.#kind, error: err instanceof Error ? err.message : String(err) });
  }

  ok(): void {
    if (!this.#down) return;
    this.#down = false;
    this.#log.info('shared state reachable again', { kind: this.#kind });
  }
}
