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

interface Breaker {
  state: BreakerStateName;
  /** Outcome times in the window: true = failure. Bounded by pruning on every record. */
  events: Array<{ at: number; failed: boolean }>;
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
      b.events = [];
      b.opens++;
      return true;
    }
    if (b.state === 'open' && openedAt > b.openedAt) b.openedAt = openedAt;
    return false;
  }
  if (b.state === 'closed' || b.probing) return false;
  b.state = 'closed';
  b.events = [];
  return true;
}

/** Which upstream a target calls: the same provider, host and key share one breaker across configs. */
export function breakerKey(target: Target): string {
  const fingerprint = target.apiKey ? createHash('sha256').update(target.apiKey).digest('hex').slice(0, 12) : '-';
  return `${target.provider}|${target.customHost ?? ''}|${fingerprint}`;
}

function get(key: string, label: string): Breaker {
  let b = breakers.get(key);
  if (b === undefined) {
    b = { state: 'closed', events: [], openedAt: 0, probing: false, label, opens: 0 };
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
    b.events = [];
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
  b.events.push({ at: now, failed });
  const since = now - settings.window_ms;
  while (b.events.length > 0 && b.events[0]!.at < since) b.events.shift();
  if (b.events.length > 1000) b.events.splice(0, b.events.length - 1000);
  if (b.state !== 'closed' || !failed) return undefined;
  const failures = b.events.reduce((n, e) => n + (e.failed ? 1 : 0), 0);
  const rateTrips = b.events.length >= settings.min_requests && failures / b.events.length >= settings.failure_rate;
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
    failures: b.events.filter((e) => e.failed).length,
    requests: b.events.length,
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
