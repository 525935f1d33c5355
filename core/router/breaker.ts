/**
 * Circuit breakers, one per upstream target (provider + base URL + key fingerprint), per process.
 *
 *   closed ──(failures ≥ threshold, or ≥ rate over ≥ min requests, within the window)──▶ open
 *   open ──(cooldown elapsed; the next request is the probe)──▶ half-open
 *   half-open ──probe succeeds──▶ closed        half-open ──probe fails──▶ open (cooldown again)
 *
 * A failure is what says "this upstream is unwell": a connection error, a timeout, a 5xx or a 429.
 * A 4xx is the caller's problem and counts as a success. Fallback and load balance skip open
 * targets; if every candidate is open they try them anyway, so breakers can delay but never
 * black-hole traffic.
 *
 * In distributed mode a {@link BreakerSync} shares the state across hosts
 * (core/store/distributed/breakers-sync.ts): this process tells it when a circuit opens or closes
 * and when a failure is seen while closed (failures count over every host), and it applies what
 * other hosts decided through {@link applyRemote}. The hot path (`available`, a success) stays a
 * memory read; without a sync, or while Valkey is away, every process keeps its own state as before.
 */
import { createHash } from 'node:crypto';
import type { Target } from './types.js';

export interface BreakerSettings {
  /** Failures within the window that open the circuit. */
  failure_threshold: number;
  /** Or: this share of failures (0–1) once at least `min_requests` were seen in the window. */
  failure_rate: number;
  min_requests: number;
  window_ms: number;
  cooldown_ms: number;
}

export const DEFAULT_BREAKER: BreakerSettings = { failure_threshold: 5, failure_rate: 0.5, min_requests: 10, window_ms: 30_000, cooldown_ms: 30_000 };

export type BreakerStateName = 'closed' | 'open' | 'half_open';

/** Outcomes kept per breaker: past it, the oldest goes (the window then spans the latest ones). */
const MAX_EVENTS = 1000;

/**
 * The outcomes within the window, oldest first, in a ring: a record costs no allocation and no
 * copying once the ring has grown to the traffic (it doubles from 16 up to {@link MAX_EVENTS}, so
 * an idle breaker stays small), and the failures are counted as they come and go.
 */
class Outcomes {
  #at = new Float64Array(16);
  #failed = new Uint8Array(16);
  #head = 0;
  size = 0;
  failures = 0;

