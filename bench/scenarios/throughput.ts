/**
 * Throughput: POST /v1/chat/completions with a ~150 B body, 32 connections, zero-delay mock
 * (§13 2a). With no upstream wait, requests/s is the inverse of CPU per request on the proxy's
 * core, so gateway/bare is the cost of the gateway's machinery relative to bare Node.
 */
import type { Scenario } from '../lib/scenario.js';
import { round } from '../lib/stats.js';
import { fmt } from '../lib/table.js';
import { errorNotes, loadRounds } from '../lib/load-rounds.js';

/** Target from the issue: the gateway keeps at least 60 % of a bare Node proxy's throughput. */
const MIN_RATIO_TO_BARE = 0.6;

export const throughput: Scenario = {
  name: 'throughput',
  isolates: 'CPU cost per request on the proxy core (zero-delay mock, closed loop, many connections)',
  async run(ctx) {
    const tool = ctx.tools.load;
    if (tool === null) return { name: this.name, isolates: this.isolates, skipped: 'no HTTP/1.1 load tool', notes: [], checks: [], data: null };
    const c = ctx.options.connections;
    const { rounds, summary } = await loadRounds(ctx, tool, this.name, c);
    const vsBare = summary.gateway.rps / summary.bare.rps;
    const vsDirect = summary.gateway.rps / summary.direct.rps;
    const notes = errorNotes(summary);
    // §13: the mock must outrun the gateway ≥ 3×, or the gateway number is partly the mock's.
    if (summary.direct.rps < 3 * summary.gateway.rps) notes.push(`direct is < 3× gateway (${fmt(summary.direct.rps / summary.gateway.rps)}×): results may be mock/load-generator bound`);
    const rows = (['direct', 'bare', 'gateway'] as const).map((n) => {
      const s = summary[n];
      const perRound = rounds[n].map((r) => fmt(r.rps, 0)).join(' / ');
      return [n, fmt(s.rps, 0), perRound, fmt(s.p50, 3), fmt(s.p99, 3), fmt(summary[n].rps / summary.bare.rps), String(s.errors)];
    });
    return {
      name: this.name,
      isolates: this.isolates,
      table: { title: `Throughput (${tool.name} -t1 -c${c}, ${ctx.options.duration}s × ${ctx.options.rounds} rounds, median)`, columns: ['target', 'req/s', 'per round', 'p50 ms', 'p99 ms', '÷ bare', 'errors'], rows },
      notes,
      headlines: [
        ['throughput gateway ÷ bare', `${fmt(vsBare)}× (${fmt(summary.gateway.rps, 0)} vs ${fmt(summary.bare.rps, 0)} req/s)`],
        ['throughput gateway ÷ direct', `${fmt(vsDirect)}× (direct ${fmt(summary.direct.rps, 0)} req/s)`],
      ],
      checks: [{ name: 'throughput gateway ÷ bare', value: round(vsBare), target: `≥ ${MIN_RATIO_TO_BARE}`, unit: '×', pass: vsBare >= MIN_RATIO_TO_BARE && summary.gateway.errors === 0 }],
      data: { tool: tool.name, connections: c, rounds, summary, ratios: { gatewayToBare: round(vsBare), gatewayToDirect: round(vsDirect), bareToDirect: round(summary.bare.rps / summary.direct.rps) } },
    };
  },
};
