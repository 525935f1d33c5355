/**
 * Added latency at one connection (§13 step 4): a closed loop at c=1 has no queueing, so each
 * percentile minus the direct call's is the time the proxy adds to one request. c=1 also exposes
 * Nagle/delayed-ACK stalls (~40 ms), which would show as a p99 cliff.
 *
 * Differences are taken per round (gateway and direct measured minutes apart, in the same round)
 * and the median of those is reported, so drift between rounds cancels.
 */
import type { Scenario } from '../lib/scenario.js';
import { median, round } from '../lib/stats.js';
import { fmt, fmtDelta } from '../lib/table.js';
import type { TargetName } from '../lib/targets.js';
import { errorNotes, loadRounds } from '../lib/load-rounds.js';

/** Target from the issue, in ms: what the gateway may add to a median request. */
const MAX_ADDED_P50_MS = 0.25;

const PERCENTILES = ['p50', 'p90', 'p99', 'p999'] as const;
type Pct = (typeof PERCENTILES)[number];

export const latencyC1: Scenario = {
  name: 'latency-c1',
  isolates: 'latency the proxy adds to a single request, with no queueing (c=1, zero-delay mock)',
  async run(ctx) {
    const tool = ctx.tools.load;
    if (tool === null) return { name: this.name, isolates: this.isolates, skipped: 'no HTTP/1.1 load tool', notes: [], checks: [], data: null };
    const { rounds, summary } = await loadRounds(ctx, tool, this.name, 1);
    const added = (name: TargetName, pct: Pct): number => {
      const diffs = rounds[name].map((r, i) => (r.latencyMs[pct] ?? Number.NaN) - (rounds.direct[i]!.latencyMs[pct] ?? Number.NaN));
      return round(median(diffs));
    };
    const addedBy = (name: TargetName): Record<Pct, number> => Object.fromEntries(PERCENTILES.map((p) => [p, added(name, p)])) as Record<Pct, number>;
    const gatewayAdded = addedBy('gateway');
    const bareAdded = addedBy('bare');
    const rows = (['direct', 'bare', 'gateway'] as const).map((n) => {
      const s = summary[n];
      const plus = n === 'gateway' ? gatewayAdded : n === 'bare' ? bareAdded : undefined;
      return [n, fmt(s.rps, 0), fmt(s.p50, 3), fmt(s.p90, 3), fmt(s.p99, 3), fmt(s.p999, 3), plus ? fmtDelta(plus.p50) : '', plus ? fmtDelta(plus.p99) : '', plus ? fmtDelta(plus.p999) : ''];
    });
    rows.push(['gateway − bare', '', '', '', '', '', fmtDelta(gatewayAdded.p50 - bareAdded.p50), fmtDelta(gatewayAdded.p99 - bareAdded.p99), fmtDelta(gatewayAdded.p999 - bareAdded.p999)]);
    return {
      name: this.name,
      isolates: this.isolates,
      table: {
        title: `Latency at c=1 (${tool.name} -t1 -c1, ${ctx.options.duration}s × ${ctx.options.rounds} rounds; added = median over rounds of target − direct, ms)`,
        columns: ['target', 'req/s', 'p50', 'p90', 'p99', 'p99.9', '+p50', '+p99', '+p99.9'],
        rows,
      },
      notes: [...errorNotes(summary), `latency resolution: ${tool.resolution}`],
      headlines: [
        ['added p50 / p99 at c=1, gateway', `${fmtDelta(gatewayAdded.p50)} / ${fmtDelta(gatewayAdded.p99)} ms`],
        ['added p50 / p99 at c=1, bare', `${fmtDelta(bareAdded.p50)} / ${fmtDelta(bareAdded.p99)} ms`],
      ],
      checks: [{ name: 'added p50 at c=1 (gateway − direct)', value: gatewayAdded.p50, target: `≤ ${MAX_ADDED_P50_MS} ms`, unit: 'ms', pass: gatewayAdded.p50 <= MAX_ADDED_P50_MS && summary.gateway.errors === 0 }],
      data: { tool: tool.name, rounds, summary, addedMs: { gateway: gatewayAdded, bare: bareAdded } },
    };
  },
};