  add(at: number, failed: boolean): void {
    if (this.size === this.#at.length) {
      if (this.size === MAX_EVENTS) this.#dropOldest();
      else this.#grow();
    }
    const i = (this.#head + this.size) % this.#at.length;
    this.#at[i] = at;
    this.#failed[i] = failed ? 1 : 0;
    this.size++;
    if (failed) this.failures++;
  }

  /** Forgets the outcomes before `since`. */
  prune(since: number): void {
    while (this.size > 0 && this.#at[this.#head]! < since) this.#dropOldest();
  }

  clear(): void {
    this.#head = 0;
    this.size = 0;
    this.failures = 0;
  }

  #dropOldest(): void {
    this.failures -= this.#failed[this.#head]!;
    this.#head = (this.#head + 1) % this.#at.length;
    this.size--;
  }

  /** Twice the room (at most MAX_EVENTS), the outcomes moved to its start in order. */
  #grow(): void {
    const room = Math.min(this.#at.length * 2, MAX_EVENTS);
    const at = new Float64Array(room);
    const failed = new Uint8Array(room);
    for (let k = 0; k < this.size; k++) {
      const i = (this.#head + k) % this.#at.length;
      at[k] = this.#at[i]!;
      failed[k] = this.#failed[i]!;
    }
    this.#at = at;
    this.#failed = failed;
    this.#head = 0;
  }
}

interface Breaker {
  state: BreakerStateName;
  /** Outcomes in the window. */
  events: Outcomes;
  openedAt: number;
  probing: boolean;
  label: string;
  opens: number;
}

export interface BreakerSnapshot {
  key: string;
  label: string;
  state: BreakerStateName;
  failures: number;
  requests: number;
  opened_at: string | null;
  opens: number;
}

const breakers = new Map<string, Breaker>();

/** What shares breaker state with other hosts; told only of changes and failures, never of successes. */
export interface BreakerSync {
  opened(key: string, label: string, openedAt: number, settings: BreakerSettings): void;
  closed(key: string, label: string): void;
  /** A failure while closed that did not open the circuit here (other hosts' failures may). */
  failed(key: string, label: string, at: number, settings: BreakerSettings): void;
  reset(): void;
}

let sync: BreakerSync | undefined;

/** Shares breaker state through `s` from now on; returns the undo (a no-op once another sync replaced it). */
export function shareBreakers(s: BreakerSync): () => void {
  sync = s;
  return () => {
    if (sync === s) sync = undefined;
  };
}

/**
 * A state another host reached. `open` opens a closed circuit here too, with the other host's
 * opening time (so the cooldown ends at the same moment everywhere); `closed` closes an open one.
 * A probe in flight here is left to decide by itself. Returns true when the local state changed.
 */
export function applyRemote(key: string, label: string, state: 'open' | 'closed', openedAt: number): boolean {
  // A circuit closed elsewhere that this process never used: nothing to remember.
  const b = state === 'open' ? get(key, label) : breakers.get(key);
  if (b === undefined) return false;
  if (state === 'open') {
    if (b.state === 'closed' || (b.state === 'half_open' && !b.probing)) {
      b.state = 'open';
      b.openedAt = openedAt;
      b.events.clear();
      b.opens++;
      return true;
    }
    if (b.state === 'open' && openedAt > b.openedAt) b.openedAt = openedAt;
    return false;
  }
  if (b.state === 'closed' || b.probing) return false;
  b.state = 'closed';
  b.events.clear();
  return true;
}

/**
 * Key fingerprints by key, so that a request does not hash its provider key again (a SHA-256 a
 * call was about 3 % of a config-routed request's CPU, profiled). Bounded: past it, it starts over.
 */
const fingerprints = new Map<string, string>();
const MAX_FINGERPRINTS = 1024;

function fingerprintOf(apiKey: string): string {
  let fingerprint = fingerprints.get(apiKey);
  if (fingerprint === undefined) {
    fingerprint = createHash('sha256').update(apiKey).digest('hex').slice(0, 12);
    if (fingerprints.size >= MAX_FINGERPRINTS) fingerprints.clear();
    fingerprints.set(apiKey, fingerprint);
  }
  return fingerprint;
}

/** Which upstream a target calls: the same provider, host and key share one breaker across configs. */
export function breakerKey(target: Target): string {
  return `${target.provider}|${target.customHost ?? ''}|${target.apiKey ? fingerprintOf(target.apiKey) : '-'}`;
}

function get(key: string, label: string): Breaker {
  let b = breakers.get(key);
  if (b === undefined) {
    b = { state: 'closed', events: new Outcomes(), openedAt: 0, probing: false, label, opens: 0 };
    if (breakers.size > 10_000) breakers.clear();
    breakers.set(key, b);
  }
  return b;
}

/** May this target be tried now? (Closed, or open with its cooldown over and no probe in flight.) */
export function available(key: string, settings: BreakerSettings, now = Date.now()): boolean {
  const b = breakers.get(key);
  if (b === undefined || b.state === 'closed') return true;
  if (b.state === 'open') return now - b.openedAt >= settings.cooldown_ms;
  return !b.probing;
}

/** Called when an attempt on the target starts: an open circuit past its cooldown becomes the probe. */
export function begin(key: string, label: string, settings: BreakerSettings, now = Date.now()): void {
  const b = get(key, label);
  if (b.state === 'open' && now - b.openedAt >= settings.cooldown_ms) {
    b.state = 'half_open';
    b.probing = true;
  } else if (b.state === 'half_open') b.probing = true;
}

/** Records an attempt's outcome; returns the new state when it changed (for a log line). */
export function record(key: string, label: string, failed: boolean, settings: BreakerSettings, now = Date.now()): BreakerStateName | undefined {
  const b = get(key, label);
  if (b.state === 'half_open') {
    b.probing = false;
    b.events.clear();
    if (failed) {
      b.state = 'open';
      b.openedAt = now;
      b.opens++;
      sync?.opened(key, label, now, settings);
      return 'open';
    }
    b.state = 'closed';
    sync?.closed(key, label);
    return 'closed';
  }
  b.events.prune(now - settings.window_ms);
  b.events.add(now, failed);
  if (b.state !== 'closed' || !failed) return undefined;
  const failures = b.events.failures;
  const rateTrips = b.events.size >= settings.min_requests && failures / b.events.size >= settings.failure_rate;
  if (failures >= settings.failure_threshold || rateTrips) {
    b.state = 'open';
    b.openedAt = now;
    b.opens++;
    sync?.opened(key, label, now, settings);
    return 'open';
  }
  sync?.failed(key, label, now, settings);
  return undefined;
}

/** An attempt that taught nothing (the client left): a probe slot it held is freed, nothing recorded. */
export function release(key: string): void {
  const b = breakers.get(key);
  if (b !== undefined && b.state === 'half_open') b.probing = false;
}

/** Every breaker's state, for operators. */
export function snapshot(): BreakerSnapshot[] {
  return [...breakers.entries()].map(([key, b]) => ({
    key,
    label: b.label,
    state: b.state,
    failures: b.events.failures,
    requests: b.events.size,
    opened_at: b.state === 'closed' ? null : new Date(b.openedAt).toISOString(),
    opens: b.opens,
  }));
}

/** Forgets every breaker (tests, and an operator's reset: on every host, in distributed mode). */
export function resetBreakers(): void {
  breakers.clear();
  sync?.reset();
}

/** Forgets every breaker of this process only (another host's reset, arriving through the sync). */
export function forgetBreakers(): void {
  breakers.clear();
}
