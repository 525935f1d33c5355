/**
 * What checks that find spans share: choosing between overlapping findings, keeping every span
 * within the check's `maxMatch`, and the verdict a list of findings makes.
 */
import type { CheckResult, Finding } from '../../../core/index.js';

/**
 * Findings that do not overlap, left to right. Where two overlap, the one whose label comes first
 * in `priority` stays (an IBAN over the phone number its digits look like); on a tie, the earlier,
 * then the longer.
 */
export function withoutOverlaps(findings: Finding[], priority: ReadonlyArray<string>): Finding[] {
  if (findings.length < 2) return findings;
  const rank = (f: Finding): number => {
    const r = priority.indexOf(f.label);
    return r === -1 ? priority.length : r;
  };
  const ordered = [...findings].sort((a, b) => rank(a) - rank(b) || a.start - b.start || b.end - a.end);
  const kept: Finding[] = []; // sorted by start, never overlapping
  for (const f of ordered) {
    // The first kept span that ends after f starts is the only one that can overlap it.
    let lo = 0;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (kept[mid]!.end <= f.start) lo = mid + 1;
      else hi = mid;
    }
    const next = kept[lo];
    if (next !== undefined && next.start < f.end) continue;
    kept.splice(lo, 0, f);
  }
  return kept;
}

/** `[start, end)` as findings of at most `max` characters each (consecutive pieces). */
export function pieces(start: number, end: number, max: number, label: string): Finding[] {
  const out: Finding[] = [];
  for (let at = start; at < end; at += max) out.push({ start: at, end: Math.min(end, at + max), label });
  return out;
}

/**
 * The verdict of a check that fails on any finding: counts by label in `data`, never the text.
 *
 * @example
 *   spanVerdict([{ start: 0, end: 5, label: 'EMAIL' }], 'personal data')
 *   // { verdict: false, explanation: 'Found personal data: 1 EMAIL.', data: { found: { EMAIL: 1 } } }
 */
export function spanVerdict(findings: ReadonlyArray<Finding>, what: string): CheckResult {
  if (findings.length === 0) return { verdict: true, explanation: `No ${what} found.`, data: { found: {} } };
  const found: Record<string, number> = {};
  for (const f of findings) found[f.label] = (found[f.label] ?? 0) + 1;
  const summary = Object.entries(found)
    .map(([label, count]) => `${count} ${label}`)
    .join(', ');
  return { verdict: false, explanation: `Found ${what}: ${summary}.`, data: { found } };
}
