/**
 * Single-flight: concurrent identical misses make one upstream call. The first miss of a key
 * leads (it goes upstream and records the answer); the misses of the same key that arrive while
 * it is in flight follow: they wait for the leader's entry and replay it as a HIT.
 *
 *   miss ─ flight for the key? ── no ──▶ lead: go upstream ─▶ answer stored ─▶ settle(entry) ─▶ followers HIT
 *                              └─ yes ─▶ follow: wait ─┬─ entry ─────────────▶ HIT (waited)
 *                                                      ├─ leader failed ─────▶ lead in its place, or follow the new leader
 *                                                      │                        (after two failed leaders: go upstream alone)
 *                                                      ├─ timeout ───────────▶ lead a fresh flight (the old leader is stuck)
 *                                                      └─ client gone ───────▶ stop
 *
 * Flights are keyed by the exact cache key, which hashes in the workspace, route, target, model,
 * namespace and mode: a flight is never shared across partitions. They live in this process only
 * (in distributed mode each host has its own; a cross-host flight would cost a Valkey round trip
 * on every miss). A leader that fails (an error, an answer not worth caching, a client that went
 * away) settles with nothing: its followers never see its error, one of them leads instead.
 */
import type { GatewayContext } from '../../core/index.js';
import type { CacheEntry } from './entry-store.js';

/** One key's call in flight and the requests waiting for it. */
export class Flight {
  readonly key: string;
  /** Wakes the followers; undefined once settled. */
  #waiters: Array<(entry: CacheEntry | undefined) => void> | undefined = [];

  constructor(key: string) {
    this.key = key;
  }

  get settled(): boolean {
    return this.#waiters === undefined;
  }

  /** Settles once: every follower gets `entry` (undefined: the leader has no answer for them). */
  settle(entry: CacheEntry | undefined): void {
    const waiters = this.#waiters;
    if (waiters === undefined) return;
    this.#waiters = undefined;
    for (const wake of waiters) wake(entry);
  }

  /**
   * The leader's entry, or undefined when the leader failed, `ms` passed, or the follower's own
   * client went away first.
   */
  wait(ctx: GatewayContext, ms: number): Promise<CacheEntry | undefined> {
    const waiters = this.#waiters;
    if (waiters === undefined || ms <= 0 || ctx.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      let done = false;
      const finish = (entry: CacheEntry | undefined): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        off();
        resolve(entry);
      };
      const timer = setTimeout(finish, ms, undefined);
      // A bound, not a reason to keep a closing process alive.
      timer.unref();
      const off = ctx.onAbort(() => finish(undefined));
      waiters.push(finish);
    });
  }
}

/** The flights of this process, by cache key. */
export class Flights {
  readonly #inFlight = new Map<string, Flight>();

  get size(): number {
    return this.#inFlight.size;
  }

  get(key: string): Flight | undefined {
    return this.#inFlight.get(key);
  }

  /** Starts the flight of `key`; a stuck flight still in the map is replaced (it keeps its own followers). */
  lead(key: string): Flight {
    const flight = new Flight(key);
    this.#inFlight.set(key, flight);
    return flight;
  }

  /** Ends a flight: it leaves the map (unless a newer one replaced it) and its followers wake. */
  settle(flight: Flight, entry: CacheEntry | undefined): void {
    if (this.#inFlight.get(flight.key) === flight) this.#inFlight.delete(flight.key);
    flight.settle(entry);
  }
}
