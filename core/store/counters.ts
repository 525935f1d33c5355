/**
 * Rate-limit counters shared by every process using the same data dir: a second LMDB env,
 * `<data dir>/counters.mdb`, apart from the control plane so its commits never wait for an fsync.
 *
 *   process A ─┐                               key                      value
 *   process B ─┼─ transactionSync ─▶ counters  "pol:<id>:<group>"   →   TAT (ms since epoch)
 *   worker  n ─┘   (LMDB write lock)           "key:<id>:requests:rpm" → TAT
 *
 * Each counter is one GCRA cell (the generic cell rate algorithm): a limit of `burst` units per
 * `burst × emissionMs` stores only its theoretical arrival time (TAT). A take of `cost` units at
 * `now` moves the TAT to `max(TAT, now) + cost × emissionMs` and is allowed when that lies at most
 * `burst × emissionMs` ahead of `now`. So a full cell admits a burst of `burst` units at once and
 * then refills continuously, one unit per `emissionMs`; there is no window boundary at which twice
 * the limit gets through. A TAT at or before `now` means "full", the same as no entry, so stale
 * entries are swept without changing any answer.
 *
 * The env is opened with `noSync`: counters need no durability across a machine crash (a lost
 * commit only forgets a few seconds of traffic), but they do need atomicity across processes, which
 * the write transaction gives. One transaction covers every counter a request touches, and a check
 * either commits all of its takes or none (a request refused by one limit consumes nothing).
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { open, type RootDatabase } from 'lmdb';

/** One counter a request takes from: `cost` units of a cell that holds `burst` and refills one per `emissionMs`. */
export interface CounterTake {
  /** Distinct within one take (each key is read once, before any write). */
  key: string;
  cost: number;
  emissionMs: number;
  burst: number;
}

/** A cell after a take (or as it stands, when the take was refused). */
export interface CounterState {
  /** Whole units that could still be taken now. */
  remaining: number;
  /** Milliseconds until the cell is full again. */
  resetMs: number;
}

export type TakeResult =
  | { ok: true; states: CounterState[] }
  | {
      ok: false;
      /** Milliseconds until every refused take would pass (Infinity when a cost exceeds its burst). */
      retryAfterMs: number;
      /** Index (in the takes) of the limit that needs the longest wait. */
      failed: number;
      /** The cells as they stand; nothing was taken. */
      states: CounterState[];
    };

/** A correction of a take once the real cost is known (tokens: actual usage minus the estimate). */
export interface CounterAdjustment {
  key: string;
  /** Units to add (positive) or give back (negative). */
  delta: number;
  emissionMs: number;
}

export interface Counters {
  /** Takes every counter or none, in one write transaction. `now` is wall-clock ms (shared by processes). */
  take(takes: ReadonlyArray<CounterTake>, now: number): TakeResult;
  /** Applies corrections in one write transaction; a give-back never fills a cell beyond full. */
  adjust(changes: ReadonlyArray<CounterAdjustment>, now: number): void;
  /** Removes up to `limit` full (expired) cells, continuing where the last sweep stopped; returns how many. */
  sweep(now: number, limit?: number): number;
  close(): Promise<void>;
}

/** Process-wide instrumentation: write transactions run by any counters env (tests assert on it). */
export const counterStats = { transactions: 0 };

/**
 * Float slack (ms) for comparisons: emission intervals like 86 400 000 / 7 are not exact, and
 * five takes of 1/5 of a minute must fit a 5-per-minute cell exactly, not 4.999999 of them.
 */
const EPSILON_MS = 1e-3;

/**
 * Opens (creating if needed) `<dir>/counters.mdb`.
 *
 * @example
 *   const counters = openCounters('/var/lib/gateway');
 *   const r = counters.take([{ key: 'pol:1:alice', cost: 1, emissionMs: 12_000, burst: 5 }], Date.now());
 *   if (!r.ok) console.log(`retry in ${Math.ceil(r.retryAfterMs / 1000)} s`);
 */
export function openCounters(dir: string): Counters {
  const path = join(resolve(dir), 'counters.mdb');
  mkdirSync(resolve(dir), { recursive: true });
  let db: RootDatabase<number, string>;
  try {
    db = openEnv(path);
  } catch (err) {
    // Counters are disposable: a file damaged by a machine crash under noSync is replaced, not
    // fatal. Only on LMDB's own corruption verdicts: removing a healthy file another process holds
    // open would silently split the counters.
    if (!/MDB_(CORRUPTED|INVALID|VERSION_MISMATCH|PAGE_NOTFOUND)/.test(String(err))) throw err;
    rmSync(path, { force: true });
    rmSync(`${path}-lock`, { force: true });
    db = openEnv(path);
  }
  let sweepFrom: string | undefined;

  function state(tat: number, now: number, emissionMs: number, burst: number): CounterState {
    const ahead = Math.max(0, tat - now);
    const remaining = Math.floor(burst - ahead / emissionMs + EPSILON_MS / emissionMs);
    return { remaining: Math.min(burst, Math.max(0, remaining)), resetMs: ahead };
  }

  return {
    take(takes, now) {
      counterStats.transactions++;
      return db.transactionSync(() => {
        const next: number[] = new Array<number>(takes.length);
        let retryAfterMs = 0;
        let failed = -1;
        for (let i = 0; i < takes.length; i++) {
          const t = takes[i]!;
          const base = Math.max(db.get(t.key) ?? now, now);
          const tat = base + t.cost * t.emissionMs;
          const wait = t.cost > t.burst ? Infinity : tat - t.burst * t.emissionMs - now;
          if (wait > EPSILON_MS && wait > retryAfterMs) {
            retryAfterMs = wait;
            failed = i;
          }
          next[i] = tat;
        }
        if (failed !== -1) {
          // Refused: nothing is written, and the states describe the cells as they are.
          const states = takes.map((t) => state(db.get(t.key) ?? now, now, t.emissionMs, t.burst));
          return { ok: false, retryAfterMs, failed, states };
        }
        const states: CounterState[] = new Array<CounterState>(takes.length);
        for (let i = 0; i < takes.length; i++) {
          const t = takes[i]!;
          const tat = next[i]!;
          if (t.cost !== 0) db.putSync(t.key, tat);
          states[i] = state(tat, now, t.emissionMs, t.burst);
        }
        return { ok: true, states };
      });
    },

    adjust(changes, now) {
      if (changes.length === 0) return;
      counterStats.transactions++;
      db.transactionSync(() => {
        for (const c of changes) {
          if (c.delta === 0) continue;
          const base = Math.max(db.get(c.key) ?? now, now);
          const tat = base + c.delta * c.emissionMs;
          if (tat <= now) db.removeSync(c.key);
          else db.putSync(c.key, tat);
        }
      });
    },

    sweep(now, limit = 2000) {
      counterStats.transactions++;
      return db.transactionSync(() => {
        const dead: string[] = [];
        let last: string | undefined;
        let seen = 0;
        for (const { key, value } of db.getRange(sweepFrom === undefined ? { limit } : { start: sweepFrom, limit })) {
          last = key;
          seen++;
          if (value <= now) dead.push(key);
        }
        // Continue after the last key seen; wrap around once a scan reaches the end.
        sweepFrom = seen < limit || last === undefined ? undefined : `${last}\u0000`;
        for (const key of dead) db.removeSync(key);
        return dead.length;
      });
    },

    async close() {
      await db.close();
    },
  };
}

function openEnv(path: string): RootDatabase<number, string> {
  return open<number, string>({ path, noSync: true, noMemInit: true });
}
