/**
 * A limit as the plugin enforces it, compiled once from a policy or an entity's `rate_limits`
 * (and recompiled only when its collection's version changes).
 */
import type { Records } from '../../core/index.js';
import { PERIOD_MS } from './units.js';

export type LimitType = 'requests' | 'tokens';

export interface Limit {
  /** The counter key, or for a policy the prefix its group values are appended to. */
  key: string;
  type: LimitType;
  unit: Records.RateUnit;
  value: number;
  /** GCRA emission interval: one unit refills every `periodMs / value`. */
  emissionMs: number;
  periodMs: number;
  /** What the limit belongs to, for the refusal message (`API key`, `policy "per user"`). */
  label: string;
}

/** A limit that applies to this request, with its final counter key. */
export interface AppliedLimit {
  key: string;
  limit: Limit;
}

export function compileLimit(key: string, label: string, type: LimitType, unit: Records.RateUnit, value: number): Limit | undefined {
  const periodMs = PERIOD_MS[unit];
  if (periodMs === undefined || (type !== 'requests' && type !== 'tokens') || !Number.isFinite(value)) return undefined;
  return { key, type, unit, value, periodMs, emissionMs: value > 0 ? periodMs / value : Infinity, label };
}

/**
 * An entity's `rate_limits`, one limit per type and unit (the tightest when a record holds two:
 * they would share a counter). `prefix` names the entity, e.g. `key:<id>`.
 */
export function compileEntityLimits(prefix: string, label: string, limits: ReadonlyArray<Records.RateLimit> | null | undefined): Limit[] {
  if (!limits || limits.length === 0) return [];
  const byCell = new Map<string, Limit>();
  for (const l of limits) {
    const cell = `${l.type}:${l.unit}`;
    const compiled = compileLimit(`${prefix}:${cell}`, label, l.type, l.unit, l.value);
    if (compiled === undefined) continue;
    const seen = byCell.get(cell);
    if (seen === undefined || compiled.value < seen.value) byCell.set(cell, compiled);
  }
  return [...byCell.values()];
}
